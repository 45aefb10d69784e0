//! Issue 17, point 4: errors a person reads. `fn main() ->
//! ev3sysfs::Result<()>` prints `Error: {:?}`, so `Debug` is the sentence
//! (what, where, why, what to do) and `{:#?}` the fields; port names are
//! checked; speeds are reported in the unit they were given in; a machine
//! with no brick gets one line saying how to run under `ev3-sim`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use ev3sysfs::motor::TachoMotor;
use ev3sysfs::sensor::TouchSensor;
use ev3sysfs::units::{DegPerSec, Percent};
use ev3sysfs::{Error, SysfsDevice};
use ev3sysfs_sim::TachoDriver;

/// What `fn main() -> ev3sysfs::Result<()>` prints for `e` (the standard
/// library's `Termination` impl writes `Error: {e:?}`).
fn as_main_prints(e: &Error) -> String {
    format!("Error: {e:?}")
}

#[test]
fn no_brick_says_how_to_run_under_ev3_sim_in_one_line() {
    let empty = common::TempDir::new("no-brick");
    // Not on a brick: the root has no ev3dev classes.
    let e = TachoMotor::find(empty.path(), "outA").unwrap_err();
    let text = as_main_prints(&e);
    println!("{text}");
    assert!(matches!(e, Error::NoBrick { .. }), "{e:#?}");
    assert!(!text.contains('\n'), "one line: {text}");
    assert!(text.contains("ev3-sim"), "{text}");
    assert!(text.contains("--over-sys-class"), "{text}");
    assert!(!text.contains("plug it back in"), "{text}");
    // The same for a device opened by name.
    let e = SysfsDevice::open(empty.path(), "tacho-motor", "motor0").unwrap_err();
    assert!(matches!(e, Error::NoBrick { .. }), "{e:#?}");
    let e = TouchSensor::find(empty.path(), "in1").unwrap_err();
    assert!(matches!(e, Error::NoBrick { .. }), "{e:#?}");
}

#[test]
fn a_brick_without_the_device_is_still_not_found() {
    let Some(tree) = common::ev3_brick() else {
        return;
    };
    let e = TachoMotor::find(tree.root(), "outA").unwrap_err();
    assert!(matches!(e, Error::NotFound { .. }), "{e:#?}");
}

#[test]
fn port_names_are_checked_and_accepted_where_unambiguous() {
    let Some(tree) = common::ev3_brick() else {
        return;
    };
    tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    for spelling in ["outA", "OutA", "outa", "A", "a", "ev3-ports:outA"] {
        let m =
            TachoMotor::find(tree.root(), spelling).unwrap_or_else(|e| panic!("{spelling}: {e}"));
        assert_eq!(m.address(), "ev3-ports:outA");
    }
    let e = TachoMotor::find(tree.root(), "outE").unwrap_err();
    let text = as_main_prints(&e);
    println!("{text}");
    assert!(matches!(e, Error::UnknownPort { .. }), "{e:#?}");
    assert!(text.contains("\"outE\""), "{text}");
    assert!(text.contains("outA outB outC outD"), "{text}");
    let e = TouchSensor::find(tree.root(), "in7").unwrap_err();
    assert!(e.to_string().contains("in1 in2 in3 in4"), "{e}");
}

#[test]
fn speeds_are_reported_in_the_unit_they_were_given_in() {
    let Some(tree) = common::ev3_brick() else {
        return;
    };
    tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    let m = TachoMotor::find(tree.root(), "outA").unwrap();
    let e = m.run(Percent(150)).unwrap_err();
    let text = as_main_prints(&e);
    println!("{text}");
    assert!(text.contains("150 is out of range -100..=100"), "{text}");
    assert!(text.contains('%'), "{text}");
    assert!(!text.contains("1575"), "not in encoder counts: {text}");
    // Large motor: 1050 counts/s at 360 counts per turn = 1050 deg/s.
    let e = m.run(DegPerSec(2000)).unwrap_err();
    assert!(
        e.to_string().contains("2000 is out of range -1050..=1050"),
        "{e}"
    );
    let structured = format!("{e:#?}");
    assert!(structured.starts_with("OutOfRange {"), "{structured}");
    assert!(structured.contains("value: 2000"), "{structured}");
    // Nothing was written.
    assert!(!m.state().unwrap().running());
    // The same through a tank.
    tree.add_tacho_motor("outB", TachoDriver::Ev3Large).unwrap();
    tree.add_tacho_motor("outC", TachoDriver::Ev3Large).unwrap();
    let tank = ev3sysfs::motor::Tank::large(tree.root(), "outB", "outC").unwrap();
    let e = tank.on(Percent(50), Percent(150)).unwrap_err();
    assert!(
        e.to_string().contains("150 is out of range -100..=100"),
        "{e}"
    );
}
