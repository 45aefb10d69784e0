//! The simulated brick: layout, permissions, numbering, inject/inspect,
//! unplug and re-plug, sensor modes, the stores it received.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;

use ev3sysfs::{Access, Error, SysfsDevice};
use ev3sysfs_sim::{MockKind, SensorDriver, TachoDriver};

fn mode(path: &std::path::Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn ev3_layout_and_permissions() {
    let Some(tree) = common::ev3_brick() else {
        return;
    };
    let root = tree.root();
    for n in 0..8 {
        assert!(root.join(format!("lego-port/port{n}/address")).is_file());
    }
    let port4 = SysfsDevice::open(root, "lego-port", "port4").unwrap();
    assert_eq!(port4.read_string("address").unwrap(), "ev3-ports:outA");
    assert_eq!(port4.read_string("driver_name").unwrap(), "ev3-output-port");
    let port0 = SysfsDevice::open(root, "lego-port", "port0").unwrap();
    assert_eq!(port0.read_string("status").unwrap(), "no-sensor");
    let led = SysfsDevice::open(root, "leds", "led0:green:brick-status").unwrap();
    assert_eq!(led.read_int("max_brightness").unwrap(), 255);
    let trigger = led.attribute("trigger").unwrap();
    assert_eq!(trigger.read_selected(|s| Ok(s.to_owned())).unwrap(), "mmc0");
    let battery = SysfsDevice::open(root, "power_supply", "lego-ev3-battery").unwrap();
    assert_eq!(battery.read_string("technology").unwrap(), "Li-ion");
    assert!(battery.read_int("voltage_now").unwrap() > 7_000_000);

    let motor = tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    // The modes a brick shows after udev (group ev3dev).
    assert_eq!(mode(&motor.path().join("max_speed")), 0o444);
    assert_eq!(mode(&motor.path().join("command")), 0o220);
    assert_eq!(mode(&motor.path().join("speed_sp")), 0o664);
    assert_eq!(mode(&motor.path().join("speed_pid/Kp")), 0o664);
    let dev = SysfsDevice::open(root, "tacho-motor", &motor.name()).unwrap();
    assert_eq!(
        dev.attribute("max_speed").unwrap().access(),
        Access::ReadOnly
    );
    assert_eq!(
        dev.attribute("command").unwrap().access(),
        Access::WriteOnly
    );
    assert_eq!(
        dev.attribute("speed_sp").unwrap().access(),
        Access::ReadWrite
    );
    // Opening against the grain is refused like kernfs does, even for root.
    let err = dev
        .open_attribute("max_speed", Access::ReadWrite)
        .unwrap_err();
    assert!(matches!(err, Error::PermissionDenied { .. }), "{err:?}");
    assert_eq!(err.errno(), Some(libc::EACCES));
    assert!(dev.open_attribute("command", Access::ReadOnly).is_err());
    // Kernel formats: numbers and lists end with a newline.
    let raw = std::fs::read_to_string(motor.path().join("max_speed")).unwrap();
    assert_eq!(raw, "1050\n");
    assert_eq!(
        dev.read_int("speed_pid/Kp").ok(),
        None,
        "nested names are refused"
    );
    assert_eq!(
        dev.child("hold_pid").unwrap().read_int("Kp").unwrap(),
        80_000
    );
}

#[test]
fn drivers_have_their_tables() {
    let Some(tree) = common::brick() else { return };
    let medium = tree
        .add_tacho_motor("outB", TachoDriver::Ev3Medium)
        .unwrap();
    let nxt = tree.add_tacho_motor("outC", TachoDriver::Nxt).unwrap();
    assert_eq!(medium.read_int("max_speed").unwrap(), 1560);
    assert_eq!(medium.read_int("hold_pid/Kp").unwrap(), 160_000);
    assert_eq!(nxt.read_int("max_speed").unwrap(), 1020);
    assert_eq!(nxt.read("driver_name").unwrap(), "lego-nxt-motor");
    assert_eq!(nxt.address(), "ev3-ports:outC");

    let dc = tree.add_dc_motor("outD").unwrap();
    assert_eq!(dc.read("driver_name").unwrap(), "rcx-motor");
    assert_eq!(
        mode(&dc.path().join("stop_action")),
        0o220,
        "WO on dc-motor"
    );
    let servo = tree.add_servo_motor("in1", 3).unwrap();
    assert_eq!(servo.address(), "ev3-ports:in1:i2c88:sv3");
    assert_eq!(servo.read_int("mid_pulse_sp").unwrap(), 1500);

    let us = tree.add_sensor("in2", SensorDriver::NxtUltrasonic).unwrap();
    assert_eq!(us.address(), "ev3-ports:in2:i2c1");
    assert_eq!(us.read_int("poll_ms").unwrap(), 50);
    let touch = tree.add_sensor("in3", SensorDriver::Ev3Touch).unwrap();
    let touch_dev = SysfsDevice::open(tree.root(), "lego-sensor", &touch.name()).unwrap();
    let err = touch_dev.read_int("poll_ms").unwrap_err();
    assert_eq!(
        err.errno(),
        Some(libc::EOPNOTSUPP),
        "as on a brick: {err:?}"
    );
    assert_eq!(touch.read("bin_data_format").unwrap(), "s32");
}

#[test]
fn numbers_grow_per_class_and_are_never_reused() {
    let Some(tree) = common::brick() else { return };
    let a = tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    let b = tree.add_tacho_motor("outB", TachoDriver::Ev3Large).unwrap();
    let dc = tree.add_dc_motor("outC").unwrap();
    let s = tree.add_sensor("in1", SensorDriver::Ev3Color).unwrap();
    assert_eq!((a.name(), b.name()), ("motor0".into(), "motor1".into()));
    assert_eq!(dc.name(), "motor0", "dc-motor has its own counter");
    assert_eq!(s.name(), "sensor0");

    let dev = SysfsDevice::open(tree.root(), "tacho-motor", &a.name()).unwrap();
    let position = dev.attribute("position").unwrap();
    tree.unplug(&a).unwrap();
    assert!(position.read_int().unwrap_err().is_disconnected());
    let again = tree.replug(&a).unwrap();
    assert_eq!(again.name(), "motor2");
    assert_eq!(again.address(), "ev3-ports:outA");
    assert_eq!(again.kind(), &MockKind::TachoMotor(TachoDriver::Ev3Large));
    // The old handle stays disconnected; a new one works.
    assert!(position.read_int().unwrap_err().is_disconnected());
    let dev = SysfsDevice::open(tree.root(), "tacho-motor", &again.name()).unwrap();
    assert_eq!(dev.read_int("position").unwrap(), 0);
}

#[test]
fn inject_and_inspect() {
    let Some(tree) = common::brick() else { return };
    let mock = tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    let dev = SysfsDevice::open(tree.root(), "tacho-motor", &mock.name()).unwrap();
    dev.write_int("speed_sp", -300).unwrap();
    dev.write_str("command", "run-forever").unwrap();
    assert_eq!(mock.read_int("speed_sp").unwrap(), -300);
    assert_eq!(mock.last_written("command").unwrap(), "run-forever");
    // The store took effect at once.
    assert_eq!(dev.read_string("state").unwrap(), "running");
    assert_eq!(mock.read("state").unwrap(), "running");
    mock.set_int("position", -12).unwrap();
    assert_eq!(dev.read_int("position").unwrap(), -12);
    // What the model cannot inject is refused.
    assert!(mock.set("max_speed", "5").is_err());
    // Through the model: downcasting and effects.
    let class = tree.with_model(&mock, |model, _fx| model.class()).unwrap();
    assert_eq!(class, "tacho-motor");
    tree.unplug(&mock).unwrap();
    assert!(mock.read("state").unwrap_err().is_disconnected());
    assert!(mock.set_int("position", 0).unwrap_err().is_disconnected());
}

#[test]
fn sensor_modes_follow_the_table() {
    let Some(tree) = common::brick() else { return };
    let ir = tree.add_sensor("in4", SensorDriver::Ev3Infrared).unwrap();
    assert_eq!(ir.read("mode").unwrap(), "IR-PROX");
    let dev = SysfsDevice::open(tree.root(), "lego-sensor", &ir.name()).unwrap();
    // Every valueN file exists, as in the kernel; beyond num_values: ENXIO.
    assert!(ir.path().join("value7").exists());
    assert_eq!(
        dev.read_int("value1").unwrap_err().errno(),
        Some(libc::ENXIO)
    );
    // A mode store completes synchronously: the new values exist at once.
    dev.write_str("mode", "IR-SEEK").unwrap();
    assert_eq!(ir.read_int("num_values").unwrap(), 8);
    assert_eq!(dev.read_int("value7").unwrap(), -128);
    dev.write_str("mode", "IR-REM-A").unwrap();
    assert_eq!(ir.read("bin_data_format").unwrap(), "s16");
    assert_eq!(
        dev.read_int("value1").unwrap_err().errno(),
        Some(libc::ENXIO)
    );
    let err = dev.write_str("mode", "FLY").unwrap_err();
    assert_eq!(err.errno(), Some(libc::EINVAL), "{err:?}");
}

#[test]
fn the_stores_received_are_recorded_in_order() {
    let Some(tree) = common::brick() else { return };
    let mock = tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    let dev = Arc::new(SysfsDevice::open(tree.root(), "tacho-motor", &mock.name()).unwrap());
    dev.write_int("position_sp", 360).unwrap();
    dev.write_str("command", "run-to-rel-pos").unwrap();
    dev.write_str("command", "run-to-rel-pos").unwrap();
    let pid = dev.child("speed_pid").unwrap();
    pid.write_int("Kp", 900).unwrap();
    let records = tree.take_stores();
    let keys: Vec<&str> = records.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        keys,
        [
            "tacho-motor/motor0/position_sp",
            "tacho-motor/motor0/command",
            "tacho-motor/motor0/command",
            "tacho-motor/motor0/speed_pid/Kp",
        ]
    );
    assert_eq!(records[1].1, b"run-to-rel-pos");
    // Injections are not stores.
    mock.set_int("position", 5).unwrap();
    assert!(tree.take_stores().is_empty());
    // Concurrent writers: every write is recorded exactly once.
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let dev = Arc::clone(&dev);
            std::thread::spawn(move || {
                for _ in 0..250 {
                    dev.write_str("command", "stop").unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let records = tree.take_stores();
    assert_eq!(records.len(), 1000);
    assert!(records.iter().all(|(_, v)| v == b"stop"));
}

#[test]
fn tree_is_unmounted_and_deleted_on_drop() {
    let Some(tree) = common::brick() else { return };
    let root = tree.root().to_path_buf();
    assert!(root.is_dir());
    drop(tree);
    assert!(!root.exists());
}

#[test]
fn any_program_can_use_the_tree_through_the_environment() {
    let Some(tree) = common::brick() else { return };
    tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    // A shell sees the same files as EV3SYSFS_ROOT/tacho-motor/motor0.
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("cat \"$EV3SYSFS_ROOT/tacho-motor/motor0/driver_name\"")
        .env(ev3sysfs::ROOT_ENV, tree.root())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "lego-ev3-l-motor\n");
}
