//! [`ServoMotor`]: hobby servos on an I2C servo controller
//! (`ms-8ch-servo`).

use std::path::Path;

use super::{check_range, Polarity};
use crate::device::SysfsDevice;
use crate::discover::{self, Query};
use crate::error::Result;

/// A servo motor (`/sys/class/servo-motor/motorN`).
#[derive(Debug)]
pub struct ServoMotor {
    device: SysfsDevice,
    address: String,
}

impl ServoMotor {
    /// Opens the servo at `address` (e.g. `ev3-ports:in1:i2c88:sv1`, or a
    /// prefix of it such as `in1` when there is only one).
    ///
    /// # Errors
    /// [`crate::Error::NotFound`], [`crate::Error::Ambiguous`], read errors.
    pub fn find(root: impl AsRef<Path>, address: &str) -> Result<ServoMotor> {
        let query = Query {
            class: "servo-motor",
            port: Some(address),
            drivers: &[],
        };
        ServoMotor::from_device(discover::find(root, &query)?)
    }

    /// Opens an already located servo-motor device.
    ///
    /// # Errors
    /// Read errors.
    pub fn from_device(device: SysfsDevice) -> Result<ServoMotor> {
        device.preopen(&["command", "position_sp"])?;
        Ok(ServoMotor {
            address: device.read_string("address")?,
            device,
        })
    }

    /// The device.
    pub fn device(&self) -> &SysfsDevice {
        &self.device
    }
    /// `address`.
    pub fn address(&self) -> &str {
        &self.address
    }
    /// Moves to `percent` of the travel (-100..=100) and drives the servo.
    ///
    /// # Errors
    /// [`crate::Error::OutOfRange`] without writing; write errors.
    pub fn run_to(&self, percent: i32) -> Result<()> {
        self.set_position_sp(percent)?;
        self.device.write_str("command", "run")
    }
    /// Stops driving the servo (it floats).
    ///
    /// # Errors
    /// Write errors.
    pub fn float(&self) -> Result<()> {
        self.device.write_str("command", "float")
    }
    /// `position_sp` in percent, -100..=100.
    ///
    /// # Errors
    /// [`crate::Error::OutOfRange`] without writing; write errors.
    #[inline(always)]
    pub fn set_position_sp(&self, percent: i32) -> Result<()> {
        check_range("position_sp", i64::from(percent), -100, 100)?;
        self.device.write_int("position_sp", i64::from(percent))
    }
    /// Reads `position_sp` (the hardware pulse scaled back: -150 while
    /// floating).
    ///
    /// # Errors
    /// Read errors.
    #[inline(always)]
    pub fn position_sp(&self) -> Result<i32> {
        self.device.read_int("position_sp")
    }
    /// Sets the pulse widths (µs) for -100 %, 0 % and +100 %: min 0..=1000,
    /// mid 1000..=2000, max 2000..=3000.
    ///
    /// # Errors
    /// [`crate::Error::OutOfRange`] before any write; write errors.
    pub fn set_pulses(&self, min: i32, mid: i32, max: i32) -> Result<()> {
        check_range("min_pulse_sp", i64::from(min), 0, 1000)?;
        check_range("mid_pulse_sp", i64::from(mid), 1000, 2000)?;
        check_range("max_pulse_sp", i64::from(max), 2000, 3000)?;
        self.device.write_int("min_pulse_sp", i64::from(min))?;
        self.device.write_int("mid_pulse_sp", i64::from(mid))?;
        self.device.write_int("max_pulse_sp", i64::from(max))
    }
    /// `rate_sp`: ms for the full travel (driver-specific; some controllers
    /// do not support it).
    ///
    /// # Errors
    /// [`crate::Error::OutOfRange`] for a negative rate; write errors.
    pub fn set_rate_sp(&self, millis: i32) -> Result<()> {
        check_range("rate_sp", i64::from(millis), 0, i64::from(i32::MAX))?;
        self.device.write_int("rate_sp", i64::from(millis))
    }
    /// Sets `polarity`.
    ///
    /// # Errors
    /// Write errors.
    pub fn set_polarity(&self, polarity: Polarity) -> Result<()> {
        self.device.write_str("polarity", polarity.as_str())
    }
    /// `true` while the servo is driven.
    ///
    /// # Errors
    /// Read errors.
    pub fn running(&self) -> Result<bool> {
        self.device.attribute("state")?.list_contains("running")
    }
}
