//! embedded-hal 1.0 traits for ev3sysfs devices (feature `hal`), so that
//! driver crates and code written against embedded-hal run on the brick.
//!
//! | device | traits | meaning |
//! |---|---|---|
//! | [`TachoMotor`], [`DcMotor`] | `pwm::SetDutyCycle` | `run-direct` at duty 0..=100 % (one `pwrite` once running); direction with `set_polarity` |
//! | [`Led`] | `digital::OutputPin`, `StatefulOutputPin`, `pwm::SetDutyCycle` | on = `max_brightness`, off = 0; duty = brightness 0..=`max_brightness` |
//! | [`TouchSensor`] | `digital::InputPin` | high = pressed |
//! | [`Delay`] | `delay::DelayNs` | linux-embedded-hal's delay (sleeps, never spins) |
//! | [`LegoPort::i2c_bus`] | `i2c::I2c` (linux-embedded-hal's `I2cdev`) | an input port in `other-i2c` mode, for any embedded-hal I2C driver |
//!
//! # Errors
//! The error type of every implementation here is [`crate::Error`]. Its
//! embedded-hal [`ErrorKind`](embedded_hal::pwm::ErrorKind) is always
//! `Other`, since embedded-hal's kinds (for PWM and digital pins) have no
//! other member; the real cause, with attribute path, value and errno, is
//! the error itself, and its [`source`](std::error::Error::source) is the
//! operating-system error. A duty cycle above the maximum is
//! [`Error::OutOfRange`] and writes nothing.

use std::io;
use std::path::Path;

use embedded_hal::{digital, pwm};
pub use linux_embedded_hal::{Delay, I2cdev};

use crate::error::{Error, Operation, Result};
use crate::led::Led;
use crate::motor::{DcMotor, TachoMotor};
use crate::port::LegoPort;
use crate::sensor::TouchSensor;

impl pwm::Error for Error {
    fn kind(&self) -> pwm::ErrorKind {
        pwm::ErrorKind::Other
    }
}

impl digital::Error for Error {
    fn kind(&self) -> digital::ErrorKind {
        digital::ErrorKind::Other
    }
}

macro_rules! error_type {
    ($($ty:ty => $module:ident),+ $(,)?) => {
        $(impl $module::ErrorType for $ty {
            type Error = Error;
        })+
    };
}

error_type!(
    TachoMotor => pwm,
    DcMotor => pwm,
    Led => pwm,
);

impl digital::ErrorType for Led {
    type Error = Error;
}

impl digital::ErrorType for TouchSensor {
    type Error = Error;
}

impl pwm::SetDutyCycle for TachoMotor {
    fn max_duty_cycle(&self) -> u16 {
        100
    }

    fn set_duty_cycle(&mut self, duty: u16) -> Result<()> {
        self.run_direct(i32::from(duty))
    }
}

impl pwm::SetDutyCycle for DcMotor {
    fn max_duty_cycle(&self) -> u16 {
        100
    }

    fn set_duty_cycle(&mut self, duty: u16) -> Result<()> {
        self.run_direct(i32::from(duty))
    }
}

impl pwm::SetDutyCycle for Led {
    fn max_duty_cycle(&self) -> u16 {
        u16::try_from(self.max_brightness()).unwrap_or(u16::MAX)
    }

    fn set_duty_cycle(&mut self, duty: u16) -> Result<()> {
        self.set_brightness(i32::from(duty))
    }
}

impl digital::OutputPin for Led {
    fn set_low(&mut self) -> Result<()> {
        self.set_brightness(0)
    }

    fn set_high(&mut self) -> Result<()> {
        self.set_brightness(self.max_brightness())
    }
}

impl digital::StatefulOutputPin for Led {
    fn is_set_high(&mut self) -> Result<bool> {
        Ok(self.brightness()? > 0)
    }

    fn is_set_low(&mut self) -> Result<bool> {
        Ok(self.brightness()? == 0)
    }
}

impl digital::InputPin for TouchSensor {
    fn is_high(&mut self) -> Result<bool> {
        self.pressed()
    }

    fn is_low(&mut self) -> Result<bool> {
        Ok(!self.pressed()?)
    }
}

impl LegoPort {
    /// Puts this input port in `other-i2c` mode (no autodetection) and opens
    /// its I2C bus, `/dev/i2c-inN` (or `/dev/i2c-<N+2>`), for embedded-hal
    /// I2C drivers. The bus exists only while a sensor is plugged in.
    ///
    /// # Errors
    /// [`Error::NotOffered`] for an output port; the mode write's errors;
    /// [`Error::Disconnected`] when there is no bus node (nothing plugged in);
    /// [`Error::Io`] when the node is not an I2C adapter.
    pub fn i2c_bus(&self) -> Result<I2cdev> {
        self.i2c_bus_in(Path::new("/dev"))
    }

    /// As [`LegoPort::i2c_bus`], with the device nodes under `dev` (tests).
    ///
    /// # Errors
    /// As [`LegoPort::i2c_bus`].
    pub fn i2c_bus_in(&self, dev: &Path) -> Result<I2cdev> {
        let Some(number) = input_port_number(self.address()) else {
            return Err(Error::NotOffered {
                attribute: "mode",
                value: "other-i2c".into(),
                offered: self.modes().join(" "),
            });
        };
        if self.mode()? != "other-i2c" {
            self.set_mode("other-i2c")?;
        }
        let by_name = dev.join(format!("i2c-in{number}"));
        let path = if by_name.exists() {
            by_name
        } else {
            // `input_port_number` leaves room for the + 2.
            dev.join(format!("i2c-{}", number.saturating_add(2)))
        };
        I2cdev::new(&path).map_err(|e| {
            let source = match e {
                linux_embedded_hal::i2cdev::linux::LinuxI2CError::Io(io) => io,
                linux_embedded_hal::i2cdev::linux::LinuxI2CError::Errno(n) => {
                    io::Error::from_raw_os_error(n)
                }
            };
            match source.raw_os_error() {
                Some(libc::ENOENT) => Error::Disconnected {
                    path: path.clone(),
                    operation: Operation::Open,
                    source: io::Error::new(
                        io::ErrorKind::NotFound,
                        "no I2C bus node: it exists only while an I2C sensor is plugged in",
                    ),
                },
                _ => Error::from_io(&path, Operation::Open, None, source),
            }
        })
    }
}

/// The number N of input port `ev3-ports:inN` (or old-style `inN`): decimal
/// digits only, small enough that the fallback bus `i2c-<N+2>` has a number.
fn input_port_number(address: &str) -> Option<u32> {
    let digits = address
        .strip_prefix("ev3-ports:")
        .unwrap_or(address)
        .strip_prefix("in")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits
        .parse::<u32>()
        .ok()
        .filter(|n| n.checked_add(2).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_port_numbers() {
        assert_eq!(input_port_number("ev3-ports:in2"), Some(2));
        assert_eq!(input_port_number("in4"), Some(4));
        for bad in [
            "ev3-ports:outA",
            "in",
            "in+3",
            "in-1",
            "ev3-ports:in1:i2c1",
            // The bus would be i2c-<N+2>: no number without one.
            "in4294967294",
            "in4294967295",
            "in99999999999999999999",
        ] {
            assert_eq!(input_port_number(bad), None, "{bad}");
        }
    }
}
