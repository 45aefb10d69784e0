//! The interface between the simulated brick's file system and its device
//! models: what a kernel driver's `show()`/`store()` callbacks are to sysfs.
//!
//! The file system (one per [`crate::MockTree`]) owns the directory
//! tree, the numbering, the open handles and the pollers; a [`Model`] owns one
//! device's values and behaviour. Every read at offset 0 calls
//! [`Model::show`] afresh; every write calls [`Model::store`] once with the
//! whole written buffer, whatever the file offset (positional attributes,
//! such as `direct`, get [`Model::store_at`] instead). An error is an errno,
//! returned to the writer's or reader's syscall as is.

use std::any::Any;
use std::time::Duration;

/// An errno value (`libc::EINVAL`, ...), returned to the caller's syscall.
pub type Errno = i32;

/// The result of a `show` or `store`: the errno on failure.
pub type KResult<T> = std::result::Result<T, Errno>;

/// Who may open an attribute, and how: the permission bits sysfs shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `r--r--r--` (0444): opening for writing is `EACCES`, even for root.
    ReadOnly,
    /// `-w-------` (0200): opening for reading is `EACCES`, even for root.
    WriteOnly,
    /// `rw-r--r--` (0644).
    ReadWrite,
}

impl Mode {
    /// The permission bits sysfs shows for this mode.
    pub fn bits(self) -> u32 {
        match self {
            Mode::ReadOnly => 0o444,
            Mode::WriteOnly => 0o200,
            Mode::ReadWrite => 0o644,
        }
    }
}

/// One attribute file of a device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttrInfo {
    /// The file name (`speed_sp`, `value0`, `bin_data`, ...).
    pub name: String,
    /// Its access.
    pub mode: Mode,
    /// A binary attribute that sees the file offset (`bin_data`, `direct`):
    /// writes go to [`Model::store_at`].
    pub positional: bool,
    /// The size `stat` shows: 4096 for text attributes, as sysfs does; the
    /// buffer size for binary ones.
    pub size: u64,
}

impl AttrInfo {
    /// A text attribute (size 4096, offset ignored on store).
    pub fn text(name: impl Into<String>, mode: Mode) -> AttrInfo {
        AttrInfo {
            name: name.into(),
            mode,
            positional: false,
            size: 4096,
        }
    }
}

/// What a store or a tick asks of the brick besides changing values.
#[derive(Debug, Default)]
pub struct Effects {
    /// Attributes whose pollers must wake with `POLLPRI | POLLERR`
    /// (`sysfs_notify`), e.g. `state` when a flag changes.
    pub notify: Vec<String>,
    /// The set of attributes changed (LED `timer` trigger adds
    /// `delay_on`/`delay_off`; a sensor mode changes how many `valueN`
    /// exist): the file system asks [`Model::attributes`] again.
    pub attributes_changed: bool,
    /// A lego-port asks for what is on its port to be re-registered.
    pub port: Option<PortRequest>,
}

impl Effects {
    /// Asks for the pollers of `attr` to be woken.
    pub fn notify(&mut self, attr: &str) {
        if !self.notify.iter().any(|a| a == attr) {
            self.notify.push(attr.to_owned());
        }
    }
}

/// A lego-port's `mode` or `set_device` store: the device on `address` goes
/// away and, when `device` is given, a new one registers (with a new number).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortRequest {
    /// The address of the devices to remove and register (`ev3-ports:outA`).
    pub address: String,
    /// What to register afterwards: a driver name as the port's mode or
    /// `set_device` implies (`lego-ev3-l-motor`, `lego-ev3-color`,
    /// `rcx-motor`, ...); `None` leaves the port empty.
    pub driver: Option<String>,
}

/// Downcasting for models (the simulator's scripts read motor positions,
/// block motors, ...): implemented for every `'static` type.
pub trait AsAny: Any {
    /// The model as [`Any`], to downcast to the concrete model.
    fn as_any(&self) -> &dyn Any;
    /// The model as mutable [`Any`], to downcast to the concrete model.
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<T: Any> AsAny for T {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// One simulated device: the values behind its attribute files.
pub trait Model: AsAny + Send + 'static {
    /// The sysfs class directory (`tacho-motor`, `lego-sensor`, `leds`, ...).
    fn class(&self) -> &'static str;

    /// The attribute files the device has now.
    fn attributes(&self) -> Vec<AttrInfo>;

    /// Renders the whole value of `attr`, trailing newline included, into
    /// `out` (empty on entry). Readers at an offset get a slice of it.
    ///
    /// # Errors
    /// The errno the kernel gives for this read (`EACCES` for write-only
    /// attributes is handled by the file system at open; here e.g. `ENXIO`
    /// for a `valueN` beyond `num_values`, `EOPNOTSUPP` for `text_value`).
    fn show(&self, attr: &str, out: &mut Vec<u8>) -> KResult<()>;

    /// Stores one written buffer (the whole `write()`), as the kernel's
    /// `store()`: the value replaces the previous one, a command takes
    /// effect at once. Returns the number of bytes consumed (the buffer's
    /// length on success).
    ///
    /// # Errors
    /// `EINVAL` for a bad value, `EOPNOTSUPP` where the kernel says so.
    fn store(&mut self, attr: &str, value: &[u8], fx: &mut Effects) -> KResult<usize>;

    /// Stores bytes at an offset of a positional attribute (`direct`).
    ///
    /// # Errors
    /// `EOPNOTSUPP` unless the model has positional writable attributes.
    fn store_at(
        &mut self,
        attr: &str,
        offset: u64,
        value: &[u8],
        fx: &mut Effects,
    ) -> KResult<usize> {
        let _ = (attr, offset, value, fx);
        Err(libc::EOPNOTSUPP)
    }

    /// Sets what the device reports, bypassing `store` (a test injecting a
    /// position, a sensor value, a battery voltage). The text is taken as
    /// the attribute's new rendered value, without the trailing newline.
    ///
    /// # Errors
    /// `ENOENT` for an attribute the model cannot inject (the default: a
    /// model with nothing to inject), `EINVAL` for a value it cannot parse.
    fn inject(&mut self, attr: &str, value: &str, fx: &mut Effects) -> KResult<()> {
        let _ = (attr, value, fx);
        Err(libc::ENOENT)
    }

    /// Advances the device's simulated time by `dt` (motors move, timers
    /// fire, `state` changes are notified through `fx`).
    fn tick(&mut self, dt: Duration, fx: &mut Effects) {
        let _ = (dt, fx);
    }
}
