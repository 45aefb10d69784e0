//! [`DriveBase::straight`]: a straight line held by feedback, as Pybricks'
//! DriveBase does (and python-ev3dev2's MoveTank does not): both wheels run
//! speed-regulated and every [`HOLD_PERIOD`] their speeds are corrected by
//! the heading error, from the gyro when the base has one, else from the
//! difference of the two encoders. So a wheel that drags (load, friction,
//! a weaker motor) is caught up by the other slowing down, and the robot
//! keeps its heading instead of curving. The last [`FINAL_MM`] are a
//! `run-to-abs-pos` of both wheels to the same distance, sent back to back:
//! they stop together, on target.

use std::time::Duration;

use super::{cpr, DriveBase, SLACK};
use crate::clock::Instant;
use crate::error::{Error, Result};
use crate::motor::{Command, Finished, TachoMotor};
use crate::units::{scale32, Millimetres};

/// Control period of a held straight.
pub const HOLD_PERIOD: Duration = Duration::from_millis(10);
/// The last part of a straight, driven to position.
pub const FINAL_MM: i32 = 15;
/// Proportional gain: counts/s of correction per count of heading error.
const KP: i64 = 12;
/// Integral gain: counts/s per count·s of heading error.
const KI: i64 = 8;

impl DriveBase {
    /// Measures the gyro's drift with the robot still (for `over`, at
    /// least 1 s for a useful figure), and from then on subtracts it from
    /// the heading a held straight steers by; returns it in millidegrees
    /// per second. Use it when [`GyroSensor::check_still`] reports drift
    /// and recalibration does not help.
    ///
    /// # Errors
    /// [`Error::NotFound`] without a gyro; [`Error::GyroDrift`] when a
    /// wheel turned meanwhile (the robot was not still); read errors.
    ///
    /// [`GyroSensor::check_still`]: crate::sensor::GyroSensor::check_still
    pub fn measure_gyro_drift(&self, over: Duration) -> Result<i32> {
        let Some(gyro) = &self.gyro else {
            return Err(Error::NotFound {
                what: "gyro on this drive base (DriveBase::with_gyro)".to_owned(),
                seen: String::new(),
            });
        };
        let wheels = (self.left.position()?, self.right.position()?);
        let start = Instant::now();
        let degrees = gyro.drift(over)?;
        let elapsed = start.elapsed();
        if (self.left.position()?, self.right.position()?) != wheels {
            return Err(Error::GyroDrift {
                address: gyro.sensor().address().to_owned(),
                degrees,
                over: elapsed,
            });
        }
        let mdeg = i64::from(degrees) * 1_000_000
            / i64::try_from(elapsed.as_millis().max(1)).unwrap_or(i64::MAX);
        let mdeg = i32::try_from(mdeg).unwrap_or(0);
        self.gyro_drift
            .store(mdeg, std::sync::atomic::Ordering::Relaxed);
        Ok(mdeg)
    }

    /// Drives `distance` straight (negative: backwards), holding the
    /// heading, and waits. Both wheels run speed-regulated and every
    /// [`HOLD_PERIOD`] their speeds are corrected (PI) by the heading error,
    /// from the gyro when the base has one, else from the difference of the
    /// two encoders: a dragged wheel is waited for, the robot does not
    /// curve. The last [`FINAL_MM`] are a `run-to-abs-pos` of both wheels
    /// to the same distance, sent back to back: they stop together. A stall
    /// stops both motors and returns [`Finished::Stalled`].
    ///
    /// # Errors
    /// I/O errors; [`Error::Timeout`] when the move takes more than twice
    /// its nominal time plus 2 s.
    pub fn straight(&self, distance: Millimetres) -> Result<Finished> {
        let wheel_deg = distance.wheel_degrees(self.wheel);
        let final_deg = Millimetres(FINAL_MM).wheel_degrees(self.wheel);
        if wheel_deg.saturating_abs() <= final_deg.saturating_mul(2) {
            self.start_straight(distance)?;
            return self.wait();
        }
        let dir = i64::from(wheel_deg.signum());
        let (l0, r0) = self.update_positions()?;
        let goal =
            |m: &TachoMotor| i64::from(scale32(i64::from(wheel_deg), i64::from(cpr(m)), 360));
        let (goal_l, goal_r) = (goal(&self.left), goal(&self.right));
        let final_counts = i64::from(scale32(
            i64::from(final_deg),
            i64::from(cpr(&self.left)),
            360,
        ));
        let heading0 = self.gyro.as_ref().map(|g| g.angle()).transpose()?;
        let speed = |m: &TachoMotor| {
            i64::from(scale32(
                i64::from(self.wheel_speed(self.speed)),
                i64::from(cpr(m)),
                360,
            ))
            .clamp(1, i64::from(m.max_speed()))
        };
        let cruise = speed(&self.left).min(speed(&self.right));
        let nominal_ms = goal_l.unsigned_abs() * 1000 / cruise.unsigned_abs().max(1);
        let timeout = Duration::from_millis(nominal_ms) * 2 + SLACK;
        let start = Instant::now();
        self.left.set_stop_action(self.then)?;
        self.right.set_stop_action(self.then)?;
        let mut integral = 0i64;
        let mut next = Instant::now();
        loop {
            let (l, r) = self.update_positions()?;
            let (dl, dr) = (i64::from(l) - i64::from(l0), i64::from(r) - i64::from(r0));
            let progress = (dl * dir + dr * dir) / 2;
            let remaining = goal_l.abs() - progress;
            if remaining <= final_counts {
                break;
            }
            let (ls, rs) = (self.left.state()?, self.right.state()?);
            if ls.stalled() || rs.stalled() {
                self.stop()?;
                return Ok(Finished::Stalled);
            }
            if start.elapsed() > timeout {
                self.stop()?;
                return Err(self.timeout(start));
            }
            // Heading error as a wheel-count difference (left ahead:
            // positive, as a clockwise turn).
            let error = match (&self.gyro, heading0) {
                (Some(gyro), Some(h0)) => {
                    let drift_mdeg =
                        i64::from(self.gyro_drift.load(std::sync::atomic::Ordering::Relaxed))
                            * i64::try_from(start.elapsed().as_millis()).unwrap_or(i64::MAX)
                            / 1000;
                    let deg = i32::try_from(
                        (i64::from(gyro.angle()?.saturating_sub(h0)) * 1000 - drift_mdeg) / 1000,
                    )
                    .unwrap_or(0);
                    2 * i64::from(scale32(
                        i64::from(self.turn_wheel_degrees(deg)),
                        i64::from(cpr(&self.left)),
                        360,
                    ))
                }
                _ => dl - dr,
            };
            integral = (integral + error).clamp(-cruise * 50, cruise * 50);
            let correction = (KP * error + KI * integral * 10 / 1000).clamp(-cruise, cruise);
            // Slow down over the last quarter second, never below 1/8.
            let v = cruise.min((remaining * 4).max(cruise / 8));
            let set = |m: &TachoMotor, sp: i64| {
                let max = i64::from(m.max_speed());
                m.set_speed_sp(i32::try_from(sp.clamp(-max, max)).unwrap_or(0))
            };
            set(&self.left, dir * v - correction)?;
            set(&self.right, dir * v + correction)?;
            self.left.send(Command::RunForever)?;
            self.right.send(Command::RunForever)?;
            next += HOLD_PERIOD;
            std::thread::sleep(next.saturating_duration_since(Instant::now()));
        }
        // Both wheels to the same distance from their start, back to back.
        *self.nominal.lock().unwrap_or_else(|p| p.into_inner()) = Duration::from_millis(
            u64::try_from(final_counts * 2000 / cruise.max(1)).unwrap_or(1000),
        );
        let slow = |m: &TachoMotor| i32::try_from((speed(m) / 2).max(1)).unwrap_or(1);
        let target = |at: i32, g: i64| i32::try_from(i64::from(at) + g).unwrap_or(at);
        self.left.set_position_sp(target(l0, goal_l))?;
        self.right.set_position_sp(target(r0, goal_r))?;
        self.left.set_speed_sp(slow(&self.left))?;
        self.right.set_speed_sp(slow(&self.right))?;
        self.left.send(Command::RunToAbsPos)?;
        self.right.send(Command::RunToAbsPos)?;
        self.wait()
    }

    fn timeout(&self, start: Instant) -> Error {
        Error::Timeout {
            what: format!(
                "drive base straight ({} and {})",
                self.left.address(),
                self.right.address()
            ),
            waited: start.elapsed(),
        }
    }
}
