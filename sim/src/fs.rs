//! The simulated brick as a FUSE file system: a thin adapter from `fuser`'s
//! requests to the [`Brick`](super::state::Brick).
//!
//! Every handler runs under `catch_unwind` (a panicking model answers `EIO`
//! and the file system keeps serving); attribute files are opened with
//! `FOPEN_DIRECT_IO | FOPEN_NOFLUSH`, so that every `read`/`write` reaches a
//! model's `show`/`store` and `close` costs no round trip; `poll` is
//! supported as kernfs has it (`POLLPRI | POLLERR` after a `sysfs_notify`
//! or when the attribute is gone).
//!
//! # A process never waits on a file system it serves itself
//! The file system is served by a thread with a file descriptor table of
//! its own (`unshare(CLONE_FILES)`): `/dev/fuse` is open only there. When
//! the process dies, however (exit, a signal, SIGKILL), that thread goes
//! and the kernel aborts the connection, so that a thread of the process
//! that was waiting for an answer (a read in flight) is released instead
//! of hanging in `D` state forever. The serving threads block the signals
//! the stop guard handles (the handler never runs on them); code that holds
//! the brick's lock is marked, so that the guard never writes from there;
//! at exit and on a fatal signal the brick's service is ended first
//! (connection aborted, mount detached), see `sys::end_served_bricks`.

use std::ffi::OsStr;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use fuser::{
    AccessFlags, Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, INodeNo, LockOwner,
    OpenFlags, PollEvents, PollFlags, PollNotifier, ReplyAttr, ReplyData, ReplyDirectory,
    ReplyEmpty, ReplyEntry, ReplyOpen, ReplyPoll, ReplyStatfs, ReplyWrite, ReplyXattr, Request,
    WriteFlags,
};

use super::kobject::Mode;
use super::state::{errno, Brick, NodeKind, PollState};

/// The marker extended attribute on every file of a simulated brick.
pub const MARKER_XATTR: &str = "user.ev3sysfs";

/// Its value.
const MARKER_VALUE: &[u8] = b"simulated-brick";

/// A poller to wake: its notification is sent by the serving threads'
/// notifier (only they have `/dev/fuse` open).
///
/// A `PollNotifier` holds the connection's `/dev/fuse` descriptor, which is
/// in the serving threads' descriptor table only: dropped in any other
/// thread (the brick dropped by its owner with a poll pending), it would
/// close whatever that number is in the process's table. So a poller,
/// woken or not, hands its notifier to the serving threads on drop, or
/// leaks it once they are gone.
#[derive(Clone)]
pub(crate) struct Poller {
    notifier: Option<PollNotifier>,
    to: mpsc::Sender<ToServing>,
}

impl Drop for Poller {
    fn drop(&mut self) {
        if let Some(notifier) = self.notifier.take() {
            if let Err(mpsc::SendError(ToServing::Notify(notifier))) =
                self.to.send(ToServing::Notify(notifier))
            {
                log::debug!("poll notification not delivered: the brick is no longer served");
                std::mem::forget(notifier);
            }
        }
    }
}

impl Poller {
    /// Drops the notifier without waking the poll: only in a serving
    /// thread (the one place its descriptor may be closed).
    fn discard(mut self) {
        drop(self.notifier.take());
    }
}

/// What the serving threads' notifier does for others: whatever holds the
/// connection's `/dev/fuse` descriptor is used and dropped there.
pub(crate) enum ToServing {
    /// Wake a poller.
    Notify(PollNotifier),
    /// Keep the session's mount (sent once, by the serving thread).
    Mount(fuser::SessionUnmounter),
    /// Take the session's mount and unmount it; the answer is fuser's.
    Unmount(mpsc::SyncSender<std::io::Result<()>>),
}

/// The brick as the file system and its owner share it.
pub(crate) type SharedBrick = Arc<Mutex<Brick<Poller>>>;

/// The brick, locked by simulator code (see [`ev3sysfs::guard::served::SimulatorCode`]).
pub(crate) struct BrickLock<'a> {
    brick: MutexGuard<'a, Brick<Poller>>,
    _code: ev3sysfs::guard::served::SimulatorCode,
}

impl std::ops::Deref for BrickLock<'_> {
    type Target = Brick<Poller>;
    fn deref(&self) -> &Brick<Poller> {
        &self.brick
    }
}

impl std::ops::DerefMut for BrickLock<'_> {
    fn deref_mut(&mut self) -> &mut Brick<Poller> {
        &mut self.brick
    }
}

/// Locks the brick; a panic elsewhere does not make it unusable.
pub(crate) fn lock(brick: &Mutex<Brick<Poller>>) -> BrickLock<'_> {
    let code = ev3sysfs::guard::served::SimulatorCode::enter();
    BrickLock {
        brick: brick
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()),
        _code: code,
    }
}

/// Wakes the pollers a change released (outside the brick's lock).
pub(crate) fn wake(pollers: Vec<Poller>) {
    // Each poller's drop hands its notification to the serving threads.
    drop(pollers);
}

/// No kernel caching of names or attributes: an unplug is seen at once.
const TTL: Duration = Duration::ZERO;

/// Permission bits as a brick shows them after udev (group `ev3dev`):
/// 0444, 0220, 0664. Libraries that go by the group bits (python-ev3dev2)
/// open attributes in the right direction.
fn perm(mode: Mode) -> u16 {
    match mode {
        Mode::ReadOnly => 0o444,
        Mode::WriteOnly => 0o220,
        Mode::ReadWrite => 0o664,
    }
}

/// The FUSE file system of one simulated brick.
pub(crate) struct BrickFs {
    pub(super) brick: SharedBrick,
    pub(super) notify: mpsc::Sender<ToServing>,
    pub(super) uid: u32,
    pub(super) gid: u32,
    pub(super) born: SystemTime,
    /// What chmod/chown (udev) set, by inode: permission bits, uid, gid.
    pub(super) owners: Mutex<std::collections::HashMap<u64, (u16, u32, u32)>>,
    /// The attributes of files held open, by inode, with the number of
    /// holders: `fstat` on a held file still answers after an unplug (only
    /// read and write get `ENODEV`), as on kernfs.
    pub(super) held: Mutex<std::collections::HashMap<u64, (FileAttr, usize)>>,
}

impl BrickFs {
    fn attr(&self, brick: &Brick<Poller>, ino: u64) -> Option<FileAttr> {
        let node = brick.node(ino)?;
        let (kind, perm, size, nlink) = match &node.kind {
            NodeKind::Dir(children) => (FileType::Directory, 0o755, 0, 2 + children.len() as u32),
            NodeKind::Attr { info, .. } => (FileType::RegularFile, perm(info.mode), info.size, 1),
        };
        let owned = self
            .owners
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&ino)
            .copied();
        let (perm, uid, gid) = owned.unwrap_or((perm, self.uid, self.gid));
        Some(FileAttr {
            ino: INodeNo(ino),
            size,
            blocks: 0,
            atime: self.born,
            mtime: self.born,
            ctime: self.born,
            crtime: self.born,
            kind,
            perm,
            nlink,
            uid,
            gid,
            rdev: 0,
            blksize: 4096,
            flags: 0,
        })
    }
}

/// Runs a handler (of this file system or of the simulated devices'); a
/// panic in it (a model's bug) is logged, and the dropped reply answers
/// `EIO`: the file system keeps serving.
pub(crate) fn guarded(what: &str, f: impl FnOnce()) -> Option<Box<dyn std::any::Any + Send>> {
    let _code = ev3sysfs::guard::served::SimulatorCode::enter();
    let panic = catch_unwind(AssertUnwindSafe(f)).err();
    if panic.is_some() {
        log::error!("simulated brick: {what} handler panicked; answered EIO");
    }
    panic
}

impl BrickFs {
    /// [`guarded`], and a panic (a model's `show` or `store`) is recorded
    /// as the brick's failure.
    fn guarded_model(&self, what: &str, f: impl FnOnce()) {
        if let Some(panic) = guarded(what, f) {
            let callback = format!("a file's {what}");
            lock(&self.brick).failed(None, &callback, panic.as_ref());
        }
    }
}

fn err(e: i32) -> Errno {
    Errno::from_i32(errno(e))
}

impl Filesystem for BrickFs {
    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        guarded("lookup", || {
            let brick = lock(&self.brick);
            let found = name.to_str().and_then(|n| brick.lookup(parent.0, n));
            match found.and_then(|ino| self.attr(&brick, ino)) {
                Some(attr) => reply.entry(&TTL, &attr, fuser::Generation(0)),
                None => reply.error(Errno::ENOENT),
            }
        });
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        guarded("getattr", || {
            let brick = lock(&self.brick);
            let held = || {
                let held = self.held.lock().unwrap_or_else(|e| e.into_inner());
                held.get(&ino.0).map(|(attr, _)| *attr)
            };
            match self.attr(&brick, ino.0).or_else(held) {
                Some(attr) => reply.attr(&TTL, &attr),
                None => reply.error(Errno::ENOENT),
            }
        });
    }

    /// chmod and chown change the file's owner and permission bits as on
    /// kernfs (udev does it on a brick); truncation (`O_TRUNC`, a shell's
    /// `>`) and times are accepted and ignored, as kernfs does for the size.
    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        _size: Option<u64>,
        _atime: Option<fuser::TimeOrNow>,
        _mtime: Option<fuser::TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        if mode.is_some() || uid.is_some() || gid.is_some() {
            let current = self.attr(&lock(&self.brick), ino.0);
            if let Some(attr) = current {
                let mut owners = self.owners.lock().unwrap_or_else(|e| e.into_inner());
                owners.insert(
                    ino.0,
                    (
                        mode.map_or(attr.perm, |m| (m & 0o7777) as u16),
                        uid.unwrap_or(attr.uid),
                        gid.unwrap_or(attr.gid),
                    ),
                );
            }
        }
        self.getattr(_req, ino, None, reply);
    }

    fn opendir(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        guarded("opendir", || {
            let brick = lock(&self.brick);
            match brick.node(ino.0).map(|n| &n.kind) {
                Some(NodeKind::Dir(_)) => reply.opened(FileHandle(0), FopenFlags::empty()),
                Some(_) => reply.error(Errno::ENOTDIR),
                None => reply.error(Errno::ENOENT),
            }
        });
    }

    fn readdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        guarded("readdir", || {
            let brick = lock(&self.brick);
            let Some(node) = brick.node(ino.0) else {
                return reply.error(Errno::ENOENT);
            };
            let NodeKind::Dir(children) = &node.kind else {
                return reply.error(Errno::ENOTDIR);
            };
            let mut entries = vec![
                (ino.0, FileType::Directory, ".".to_owned()),
                (node.parent, FileType::Directory, "..".to_owned()),
            ];
            for (name, child) in children {
                let kind = match brick.node(*child).map(|n| &n.kind) {
                    Some(NodeKind::Dir(_)) => FileType::Directory,
                    _ => FileType::RegularFile,
                };
                entries.push((*child, kind, name.clone()));
            }
            let skip = usize::try_from(offset).unwrap_or(usize::MAX);
            for (i, (child, kind, name)) in entries.into_iter().enumerate().skip(skip) {
                if reply.add(INodeNo(child), i as u64 + 1, kind, name) {
                    break;
                }
            }
            reply.ok();
        });
    }

    fn open(&self, _req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        guarded("open", || {
            let (read, write) = match flags.0 & libc::O_ACCMODE {
                libc::O_RDONLY => (true, false),
                libc::O_WRONLY => (false, true),
                _ => (true, true),
            };
            let brick = lock(&self.brick);
            let attr = self.attr(&brick, ino.0);
            drop(brick);
            let opened = lock(&self.brick).open(ino.0, read, write);
            if let (Ok(_), Some(attr)) = (&opened, attr) {
                let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
                held.entry(ino.0).or_insert((attr, 0)).1 += 1;
            }
            match opened {
                Ok(fh) => reply.opened(
                    FileHandle(fh),
                    FopenFlags::FOPEN_DIRECT_IO | FopenFlags::FOPEN_NOFLUSH,
                ),
                Err(e) => reply.error(err(e)),
            }
        });
    }

    fn read(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        self.guarded_model("read", || {
            let data = lock(&self.brick).read(fh.0, offset, size as usize);
            match data {
                Ok(data) => reply.data(&data),
                Err(e) => reply.error(err(e)),
            }
        });
    }

    fn write(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        self.guarded_model("write", || {
            let (stored, pollers) = lock(&self.brick).write(fh.0, offset, data);
            match stored {
                Ok(n) => reply.written(u32::try_from(n).unwrap_or(u32::MAX)),
                Err(e) => reply.error(err(e)),
            }
            wake(pollers);
        });
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        reply.ok();
    }

    fn release(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        guarded("release", || {
            // Answered first: the handle counts as open until the answer
            // is out, so a brick being dropped (which waits for no handle
            // to be open) never unmounts between the two.
            reply.ok();
            let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((_, holders)) = held.get_mut(&ino.0) {
                *holders -= 1;
                if *holders == 0 {
                    held.remove(&ino.0);
                }
            }
            drop(held);
            lock(&self.brick).release(fh.0);
        });
    }

    fn fsync(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        reply.ok();
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        reply.statfs(0, 0, 0, 0, 0, 4096, 255, 4096);
    }

    fn getxattr(&self, _req: &Request, ino: INodeNo, name: &OsStr, size: u32, reply: ReplyXattr) {
        // On every file: the I/O core recognises the brick with one
        // `fgetxattr` on the attribute it opened.
        if lock(&self.brick).node(ino.0).is_none() || name != MARKER_XATTR {
            return reply.error(Errno::from_i32(libc::ENODATA));
        }
        if size == 0 {
            reply.size(MARKER_VALUE.len() as u32);
        } else if (size as usize) < MARKER_VALUE.len() {
            reply.error(Errno::from_i32(libc::ERANGE));
        } else {
            reply.data(MARKER_VALUE);
        }
    }

    fn listxattr(&self, _req: &Request, ino: INodeNo, size: u32, reply: ReplyXattr) {
        let list: &[u8] = if lock(&self.brick).node(ino.0).is_some() {
            b"user.ev3sysfs\0"
        } else {
            b""
        };
        if size == 0 {
            reply.size(list.len() as u32);
        } else if (size as usize) < list.len() {
            reply.error(Errno::from_i32(libc::ERANGE));
        } else {
            reply.data(list);
        }
    }

    fn access(&self, _req: &Request, ino: INodeNo, mask: AccessFlags, reply: ReplyEmpty) {
        guarded("access", || {
            let brick = lock(&self.brick);
            let mask = mask.bits();
            match brick.node(ino.0).map(|n| &n.kind) {
                None => reply.error(Errno::ENOENT),
                Some(NodeKind::Dir(_)) => reply.ok(),
                Some(NodeKind::Attr { info, .. }) => {
                    let bits = info.mode.bits();
                    let refused = (mask & libc::R_OK != 0 && bits & 0o444 == 0)
                        || (mask & libc::W_OK != 0 && bits & 0o222 == 0)
                        || mask & libc::X_OK != 0;
                    if refused {
                        reply.error(Errno::from_i32(libc::EACCES));
                    } else {
                        reply.ok();
                    }
                }
            }
        });
    }

    /// `isatty()` and friends: not a terminal, quietly (kernfs says the
    /// same).
    fn ioctl(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _flags: fuser::IoctlFlags,
        _cmd: u32,
        _in_data: &[u8],
        _out_size: u32,
        reply: fuser::ReplyIoctl,
    ) {
        reply.error(Errno::from_i32(libc::ENOTTY));
    }

    fn poll(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        ph: PollNotifier,
        _events: PollEvents,
        flags: PollFlags,
        reply: ReplyPoll,
    ) {
        guarded("poll", || {
            let poller = flags
                .contains(PollFlags::FUSE_POLL_SCHEDULE_NOTIFY)
                .then(|| Poller {
                    notifier: Some(ph),
                    to: self.notify.clone(),
                });
            let (state, not_kept) = lock(&self.brick).poll(fh.0, poller);
            // This is a serving thread: the notifier may be dropped here.
            if let Some(poller) = not_kept {
                poller.discard();
            }
            // kernfs: DEFAULT_POLLMASK, plus POLLERR | POLLPRI when notified
            // since the last read or when the attribute is gone.
            let mut events = PollEvents::POLLIN
                | PollEvents::POLLOUT
                | PollEvents::POLLRDNORM
                | PollEvents::POLLWRNORM;
            if state != PollState::Quiet {
                events |= PollEvents::POLLERR | PollEvents::POLLPRI;
            }
            reply.poll(events);
        });
    }
}
