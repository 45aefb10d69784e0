//! Issue 17, point 1, on the simulated world with a dragged wheel: the
//! `empty` world's left wheel carries `drag = 0.3` (friction of 30 % of the
//! motor's stall torque, `[drive] drag = [0.3, 0]`). A python-ev3dev2
//! `MoveTank`-style program (both motors `run-forever` at one `speed_sp`,
//! stopped when the right wheel has turned the distance) curves off its
//! line; so does the same with duty cycles (`run-direct`). A held
//! `DriveBase::straight` of 1000 mm, blocking or as a future, ends within
//! 20 mm of its line. Skips (with a reason) where no simulated brick can be
//! mounted or the real-time simulation cannot keep up (qemu-user).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use ev3sysfs::motor::{Command, Finished, StopAction, TachoMotor};
use ev3sysfs::units::Millimetres;
use ev3sysfs_sim::world::{Pose, WorldSpec};
use ev3sysfs_sim::{MockTree, RealtimeSim, Simulator};

/// The left wheel's drag, a fraction of the stall torque.
const DRAG: f64 = 0.3;
/// The straight's length and how far off its line a held one may end.
const DISTANCE_MM: i32 = 1000;
const TOLERANCE_MM: f64 = 20.0;

/// The `empty` world, the robot at the west side facing east, its left
/// wheel dragged.
fn dragged() -> Option<(Arc<MockTree>, RealtimeSim)> {
    if !common::real_time_keeps_up() {
        return None;
    }
    let text = WorldSpec::builtin_text("empty").unwrap().replace(
        "start = [1000, 1000, 0]",
        &format!("start = [300, 1000, 0]\ndrag = [{DRAG}, 0]"),
    );
    let spec = WorldSpec::parse(&text, Path::new("empty-dragged.toml")).unwrap();
    let tree = Arc::new(common::ev3_brick()?);
    let mut sim = Simulator::new(Arc::clone(&tree)).unwrap();
    sim.add_world(&spec).unwrap();
    Some((tree, sim.run_realtime()))
}

fn pose(sim: &RealtimeSim) -> Pose {
    sim.with(|s| s.world().unwrap().pose())
}

/// Runs `drive`, says and returns how far along and off the line (mm) the
/// robot ended.
fn measured(what: &str, sim: &RealtimeSim, drive: impl FnOnce()) -> (f64, f64) {
    let start = pose(sim);
    drive();
    // Let the wheels come to rest.
    std::thread::sleep(Duration::from_millis(300));
    let end = pose(sim);
    let (along, off) = (end.x - start.x, end.y - start.y);
    println!(
        "{what}, left wheel drag {DRAG}: {along:.1} mm along, {off:.1} mm off the line, heading \
         {:.1} deg",
        end.heading.to_degrees()
    );
    (along, off)
}

/// python-ev3dev2's `MoveTank(OUTPUT_B, OUTPUT_C).on(75, 75)`, stopped
/// when the right wheel has turned `DISTANCE_MM` (with `direct`: the same
/// with 75 % duty cycles, `run-direct`).
fn move_tank(tree: &MockTree, direct: bool) {
    let left = TachoMotor::large(tree.root(), "outB").unwrap();
    let right = TachoMotor::large(tree.root(), "outC").unwrap();
    let wheel_deg = Millimetres(DISTANCE_MM).wheel_degrees(Millimetres(56));
    let goal = right.position().unwrap() + wheel_deg;
    for m in [&left, &right] {
        m.set_stop_action(StopAction::Brake).unwrap();
        if direct {
            m.set_duty_cycle_sp(75).unwrap();
        } else {
            m.set_speed_sp(m.max_speed() * 3 / 4).unwrap();
        }
    }
    let command = if direct {
        Command::RunDirect
    } else {
        Command::RunForever
    };
    left.send(command).unwrap();
    right.send(command).unwrap();
    while right.position().unwrap() < goal {
        std::thread::sleep(Duration::from_millis(5));
    }
    left.send(Command::Stop).unwrap();
    right.send(Command::Stop).unwrap();
}

#[test]
fn move_tank_at_one_speed_curves_off_its_line() {
    let Some((tree, sim)) = dragged() else {
        return;
    };
    let (_, off) = measured("MoveTank on(75, 75), run-forever", &sim, || {
        move_tank(&tree, false)
    });
    assert!(off.abs() > 5.0 * TOLERANCE_MM, "{off} mm off the line");
}

#[test]
fn move_tank_at_one_duty_cycle_curves_off_its_line() {
    let Some((tree, sim)) = dragged() else {
        return;
    };
    let (_, off) = measured("MoveTank with 75 % duty, run-direct", &sim, || {
        move_tank(&tree, true)
    });
    assert!(off.abs() > 5.0 * TOLERANCE_MM, "{off} mm off the line");
}

#[test]
fn a_held_straight_keeps_its_line() {
    let Some((tree, sim)) = dragged() else {
        return;
    };
    let base = common::drive_base(&tree);
    let (along, off) = measured("DriveBase::straight(1000 mm)", &sim, || {
        assert_eq!(
            base.straight(Millimetres(DISTANCE_MM)).unwrap(),
            Finished::Done
        );
    });
    assert!(
        (along - f64::from(DISTANCE_MM)).abs() <= TOLERANCE_MM,
        "{along}"
    );
    assert!(off.abs() <= TOLERANCE_MM, "{off} mm off the line");
}

#[cfg(feature = "async")]
#[test]
fn an_async_held_straight_keeps_its_line() {
    use ev3sysfs::tasks::{self, block_on};
    let Some((tree, sim)) = dragged() else {
        return;
    };
    let base = common::drive_base(&tree);
    let (along, off) = measured("tasks::straight(1000 mm)", &sim, || {
        let finished = block_on(tasks::straight(&base, Millimetres(DISTANCE_MM))).unwrap();
        assert_eq!(finished.unwrap(), Finished::Done);
    });
    assert!(
        (along - f64::from(DISTANCE_MM)).abs() <= TOLERANCE_MM,
        "{along}"
    );
    assert!(off.abs() <= TOLERANCE_MM, "{off} mm off the line");
}
