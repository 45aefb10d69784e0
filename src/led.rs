//! LEDs (`/sys/class/leds`): the four brick LEDs and output ports in `led`
//! mode.

use std::path::Path;
use std::sync::Mutex;

use crate::attr::Attribute;
use crate::device::SysfsDevice;
use crate::error::{Error, Result};
use crate::motor::check_range;

/// One LED, e.g. `led0:green:brick-status`.
#[derive(Debug)]
pub struct Led {
    device: SysfsDevice,
    max_brightness: i32,
    /// `delay_on`, `delay_off`: created by the kernel when the `timer`
    /// trigger is activated, removed when it is deactivated.
    timer: Mutex<Option<(Attribute, Attribute)>>,
}

impl Led {
    /// Opens LED `name` under `root`.
    ///
    /// # Errors
    /// [`Error::InvalidName`], [`Error::Disconnected`] when there is no such
    /// LED, read errors; [`Error::Parse`] for a negative `max_brightness`
    /// (the kernel prints it unsigned).
    pub fn open(root: impl AsRef<Path>, name: &str) -> Result<Led> {
        let device = SysfsDevice::open(root, "leds", name)?;
        device.preopen(&["brightness", "trigger"])?;
        let max_brightness: i32 = device.read_int("max_brightness")?;
        if max_brightness < 0 {
            let mut buf = [0u8; crate::value::INT_BUF_LEN];
            let raw = crate::value::format_int(i64::from(max_brightness), &mut buf);
            return Err(Error::parse(
                &device.dir().join("max_brightness"),
                raw,
                "a max_brightness of 0 or more",
            ));
        }
        Ok(Led {
            max_brightness,
            device,
            timer: Mutex::new(None),
        })
    }

    /// The device.
    pub fn device(&self) -> &SysfsDevice {
        &self.device
    }
    /// `max_brightness` (255 for the brick LEDs).
    pub fn max_brightness(&self) -> i32 {
        self.max_brightness
    }
    /// Reads `brightness`.
    ///
    /// # Errors
    /// Read errors.
    pub fn brightness(&self) -> Result<i32> {
        self.device.read_int("brightness")
    }
    /// Sets `brightness`, 0..=`max_brightness` (0 also removes the trigger).
    ///
    /// # Errors
    /// [`Error::OutOfRange`] without writing; write errors.
    pub fn set_brightness(&self, value: i32) -> Result<()> {
        check_range(
            "brightness",
            i64::from(value),
            0,
            i64::from(self.max_brightness),
        )?;
        self.device.write_int("brightness", i64::from(value))
    }
    /// Sets the brightness in percent of `max_brightness`.
    ///
    /// # Errors
    /// As [`Led::set_brightness`].
    pub fn set_percent(&self, percent: u8) -> Result<()> {
        check_range("brightness percent", i64::from(percent), 0, 100)?;
        let value = i64::from(self.max_brightness) * i64::from(percent) / 100;
        self.device.write_int("brightness", value)
    }
    /// The active trigger (the `[bracketed]` entry of `trigger`).
    ///
    /// # Errors
    /// Read errors.
    pub fn trigger(&self) -> Result<String> {
        self.device
            .attribute("trigger")?
            .read_selected(|s| Ok(s.to_owned()))
    }
    /// The triggers offered.
    ///
    /// # Errors
    /// Read errors.
    pub fn triggers(&self) -> Result<Vec<String>> {
        self.device.read_text("trigger", |t| {
            Ok(crate::value::words(t).map(str::to_owned).collect())
        })
    }
    /// Activates trigger `name` (`none`, `timer`, `heartbeat`, ...).
    ///
    /// # Errors
    /// [`Error::NotOffered`] without writing; write errors.
    pub fn set_trigger(&self, name: &str) -> Result<()> {
        let trigger = self.device.attribute("trigger")?;
        if !trigger.list_contains(name)? {
            return Err(Error::NotOffered {
                attribute: "trigger",
                value: name.to_owned(),
                offered: trigger.read_string()?,
            });
        }
        // The timer files go away with the old trigger.
        *self.lock_timer() = None;
        trigger.write_str(name)
    }

    fn lock_timer(&self) -> std::sync::MutexGuard<'_, Option<(Attribute, Attribute)>> {
        self.timer.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Blinks: activates the `timer` trigger (if not active) and sets
    /// `delay_on` and `delay_off` in ms. The kernel recreates those files
    /// whenever the trigger changes, so a handle that went stale (`ENODEV`)
    /// is reopened and the write retried once.
    ///
    /// # Errors
    /// [`Error::NotOffered`] when there is no timer trigger; write errors.
    pub fn set_timer(&self, on_ms: u32, off_ms: u32) -> Result<()> {
        if self.trigger()? != "timer" {
            self.set_trigger("timer")?;
        }
        let mut timer = self.lock_timer();
        for attempt in 0..2 {
            if timer.is_none() {
                let open = |n: &str| self.device.open_inferred(n);
                *timer = Some((open("delay_on")?, open("delay_off")?));
            }
            let Some((on, off)) = timer.as_ref() else {
                continue;
            };
            match on
                .write_int(i64::from(on_ms))
                .and_then(|()| off.write_int(i64::from(off_ms)))
            {
                Err(e) if e.is_disconnected() && attempt == 0 => *timer = None,
                other => return other,
            }
        }
        Ok(())
    }
}

/// The two colors of a brick LED pair, in percent of full brightness.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LedColor {
    /// Red, 0..=100.
    pub red: u8,
    /// Green, 0..=100.
    pub green: u8,
}

impl LedColor {
    /// Off.
    pub const OFF: LedColor = LedColor { red: 0, green: 0 };
    /// Green.
    pub const GREEN: LedColor = LedColor { red: 0, green: 100 };
    /// Red.
    pub const RED: LedColor = LedColor { red: 100, green: 0 };
    /// Amber (both full).
    pub const AMBER: LedColor = LedColor {
        red: 100,
        green: 100,
    };
    /// Orange.
    pub const ORANGE: LedColor = LedColor {
        red: 100,
        green: 50,
    };
    /// Yellow.
    pub const YELLOW: LedColor = LedColor {
        red: 10,
        green: 100,
    };
}

/// The brick's two red/green LED pairs.
#[derive(Debug)]
pub struct BrickLeds {
    /// Left red.
    pub left_red: Led,
    /// Left green.
    pub left_green: Led,
    /// Right red.
    pub right_red: Led,
    /// Right green.
    pub right_green: Led,
}

/// Which LED pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The left pair (`led0`).
    Left,
    /// The right pair (`led1`).
    Right,
}

impl BrickLeds {
    /// Opens the four brick LEDs: ev3dev-stretch names (`led0:red:brick-status`)
    /// or, failing that, ev3dev-jessie names (`ev3:left:red:ev3dev`).
    ///
    /// # Errors
    /// The stretch names' error when neither set exists.
    pub fn open(root: impl AsRef<Path>) -> Result<BrickLeds> {
        let root = root.as_ref();
        let open4 = |names: [&str; 4]| -> Result<BrickLeds> {
            Ok(BrickLeds {
                left_red: Led::open(root, names[0])?,
                left_green: Led::open(root, names[1])?,
                right_red: Led::open(root, names[2])?,
                right_green: Led::open(root, names[3])?,
            })
        };
        open4([
            "led0:red:brick-status",
            "led0:green:brick-status",
            "led1:red:brick-status",
            "led1:green:brick-status",
        ])
        .or_else(|stretch| {
            open4([
                "ev3:left:red:ev3dev",
                "ev3:left:green:ev3dev",
                "ev3:right:red:ev3dev",
                "ev3:right:green:ev3dev",
            ])
            .map_err(|_| stretch)
        })
    }

    /// Sets one side's color.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] for a percentage over 100; write errors.
    pub fn set_color(&self, side: Side, color: LedColor) -> Result<()> {
        let (red, green) = match side {
            Side::Left => (&self.left_red, &self.left_green),
            Side::Right => (&self.right_red, &self.right_green),
        };
        red.set_percent(color.red)?;
        green.set_percent(color.green)
    }

    /// Sets both sides.
    ///
    /// # Errors
    /// As [`BrickLeds::set_color`].
    pub fn set_all(&self, color: LedColor) -> Result<()> {
        self.set_color(Side::Left, color)?;
        self.set_color(Side::Right, color)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A private LED tree in an unpredictable temp directory.
    fn led_tree(max_brightness: &str) -> std::path::PathBuf {
        let base = std::env::temp_dir().join("ev3sysfs-led-XXXXXX");
        let root = nix::unistd::mkdtemp(&base).unwrap();
        let dir = root.join("leds/led0:red:brick-status");
        std::fs::create_dir_all(&dir).unwrap();
        for (name, value) in [
            ("brightness", "0\n"),
            ("trigger", "[none] timer\n"),
            ("max_brightness", max_brightness),
        ] {
            std::fs::write(dir.join(name), value).unwrap();
        }
        root
    }

    #[test]
    fn negative_max_brightness_is_refused_at_open() {
        let root = led_tree("-255\n");
        let err = Led::open(&root, "led0:red:brick-status").unwrap_err();
        assert!(matches!(err, Error::Parse { .. }), "{err:?}");
        assert!(err.to_string().contains("-255"), "{err}");
        std::fs::remove_dir_all(&root).unwrap();

        let root = led_tree("255\n");
        let led = Led::open(&root, "led0:red:brick-status").unwrap();
        assert_eq!(led.max_brightness(), 255);
        std::fs::remove_dir_all(&root).unwrap();
    }
}
