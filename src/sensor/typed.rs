//! Typed sensors: each makes sure the sensor is in the mode its reading
//! needs (reads `mode` from the device, writes it when another program
//! switched it) and reads the values.

use crate::clock::Instant;
use std::path::Path;
use std::time::Duration;

use super::{Scaled, Sensor};
use crate::error::{Error, Result};

macro_rules! typed_sensor {
    ($name:ident, $doc:literal, [$($driver:literal),+]) => {
        #[doc = $doc]
        #[derive(Debug)]
        pub struct $name {
            sensor: Sensor,
        }

        impl $name {
            /// Driver names this type accepts.
            pub const DRIVERS: &'static [&'static str] = &[$($driver),+];

            /// Opens the sensor on `port` (`in1`..`in4`).
            ///
            /// # Errors
            /// [`Error::NotFound`] naming what is on the port (for instance
            /// another sensor type), [`Error::Ambiguous`], read errors.
            pub fn find(root: impl AsRef<Path>, port: &str) -> Result<$name> {
                Ok($name {
                    sensor: Sensor::find(root, port, Self::DRIVERS)?,
                })
            }

            /// The generic sensor underneath.
            pub fn sensor(&self) -> &Sensor {
                &self.sensor
            }
        }
    };
}

typed_sensor!(
    TouchSensor,
    "EV3 or NXT touch sensor.",
    ["lego-ev3-touch", "lego-nxt-touch"]
);
typed_sensor!(ColorSensor, "EV3 color sensor.", ["lego-ev3-color"]);
typed_sensor!(
    UltrasonicSensor,
    "EV3 or NXT ultrasonic sensor.",
    ["lego-ev3-us", "lego-nxt-us"]
);
typed_sensor!(GyroSensor, "EV3 gyro sensor.", ["lego-ev3-gyro"]);
typed_sensor!(InfraredSensor, "EV3 infrared sensor.", ["lego-ev3-ir"]);
typed_sensor!(NxtLightSensor, "NXT light sensor.", ["lego-nxt-light"]);

impl TouchSensor {
    /// `true` while pressed: one `pread` of `value0` (the touch sensor has
    /// one mode).
    ///
    /// # Errors
    /// Read errors.
    #[inline(always)]
    pub fn pressed(&self) -> Result<bool> {
        Ok(self.sensor.value(0)? != 0)
    }

    /// Waits up to `timeout` until the sensor is `pressed` (or released).
    /// The EV3 touch driver notifies changes (`POLLPRI`); the wait re-reads
    /// at least every 100 ms (10 ms elsewhere than sysfs) and never spins.
    ///
    /// # Errors
    /// [`Error::Timeout`]; read errors.
    pub fn wait_for(&self, pressed: bool, timeout: Duration) -> Result<()> {
        let value0 = self.sensor.value_attribute(0)?;
        let period = match value0.backing() {
            crate::Backing::Sysfs => Duration::from_millis(100),
            _ => Duration::from_millis(10),
        };
        let start = Instant::now();
        loop {
            if (value0.read_int()? != 0) == pressed {
                return Ok(());
            }
            let left = timeout.saturating_sub(start.elapsed());
            if left.is_zero() {
                return Err(Error::Timeout {
                    what: format!(
                        "touch sensor on {} to be {}",
                        self.sensor.address(),
                        if pressed { "pressed" } else { "released" }
                    ),
                    waited: start.elapsed(),
                });
            }
            value0.wait_for_change(left.min(period))?;
        }
    }
}

/// Colors the EV3 color sensor recognises (`COL-COLOR`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Color {
    /// 0: no color (nothing in front).
    None,
    /// 1.
    Black,
    /// 2.
    Blue,
    /// 3.
    Green,
    /// 4.
    Yellow,
    /// 5.
    Red,
    /// 6.
    White,
    /// 7.
    Brown,
}

impl Color {
    /// The color for the sensor's number; unknown numbers are `None`.
    pub fn from_value(v: i32) -> Color {
        match v {
            1 => Color::Black,
            2 => Color::Blue,
            3 => Color::Green,
            4 => Color::Yellow,
            5 => Color::Red,
            6 => Color::White,
            7 => Color::Brown,
            _ => Color::None,
        }
    }
}

impl ColorSensor {
    /// Reflected light, 0..=100 % (mode `COL-REFLECT`).
    ///
    /// # Errors
    /// Mode and read errors.
    #[inline(always)]
    pub fn reflected(&self) -> Result<i32> {
        self.sensor.ensure_mode("COL-REFLECT")?;
        self.sensor.value(0)
    }
    /// Ambient light, 0..=100 % (mode `COL-AMBIENT`).
    ///
    /// # Errors
    /// Mode and read errors.
    #[inline(always)]
    pub fn ambient(&self) -> Result<i32> {
        self.sensor.ensure_mode("COL-AMBIENT")?;
        self.sensor.value(0)
    }
    /// The recognised color (mode `COL-COLOR`).
    ///
    /// # Errors
    /// Mode and read errors.
    #[inline(always)]
    pub fn color(&self) -> Result<Color> {
        self.sensor.ensure_mode("COL-COLOR")?;
        Ok(Color::from_value(self.sensor.value(0)?))
    }
    /// Raw red, green, blue (mode `RGB-RAW`, 0..=1020 each).
    ///
    /// # Errors
    /// Mode and read errors.
    #[inline]
    pub fn rgb_raw(&self) -> Result<(i32, i32, i32)> {
        self.sensor.ensure_mode("RGB-RAW")?;
        Ok((
            self.sensor.value(0)?,
            self.sensor.value(1)?,
            self.sensor.value(2)?,
        ))
    }
}

impl UltrasonicSensor {
    /// Distance in millimetres (mode `US-DIST-CM`: EV3 0..=2550, NXT 0..=2550).
    ///
    /// # Errors
    /// Mode and read errors.
    #[inline(always)]
    pub fn distance_mm(&self) -> Result<i64> {
        self.sensor.ensure_mode("US-DIST-CM")?;
        // cm with `decimals` places; mm is cm with one.
        Ok(self.sensor.scaled(0)?.in_decimals(1))
    }
    /// Distance in tenths of an inch (mode `US-DIST-IN`).
    ///
    /// # Errors
    /// Mode and read errors.
    #[inline(always)]
    pub fn distance_tenth_inches(&self) -> Result<i64> {
        self.sensor.ensure_mode("US-DIST-IN")?;
        Ok(self.sensor.scaled(0)?.in_decimals(1))
    }
    /// Whether another ultrasonic sensor is heard (mode `US-LISTEN`).
    ///
    /// # Errors
    /// Mode and read errors.
    #[inline(always)]
    pub fn other_sensor_present(&self) -> Result<bool> {
        self.sensor.ensure_mode("US-LISTEN")?;
        Ok(self.sensor.value(0)? != 0)
    }
}

impl GyroSensor {
    /// Angle in degrees, clockwise positive (mode `GYRO-ANG`).
    ///
    /// # Errors
    /// Mode and read errors.
    #[inline(always)]
    pub fn angle(&self) -> Result<i32> {
        self.sensor.ensure_mode("GYRO-ANG")?;
        self.sensor.value(0)
    }
    /// Rotation rate in degrees per second (mode `GYRO-RATE`).
    ///
    /// # Errors
    /// Mode and read errors.
    #[inline(always)]
    pub fn rate(&self) -> Result<i32> {
        self.sensor.ensure_mode("GYRO-RATE")?;
        self.sensor.value(0)
    }
    /// Angle and rate together (mode `GYRO-G&A`).
    ///
    /// # Errors
    /// Mode and read errors.
    #[inline]
    pub fn angle_and_rate(&self) -> Result<(i32, i32)> {
        self.sensor.ensure_mode("GYRO-G&A")?;
        Ok((self.sensor.value(0)?, self.sensor.value(1)?))
    }
    /// Resets the angle to 0: the sensor restarts its count when its mode
    /// changes, so this switches to `GYRO-RATE` and back to `GYRO-ANG`. Keep
    /// the robot still.
    ///
    /// # Errors
    /// Mode errors.
    pub fn reset_angle(&self) -> Result<()> {
        self.sensor.set_mode("GYRO-RATE")?;
        self.sensor.set_mode("GYRO-ANG")
    }
    /// How many degrees the angle moves in `over` (sleeping meanwhile):
    /// with the robot still, its drift.
    ///
    /// # Errors
    /// Mode and read errors.
    pub fn drift(&self, over: Duration) -> Result<i32> {
        let before = self.angle()?;
        std::thread::sleep(over);
        Ok(self.angle()?.saturating_sub(before))
    }
    /// Checks, with the robot still, that the angle moves at most
    /// `tolerance` degrees in `over` (1 degree in 1 s is a good gyro).
    ///
    /// # Errors
    /// [`Error::GyroDrift`] with how far it moved; mode and read errors.
    pub fn check_still(&self, over: Duration, tolerance: i32) -> Result<()> {
        let degrees = self.drift(over)?;
        if degrees.saturating_abs() > tolerance.saturating_abs() {
            return Err(Error::GyroDrift {
                address: self.sensor.address().to_owned(),
                degrees,
                over,
            });
        }
        Ok(())
    }
    /// Recalibrates (mode `GYRO-CAL`, then `GYRO-ANG`). Keep the robot
    /// still.
    ///
    /// # Errors
    /// Mode errors.
    pub fn calibrate(&self) -> Result<()> {
        self.sensor.set_mode("GYRO-CAL")?;
        self.sensor.set_mode("GYRO-ANG")
    }
}

/// Buttons pressed on an IR remote channel (`IR-REMOTE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RemoteButtons {
    /// Red up.
    pub red_up: bool,
    /// Red down.
    pub red_down: bool,
    /// Blue up.
    pub blue_up: bool,
    /// Blue down.
    pub blue_down: bool,
    /// The beacon button.
    pub beacon: bool,
}

impl RemoteButtons {
    /// Decodes the sensor's value 0..=11.
    pub fn from_value(v: i32) -> RemoteButtons {
        let (ru, rd, bu, bd, beacon) = match v {
            1 => (true, false, false, false, false),
            2 => (false, true, false, false, false),
            3 => (false, false, true, false, false),
            4 => (false, false, false, true, false),
            5 => (true, false, true, false, false),
            6 => (true, false, false, true, false),
            7 => (false, true, true, false, false),
            8 => (false, true, false, true, false),
            9 => (false, false, false, false, true),
            10 => (true, true, false, false, false),
            11 => (false, false, true, true, false),
            _ => (false, false, false, false, false),
        };
        RemoteButtons {
            red_up: ru,
            red_down: rd,
            blue_up: bu,
            blue_down: bd,
            beacon,
        }
    }
}

fn check_channel(channel: u8) -> Result<usize> {
    crate::motor::check_range("IR channel", i64::from(channel), 1, 4)?;
    Ok(usize::from(channel - 1))
}

impl InfraredSensor {
    /// Proximity 0..=100 (about 70 cm at 100; mode `IR-PROX`).
    ///
    /// # Errors
    /// Mode and read errors.
    #[inline(always)]
    pub fn proximity(&self) -> Result<i32> {
        self.sensor.ensure_mode("IR-PROX")?;
        self.sensor.value(0)
    }
    /// Beacon on `channel` (1..=4): heading -25..=25 and distance 0..=100,
    /// or `None` when no beacon is seen (mode `IR-SEEK`).
    ///
    /// # Errors
    /// [`Error::OutOfRange`] for a bad channel; mode and read errors.
    #[inline]
    pub fn seek(&self, channel: u8) -> Result<Option<(i32, i32)>> {
        let c = check_channel(channel)?;
        self.sensor.ensure_mode("IR-SEEK")?;
        let heading = self.sensor.value(2 * c)?;
        let distance = self.sensor.value(2 * c + 1)?;
        Ok((distance != -128).then_some((heading, distance)))
    }
    /// Remote buttons pressed on `channel` (1..=4; mode `IR-REMOTE`).
    ///
    /// # Errors
    /// [`Error::OutOfRange`] for a bad channel; mode and read errors.
    #[inline]
    pub fn remote(&self, channel: u8) -> Result<RemoteButtons> {
        let c = check_channel(channel)?;
        self.sensor.ensure_mode("IR-REMOTE")?;
        Ok(RemoteButtons::from_value(self.sensor.value(c)?))
    }
}

impl NxtLightSensor {
    /// Reflected light in percent with its LED on (mode `REFLECT`).
    ///
    /// # Errors
    /// Mode and read errors.
    #[inline(always)]
    pub fn reflected(&self) -> Result<Scaled> {
        self.sensor.ensure_mode("REFLECT")?;
        self.sensor.scaled(0)
    }
    /// Ambient light in percent, LED off (mode `AMBIENT`).
    ///
    /// # Errors
    /// Mode and read errors.
    #[inline(always)]
    pub fn ambient(&self) -> Result<Scaled> {
        self.sensor.ensure_mode("AMBIENT")?;
        self.sensor.scaled(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_and_colors() {
        let b = RemoteButtons::from_value(6);
        assert!(b.red_up && b.blue_down && !b.red_down && !b.beacon);
        assert!(RemoteButtons::from_value(9).beacon);
        assert_eq!(RemoteButtons::from_value(0), RemoteButtons::default());
        assert_eq!(Color::from_value(5), Color::Red);
        assert_eq!(Color::from_value(42), Color::None);
        assert!(check_channel(0).is_err() && check_channel(5).is_err());
        assert_eq!(check_channel(4).unwrap(), 3);
    }
}
