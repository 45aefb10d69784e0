//! The crate's one error type.
//!
//! Every error keeps its cause: the attribute path, the value that was written
//! or the raw text that was read, and the operating-system error behind it
//! (reachable through [`std::error::Error::source`] and [`Error::errno`]).

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

mod report;

/// `Result` with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

/// What the crate was doing with an attribute file when the error happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// Opening the attribute file (or the device directory).
    Open,
    /// Reading the attribute value.
    Read,
    /// Writing (storing) a value.
    Write,
    /// Waiting for the attribute to change (`poll`).
    Poll,
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Operation::Open => "open",
            Operation::Read => "read",
            Operation::Write => "write",
            Operation::Poll => "poll",
        })
    }
}

/// Everything that can go wrong when talking to ev3dev devices.
///
/// The variants follow what the kernel tells us: every rejected value is
/// `EINVAL` ([`Error::InvalidValue`]), an unplugged device is `ENODEV` or
/// `ENOENT` ([`Error::Disconnected`]), an attribute the driver does not
/// implement is `EOPNOTSUPP` ([`Error::Unsupported`]) and a missing `ev3dev`
/// group membership is `EACCES` ([`Error::PermissionDenied`]).
///
/// `Debug` prints the same sentence as `Display` (what, where, why, what to
/// do), so that `fn main() -> ev3sysfs::Result<()>` ends with a message a
/// person reads; `{:#?}` prints the structured fields.
#[non_exhaustive]
pub enum Error {
    /// The kernel rejected the value (`EINVAL`, also `ERANGE` for integers
    /// that do not fit in 32 bits).
    InvalidValue {
        /// Attribute file.
        path: PathBuf,
        /// The value that was written, as text.
        value: String,
        /// The operating-system error.
        source: io::Error,
    },
    /// The device is gone: unplugged, or re-registered under a new number
    /// (`ENODEV`, `ENOENT`, `ENXIO` at open).
    Disconnected {
        /// Attribute file or device directory.
        path: PathBuf,
        /// What was being done.
        operation: Operation,
        /// The operating-system error.
        source: io::Error,
    },
    /// The driver does not support this attribute or operation
    /// (`EOPNOTSUPP`, `ENOTSUP`, `ENOSYS`, or `ENXIO` on read, e.g. `valueN`
    /// beyond `num_values`).
    Unsupported {
        /// Attribute file.
        path: PathBuf,
        /// What was being done.
        operation: Operation,
        /// The operating-system error.
        source: io::Error,
    },
    /// Access was refused (`EACCES`, `EPERM`).
    ///
    /// On a brick the user must be in the `ev3dev` group; on sysfs, opening a
    /// write-only attribute for reading (or the reverse) also fails this way.
    PermissionDenied {
        /// Attribute file.
        path: PathBuf,
        /// What was being done.
        operation: Operation,
        /// The operating-system error.
        source: io::Error,
    },
    /// Any other operating-system error.
    Io {
        /// Attribute file or device directory.
        path: PathBuf,
        /// What was being done.
        operation: Operation,
        /// The operating-system error.
        source: io::Error,
    },
    /// The attribute's contents could not be understood.
    Parse {
        /// Attribute file.
        path: PathBuf,
        /// The raw contents (lossily decoded, at most 4096 bytes).
        raw: String,
        /// What was expected, e.g. "a decimal integer".
        expected: &'static str,
    },
    /// The value is outside what the device accepts; nothing was written.
    OutOfRange {
        /// Attribute the value was meant for.
        attribute: &'static str,
        /// The rejected value.
        value: i64,
        /// Smallest accepted value.
        min: i64,
        /// Largest accepted value.
        max: i64,
    },
    /// The device does not offer this choice (command, stop action, mode...);
    /// nothing was written.
    NotOffered {
        /// Attribute the value was meant for.
        attribute: &'static str,
        /// The rejected value.
        value: String,
        /// What the device offers (space-separated, as in the kernel list).
        offered: String,
    },
    /// An attribute or device name that could escape the device directory
    /// (empty, `.`, `..`, or containing `/` or NUL).
    InvalidName {
        /// The offending name.
        name: String,
    },
    /// No device matched a search.
    NotFound {
        /// What was searched for, e.g. "tacho-motor on port outA".
        what: String,
        /// What was seen instead (devices, drivers), to help the user.
        seen: String,
    },
    /// Several devices matched a search that needs exactly one.
    Ambiguous {
        /// What was searched for.
        what: String,
        /// The matching device directories.
        matches: Vec<PathBuf>,
    },
    /// The stop guard has fired (panic, fatal signal, end of the program,
    /// or the guard was dropped): run commands on the motors it protected
    /// are refused, so that no other thread restarts them; nothing was
    /// written.
    GuardStopped {
        /// The motor's device directory.
        path: PathBuf,
    },
    /// Every stop guard slot is in use ([`crate::guard::CAPACITY`] motors).
    GuardFull {
        /// How many motors can be protected at once.
        capacity: usize,
    },
    /// A port name that no EV3 port has (`outE`, `in5`); nothing was
    /// searched.
    UnknownPort {
        /// The name as given.
        port: String,
        /// The ports of that kind, e.g. `outA outB outC outD`.
        valid: &'static str,
    },
    /// No EV3 brick here: the sysfs root has none of ev3dev's device
    /// classes (a laptop, a container). The message says how to run the
    /// program under the simulated brick (`ev3-sim`).
    NoBrick {
        /// The sysfs class root that was searched.
        root: PathBuf,
        /// Whether the root came from `$EV3SYSFS_ROOT`.
        from_env: bool,
    },
    /// A gyro's angle changed while the robot stood still: it drifts, and
    /// a heading held with it would turn the robot in a slow spiral.
    GyroDrift {
        /// The gyro's address, e.g. `ev3-ports:in2`.
        address: String,
        /// How far the angle moved, in degrees.
        degrees: i32,
        /// Over how long.
        over: std::time::Duration,
    },
    /// A wait did not see its condition before the timeout.
    Timeout {
        /// What was being waited for.
        what: String,
        /// How long was waited.
        waited: std::time::Duration,
    },
}

impl Error {
    /// Maps an operating-system error on an attribute to the right variant.
    ///
    /// `value` is the text that was written, for write errors.
    #[doc(hidden)] // used by the simulated brick (ev3sysfs-sim)
    pub fn from_io(
        path: &Path,
        operation: Operation,
        value: Option<&[u8]>,
        source: io::Error,
    ) -> Error {
        let path = path.to_path_buf();
        match source.raw_os_error() {
            Some(libc::EINVAL) | Some(libc::ERANGE) if operation == Operation::Write => {
                Error::InvalidValue {
                    path,
                    value: value.map(lossy).unwrap_or_default(),
                    source,
                }
            }
            Some(libc::ENODEV) | Some(libc::ENOENT) => Error::Disconnected {
                path,
                operation,
                source,
            },
            Some(libc::ENXIO) if operation == Operation::Open => Error::Disconnected {
                path,
                operation,
                source,
            },
            Some(libc::EOPNOTSUPP) | Some(libc::ENOSYS) | Some(libc::ENXIO) => Error::Unsupported {
                path,
                operation,
                source,
            },
            Some(libc::EACCES) | Some(libc::EPERM) => Error::PermissionDenied {
                path,
                operation,
                source,
            },
            _ => Error::Io {
                path,
                operation,
                source,
            },
        }
    }

    #[doc(hidden)] // used by the simulated brick (ev3sysfs-sim)
    pub fn parse(path: &Path, raw: &[u8], expected: &'static str) -> Error {
        Error::Parse {
            path: path.to_path_buf(),
            raw: lossy(raw),
            expected,
        }
    }

    /// The operating-system error number behind this error, if there is one.
    pub fn errno(&self) -> Option<i32> {
        self.io_source().and_then(io::Error::raw_os_error)
    }

    /// The attribute file or device directory concerned, if there is one.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Error::InvalidValue { path, .. }
            | Error::Disconnected { path, .. }
            | Error::Unsupported { path, .. }
            | Error::PermissionDenied { path, .. }
            | Error::Io { path, .. }
            | Error::Parse { path, .. }
            | Error::GuardStopped { path }
            | Error::NoBrick { root: path, .. } => Some(path),
            _ => None,
        }
    }

    /// `true` when the device has gone away (unplugged or re-registered):
    /// re-discover it by port to continue.
    pub fn is_disconnected(&self) -> bool {
        matches!(self, Error::Disconnected { .. })
    }

    fn io_source(&self) -> Option<&io::Error> {
        match self {
            Error::InvalidValue { source, .. }
            | Error::Disconnected { source, .. }
            | Error::Unsupported { source, .. }
            | Error::PermissionDenied { source, .. }
            | Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

fn lossy(bytes: &[u8]) -> String {
    let end = bytes.len().min(crate::attr::MAX_VALUE_LEN);
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidValue {
                path,
                value,
                source,
            } => write!(
                f,
                "{}: the driver rejected the value {:?} ({source}); check the allowed range or choices",
                path.display(),
                value.trim_end()
            ),
            Error::Disconnected {
                path,
                operation,
                source,
            } => write!(
                f,
                "{}: device disconnected during {operation} ({source}); plug it back in and find it again by port",
                path.display()
            ),
            Error::Unsupported {
                path,
                operation,
                source,
            } => write!(
                f,
                "{}: not supported by this driver or mode ({operation}: {source})",
                path.display()
            ),
            Error::PermissionDenied {
                path,
                operation,
                source,
            } => write!(
                f,
                "{}: permission denied on {operation} ({source}); on a brick, run as a member of the \
                 'ev3dev' group (the default 'robot' user is); note that sysfs also refuses to open a \
                 write-only attribute for reading and a read-only one for writing",
                path.display()
            ),
            Error::Io {
                path,
                operation,
                source,
            } => write!(f, "{}: {operation} failed: {source}", path.display()),
            Error::Parse {
                path,
                raw,
                expected,
            } => write!(
                f,
                "{}: expected {expected}, found {:?}",
                path.display(),
                raw
            ),
            Error::OutOfRange {
                attribute,
                value,
                min,
                max,
            } => write!(
                f,
                "{attribute}: {value} is out of range {min}..={max}; nothing was written"
            ),
            Error::NotOffered {
                attribute,
                value,
                offered,
            } => write!(
                f,
                "{attribute}: {value:?} is not offered by this device (it offers: {offered}); nothing was written"
            ),
            Error::GuardStopped { path } => write!(
                f,
                "{}: the stop guard has stopped this motor (panic, signal or end of the program); \
                 run commands are refused from now on; nothing was written",
                path.display()
            ),
            Error::GuardFull { capacity } => write!(
                f,
                "the stop guard already protects {capacity} motors (its capacity); release motors \
                 that are gone (StopGuard::release) or protect each motor once"
            ),
            Error::InvalidName { name } => write!(
                f,
                "invalid attribute or device name {name:?}: names must be non-empty and must not \
                 contain '/', NUL or be '.' or '..'"
            ),
            Error::NotFound { what, seen } => {
                write!(f, "no {what} found")?;
                if seen.is_empty() {
                    Ok(())
                } else {
                    write!(f, " (seen: {seen})")
                }
            }
            Error::Ambiguous { what, matches } => {
                write!(f, "{} devices match {what}:", matches.len())?;
                for m in matches {
                    write!(f, " {}", m.display())?;
                }
                write!(f, "; name a port or driver to choose one")
            }
            Error::Timeout { what, waited } => {
                write!(f, "timed out after {waited:?} waiting for {what}")
            }
            Error::GyroDrift {
                address,
                degrees,
                over,
            } => write!(
                f,
                "gyro on {address}: its angle moved {degrees}° in {over:?} while the robot stood \
                 still (drift); keep the robot still and recalibrate (GyroSensor::calibrate), or \
                 unplug the gyro and plug it back in while still"
            ),
            Error::UnknownPort { port, valid } => write!(
                f,
                "there is no port {port:?} on an EV3; the ports are: {valid}"
            ),
            Error::NoBrick { root, from_env } => {
                let env = crate::device::ROOT_ENV;
                if *from_env {
                    write!(f, "no EV3 devices under {} (from ${env}): is the simulated brick mounted there? ", root.display())?;
                } else {
                    write!(f, "no EV3 brick here ({} has no ev3dev devices); ", root.display())?;
                }
                write!(
                    f,
                    "to run on this machine, use the simulated brick: `sudo ev3-sim --over-sys-class -- \
                     <your program>`, or `ev3-sim --mount /tmp/brick &` then `{env}=/tmp/brick <your \
                     program>` (ev3-sim --help lists the devices)"
                )
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.io_source()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    fn map(errno: i32, op: Operation) -> Error {
        Error::from_io(
            Path::new("/sys/class/tacho-motor/motor0/speed_sp"),
            op,
            Some(b"9999"),
            io::Error::from_raw_os_error(errno),
        )
    }

    #[test]
    fn errno_mapping() {
        assert!(matches!(
            map(libc::EINVAL, Operation::Write),
            Error::InvalidValue { ref value, .. } if value == "9999"
        ));
        assert!(matches!(
            map(libc::ERANGE, Operation::Write),
            Error::InvalidValue { .. }
        ));
        assert!(map(libc::ENODEV, Operation::Read).is_disconnected());
        assert!(map(libc::ENOENT, Operation::Open).is_disconnected());
        assert!(map(libc::ENXIO, Operation::Open).is_disconnected());
        assert!(matches!(
            map(libc::ENXIO, Operation::Read),
            Error::Unsupported { .. }
        ));
        assert!(matches!(
            map(libc::EOPNOTSUPP, Operation::Read),
            Error::Unsupported { .. }
        ));
        assert!(matches!(
            map(libc::EACCES, Operation::Open),
            Error::PermissionDenied { .. }
        ));
        assert!(matches!(
            map(libc::EPERM, Operation::Write),
            Error::PermissionDenied { .. }
        ));
        assert!(matches!(map(libc::EIO, Operation::Read), Error::Io { .. }));
    }

    #[test]
    fn keeps_cause() {
        let e = map(libc::EINVAL, Operation::Write);
        assert_eq!(e.errno(), Some(libc::EINVAL));
        assert!(e.source().is_some());
        assert_eq!(
            e.path(),
            Some(Path::new("/sys/class/tacho-motor/motor0/speed_sp"))
        );
        let text = e.to_string();
        assert!(text.contains("speed_sp"), "{text}");
        assert!(text.contains("9999"), "{text}");
        let denied = map(libc::EACCES, Operation::Open).to_string();
        assert!(denied.contains("ev3dev"), "{denied}");
    }
}
