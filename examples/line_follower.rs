//! Follows the edge of a line with a PID controller on the color sensor's
//! reflected light, steering a tank, 100 times a second for 10 s.
//!
//! On a brick: large motors on outB (left) and outC (right), color sensor
//! on in3, the line's edge on its right. Elsewhere: a simulated brick where
//! the line is the edge of a black disc.
//!
//!     cargo run --example line_follower

mod common;
use ev3sysfs::prelude::*;

pub fn main() -> Result<()> {
    let brick = common::line_world()?;
    let tank = Tank::large(brick.root(), "outB", "outC")?;
    let light = ColorSensor::find(brick.root(), "in3")?;
    let _guard = StopGuard::protecting(&tank)?;
    let mut pid = Pid::new(1500, 20, 4000).with_limit(70); // kp 1.5, ki 0.02, kd 4
    for _ in every(Duration::from_millis(10)).take(1000) {
        let turn = pid.step_error(light.reflected()? - 50);
        tank.on(Percent(30 + turn), Percent(30 - turn))?;
    }
    tank.stop()
}
