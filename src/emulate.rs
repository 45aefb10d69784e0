//! Sysfs store semantics on regular files (mock trees).
//!
//! A sysfs store replaces the whole value; a regular file keeps stale tail
//! bytes ("stop" written over "run-forever" leaves "stop-forever"). On a
//! non-sysfs file every write therefore replaces the whole contents, under
//! locks (a mutex for threads sharing one file description, `flock` for other
//! descriptors and processes) so that no reader sees a torn value; an
//! unlinked file stands for an unplugged device (`ENODEV`); and when the
//! mock tree has a write journal, each store is recorded there for a
//! simulator. Sysfs itself never takes this path.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;
use std::sync::Mutex;

use crate::value;

/// Whole-value store emulation for a regular (mock) file.
#[derive(Debug)]
pub(crate) struct Emulation {
    /// Serialises threads sharing this file description (`flock` does not,
    /// as they hold the same lock).
    lock: Mutex<()>,
    /// The mock tree's write journal, when it has one.
    journal: Option<Journal>,
}

/// Name of the write journal at the root of a mock tree. When it exists,
/// every emulated store appends one record to it, so that a simulator sees
/// every write, in order, even the same value twice.
pub const JOURNAL_NAME: &str = ".ev3sysfs-journal";

/// How many directories above an attribute file the journal is looked for
/// (`root/class/device/sub/attr`).
const JOURNAL_SEARCH_DEPTH: usize = 4;

#[derive(Debug)]
struct Journal {
    file: File,
    /// The attribute path relative to the journal's directory.
    key: Box<[u8]>,
}

impl Journal {
    fn find(path: &Path) -> Option<Journal> {
        let mut dir = path.parent();
        for _ in 0..JOURNAL_SEARCH_DEPTH {
            let d = dir?;
            let candidate = d.join(JOURNAL_NAME);
            if candidate.is_file() {
                let file = OpenOptions::new().append(true).open(&candidate).ok()?;
                let key = path.strip_prefix(d).ok()?.as_os_str().as_encoded_bytes();
                return Some(Journal {
                    file,
                    key: key.into(),
                });
            }
            dir = d.parent();
        }
        None
    }

    /// Appends `"<key len> <value len>\n<key><value>\n"` with one `writev` on
    /// an `O_APPEND` file: atomic and ordered among all writers, no
    /// allocation.
    fn record(&self, value: &[u8]) -> io::Result<()> {
        use std::io::{IoSlice, Write};
        let mut header = [0u8; 2 * value::INT_BUF_LEN + 2];
        let mut len = 0;
        for (i, n) in [self.key.len(), value.len()].into_iter().enumerate() {
            let mut buf = [0u8; value::INT_BUF_LEN];
            // Lengths are at most a path or a page: they fit in i64.
            let digits = value::format_int(n as i64, &mut buf);
            header[len..len + digits.len()].copy_from_slice(digits);
            len += digits.len();
            header[len] = if i == 0 { b' ' } else { b'\n' };
            len += 1;
        }
        let parts = [
            IoSlice::new(&header[..len]),
            IoSlice::new(&self.key),
            IoSlice::new(value),
            IoSlice::new(b"\n"),
        ];
        let total = len + self.key.len() + value.len() + 1;
        let written = (&self.file).write_vectored(&parts)?;
        if written != total {
            return Err(io::Error::new(
                io::ErrorKind::WriteZero,
                "short journal write",
            ));
        }
        Ok(())
    }
}

impl Emulation {
    /// The emulation for the regular file at `path`, with the tree's
    /// journal if there is one.
    pub(crate) fn new(path: &Path) -> Emulation {
        Emulation {
            lock: Mutex::new(()),
            journal: Journal::find(path),
        }
    }

    /// Replaces the whole value of `file` (see the module docs).
    pub(crate) fn store(&self, file: &File, bytes: &[u8]) -> io::Result<usize> {
        let _guard = self
            .lock
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let written = locked(file, true, || {
            check_linked(file)?;
            store_whole(file, bytes)
        })?;
        if let Some(journal) = &self.journal {
            journal.record(bytes)?;
        }
        Ok(written)
    }

    /// Reads `file` at offset 0 under the shared lock.
    pub(crate) fn load(&self, file: &File, buf: &mut [u8]) -> io::Result<usize> {
        let _guard = self
            .lock
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        locked(file, false, || {
            check_linked(file)?;
            file.read_at(buf, 0)
        })
    }
}

/// An unlinked mock file stands for an unplugged device.
pub(crate) fn check_linked(file: &File) -> io::Result<()> {
    if file.metadata()?.nlink() == 0 {
        return Err(io::Error::from_raw_os_error(libc::ENODEV));
    }
    Ok(())
}

/// Runs `f` holding an advisory lock on `file`'s open file description
/// (`flock`): exclusive to store, shared to load. Every writer of a mock tree
/// (this crate, the mock's own inject functions, the simulator) takes it, so
/// readers never see a half-stored value, even across processes.
pub(crate) fn locked<R>(
    file: &File,
    exclusive: bool,
    f: impl FnOnce() -> io::Result<R>,
) -> io::Result<R> {
    if exclusive {
        file.lock()?;
    } else {
        file.lock_shared()?;
    }
    let result = f();
    let unlocked = file.unlock();
    let value = result?;
    unlocked?;
    Ok(value)
}

/// Replaces the whole contents of a regular file with `bytes`, the way a
/// sysfs store replaces a value. Truncates first, so that an unlocked reader
/// sees the old value, nothing, or the new value, never a mix.
pub(crate) fn store_whole(file: &File, bytes: &[u8]) -> io::Result<usize> {
    file.set_len(0)?;
    file.write_at(bytes, 0)
}
