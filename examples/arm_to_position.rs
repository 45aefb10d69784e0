//! Homes an arm against its end stop, then moves it to a position.
//!
//! On a brick: medium motor on outC. Elsewhere: the built-in world `arm`
//! (an arm with end stops).
//!
//!     cargo run --example arm_to_position

use ev3sysfs::prelude::*;
use ev3sysfs_sim::Playground;

pub fn main() -> Result<()> {
    let brick = Playground::brick_or_world("arm")?;
    let arm = TachoMotor::medium(brick.root(), "outC")?;
    let _guard = StopGuard::protecting(&arm)?;
    arm.run_until_stalled(Percent(-30), Then::Coast, None)?;
    arm.reset_angle(Degrees(0))?;
    arm.run_target(Percent(50), Degrees(120), Then::Hold, true)?;
    println!("arm at {}", arm.angle()?);
    Ok(())
}
