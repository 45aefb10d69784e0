//! The tacho-motor's attribute files: what `tacho_motor_class.c` shows
//! and stores, on top of the motor in [`super`].

use std::time::Duration;

use super::super::kernel::{
    kstrtoint, match_string, power_attrs, ro, rw, show_int, show_lego_uevent, show_power, show_str,
    store_power,
};
use super::{Command, Run, TachoMotor, COMMANDS, PID_NAMES, STEP, STOP_ACTIONS};
use crate::kobject::{AttrInfo, Effects, KResult, Mode, Model};

impl TachoMotor {
    fn store_int(&mut self, attr: &str, v: i32) -> KResult<()> {
        let s = self.sign();
        let in_range = |lo: i32, hi: i32| {
            if (lo..=hi).contains(&v) {
                Ok(v)
            } else {
                Err(libc::EINVAL)
            }
        };
        let max = self.driver.max_speed();
        match attr {
            "speed_sp" => self.params.speed_sp = in_range(-max, max)? * s,
            "position_sp" => self.params.position_sp = v.wrapping_mul(s),
            "time_sp" => self.params.time_sp = in_range(0, i32::MAX)?,
            "ramp_up_sp" => self.params.ramp_up_sp = in_range(0, 60_000)?,
            "ramp_down_sp" => self.params.ramp_down_sp = in_range(0, 60_000)?,
            "duty_cycle_sp" => {
                self.params.duty_cycle_sp = in_range(-100, 100)? * s;
                if self.run == Run::Direct {
                    self.active.duty_cycle_sp = self.params.duty_cycle_sp;
                }
            }
            "position" => {
                self.set_counter(f64::from(v.wrapping_mul(s)));
                if self.holding.is_some() {
                    self.holding = Some(self.position);
                }
            }
            _ => {
                let i = PID_NAMES
                    .iter()
                    .position(|n| *n == attr)
                    .ok_or(libc::EACCES)?;
                self.pids[i] = in_range(0, i32::MAX)?;
            }
        }
        Ok(())
    }
}

impl Model for TachoMotor {
    fn class(&self) -> &'static str {
        "tacho-motor"
    }

    fn attributes(&self) -> Vec<AttrInfo> {
        let mut attrs: Vec<AttrInfo> = ro(&[
            "address",
            "commands",
            "count_per_rot",
            "driver_name",
            "duty_cycle",
            "max_speed",
            "speed",
            "state",
            "stop_actions",
            "uevent",
        ])
        .chain(rw(&[
            "duty_cycle_sp",
            "polarity",
            "position",
            "position_sp",
            "ramp_down_sp",
            "ramp_up_sp",
            "speed_sp",
            "stop_action",
            "time_sp",
        ]))
        .chain(rw(&PID_NAMES))
        .chain(power_attrs())
        .collect();
        attrs.push(AttrInfo::text("command", Mode::WriteOnly));
        attrs
    }

    fn show(&self, attr: &str, out: &mut Vec<u8>) -> KResult<()> {
        let s = self.sign();
        let p = &self.params;
        match attr {
            "address" => show_str(out, &self.address),
            "commands" => show_str(out, &COMMANDS.join(" ")),
            "count_per_rot" => show_int(out, 360),
            "driver_name" => show_str(out, self.driver.driver_name()),
            "duty_cycle" => show_int(out, self.duty_cycle()),
            "max_speed" => show_int(out, self.driver.max_speed()),
            "speed" => show_int(out, self.speed()),
            "state" => show_str(out, &self.state()),
            "stop_actions" => show_str(out, &STOP_ACTIONS.join(" ")),
            "uevent" => show_lego_uevent(out, self.driver.driver_name(), &self.address),
            "duty_cycle_sp" => show_int(out, p.duty_cycle_sp * s),
            "polarity" => show_str(out, if self.inversed { "inversed" } else { "normal" }),
            "position" => show_int(out, self.position()),
            "position_sp" => show_int(out, p.position_sp.wrapping_mul(s)),
            "ramp_down_sp" => show_int(out, p.ramp_down_sp),
            "ramp_up_sp" => show_int(out, p.ramp_up_sp),
            "speed_sp" => show_int(out, p.speed_sp * s),
            "stop_action" => show_str(out, STOP_ACTIONS[p.stop_action]),
            "time_sp" => show_int(out, p.time_sp),
            _ => {
                if let Some(i) = PID_NAMES.iter().position(|n| *n == attr) {
                    show_int(out, self.pids[i]);
                } else {
                    return show_power(attr, out).unwrap_or(Err(libc::EACCES));
                }
            }
        }
        Ok(())
    }

    fn store(&mut self, attr: &str, value: &[u8], fx: &mut Effects) -> KResult<usize> {
        match attr {
            "command" => {
                let i = match_string(value, &COMMANDS).ok_or(libc::EINVAL)?;
                self.command(Command::from_index(i));
            }
            "stop_action" => {
                self.params.stop_action = match_string(value, &STOP_ACTIONS).ok_or(libc::EINVAL)?;
            }
            "polarity" => {
                self.inversed =
                    match_string(value, &["normal", "inversed"]).ok_or(libc::EINVAL)? == 1;
            }
            a if a.starts_with("power/") => {
                return store_power(attr, value).unwrap_or(Err(libc::EACCES))
            }
            _ => {
                const INTS: [&str; 7] = [
                    "speed_sp",
                    "position_sp",
                    "time_sp",
                    "ramp_up_sp",
                    "ramp_down_sp",
                    "duty_cycle_sp",
                    "position",
                ];
                if !INTS.contains(&attr) && !PID_NAMES.contains(&attr) {
                    return Err(libc::EACCES);
                }
                let v = kstrtoint(value)?;
                self.store_int(attr, v)?;
            }
        }
        self.notify_state(fx);
        Ok(value.len())
    }

    fn inject(&mut self, attr: &str, value: &str, fx: &mut Effects) -> KResult<()> {
        match attr {
            "position" => {
                let v = kstrtoint(value.as_bytes())?;
                self.store_int("position", v)?;
            }
            "blocked" => self.blocked = value == "1",
            _ => return Err(libc::ENOENT),
        }
        self.notify_state(fx);
        Ok(())
    }

    fn tick(&mut self, dt: Duration, fx: &mut Effects) {
        let steps = dt.as_micros().div_ceil(STEP.as_micros());
        for _ in 0..steps {
            self.step();
        }
        self.notify_state(fx);
    }
}
