//! How fast a world runs in simulated time: 60 s of robot time (the line
//! follower of `examples/line_follower.rs`, 100 reads and 200 writes a
//! second through the FUSE files, in the built-in `line` world, traced every
//! 10 ms), three times; prints the wall time of each run.
//!
//!     cargo bench -p ev3sysfs-sim --bench world
//!
//! Needs what the simulated brick needs (`/dev/fuse`, root or fusermount3);
//! says so and exits without them.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ev3sysfs::prelude::*;
use ev3sysfs_sim::{MockTree, Simulator, WorldSpec};

const ROBOT_TIME: Duration = Duration::from_secs(60);

fn run() -> ev3sysfs::Result<(Duration, usize)> {
    let tree = Arc::new(MockTree::ev3()?);
    let mut sim = Simulator::new(Arc::clone(&tree))?;
    sim.add_world(&WorldSpec::load("line")?)?;
    if let Some(world) = sim.world_mut() {
        world.trace_every(Duration::from_millis(10));
    }
    let tank = Tank::large(tree.root(), "outB", "outC")?;
    let light = ColorSensor::find(tree.root(), "in3")?;
    let mut pid = Pid::new(500, 0, 0).with_limit(15);
    let start = Instant::now();
    while sim.time() < ROBOT_TIME {
        let turn = pid.step_error(light.reflected()? - 50);
        tank.on(Percent(30 + turn), Percent(30 - turn))?;
        sim.step(Duration::from_millis(10))?;
    }
    let wall = start.elapsed();
    tank.stop()?;
    let lines = sim
        .world_mut()
        .map_or(0, |w| w.take_trace().lines().count());
    Ok((wall, lines))
}

fn main() {
    for i in 1..=3 {
        match run() {
            Ok((wall, lines)) => println!(
                "run {i}: {} s of robot time in {:.3} s of wall time ({lines} trace lines)",
                ROBOT_TIME.as_secs(),
                wall.as_secs_f64()
            ),
            Err(e) => {
                println!("skipped: no simulated brick here: {e}");
                return;
            }
        }
    }
}
