//! The EV3 battery (`/sys/class/power_supply`).

use std::path::Path;

use crate::device::SysfsDevice;
use crate::error::{Error, Result};

/// A power supply, normally the EV3 battery `lego-ev3-battery`.
#[derive(Debug)]
pub struct PowerSupply {
    device: SysfsDevice,
}

impl PowerSupply {
    /// Opens the EV3 battery: `lego-ev3-battery` (stretch), `legoev3-battery`
    /// (jessie), or else the first supply of type `Battery`.
    ///
    /// # Errors
    /// [`Error::NotFound`] naming the supplies seen.
    pub fn battery(root: impl AsRef<Path>) -> Result<PowerSupply> {
        let root = root.as_ref();
        for name in ["lego-ev3-battery", "legoev3-battery"] {
            if let Ok(device) = SysfsDevice::open(root, "power_supply", name) {
                return PowerSupply::from_device(device);
            }
        }
        let all = crate::discover::list(root, "power_supply")?;
        for info in &all {
            if let Ok(device) = SysfsDevice::from_dir(&info.path) {
                if device.read_string("type").is_ok_and(|t| t == "Battery") {
                    return PowerSupply::from_device(device);
                }
            }
        }
        Err(Error::NotFound {
            what: format!("battery under {}", root.join("power_supply").display()),
            seen: all
                .iter()
                .map(|d| d.name.clone())
                .collect::<Vec<_>>()
                .join(", "),
        })
    }

    /// Opens power supply `name`.
    ///
    /// # Errors
    /// [`Error::Disconnected`] when there is no such supply.
    pub fn open(root: impl AsRef<Path>, name: &str) -> Result<PowerSupply> {
        PowerSupply::from_device(SysfsDevice::open(root, "power_supply", name)?)
    }

    fn from_device(device: SysfsDevice) -> Result<PowerSupply> {
        device.preopen(&["voltage_now"])?;
        Ok(PowerSupply { device })
    }

    /// The device.
    pub fn device(&self) -> &SysfsDevice {
        &self.device
    }
    /// `voltage_now` in µV.
    ///
    /// # Errors
    /// Read errors.
    pub fn voltage_uv(&self) -> Result<i32> {
        self.device.read_int("voltage_now")
    }
    /// Voltage in mV (integer maths).
    ///
    /// # Errors
    /// Read errors.
    pub fn voltage_mv(&self) -> Result<i32> {
        Ok(self.voltage_uv()? / 1000)
    }
    /// Voltage in volts.
    ///
    /// # Errors
    /// Read errors.
    pub fn voltage_volts(&self) -> Result<f32> {
        Ok(self.voltage_uv()? as f32 / 1_000_000.0)
    }
    /// `current_now` in µA.
    ///
    /// # Errors
    /// Read errors.
    pub fn current_ua(&self) -> Result<i32> {
        self.device.read_int("current_now")
    }
    /// Current in mA.
    ///
    /// # Errors
    /// Read errors.
    pub fn current_ma(&self) -> Result<i32> {
        Ok(self.current_ua()? / 1000)
    }
    /// Current in amperes.
    ///
    /// # Errors
    /// Read errors.
    pub fn current_amps(&self) -> Result<f32> {
        Ok(self.current_ua()? as f32 / 1_000_000.0)
    }
    /// `technology`: `Li-ion` (rechargeable pack) or `Unknown` (AA cells).
    ///
    /// # Errors
    /// Read errors.
    pub fn technology(&self) -> Result<String> {
        self.device.read_string("technology")
    }
    /// `type`, e.g. `Battery`.
    ///
    /// # Errors
    /// Read errors.
    pub fn kind(&self) -> Result<String> {
        self.device.read_string("type")
    }
    /// `voltage_max_design` in µV.
    ///
    /// # Errors
    /// Read errors.
    pub fn voltage_max_design_uv(&self) -> Result<i32> {
        self.device.read_int("voltage_max_design")
    }
    /// `voltage_min_design` in µV.
    ///
    /// # Errors
    /// Read errors.
    pub fn voltage_min_design_uv(&self) -> Result<i32> {
        self.device.read_int("voltage_min_design")
    }
}
