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

    /// Sends `command` to every motor, back to back, after checking that
    /// every motor offers it and that no stop guard has fenced any of them.
    ///
    /// # Errors
    /// [`crate::Error::NotOffered`] or [`crate::Error::GuardStopped`] before
    /// anything is written; the first write error (motors before it have
    /// received the command).
    pub fn send(&self, command: Command) -> Result<()> {
        self.check_all(command)?;
        self.motors.iter().try_for_each(|m| m.send(command))
    }

    /// `run-forever` with one speed per motor.
    ///
    /// # Errors
    /// [`crate::Error::OutOfRange`] (also for a wrong number of speeds),
    /// [`crate::Error::NotOffered`], [`crate::Error::GuardStopped`], all
    /// before anything is written; I/O errors.
    pub fn run_forever(&self, speeds: &[i32]) -> Result<()> {
        self.check_speeds(speeds)?;
        self.check_all(Command::RunForever)?;
        for (m, &s) in self.motors.iter().zip(speeds) {
            m.write_speed_sp(s)?;
        }
        self.send(Command::RunForever)
    }

    /// `run-to-rel-pos` by `counts[i]` at `speeds[i]` for motor `i`.
    ///
    /// # Errors
    /// As [`TachoGroup::run_forever`], also for a wrong number of counts.
    pub fn run_to_rel_pos(&self, counts: &[i32], speeds: &[i32]) -> Result<()> {
        self.check_count("number of position targets", counts.len())?;
        self.check_speeds(speeds)?;
        self.check_all(Command::RunToRelPos)?;
        for ((m, &c), &s) in self.motors.iter().zip(counts).zip(speeds) {
            m.set_position_sp(c)?;
            m.write_speed_sp(s)?;
        }
        self.send(Command::RunToRelPos)
    }

    /// `run-timed` for `millis` ms with one speed per motor.
    ///
    /// # Errors
    /// As [`TachoGroup::run_forever`].
    pub fn run_timed(&self, speeds: &[i32], millis: i32) -> Result<()> {
        self.check_speeds(speeds)?;
        super::tacho::check_time(millis)?;
        self.check_all(Command::RunTimed)?;
        for (m, &s) in self.motors.iter().zip(speeds) {
            m.write_time_sp(millis)?;
            m.write_speed_sp(s)?;
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

    fn check_all(&self, command: Command) -> Result<()> {
        self.motors.iter().try_for_each(|m| m.check_send(command))
    }

    fn check_count(&self, what: &'static str, n: usize) -> Result<()> {
        let wanted = self.motors.len() as i64;
        super::check_range(what, n as i64, wanted, wanted)
    }

    fn check_speeds(&self, speeds: &[i32]) -> Result<()> {
        self.check_count("number of speeds", speeds.len())?;
        self.motors
            .iter()
            .zip(speeds)
            .try_for_each(|(m, &s)| m.check_speed(s))
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
