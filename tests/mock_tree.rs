//! `SysfsDevice` against static, plain-file snapshots of attribute files
//! captured on a real brick (the repository's fixtures, tests/fixtures/*.attrs):
//! discovery, access from permission bits, parsing. Plain files have no
//! sysfs store semantics; what depends on them (whole-value stores, errors
//! from stores, unplugging, concurrent stores) is tested on the simulated
//! brick (tests/brick.rs, and the concurrent-store test at the end here).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::fs;
use std::sync::Arc;

use common::{contents, install_fixture, TempDir};
use ev3sysfs::{Access, Backing, Error, SysfsDevice};

const STATE_FLAGS: [&str; 5] = ["running", "ramping", "holding", "overloaded", "stalled"];

fn motor_tree(device: &str) -> (TempDir, SysfsDevice) {
    let tmp = TempDir::new("mock");
    install_fixture(device, tmp.path(), "tacho-motor", "motor0");
    let motor = SysfsDevice::open(tmp.path(), "tacho-motor", "motor0").unwrap();
    (tmp, motor)
}

#[test]
fn reads_captured_large_motor() {
    let (_tmp, motor) = motor_tree("large_motor");
    assert_eq!(motor.read_int("max_speed").unwrap(), 1050);
    assert_eq!(motor.read_int("count_per_rot").unwrap(), 360);
    assert_eq!(
        motor.read_string("driver_name").unwrap(),
        "lego-ev3-l-motor"
    );
    // Old-style (jessie) address in the capture.
    assert_eq!(motor.read_string("address").unwrap(), "outA");
    let commands = motor.attribute("commands").unwrap();
    assert_eq!(commands.access(), Access::ReadOnly);
    assert_eq!(commands.backing(), Backing::Other);
    assert!(commands.list_contains("run-direct").unwrap());
    assert!(!commands.list_contains("run").unwrap());
    // Empty state: no flags.
    assert_eq!(
        motor
            .attribute("state")
            .unwrap()
            .read_flags(&STATE_FLAGS)
            .unwrap(),
        0
    );
    assert_eq!(
        motor.attribute("command").unwrap().access(),
        Access::WriteOnly
    );
    assert_eq!(
        motor.attribute("speed_sp").unwrap().access(),
        Access::ReadWrite
    );
}

#[test]
fn reads_captured_medium_motor_and_sensors() {
    let (_tmp, motor) = motor_tree("medium_motor");
    assert_eq!(motor.read_int("max_speed").unwrap(), 1560);
    assert_eq!(motor.read_int("position").unwrap(), 42);
    assert_eq!(
        motor
            .attribute("state")
            .unwrap()
            .read_flags(&STATE_FLAGS)
            .unwrap(),
        0b1
    );

    let tmp = TempDir::new("sensors");
    install_fixture("infrared_sensor", tmp.path(), "lego-sensor", "sensor0");
    install_fixture("touch_sensor", tmp.path(), "lego-sensor", "sensor1");
    let ir = SysfsDevice::open(tmp.path(), "lego-sensor", "sensor0").unwrap();
    assert_eq!(ir.read_string("mode").unwrap(), "IR-PROX");
    assert_eq!(ir.read_int("value0").unwrap(), 16);
    assert_eq!(
        ir.read_text("modes", |m| Ok(ev3sysfs::value::words(m).count()))
            .unwrap(),
        6
    );
    let mut bin = [0u8; 32];
    let n = ir
        .attribute("bin_data")
        .unwrap()
        .read_bytes(&mut bin)
        .unwrap();
    // bin_data is a 32-byte binary attribute; IR-PROX uses the first byte.
    assert_eq!(n, 32);
    assert_eq!(bin[0], 16);
    let touch = SysfsDevice::open(tmp.path(), "lego-sensor", "sensor1").unwrap();
    assert_eq!(touch.read_int("value0").unwrap(), 0);
    // Captured unreadable values are empty files: a parse error that keeps
    // the raw contents, never a panic.
    match touch.read_int("value1") {
        Err(Error::Parse { raw, expected, .. }) => {
            assert_eq!(raw, "");
            assert!(expected.contains("integer"));
        }
        other => panic!("expected a parse error, got {other:?}"),
    }
}

#[test]
fn wrong_direction_and_missing_attributes() {
    let (_tmp, motor) = motor_tree("large_motor");
    // `command` is write-only: reading it is refused, as sysfs would at open.
    assert!(matches!(
        motor.read_string("command"),
        Err(Error::PermissionDenied { .. })
    ));
    // `max_speed` is read-only.
    assert!(matches!(
        motor.write_int("max_speed", 5),
        Err(Error::PermissionDenied { .. })
    ));
    // A rotation motor has no count_per_m: unsupported, not disconnected.
    let err = motor.read_int("count_per_m").unwrap_err();
    assert!(matches!(err, Error::Unsupported { .. }), "{err:?}");
    assert!(err.to_string().contains("count_per_m"));
    // Names cannot leave the device directory.
    for bad in ["../motor1/speed_sp", "..", "", "a/b"] {
        assert!(matches!(
            motor.attribute(bad),
            Err(Error::InvalidName { .. })
        ));
    }
    assert!(matches!(
        SysfsDevice::open("/sys/class", "..", "x"),
        Err(Error::InvalidName { .. })
    ));
}

#[test]
fn parse_errors_keep_raw_contents() {
    let (_tmp, motor) = motor_tree("large_motor");
    // A mock accepts anything; the reader reports what it found.
    motor.write_str("speed_sp", "fast").unwrap();
    match motor.read_int("speed_sp") {
        Err(e @ Error::Parse { .. }) => {
            let text = e.to_string();
            assert!(text.contains("\"fast\""), "{text}");
            assert!(text.contains("speed_sp"), "{text}");
        }
        other => panic!("expected a parse error, got {other:?}"),
    }
    motor.write_str("speed_sp", "99999999999").unwrap();
    assert!(matches!(
        motor.read_int("speed_sp"),
        Err(Error::Parse { .. })
    ));
    assert_eq!(
        motor.attribute("speed_sp").unwrap().read_i64().unwrap(),
        99_999_999_999
    );
}

#[test]
fn integers_of_any_width_are_written_whole() {
    let (tmp, motor) = motor_tree("large_motor");
    let file = tmp.path().join("tacho-motor/motor0/position_sp");
    // Longer each time: a plain file keeps the tail of a longer value.
    for value in [
        -7,
        i64::from(i32::MAX),
        i64::from(i32::MIN),
        1 << 40,
        i64::MIN,
    ] {
        motor.write_int("position_sp", value).unwrap();
        assert_eq!(contents(&file), value.to_string());
        let attribute = motor.attribute("position_sp").unwrap();
        assert_eq!(attribute.read_i64().unwrap(), value);
    }
}

#[test]
fn empty_and_oversized_values_are_refused_without_io() {
    let (tmp, motor) = motor_tree("large_motor");
    motor.write_int("time_sp", 1000).unwrap();
    assert!(matches!(
        motor.write_str("time_sp", ""),
        Err(Error::InvalidValue { .. })
    ));
    let huge = "x".repeat(ev3sysfs::MAX_VALUE_LEN + 1);
    assert!(matches!(
        motor.write_str("time_sp", &huge),
        Err(Error::InvalidValue { .. })
    ));
    assert_eq!(
        contents(&tmp.path().join("tacho-motor/motor0/time_sp")),
        "1000"
    );
}

#[test]
fn long_values_are_read_whole() {
    let tmp = TempDir::new("long");
    let dir = tmp.path().join("leds/led0:green:brick-status");
    fs::create_dir_all(&dir).unwrap();
    // A trigger list longer than the first read buffer.
    let mut list: Vec<String> = (0..300).map(|i| format!("trig{i}")).collect();
    list[250] = "[timer]".into();
    let text = list.join(" ") + "\n";
    assert!(text.len() > 2000 && text.len() < 4096);
    fs::write(dir.join("trigger"), &text).unwrap();
    let led = SysfsDevice::open(tmp.path(), "leds", "led0:green:brick-status").unwrap();
    let trigger = led.attribute("trigger").unwrap();
    assert_eq!(trigger.read_string().unwrap(), text.trim_end());
    assert_eq!(
        trigger.read_selected(|s| Ok(s.to_owned())).unwrap(),
        "timer"
    );
    assert!(trigger.list_contains("trig299").unwrap());
    // A mock value that sysfs could never show is reported, not truncated.
    fs::write(dir.join("trigger"), "y".repeat(5000)).unwrap();
    assert!(matches!(trigger.read_string(), Err(Error::Parse { .. })));
}

#[test]
fn sub_directories_are_devices_of_their_own() {
    let tmp = TempDir::new("pid");
    let pid = tmp.path().join("tacho-motor/motor3/speed_pid");
    fs::create_dir_all(&pid).unwrap();
    fs::write(pid.join("Kp"), "1000\n").unwrap();
    let motor = SysfsDevice::open(tmp.path(), "tacho-motor", "motor3").unwrap();
    let speed_pid = motor.child("speed_pid").unwrap();
    assert_eq!(speed_pid.read_int("Kp").unwrap(), 1000);
    assert!(matches!(motor.child(".."), Err(Error::InvalidName { .. })));
    assert!(matches!(
        motor.child("hold_pid"),
        Err(Error::Unsupported { .. })
    ));
    fs::remove_dir_all(tmp.path().join("tacho-motor/motor3")).unwrap();
    assert!(motor.child("speed_pid").unwrap_err().is_disconnected());
}

#[test]
fn many_attributes_and_threads_share_one_device() {
    let tmp = TempDir::new("many");
    let dir = tmp.path().join("test-class/dev0");
    fs::create_dir_all(&dir).unwrap();
    for i in 0..100 {
        fs::write(dir.join(format!("attr{i}")), format!("{i}\n")).unwrap();
    }
    // (Plain files: group read only, so read-only attributes on a mock.)
    let dev = Arc::new(SysfsDevice::open(tmp.path(), "test-class", "dev0").unwrap());
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let dev = Arc::clone(&dev);
            std::thread::spawn(move || {
                for round in 0..3 {
                    for i in 0..100 {
                        let i = (i + t * 25 + round) % 100;
                        assert_eq!(dev.read_int(&format!("attr{i}")).unwrap(), i);
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    // Every name maps to one open attribute, whichever thread opened it.
    let a = dev.attribute("attr7").unwrap() as *const _;
    let b = dev.attribute("attr7").unwrap() as *const _;
    assert_eq!(a, b);
}

#[test]
fn concurrent_stores_never_tear_a_value() {
    let Some(tree) = common::brick() else {
        return;
    };
    let mock = tree
        .add_tacho_motor("outA", ev3sysfs_sim::TachoDriver::Ev3Large)
        .unwrap();
    let motor = Arc::new(SysfsDevice::open(tree.root(), "tacho-motor", &mock.name()).unwrap());
    // Values of different lengths: a torn store would show a mix.
    let values: [i64; 5] = [-1000, 5, 700, -3, 1050];
    let writers: Vec<_> = (0..values.len())
        .map(|t| {
            let motor = Arc::clone(&motor);
            std::thread::spawn(move || {
                for i in 0..500 {
                    motor
                        .write_int("speed_sp", values[(t + i) % values.len()])
                        .unwrap();
                }
            })
        })
        .collect();
    let reader = {
        let motor = Arc::clone(&motor);
        std::thread::spawn(move || {
            for _ in 0..1000 {
                let seen = i64::from(motor.read_int("speed_sp").unwrap());
                assert!(values.contains(&seen) || seen == 0, "torn value {seen}");
            }
        })
    };
    for w in writers {
        w.join().unwrap();
    }
    reader.join().unwrap();
    let last = i64::from(motor.read_int("speed_sp").unwrap());
    assert!(values.contains(&last), "torn value {last}");
}
