//! A load on a tacho motor's shaft: friction that drags a wheel (a world
//! file's `drag = [left, right]` under `[drive]`).
//!
//! # Model
//! The load `drag` is a fraction of the motor's stall torque (0: free,
//! 1: it cannot turn). A DC motor's speed falls linearly with its torque,
//! so at duty cycle `d` (a fraction) a loaded motor turns at
//! `(|d| − drag) × max_speed` (never backwards: friction only stops it).
//! * Duty-driven (`run-direct`): nothing compensates; the motor runs
//!   `drag × max_speed` slower than its duty says.
//! * Speed-regulated (every other run command): the speed PID's integral
//!   term learns the load back, as ev3dev's does, with a time constant of
//!   [`LEARN_S`] from each run command (it starts from 0, as the driver's
//!   PID state does): a step in the load costs the wheel about
//!   `drag × max_speed × LEARN_S` counts, after which it runs at its
//!   setpoint again, up to its limit: the duty saturates at 100 %, so the
//!   regulated speed is at most `(1 − drag) × max_speed`.
//! * Coasting: the friction slows the shaft at `drag × max_speed /
//!   `[`STALL_DECEL_S`] on top of the free coast.
//! * Holding is unchanged (the hold PID is far stiffer than any drag below
//!   the stall torque).
//!
//! So two wheels given the same `speed_sp` (python-ev3dev2's `MoveTank`)
//! do not turn together when one drags: the dragged one falls behind at
//! each start, and for good above its limit. Only holding them together
//! (a drive base's feedback between the wheels) keeps a robot straight.

/// Time constant with which the speed PID learns the load (seconds).
pub(crate) const LEARN_S: f64 = 0.15;
/// A load equal to the stall torque stops a free-running shaft in this
/// many seconds (rotor inertia over stall torque).
pub(crate) const STALL_DECEL_S: f64 = 0.05;

/// The load on one motor and its speed PID's compensation.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Load {
    /// Fraction of the stall torque, 0..=1.
    drag: f64,
    /// The duty fraction the speed PID adds against the drag (0..=drag).
    learned: f64,
}

impl Load {
    /// Sets the load (clamped to 0..=1).
    pub(crate) fn set_drag(&mut self, drag: f64) {
        self.drag = if drag.is_finite() {
            drag.clamp(0.0, 1.0)
        } else {
            0.0
        };
    }

    /// A run command started: the speed PID's state starts from zero.
    pub(crate) fn restart(&mut self) {
        self.learned = 0.0;
    }

    /// The speed (counts/s, signed) the motor reaches in one `step_s` step
    /// when the driver asks for `target` (counts/s): with `regulated`, the
    /// speed PID's setpoint, else the speed the duty cycle gives unloaded.
    pub(crate) fn reachable(&mut self, target: f64, regulated: bool, max: f64, step_s: f64) -> f64 {
        if self.drag == 0.0 || target == 0.0 {
            return target;
        }
        let loss = if regulated {
            self.learned += (self.drag - self.learned) * (step_s / LEARN_S).min(1.0);
            self.drag - self.learned
        } else {
            self.drag
        };
        let limit = if regulated {
            (1.0 - self.drag) * max
        } else {
            max
        };
        let speed = (target.abs().min(limit) - loss * max).max(0.0);
        speed * target.signum()
    }

    /// The deceleration (counts/s²) of a coasting shaft whose free coast
    /// slows at `decel`.
    pub(crate) fn coast_decel(&self, decel: f64, max: f64) -> f64 {
        decel + self.drag * max / STALL_DECEL_S
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: f64 = 1050.0;
    const STEP: f64 = 0.002;

    #[test]
    fn no_drag_changes_nothing() {
        let mut load = Load::default();
        assert_eq!(load.reachable(500.0, true, MAX, STEP), 500.0);
        assert_eq!(load.reachable(-500.0, false, MAX, STEP), -500.0);
        assert_eq!(load.coast_decel(3500.0, MAX), 3500.0);
    }

    #[test]
    fn regulation_learns_the_load_back_up_to_its_limit() {
        let mut load = Load::default();
        load.set_drag(0.3);
        let first = load.reachable(400.0, true, MAX, STEP);
        assert!(first < 400.0 - 0.29 * MAX, "{first}");
        let mut v = first;
        for _ in 0..1000 {
            v = load.reachable(400.0, true, MAX, STEP);
        }
        assert!((v - 400.0).abs() < 0.01, "{v}");
        // Above the limit it stays there.
        assert!((load.reachable(-1000.0, true, MAX, STEP) + 0.7 * MAX).abs() < 0.01);
        load.restart();
        assert!(load.reachable(400.0, true, MAX, STEP) < 100.0);
    }

    #[test]
    fn duty_is_never_compensated_and_friction_never_reverses() {
        let mut load = Load::default();
        load.set_drag(0.25);
        for _ in 0..1000 {
            assert_eq!(load.reachable(525.0, false, MAX, STEP), 525.0 - 262.5);
        }
        assert_eq!(load.reachable(-200.0, false, MAX, STEP), 0.0);
        load.set_drag(f64::NAN);
        assert_eq!(load.drag, 0.0);
    }
}
