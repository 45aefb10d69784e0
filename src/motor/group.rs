//! Several tacho motors commanded together with minimal skew.

use super::{Command, TachoMotor};
use crate::error::Result;

/// Tacho motors that start and stop together.
///
/// Every method first writes all setpoints (checking every value before the
/// first write), then the command files back to back, so that the motors
/// start within a few syscalls of each other (a few tens of µs on a brick,
/// see `ev3-probe`) rather than one full setup apart.
#[derive(Debug, Clone, Copy)]
pub struct TachoGroup<'a> {
    motors: &'a [&'a TachoMotor],
}

impl<'a> TachoGroup<'a> {
    /// A group of `motors`.
    pub fn new(motors: &'a [&'a TachoMotor]) -> TachoGroup<'a> {
        TachoGroup { motors }
    }

    /// The motors.
    pub fn motors(&self) -> &'a [&'a TachoMotor] {
        self.motors
    }

    /// Sends `command` to every motor, back to back.
    ///
    /// # Errors
    /// The first error; motors before it have received the command.
    pub fn send(&self, command: Command) -> Result<()> {
        self.motors.iter().try_for_each(|m| m.send(command))
    }

    /// `run-forever` with one speed per motor.
    ///
    /// # Errors
    /// [`crate::Error::OutOfRange`] before anything is written; I/O errors.
    pub fn run_forever(&self, speeds: &[i32]) -> Result<()> {
        self.check_speeds(speeds)?;
        for (m, &s) in self.motors.iter().zip(speeds) {
            m.set_speed_sp(s)?;
        }
        self.send(Command::RunForever)
    }

    /// `run-to-rel-pos` by `counts[i]` at `speeds[i]` for motor `i`.
    ///
    /// # Errors
    /// As [`TachoGroup::run_forever`].
    pub fn run_to_rel_pos(&self, counts: &[i32], speeds: &[i32]) -> Result<()> {
        self.check_speeds(speeds)?;
        for ((m, &c), &s) in self.motors.iter().zip(counts).zip(speeds) {
            m.set_position_sp(c)?;
            m.set_speed_sp(s)?;
        }
        self.send(Command::RunToRelPos)
    }

    /// `run-timed` for `millis` ms with one speed per motor.
    ///
    /// # Errors
    /// As [`TachoGroup::run_forever`].
    pub fn run_timed(&self, speeds: &[i32], millis: i32) -> Result<()> {
        self.check_speeds(speeds)?;
        super::check_range("time_sp", i64::from(millis), 0, i64::from(i32::MAX))?;
        for (m, &s) in self.motors.iter().zip(speeds) {
            m.set_time_sp(millis)?;
            m.set_speed_sp(s)?;
        }
        self.send(Command::RunTimed)
    }

    /// Stops every motor.
    ///
    /// # Errors
    /// The first error.
    pub fn stop(&self) -> Result<()> {
        self.send(Command::Stop)
    }

    fn check_speeds(&self, speeds: &[i32]) -> Result<()> {
        if speeds.len() != self.motors.len() {
            return Err(crate::Error::OutOfRange {
                attribute: "number of speeds",
                value: speeds.len() as i64,
                min: self.motors.len() as i64,
                max: self.motors.len() as i64,
            });
        }
        for (m, &s) in self.motors.iter().zip(speeds) {
            let max = i64::from(m.max_speed());
            super::check_range("speed_sp", i64::from(s), -max, max)?;
        }
        Ok(())
    }
}

/// Two drive motors, left and right.
#[derive(Debug)]
pub struct Tank {
    /// Left motor.
    pub left: TachoMotor,
    /// Right motor.
    pub right: TachoMotor,
}

impl Tank {
    /// A tank drive from two motors.
    pub fn new(left: TachoMotor, right: TachoMotor) -> Tank {
        Tank { left, right }
    }

    fn with<R>(&self, f: impl FnOnce(TachoGroup<'_>) -> R) -> R {
        let motors = [&self.left, &self.right];
        f(TachoGroup::new(&motors))
    }

    /// Drives with the two speeds until stopped.
    ///
    /// # Errors
    /// As [`TachoGroup::run_forever`].
    pub fn drive(&self, left: i32, right: i32) -> Result<()> {
        self.with(|g| g.run_forever(&[left, right]))
    }

    /// Turns each wheel by its count at its speed.
    ///
    /// # Errors
    /// As [`TachoGroup::run_to_rel_pos`].
    pub fn drive_counts(&self, left: i32, right: i32, speed: i32) -> Result<()> {
        self.with(|g| g.run_to_rel_pos(&[left, right], &[speed, speed]))
    }

    /// Stops both motors.
    ///
    /// # Errors
    /// The first error.
    pub fn stop(&self) -> Result<()> {
        self.with(|g| g.stop())
    }
}
