//! The tacho motor model of the simulator (see [`crate::mock::sim`] for
//! what it models and its limits).

use std::time::Duration;

use super::sim::TICK;
use super::{MockDevice, TachoDriver};
use crate::error::Result;

const TICK_S: f64 = TICK.as_secs_f64();
const STALL_AFTER: Duration = Duration::from_millis(100);

#[derive(Debug, Clone, Copy, PartialEq)]
enum Active {
    Idle,
    Forever,
    Timed { left: f64 },
    ToPos { target: f64 },
    Direct,
}

#[derive(Debug, Clone)]
struct Params {
    speed_sp: f64,
    position_sp: f64,
    time_sp: f64,
    duty_cycle_sp: f64,
    ramp_up_sp: f64,
    ramp_down_sp: f64,
    stop_action: String,
    inversed: bool,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            speed_sp: 0.0,
            position_sp: 0.0,
            time_sp: 0.0,
            duty_cycle_sp: 0.0,
            ramp_up_sp: 0.0,
            ramp_down_sp: 0.0,
            stop_action: "coast".into(),
            inversed: false,
        }
    }
}

/// The simulated state of one tacho motor (internal frame: polarity normal).
#[derive(Debug)]
pub(super) struct Motor {
    pub(super) device: MockDevice,
    max_speed: f64,
    params: Params,
    active: Active,
    last_rel_target: Option<f64>,
    position: f64,
    pub(super) speed: f64,
    holding: Option<f64>,
    decel: f64,
    pub(super) blocked: bool,
    pub(super) still_for: Duration,
    pub(super) shown: (i64, i64, i64, String),
}

impl Motor {
    pub(super) fn new(device: MockDevice, driver: TachoDriver) -> Motor {
        Motor {
            device,
            max_speed: f64::from(driver.max_speed()),
            params: Params::default(),
            active: Active::Idle,
            last_rel_target: None,
            position: 0.0,
            speed: 0.0,
            holding: None,
            decel: 0.0,
            blocked: false,
            still_for: Duration::ZERO,
            shown: (i64::MIN, i64::MIN, i64::MIN, String::from("?")),
        }
    }

    fn sign(&self) -> f64 {
        if self.params.inversed {
            -1.0
        } else {
            1.0
        }
    }

    pub(super) fn on_write(&mut self, attr: &str, value: &str) {
        let num = || value.trim().parse::<f64>().unwrap_or(0.0);
        let s = self.sign();
        match attr {
            "speed_sp" => self.params.speed_sp = (num() * s).clamp(-self.max_speed, self.max_speed),
            "position_sp" => self.params.position_sp = num() * s,
            "time_sp" => self.params.time_sp = num().max(0.0),
            "ramp_up_sp" => self.params.ramp_up_sp = num().max(0.0),
            "ramp_down_sp" => self.params.ramp_down_sp = num().max(0.0),
            "stop_action" => self.params.stop_action = value.trim().to_owned(),
            "polarity" => self.params.inversed = value.trim() == "inversed",
            "position" => self.position = num() * s,
            "duty_cycle_sp" => self.params.duty_cycle_sp = (num() * s).clamp(-100.0, 100.0),
            "command" => self.command(value.trim()),
            _ => {}
        }
    }

    fn command(&mut self, command: &str) {
        self.holding = None;
        let previous = self.active;
        self.active = match command {
            "run-forever" => Active::Forever,
            "run-timed" => Active::Timed {
                left: self.params.time_sp / 1000.0,
            },
            "run-direct" => Active::Direct,
            "run-to-abs-pos" => Active::ToPos {
                target: self.params.position_sp,
            },
            "run-to-rel-pos" => {
                if self.params.position_sp == 0.0 {
                    return self.stop();
                }
                let base = self.last_rel_target.unwrap_or(self.position);
                let target = base + self.params.position_sp;
                self.last_rel_target = Some(target);
                Active::ToPos { target }
            }
            "stop" => return self.stop(),
            "reset" => {
                self.params = Params::default();
                self.position = 0.0;
                self.last_rel_target = None;
                self.active = Active::Idle;
                self.decel = self.max_speed / 0.3;
                for (attr, v) in [
                    ("speed_sp", "0"),
                    ("position_sp", "0"),
                    ("time_sp", "0"),
                    ("duty_cycle_sp", "0"),
                    ("ramp_up_sp", "0"),
                    ("ramp_down_sp", "0"),
                    ("stop_action", "coast"),
                    ("polarity", "normal"),
                ] {
                    let _ = self.device.set(attr, v);
                }
                return;
            }
            _ => previous,
        };
        if command != "run-to-rel-pos" {
            self.last_rel_target = None;
        }
    }

    fn stop(&mut self) {
        self.active = Active::Idle;
        self.last_rel_target = None;
        match self.params.stop_action.as_str() {
            "hold" => {
                self.holding = Some(self.position);
                self.speed = 0.0;
            }
            "brake" => self.decel = self.max_speed / 0.05,
            _ => self.decel = self.max_speed / 0.3,
        }
    }

    /// Acceleration limit toward `target` speed, and whether a ramp is on.
    fn accel(&self, target: f64) -> (f64, bool) {
        let growing = target.abs() > self.speed.abs();
        let ramp_ms = if growing {
            self.params.ramp_up_sp
        } else {
            self.params.ramp_down_sp
        };
        if ramp_ms > 0.0 {
            (self.max_speed / (ramp_ms / 1000.0), true)
        } else {
            (self.max_speed * 20.0, false)
        }
    }

    /// Advances one tick; returns whether a ramp is active.
    pub(super) fn tick(&mut self) -> bool {
        let mut ramping = false;
        let target = match self.active {
            Active::Idle => {
                if let Some(h) = self.holding {
                    self.position = h;
                    self.speed = 0.0;
                    return false;
                }
                let v = self.speed.abs() - self.decel * TICK_S;
                self.speed = if v <= 0.0 {
                    0.0
                } else {
                    v * self.speed.signum()
                };
                self.position += self.speed * TICK_S;
                return false;
            }
            Active::Forever => self.params.speed_sp,
            Active::Timed { left } => {
                if left <= 0.0 {
                    self.stop();
                    return self.tick();
                }
                self.active = Active::Timed {
                    left: left - TICK_S,
                };
                self.params.speed_sp
            }
            Active::Direct => self.params.duty_cycle_sp / 100.0 * self.max_speed,
            Active::ToPos { target } => {
                let distance = target - self.position;
                let cruise = self.params.speed_sp.abs();
                // Slow down so as to stop on the target.
                let (decel, ramped) = if self.params.ramp_down_sp > 0.0 {
                    (self.max_speed / (self.params.ramp_down_sp / 1000.0), true)
                } else {
                    (self.max_speed * 20.0, false)
                };
                let braking = (2.0 * decel * distance.abs()).sqrt();
                if ramped && braking < cruise {
                    ramping = true;
                }
                cruise.min(braking).max(1.0) * distance.signum()
            }
        };
        let (accel, ramped) = self.accel(target);
        let dv = target - self.speed;
        let max_dv = accel * TICK_S;
        if dv.abs() > max_dv {
            self.speed += max_dv * dv.signum();
            ramping |= ramped;
        } else {
            self.speed = target;
        }
        if self.blocked {
            self.speed = 0.0;
        }
        let before = self.position;
        self.position += self.speed * TICK_S;
        if let Active::ToPos { target } = self.active {
            // Reached or crossed the target in this tick: stop on it.
            if (target - self.position).abs() < 0.5
                || (target - before).signum() != (target - self.position).signum()
            {
                self.position = target;
                self.speed = 0.0;
                self.stop();
                return false;
            }
        }
        ramping
    }

    pub(super) fn running(&self) -> bool {
        self.active != Active::Idle
    }

    /// Writes position, speed, duty cycle and state when they changed.
    pub(super) fn publish(&mut self, ramping: bool) -> Result<()> {
        let s = self.sign();
        let position = (self.position * s).round() as i64;
        let speed = (self.speed * s).round() as i64;
        let duty = if !self.running() {
            0
        } else if self.active == Active::Direct {
            (self.params.duty_cycle_sp * s).round() as i64
        } else {
            (self.speed / self.max_speed * 100.0 * s).round() as i64
        };
        let stalled = self.running() && self.still_for > STALL_AFTER;
        let mut flags = Vec::new();
        if self.running() {
            flags.push("running");
        }
        if ramping && self.running() {
            flags.push("ramping");
        }
        if self.holding.is_some() {
            flags.push("holding");
        }
        if stalled && self.active != Active::Direct {
            flags.push("overloaded");
        }
        if stalled {
            flags.push("stalled");
        }
        let state = flags.join(" ");
        if self.shown.0 != position {
            self.device.set_int("position", position)?;
        }
        if self.shown.1 != speed {
            self.device.set_int("speed", speed)?;
        }
        if self.shown.2 != duty {
            self.device.set_int("duty_cycle", duty)?;
        }
        if self.shown.3 != state {
            self.device.set("state", &state)?;
        }
        self.shown = (position, speed, duty, state);
        Ok(())
    }
}
