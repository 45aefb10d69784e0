//! The simulated brick as a FUSE file system: a thin adapter from `fuser`'s
//! requests to the [`Brick`](super::state::Brick).
//!
//! Every handler runs under `catch_unwind` (a panicking model answers `EIO`
//! and the file system keeps serving); attribute files are opened with
//! `FOPEN_DIRECT_IO | FOPEN_NOFLUSH`, so that every `read`/`write` reaches a
//! model's `show`/`store` and `close` costs no round trip; `poll` is
//! supported as kernfs has it (`POLLPRI | POLLERR` after a `sysfs_notify`
//! or when the attribute is gone).

use std::ffi::OsStr;
use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use fuser::{
    AccessFlags, BackgroundSession, Config, Errno, FileAttr, FileHandle, FileType, Filesystem,
    FopenFlags, INodeNo, LockOwner, MountOption, OpenFlags, PollEvents, PollFlags, PollNotifier,
    ReplyAttr, ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyPoll,
    ReplyStatfs, ReplyWrite, ReplyXattr, Request, SessionACL, WriteFlags,
};

use super::kobject::Mode;
use super::state::{errno, Brick, NodeKind, PollState};

/// The marker extended attribute on every file of a simulated brick.
pub const MARKER_XATTR: &str = "user.ev3sysfs";

/// Its value.
const MARKER_VALUE: &[u8] = b"simulated-brick";

/// The brick as the file system and its owner share it.
pub(crate) type SharedBrick = Arc<Mutex<Brick<PollNotifier>>>;

/// Locks the brick; a panic elsewhere does not make it unusable.
pub(crate) fn lock(brick: &Mutex<Brick<PollNotifier>>) -> MutexGuard<'_, Brick<PollNotifier>> {
    brick
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Wakes the pollers a change released (outside the brick's lock).
pub(crate) fn wake(pollers: Vec<PollNotifier>) {
    for poller in pollers {
        if let Err(e) = poller.notify() {
            log::debug!("poll notification not delivered: {e}");
        }
    }
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
    brick: SharedBrick,
    uid: u32,
    gid: u32,
    born: SystemTime,
}

impl BrickFs {
    fn attr(&self, brick: &Brick<PollNotifier>, ino: u64) -> Option<FileAttr> {
        let node = brick.node(ino)?;
        let (kind, perm, size, nlink) = match &node.kind {
            NodeKind::Dir(children) => (FileType::Directory, 0o755, 0, 2 + children.len() as u32),
            NodeKind::Attr { info, .. } => (FileType::RegularFile, perm(info.mode), info.size, 1),
        };
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
            uid: self.uid,
            gid: self.gid,
            rdev: 0,
            blksize: 4096,
            flags: 0,
        })
    }
}

/// Runs a handler (of this file system or of the simulated devices'); a
/// panic in it (a model's bug) is logged, and the dropped reply answers
/// `EIO`: the file system keeps serving.
pub(crate) fn guarded(what: &str, f: impl FnOnce()) {
    if catch_unwind(AssertUnwindSafe(f)).is_err() {
        log::error!("simulated brick: {what} handler panicked; answered EIO");
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
            match self.attr(&brick, ino.0) {
                Some(attr) => reply.attr(&TTL, &attr),
                None => reply.error(Errno::ENOENT),
            }
        });
    }

    /// Truncation (`O_TRUNC`, a shell's `>`), chmod and times are accepted
    /// and ignored, as kernfs does for the size.
    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        _mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
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
            let opened = lock(&self.brick).open(ino.0, read, write);
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
        guarded("read", || {
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
        guarded("write", || {
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
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        guarded("release", || {
            lock(&self.brick).release(fh.0);
            reply.ok();
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
                .then_some(ph);
            let state = lock(&self.brick).poll(fh.0, poller);
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

/// Mounts `brick` at `dir` and serves it from a thread of this process.
///
/// # Errors
/// The mount's error, with what the simulated brick needs.
pub(crate) fn mount(brick: SharedBrick, dir: &Path) -> io::Result<BackgroundSession> {
    let root = nix::unistd::geteuid().is_root();
    let fs = BrickFs {
        brick,
        uid: nix::unistd::getuid().as_raw(),
        gid: nix::unistd::getgid().as_raw(),
        born: SystemTime::now(),
    };
    let mut config = Config::default();
    config.mount_options = vec![
        MountOption::FSName("ev3sysfs".into()),
        MountOption::Subtype("ev3sim".into()),
        MountOption::NoExec,
        MountOption::NoAtime,
    ];
    // Other users (python-ev3dev2 run as another user by `ev3-sim`) may use
    // it when root mounts it.
    config.acl = if root {
        SessionACL::All
    } else {
        SessionACL::Owner
    };
    fuser::spawn_mount(fs, dir, &config)
}
