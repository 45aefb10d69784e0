//! Two motors as a tank drive: forward, spin in place, stop. Setpoints are
//! written first, then both commands back to back.
//!
//! On a brick: large motors on outB (left) and outC (right).
//!
//!     cargo run --example tank

use std::time::Duration;

use ev3sysfs::motor::{StopAction, TachoMotor, Tank};
use ev3sysfs::StopGuard;
use ev3sysfs_sim::{Playground, TachoDriver};

fn main() -> ev3sysfs::Result<()> {
    let place = Playground::brick_or_simulated("tacho-motor", |tree| {
        tree.add_tacho_motor("outB", TachoDriver::Ev3Large)?;
        tree.add_tacho_motor("outC", TachoDriver::Ev3Large)
            .map(drop)
    })?;
    let tank = Tank::new(
        TachoMotor::large(place.root(), "outB")?,
        TachoMotor::large(place.root(), "outC")?,
    );
    let guard = StopGuard::install_with(StopAction::Brake)?;
    guard.protect(&tank.left)?;
    guard.protect(&tank.right)?;

    tank.drive(500, 500)?;
    std::thread::sleep(Duration::from_millis(800));
    println!(
        "forward: left {} right {}",
        tank.left.position()?,
        tank.right.position()?
    );
    // Spin: one wheel turn forward, one back.
    tank.drive_counts(360, -360, 400)?;
    tank.left.wait_while_running(Duration::from_secs(5))?;
    tank.right.wait_while_running(Duration::from_secs(5))?;
    println!(
        "after spin: left {} right {}",
        tank.left.position()?,
        tank.right.position()?
    );
    tank.stop()
}
