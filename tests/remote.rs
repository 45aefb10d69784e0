//! Issue 17, point 2: the IR remote as typed events with waits, the
//! joystick-style tank mapping, and the `remote` example on the simulated
//! brick. Skips (with a reason) where no simulated brick can be mounted.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, dead_code)]

mod common;

#[path = "../examples/remote.rs"]
mod remote_example;

use std::process::Command;
use std::time::Duration;

use ev3sysfs::sensor::{InfraredSensor, Remote, RemoteButtons};
use ev3sysfs::units::Percent;
use ev3sysfs_sim::SensorDriver;

#[test]
fn remote_changes_come_as_events_per_channel() {
    let Some(tree) = common::brick() else { return };
    let mock = tree.add_sensor("in4", SensorDriver::Ev3Infrared).unwrap();
    let ir = InfraredSensor::find(tree.root(), "in4").unwrap();
    let mut remote = Remote::new(&ir).unwrap();
    assert_eq!(remote.poll().unwrap(), None);
    assert_eq!(remote.wait(Duration::from_millis(30)).unwrap(), None);

    mock.set_int("value0", 1).unwrap(); // channel 1: red up
    let e = remote.wait(Duration::from_secs(1)).unwrap().unwrap();
    assert_eq!(e.channel, 1);
    assert!(e.buttons.red_up && e.before.is_empty());
    assert_eq!(e.pressed(), e.buttons);
    assert!(e.released().is_empty());

    // Two channels change in one look: two events, in channel order.
    mock.set_int("value0", 6).unwrap(); // red up + blue down
    mock.set_int("value2", 9).unwrap(); // channel 3: beacon
    let a = remote.poll().unwrap().unwrap();
    let b = remote.poll().unwrap().unwrap();
    assert_eq!((a.channel, b.channel), (1, 3));
    assert!(a.pressed().blue_down && !a.pressed().red_up, "{a:?}");
    assert!(b.buttons.beacon);
    assert_eq!(remote.poll().unwrap(), None);

    // wait_on skips the other channels.
    mock.set_int("value2", 0).unwrap();
    mock.set_int("value0", 0).unwrap();
    let e = remote.wait_on(1, Duration::from_secs(1)).unwrap().unwrap();
    assert_eq!(e.channel, 1);
    assert!(e.released().red_up && e.released().blue_down);
    assert_eq!(remote.buttons(3), RemoteButtons::default());
}

#[test]
fn remote_reads_its_mode_after_another_program_switched_it() {
    let Some(tree) = common::brick() else { return };
    let mock = tree.add_sensor("in4", SensorDriver::Ev3Infrared).unwrap();
    let ir = InfraredSensor::find(tree.root(), "in4").unwrap();
    let mut remote = Remote::new(&ir).unwrap();
    let mode = ir.sensor().device().dir().join("mode");
    let ok = Command::new("sh")
        .arg("-c")
        .arg("echo IR-PROX > \"$1\"")
        .arg("sh")
        .arg(&mode)
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        return common::skip("cannot run sh");
    }
    mock.set_int("value0", 3).unwrap(); // IR-PROX value 3 would be "blue up"
    let seen = remote.poll().unwrap();
    assert_eq!(std::fs::read_to_string(&mode).unwrap().trim(), "IR-REMOTE");
    // Back in IR-REMOTE the driver shows the remote's values (none held).
    assert_eq!(seen, None, "the proximity value was taken for a button");
}

#[test]
fn joystick_tank_mapping() {
    let b = |v| RemoteButtons::from_value(v);
    let p = Percent(60);
    assert_eq!(b(0).tank(p), (Percent(0), Percent(0)));
    assert_eq!(b(5).tank(p), (Percent(60), Percent(60)));
    assert_eq!(b(8).tank(p), (Percent(-60), Percent(-60)));
    assert_eq!(b(6).tank(p), (Percent(60), Percent(-60)));
    assert_eq!(b(1).tank(p), (Percent(60), Percent(0)));
    assert_eq!(b(10).tank(p), (Percent(0), Percent(0)));
    assert_eq!(b(9).tank(p), (Percent(0), Percent(0)));
}

#[test]
fn the_remote_example_runs_on_the_simulated_brick() {
    if common::ev3_brick().is_none() {
        return;
    }
    let empty = common::TempDir::new("remote-example");
    // The only test in this binary that reads the environment.
    std::env::set_var("EV3SYSFS_ROOT", empty.path());
    remote_example::main().unwrap();
}

#[test]
fn beacon_is_typed_and_waited_for() {
    let Some(tree) = common::brick() else { return };
    let mock = tree.add_sensor("in4", SensorDriver::Ev3Infrared).unwrap();
    let ir = InfraredSensor::find(tree.root(), "in4").unwrap();
    // Channel 2: values 2 (heading) and 3 (distance); -128 is "no beacon".
    ir.beacon(2).unwrap();
    mock.set_int("value3", -128).unwrap();
    assert_eq!(ir.beacon(2).unwrap(), None);
    let e = ir
        .wait_for_beacon(2, Duration::from_millis(30))
        .unwrap_err();
    assert!(matches!(e, ev3sysfs::Error::Timeout { .. }), "{e:#?}");
    // The heading first, while there is still no beacon: the two values
    // are two files, and a reader between two writes would see the new
    // distance with the old heading (it did, on the ARM926 guest).
    mock.set_int("value2", -7).unwrap();
    std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(50));
            mock.set_int("value3", 42).unwrap();
        });
        let b = ir.wait_for_beacon(2, Duration::from_secs(2)).unwrap();
        assert_eq!((b.channel, b.heading, b.distance), (2, -7, 42));
    });
    assert!(ir.beacon(5).is_err());
}
