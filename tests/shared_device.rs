//! Issue 17, point 1: a handle never skips a write because of what it
//! remembers. Between two calls through this crate a second process (a
//! shell `echo`, as `brickrun` scripts or python-ev3dev2 do) changes the
//! device on the simulated brick; the next call must still take effect.
//! The last test does it with an unmodified python-ev3dev2 program.
//! Skips (with a reason) where no simulated brick can be mounted or no
//! `sh` runs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;
use std::process::Command;

use ev3sysfs::motor::{StopAction, TachoMotor};
use ev3sysfs::sensor::UltrasonicSensor;
use ev3sysfs_sim::{SensorDriver, TachoDriver};

/// Another program writes `value` to `file` (a separate `sh` process).
fn other_program_writes(file: &Path, value: &str) -> bool {
    let status = Command::new("sh")
        .arg("-c")
        .arg("printf '%s\\n' \"$1\" > \"$2\"")
        .arg("sh")
        .arg(value)
        .arg(file)
        .status();
    match status {
        Ok(s) if s.success() => true,
        Ok(s) => panic!("sh writing {value:?} to {}: {s}", file.display()),
        Err(e) => {
            common::skip(&format!("cannot run sh: {e}"));
            false
        }
    }
}

fn read(file: &Path) -> String {
    std::fs::read_to_string(file).unwrap().trim().to_owned()
}

#[test]
fn run_direct_runs_after_another_program_stopped_the_motor() {
    let Some(tree) = common::brick() else { return };
    tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    let motor = TachoMotor::find(tree.root(), "outA").unwrap();
    let dir = motor.device().dir().to_path_buf();
    motor.run_direct(40).unwrap();
    assert!(motor.state().unwrap().running());
    if !other_program_writes(&dir.join("command"), "stop") {
        return;
    }
    assert!(!motor.state().unwrap().running(), "the shell stopped it");
    motor.run_direct(40).unwrap();
    assert!(
        motor.state().unwrap().running(),
        "run_direct(40) after another program's stop: state {}",
        read(&dir.join("state"))
    );
    assert_eq!(read(&dir.join("duty_cycle_sp")), "40");
}

#[test]
fn set_stop_action_is_written_after_another_program_set_it() {
    let Some(tree) = common::brick() else { return };
    tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    let motor = TachoMotor::find(tree.root(), "outA").unwrap();
    let file = motor.device().dir().join("stop_action");
    motor.set_stop_action(StopAction::Coast).unwrap();
    if !other_program_writes(&file, "hold") {
        return;
    }
    assert_eq!(read(&file), "hold");
    motor.set_stop_action(StopAction::Coast).unwrap();
    assert_eq!(read(&file), "coast", "set_stop_action(Coast) was skipped");
    assert_eq!(motor.stop_action().unwrap(), StopAction::Coast);
}

#[test]
fn sole_owner_opt_in_skips_and_says_so() {
    // The opt-in keeps the old behaviour: documented as a risk, tested
    // here so that it stays exactly the documented one.
    let Some(tree) = common::brick() else { return };
    tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    let motor = TachoMotor::find(tree.root(), "outA")
        .unwrap()
        .assume_sole_owner();
    assert!(motor.is_sole_owner());
    motor.run_direct(40).unwrap();
    tree.take_stores();
    motor.run_direct(30).unwrap();
    let stores = tree.take_stores();
    assert_eq!(stores.len(), 1, "only duty_cycle_sp: {stores:?}");
    assert!(stores[0].0.ends_with("duty_cycle_sp"), "{stores:?}");
}

#[test]
fn distance_reads_the_right_mode_after_another_program_switched_it() {
    let Some(tree) = common::brick() else { return };
    tree.add_sensor("in2", SensorDriver::Ev3Ultrasonic).unwrap();
    let us = UltrasonicSensor::find(tree.root(), "in2").unwrap();
    let dir = us.sensor().device().dir().to_path_buf();
    // The simulated driver shows 2550 (255.0 cm) in US-DIST-CM and 1003
    // (100.3 in) in US-DIST-IN, as a brick with nothing in front does.
    assert_eq!(us.distance_mm().unwrap(), 2550);
    if !other_program_writes(&dir.join("mode"), "US-DIST-IN") {
        return;
    }
    assert_eq!(read(&dir.join("value0")), "1003");
    assert_eq!(
        us.distance_mm().unwrap(),
        2550,
        "distance_mm read the inch mode's value"
    );
    assert_eq!(read(&dir.join("mode")), "US-DIST-CM");
    assert_eq!(us.sensor().decimals(), 1);
}

/// Runs a python-ev3dev2 snippet against the simulated brick at `root`
/// (ev3dev2 reads its devices under `Device.DEVICE_ROOT_PATH`); `false`
/// (with the reason printed) when python3 or python-ev3dev2 is missing.
fn python_ev3dev2(root: &Path, code: &str) -> bool {
    let program = format!(
        "import sys\nfrom ev3dev2 import Device\nDevice.DEVICE_ROOT_PATH = sys.argv[1]\n{code}\n"
    );
    match Command::new("python3")
        .arg("-c")
        .arg(&program)
        .arg(root)
        .output()
    {
        Ok(out) if out.status.success() => true,
        Ok(out) => {
            let err = String::from_utf8_lossy(&out.stderr);
            if err.contains("No module named 'ev3dev2'") {
                common::skip("python-ev3dev2 is missing (scripts/install-test-deps installs it)");
                return false;
            }
            panic!("python-ev3dev2 failed: {err}");
        }
        Err(e) => {
            common::skip(&format!("python3 is missing: {e}"));
            false
        }
    }
}

#[test]
fn python_ev3dev2_between_our_calls() {
    let Some(tree) = common::brick() else { return };
    tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    tree.add_sensor("in2", SensorDriver::Ev3Ultrasonic).unwrap();
    let motor = TachoMotor::find(tree.root(), "outA").unwrap();
    let us = UltrasonicSensor::find(tree.root(), "in2").unwrap();
    motor.run_direct(40).unwrap();
    motor.set_stop_action(StopAction::Coast).unwrap();
    assert_eq!(us.distance_mm().unwrap(), 2550);
    // An unmodified python-ev3dev2 program stops the motor, sets its stop
    // action and switches the ultrasonic sensor to inches.
    let python = "from ev3dev2.motor import LargeMotor\n\
                  from ev3dev2.sensor.lego import UltrasonicSensor\n\
                  m = LargeMotor('ev3-ports:outA')\n\
                  m.stop_action = 'hold'\n\
                  m.stop()\n\
                  us = UltrasonicSensor('ev3-ports:in2')\n\
                  print(us.distance_inches)";
    if !python_ev3dev2(tree.root(), python) {
        return;
    }
    assert!(!motor.state().unwrap().running(), "python stopped it");
    let dir = us.sensor().device().dir().to_path_buf();
    assert_eq!(read(&dir.join("mode")), "US-DIST-IN", "python switched it");
    assert_eq!(read(&motor.device().dir().join("stop_action")), "hold");
    motor.run_direct(40).unwrap();
    assert!(motor.state().unwrap().running());
    motor.set_stop_action(StopAction::Coast).unwrap();
    assert_eq!(motor.stop_action().unwrap(), StopAction::Coast);
    assert_eq!(us.distance_mm().unwrap(), 2550);
}
