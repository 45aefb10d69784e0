//! Robot programs in simulated worlds (`ev3sysfs::mock::world`), driven in
//! simulated time (`Simulator::step`): the crate's own API on one side,
//! the world's kinematics and sensors on the other. Skips (with a reason)
//! where no simulated brick can be mounted.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use ev3sysfs::mock::{MockTree, Simulator, WorldSpec};
use ev3sysfs::prelude::*;

const MS10: Duration = Duration::from_millis(10);

/// A simulated brick running built-in world `name` in simulated time.
fn world(name: &str) -> Option<(Arc<MockTree>, Simulator)> {
    let tree = Arc::new(common::ev3_brick()?);
    let mut sim = Simulator::new(Arc::clone(&tree)).unwrap();
    sim.add_world(&WorldSpec::load(name).unwrap()).unwrap();
    Some((tree, sim))
}

/// The line follower of `examples/line_follower.rs`, 100 times a second of
/// simulated time, until the world counts a lap (or `limit`); with an
/// optional trace every 10 ms. Returns the lap time and the trace.
fn follow_line(limit: Duration, trace: bool) -> Option<(Option<Duration>, String, f64)> {
    let (tree, mut sim) = world("line")?;
    if trace {
        sim.world_mut().unwrap().trace_every(MS10);
    }
    let tank = Tank::large(tree.root(), "outB", "outC").unwrap();
    let light = ColorSensor::find(tree.root(), "in3").unwrap();
    let mut pid = Pid::new(1500, 20, 4000).with_limit(70);
    let mut lap = None;
    while sim.time() < limit {
        let turn = pid.step_error(light.reflected().unwrap() - 50);
        tank.on(Percent(30 + turn), Percent(30 - turn)).unwrap();
        sim.step(MS10).unwrap();
        let report = sim.world().unwrap().report();
        if let Some((length, Some(t))) = report.lap {
            lap = Some(t);
            if !trace {
                return Some((lap, String::new(), length));
            }
        }
    }
    tank.stop().unwrap();
    let report = sim.world().unwrap().report();
    println!("{report}");
    let length = report.lap.unwrap().0;
    let trace = sim.world_mut().unwrap().take_trace();
    Some((lap, trace, length))
}

#[test]
fn the_line_follower_completes_a_lap_within_twice_the_ideal_time() {
    let Some((lap, _, length)) = follow_line(Duration::from_secs(30), false) else {
        return;
    };
    // 30 % of a large motor's 1050 counts/s on a 56 mm wheel.
    let speed = 315.0 / 360.0 * std::f64::consts::PI * 56.0;
    let ideal = length / speed;
    let lap = lap.expect("a lap").as_secs_f64();
    println!("lap of {length:.0} mm in {lap:.2} s (ideal {ideal:.2} s)");
    assert!(lap <= 2.0 * ideal, "lap {lap:.2} s, ideal {ideal:.2} s");
}
