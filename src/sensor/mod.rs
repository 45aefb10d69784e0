//! Sensors (`lego-sensor` class): the generic [`Sensor`] and typed sensors
//! on top of it.

mod remote;
mod typed;
mod values;

pub use remote::{Beacon, Remote, RemoteEvent};
pub use typed::{
    Color, ColorSensor, GyroSensor, InfraredSensor, NxtLightSensor, RemoteButtons, TouchSensor,
    UltrasonicSensor,
};
pub use values::{BinFormat, Scaled};

use std::path::Path;
use std::sync::Mutex;

use crate::device::SysfsDevice;
use crate::discover::{self, DeviceInfo, Query};
use crate::error::{Error, Result};

/// The most values a sensor mode has (`value0`..`value7`).
pub const MAX_VALUES: usize = 8;

const VALUE_NAMES: [&str; MAX_VALUES] = [
    "value0", "value1", "value2", "value3", "value4", "value5", "value6", "value7",
];

/// `value<index>`'s file name, if the class has it (`value0`..`value7`).
pub(crate) fn value_name(index: usize) -> Option<&'static str> {
    VALUE_NAMES.get(index).copied()
}

/// What changes with the mode: read again after every mode change.
#[derive(Debug, Clone, Default)]
struct ModeInfo {
    mode: String,
    num_values: usize,
    decimals: u8,
    units: String,
    format: Option<BinFormat>,
}

/// A sensor (`/sys/class/lego-sensor/sensorN`) of any driver.
///
/// What depends on the mode (`num_values`, `decimals`, `units`,
/// `bin_data_format`) is kept for the mode last seen, but the mode itself is
/// never trusted: other programs switch it too, so [`Sensor::set_mode`] (and
/// every typed reading that needs a mode) reads `mode` from the device
/// first (one `pread`) and writes it only when it differs. The `valueN`
/// files are opened at open and kept open.
#[derive(Debug)]
pub struct Sensor {
    device: SysfsDevice,
    driver_name: String,
    address: String,
    modes: Vec<String>,
    mode_info: Mutex<ModeInfo>,
}

impl Sensor {
    /// Opens the sensor on `port` (`in1`...`in4`, or a full address) if its
    /// driver is one of `drivers` (empty: any).
    ///
    /// # Errors
    /// [`Error::NotFound`] naming what is on the port, [`Error::Ambiguous`],
    /// read errors.
    pub fn find(root: impl AsRef<Path>, port: &str, drivers: &[&str]) -> Result<Sensor> {
        let query = Query {
            class: "lego-sensor",
            port: Some(port),
            drivers,
        };
        let (device, seen) = discover::find_found(root.as_ref(), &query)?;
        Sensor::from_found(device, Some(seen))
    }

    /// Opens an already located lego-sensor device.
    ///
    /// # Errors
    /// Read errors.
    pub fn from_device(device: SysfsDevice) -> Result<Sensor> {
        Sensor::from_found(device, None)
    }

    /// [`Sensor::from_device`], with the `driver_name` and `address`
    /// discovery has just read (`seen`) not read again.
    fn from_found(device: SysfsDevice, seen: Option<DeviceInfo>) -> Result<Sensor> {
        let (driver_name, address) = discover::identity(&device, seen)?;
        let modes = device.read_text("modes", |t| {
            Ok(crate::value::words(t).map(str::to_owned).collect())
        })?;
        device.preopen(&["mode"])?;
        // Open the values there are now; more open on first use.
        for name in VALUE_NAMES {
            if device.attribute(name).is_err() {
                break;
            }
        }
        let sensor = Sensor {
            device,
            driver_name,
            address,
            modes,
            mode_info: Mutex::new(ModeInfo::default()),
        };
        sensor.refresh_mode()?;
        Ok(sensor)
    }

    fn refresh_mode(&self) -> Result<()> {
        let d = &self.device;
        let info = ModeInfo {
            mode: d.read_string("mode")?,
            num_values: usize::try_from(d.read_int("num_values")?).unwrap_or(0),
            decimals: u8::try_from(d.read_int("decimals")?).unwrap_or(0),
            units: d.read_string("units")?,
            format: d
                .read_text("bin_data_format", |t| Ok(BinFormat::parse(t)))
                .unwrap_or(None),
        };
        *self.lock() = info;
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ModeInfo> {
        self.mode_info
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The device.
    pub fn device(&self) -> &SysfsDevice {
        &self.device
    }
    /// `driver_name`, e.g. `lego-ev3-color`.
    pub fn driver_name(&self) -> &str {
        &self.driver_name
    }
    /// `address`, e.g. `ev3-ports:in1`.
    pub fn address(&self) -> &str {
        &self.address
    }
    /// The modes the sensor offers.
    pub fn modes(&self) -> &[String] {
        &self.modes
    }
    /// The mode this handle last saw (set or read); [`Sensor::current_mode`]
    /// asks the device.
    pub fn mode(&self) -> String {
        self.lock().mode.clone()
    }
    /// Reads `mode` from the device (another program may have changed it).
    ///
    /// # Errors
    /// Read errors.
    pub fn current_mode(&self) -> Result<String> {
        self.device.read_string("mode")
    }
    /// `true` when `mode` is the mode this handle last saw (no allocation,
    /// no syscall).
    pub fn is_mode(&self, mode: &str) -> bool {
        self.lock().mode == mode
    }
    /// `num_values` of the current mode.
    pub fn num_values(&self) -> usize {
        self.lock().num_values
    }
    /// `decimals` of the current mode.
    pub fn decimals(&self) -> u8 {
        self.lock().decimals
    }
    /// `units` of the current mode (may be empty).
    pub fn units(&self) -> String {
        self.lock().units.clone()
    }
    /// `bin_data_format` of the current mode.
    pub fn bin_format(&self) -> Option<BinFormat> {
        self.lock().format
    }

    /// Makes sure the sensor is in `mode`: reads `mode` from the device
    /// (one `pread`: another program may have switched it), writes `mode`
    /// only when the device is in another one, and re-reads what depends on
    /// the mode when it differs from what this handle last saw. On UART
    /// sensors the write blocks until the sensor answers.
    ///
    /// # Errors
    /// [`Error::NotOffered`] without writing; read and write errors (a UART
    /// sensor may answer `EBUSY`, `ETIMEDOUT` or, while re-syncing, `ENODEV`).
    pub fn set_mode(&self, mode: &str) -> Result<()> {
        if !self.modes.iter().any(|m| m == mode) {
            return Err(Error::NotOffered {
                attribute: "mode",
                value: mode.to_owned(),
                offered: self.modes.join(" "),
            });
        }
        let on_device = self.device.read_text("mode", |t| Ok(t.trim() == mode))?;
        if on_device && self.is_mode(mode) {
            return Ok(());
        }
        self.lock().mode.clear();
        if !on_device {
            self.device.write_str("mode", mode)?;
        }
        self.refresh_mode()
    }

    /// Reads `value<index>` as the kernel shows it (fixed point: see
    /// [`Sensor::scaled`]).
    ///
    /// # Errors
    /// [`Error::Unsupported`] for an index at or beyond `num_values`
    /// (`ENXIO` on a brick); read errors.
    pub fn value(&self, index: usize) -> Result<i32> {
        match VALUE_NAMES.get(index) {
            Some(name) => self.device.read_int(name),
            None => Err(Error::Unsupported {
                path: self.device.dir().join(format!("value{index}")),
                operation: crate::error::Operation::Read,
                source: std::io::Error::from_raw_os_error(libc::ENXIO),
            }),
        }
    }

    /// `value<index>` with the mode's `decimals`.
    ///
    /// # Errors
    /// As [`Sensor::value`].
    pub fn scaled(&self, index: usize) -> Result<Scaled> {
        let raw = self.value(index)?;
        Ok(Scaled {
            raw,
            decimals: self.decimals(),
        })
    }

    /// Reads the first `num_values` values into `out`; returns how many.
    ///
    /// # Errors
    /// As [`Sensor::value`].
    pub fn values(&self, out: &mut [i32]) -> Result<usize> {
        let n = self.num_values().min(out.len());
        for (i, slot) in out.iter_mut().enumerate().take(n) {
            *slot = self.value(i)?;
        }
        Ok(n)
    }

    /// Reads `bin_data` (one read at offset 0) and decodes up to
    /// `out.len()` values with `bin_data_format`; returns how many.
    ///
    /// # Errors
    /// Read errors; [`Error::Parse`] for an unknown format.
    pub fn bin_values(&self, out: &mut [i64]) -> Result<usize> {
        let format = self
            .bin_format()
            .ok_or_else(|| Error::parse(self.device.dir(), b"", "a known bin_data_format"))?;
        let mut raw = [0u8; 32];
        let n = self.device.attribute("bin_data")?.read_bytes(&mut raw)?;
        let count = (n / format.size())
            .min(out.len())
            .min(self.num_values().max(1));
        for (i, slot) in out.iter_mut().enumerate().take(count) {
            *slot = format.decode(&raw[..n], i).unwrap_or(0);
        }
        Ok(count)
    }

    /// `poll_ms`: how often the driver polls (I2C sensors).
    ///
    /// # Errors
    /// [`Error::Unsupported`] on sensors that have none.
    pub fn poll_ms(&self) -> Result<i32> {
        self.device.read_int("poll_ms")
    }
    /// Sets `poll_ms`.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] for a negative value; [`Error::Unsupported`].
    pub fn set_poll_ms(&self, millis: i32) -> Result<()> {
        crate::motor::check_range("poll_ms", i64::from(millis), 0, i64::from(i32::MAX))?;
        self.device.write_int("poll_ms", i64::from(millis))
    }
    /// The `commands` the sensor offers (most have none).
    ///
    /// # Errors
    /// Read errors.
    pub fn commands(&self) -> Result<Vec<String>> {
        self.device.read_text("commands", |t| {
            Ok(crate::value::words(t).map(str::to_owned).collect())
        })
    }
    /// Sends a sensor `command`.
    ///
    /// # Errors
    /// [`Error::NotOffered`] without writing; write errors.
    pub fn send(&self, command: &str) -> Result<()> {
        let offered = self.commands()?;
        if !offered.iter().any(|c| c == command) {
            return Err(Error::NotOffered {
                attribute: "command",
                value: command.to_owned(),
                offered: offered.join(" "),
            });
        }
        self.device.write_str("command", command)
    }
    /// `fw_version` (empty for most sensors).
    ///
    /// # Errors
    /// Read errors.
    pub fn fw_version(&self) -> Result<String> {
        self.device.read_string("fw_version")
    }
    /// `text_value` (most sensors: [`Error::Unsupported`]).
    ///
    /// # Errors
    /// Read errors.
    pub fn text_value(&self) -> Result<String> {
        self.device.read_string("text_value")
    }
}
