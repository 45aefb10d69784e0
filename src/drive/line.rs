//! A calibrated reflected-light line follower: [`DriveBase::calibrate_line`]
//! sweeps the color sensor across the line (turning in place) and keeps
//! the darkest and brightest readings; [`DriveBase::follow_line`] then runs
//! a PID on the calibrated value (0 % the line, 100 % the floor, 50 % its
//! edge) at a fixed 10 ms rate, steering the drive base, for a distance.

use std::time::Duration;

use super::DriveBase;
use crate::clock::Instant;
use crate::control::{every, Pid};
use crate::error::{Error, Result};
use crate::motor::Finished;
use crate::sensor::ColorSensor;
use crate::units::{DegPerSec, Degrees, Millimetres};

/// The darkest and brightest reflected light a sweep saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineCalibration {
    /// Reflected light over the line, %.
    pub dark: i32,
    /// Reflected light over the floor, %.
    pub bright: i32,
}

impl LineCalibration {
    /// The least contrast a sweep must see (reflected-light points).
    pub const MIN_CONTRAST: i32 = 10;

    /// `raw` on the calibrated scale: 0 the line, 100 the floor.
    pub fn percent(&self, raw: i32) -> i32 {
        let span = (self.bright - self.dark).max(1);
        (raw.saturating_sub(self.dark).saturating_mul(100) / span).clamp(0, 100)
    }
}

/// The line follower's controller when none is given: turn rate in °/s
/// from the calibrated error in % (kp 3), at most ±100 °/s. That is enough
/// for 150 mm bends at the drive base's default speed (about 80 °/s), and
/// slow enough that a loop that runs 100 ms late (a busy brick) swings a
/// sensor 60 mm ahead of the axle by about half of a 20 mm tape: it does
/// not cross the line or lose it in a bend (as kp 3, kd 8, ±180 °/s did;
/// tests/world.rs runs both through such a loop).
pub fn line_pid() -> Pid {
    Pid::new(3000, 0, 0).with_limit(100)
}

impl DriveBase {
    /// Turns in place `sweep` to the right, twice that to the left and back
    /// (the sensor should start over the line's edge), reading reflected
    /// light every 10 ms; returns the darkest and brightest seen.
    ///
    /// # Errors
    /// [`Error::NotFound`] when the sweep saw less than
    /// [`LineCalibration::MIN_CONTRAST`] between dark and bright (no line
    /// under the sensor); I/O errors; [`Error::Timeout`] for a turn that
    /// never ends.
    pub fn calibrate_line(&self, color: &ColorSensor, sweep: Degrees) -> Result<LineCalibration> {
        let (mut dark, mut bright) = (i32::MAX, i32::MIN);
        let s = sweep.0.saturating_abs();
        for angle in [s, s.saturating_mul(-2), s] {
            self.start_turn(Degrees(angle))?;
            let start = Instant::now();
            loop {
                let v = color.reflected()?;
                dark = dark.min(v);
                bright = bright.max(v);
                // The simulated brick shows `running` a tick late.
                if start.elapsed() > Duration::from_millis(100) && self.check()?.is_some() {
                    break;
                }
                if start.elapsed() > Duration::from_secs(20) {
                    self.stop()?;
                    return Err(Error::Timeout {
                        what: "the calibration sweep's turn".to_owned(),
                        waited: start.elapsed(),
                    });
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        let contrast = bright.saturating_sub(dark);
        if contrast < LineCalibration::MIN_CONTRAST {
            return Err(Error::NotFound {
                what: format!(
                    "line under the color sensor on {} (a contrast of at least {})",
                    color.sensor().address(),
                    LineCalibration::MIN_CONTRAST
                ),
                seen: format!(
                    "reflected light {dark}..={bright} % in a ±{s}° sweep; start with the sensor \
                     over the line's edge"
                ),
            });
        }
        Ok(LineCalibration { dark, bright })
    }

    /// Follows the line's edge for `distance` (forward) at the drive
    /// base's speed: every 10 ms, the calibrated reading minus 50 goes
    /// through `pid` (`None`: [`line_pid`]) and the output is the turn
    /// rate in °/s, clockwise when brighter (keep the line on the right of
    /// the sensor; negate the gains for the other edge). Stops with the
    /// end-of-move action.
    ///
    /// # Errors
    /// I/O errors.
    pub fn follow_line(
        &self,
        color: &ColorSensor,
        calibration: LineCalibration,
        distance: Millimetres,
        pid: Option<Pid>,
    ) -> Result<Finished> {
        let mut pid = pid.unwrap_or_else(line_pid);
        let start = self.distance()?;
        let (speed, _) = self.speeds();
        for _ in every(Duration::from_millis(10)) {
            if self.distance()?.0.saturating_sub(start.0) >= distance.0 {
                break;
            }
            if self.left().state()?.stalled() || self.right().state()?.stalled() {
                self.stop()?;
                return Ok(Finished::Stalled);
            }
            let error = calibration.percent(color.reflected()?) - 50;
            let turn = pid.step_error(error);
            self.drive(speed, DegPerSec(turn))?;
        }
        self.stop()?;
        Ok(Finished::Done)
    }
}
