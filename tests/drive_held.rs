//! Issue 17, point 2 (until the simulated world with wheel friction and gyro
//! drift lands): on the simulated brick, a dragged left wheel (held still
//! 40 ms of every 120 ms of simulated time) does not bend a held `DriveBase::straight`, where
//! two independently regulated wheels (`start_straight`) drift apart; a
//! still robot whose gyro drifts is reported; the gyro's reset recipe works
//! when another program left it in another mode. Skips (with a reason)
//! where no simulated brick can be mounted.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

// 32-bit atomics: the brick's armv5te has no 64-bit ones.
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use ev3sysfs::drive::DriveBase;
use ev3sysfs::motor::{Finished, TachoMotor};
use ev3sysfs::sensor::GyroSensor;
use ev3sysfs::units::Millimetres;
use ev3sysfs::Error;
use ev3sysfs_sim::{MockDevice, MockTree, RealtimeSim, SensorDriver, Simulator, TachoDriver};

fn brick() -> Option<(Arc<MockTree>, MockDevice, MockDevice, RealtimeSim)> {
    let tree = Arc::new(common::ev3_brick()?);
    let left = tree.add_tacho_motor("outB", TachoDriver::Ev3Large).unwrap();
    let right = tree.add_tacho_motor("outC", TachoDriver::Ev3Large).unwrap();
    let sim = Simulator::new(Arc::clone(&tree)).unwrap().run_realtime();
    Some((tree, left, right, sim))
}

/// Runs `drive` while the left wheel drags (held still 40 ms of every
/// 120 ms of simulated time); returns the largest encoder difference
/// (counts, from the start of `drive`) seen at any tick, and the final one.
/// Drag and measurement are in the simulator's time, so a slow machine
/// cannot stretch a burst (and stall the motor) or miss a peak.
fn with_dragged_left_wheel(
    left_dev: &MockDevice,
    right_dev: &MockDevice,
    sim: &RealtimeSim,
    drive: impl FnOnce(),
) -> (i32, i32) {
    let worst = Arc::new(AtomicI32::new(0));
    let diff = Arc::new(AtomicI32::new(0));
    let (l, r) = (left_dev.clone(), right_dev.clone());
    let (w, d) = (Arc::clone(&worst), Arc::clone(&diff));
    sim.with(|s| {
        let mut base = None;
        s.script_block(left_dev, move |world| {
            let now = (world.position(&l), world.position(&r));
            let (l0, r0) = *base.get_or_insert(now);
            let apart = i32::try_from((now.0 - l0) - (now.1 - r0)).unwrap_or(i32::MAX);
            d.store(apart, Ordering::SeqCst);
            w.fetch_max(apart.abs(), Ordering::SeqCst);
            world.time.as_millis() % 120 < 40
        });
    });
    drive();
    sim.with(|s| s.block(left_dev, false));
    (worst.load(Ordering::SeqCst), diff.load(Ordering::SeqCst))
}

#[test]
fn a_dragged_wheel_does_not_bend_a_held_straight() {
    // DriveBase's held straight is a 10 ms loop in real time.
    if !common::real_time_keeps_up() {
        return;
    }
    let Some((tree, left_dev, right_dev, sim)) = brick() else {
        return;
    };
    let base = DriveBase::new(
        TachoMotor::large(tree.root(), "outB").unwrap(),
        TachoMotor::large(tree.root(), "outC").unwrap(),
        Millimetres(56),
        Millimetres(112),
    )
    .unwrap();
    // Two wheels each on its own: the free one runs ahead.
    let (free_worst, _) = with_dragged_left_wheel(&left_dev, &right_dev, &sim, || {
        base.start_straight(Millimetres(500)).unwrap();
        base.wait().unwrap();
    });
    base.reset().unwrap();
    let (held_worst, held_end) = with_dragged_left_wheel(&left_dev, &right_dev, &sim, || {
        assert_eq!(base.straight(Millimetres(500)).unwrap(), Finished::Done);
    });
    let pose = base.state().unwrap();
    println!(
        "dragged left wheel, 500 mm: wheels apart by up to {free_worst} counts on their own, \
         {held_worst} held (end: {held_end}); held pose {pose:?}"
    );
    assert!(held_worst * 2 < free_worst, "{held_worst} vs {free_worst}");
    assert!(held_end.abs() <= 3, "wheels stop together: {held_end}");
    assert!((pose.x().0 - 500).abs() <= 5, "{pose:?}");
    assert!(pose.y().0.abs() <= 20, "within 20 mm of the line: {pose:?}");
}

#[test]
fn a_drifting_gyro_on_a_still_robot_is_reported() {
    let Some(tree) = common::ev3_brick() else {
        return;
    };
    let tree = Arc::new(tree);
    let gyro_dev = tree.add_sensor("in2", SensorDriver::Ev3Gyro).unwrap();
    let mut sim = Simulator::new(Arc::clone(&tree)).unwrap();
    // 3 degrees per second, the robot standing still.
    let steps = (0..100u64)
        .map(|i| {
            (
                Duration::from_millis(i * 100),
                i64::try_from(i * 3 / 10).unwrap(),
            )
        })
        .collect();
    sim.script_sequence(&gyro_dev, 0, steps);
    let sim = sim.run_realtime();
    let gyro = GyroSensor::find(tree.root(), "in2").unwrap();
    let e = gyro.check_still(Duration::from_secs(1), 1).unwrap_err();
    println!("{e}");
    assert!(
        matches!(e, Error::GyroDrift { degrees, .. } if (2..=4).contains(&degrees)),
        "{e:#?}"
    );
    assert!(e.to_string().contains("calibrate"), "{e}");
    drop(sim);
}

#[test]
fn gyro_reset_after_another_program_left_it_in_rate_mode() {
    let Some(tree) = common::brick() else { return };
    let gyro_dev = tree.add_sensor("in2", SensorDriver::Ev3Gyro).unwrap();
    let gyro = GyroSensor::find(tree.root(), "in2").unwrap();
    gyro_dev.set_int("value0", 37).unwrap();
    assert_eq!(gyro.angle().unwrap(), 37);
    // Another program switches to GYRO-RATE; our reset must still reset.
    std::fs::write(gyro.sensor().device().dir().join("mode"), "GYRO-RATE").unwrap();
    tree.take_stores();
    gyro.reset_angle().unwrap();
    let stores: Vec<String> = tree
        .take_stores()
        .into_iter()
        .map(|(_, v)| String::from_utf8_lossy(&v).trim().to_owned())
        .collect();
    // (The simulated gyro does not model the reset itself: the mode write
    // is what a real EV3 gyro resets on.)
    assert_eq!(stores, ["GYRO-ANG"], "the mode change that resets");
}

#[test]
fn a_gyro_held_straight_with_a_dragged_wheel() {
    // DriveBase's held straight is a 10 ms loop in real time.
    if !common::real_time_keeps_up() {
        return;
    }
    let Some(tree) = common::ev3_brick() else {
        return;
    };
    let tree = Arc::new(tree);
    let left_dev = tree.add_tacho_motor("outB", TachoDriver::Ev3Large).unwrap();
    let right_dev = tree.add_tacho_motor("outC", TachoDriver::Ev3Large).unwrap();
    let gyro_dev = tree.add_sensor("in2", SensorDriver::Ev3Gyro).unwrap();
    let mut sim = Simulator::new(Arc::clone(&tree)).unwrap();
    // The gyro sees the robot's true heading (clockwise), from the wheels.
    let (l, r) = (left_dev.clone(), right_dev.clone());
    sim.script_sensor(&gyro_dev, 0, move |w| {
        let mm = |c: i64| c as f64 / 360.0 * std::f64::consts::PI * 56.0;
        let rad = (mm(w.position(&l)) - mm(w.position(&r))) / 112.0;
        rad.to_degrees().round() as i64
    });
    let sim = sim.run_realtime();
    let base = DriveBase::new(
        TachoMotor::large(tree.root(), "outB").unwrap(),
        TachoMotor::large(tree.root(), "outC").unwrap(),
        Millimetres(56),
        Millimetres(112),
    )
    .unwrap()
    .with_gyro(GyroSensor::find(tree.root(), "in2").unwrap())
    .unwrap();
    let (worst, end) = with_dragged_left_wheel(&left_dev, &right_dev, &sim, || {
        assert_eq!(base.straight(Millimetres(500)).unwrap(), Finished::Done);
    });
    let pose = base.state().unwrap();
    println!("gyro-held, dragged left wheel: apart by up to {worst} counts, end {end}; {pose:?}");
    assert!(worst < 100, "{worst}");
    assert!((pose.x().0 - 500).abs() <= 10, "{pose:?}");
    assert!(pose.y().0.abs() <= 20, "within 20 mm of the line: {pose:?}");
    assert!(pose.heading().0.abs() <= 2, "{pose:?}");
}
