//! Drive a motor to a position and wait until it holds there.
//!
//! On a brick: the large motor on outA. Elsewhere: a simulated brick.
//!
//!     cargo run --example motor_to_position

use std::time::Duration;

use ev3sysfs::motor::{StopAction, TachoMotor};
use ev3sysfs::StopGuard;
use ev3sysfs_sim::{Playground, TachoDriver};

fn main() -> ev3sysfs::Result<()> {
    let place = Playground::brick_or_simulated("tacho-motor", |tree| {
        tree.add_tacho_motor("outA", TachoDriver::Ev3Large)
            .map(drop)
    })?;
    if place.is_simulated() {
        println!(
            "no motor here: simulating one under {}",
            place.root().display()
        );
    }
    let motor = TachoMotor::find(place.root(), "outA")?;
    // Ctrl-C or a panic: the motor stops instead of running on.
    let guard = StopGuard::install_with(StopAction::Brake)?;
    guard.protect(&motor)?;

    motor.set_stop_action(StopAction::Hold)?;
    motor.set_ramp_down_sp(200)?;
    let target = motor.position()? + motor.degrees_to_counts(450);
    motor.run_to_abs_pos(target, motor.max_speed() / 2)?;
    let state = motor.wait_while_running(Duration::from_secs(10))?;
    println!(
        "reached {} counts ({} degrees), state [{state}]",
        motor.position()?,
        motor.counts_to_degrees(motor.position()?)
    );
    Ok(())
}
