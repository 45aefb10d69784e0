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

#[cfg(doc)]
use super::hold::FINAL_MM;
use super::hold::{Hold, Step};
use super::DriveBase;
use crate::clock::Instant;
use crate::error::{Error, Result};
use crate::motor::Finished;
use crate::units::Millimetres;

/// Control period of a held straight.
pub const HOLD_PERIOD: Duration = Duration::from_millis(10);

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
        let Some(mut hold) = Hold::begin(self, distance)? else {
            self.start_straight(distance)?;
            return self.wait();
        };
        let mut next = Instant::now();
        loop {
            match hold.step(self)? {
                Step::Go => {}
                Step::Stalled => return Ok(Finished::Stalled),
                Step::Final => break,
            }
            next += HOLD_PERIOD;
            std::thread::sleep(next.saturating_duration_since(Instant::now()));
        }
        hold.finish(self)?;
        self.wait()
    }
}
