//! [`MockDevice`]: one device of a simulated brick.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, Weak};

use super::fs::{lock, wake};
use super::kobject::{Effects, Model};
use super::state::Brick;
use super::MockKind;
use crate::error::{Error, Operation, Result};
use crate::value;

/// A device of a [`MockTree`](super::MockTree): inspect what its model
/// shows, inject what the hardware would report.
#[derive(Debug, Clone)]
pub struct MockDevice {
    pub(super) dir: PathBuf,
    pub(super) class: &'static str,
    pub(super) name: String,
    pub(super) address: String,
    pub(super) kind: MockKind,
    pub(super) id: u64,
    pub(super) brick: Weak<Mutex<Brick<fuser::PollNotifier>>>,
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

    /// `true` while the device is plugged in (and its tree mounted).
    pub fn is_plugged(&self) -> bool {
        self.brick
            .upgrade()
            .is_some_and(|brick| lock(&brick).contains(self.id))
    }

    pub(super) fn gone(&self, operation: Operation) -> Error {
        Error::from_io(
            &self.dir,
            operation,
            None,
            io::Error::from_raw_os_error(libc::ENODEV),
        )
    }

    /// Runs `f` on the model (see [`MockTree::with_model`](super::MockTree::with_model)).
    pub(super) fn with_model<R>(
        &self,
        f: impl FnOnce(&mut dyn Model, &mut Effects) -> R,
    ) -> Result<R> {
        let brick = self.brick.upgrade().ok_or(self.gone(Operation::Write))?;
        let done = lock(&brick).with_model(self.id, f);
        let (result, pollers) = done.ok_or(self.gone(Operation::Write))?;
        wake(pollers);
        Ok(result)
    }

    /// What the model shows for `attr` now (whatever its access mode).
    fn show(&self, attr: &str) -> Result<Vec<u8>> {
        let path = self.dir.join(attr);
        let brick = self.brick.upgrade().ok_or(self.gone(Operation::Read))?;
        let mut out = Vec::new();
        lock(&brick)
            .show(self.id, attr, &mut out)
            .map_err(|e| Error::from_io(&path, Operation::Read, None, errno_error(e)))?;
        Ok(out)
    }

    /// The current value of attribute `attr` as its model shows it (also for
    /// write-only attributes, where the model has a value), without the
    /// trailing newline.
    ///
    /// # Errors
    /// [`Error::Disconnected`] when the device is unplugged or has no such
    /// attribute, the model's error otherwise, [`Error::Parse`] when the
    /// contents are not UTF-8.
    pub fn read(&self, attr: &str) -> Result<String> {
        let bytes = self.show(attr)?;
        value::parse_str(&bytes)
            .map(str::to_owned)
            .ok_or_else(|| Error::parse(&self.dir.join(attr), &bytes, "UTF-8 text"))
    }

    /// The value of attribute `attr` as an integer.
    ///
    /// # Errors
    /// As [`MockDevice::read`], and [`Error::Parse`] when it is not an
    /// integer.
    pub fn read_int(&self, attr: &str) -> Result<i64> {
        let bytes = self.show(attr)?;
        value::parse_int(&bytes)
            .ok_or_else(|| Error::parse(&self.dir.join(attr), &bytes, "a decimal integer"))
    }

    /// The last value an attribute's store accepted through the file system
    /// (a command, a stop action: also for write-only attributes, whose
    /// files cannot be read), or `""` when nothing was stored yet.
    ///
    /// # Errors
    /// [`Error::Disconnected`] when the device is unplugged.
    pub fn last_written(&self, attr: &str) -> Result<String> {
        let brick = self.brick.upgrade().ok_or(self.gone(Operation::Read))?;
        let brick = lock(&brick);
        if !brick.contains(self.id) {
            return Err(self.gone(Operation::Read));
        }
        let bytes = brick.last_stored(self.id, attr).unwrap_or_default();
        Ok(value::parse_str(bytes).unwrap_or_default().to_owned())
    }

    /// Injects what the device reports for `attr` (a sensor value, a
    /// position, a voltage), bypassing the attribute's store: the model's
    /// [`Model::inject`]. Open handles see it on their next read.
    ///
    /// # Errors
    /// [`Error::Disconnected`] when the device is unplugged or the model
    /// cannot inject `attr`; [`Error::InvalidValue`] when it cannot parse
    /// `value`.
    pub fn set(&self, attr: &str, value: &str) -> Result<()> {
        let value = value.strip_suffix('\n').unwrap_or(value);
        let path = self.dir.join(attr);
        self.with_model(|model, fx| model.inject(attr, value, fx))?
            .map_err(|e| {
                Error::from_io(
                    &path,
                    Operation::Write,
                    Some(value.as_bytes()),
                    errno_error(e),
                )
            })
    }

    /// Injects an integer (see [`MockDevice::set`]).
    ///
    /// # Errors
    /// As [`MockDevice::set`].
    pub fn set_int(&self, attr: &str, value: i64) -> Result<()> {
        let mut buf = [0u8; value::INT_BUF_LEN];
        let digits = value::format_int(value, &mut buf);
        self.set(attr, std::str::from_utf8(digits).unwrap_or("0"))
    }

    /// Injects raw contents given as bytes (UTF-8 text; see
    /// [`MockDevice::set`]).
    ///
    /// # Errors
    /// As [`MockDevice::set`]; [`Error::InvalidValue`] when `bytes` is not
    /// UTF-8.
    pub fn set_bytes(&self, attr: &str, bytes: &[u8]) -> Result<()> {
        match std::str::from_utf8(bytes) {
            Ok(text) => self.set(attr, text),
            Err(_) => Err(Error::from_io(
                &self.dir.join(attr),
                Operation::Write,
                Some(bytes),
                io::Error::from_raw_os_error(libc::EINVAL),
            )),
        }
    }
}

fn errno_error(e: i32) -> io::Error {
    io::Error::from_raw_os_error(super::state::errno(e))
}
