//! Follows the edge of a line with a proportional controller on the color
//! sensor's reflected light, steering a tank, 100 times a second for 12 s.
//!
//! The turn is limited to ±15 % (at 30 % forward): enough for 150 mm bends
//! (±11 %), and slow enough that a loop that runs 100 ms late (a busy brick
//! or host) swings the sensor, 60 mm ahead of the axle, by less than half
//! the 20 mm tape, so it never crosses the line and follows the far edge
//! backwards (as ±70 % with a derivative term did).
//!
//! On a brick: large motors on outB (left) and outC (right), color sensor
//! on in3, the line's edge on its right. Elsewhere: the built-in world
//! `line` (an oval track, 1.5 m a lap).
//!
//!     cargo run --example line_follower

use ev3sysfs::prelude::*;
use ev3sysfs_sim::Playground;

pub fn main() -> Result<()> {
    let brick = Playground::brick_or_world("line")?;
    let tank = Tank::large(brick.root(), "outB", "outC")?;
    let light = ColorSensor::find(brick.root(), "in3")?;
    let _guard = StopGuard::protecting(&tank)?;
    let mut pid = Pid::new(500, 0, 0).with_limit(15); // kp 0.5, full turn at 30 points
    for _ in every(Duration::from_millis(10)).take(1200) {
        let turn = pid.step_error(light.reflected()? - 50);
        tank.on(Percent(30 + turn), Percent(30 - turn))?;
    }
    tank.stop()
}
