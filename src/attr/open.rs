//! Opening an attribute: what backs it, the file-type check and the errors
//! of `open`.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::Backing;
use crate::error::{Error, Operation};

/// Whether an attribute's file type was checked before its `openat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Checked {
    /// By the `stat` that inferred the access mode.
    ByStat,
    /// Not yet: one `fstat` after the `openat`.
    No,
}

/// The error for an attribute path that is not a regular file.
#[cold]
pub(super) fn not_regular(path: PathBuf) -> Error {
    Error::Io {
        source: io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file: an attribute file is never a FIFO, \
             a directory or a device node",
        ),
        path,
        operation: Operation::Open,
    }
}

/// The backing of `file`, told once per device: `known` holds it after the
/// first attribute.
pub(super) fn backing_once(file: &File, known: &OnceLock<Backing>) -> io::Result<Backing> {
    match known.get() {
        Some(&b) => Ok(b),
        None => backing(file).map(|b| *known.get_or_init(|| b)),
    }
}

/// Maps an open error; a missing attribute in a device directory that still
/// exists means the driver does not have it, not that the device is gone.
pub(crate) fn open_error(path: &Path, e: io::Error) -> Error {
    if e.raw_os_error() == Some(libc::ENOENT) {
        if let Some(dir) = path.parent() {
            if dir.is_dir() {
                return Error::Unsupported {
                    path: path.to_path_buf(),
                    operation: Operation::Open,
                    source: e,
                };
            }
        }
    }
    Error::from_io(path, Operation::Open, None, e)
}

/// Tells the backing apart: one `fstatfs`, and on FUSE one `fgetxattr` for
/// the simulated brick's marker.
pub(super) fn backing(file: &File) -> io::Result<Backing> {
    use nix::sys::statfs::{fstatfs, FUSE_SUPER_MAGIC, SYSFS_MAGIC};
    let stat = fstatfs(file).map_err(io::Error::from)?;
    let kind = stat.filesystem_type();
    Ok(if kind == SYSFS_MAGIC {
        Backing::Sysfs
    } else if kind == FUSE_SUPER_MAGIC && crate::sys::has_marker_xattr(file) {
        Backing::SimulatedBrick
    } else {
        Backing::Other
    })
}
