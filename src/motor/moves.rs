//! One-call moves in units ([`TachoMotor::run_angle`], `run_target`,
//! `run_time`, `run_until_stalled`) and waits that tell a stall from the end
//! of a move.
//!
//! Argument order as in pybricks: speed first, then the angle or time, then
//! what to do at the end ([`Then`]), then whether to wait. Speeds are
//! [`Speed`]s ([`DegPerSec`](crate::units::DegPerSec) or
//! [`Percent`](crate::units::Percent) of `max_speed`) and angles
//! [`Degrees`], so a swapped call does not compile.
//!
//! Waits never spin: they sleep in `poll(POLLPRI)` on `state`, re-checking
//! at least every 100 ms (10 ms on a mock tree), see
//! [`TachoMotor::wait_until`].
//!
//! ```
//! use std::sync::Arc;
//! use ev3sysfs_sim::{MockTree, Simulator, TachoDriver};
//! use ev3sysfs::motor::{Finished, TachoMotor, Then};
//! use ev3sysfs::units::{DegPerSec, Degrees};
//!
//! let tree = Arc::new(MockTree::ev3()?);
//! tree.add_tacho_motor("outA", TachoDriver::Ev3Medium)?;
//! let _sim = Simulator::new(Arc::clone(&tree))?.run_realtime();
//! let arm = TachoMotor::medium(tree.root(), "outA")?;
//! let done = arm.run_angle(DegPerSec(720), Degrees(90), Then::Hold, true)?;
//! assert_eq!(done, Finished::Done);
//! assert_eq!(arm.angle()?, Degrees(90));
//! // arm.run_angle(Degrees(90), DegPerSec(720), ..) does not compile.
//! # Ok::<(), ev3sysfs::Error>(())
//! ```

use std::time::{Duration, Instant};

use super::{Command, StopAction, TachoMotor};
use crate::error::{Error, Result};
use crate::units::{Degrees, Percent, Speed};

/// What a motor does at the end of a move: the kernel's stop actions
/// (`Then::Coast`, `Then::Brake`, `Then::Hold`).
pub type Then = StopAction;

/// How a move ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Finished {
    /// The move ran to its end.
    Done,
    /// The motor stalled (kernel flag `stalled`: running, speed 0 for more
    /// than 100 ms); it was stopped with the move's [`Then`].
    Stalled,
    /// Not waited for (`wait: false`): the move was started.
    Started,
}

/// How long [`TachoMotor::run_until_stalled`] waits for a stall at most.
pub const STALL_WAIT_LIMIT: Duration = Duration::from_secs(60);

/// Extra time a wait allows beyond a move's nominal duration (ramps, load).
const SLACK: Duration = Duration::from_secs(2);

impl TachoMotor {
    fn cpr_or_360(&self) -> i32 {
        self.count_per_rot().unwrap_or(360)
    }

    /// `speed` in counts per second on this motor, checked against
    /// `max_speed`; zero is refused for moves that must end.
    fn move_speed(&self, speed: impl Speed) -> Result<i32> {
        let counts = speed.counts_per_sec(self.cpr_or_360(), self.max_speed());
        let max = i64::from(self.max_speed());
        super::check_range("speed_sp", i64::from(counts), -max, max)?;
        if counts == 0 {
            return Err(Error::OutOfRange {
                attribute: "speed_sp (a move needs a speed)",
                value: 0,
                min: 1,
                max,
            });
        }
        Ok(counts)
    }

    /// The position as an angle (`position` through `count_per_rot`).
    ///
    /// # Errors
    /// Read errors.
    pub fn angle(&self) -> Result<Degrees> {
        Ok(Degrees::from_counts(self.position()?, self.cpr_or_360()))
    }

    /// Declares the current position to be `angle` (the motor does not
    /// move).
    ///
    /// # Errors
    /// Write errors.
    pub fn reset_angle(&self, angle: Degrees) -> Result<()> {
        self.set_position(angle.to_counts(self.cpr_or_360()))
    }

    /// Runs at `speed` (a [`Speed`]) until stopped.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] beyond `max_speed`, without writing; write
    /// errors.
    pub fn run(&self, speed: impl Speed) -> Result<()> {
        self.run_forever(speed.counts_per_sec(self.cpr_or_360(), self.max_speed()))
    }

    /// Turns by `angle` from where the motor is now, at `speed`, then
    /// applies `then`. A negative speed turns the other way (as pybricks:
    /// the direction is the sign of `speed * angle`). With `wait`, returns
    /// [`Finished::Done`] or [`Finished::Stalled`]; without,
    /// [`Finished::Started`].
    ///
    /// # Errors
    /// [`Error::OutOfRange`] for a zero speed or one beyond `max_speed`
    /// (nothing written); [`Error::NotOffered`] for a stop action the driver
    /// lacks; I/O errors; [`Error::Timeout`] when the move takes more than
    /// twice its nominal time plus 2 s without stalling.
    pub fn run_angle(
        &self,
        speed: impl Speed,
        angle: Degrees,
        then: Then,
        wait: bool,
    ) -> Result<Finished> {
        let counts = self.move_speed(speed)?;
        // Saturated: -i32::MIN does not fit.
        let delta = angle
            .to_counts(self.cpr_or_360())
            .saturating_mul(counts.signum());
        self.set_stop_action(then)?;
        let target = self.position()?.saturating_add(delta);
        self.run_to_abs_pos(target, counts.abs())?;
        self.finish(wait, nominal(delta, counts), then)
    }

    /// Runs to the absolute angle `target` at `speed` (its sign is ignored),
    /// then applies `then`. Results as [`TachoMotor::run_angle`].
    ///
    /// # Errors
    /// As [`TachoMotor::run_angle`].
    pub fn run_target(
        &self,
        speed: impl Speed,
        target: Degrees,
        then: Then,
        wait: bool,
    ) -> Result<Finished> {
        let counts = self.move_speed(speed)?;
        let target = target.to_counts(self.cpr_or_360());
        self.set_stop_action(then)?;
        let distance = target.saturating_sub(self.position()?);
        self.run_to_abs_pos(target, counts.abs())?;
        self.finish(wait, nominal(distance, counts), then)
    }

    /// Runs at `speed` for `time` (whole ms, at most `i32::MAX`: longer
    /// times, `Duration::MAX` too, run that long), then applies `then`.
    /// Results as [`TachoMotor::run_angle`].
    ///
    /// # Errors
    /// As [`TachoMotor::run_angle`].
    pub fn run_time(
        &self,
        speed: impl Speed,
        time: Duration,
        then: Then,
        wait: bool,
    ) -> Result<Finished> {
        let counts = self.move_speed(speed)?;
        let millis = i32::try_from(time.as_millis()).unwrap_or(i32::MAX);
        self.set_stop_action(then)?;
        self.run_timed(counts, millis)?;
        self.finish(wait, time, then)
    }

    /// Homing: runs at `speed` until the motor stalls (against an end stop),
    /// stops with `then` and returns the angle where it stopped. With a
    /// `duty_limit`, runs open-loop at that duty cycle instead (in the
    /// direction of `speed`), which limits the force it pushes with.
    ///
    /// # Errors
    /// As [`TachoMotor::run_angle`]; [`Error::OutOfRange`] for a duty limit
    /// outside 1..=100; [`Error::Timeout`] after [`STALL_WAIT_LIMIT`]
    /// without a stall, or when the motor stops without stalling (then it is
    /// stopped too).
    pub fn run_until_stalled(
        &self,
        speed: impl Speed,
        then: Then,
        duty_limit: Option<Percent>,
    ) -> Result<Degrees> {
        let counts = self.move_speed(speed)?;
        // Everything checked before the first write.
        if let Some(Percent(duty)) = duty_limit {
            super::check_range("duty limit", i64::from(duty), 1, 100)?;
        }
        self.set_stop_action(then)?;
        match duty_limit {
            Some(Percent(duty)) => self.run_direct(duty * counts.signum())?,
            None => self.run_forever(counts)?,
        }
        let result = self.wait_for_end(STALL_WAIT_LIMIT);
        self.stop()?;
        match result? {
            Finished::Stalled => self.angle(),
            _ => Err(Error::Timeout {
                what: format!(
                    "{} on {} to stall (it stopped without)",
                    self.driver_name(),
                    self.address()
                ),
                waited: Duration::ZERO,
            }),
        }
    }

    /// Waits until the current move ends ([`Finished::Done`]) or the motor
    /// stalls: then it is stopped with its stop action and the result is
    /// [`Finished::Stalled`]. Never spins.
    ///
    /// # Errors
    /// [`Error::Timeout`] after `timeout`; read and write errors.
    pub fn wait_for_move(&self, timeout: Duration) -> Result<Finished> {
        let finished = self.wait_for_end(timeout)?;
        if finished == Finished::Stalled {
            self.send(Command::Stop)?;
        }
        Ok(finished)
    }

    /// Waits for `!running` or `stalled`, without stopping anything.
    fn wait_for_end(&self, timeout: Duration) -> Result<Finished> {
        let start = Instant::now();
        let state = self.wait_until(
            |s| !s.running() || s.stalled(),
            timeout.saturating_sub(start.elapsed()),
        )?;
        Ok(if state.stalled() {
            Finished::Stalled
        } else {
            Finished::Done
        })
    }

    fn finish(&self, wait: bool, nominal: Duration, then: Then) -> Result<Finished> {
        if !wait {
            return Ok(Finished::Started);
        }
        let finished = self.wait_for_end(nominal.saturating_mul(2).saturating_add(SLACK))?;
        if finished == Finished::Stalled {
            self.stop_with(then)?;
        }
        Ok(finished)
    }
}

/// Nominal time for `counts` at `speed` counts per second.
fn nominal(counts: i32, speed: i32) -> Duration {
    let speed = u64::from(speed.unsigned_abs().max(1));
    Duration::from_millis(u64::from(counts.unsigned_abs()) * 1000 / speed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nominal_times() {
        assert_eq!(nominal(360, 720), Duration::from_millis(500));
        assert_eq!(nominal(-360, 720), Duration::from_millis(500));
        assert_eq!(nominal(10, 0), Duration::from_millis(10_000));
    }
}
