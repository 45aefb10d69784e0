//! Issue 22: a simulated device model that panics never freezes the
//! simulation in silence. Every model callback (show, store, tick, inject)
//! runs under the brick's panic guard; a failed model is logged and
//! reported by the simulator's API (`Simulator::step`, `RealtimeSim::check`,
//! `MockTree::check_models`), and the other models go on.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../../tests/common/mod.rs"]
mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use ev3sysfs::motor::TachoMotor;
use ev3sysfs_sim::kobject::{AttrInfo, Effects, Mode, Model};
use ev3sysfs_sim::{Simulator, TachoDriver};

/// Panics in `tick` from its 10th tick on, in `inject` and in `show` of
/// `fuse`.
struct Faulty {
    ticks: u32,
}

impl Model for Faulty {
    fn class(&self) -> &'static str {
        "faulty"
    }
    fn attributes(&self) -> Vec<AttrInfo> {
        vec![AttrInfo::text("fuse", Mode::ReadWrite)]
    }
    fn show(&self, attr: &str, _out: &mut Vec<u8>) -> Result<(), i32> {
        if attr != "fuse" {
            return Err(libc::ENOENT);
        }
        panic!("show failed");
    }
    fn store(&mut self, _attr: &str, value: &[u8], _fx: &mut Effects) -> Result<usize, i32> {
        Ok(value.len())
    }
    fn inject(&mut self, _attr: &str, _value: &str, _fx: &mut Effects) -> Result<(), i32> {
        panic!("inject failed");
    }
    fn tick(&mut self, _dt: Duration, _fx: &mut Effects) {
        self.ticks += 1;
        if self.ticks >= 10 {
            panic!("tick failed at tick {}", self.ticks);
        }
    }
}

#[test]
fn a_model_whose_tick_panics_fails_the_step_and_the_others_go_on() {
    let Some(tree) = common::brick() else { return };
    let tree = Arc::new(tree);
    tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    tree.add_model(Box::new(Faulty { ticks: 0 }), None).unwrap();
    let motor = TachoMotor::find(tree.root(), "outA").unwrap();
    motor.run_forever(500).unwrap();
    let mut sim = Simulator::new(Arc::clone(&tree)).unwrap();
    sim.step(Duration::from_millis(10)).unwrap();
    let err = sim.step(Duration::from_millis(100)).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("tick failed at tick 10"), "{text}");
    assert!(text.contains("faulty"), "{text}");
    // Reported by every later step too, and by the tree.
    let before = motor.position().unwrap();
    assert!(sim.step(Duration::from_millis(100)).is_err());
    assert!(tree.check_models().is_err());
    let after = motor.position().unwrap();
    assert!(after > before, "the motor kept moving: {before} -> {after}");
}

#[test]
fn a_realtime_simulation_holds_the_failure() {
    let Some(tree) = common::brick() else { return };
    let tree = Arc::new(tree);
    tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    tree.add_model(Box::new(Faulty { ticks: 0 }), None).unwrap();
    let motor = TachoMotor::find(tree.root(), "outA").unwrap();
    motor.run_forever(500).unwrap();
    let sim = Simulator::new(Arc::clone(&tree)).unwrap().run_realtime();
    let start = Instant::now();
    while sim.check().is_ok() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the failure was never reported"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let text = sim.check().unwrap_err().to_string();
    assert!(text.contains("tick failed"), "{text}");
    let before = motor.position().unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let after = motor.position().unwrap();
    assert!(after > before, "still simulating: {before} -> {after}");
}

#[test]
fn inject_and_show_panics_are_errors_not_panics() {
    let Some(tree) = common::brick() else { return };
    let dev = tree.add_model(Box::new(Faulty { ticks: 0 }), None).unwrap();
    let err = dev.set("fuse", "1").unwrap_err();
    assert!(err.to_string().contains("inject failed"), "{err}");
    let err = dev.read("fuse").unwrap_err();
    assert!(err.to_string().contains("show failed"), "{err}");
    // Through the file system: EIO, and the brick keeps serving.
    let e = std::fs::read(dev.path().join("fuse")).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EIO));
    std::fs::write(dev.path().join("fuse"), b"1").unwrap();
    assert!(tree.check_models().is_err());
}
