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
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use crate::attr::Attribute;
use crate::device::SysfsDevice;
use crate::discover::{self, DeviceInfo, Query};
use crate::error::{Error, Result};

/// The most values a sensor mode has (`value0`..`value7`).
pub const MAX_VALUES: usize = 8;

const VALUE_NAMES: [&str; MAX_VALUES] = [
    "value0", "value1", "value2", "value3", "value4", "value5", "value6", "value7",
];

/// [`Sensor::seen`] when the mode last seen is none of `modes` (or
/// being switched).
const NO_MODE: usize = usize::MAX;

/// `mode` is read into a stack buffer of this size; mode names are at most
/// 11 bytes (UART sensors) and longer values are compared the long way.
const MODE_BUF: usize = 32;

/// What changes with the mode and is not read on the hot paths: read again
/// after every mode change.
#[derive(Debug, Clone, Default)]
struct ModeInfo {
    mode: String,
    units: String,
    format: Option<BinFormat>,
}

/// A sensor (`/sys/class/lego-sensor/sensorN`) of any driver.
///
/// What depends on the mode (`num_values`, `decimals`, `units`,
/// `bin_data_format`) is kept for the mode last seen, but the mode itself is
/// never trusted: other programs switch it too, so [`Sensor::set_mode`] (and
/// every typed reading that needs a mode) reads `mode` from the device
/// first (one `pread`) and writes it only when it differs. `mode` and the
/// `valueN` files are opened at open (a `valueN` the mode does not have yet,
/// on first use) and kept open in fields of their own: a reading takes its
/// file without a lookup by name, then costs one `pread`.
#[derive(Debug)]
pub struct Sensor {
    device: SysfsDevice,
    driver_name: String,
    address: String,
    modes: Vec<String>,
    /// The `mode` attribute.
    mode_attr: Attribute,
    /// `value0`..`value7`, each opened once.
    values: [OnceLock<Attribute>; MAX_VALUES],
    /// The index in `modes` of the mode this handle last saw, or
    /// [`NO_MODE`]; `decimals` and `num_values` are that mode's.
    seen: AtomicUsize,
    decimals: AtomicU8,
    num_values: AtomicUsize,
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
        let mode_attr = device.open_inferred("mode")?;
        let sensor = Sensor {
            device,
            driver_name,
            address,
            modes,
            mode_attr,
            values: Default::default(),
            seen: AtomicUsize::new(NO_MODE),
            decimals: AtomicU8::new(0),
            num_values: AtomicUsize::new(0),
            mode_info: Mutex::new(ModeInfo::default()),
        };
        sensor.refresh_mode()?;
        // Open the values of the current mode; others (after a switch to a
        // mode with more) open on first use.
        for index in 0..sensor.num_values() {
            if sensor.value_attribute(index).is_err() {
                break;
            }
        }
        Ok(sensor)
    }

    fn refresh_mode(&self) -> Result<()> {
        let d = &self.device;
        let info = ModeInfo {
            mode: self.mode_attr.read_string()?,
            units: d.read_string("units")?,
            format: d
                .read_text("bin_data_format", |t| Ok(BinFormat::parse(t)))
                .unwrap_or(None),
        };
        let num_values = usize::try_from(d.read_int("num_values")?).unwrap_or(0);
        let decimals = u8::try_from(d.read_int("decimals")?).unwrap_or(0);
        let seen = self.modes.iter().position(|m| *m == info.mode);
        *self.lock() = info;
        self.num_values.store(num_values, Ordering::Relaxed);
        self.decimals.store(decimals, Ordering::Relaxed);
        // Last: what the mode's figures belong to.
        self.seen.store(seen.unwrap_or(NO_MODE), Ordering::Release);
        Ok(())
    }

    /// Forgets the mode last seen (before switching).
    fn forget_mode(&self) {
        self.seen.store(NO_MODE, Ordering::Release);
        self.lock().mode.clear();
    }

    /// `true` when `mode` is the mode this handle last saw and one of
    /// `modes` (one atomic load and a compare).
    #[inline]
    fn saw_mode(&self, mode: &str) -> bool {
        let seen = self.seen.load(Ordering::Acquire);
        self.modes.get(seen).is_some_and(|m| m == mode)
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
        self.mode_attr.read_string()
    }
    /// `true` when `mode` is the mode this handle last saw (no allocation,
    /// no syscall).
    pub fn is_mode(&self, mode: &str) -> bool {
        self.lock().mode == mode
    }
    /// `num_values` of the current mode.
    pub fn num_values(&self) -> usize {
        self.num_values.load(Ordering::Relaxed)
    }
    /// `decimals` of the current mode.
    pub fn decimals(&self) -> u8 {
        self.decimals.load(Ordering::Relaxed)
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
    /// In the mode already, this is the `pread` and a compare of bytes on
    /// the stack (no allocation, no lock).
    ///
    /// # Errors
    /// [`Error::NotOffered`] without writing; read and write errors (a UART
    /// sensor may answer `EBUSY`, `ETIMEDOUT` or, while re-syncing, `ENODEV`).
    #[inline]
    pub fn set_mode(&self, mode: &str) -> Result<()> {
        self.ensure_mode(mode)
    }

    /// [`Sensor::set_mode`], always inlined: the typed readings' mode check
    /// in the caller's loop.
    #[inline(always)]
    pub(crate) fn ensure_mode(&self, mode: &str) -> Result<()> {
        let mut shown = [0u8; MODE_BUF];
        let n = self.mode_attr.read_bytes(&mut shown)?;
        match shown.get(..n) {
            Some(shown) if n < MODE_BUF => {
                let on_device = shown.trim_ascii() == mode.as_bytes();
                if on_device && self.saw_mode(mode) {
                    return Ok(());
                }
                self.switch_mode(mode, on_device)
            }
            _ => self.set_mode_long(mode),
        }
    }

    /// [`Sensor::set_mode`] when `mode` showed a value too long for the
    /// stack buffer: compared whole.
    #[cold]
    #[inline(never)]
    fn set_mode_long(&self, mode: &str) -> Result<()> {
        let on_device = self.mode_attr.read_text(|t| Ok(t.trim() == mode))?;
        if on_device && self.saw_mode(mode) {
            return Ok(());
        }
        self.switch_mode(mode, on_device)
    }

    /// [`Sensor::set_mode`] when the device (`on_device`: in `mode` or not)
    /// or this handle is in another mode: checks that the sensor offers
    /// it, writes it when the device is in another, and reads the mode's
    /// figures.
    #[cold]
    #[inline(never)]
    fn switch_mode(&self, mode: &str, on_device: bool) -> Result<()> {
        if !self.modes.iter().any(|m| m == mode) {
            return Err(Error::NotOffered {
                attribute: "mode",
                value: mode.to_owned(),
                offered: self.modes.join(" "),
            });
        }
        self.forget_mode();
        if !on_device {
            self.mode_attr.write_str(mode)?;
        }
        self.refresh_mode()
    }

    /// Reads `value<index>` as the kernel shows it (fixed point: see
    /// [`Sensor::scaled`]): one `pread` of a file kept open in a slot of
    /// its own, no lookup by name, no allocation.
    ///
    /// # Errors
    /// [`Error::Unsupported`] for an index at or beyond `num_values`
    /// (`ENXIO` on a brick); read errors.
    #[inline(always)]
    pub fn value(&self, index: usize) -> Result<i32> {
        match self.values.get(index).and_then(OnceLock::get) {
            Some(attr) => attr.read_int(),
            None => self.value_first(index),
        }
    }

    /// [`Sensor::value`] of a `valueN` not open yet (or beyond `value7`).
    #[cold]
    #[inline(never)]
    fn value_first(&self, index: usize) -> Result<i32> {
        self.value_attribute(index)?.read_int()
    }

    /// The open `value<index>`, opened on first use.
    ///
    /// # Errors
    /// [`Error::Unsupported`] beyond `value7` or when the sensor has no
    /// such file; open errors.
    pub(crate) fn value_attribute(&self, index: usize) -> Result<&Attribute> {
        let (Some(slot), Some(name)) = (self.values.get(index), VALUE_NAMES.get(index)) else {
            return Err(self.no_value(index));
        };
        if let Some(attr) = slot.get() {
            return Ok(attr);
        }
        // Another thread may fill the slot first: then this one is dropped.
        drop(slot.set(self.device.open_inferred(name)?));
        slot.get().ok_or_else(|| self.no_value(index))
    }

    /// The error for `value<index>` beyond what the class has.
    #[cold]
    fn no_value(&self, index: usize) -> Error {
        Error::Unsupported {
            path: self.device.dir().join(format!("value{index}")),
            operation: crate::error::Operation::Read,
            source: std::io::Error::from_raw_os_error(libc::ENXIO),
        }
    }

    /// `value<index>` with the mode's `decimals`.
    ///
    /// # Errors
    /// As [`Sensor::value`].
    #[inline]
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
