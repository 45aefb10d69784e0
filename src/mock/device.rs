//! [`MockDevice`]: one device of a mock tree.

use std::fs;
use std::path::{Path, PathBuf};

use super::{io_error, load, spec, store, write_files, MockKind};
use crate::error::{Error, Operation, Result};
use crate::value;

/// A device in a [`MockTree`](super::MockTree): inspect what code wrote, inject what the
/// hardware would show.
#[derive(Debug, Clone)]
pub struct MockDevice {
    pub(super) dir: PathBuf,
    pub(super) class: &'static str,
    pub(super) name: String,
    pub(super) address: String,
    pub(super) kind: MockKind,
}

impl MockDevice {
    /// The device directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// The sysfs class, e.g. `tacho-motor`.
    pub fn class(&self) -> &'static str {
        self.class
    }

    /// The device name, e.g. `motor0`.
    pub fn name(&self) -> String {
        self.name.clone()
    }

    /// The `address` attribute, e.g. `ev3-ports:outA`.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// The kind of device.
    pub fn kind(&self) -> &MockKind {
        &self.kind
    }

    fn file(&self, attr: &str) -> PathBuf {
        // Nested names (speed_pid/Kp) are allowed here: this is test code's
        // own tree, not user input reaching a brick.
        self.dir.join(attr)
    }

    /// The current contents of attribute `attr` (what the code under test
    /// wrote last, or the initial value), without the trailing newline.
    ///
    /// # Errors
    /// [`Error::Disconnected`] when the device is unplugged or has no such
    /// attribute, [`Error::Parse`] when the contents are not UTF-8.
    pub fn read(&self, attr: &str) -> Result<String> {
        let path = self.file(attr);
        let bytes = load(&path)?;
        value::parse_str(&bytes)
            .map(str::to_owned)
            .ok_or_else(|| Error::parse(&path, &bytes, "UTF-8 text"))
    }

    /// The contents of attribute `attr` as an integer.
    ///
    /// # Errors
    /// As [`MockDevice::read`], and [`Error::Parse`] when it is not an
    /// integer.
    pub fn read_int(&self, attr: &str) -> Result<i64> {
        let path = self.file(attr);
        let bytes = load(&path)?;
        value::parse_int(&bytes).ok_or_else(|| Error::parse(&path, &bytes, "a decimal integer"))
    }

    /// Sets attribute `attr` to `value` as the driver would show it (with a
    /// trailing newline), whatever its access mode: sensor values,
    /// positions, state flags... Open handles see the new value on their
    /// next read; a write-only attribute is not made readable.
    ///
    /// # Errors
    /// [`Error::Disconnected`] when the device is unplugged.
    pub fn set(&self, attr: &str, value: &str) -> Result<()> {
        let mut bytes = Vec::with_capacity(value.len() + 1);
        bytes.extend_from_slice(value.as_bytes());
        bytes.push(b'\n');
        self.set_bytes(attr, &bytes)
    }

    /// Sets an integer attribute (see [`MockDevice::set`]).
    ///
    /// # Errors
    /// As [`MockDevice::set`].
    pub fn set_int(&self, attr: &str, value: i64) -> Result<()> {
        let mut buf = [0u8; value::INT_BUF_LEN];
        let digits = value::format_int(value, &mut buf);
        let mut bytes = [0u8; value::INT_BUF_LEN + 1];
        bytes[..digits.len()].copy_from_slice(digits);
        bytes[digits.len()] = b'\n';
        self.set_bytes(attr, &bytes[..=digits.len()])
    }

    /// Sets raw contents (e.g. `bin_data`), without adding a newline.
    ///
    /// # Errors
    /// As [`MockDevice::set`].
    pub fn set_bytes(&self, attr: &str, bytes: &[u8]) -> Result<()> {
        store(&self.file(attr), bytes)
    }

    /// Switches a mock sensor to `mode` as its driver would: `mode`,
    /// `num_values`, `units`, `decimals`, `bin_data_format` and the
    /// `valueN` files follow the mode's table (values start at 0).
    ///
    /// # Errors
    /// [`Error::NotOffered`] when this is not a sensor or the sensor has no
    /// such mode; I/O errors as [`MockDevice::set`].
    pub fn apply_sensor_mode(&self, mode: &str) -> Result<()> {
        let MockKind::Sensor(driver) = self.kind else {
            return Err(self.not_offered("mode", mode, ""));
        };
        let modes = driver.modes();
        let Some(spec) = modes.iter().find(|m| m.0 == mode) else {
            let offered: Vec<&str> = modes.iter().map(|m| m.0).collect();
            return Err(self.not_offered("mode", mode, &offered.join(" ")));
        };
        for i in 0..8 {
            let path = self.dir.join(format!("value{i}"));
            if i >= spec.1 && path.exists() {
                fs::remove_file(&path).map_err(|e| io_error(&path, Operation::Write, e))?;
            }
        }
        write_files(&self.dir, &spec::sensor_mode_files(spec))
    }

    fn not_offered(&self, attribute: &'static str, value: &str, offered: &str) -> Error {
        Error::NotOffered {
            attribute,
            value: value.to_owned(),
            offered: offered.to_owned(),
        }
    }
}
