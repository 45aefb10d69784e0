//! The robot programmer's layer on the simulated brick (a FUSE mount run in
//! real time): a square driven with odometry, `drive` clamping, homing
//! against a blocked motor, one-call moves. Skips (with a reason) where no
//! simulated brick can be mounted.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use ev3sysfs::drive::DriveBase;
use ev3sysfs::motor::{Finished, TachoMotor, Then};
use ev3sysfs::units::{DegPerSec, Degrees, Millimetres, MmPerSec, Percent};
use ev3sysfs_sim::{MockDevice, MockTree, RealtimeSim, Simulator, TachoDriver};

/// A running simulated brick with large motors on outB, outC and a medium
/// one on outA.
fn brick() -> Option<(Arc<MockTree>, [MockDevice; 3], RealtimeSim)> {
    let tree = Arc::new(common::ev3_brick()?);
    let medium = tree
        .add_tacho_motor("outA", TachoDriver::Ev3Medium)
        .unwrap();
    let left = tree.add_tacho_motor("outB", TachoDriver::Ev3Large).unwrap();
    let right = tree.add_tacho_motor("outC", TachoDriver::Ev3Large).unwrap();
    let sim = Simulator::new(Arc::clone(&tree)).unwrap().run_realtime();
    Some((tree, [medium, left, right], sim))
}

fn drive_base(tree: &MockTree) -> DriveBase {
    DriveBase::new(
        TachoMotor::large(tree.root(), "outB").unwrap(),
        TachoMotor::large(tree.root(), "outC").unwrap(),
        Millimetres(56),
        Millimetres(112),
    )
    .unwrap()
}

#[test]
fn odometry_square_ends_within_two_percent_of_the_start() {
    let Some((tree, _, _sim)) = brick() else {
        return;
    };
    let base = drive_base(&tree);
    for side in 0..4 {
        assert_eq!(base.straight(Millimetres(300)).unwrap(), Finished::Done);
        assert_eq!(base.turn(Degrees(90)).unwrap(), Finished::Done);
        let pose = base.state().unwrap();
        println!(
            "after side {}: x {} y {} heading {}",
            side + 1,
            pose.x(),
            pose.y(),
            pose.heading()
        );
    }
    let pose = base.state().unwrap();
    let off_um = pose.distance_from_start_um();
    let heading_error_mdeg = pose.heading_mdeg - 360_000;
    println!(
        "square of 4 x 300 mm: ends {}.{:03} mm from the start ({} ppm of the 1200 mm path), \
         heading error {} millidegrees; distance driven {}",
        off_um / 1000,
        off_um % 1000,
        off_um * 1_000_000 / 1_200_000,
        heading_error_mdeg,
        base.distance().unwrap()
    );
    // 2 % of the 1200 mm path.
    assert!(off_um <= 24_000, "{off_um} um from the start: {pose:?}");
    assert!(heading_error_mdeg.abs() <= 2_000, "{pose:?}");
    assert_eq!(base.distance().unwrap(), Millimetres(1200));
}

#[test]
fn drive_clamps_instead_of_failing() {
    let Some((tree, _, _sim)) = brick() else {
        return;
    };
    let base = drive_base(&tree);
    let (left, right) = (base.left(), base.right());
    let max = left.max_speed();
    for (speed, turn) in [
        (i32::MAX, 0),
        (i32::MIN, 0),
        (0, i32::MAX),
        (i32::MAX, i32::MIN),
        (500, 2000),
    ] {
        base.drive(MmPerSec(speed), DegPerSec(turn)).unwrap();
        let (l, r) = (left.speed_sp().unwrap(), right.speed_sp().unwrap());
        assert!(l.abs() <= max && r.abs() <= max, "{speed} {turn}: {l} {r}");
        assert!(l.abs() == max || r.abs() == max, "{speed} {turn}: {l} {r}");
        match turn.signum() {
            0 => assert_eq!(l, r, "straight stays straight"),
            1 => assert!(l > r, "clockwise: the left wheel faster ({l} {r})"),
            _ => assert!(l < r, "anticlockwise: the right wheel faster ({l} {r})"),
        }
    }
    base.stop().unwrap();
}

#[test]
fn homing_returns_stalled_angle_when_blocked() {
    let Some((tree, [medium, ..], sim)) = brick() else {
        return;
    };
    let arm = TachoMotor::medium(tree.root(), "outA").unwrap();
    assert_eq!(
        arm.run_angle(DegPerSec(500), Degrees(120), Then::Hold, true)
            .unwrap(),
        Finished::Done
    );
    sim.with(|s| s.block(&medium, true));
    let stopped_at = arm
        .run_until_stalled(Percent(30), Then::Coast, None)
        .unwrap();
    assert!((stopped_at.0 - 120).abs() <= 2, "stalled at {stopped_at}");
    assert!(!arm.state().unwrap().running());

    // A move into the block ends Stalled, not Done nor a timeout.
    assert_eq!(
        arm.run_angle(DegPerSec(500), Degrees(90), Then::Brake, true)
            .unwrap(),
        Finished::Stalled
    );
    sim.with(|s| s.block(&medium, false));
}

#[test]
fn run_angle_and_run_target_end_done_at_the_angle() {
    let Some((tree, _, _sim)) = brick() else {
        return;
    };
    let arm = TachoMotor::medium(tree.root(), "outA").unwrap();
    arm.reset_angle(Degrees(0)).unwrap();
    let moves: [(&str, i32, i32); 4] = [
        ("run_angle", 90, 90),
        ("run_angle", -45, 45), // negative angle: back
        ("run_target", 270, 270),
        ("run_target", -30, -30),
    ];
    for (how, arg, expected) in moves {
        let finished = match how {
            "run_angle" => arm.run_angle(DegPerSec(720), Degrees(arg), Then::Hold, true),
            _ => arm.run_target(Percent(50), Degrees(arg), Then::Hold, true),
        }
        .unwrap();
        assert_eq!(finished, Finished::Done, "{how}({arg})");
        let at = arm.angle().unwrap();
        assert!((at.0 - expected).abs() <= 1, "{how}({arg}): at {at}");
    }
    // Without waiting: Started, and the wait tells the end.
    assert_eq!(
        arm.run_target(DegPerSec(720), Degrees(0), Then::Hold, false)
            .unwrap(),
        Finished::Started
    );
    assert_eq!(
        arm.wait_for_move(Duration::from_secs(5)).unwrap(),
        Finished::Done
    );
    assert!(arm.angle().unwrap().0.abs() <= 1);
}

#[test]
fn a_guard_protects_a_drive_base() {
    let Some((tree, _, _sim)) = brick() else {
        return;
    };
    let base = drive_base(&tree);
    let guard = ev3sysfs::StopGuard::install_without_signals(None).unwrap();
    guard.protect(&base).unwrap();
    base.drive(MmPerSec(200), DegPerSec(30)).unwrap();
    assert!(base.left().state().unwrap().running());
    assert!(base.right().state().unwrap().running());
    drop(guard); // as at the end of main, a panic or a signal
    assert!(!base.left().state().unwrap().running());
    assert!(!base.right().state().unwrap().running());
}
