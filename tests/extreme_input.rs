//! Extreme input never panics, overflows, wraps or writes before refusing
//! (issue 18): `Duration::MAX` as "wait forever", `i32::MIN`/`i32::MAX`
//! angles, distances and radii, zero-sized drive geometry, duty limit 0.
//! On the simulated brick (a FUSE mount); skips with a reason where none
//! can be mounted.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use ev3sysfs::control::every;
use ev3sysfs::drive::DriveBase;
use ev3sysfs::motor::{Command, Finished, TachoMotor, Then};
use ev3sysfs::units::{DegPerSec, Degrees, Millimetres, Percent};
use ev3sysfs::Error;
use ev3sysfs_sim::{MockTree, RealtimeSim, Simulator, TachoDriver};

/// A running simulated brick with a medium motor on outA and large ones on
/// outB and outC.
fn brick() -> Option<(Arc<MockTree>, RealtimeSim)> {
    let tree = Arc::new(common::ev3_brick()?);
    tree.add_tacho_motor("outA", TachoDriver::Ev3Medium)
        .unwrap();
    tree.add_tacho_motor("outB", TachoDriver::Ev3Large).unwrap();
    tree.add_tacho_motor("outC", TachoDriver::Ev3Large).unwrap();
    let sim = Simulator::new(Arc::clone(&tree)).unwrap().run_realtime();
    Some((tree, sim))
}

/// Stops `port`'s motor from another thread after `after`.
fn stop_later(tree: &MockTree, port: &str, after: Duration) -> thread::JoinHandle<()> {
    let motor = TachoMotor::find(tree.root(), port).unwrap();
    thread::spawn(move || {
        // Stop only what has started: on a loaded machine the waiter may
        // not have sent its run command yet when `after` has passed.
        let state = motor.device().attribute("state").unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while !state.read_string().unwrap().contains("running") && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(5));
        }
        thread::sleep(after);
        motor.stop().unwrap();
    })
}

#[test]
fn every_with_duration_max_does_not_panic() {
    let mut ticks = every(Duration::MAX);
    let first = ticks.next().unwrap();
    assert_eq!((first.index, first.missed), (0, 0));
    assert_eq!(ticks.period(), Duration::MAX);
}

/// A timeout that is not a whole number of milliseconds is waited whole:
/// `poll` takes milliseconds, and a wait for a change rounds up (rounded
/// down, it returned early, and `TachoMotor::wait_until` spun through its
/// last millisecond in 0 ms polls).
#[test]
fn sub_millisecond_timeouts_are_waited_whole() {
    let Some((tree, _sim)) = brick() else {
        return;
    };
    let arm = TachoMotor::medium(tree.root(), "outA").unwrap();
    let state = arm.device().attribute("state").unwrap();
    let _ = state.read_string();
    for micros in [1, 300, 1_500, 2_500] {
        let timeout = Duration::from_micros(micros);
        let begun = Instant::now();
        assert!(!state.wait_for_change(timeout).unwrap());
        assert!(
            begun.elapsed() >= timeout,
            "{:?} < {timeout:?}",
            begun.elapsed()
        );
    }
}

#[test]
fn waits_with_duration_max_wait_until_the_change() {
    let Some((tree, _sim)) = brick() else {
        return;
    };
    let arm = TachoMotor::medium(tree.root(), "outA").unwrap();
    // Attribute::wait_for_change: forever, until the state changes.
    let state = arm.device().attribute("state").unwrap();
    let _ = state.read_string();
    let runner = TachoMotor::medium(tree.root(), "outA").unwrap();
    let start = thread::spawn(move || {
        thread::sleep(Duration::from_millis(200));
        runner.run_forever(100).unwrap();
    });
    assert!(state.wait_for_change(Duration::MAX).unwrap());
    start.join().unwrap();
    arm.stop().unwrap();

    // run_time for "ever", waited for: ends when another handle stops it.
    let stopper = stop_later(&tree, "outA", Duration::from_millis(300));
    let begun = Instant::now();
    let finished = arm
        .run_time(DegPerSec(300), Duration::MAX, Then::Coast, true)
        .unwrap();
    stopper.join().unwrap();
    assert_eq!(finished, Finished::Done);
    assert!(begun.elapsed() < Duration::from_secs(10));
    // wait_for_move and wait_until with Duration::MAX.
    let stopper = stop_later(&tree, "outA", Duration::from_millis(200));
    arm.run_forever(200).unwrap();
    assert_eq!(arm.wait_for_move(Duration::MAX).unwrap(), Finished::Done);
    stopper.join().unwrap();
}

#[test]
fn extreme_angles_saturate_instead_of_overflowing() {
    let Some((tree, _sim)) = brick() else {
        return;
    };
    let arm = TachoMotor::medium(tree.root(), "outA").unwrap();
    for (speed, angle) in [
        (-300, i32::MIN),
        (300, i32::MIN),
        (-300, i32::MAX),
        (300, i32::MAX),
    ] {
        arm.reset_angle(Degrees(0)).unwrap();
        let started = arm
            .run_angle(DegPerSec(speed), Degrees(angle), Then::Coast, false)
            .unwrap();
        assert_eq!(started, Finished::Started);
        let target = arm.device().attribute("position_sp").unwrap();
        let target = target.read_int().unwrap();
        // The direction is the sign of speed * angle: never wrapped around.
        let forward = (i64::from(speed) * i64::from(angle)) > 0;
        assert_eq!(target > 0, forward, "{speed} {angle}: {target}");
        // Saturated at the end of the range, counted from where the motor
        // is: under qemu-user the real-time simulation lags, and the motor
        // may still coast a few counts after reset_angle.
        assert!(
            target.unsigned_abs() >= i32::MAX as u32 - 10_000,
            "saturated: {target}"
        );
        arm.stop().unwrap();
        // run_target to the extremes.
        arm.run_target(DegPerSec(speed), Degrees(angle), Then::Coast, false)
            .unwrap();
        arm.stop().unwrap();
    }
}

#[test]
fn run_until_stalled_refuses_duty_limit_zero_before_writing() {
    let Some((tree, _sim)) = brick() else {
        return;
    };
    let arm = TachoMotor::medium(tree.root(), "outA").unwrap();
    tree.take_stores();
    for duty in [0, -1, 101, i32::MIN, i32::MAX] {
        let err = arm
            .run_until_stalled(DegPerSec(300), Then::Brake, Some(Percent(duty)))
            .unwrap_err();
        assert!(matches!(err, Error::OutOfRange { .. }), "{duty}: {err}");
    }
    assert_eq!(tree.take_stores(), Vec::new(), "nothing written");
}

fn drive_base(tree: &MockTree, wheel: i32, axle: i32) -> ev3sysfs::Result<DriveBase> {
    DriveBase::new(
        TachoMotor::large(tree.root(), "outB").unwrap(),
        TachoMotor::large(tree.root(), "outC").unwrap(),
        Millimetres(wheel),
        Millimetres(axle),
    )
}

#[test]
fn drive_base_refuses_zero_geometry_before_writing() {
    let Some((tree, _sim)) = brick() else {
        return;
    };
    tree.take_stores();
    for (wheel, axle) in [(0, 112), (56, 0), (-56, 112), (56, i32::MIN)] {
        let err = drive_base(&tree, wheel, axle).unwrap_err();
        assert!(matches!(err, Error::OutOfRange { .. }), "{err}");
    }
    assert_eq!(tree.take_stores(), Vec::new(), "nothing written");
}

#[test]
fn drive_moves_with_extreme_input_saturate() {
    let Some((tree, _sim)) = brick() else {
        return;
    };
    // Extreme geometry too: the smallest wheel and the widest track.
    for (wheel, axle) in [(56, 112), (1, i32::MAX), (i32::MAX, 1)] {
        let base = drive_base(&tree, wheel, axle).unwrap();
        let (left, right) = (base.left(), base.right());
        let targets = || {
            let sp = |m: &TachoMotor| {
                m.device()
                    .attribute("position_sp")
                    .unwrap()
                    .read_int()
                    .unwrap()
            };
            (sp(left), sp(right))
        };
        for angle in [i32::MIN, i32::MAX, i32::MIN + 1] {
            base.start_turn(Degrees(angle)).unwrap();
            let (l, r) = targets();
            // Clockwise: left forward, right back; never swapped by a wrap.
            if wheel < axle {
                assert_eq!(l > 0, angle > 0, "turn {angle}: {l} {r}");
                assert_eq!(r > 0, angle < 0, "turn {angle}: {l} {r}");
            }
            base.stop().unwrap();
            for radius in [i32::MIN, i32::MAX, 0, 1] {
                base.start_curve(Millimetres(radius), Degrees(angle))
                    .unwrap();
                base.stop().unwrap();
            }
            base.start_straight(Millimetres(angle)).unwrap();
            let (l, r) = targets();
            assert_eq!(l > 0, angle > 0, "straight {angle}: {l} {r}");
            base.stop().unwrap();
            left.send(Command::Reset).unwrap();
            right.send(Command::Reset).unwrap();
            base.reset().unwrap();
        }
        // A wait after an extreme move does not overflow its timeout.
        let stopper = stop_later(&tree, "outB", Duration::from_millis(200));
        let stopper2 = stop_later(&tree, "outC", Duration::from_millis(200));
        base.start_straight(Millimetres(i32::MAX)).unwrap();
        assert_eq!(base.wait().unwrap(), Finished::Done);
        stopper.join().unwrap();
        stopper2.join().unwrap();
        let _ = base.state().unwrap();
    }
}

/// Found by the `moves` fuzz target: a drive base on motors whose files
/// claim extreme `max_speed` and `count_per_rot` (a plain directory of
/// captured attribute files, edited).
#[test]
fn drive_base_on_motors_with_extreme_files() {
    let tmp = common::TempDir::new("extreme-motors");
    let root = tmp.path();
    for (i, port) in ["outB", "outC"].iter().enumerate() {
        let dir = common::install_fixture("large_motor", root, "tacho-motor", &format!("motor{i}"));
        std::fs::write(dir.join("address"), format!("{port}\n")).unwrap();
    }
    let set = |name: &str, value: i32| {
        for i in 0..2 {
            let path = root.join(format!("tacho-motor/motor{i}/{name}"));
            std::fs::write(path, format!("{value}\n")).unwrap();
        }
    };
    for (max_speed, cpr) in [
        (i32::MAX, 1),
        (i32::MAX, i32::MAX),
        (0, 360),
        (-1, 360),
        (i32::MIN, -5),
        (1050, 0),
    ] {
        set("max_speed", max_speed);
        set("count_per_rot", cpr);
        for (wheel, axle) in [(i32::MAX, 1), (1, i32::MAX), (i32::MAX, i32::MAX)] {
            let base = DriveBase::new(
                TachoMotor::find(root, "outB").unwrap(),
                TachoMotor::find(root, "outC").unwrap(),
                Millimetres(wheel),
                Millimetres(axle),
            );
            let Ok(base) = base else { continue };
            for v in [i32::MIN, -1, 0, 1, i32::MAX] {
                let _ = base.start_straight(Millimetres(v));
                let _ = base.start_turn(Degrees(v));
                let _ = base.start_curve(Millimetres(v), Degrees(v));
                let _ = base.drive(ev3sysfs::units::MmPerSec(v), DegPerSec(v));
                let _ = base.state();
            }
        }
    }
}
