//! The held straight's controller, one [`HOLD_PERIOD`](super::HOLD_PERIOD) at a time:
//! [`DriveBase::straight`] runs it between sleeps, `tasks::straight` (feature
//! `async`) between the reactor's timers. See `held.rs` for what it does.

use std::time::Duration;

use super::{cpr, DriveBase, SLACK};
use crate::clock::Instant;
use crate::error::{Error, Result};
use crate::motor::{Command, TachoMotor};
use crate::units::{scale32, Millimetres};

/// The last part of a straight, driven to position.
pub const FINAL_MM: i32 = 15;
/// Proportional gain: counts/s of correction per count of heading error.
const KP: i64 = 12;
/// Integral gain: counts/s per count·s of heading error.
const KI: i64 = 8;

/// What the next period of a held straight does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Both wheels got their corrected speeds: look again in a period.
    Go,
    /// A wheel stalled: both were stopped.
    Stalled,
    /// Within [`FINAL_MM`] of the goal: [`Hold::finish`] drives the rest.
    Final,
}

/// A held straight in progress.
#[derive(Debug)]
pub(crate) struct Hold {
    dir: i64,
    l0: i32,
    r0: i32,
    goal_l: i64,
    goal_r: i64,
    final_counts: i64,
    heading0: Option<i32>,
    cruise: i64,
    start: Instant,
    timeout: Duration,
    integral: i64,
}

/// `m`'s counts per second for the base's linear speed, at least 1, at most
/// its `max_speed`.
fn counts_per_sec(base: &DriveBase, m: &TachoMotor) -> i64 {
    i64::from(scale32(
        i64::from(base.wheel_speed(base.speed)),
        i64::from(cpr(m)),
        360,
    ))
    .clamp(1, i64::from(m.max_speed()).max(1))
}

impl Hold {
    /// Starts holding a straight of `distance` (sets the stop actions);
    /// `None` for a straight too short to hold (twice [`FINAL_MM`] or
    /// less): drive it to position.
    ///
    /// # Errors
    /// I/O errors.
    pub(crate) fn begin(base: &DriveBase, distance: Millimetres) -> Result<Option<Hold>> {
        let wheel_deg = distance.wheel_degrees(base.wheel);
        let final_deg = Millimetres(FINAL_MM).wheel_degrees(base.wheel);
        if wheel_deg.saturating_abs() <= final_deg.saturating_mul(2) {
            return Ok(None);
        }
        let (l0, r0) = base.update_positions()?;
        let goal =
            |m: &TachoMotor| i64::from(scale32(i64::from(wheel_deg), i64::from(cpr(m)), 360));
        let final_counts = i64::from(scale32(
            i64::from(final_deg),
            i64::from(cpr(&base.left)),
            360,
        ));
        let heading0 = base.gyro.as_ref().map(|g| g.angle()).transpose()?;
        let cruise = counts_per_sec(base, &base.left).min(counts_per_sec(base, &base.right));
        let goal_l = goal(&base.left);
        let nominal_ms = goal_l.unsigned_abs() * 1000 / cruise.unsigned_abs().max(1);
        base.left.set_stop_action(base.then)?;
        base.right.set_stop_action(base.then)?;
        Ok(Some(Hold {
            dir: i64::from(wheel_deg.signum()),
            l0,
            r0,
            goal_l,
            goal_r: goal(&base.right),
            final_counts,
            heading0,
            cruise,
            start: Instant::now(),
            timeout: Duration::from_millis(nominal_ms) * 2 + SLACK,
            integral: 0,
        }))
    }

    /// One period: reads both wheels (and the gyro), corrects both wheel
    /// speeds by the heading error (PI).
    ///
    /// # Errors
    /// I/O errors; [`Error::Timeout`] (both stopped) when the straight
    /// takes more than twice its nominal time plus 2 s.
    pub(crate) fn step(&mut self, base: &DriveBase) -> Result<Step> {
        let (l, r) = base.update_positions()?;
        let (dl, dr) = (
            i64::from(l) - i64::from(self.l0),
            i64::from(r) - i64::from(self.r0),
        );
        let progress = (dl * self.dir + dr * self.dir) / 2;
        let remaining = self.goal_l.abs() - progress;
        if remaining <= self.final_counts {
            return Ok(Step::Final);
        }
        let (ls, rs) = (base.left.state()?, base.right.state()?);
        if ls.stalled() || rs.stalled() {
            base.stop()?;
            return Ok(Step::Stalled);
        }
        if self.start.elapsed() > self.timeout {
            base.stop()?;
            return Err(Error::Timeout {
                what: format!(
                    "drive base straight ({} and {})",
                    base.left.address(),
                    base.right.address()
                ),
                waited: self.start.elapsed(),
            });
        }
        // Heading error as a wheel-count difference (left ahead: positive,
        // as a clockwise turn).
        let error = match (&base.gyro, self.heading0) {
            (Some(gyro), Some(h0)) => {
                let drift_mdeg =
                    i64::from(base.gyro_drift.load(std::sync::atomic::Ordering::Relaxed))
                        * i64::try_from(self.start.elapsed().as_millis()).unwrap_or(i64::MAX)
                        / 1000;
                let deg = i32::try_from(
                    (i64::from(gyro.angle()?.saturating_sub(h0)) * 1000 - drift_mdeg) / 1000,
                )
                .unwrap_or(0);
                2 * i64::from(scale32(
                    i64::from(base.turn_wheel_degrees(deg)),
                    i64::from(cpr(&base.left)),
                    360,
                ))
            }
            _ => dl - dr,
        };
        let cruise = self.cruise;
        self.integral = (self.integral + error).clamp(-cruise * 50, cruise * 50);
        let correction = (KP * error + KI * self.integral * 10 / 1000).clamp(-cruise, cruise);
        // Slow down over the last quarter second, never below 1/8.
        let v = cruise.min((remaining * 4).max(cruise / 8));
        let set = |m: &TachoMotor, sp: i64| {
            let max = i64::from(m.max_speed());
            m.set_speed_sp(i32::try_from(sp.clamp(-max, max)).unwrap_or(0))
        };
        set(&base.left, self.dir * v - correction)?;
        set(&base.right, self.dir * v + correction)?;
        base.left.send(Command::RunForever)?;
        base.right.send(Command::RunForever)?;
        Ok(Step::Go)
    }

    /// The last [`FINAL_MM`]: both wheels `run-to-abs-pos` to the same
    /// distance from their start, sent back to back (they stop together).
    ///
    /// # Errors
    /// Write errors.
    pub(crate) fn finish(&self, base: &DriveBase) -> Result<()> {
        *base.nominal.lock().unwrap_or_else(|p| p.into_inner()) = Duration::from_millis(
            u64::try_from(self.final_counts * 2000 / self.cruise.max(1)).unwrap_or(1000),
        );
        let slow =
            |m: &TachoMotor| i32::try_from((counts_per_sec(base, m) / 2).max(1)).unwrap_or(1);
        let target = |at: i32, g: i64| i32::try_from(i64::from(at) + g).unwrap_or(at);
        base.left.set_position_sp(target(self.l0, self.goal_l))?;
        base.right.set_position_sp(target(self.r0, self.goal_r))?;
        base.left.set_speed_sp(slow(&base.left))?;
        base.right.set_speed_sp(slow(&base.right))?;
        base.left.send(Command::RunToAbsPos)?;
        base.right.send(Command::RunToAbsPos)
    }
}
