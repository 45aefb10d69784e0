//! Tank drive forward until the bumper (touch sensor) is pressed. The stop
//! guard stops the motors however the program ends (Ctrl-C, panic, error).
//!
//! On a brick: large motors on outB (left) and outC (right), touch sensor
//! on in1. Elsewhere: the built-in world `bumper` (a wall ahead).
//!
//!     cargo run --example bumper

use ev3sysfs::prelude::*;
use ev3sysfs_sim::Playground;

pub fn main() -> Result<()> {
    let brick = Playground::brick_or_world("bumper")?;
    let tank = Tank::large(brick.root(), "outB", "outC")?;
    let bumper = TouchSensor::find(brick.root(), "in1")?;
    let _guard = StopGuard::protecting(&tank)?;
    tank.on(Percent(50), Percent(50))?;
    bumper.wait_for(true, Duration::from_secs(30))?;
    tank.stop()
}
