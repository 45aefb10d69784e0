//! The LED class model (`/sys/class/leds/<name>`), as the Linux 4.14 LED
//! core and its `timer` trigger behave:
//!
//! * `brightness` takes `kstrtoul` values, clamped to `max_brightness`;
//!   writing 0 also removes the trigger. While blinking, a non-zero write
//!   sets the blink brightness.
//! * `trigger` lists the triggers with the active one in `[brackets]`; an
//!   unknown name is `EINVAL`. Changing trigger turns the LED off first;
//!   `default-on` turns it full on; `timer` blinks, 500 ms on and 500 ms
//!   off, and adds `delay_on`/`delay_off` (the file set changes).
//! * Other triggers (mmc0, heartbeat, cpu0...) see no activity: off.

use std::time::Duration;

use super::kernel::{kstrtoul, power_attrs, ro, rw, show_int, show_power, store_power};
use crate::kobject::{AttrInfo, Effects, KResult, Model};

/// The triggers of an ev3dev-stretch kernel, in its order.
const TRIGGERS: [&str; 22] = [
    "none",
    "kbd-scrolllock",
    "kbd-numlock",
    "kbd-capslock",
    "kbd-kanalock",
    "kbd-shiftlock",
    "kbd-altgrlock",
    "kbd-ctrllock",
    "kbd-altlock",
    "kbd-shiftllock",
    "kbd-shiftrlock",
    "kbd-ctrlllock",
    "kbd-ctrlrlock",
    "mmc0",
    "timer",
    "oneshot",
    "heartbeat",
    "backlight",
    "gpio",
    "cpu0",
    "default-on",
    "transient",
];
const NONE: usize = 0;
const MMC0: usize = 13;
const TIMER: usize = 14;
const DEFAULT_ON: usize = 20;
const DEFAULT_DELAY_MS: u32 = 500;

/// The software blink of the `timer` trigger.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Blink {
    on_ms: u32,
    off_ms: u32,
    level: u32,
    lit: bool,
    /// Time spent in the current phase.
    phase: Duration,
}

/// One simulated LED. See the [module docs](self).
#[derive(Debug)]
pub(crate) struct Led {
    max_brightness: u32,
    brightness: u32,
    trigger: usize,
    blink: Option<Blink>,
}

impl Led {
    /// An LED called `name`: the brick's LEDs (`led0:green:brick-status`)
    /// start on `mmc0`, an output port's LED (`ev3-ports:outA::...`) on
    /// `none`.
    pub(crate) fn new(name: &str, max_brightness: u32) -> Led {
        Led {
            max_brightness,
            brightness: 0,
            trigger: if name.starts_with("ev3-ports:") {
                NONE
            } else {
                MMC0
            },
            blink: None,
        }
    }

    /// The brightness the LED has now (0 in a blink's off phase).
    pub(crate) fn level(&self) -> u32 {
        match self.blink {
            Some(b) if b.lit => b.level,
            Some(_) => 0,
            None => self.brightness,
        }
    }

    /// The active trigger's name.
    #[cfg(test)]
    pub(crate) fn trigger(&self) -> &'static str {
        TRIGGERS[self.trigger]
    }

    fn set_trigger(&mut self, trigger: usize, fx: &mut Effects) {
        if self.trigger == TIMER || trigger == TIMER {
            fx.attributes_changed = true;
        }
        // The old trigger goes: blink stopped, LED off.
        self.blink = None;
        self.brightness = 0;
        self.trigger = trigger;
        match trigger {
            TIMER => self.start_blink(DEFAULT_DELAY_MS, DEFAULT_DELAY_MS, self.max_brightness),
            DEFAULT_ON => self.brightness = self.max_brightness,
            _ => {}
        }
    }

    fn start_blink(&mut self, on_ms: u32, off_ms: u32, level: u32) {
        let (on_ms, off_ms) = if on_ms == 0 && off_ms == 0 {
            (DEFAULT_DELAY_MS, DEFAULT_DELAY_MS)
        } else {
            (on_ms, off_ms)
        };
        self.blink = Some(Blink {
            on_ms,
            off_ms,
            level,
            lit: on_ms != 0,
            phase: Duration::ZERO,
        });
    }
}

impl Model for Led {
    fn class(&self) -> &'static str {
        "leds"
    }

    fn attributes(&self) -> Vec<AttrInfo> {
        let mut attrs: Vec<AttrInfo> = rw(&["brightness", "trigger"])
            .chain(ro(&["max_brightness", "uevent"]))
            .chain(power_attrs())
            .collect();
        if self.trigger == TIMER {
            attrs.extend(rw(&["delay_on", "delay_off"]));
        }
        attrs
    }

    fn show(&self, attr: &str, out: &mut Vec<u8>) -> KResult<()> {
        match attr {
            "brightness" => show_int(out, self.level()),
            "max_brightness" => show_int(out, self.max_brightness),
            "trigger" => {
                let list: Vec<String> = TRIGGERS
                    .iter()
                    .enumerate()
                    .map(|(i, t)| {
                        if i == self.trigger {
                            format!("[{t}]")
                        } else {
                            (*t).to_owned()
                        }
                    })
                    .collect();
                out.extend_from_slice(list.join(" ").as_bytes());
                out.push(b'\n');
            }
            "uevent" => {}
            "delay_on" | "delay_off" if self.trigger == TIMER => {
                let b = self.blink.ok_or(libc::ENOENT)?;
                show_int(
                    out,
                    if attr == "delay_on" {
                        b.on_ms
                    } else {
                        b.off_ms
                    },
                );
            }
            _ => return show_power(attr, out).unwrap_or(Err(libc::ENOENT)),
        }
        Ok(())
    }

    fn store(&mut self, attr: &str, value: &[u8], fx: &mut Effects) -> KResult<usize> {
        match attr {
            "brightness" => {
                let v = kstrtoul(value)?.min(self.max_brightness);
                if v == 0 {
                    // led_trigger_remove, then off.
                    self.set_trigger(NONE, fx);
                } else if let Some(b) = self.blink.as_mut() {
                    b.level = v;
                } else {
                    self.brightness = v;
                }
            }
            "trigger" => {
                let i = super::kernel::match_string(value, &TRIGGERS).ok_or(libc::EINVAL)?;
                self.set_trigger(i, fx);
            }
            "delay_on" | "delay_off" if self.trigger == TIMER => {
                let ms = kstrtoul(value)?;
                let b = self.blink.ok_or(libc::ENOENT)?;
                let (on, off) = if attr == "delay_on" {
                    (ms, b.off_ms)
                } else {
                    (b.on_ms, ms)
                };
                self.start_blink(on, off, b.level);
            }
            a if a.starts_with("power/") => {
                return store_power(attr, value).unwrap_or(Err(libc::EACCES))
            }
            _ => return Err(libc::EACCES),
        }
        Ok(value.len())
    }

    fn inject(&mut self, attr: &str, value: &str, _fx: &mut Effects) -> KResult<()> {
        match attr {
            "brightness" => {
                self.brightness = kstrtoul(value.as_bytes())?.min(self.max_brightness);
                Ok(())
            }
            _ => Err(libc::ENOENT),
        }
    }

    fn tick(&mut self, dt: Duration, _fx: &mut Effects) {
        let Some(b) = self.blink.as_mut() else {
            return;
        };
        if b.on_ms == 0 || b.off_ms == 0 {
            b.lit = b.on_ms != 0;
            return;
        }
        b.phase += dt;
        loop {
            let length = Duration::from_millis(u64::from(if b.lit { b.on_ms } else { b.off_ms }));
            if b.phase < length {
                break;
            }
            b.phase -= length;
            b.lit = !b.lit;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(led: &Led, attr: &str) -> String {
        let mut out = Vec::new();
        led.show(attr, &mut out).expect(attr);
        String::from_utf8(out).expect("utf-8")
    }

    #[test]
    fn brightness_is_clamped_and_junk_is_einval() {
        let mut led = Led::new("led0:green:brick-status", 255);
        let mut fx = Effects::default();
        assert_eq!(led.store("brightness", b"300\n", &mut fx), Ok(4));
        assert_eq!(show(&led, "brightness"), "255\n");
        assert_eq!(led.store("brightness", b"7", &mut fx), Ok(1));
        assert_eq!(show(&led, "brightness"), "7\n");
        for bad in [&b"-1"[..], b"x", b"1.0", b" 5"] {
            assert_eq!(led.store("brightness", bad, &mut fx), Err(libc::EINVAL));
        }
        assert_eq!(show(&led, "brightness"), "7\n");
        assert_eq!(show(&led, "max_brightness"), "255\n");
        let port_led = Led::new("ev3-ports:outA::brick-status", 100);
        assert!(show(&port_led, "trigger").starts_with("[none] kbd-scrolllock"));
    }

    #[test]
    fn trigger_list_brackets_the_active_one() {
        let mut led = Led::new("led0:red:brick-status", 255);
        assert!(show(&led, "trigger").contains(" [mmc0] timer "));
        let mut fx = Effects::default();
        assert_eq!(led.store("trigger", b"blink", &mut fx), Err(libc::EINVAL));
        assert_eq!(led.store("trigger", b"[none]", &mut fx), Err(libc::EINVAL));
        assert_eq!(led.store("trigger", b"default-on\n", &mut fx), Ok(11));
        assert_eq!(show(&led, "brightness"), "255\n");
        assert!(show(&led, "trigger").contains(" [default-on] "));
        assert_eq!(show(&led, "trigger").matches('[').count(), 1);
        assert!(!fx.attributes_changed);
        // Brightness 0 removes the trigger.
        led.store("brightness", b"0", &mut fx).unwrap();
        assert!(show(&led, "trigger").starts_with("[none] "));
    }

    #[test]
    fn timer_adds_delays_and_blinks() {
        let mut led = Led::new("led1:green:brick-status", 255);
        let mut fx = Effects::default();
        assert!(!led.attributes().iter().any(|a| a.name == "delay_on"));
        led.store("trigger", b"timer", &mut fx).unwrap();
        assert!(fx.attributes_changed);
        let names: Vec<String> = led.attributes().into_iter().map(|a| a.name).collect();
        assert!(names.contains(&"delay_on".to_owned()) && names.contains(&"delay_off".to_owned()));
        assert_eq!(show(&led, "delay_on"), "500\n");
        assert_eq!(show(&led, "delay_off"), "500\n");
        assert_eq!(show(&led, "brightness"), "255\n");
        led.store("delay_on", b"100", &mut fx).unwrap();
        led.store("delay_off", b"300\n", &mut fx).unwrap();
        assert_eq!(led.store("delay_off", b"-3", &mut fx), Err(libc::EINVAL));
        let mut seen = Vec::new();
        for _ in 0..8 {
            seen.push(led.level());
            led.tick(Duration::from_millis(100), &mut fx);
        }
        assert_eq!(seen, [255, 0, 0, 0, 255, 0, 0, 0]);
        led.store("brightness", b"9", &mut fx).unwrap();
        assert_eq!(led.trigger(), "timer");
        assert_eq!(show(&led, "brightness"), "9\n");
        // Leaving the timer trigger removes the delays.
        let mut fx = Effects::default();
        led.store("brightness", b"0", &mut fx).unwrap();
        assert!(fx.attributes_changed);
        assert_eq!(led.trigger(), "none");
        assert!(!led.attributes().iter().any(|a| a.name == "delay_on"));
        assert_eq!(led.show("delay_on", &mut Vec::new()), Err(libc::ENOENT));
        assert_eq!(show(&led, "uevent"), "");
    }
}
