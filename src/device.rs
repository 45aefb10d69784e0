//! [`SysfsDevice`]: one ev3dev device directory and its open attributes.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::attr::{open_error, Access, Attribute, Backing};
use crate::error::{Error, Operation, Result};

/// Where sysfs classes live on a brick.
pub const DEFAULT_ROOT: &str = "/sys/class";

/// Environment variable that overrides [`DEFAULT_ROOT`], e.g. to run a
/// program against a simulated brick.
pub const ROOT_ENV: &str = "EV3SYSFS_ROOT";

/// The sysfs class root to use: `$EV3SYSFS_ROOT` when set and not empty,
/// otherwise [`DEFAULT_ROOT`].
pub fn default_root() -> PathBuf {
    match std::env::var_os(ROOT_ENV) {
        Some(root) if !root.is_empty() => PathBuf::from(root),
        _ => PathBuf::from(DEFAULT_ROOT),
    }
}

/// Checks that `name` is one plain file or directory name: not empty, not
/// `.` or `..`, without `/` or NUL. Attribute, class and device names all go
/// through this, so no name can reach outside the device directory.
///
/// # Errors
/// [`Error::InvalidName`].
pub fn validate_name(name: &str) -> Result<()> {
    if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\0']) {
        return Err(Error::InvalidName {
            name: name.to_owned(),
        });
    }
    Ok(())
}

/// Slots per cache chunk: a tacho motor has about 25 attributes.
const CHUNK: usize = 32;

/// An append-only list of open attributes. Lookups are lock-free (a
/// `OnceLock` that is set is read with one atomic load); only the first use
/// of an attribute opens it.
#[derive(Debug, Default)]
struct Cache {
    slots: [OnceLock<Attribute>; CHUNK],
    next: OnceLock<Box<Cache>>,
}

impl Cache {
    fn get_or_open(&self, name: &str, open: impl Fn() -> Result<Attribute>) -> Result<&Attribute> {
        let mut pending: Option<Attribute> = None;
        let mut chunk = self;
        loop {
            for slot in &chunk.slots {
                if let Some(attr) = slot.get() {
                    if attr.name() == name {
                        return Ok(attr);
                    }
                    continue;
                }
                // A free slot: open (once) and try to claim it. Another thread
                // may claim it first, for this or another name: then look on.
                let attr = match pending.take() {
                    Some(attr) => attr,
                    None => open()?,
                };
                if let Err(lost) = slot.set(attr) {
                    pending = Some(lost);
                }
                if let Some(attr) = slot.get() {
                    if attr.name() == name {
                        return Ok(attr);
                    }
                }
            }
            chunk = chunk.next.get_or_init(Box::default);
        }
    }
}

/// One ev3dev device directory, e.g. `/sys/class/tacho-motor/motor0`.
///
/// Attributes are opened on first use (or up front with
/// [`SysfsDevice::preopen`]) and stay open for the life of the device; after
/// that, [`SysfsDevice::write_int`] and friends cost one `pwrite` and
/// [`SysfsDevice::read_int`] one `pread`, with no allocation and no lock.
///
/// ```no_run
/// # fn main() -> ev3sysfs::Result<()> {
/// use ev3sysfs::SysfsDevice;
/// let motor = SysfsDevice::open("/sys/class", "tacho-motor", "motor0")?;
/// motor.write_int("speed_sp", 500)?;
/// motor.write_str("command", "run-forever")?;
/// println!("at {} counts", motor.read_int("position")?);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct SysfsDevice {
    dir: PathBuf,
    cache: Cache,
    /// What backs the directory, told apart at the first attribute's open
    /// and shared by the others (one `fstatfs` per device, not per
    /// attribute).
    backing: OnceLock<Backing>,
}

const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<SysfsDevice>();
    assert_send_sync::<Attribute>();
};

impl SysfsDevice {
    /// Opens device `name` of sysfs class `class` under `root`, e.g.
    /// `open("/sys/class", "tacho-motor", "motor0")`.
    ///
    /// # Errors
    /// [`Error::InvalidName`] for a class or name that is not one plain
    /// name; [`Error::Disconnected`] when the directory does not exist.
    pub fn open(root: impl AsRef<Path>, class: &str, name: &str) -> Result<SysfsDevice> {
        validate_name(class)?;
        validate_name(name)?;
        match SysfsDevice::from_dir(root.as_ref().join(class).join(name)) {
            Err(e @ Error::Disconnected { .. }) => {
                Err(crate::discover::no_brick(root.as_ref()).unwrap_or(e))
            }
            other => other,
        }
    }

    /// As [`SysfsDevice::open`], under [`default_root`] (`$EV3SYSFS_ROOT` or
    /// `/sys/class`).
    ///
    /// # Errors
    /// As [`SysfsDevice::open`].
    pub fn open_default(class: &str, name: &str) -> Result<SysfsDevice> {
        SysfsDevice::open(default_root(), class, name)
    }

    /// Uses the device directory `dir` as it is.
    ///
    /// # Errors
    /// [`Error::Disconnected`] when `dir` is not an existing directory.
    pub fn from_dir(dir: impl Into<PathBuf>) -> Result<SysfsDevice> {
        let dir = dir.into();
        match std::fs::metadata(&dir) {
            Ok(meta) if meta.is_dir() => Ok(SysfsDevice {
                dir,
                cache: Cache::default(),
                backing: OnceLock::new(),
            }),
            Ok(_) => Err(Error::from_io(
                &dir,
                Operation::Open,
                None,
                std::io::Error::from_raw_os_error(libc::ENOTDIR),
            )),
            Err(e) => Err(Error::from_io(&dir, Operation::Open, None, e)),
        }
    }

    /// The device directory `dir` a scan has just read from (so no `stat`
    /// to check it again).
    pub(crate) fn scanned(dir: &Path) -> SysfsDevice {
        SysfsDevice {
            dir: dir.to_path_buf(),
            cache: Cache::default(),
            backing: OnceLock::new(),
        }
    }

    /// The device directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The device's own name, e.g. `motor0`.
    pub fn name(&self) -> OsString {
        self.dir.file_name().map(OsString::from).unwrap_or_default()
    }

    /// A sub-directory of the device as a device of its own, e.g.
    /// `speed_pid` (holding `Kp`, `Ki`, `Kd`) of a tacho motor.
    ///
    /// # Errors
    /// [`Error::InvalidName`]; [`Error::Unsupported`] when this device has no
    /// such sub-directory; [`Error::Disconnected`] when the device is gone.
    pub fn child(&self, name: &str) -> Result<SysfsDevice> {
        validate_name(name)?;
        let dir = self.dir.join(name);
        if !dir.is_dir() {
            // Unsupported when this device lacks it, disconnected when the
            // device itself is gone.
            return Err(open_error(
                &dir,
                std::io::Error::from_raw_os_error(libc::ENOENT),
            ));
        }
        SysfsDevice::from_dir(dir)
    }

    /// The attribute `name`, opened on first use with the access mode its
    /// permission bits allow and then kept open.
    ///
    /// # Errors
    /// [`Error::InvalidName`]; [`Error::Unsupported`] when this device has no
    /// such attribute; [`Error::Disconnected`] when the device is gone;
    /// [`Error::PermissionDenied`].
    pub fn attribute(&self, name: &str) -> Result<&Attribute> {
        self.cache.get_or_open(name, || self.open_inferred(name))
    }

    /// Opens attribute `name` with the access mode its permission bits
    /// allow, as a handle of its own (not cached): what the typed devices
    /// keep in their fields.
    ///
    /// # Errors
    /// As [`SysfsDevice::attribute`].
    pub(crate) fn open_inferred(&self, name: &str) -> Result<Attribute> {
        validate_name(name)?;
        Attribute::open_inferred_on(self.dir.join(name), &self.backing)
    }

    /// Opens attributes up front so that their first use does not pay for
    /// the `open()`.
    ///
    /// # Errors
    /// The first error of [`SysfsDevice::attribute`].
    pub fn preopen(&self, names: &[&str]) -> Result<()> {
        names.iter().try_for_each(|n| self.attribute(n).map(drop))
    }

    /// Opens attribute `name` with an explicit access mode, as a handle of
    /// its own (not cached).
    ///
    /// # Errors
    /// As [`Attribute::open`], and [`Error::InvalidName`].
    pub fn open_attribute(&self, name: &str, access: Access) -> Result<Attribute> {
        validate_name(name)?;
        Attribute::open_on(self.dir.join(name), access, &self.backing)
    }

    /// `true` when the device directory still exists.
    pub fn is_present(&self) -> bool {
        self.dir.is_dir()
    }

    /// Reads integer attribute `name`: one `pread` once open.
    ///
    /// # Errors
    /// As [`SysfsDevice::attribute`] and [`Attribute::read_int`].
    pub fn read_int(&self, name: &str) -> Result<i32> {
        self.attribute(name)?.read_int()
    }

    /// Reads text attribute `name` and hands it to `parse` without
    /// allocating.
    ///
    /// # Errors
    /// As [`SysfsDevice::attribute`] and [`Attribute::read_text`].
    pub fn read_text<R>(&self, name: &str, parse: impl FnOnce(&str) -> Result<R>) -> Result<R> {
        self.attribute(name)?.read_text(parse)
    }

    /// Reads text attribute `name` into a new `String` (allocates).
    ///
    /// # Errors
    /// As [`SysfsDevice::read_text`].
    pub fn read_string(&self, name: &str) -> Result<String> {
        self.attribute(name)?.read_string()
    }

    /// Writes integer attribute `name`: one `pwrite` once open.
    ///
    /// # Errors
    /// As [`SysfsDevice::attribute`] and [`Attribute::write_int`].
    pub fn write_int(&self, name: &str, value: i64) -> Result<()> {
        self.attribute(name)?.write_int(value)
    }

    /// Writes text attribute `name`: one `pwrite` once open.
    ///
    /// # Errors
    /// As [`SysfsDevice::attribute`] and [`Attribute::write_str`].
    pub fn write_str(&self, name: &str, value: &str) -> Result<()> {
        self.attribute(name)?.write_str(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_validated() {
        for bad in ["", ".", "..", "a/b", "/etc", "speed_sp\0", "../motor1"] {
            assert!(
                matches!(validate_name(bad), Err(Error::InvalidName { .. })),
                "{bad:?}"
            );
        }
        for good in [
            "speed_sp",
            "motor0",
            "led0:green:brick-status",
            "..x",
            "a.b",
        ] {
            assert!(validate_name(good).is_ok(), "{good:?}");
        }
    }

    #[test]
    fn root_from_env_or_default() {
        // Only this test touches the variable in this test binary.
        std::env::remove_var(ROOT_ENV);
        assert_eq!(default_root(), PathBuf::from(DEFAULT_ROOT));
        std::env::set_var(ROOT_ENV, "/tmp/mock-sys/class");
        assert_eq!(default_root(), PathBuf::from("/tmp/mock-sys/class"));
        std::env::set_var(ROOT_ENV, "");
        assert_eq!(default_root(), PathBuf::from(DEFAULT_ROOT));
        std::env::remove_var(ROOT_ENV);
    }
}
