//! The start-up benchmark's robot program (`scripts/startup-bench`): finds
//! two large motors (outA, outB) and a touch sensor (in1) by port, installs
//! the stop guard, sends the first `run` command, prints the wall-clock time
//! right after it (`first-command-ns N`, for the launcher to subtract its
//! exec time) and stops. `scripts/startup/robot.py` is the same program in
//! python-ev3dev2.
//!
//! Elsewhere than on a brick (or `ev3-sim`) it builds a simulated brick
//! first and says so; the benchmark runs it where the devices exist.

use ev3sysfs::prelude::*;
use ev3sysfs_sim::{Playground, SensorDriver, TachoDriver};

fn main() -> Result<()> {
    let place = Playground::brick_or_simulated("tacho-motor", |tree| {
        tree.add_tacho_motor("outA", TachoDriver::Ev3Large)?;
        tree.add_tacho_motor("outB", TachoDriver::Ev3Large)?;
        tree.add_sensor("in1", SensorDriver::Ev3Touch).map(drop)
    })?;
    if place.is_simulated() {
        println!(
            "(no brick here: a simulated one under {})",
            place.root().display()
        );
    }
    let root = place.root();
    let tank = Tank::large(root, "outA", "outB")?;
    let _bumper = TouchSensor::find(root, "in1")?;
    let _guard = StopGuard::protecting(&tank)?;
    tank.on(Percent(50), Percent(50))?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    println!("first-command-ns {now}");
    tank.stop()
}
