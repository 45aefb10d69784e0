//! The dc-motor (`rcx-motor`) and servo-motor (`ms-8ch-servo`) models.
//!
//! DC motor (`dc_motor_class.c`): `duty_cycle_sp` is shown as written and
//! applied at the next command (at once under run-direct); the duty cycle
//! ramps toward its target with `ramp_up_sp`/`ramp_down_sp` (ms for
//! 0 ↔ 100 %, every 100 ms); run-timed stops after `time_sp`;
//! `stop_action` is write-only. `state` is `running` while the H-bridge
//! drives, `ramping` while a ramp is pending.
//!
//! Servo motor (`servo_motor_class.c`): `position_sp` reads the pulse
//! being sent, scaled back (-150 while floating); `run` sends the pulse
//! for `position_sp`, `float` stops sending.

use std::time::Duration;

use super::kernel::{
    kstrtoint, match_string, power_attrs, ro, rw, show_int, show_lego_uevent, show_power, show_str,
    sscanf_i32, sscanf_u32, store_power,
};
use crate::kobject::{AttrInfo, Effects, KResult, Mode, Model};

/// The DC motor driver's name.
pub(crate) const DC_DRIVER: &str = "rcx-motor";
/// The servo controller driver's name.
pub(crate) const SERVO_DRIVER: &str = "ms-8ch-servo";

const DC_COMMANDS: [&str; 4] = ["run-forever", "run-timed", "run-direct", "stop"];
const DC_STOP_ACTIONS: [&str; 2] = ["coast", "brake"];
const RAMP_PERIOD: Duration = Duration::from_millis(100);

/// One simulated DC motor. See the [module docs](self).
#[derive(Debug)]
pub(crate) struct DcMotor {
    address: String,
    duty_cycle_sp: i32,
    inversed: bool,
    ramp_up_sp: u32,
    ramp_down_sp: u32,
    time_sp: i32,
    stop_action: usize,
    /// The active command (index into [`DC_COMMANDS`]).
    command: usize,
    /// Where the duty cycle is going (polarity applied).
    target: i32,
    /// The H-bridge's duty cycle now.
    duty: f64,
    timer: Option<Duration>,
    since_step: Duration,
    shown_state: String,
}

impl DcMotor {
    /// A DC motor on `address`, stopped, every parameter zero.
    pub(crate) fn new(address: &str) -> DcMotor {
        DcMotor {
            address: address.to_owned(),
            duty_cycle_sp: 0,
            inversed: false,
            ramp_up_sp: 0,
            ramp_down_sp: 0,
            time_sp: 0,
            stop_action: 0,
            command: 3,
            target: 0,
            duty: 0.0,
            timer: None,
            since_step: Duration::ZERO,
            shown_state: String::new(),
        }
    }

    /// The duty cycle driven now (-100..100).
    pub(crate) fn duty_cycle(&self) -> i32 {
        self.duty.round() as i32
    }

    fn applied_sp(&self) -> i32 {
        if self.inversed {
            -self.duty_cycle_sp
        } else {
            self.duty_cycle_sp
        }
    }

    fn state(&self) -> String {
        let mut flags = Vec::new();
        if self.duty_cycle() != 0 {
            flags.push("running");
        }
        if f64::from(self.target) != self.duty {
            flags.push("ramping");
        }
        flags.join(" ")
    }

    fn notify_state(&mut self, fx: &mut Effects) {
        let state = self.state();
        if state != self.shown_state {
            self.shown_state = state;
            fx.notify("state");
        }
    }

    /// Moves the duty cycle one ramp step (or all the way) toward target.
    fn ramp_step(&mut self) {
        let target = f64::from(self.target);
        let up = target.abs() > self.duty.abs();
        let ramp_ms = if up {
            self.ramp_up_sp
        } else {
            self.ramp_down_sp
        };
        if ramp_ms == 0 {
            self.duty = target;
            return;
        }
        let step = 100.0 * RAMP_PERIOD.as_secs_f64() * 1000.0 / f64::from(ramp_ms);
        let dv = target - self.duty;
        self.duty = if dv.abs() <= step {
            target
        } else {
            self.duty + step * dv.signum()
        };
    }

    fn command(&mut self, command: usize) {
        self.command = command;
        self.timer = None;
        self.since_step = Duration::ZERO;
        self.target = if DC_COMMANDS[command] == "stop" {
            0
        } else {
            self.applied_sp()
        };
        if DC_COMMANDS[command] == "run-timed" {
            self.timer = Some(Duration::from_millis(self.time_sp.max(0) as u64));
        }
        self.ramp_step();
    }
}

impl Model for DcMotor {
    fn class(&self) -> &'static str {
        "dc-motor"
    }

    fn attributes(&self) -> Vec<AttrInfo> {
        let mut attrs: Vec<AttrInfo> = ro(&[
            "address",
            "commands",
            "driver_name",
            "duty_cycle",
            "state",
            "stop_actions",
            "uevent",
        ])
        .chain(rw(&[
            "duty_cycle_sp",
            "polarity",
            "ramp_down_sp",
            "ramp_up_sp",
            "time_sp",
        ]))
        .chain(power_attrs())
        .collect();
        attrs.push(AttrInfo::text("command", Mode::WriteOnly));
        attrs.push(AttrInfo::text("stop_action", Mode::WriteOnly));
        attrs
    }

    fn show(&self, attr: &str, out: &mut Vec<u8>) -> KResult<()> {
        match attr {
            "address" => show_str(out, &self.address),
            "commands" => show_str(out, &DC_COMMANDS.join(" ")),
            "driver_name" => show_str(out, DC_DRIVER),
            // The H-bridge's direction, then polarity.
            "duty_cycle" => show_int(
                out,
                if self.inversed {
                    -self.duty_cycle()
                } else {
                    self.duty_cycle()
                },
            ),
            "state" => show_str(out, &self.state()),
            "stop_actions" => show_str(out, &DC_STOP_ACTIONS.join(" ")),
            "uevent" => show_lego_uevent(out, DC_DRIVER, &self.address),
            "duty_cycle_sp" => show_int(out, self.duty_cycle_sp),
            "polarity" => show_str(out, if self.inversed { "inversed" } else { "normal" }),
            "ramp_down_sp" => show_int(out, self.ramp_down_sp),
            "ramp_up_sp" => show_int(out, self.ramp_up_sp),
            "time_sp" => show_int(out, self.time_sp),
            _ => return show_power(attr, out).unwrap_or(Err(libc::EACCES)),
        }
        Ok(())
    }

    fn store(&mut self, attr: &str, value: &[u8], fx: &mut Effects) -> KResult<usize> {
        match attr {
            "command" => {
                let i = match_string(value, &DC_COMMANDS).ok_or(libc::EINVAL)?;
                self.command(i);
            }
            "stop_action" => {
                self.stop_action = match_string(value, &DC_STOP_ACTIONS).ok_or(libc::EINVAL)?;
            }
            "polarity" => {
                self.inversed =
                    match_string(value, &["normal", "inversed"]).ok_or(libc::EINVAL)? == 1;
            }
            "duty_cycle_sp" => {
                let v = kstrtoint(value)?;
                if !(-100..=100).contains(&v) {
                    return Err(libc::EINVAL);
                }
                self.duty_cycle_sp = v;
                if DC_COMMANDS[self.command] == "run-direct" {
                    self.target = self.applied_sp();
                }
            }
            "ramp_up_sp" | "ramp_down_sp" => {
                let v = sscanf_u32(value)?;
                if v > 10_000 {
                    return Err(libc::EINVAL);
                }
                if attr == "ramp_up_sp" {
                    self.ramp_up_sp = v;
                } else {
                    self.ramp_down_sp = v;
                }
            }
            "time_sp" => {
                let v = kstrtoint(value)?;
                if !(0..=60_000).contains(&v) {
                    return Err(libc::EINVAL);
                }
                self.time_sp = v;
            }
            a if a.starts_with("power/") => {
                return store_power(attr, value).unwrap_or(Err(libc::EACCES))
            }
            _ => return Err(libc::EACCES),
        }
        self.notify_state(fx);
        Ok(value.len())
    }

    fn tick(&mut self, dt: Duration, fx: &mut Effects) {
        if let Some(left) = self.timer {
            if left <= dt {
                self.timer = None;
                self.command = 3;
                self.target = 0;
            } else {
                self.timer = Some(left - dt);
            }
        }
        self.since_step += dt;
        while self.since_step >= RAMP_PERIOD {
            self.since_step -= RAMP_PERIOD;
            self.ramp_step();
        }
        self.notify_state(fx);
    }
}

/// One channel of a simulated mindsensors 8-channel servo controller.
#[derive(Debug)]
pub(crate) struct ServoMotor {
    address: String,
    max_pulse: i32,
    mid_pulse: i32,
    min_pulse: i32,
    inversed: bool,
    position_sp: i32,
    rate_sp: u32,
    /// The pulse being sent (µs); 0 while floating.
    pulse: i32,
}

impl ServoMotor {
    /// A servo on `address` (`ev3-ports:in1:i2c88:sv1`), floating.
    pub(crate) fn new(address: &str) -> ServoMotor {
        ServoMotor {
            address: address.to_owned(),
            max_pulse: 2500,
            mid_pulse: 1500,
            min_pulse: 500,
            inversed: false,
            position_sp: 0,
            rate_sp: 0,
            pulse: 0,
        }
    }

    fn pulse_for(&self, position: i32) -> i32 {
        let position = if self.inversed { -position } else { position };
        if position >= 0 {
            self.mid_pulse + position * (self.max_pulse - self.mid_pulse) / 100
        } else {
            self.mid_pulse + position * (self.mid_pulse - self.min_pulse) / 100
        }
    }

    /// `position_sp` as read: the pulse sent, scaled back.
    fn shown_position(&self) -> i32 {
        let offset = self.pulse - self.mid_pulse;
        let position = if offset >= 0 {
            offset * 100 / (self.max_pulse - self.mid_pulse).max(1)
        } else {
            offset * 100 / (self.mid_pulse - self.min_pulse).max(1)
        };
        if self.inversed {
            -position
        } else {
            position
        }
    }
}

impl Model for ServoMotor {
    fn class(&self) -> &'static str {
        "servo-motor"
    }

    fn attributes(&self) -> Vec<AttrInfo> {
        let mut attrs: Vec<AttrInfo> = ro(&["address", "driver_name", "state", "uevent"])
            .chain(rw(&[
                "max_pulse_sp",
                "mid_pulse_sp",
                "min_pulse_sp",
                "polarity",
                "position_sp",
                "rate_sp",
            ]))
            .chain(power_attrs())
            .collect();
        attrs.push(AttrInfo::text("command", Mode::WriteOnly));
        attrs
    }

    fn show(&self, attr: &str, out: &mut Vec<u8>) -> KResult<()> {
        match attr {
            "address" => show_str(out, &self.address),
            "driver_name" => show_str(out, SERVO_DRIVER),
            "state" => show_str(out, if self.pulse != 0 { "running" } else { "" }),
            "uevent" => show_lego_uevent(out, SERVO_DRIVER, &self.address),
            "max_pulse_sp" => show_int(out, self.max_pulse),
            "mid_pulse_sp" => show_int(out, self.mid_pulse),
            "min_pulse_sp" => show_int(out, self.min_pulse),
            "polarity" => show_str(out, if self.inversed { "inversed" } else { "normal" }),
            "position_sp" => show_int(out, self.shown_position()),
            "rate_sp" => show_int(out, self.rate_sp),
            _ => return show_power(attr, out).unwrap_or(Err(libc::EACCES)),
        }
        Ok(())
    }

    fn store(&mut self, attr: &str, value: &[u8], _fx: &mut Effects) -> KResult<usize> {
        let ranged = |lo: i32, hi: i32| {
            let v = sscanf_i32(value)?;
            if (lo..=hi).contains(&v) {
                Ok(v)
            } else {
                Err(libc::EINVAL)
            }
        };
        match attr {
            "command" => match match_string(value, &["run", "float"]) {
                Some(0) => self.pulse = self.pulse_for(self.position_sp),
                Some(_) => self.pulse = 0,
                None => return Err(libc::EINVAL),
            },
            "max_pulse_sp" => self.max_pulse = ranged(2000, 3000)?,
            "mid_pulse_sp" => self.mid_pulse = ranged(1000, 2000)?,
            "min_pulse_sp" => self.min_pulse = ranged(0, 1000)?,
            "polarity" => {
                self.inversed =
                    match_string(value, &["normal", "inversed"]).ok_or(libc::EINVAL)? == 1;
            }
            "position_sp" => {
                self.position_sp = ranged(-100, 100)?;
                if self.pulse != 0 {
                    self.pulse = self.pulse_for(self.position_sp);
                }
            }
            "rate_sp" => self.rate_sp = sscanf_u32(value)?,
            a if a.starts_with("power/") => {
                return store_power(attr, value).unwrap_or(Err(libc::EACCES))
            }
            _ => return Err(libc::EACCES),
        }
        Ok(value.len())
    }
}

#[cfg(test)]
#[path = "motors_tests.rs"]
mod tests;
