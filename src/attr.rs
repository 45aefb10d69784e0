//! One open attribute file: the I/O core of the crate.
//!
//! An [`Attribute`] is opened once, with `O_SYNC | O_CLOEXEC` and the access
//! mode the attribute allows, and kept open. On sysfs:
//!
//! * a write is exactly one `pwrite(fd, bytes, 0)`: the kernel hands the whole
//!   buffer to the driver's `store()` in one call, whatever the offset;
//! * a read is exactly one `pread(fd, buf, 0)` into a stack buffer: at offset
//!   0 the kernel renders the value afresh (`show()`), so no `lseek` is needed.
//!
//! No heap allocation, no seek, no reopen happens on these paths, and since
//! positional I/O has no shared file cursor an `Attribute` is used through
//! `&self` from any number of threads without a lock.
//!
//! The same holds on every backing: real sysfs, the simulated brick (a FUSE
//! file system whose files behave like sysfs's, see the `ev3sysfs-sim` crate) or any
//! other file. There is no emulation branch: the file system behind the
//! descriptor does what sysfs does, or it does not.
//!
//! Attribute files are opened with `O_NONBLOCK | O_NOFOLLOW`: a FIFO in the
//! tree cannot block the open and a symbolic link in the attribute's place
//! is not followed (the device directory itself may be reached through the
//! class symlink, as sysfs has it). What is opened must be a regular file:
//! the `stat` that infers the access mode tells (no `fstat` after the
//! `openat`), and an open with an explicit mode checks with one `fstat`.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::error::{Error, Operation, Result};
use crate::value;

mod change;
mod open;
pub use change::UNPLUG_CHECK;
pub(crate) use open::open_error;
use open::{backing, backing_once, not_regular, Checked};

/// The largest value sysfs renders: a `show()` is capped at PAGE_SIZE - 1
/// bytes (4095 on the EV3), and a store is capped at PAGE_SIZE.
pub const MAX_VALUE_LEN: usize = 4096;

/// Reads start with a buffer of this size; almost every value fits. Longer
/// values (LED trigger lists) are read again with a page-sized buffer.
const SMALL_READ: usize = 256;

/// How an attribute file is opened. Sysfs refuses (`EACCES`, even for root)
/// to open a write-only attribute for reading or a read-only one for writing,
/// so this must match the attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// `O_RDONLY`, e.g. `position`, `state`, `commands`.
    ReadOnly,
    /// `O_WRONLY`, e.g. `command`.
    WriteOnly,
    /// `O_RDWR`, e.g. `speed_sp`, `mode`.
    ReadWrite,
}

impl Access {
    /// Infers the access mode an attribute file allows from its permission
    /// bits: any read bit allows reading and any write bit writing (see
    /// [`Access::from_mode`]); right for the kernel's modes (0444, 0644,
    /// 0200), for those udev sets on a brick (0444, 0664, 0220) and for the
    /// simulated brick's.
    ///
    /// # Errors
    /// [`Error::Disconnected`] when the file does not exist, or the error of
    /// `stat`.
    pub fn of_file(path: &Path) -> Result<Access> {
        let meta = std::fs::metadata(path).map_err(|e| open_error(path, e))?;
        Ok(Access::from_mode(meta.mode()))
    }

    /// [`Access::of_file`] of a regular file; anything else (a FIFO, a
    /// directory, a device node) is an error, told by the same `stat`.
    fn of_regular_file(path: &Path) -> Result<Access> {
        let meta = std::fs::metadata(path).map_err(|e| open_error(path, e))?;
        if !meta.file_type().is_file() {
            return Err(not_regular(path.to_path_buf()));
        }
        Ok(Access::from_mode(meta.mode()))
    }

    /// The access mode that sysfs permission bits `mode` allow: any read bit
    /// allows reading, any write bit writing. A file with no bits at all is
    /// read-only.
    pub fn from_mode(mode: u32) -> Access {
        Access::from_bits(mode & 0o444 != 0, mode & 0o222 != 0)
    }

    fn from_bits(readable: bool, writable: bool) -> Access {
        match (readable, writable) {
            (true, true) => Access::ReadWrite,
            (false, true) => Access::WriteOnly,
            _ => Access::ReadOnly,
        }
    }

    /// `true` for [`Access::ReadOnly`] and [`Access::ReadWrite`].
    pub fn can_read(self) -> bool {
        self != Access::WriteOnly
    }

    /// `true` for [`Access::WriteOnly`] and [`Access::ReadWrite`].
    pub fn can_write(self) -> bool {
        self != Access::ReadOnly
    }
}

/// What backs an open attribute (told apart at open, once per device for
/// the attributes a [`crate::SysfsDevice`] opens, for reports such as
/// `ev3-probe`'s header; I/O is the same on all of them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Backing {
    /// Real sysfs (kernfs).
    Sysfs,
    /// The simulated brick: a FUSE file system with this crate's marker
    /// (the `ev3sysfs-sim` crate, `ev3-sim`).
    SimulatedBrick,
    /// Any other file system (a static snapshot of captured files, ...).
    Other,
}

/// One attribute file, opened once and kept open.
///
/// `Send + Sync`; every method takes `&self`.
#[derive(Debug)]
pub struct Attribute {
    file: File,
    name: Box<str>,
    path: PathBuf,
    access: Access,
    backing: Backing,
}

impl Attribute {
    /// Opens the attribute file at `path` with `O_SYNC | O_CLOEXEC |
    /// O_NONBLOCK | O_NOFOLLOW` and the given access mode.
    ///
    /// # Errors
    /// [`Error::Disconnected`] if the file (or its device) does not exist,
    /// [`Error::PermissionDenied`] if the mode is refused, [`Error::Io`]
    /// otherwise, also when the last component is a symbolic link (`ELOOP`)
    /// or not a regular file (a FIFO, a directory, a device node).
    pub fn open(path: impl Into<PathBuf>, access: Access) -> Result<Attribute> {
        Attribute::open_with(path.into(), access, Checked::No, backing)
    }

    /// As [`Attribute::open_inferred`], the backing told apart once per
    /// device (`known`, shared by a device's attributes: one directory is
    /// on one file system) instead of once per attribute: an attribute
    /// costs a `stat` and an `openat`.
    pub(crate) fn open_inferred_on(path: PathBuf, known: &OnceLock<Backing>) -> Result<Attribute> {
        let access = Access::of_regular_file(&path)?;
        Attribute::open_with(path, access, Checked::ByStat, |file| {
            backing_once(file, known)
        })
    }

    /// As [`Attribute::open`], the backing told apart once per device (see
    /// [`Attribute::open_inferred_on`]).
    pub(crate) fn open_on(
        path: PathBuf,
        access: Access,
        known: &OnceLock<Backing>,
    ) -> Result<Attribute> {
        Attribute::open_with(path, access, Checked::No, |file| backing_once(file, known))
    }

    /// [`Attribute::open`], the backing told by `backing_of`; the file's
    /// type checked with an `fstat` unless `checked` says the `stat` that
    /// chose `access` did (a file swapped for another kind between the two
    /// calls is one that O_NOFOLLOW and O_NONBLOCK keep harmless: a
    /// directory fails its reads, a FIFO never blocks).
    fn open_with(
        path: PathBuf,
        access: Access,
        checked: Checked,
        backing_of: impl FnOnce(&File) -> io::Result<Backing>,
    ) -> Result<Attribute> {
        let name: Box<str> = path
            .file_name()
            .map(|n| n.to_string_lossy().into())
            .unwrap_or_default();
        let mode = match access {
            Access::ReadOnly => libc::O_RDONLY,
            Access::WriteOnly => libc::O_WRONLY,
            Access::ReadWrite => libc::O_RDWR,
        };
        let file = crate::sys::open_cloexec(
            &path,
            mode | libc::O_SYNC | libc::O_NONBLOCK | libc::O_NOFOLLOW,
        )
        .map_err(|e| open_error(&path, e))?;
        if checked == Checked::No {
            let meta = file.metadata().map_err(|e| open_error(&path, e))?;
            if !meta.file_type().is_file() {
                return Err(not_regular(path));
            }
        }
        let backing = backing_of(&file).map_err(|e| open_error(&path, e))?;
        log::trace!("opened {} ({access:?}, {backing:?})", path.display());
        Ok(Attribute {
            file,
            name,
            path,
            access,
            backing,
        })
    }

    /// Opens the attribute file at `path` with the access mode its permission
    /// bits allow (see [`Access::of_file`]).
    ///
    /// # Errors
    /// As [`Attribute::open`].
    pub fn open_inferred(path: impl Into<PathBuf>) -> Result<Attribute> {
        let path = path.into();
        let access = Access::of_regular_file(&path)?;
        Attribute::open_with(path, access, Checked::ByStat, backing)
    }

    /// The file name of the attribute, e.g. `speed_sp`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The full path of the attribute file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The access mode the file was opened with.
    pub fn access(&self) -> Access {
        self.access
    }

    /// What backs the file: real sysfs, the simulated brick, or another
    /// file system.
    pub fn backing(&self) -> Backing {
        self.backing
    }

    /// The open file descriptor, e.g. to `poll()` it with other files.
    pub fn as_fd(&self) -> BorrowedFd<'_> {
        self.file.as_fd()
    }

    // ----- writing -------------------------------------------------------

    /// Writes raw bytes as the whole new value: one `pwrite(fd, bytes, 0)` on
    /// sysfs. A trailing newline is neither needed nor added.
    ///
    /// # Errors
    /// [`Error::InvalidValue`] when the driver rejects the value (`EINVAL`),
    /// [`Error::Disconnected`] when the device is gone, others as mapped by
    /// [`Error`]. An empty value or one longer than [`MAX_VALUE_LEN`] is
    /// refused without a syscall ([`Error::InvalidValue`]), since sysfs would
    /// silently ignore or cut it.
    #[inline(always)]
    pub fn write_bytes(&self, bytes: &[u8]) -> Result<()> {
        if bytes.is_empty() || bytes.len() > MAX_VALUE_LEN {
            return Err(self.write_error(bytes, Err(nix::errno::Errno::EINVAL)));
        }
        self.write_checked(bytes)
    }

    /// [`Attribute::write_bytes`] of a value known to be 1 to
    /// [`MAX_VALUE_LEN`] bytes long: the access check, one `pwrite`, and a
    /// compare on the way to success; everything else out of line.
    #[inline(always)]
    fn write_checked(&self, bytes: &[u8]) -> Result<()> {
        if !self.access.can_write() {
            return Err(self.wrong_access(Operation::Write));
        }
        // The libc call itself, inlined here (src/sys/mod.rs): std's `write_at`
        // and nix's `pwrite` are out-of-line functions.
        let written = crate::sys::pwrite_at_start(self.file.as_fd(), bytes);
        if written == Ok(bytes.len()) {
            Ok(())
        } else {
            Err(self.write_error(bytes, written))
        }
    }

    /// The error of a write that `pwrite` answered with `written` (an errno,
    /// or fewer bytes than the value has), out of line.
    #[cold]
    #[inline(never)]
    fn write_error(
        &self,
        bytes: &[u8],
        written: std::result::Result<usize, nix::errno::Errno>,
    ) -> Error {
        let e = match written {
            Ok(_) => io::Error::new(
                io::ErrorKind::WriteZero,
                "short write: the kernel took only part of the value",
            ),
            Err(errno) => io::Error::from_raw_os_error(errno as i32),
        };
        Error::from_io(&self.path, Operation::Write, Some(bytes), e)
    }

    /// Writes a string value (command, stop action, mode...).
    ///
    /// # Errors
    /// As [`Attribute::write_bytes`].
    #[inline(always)]
    pub fn write_str(&self, value: &str) -> Result<()> {
        self.write_bytes(value.as_bytes())
    }

    /// Writes an integer, formatted in decimal in a stack buffer (inline, no
    /// call into std's formatting machinery).
    ///
    /// # Errors
    /// As [`Attribute::write_bytes`]; the kernel rejects integers that do not
    /// fit in 32 bits with [`Error::InvalidValue`].
    #[inline(always)]
    pub fn write_int(&self, value: i64) -> Result<()> {
        match i32::try_from(value) {
            // Every ev3dev number: 1 to 11 bytes, no length check needed.
            Ok(value) => {
                let mut buf = [0u8; value::I32_BUF_LEN];
                self.write_checked(value::format_i32(value, &mut buf))
            }
            Err(_) => self.write_wide_int(value),
        }
    }

    /// [`Attribute::write_int`] of a value beyond 32 bits, out of line.
    #[cold]
    #[inline(never)]
    fn write_wide_int(&self, value: i64) -> Result<()> {
        let mut buf = [0u8; value::INT_BUF_LEN];
        self.write_checked(value::format_int(value, &mut buf))
    }

    /// The error for reading a write-only or writing a read-only attribute:
    /// sysfs would have refused to open it that way (`EACCES`).
    #[cold]
    #[inline(never)]
    fn wrong_access(&self, operation: Operation) -> Error {
        Error::PermissionDenied {
            path: self.path.clone(),
            operation,
            source: io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("the attribute is {:?}", self.access),
            ),
        }
    }

    // ----- reading -------------------------------------------------------

    /// Reads raw bytes at offset 0 into `buf`: one `pread(fd, buf, 0)` on
    /// sysfs. Returns the number of bytes read. Use this for binary
    /// attributes such as `bin_data`.
    ///
    /// # Errors
    /// [`Error::Disconnected`] when the device is gone, [`Error::Unsupported`]
    /// when the driver cannot show this attribute (`EOPNOTSUPP`, or `ENXIO`
    /// for a `valueN` beyond `num_values`), others as mapped by [`Error`].
    #[inline(always)]
    pub fn read_bytes(&self, buf: &mut [u8]) -> Result<usize> {
        if !self.access.can_read() {
            return Err(self.wrong_access(Operation::Read));
        }
        // The libc call itself, inlined here (src/sys/mod.rs): std's `read_at`
        // and nix's `pread` are out-of-line functions.
        crate::sys::pread_at_start(self.file.as_fd(), buf).map_err(|e| self.read_error(e))
    }

    /// The error of a failed read, out of line.
    #[cold]
    #[inline(never)]
    fn read_error(&self, errno: nix::errno::Errno) -> Error {
        let e = std::io::Error::from_raw_os_error(errno as i32);
        Error::from_io(&self.path, Operation::Read, None, e)
    }

    /// Reads the value and hands its raw bytes to `parse`, without
    /// allocating. Values up to [`MAX_VALUE_LEN`] - 1 bytes are read whole.
    ///
    /// # Errors
    /// As [`Attribute::read_bytes`], or what `parse` returns.
    #[inline]
    pub fn read_with<R>(&self, parse: impl FnOnce(&[u8]) -> Result<R>) -> Result<R> {
        let mut small = [0u8; SMALL_READ];
        let n = self.read_bytes(&mut small)?;
        if n < SMALL_READ {
            parse(&small[..n])
        } else {
            self.read_long(parse)
        }
    }

    /// The rare long value: read again, whole, with a page-sized buffer. Kept
    /// out of line so that short reads do not reserve a page of stack.
    #[inline(never)]
    fn read_long<R>(&self, parse: impl FnOnce(&[u8]) -> Result<R>) -> Result<R> {
        let mut page = [0u8; MAX_VALUE_LEN];
        let n = self.read_bytes(&mut page)?;
        if n == MAX_VALUE_LEN {
            return Err(Error::parse(
                &self.path,
                &page,
                "a value shorter than 4096 bytes (sysfs never shows more)",
            ));
        }
        parse(&page[..n])
    }

    /// Reads the value as text (without the trailing newline) and hands it to
    /// `parse`, without allocating.
    ///
    /// # Errors
    /// As [`Attribute::read_bytes`]; [`Error::Parse`] if the value is not
    /// UTF-8; or what `parse` returns.
    pub fn read_text<R>(&self, parse: impl FnOnce(&str) -> Result<R>) -> Result<R> {
        self.read_with(|raw| match value::parse_str(raw) {
            Some(text) => parse(text),
            None => Err(Error::parse(&self.path, raw, "UTF-8 text")),
        })
    }

    /// Reads the value as an owned `String` (allocates; for start-up and
    /// diagnostics, not for control loops).
    ///
    /// # Errors
    /// As [`Attribute::read_text`].
    pub fn read_string(&self) -> Result<String> {
        self.read_text(|text| Ok(text.to_owned()))
    }

    /// Reads a decimal integer that fits in 64 bits.
    ///
    /// # Errors
    /// As [`Attribute::read_bytes`]; [`Error::Parse`] with the raw contents
    /// when the value is not one decimal integer.
    #[inline]
    pub fn read_i64(&self) -> Result<i64> {
        self.read_with(|raw| {
            value::parse_int(raw).ok_or_else(|| Error::parse(&self.path, raw, "a decimal integer"))
        })
    }

    /// Reads a decimal integer that fits in 32 bits (every ev3dev number
    /// does: the kernel prints them with `%d`).
    ///
    /// # Errors
    /// As [`Attribute::read_i64`]; [`Error::Parse`] also when the value does
    /// not fit in `i32`.
    #[inline(always)]
    pub fn read_int(&self) -> Result<i32> {
        // An i32 takes at most 12 bytes with its newline: a small stack
        // buffer, after INT_READ_PAD bytes of '0' (eight with 64-bit
        // registers, where the fast parse weighs a short value as if
        // zero-padded; none on 32-bit CPUs).
        let mut buf = value::INT_READ_BUF;
        if !self.access.can_read() {
            return Err(self.wrong_access(Operation::Read));
        }
        match crate::sys::pread_at_start(self.file.as_fd(), &mut buf[value::INT_READ_PAD..]) {
            // The kernel's "%d\n" of a short value (up to 8 characters,
            // 9 digits on 32-bit CPUs), parsed inline; anything else
            // (longer, white space, a plus sign, a value as long as the
            // buffer) goes the general way, out of line.
            Ok(len) => match value::parse_read_int(&buf, len) {
                Some(v) => Ok(v),
                None => self.read_int_slow(&buf, len),
            },
            Err(errno) => Err(self.read_error(errno)),
        }
    }

    /// [`Attribute::read_int`] of a value that is not a short plain
    /// `"%d\n"`: the `len` bytes the kernel wrote after the padding of
    /// `buf` parsed by [`value::parse_int`], or read again whole when they
    /// filled the buffer.
    #[cold]
    #[inline(never)]
    fn read_int_slow(&self, buf: &value::IntReadBuf, len: usize) -> Result<i32> {
        let rest = &buf[value::INT_READ_PAD..];
        match rest.get(..len) {
            Some(raw) if len < rest.len() => self.parse_i32(raw),
            _ => self.read_with(|raw| self.parse_i32(raw)),
        }
    }

    fn parse_i32(&self, raw: &[u8]) -> Result<i32> {
        value::parse_int(raw)
            .and_then(|v| i32::try_from(v).ok())
            .ok_or_else(|| Error::parse(&self.path, raw, "a 32-bit decimal integer"))
    }

    /// `true` when `word` is in the space-separated (or bracketed) list this
    /// attribute shows.
    ///
    /// # Errors
    /// As [`Attribute::read_text`].
    pub fn list_contains(&self, word: &str) -> Result<bool> {
        self.read_text(|text| Ok(value::list_contains(text, word)))
    }

    /// The selected entry of a `[selected]` list (the LED `trigger`).
    ///
    /// # Errors
    /// As [`Attribute::read_text`]; [`Error::Parse`] when no entry is
    /// bracketed.
    pub fn read_selected<R>(&self, parse: impl FnOnce(&str) -> Result<R>) -> Result<R> {
        self.read_with(
            |raw| match value::parse_str(raw).and_then(value::selected) {
                Some(sel) => parse(sel),
                None => Err(Error::parse(
                    &self.path,
                    raw,
                    "a list with one [selected] entry",
                )),
            },
        )
    }

    /// Reads a space-separated flag list (like tacho `state`) as a bit set:
    /// bit `i` is set when `names[i]` is present.
    ///
    /// # Errors
    /// As [`Attribute::read_text`]; [`Error::Parse`] on a flag not in `names`.
    pub fn read_flags(&self, names: &[&str]) -> Result<u32> {
        self.read_with(|raw| {
            value::parse_str(raw)
                .and_then(|text| value::flags(text, names).ok())
                .ok_or_else(|| Error::parse(&self.path, raw, "known flags"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn access_from_ev3dev_modes() {
        // After udev on a brick: RO -r--r--r--, WO --w--w----, RW -rw-rw-r--;
        // before udev the kernel's 0444, 0200, 0644.
        assert_eq!(Access::from_mode(0o100444), Access::ReadOnly);
        assert_eq!(Access::from_mode(0o100220), Access::WriteOnly);
        assert_eq!(Access::from_mode(0o100664), Access::ReadWrite);
        assert_eq!(Access::from_mode(0o100200), Access::WriteOnly);
        assert_eq!(Access::from_mode(0o100644), Access::ReadWrite);
        assert_eq!(Access::from_mode(0o100000), Access::ReadOnly);
    }
}
