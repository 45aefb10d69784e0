//! The tacho-motor's class ramps (`ramp_up_sp`, `ramp_down_sp`): the
//! speed setpoint stepped every 100 ms from the current speed to the
//! target, crossing zero by way of 0, for the motor in [`super`].

use super::{TachoMotor, STEP_S};

/// The class ramp's period.
const RAMP_PERIOD_S: f64 = 0.1;

/// A class ramp of the speed setpoint.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Ramp {
    from: f64,
    to: f64,
    duration: f64,
    elapsed: f64,
    since_step: f64,
    pub(super) setpoint: f64,
    /// After a ramp that crosses zero ends at 0: the final target.
    then: Option<f64>,
}

impl Ramp {
    /// The setpoint `t` seconds in: on the line from `from` to `to`.
    fn at(&self, t: f64) -> f64 {
        if self.duration <= 0.0 || t >= self.duration {
            self.to
        } else {
            self.from + (self.to - self.from) * t / self.duration
        }
    }
}

impl TachoMotor {
    pub(super) fn ramp_configured(&self) -> bool {
        self.active.ramp_up_sp != 0 || self.active.ramp_down_sp != 0
    }

    /// Starts a class ramp of the speed setpoint from the current speed to
    /// `to` (crossing zero by way of 0).
    pub(super) fn start_ramp(&mut self, to: f64) {
        let from = self.speed;
        let (first, then) = if from != 0.0 && to != 0.0 && from.signum() != to.signum() {
            (0.0, Some(to))
        } else {
            (to, None)
        };
        self.ramp = Some(self.ramp_between(from, first, then));
    }

    fn ramp_between(&self, from: f64, to: f64, then: Option<f64>) -> Ramp {
        let sp = if to.abs() > from.abs() {
            self.active.ramp_up_sp
        } else {
            self.active.ramp_down_sp
        };
        let duration = f64::from(sp) / 1000.0 * (to - from).abs() / self.max_speed;
        let mut ramp = Ramp {
            from,
            to,
            duration,
            // Half a period in the past: the first step is already non-zero.
            elapsed: RAMP_PERIOD_S / 2.0,
            since_step: 0.0,
            setpoint: from,
            then,
        };
        ramp.setpoint = ramp.at(ramp.elapsed);
        ramp
    }

    /// Advances the class ramp by one step; returns whether it ended.
    pub(super) fn step_ramp(&mut self) -> bool {
        let Some(mut ramp) = self.ramp else {
            return false;
        };
        ramp.since_step += STEP_S;
        if ramp.since_step + 1e-9 >= RAMP_PERIOD_S {
            ramp.since_step = 0.0;
            ramp.elapsed += RAMP_PERIOD_S;
            ramp.setpoint = ramp.at(ramp.elapsed);
        }
        if ramp.setpoint == ramp.to && ramp.elapsed >= ramp.duration {
            if let Some(then) = ramp.then {
                self.ramp = Some(self.ramp_between(ramp.to, then, None));
                return false;
            }
            self.ramp = None;
            return true;
        }
        self.ramp = Some(ramp);
        false
    }
}
