//! Issue 17, point 2, on the simulated world (`ev3sysfs_sim::world`): the
//! world's gyro drifts; a still robot reports it; a gyro-held 1000 mm
//! straight with the drift measured and taken out ends within 20 mm of its
//! line; the calibrated line follower completes a lap of the `line`
//! track. (A dragged wheel, the world's `drag`, is tests/world_drag.rs;
//! tests/drive_held.rs holds a wheel still in bursts.)
//! Skips (with a reason) where no simulated brick can be mounted.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use ev3sysfs::motor::Finished;
use ev3sysfs::sensor::{ColorSensor, GyroSensor};
use ev3sysfs::units::{Degrees, Millimetres};
use ev3sysfs::Error;
use ev3sysfs_sim::world::WorldSpec;
use ev3sysfs_sim::{MockTree, RealtimeSim, Simulator};

/// The built-in `empty` world with the robot at the west side, facing
/// east, and its gyro drifting `drift` degrees per second.
fn drifting(drift: f64) -> Option<(Arc<MockTree>, RealtimeSim)> {
    let text = WorldSpec::builtin_text("empty")
        .unwrap()
        .replace("start = [1000, 1000, 0]", "start = [300, 1000, 0]");
    let text = format!("{text}\n[sensors.in2]\ndrift = {drift}\n");
    let spec = WorldSpec::parse(&text, Path::new("empty-drifting.toml")).unwrap();
    world(&spec)
}

fn world(spec: &WorldSpec) -> Option<(Arc<MockTree>, RealtimeSim)> {
    // Closed-loop driving in real time: not under qemu-user.
    if !common::real_time_keeps_up() {
        return None;
    }
    let tree = Arc::new(common::ev3_brick()?);
    let mut sim = Simulator::new(Arc::clone(&tree)).unwrap();
    sim.add_world(spec).unwrap();
    Some((tree, sim.run_realtime()))
}

#[test]
fn a_still_robot_with_a_drifting_gyro_is_told_so() {
    let Some((tree, _sim)) = drifting(2.0) else {
        return;
    };
    let gyro = GyroSensor::find(tree.root(), "in2").unwrap();
    let e = gyro.check_still(Duration::from_secs(1), 1).unwrap_err();
    println!("{e}");
    assert!(matches!(e, Error::GyroDrift { .. }), "{e:#?}");
}

#[test]
fn gyro_held_1000_mm_straight_with_drift_on_ends_on_its_line() {
    let Some((tree, sim)) = drifting(2.0) else {
        return;
    };
    let base = common::drive_base(&tree)
        .with_gyro(GyroSensor::find(tree.root(), "in2").unwrap())
        .unwrap();
    let drift = base.measure_gyro_drift(Duration::from_secs(2)).unwrap();
    println!("measured drift: {drift} mdeg/s (world: 2000)");
    assert!((1000..=3000).contains(&drift), "{drift}");
    let start = sim.with(|s| s.world().unwrap().pose());
    assert_eq!(base.straight(Millimetres(1000)).unwrap(), Finished::Done);
    let end = sim.with(|s| s.world().unwrap().pose());
    let (along, off) = (end.x - start.x, end.y - start.y);
    println!(
        "1000 mm east with the gyro drifting 2 deg/s: {along:.1} mm along, {off:.1} mm off the \
         line, heading {:.2} deg",
        end.heading.to_degrees()
    );
    assert!((along - 1000.0).abs() <= 20.0, "{along}");
    assert!(off.abs() <= 20.0, "{off} mm off the line");
}

#[test]
fn the_line_follower_completes_a_lap_of_the_track() {
    let spec = WorldSpec::load("line").unwrap();
    let Some((tree, sim)) = world(&spec) else {
        return;
    };
    let base = common::drive_base(&tree);
    let light = ColorSensor::find(tree.root(), "in3").unwrap();
    let calibration = base.calibrate_line(&light, Degrees(25)).unwrap();
    println!("calibration: {calibration:?}");
    assert!(
        calibration.bright - calibration.dark >= 40,
        "{calibration:?}"
    );
    let (lap, _) = sim.with(|s| s.world().unwrap().report().lap).unwrap();
    let finished = base
        .follow_line(
            &light,
            calibration,
            Millimetres(lap.ceil() as i32 + 50),
            None,
        )
        .unwrap();
    let report = sim.with(|s| s.world().unwrap().report());
    println!("{report}");
    assert_eq!(finished, Finished::Done);
    let (_, completed) = report.lap.unwrap();
    assert!(completed.is_some(), "the lap was not completed: {report}");
}
