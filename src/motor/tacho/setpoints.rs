//! [`TachoMotor`]'s setpoints, stop action, polarity and PID constants:
//! every value is checked before it is written.

use super::{check_duty, check_time, encode, TachoMotor};
use crate::device::SysfsDevice;
use crate::error::{Error, Result};
use crate::motor::memory::UNKNOWN;
use crate::motor::{check_range, check_stop_action, Pid, Polarity, StopAction};

impl TachoMotor {
    // ----- setpoints ---------------------------------------------------------

    /// `speed_sp` in counts/s, within ±`max_speed`.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] without writing; write errors.
    #[inline(always)]
    pub fn set_speed_sp(&self, speed: i32) -> Result<()> {
        self.check_speed(speed)?;
        self.write_speed_sp(speed)
    }
    #[inline(always)]
    pub(in crate::motor) fn write_speed_sp(&self, speed: i32) -> Result<()> {
        self.speed_sp.write_int(i64::from(speed))
    }
    /// Reads `speed_sp`.
    ///
    /// # Errors
    /// Read errors.
    #[inline(always)]
    pub fn speed_sp(&self) -> Result<i32> {
        self.speed_sp.read_int()
    }

    /// `duty_cycle_sp` in percent, -100..=100.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] without writing; write errors.
    #[inline(always)]
    pub fn set_duty_cycle_sp(&self, duty: i32) -> Result<()> {
        check_duty(duty)?;
        self.duty_cycle_sp.write_int(i64::from(duty))
    }
    /// Reads `duty_cycle_sp`.
    ///
    /// # Errors
    /// Read errors.
    #[inline(always)]
    pub fn duty_cycle_sp(&self) -> Result<i32> {
        self.duty_cycle_sp.read_int()
    }

    /// `position_sp` in counts (any 32-bit value).
    ///
    /// # Errors
    /// Write errors.
    #[inline(always)]
    pub fn set_position_sp(&self, counts: i32) -> Result<()> {
        self.position_sp.write_int(i64::from(counts))
    }
    /// Reads `position_sp`.
    ///
    /// # Errors
    /// Read errors.
    #[inline(always)]
    pub fn position_sp(&self) -> Result<i32> {
        self.position_sp.read_int()
    }

    /// `time_sp` in ms, at least 0.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] without writing; write errors.
    pub fn set_time_sp(&self, millis: i32) -> Result<()> {
        check_time(millis)?;
        self.write_time_sp(millis)
    }
    pub(in crate::motor) fn write_time_sp(&self, millis: i32) -> Result<()> {
        self.time_sp.write_int(i64::from(millis))
    }
    /// Reads `time_sp`.
    ///
    /// # Errors
    /// Read errors.
    pub fn time_sp(&self) -> Result<i32> {
        self.time_sp.read_int()
    }

    /// `ramp_up_sp`: ms from 0 to `max_speed`, 0..=60000.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] without writing; write errors.
    pub fn set_ramp_up_sp(&self, millis: i32) -> Result<()> {
        check_range("ramp_up_sp", i64::from(millis), 0, 60_000)?;
        self.device.write_int("ramp_up_sp", i64::from(millis))
    }
    /// Reads `ramp_up_sp`.
    ///
    /// # Errors
    /// Read errors.
    pub fn ramp_up_sp(&self) -> Result<i32> {
        self.device.read_int("ramp_up_sp")
    }
    /// `ramp_down_sp`: ms from `max_speed` to 0, 0..=60000.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] without writing; write errors.
    pub fn set_ramp_down_sp(&self, millis: i32) -> Result<()> {
        check_range("ramp_down_sp", i64::from(millis), 0, 60_000)?;
        self.device.write_int("ramp_down_sp", i64::from(millis))
    }
    /// Reads `ramp_down_sp`.
    ///
    /// # Errors
    /// Read errors.
    pub fn ramp_down_sp(&self) -> Result<i32> {
        self.device.read_int("ramp_down_sp")
    }

    /// Writes the stop action (every time, unless the handle was declared
    /// [`TachoMotor::assume_sole_owner`] and wrote the same one last).
    ///
    /// # Errors
    /// [`Error::NotOffered`] without writing; write errors.
    pub fn set_stop_action(&self, action: StopAction) -> Result<()> {
        check_stop_action(self.stop_actions, action)?;
        let code = encode(&StopAction::ALL, action);
        if self.sole_owner && self.shared.stop_action.is(code) {
            return Ok(());
        }
        let write = self.shared.stop_action.begin();
        let result = self.stop_action.write_str(action.as_str());
        let done = if result.is_ok() { code } else { UNKNOWN };
        self.shared.stop_action.finish(write, done);
        result
    }
    /// Reads `stop_action`.
    ///
    /// # Errors
    /// Read errors; [`Error::Parse`] for an unknown action.
    pub fn stop_action(&self) -> Result<StopAction> {
        self.stop_action.read_text(|t| {
            StopAction::parse(t)
                .ok_or_else(|| Error::parse(self.stop_action.path(), t.as_bytes(), "a stop action"))
        })
    }

    /// Sets `polarity`.
    ///
    /// # Errors
    /// Write errors.
    pub fn set_polarity(&self, polarity: Polarity) -> Result<()> {
        self.device.write_str("polarity", polarity.as_str())
    }
    /// Reads `polarity`.
    ///
    /// # Errors
    /// Read errors; [`Error::Parse`] for an unknown value.
    pub fn polarity(&self) -> Result<Polarity> {
        let attr = self.device.attribute("polarity")?;
        attr.read_text(|t| {
            Polarity::parse(t)
                .ok_or_else(|| Error::parse(attr.path(), t.as_bytes(), "normal or inversed"))
        })
    }

    /// Reads the `speed_pid` constants.
    ///
    /// # Errors
    /// Read errors; [`Error::Unsupported`] when the driver has none.
    pub fn speed_pid(&self) -> Result<Pid> {
        read_pid(&self.device.child("speed_pid")?)
    }
    /// Writes the `speed_pid` constants (each at least 0).
    ///
    /// # Errors
    /// [`Error::OutOfRange`] without writing; write errors.
    pub fn set_speed_pid(&self, pid: Pid) -> Result<()> {
        write_pid(&self.device.child("speed_pid")?, pid)
    }
    /// Reads the `hold_pid` constants.
    ///
    /// # Errors
    /// As [`TachoMotor::speed_pid`].
    pub fn hold_pid(&self) -> Result<Pid> {
        read_pid(&self.device.child("hold_pid")?)
    }
    /// Writes the `hold_pid` constants (each at least 0).
    ///
    /// # Errors
    /// As [`TachoMotor::set_speed_pid`].
    pub fn set_hold_pid(&self, pid: Pid) -> Result<()> {
        write_pid(&self.device.child("hold_pid")?, pid)
    }
}

fn read_pid(dev: &SysfsDevice) -> Result<Pid> {
    Ok(Pid {
        kp: dev.read_int("Kp")?,
        ki: dev.read_int("Ki")?,
        kd: dev.read_int("Kd")?,
    })
}

fn write_pid(dev: &SysfsDevice, pid: Pid) -> Result<()> {
    // Check all three before writing any.
    for (name, value) in [("Kp", pid.kp), ("Ki", pid.ki), ("Kd", pid.kd)] {
        check_range(name, i64::from(value), 0, i64::from(i32::MAX))?;
    }
    dev.write_int("Kp", i64::from(pid.kp))?;
    dev.write_int("Ki", i64::from(pid.ki))?;
    dev.write_int("Kd", i64::from(pid.kd))
}
