//! Sensors (`lego-sensor` class): the generic [`Sensor`] and typed sensors
//! on top of it.

mod remote;
mod typed;

pub use remote::{Beacon, Remote, RemoteEvent};
pub use typed::{
    Color, ColorSensor, GyroSensor, InfraredSensor, NxtLightSensor, RemoteButtons, TouchSensor,
    UltrasonicSensor,
};

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

/// The layout of `bin_data`, from `bin_data_format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinFormat {
    /// Unsigned 8-bit.
    U8,
    /// Signed 8-bit.
    S8,
    /// Unsigned 16-bit, little-endian.
    U16,
    /// Signed 16-bit, little-endian.
    S16,
    /// Signed 16-bit, big-endian.
    S16Be,
    /// Signed 32-bit, little-endian.
    S32,
    /// Signed 32-bit, big-endian (`s32be` in the kernel, `s32_be` in docs).
    S32Be,
    /// IEEE 754 single precision, little-endian.
    Float,
}

impl BinFormat {
    /// Parses the kernel's name.
    pub fn parse(text: &str) -> Option<BinFormat> {
        Some(match text {
            "u8" => BinFormat::U8,
            "s8" => BinFormat::S8,
            "u16" => BinFormat::U16,
            "s16" => BinFormat::S16,
            "s16_be" => BinFormat::S16Be,
            "s32" => BinFormat::S32,
            "s32_be" | "s32be" => BinFormat::S32Be,
            "float" => BinFormat::Float,
            _ => return None,
        })
    }

    /// Bytes per value.
    pub fn size(self) -> usize {
        match self {
            BinFormat::U8 | BinFormat::S8 => 1,
            BinFormat::U16 | BinFormat::S16 | BinFormat::S16Be => 2,
            _ => 4,
        }
    }

    /// Decodes value `index` of `raw` as an integer (a float is truncated
    /// toward zero). `None` when `raw` is too short.
    pub fn decode(self, raw: &[u8], index: usize) -> Option<i64> {
        let at = index.checked_mul(self.size())?;
        let b = raw.get(at..at.checked_add(self.size())?)?;
        Some(match self {
            BinFormat::U8 => i64::from(b[0]),
            BinFormat::S8 => i64::from(b[0] as i8),
            BinFormat::U16 => i64::from(u16::from_le_bytes([b[0], b[1]])),
            BinFormat::S16 => i64::from(i16::from_le_bytes([b[0], b[1]])),
            BinFormat::S16Be => i64::from(i16::from_be_bytes([b[0], b[1]])),
            BinFormat::S32 => i64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            BinFormat::S32Be => i64::from(i32::from_be_bytes([b[0], b[1], b[2], b[3]])),
            BinFormat::Float => f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as i64,
        })
    }
}

/// A fixed-point sensor value: `raw / 10^decimals` (integer maths only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scaled {
    /// The value as the kernel shows it.
    pub raw: i32,
    /// Decimal places.
    pub decimals: u8,
}

impl Scaled {
    /// The value in units of 10^-`want`, converted from `decimals` places
    /// (rounded toward zero), e.g. cm with one decimal to mm:
    /// `in_decimals(1)`. Exact for any `decimals` and `want` while the result
    /// fits in `i64`; beyond that it saturates at `i64::MIN`/`i64::MAX`.
    pub fn in_decimals(self, want: u8) -> i64 {
        let raw = i64::from(self.raw);
        if want >= self.decimals {
            match 10i64.checked_pow(u32::from(want - self.decimals)) {
                Some(factor) => raw.saturating_mul(factor),
                // 10^19 and more: any non-zero raw value saturates.
                None => match raw.cmp(&0) {
                    std::cmp::Ordering::Less => i64::MIN,
                    std::cmp::Ordering::Equal => 0,
                    std::cmp::Ordering::Greater => i64::MAX,
                },
            }
        } else {
            // |raw| < 10^10: dividing by 10^19 or more gives 0.
            10i64
                .checked_pow(u32::from(self.decimals - want))
                .map_or(0, |divisor| raw / divisor)
        }
    }

    /// As a float (soft-float on the brick: prefer [`Scaled::in_decimals`] in
    /// loops).
    pub fn to_f32(self) -> f32 {
        self.raw as f32 / 10f32.powi(i32::from(self.decimals))
    }
}

impl std::fmt::Display for Scaled {
    /// `raw` with a decimal point `decimals` places from the right, with
    /// leading zeros as needed (`-0.05`), for any `decimals`; no allocation.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use std::fmt::Write;
        let mut buf = [0u8; crate::value::INT_BUF_LEN];
        let digits = crate::value::format_int(i64::from(self.raw.unsigned_abs()), &mut buf);
        // ASCII digits only.
        let digits = std::str::from_utf8(digits).map_err(|_| std::fmt::Error)?;
        if self.raw < 0 {
            f.write_char('-')?;
        }
        let decimals = usize::from(self.decimals);
        if decimals == 0 {
            return f.write_str(digits);
        }
        match digits.len().checked_sub(decimals) {
            Some(split) if split > 0 => {
                let (whole, fraction) = digits.split_at(split);
                write!(f, "{whole}.{fraction}")
            }
            _ => {
                f.write_str("0.")?;
                for _ in digits.len()..decimals {
                    f.write_char('0')?;
                }
                f.write_str(digits)
            }
        }
    }
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

    /// The attribute `value<index>` (for a wait on its descriptor).
    ///
    /// # Errors
    /// [`Error::Unsupported`] for an index beyond `value7`; open errors.
    #[cfg(feature = "async")]
    pub(crate) fn value_attribute(&self, index: usize) -> Result<&crate::attr::Attribute> {
        let name = value_name(index).ok_or_else(|| Error::Unsupported {
            path: self.device.dir().join(format!("value{index}")),
            operation: crate::error::Operation::Read,
            source: std::io::Error::from_raw_os_error(libc::ENXIO),
        })?;
        self.device.attribute(name)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bin_formats() {
        let raw = [0xff, 0x7f, 0x00, 0x80, 0x01, 0x02, 0x03, 0x04];
        assert_eq!(BinFormat::U8.decode(&raw, 0), Some(255));
        assert_eq!(BinFormat::S8.decode(&raw, 0), Some(-1));
        assert_eq!(BinFormat::U16.decode(&raw, 0), Some(0x7fff));
        assert_eq!(BinFormat::S16.decode(&raw, 1), Some(-32768));
        assert_eq!(BinFormat::S16Be.decode(&raw, 0), Some(-129));
        assert_eq!(BinFormat::S32.decode(&raw, 1), Some(0x0403_0201));
        assert_eq!(BinFormat::S32Be.decode(&raw, 1), Some(0x0102_0304));
        assert_eq!(BinFormat::Float.decode(&1.5f32.to_le_bytes(), 0), Some(1));
        assert_eq!(BinFormat::S32.decode(&raw, 2), None);
        assert_eq!(BinFormat::parse("s32be"), Some(BinFormat::S32Be));
        assert_eq!(BinFormat::parse("s32_be"), Some(BinFormat::S32Be));
        assert_eq!(BinFormat::parse("u64"), None);
    }

    #[test]
    fn fixed_point() {
        let d = Scaled {
            raw: 2553,
            decimals: 1,
        };
        assert_eq!(d.to_string(), "255.3");
        assert_eq!(d.in_decimals(1), 2553);
        assert_eq!(d.in_decimals(0), 255);
        assert_eq!(d.in_decimals(2), 25530);
        assert_eq!(
            Scaled {
                raw: -5,
                decimals: 2
            }
            .to_string(),
            "-0.05"
        );
        assert_eq!(
            Scaled {
                raw: 42,
                decimals: 0
            }
            .to_string(),
            "42"
        );
        assert!((d.to_f32() - 255.3).abs() < 1e-3);
    }

    #[test]
    fn fixed_point_with_any_decimals() {
        let s = |raw, decimals| Scaled { raw, decimals };
        // From 19 decimals 10^decimals overflows i64; from 64 the old
        // shift-free maths divided by zero.
        for decimals in [19u8, 20, 38, 39, 63, 64, 100, 255] {
            assert_eq!(s(i32::MAX, decimals).in_decimals(1), 0, "{decimals}");
            assert_eq!(s(i32::MIN, decimals).in_decimals(0), 0, "{decimals}");
            assert_eq!(s(7, decimals).in_decimals(decimals), 7);
            let text = s(-5, decimals).to_string();
            let zeros = usize::from(decimals) - 1;
            assert_eq!(text, format!("-0.{}5", "0".repeat(zeros)), "{decimals}");
            let text = s(i32::MIN, decimals).to_string();
            assert_eq!(text.len(), usize::from(decimals) + 3, "{text}");
            assert!(text.starts_with("-0.") && text.ends_with("2147483648"));
            assert_eq!(s(0, decimals).to_f32(), 0.0);
        }
        // Exact as long as the value fits, saturated beyond.
        assert_eq!(s(1, 0).in_decimals(18), 1_000_000_000_000_000_000);
        assert_eq!(s(9, 0).in_decimals(18), 9_000_000_000_000_000_000);
        assert_eq!(s(10, 0).in_decimals(18), i64::MAX);
        assert_eq!(s(-10, 0).in_decimals(18), i64::MIN);
        assert_eq!(s(1, 0).in_decimals(255), i64::MAX);
        assert_eq!(s(-1, 0).in_decimals(19), i64::MIN);
        assert_eq!(s(0, 0).in_decimals(255), 0);
        assert_eq!(s(i32::MAX, 9).in_decimals(0), 2);
        assert_eq!(s(i32::MIN, 10).in_decimals(0), 0);
        assert_eq!(s(i32::MIN, 10).in_decimals(1), -2);
        assert_eq!(s(i32::MIN, 0).to_string(), "-2147483648");
        assert_eq!(s(i32::MIN, 3).to_string(), "-2147483.648");
        assert_eq!(s(i32::MAX, 10).to_string(), "0.2147483647");
        assert_eq!(s(1234, 4).to_string(), "0.1234");
        assert_eq!(s(1234, 3).to_string(), "1.234");
        assert_eq!(s(-1000, 3).to_string(), "-1.000");
    }

    #[test]
    fn bin_decode_never_overflows() {
        let raw = [1u8, 2, 3, 4];
        for format in [
            BinFormat::U8,
            BinFormat::S16,
            BinFormat::S32,
            BinFormat::Float,
        ] {
            for index in [
                usize::MAX,
                usize::MAX / 2,
                usize::MAX / 4,
                usize::MAX / 4 + 1,
            ] {
                assert_eq!(format.decode(&raw, index), None, "{format:?} {index}");
            }
        }
        assert_eq!(BinFormat::U8.decode(&raw, 3), Some(4));
        assert_eq!(BinFormat::U8.decode(&raw, 4), None);
    }
}
