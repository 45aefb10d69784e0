//! Waiting for a change of an attribute ([`Attribute::wait_for_change`])
//! and telling an unplugged device apart ([`UNPLUG_CHECK`]).

use std::io;
use std::os::fd::AsFd;
use std::os::unix::fs::FileExt;
use std::time::Duration;

use super::Attribute;
use crate::error::{Error, Operation, Result};

impl Attribute {
    /// Waits up to `timeout` for the kernel to notify a change of this
    /// attribute (`POLLPRI`, sent by `sysfs_notify`: tacho `state`, touch
    /// `value0`). Returns `true` when notified, `false` on timeout.
    /// `Duration::MAX` (or any timeout beyond what `Instant` holds) waits
    /// without end.
    ///
    /// Notifications can be late (tacho `state` is checked every 50 ms) or
    /// missed, and a file that is not sysfs-like may never notify: always
    /// re-read the value after this returns, whatever it returns. A pending
    /// notification is cleared by the next read.
    ///
    /// The wait is cut into `poll` slices of at most [`UNPLUG_CHECK`]: a
    /// fresh `poll` on an attribute whose device went away reports
    /// `POLLERR` at once (kernfs and the simulated brick), so an unplug is
    /// heard soon even where it wakes no poller. Nothing is read between
    /// slices: a read rearms the notification (kernfs records the event
    /// count it shows), so a change landing between a quiet slice and such
    /// a read would be consumed unseen and the wait would sleep on until
    /// its timeout. The attribute is read only when `poll` reported
    /// `POLLERR` (to tell a change from a removal).
    ///
    /// # Errors
    /// [`Error::Disconnected`] when the device went away while waiting.
    pub fn wait_for_change(&self, timeout: Duration) -> Result<bool> {
        use crate::clock::Instant;
        use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
        // The clock is read only for a wait longer than one slice (the
        // crate's own waits ask for at most one: no clock read here).
        // `Some(None)`: beyond what an Instant holds (`Duration::MAX`), no
        // deadline.
        let deadline = (timeout > UNPLUG_CHECK).then(|| Instant::now().checked_add(timeout));
        let mut left = timeout;
        loop {
            let slice = left.min(UNPLUG_CHECK);
            // Below 65 s: fits in u16 milliseconds. Rounded up: rounded
            // down, a wait would end before its timeout, and a caller's
            // wait loop would spin through its last millisecond in 0 ms
            // polls (seen: 8 of them under load).
            let millis = u16::try_from(slice.as_micros().div_ceil(1000)).unwrap_or(u16::MAX);
            let mut fds = [PollFd::new(self.file.as_fd(), PollFlags::POLLPRI)];
            let ready = poll(&mut fds, PollTimeout::from(millis)).map_err(|errno| {
                Error::from_io(&self.path, Operation::Poll, None, io::Error::from(errno))
            })?;
            let revents = fds[0].revents().unwrap_or(PollFlags::empty());
            if ready > 0 && revents.intersects(PollFlags::POLLPRI | PollFlags::POLLERR) {
                // kernfs reports POLLERR both for a change and for removal;
                // a read tells them apart (the caller re-reads the value
                // anyway, so this read consumes nothing it would miss).
                if revents.contains(PollFlags::POLLERR) {
                    self.check_present()?;
                }
                return Ok(true);
            }
            if left <= slice {
                return Ok(false);
            }
            // A slice ended quietly: the next poll sees a removal.
            left = match deadline {
                Some(Some(d)) => d.saturating_duration_since(Instant::now()),
                Some(None) => Duration::MAX,
                None => left.saturating_sub(slice),
            };
            if left.is_zero() {
                return Ok(false);
            }
        }
    }

    /// One read: `ENODEV` (or any read error) means the device is gone.
    fn check_present(&self) -> Result<()> {
        let probe = if self.access.can_read() {
            self.file.read_at(&mut [0u8; 1], 0).map(drop)
        } else {
            // A write-only attribute cannot be read: its inode's presence
            // is asked instead (FUSE and kernfs answer ENOENT/ENODEV once
            // gone... kernfs keeps answering: best effort).
            self.file.metadata().map(drop)
        };
        probe.map_err(|_| {
            Error::from_io(
                &self.path,
                Operation::Poll,
                None,
                io::Error::from_raw_os_error(libc::ENODEV),
            )
        })
    }
}

/// How long one `poll` of [`Attribute::wait_for_change`] lasts at most: the
/// next one reports a device that went away meanwhile without waking its
/// pollers.
pub const UNPLUG_CHECK: Duration = Duration::from_millis(100);
