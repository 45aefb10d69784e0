//! Follows the edge of a line with a PID controller on the color sensor's
//! reflected light, steering a tank, 100 times a second for 12 s.
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
    let mut pid = Pid::new(1500, 20, 4000).with_limit(70); // kp 1.5, ki 0.02, kd 4
    for _ in every(Duration::from_millis(10)).take(1200) {
        let turn = pid.step_error(light.reflected()? - 50);
        tank.on(Percent(30 + turn), Percent(30 - turn))?;
    }
    tank.stop()
}
