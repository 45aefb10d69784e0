//! The file system behind [`super::SimulatedIo`], mounted at `input/`: the
//! device nodes `by-path/platform-gpio_keys-event` (evdev: per-open queues,
//! `EVIOCGKEY` that flushes the queued key events, poll, blocking and
//! non-blocking reads) and `by-path/platform-sound-event` (records
//! `EV_SND`; also under jessie's name `platform-snd-legoev3-event`).

use std::collections::VecDeque;
use std::ffi::OsStr;
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use fuser::{
    Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, INodeNo, IoctlFlags, LockOwner,
    OpenFlags, PollEvents, PollFlags, PollNotifier, ReplyAttr, ReplyData, ReplyDirectory,
    ReplyEmpty, ReplyEntry, ReplyIoctl, ReplyOpen, ReplyPoll, ReplyWrite, Request, WriteFlags,
};

use super::super::fs::guarded;
use super::{Client, Shared, Tone};
use crate::input::{InputEvent, EVENT_SIZE, EV_KEY, EV_SND, EV_SYN, SND_BELL, SND_TONE};
use crate::sound::{MAX_TONE_HZ, MIN_TONE_HZ};

const ROOT: u64 = 1;
const BY_PATH_DIR: u64 = 3;
const BUTTONS: u64 = 4;
const BEEPER: u64 = 5;

/// `EVIOCGKEY`'s type and number ('E', 0x18); its size is encoded above.
const EVIOCGKEY_BASE: u32 = (b'E' as u32) << 8 | 0x18;
const IOC_READ: u32 = 2;

/// What `EVIOCGKEY` does to the caller's queue on a real kernel
/// (`__evdev_flush_queue(client, EV_KEY)`): the key events go, and so do
/// the `SYN_REPORT`s left with nothing to report.
pub(super) fn flush_key_events(queue: &mut VecDeque<InputEvent>) {
    let mut kept = VecDeque::with_capacity(queue.len());
    let mut since_report = false;
    for event in queue.drain(..) {
        if event.kind == EV_KEY {
            continue;
        }
        if event.kind == EV_SYN && event.code == 0 {
            if since_report {
                kept.push_back(event);
            }
            since_report = false;
        } else {
            since_report = true;
            kept.push_back(event);
        }
    }
    *queue = kept;
}

/// How many tones the simulated beeper remembers (the last ones).
pub(super) const TONES_KEPT: usize = 65_536;

/// Takes whole events, at most `size` bytes, off the queue.
pub(super) fn take_events(queue: &mut VecDeque<InputEvent>, size: u32) -> Vec<u8> {
    let count = (size as usize / EVENT_SIZE).min(queue.len());
    queue.drain(..count).flat_map(|e| e.to_bytes()).collect()
}

/// The beeper's record of one written event, as the EV3 driver plays it.
fn tone_of(event: &InputEvent, at: Duration) -> Option<Tone> {
    if event.kind != EV_SND {
        return None;
    }
    let hz = match (event.code, event.value) {
        (SND_TONE, v) if v <= 0 => 0,
        (SND_TONE, v) => v.unsigned_abs().clamp(MIN_TONE_HZ, MAX_TONE_HZ),
        (SND_BELL, 0) => 0,
        (SND_BELL, _) => 1000,
        _ => return None,
    };
    Some(Tone { hz, at })
}

pub(super) struct DevFs {
    pub(super) shared: Arc<Shared>,
    pub(super) uid: u32,
    pub(super) gid: u32,
}

impl DevFs {
    fn attr(&self, ino: u64) -> Option<FileAttr> {
        let (kind, perm, size) = match ino {
            ROOT | BY_PATH_DIR => (FileType::Directory, 0o755, 0),
            BUTTONS => (FileType::RegularFile, 0o660, 0),
            BEEPER => (FileType::RegularFile, 0o660, 0),
            _ => return None,
        };
        Some(FileAttr {
            ino: INodeNo(ino),
            size,
            blocks: 0,
            atime: UNIX_EPOCH,
            mtime: UNIX_EPOCH,
            ctime: UNIX_EPOCH,
            crtime: UNIX_EPOCH,
            kind,
            perm,
            nlink: if kind == FileType::Directory { 2 } else { 1 },
            uid: self.uid,
            gid: self.gid,
            rdev: 0,
            blksize: 4096,
            flags: 0,
        })
    }

    fn children(ino: u64) -> &'static [(&'static str, u64)] {
        match ino {
            ROOT => &[("by-path", BY_PATH_DIR)],
            BY_PATH_DIR => &[
                ("platform-gpio_keys-event", BUTTONS),
                ("platform-snd-legoev3-event", BEEPER),
                ("platform-sound-event", BEEPER),
            ],
            _ => &[],
        }
    }
}

const TTL: Duration = Duration::from_secs(1);

impl Filesystem for DevFs {
    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        guarded("lookup", || {
            let found = DevFs::children(parent.0)
                .iter()
                .find(|(n, _)| OsStr::new(n) == name)
                .and_then(|&(_, ino)| self.attr(ino));
            match found {
                Some(attr) => reply.entry(&TTL, &attr, fuser::Generation(0)),
                None => reply.error(Errno::ENOENT),
            }
        });
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        guarded("getattr", || match self.attr(ino.0) {
            Some(attr) => reply.attr(&TTL, &attr),
            None => reply.error(Errno::ENOENT),
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
            let mut entries = vec![(".", ino.0, FileType::Directory)];
            entries.push(("..", ROOT, FileType::Directory));
            for &(name, child) in DevFs::children(ino.0) {
                let kind = self.attr(child).map_or(FileType::RegularFile, |a| a.kind);
                entries.push((name, child, kind));
            }
            for (i, (name, child, kind)) in entries.into_iter().enumerate().skip(offset as usize) {
                if reply.add(INodeNo(child), (i + 1) as u64, kind, name) {
                    break;
                }
            }
            reply.ok();
        });
    }

    fn open(&self, _req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        guarded("open", || {
            let write = flags.0 & libc::O_ACCMODE != libc::O_RDONLY;
            let read = flags.0 & libc::O_ACCMODE != libc::O_WRONLY;
            let mut state = self.shared.lock();
            let fh = state.next_fh;
            state.next_fh += 1;
            let stream = FopenFlags::FOPEN_DIRECT_IO | FopenFlags::FOPEN_NONSEEKABLE;
            match ino.0 {
                BUTTONS if write => reply.error(Errno::EACCES),
                BUTTONS => {
                    state.clients.insert(fh, Client::default());
                    state.open_files += 1;
                    reply.opened(FileHandle(fh), stream);
                }
                BEEPER if read => reply.error(Errno::EACCES),
                BEEPER => {
                    state.open_files += 1;
                    reply.opened(FileHandle(fh), stream);
                }
                _ => reply.error(Errno::EISDIR),
            }
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

    fn getxattr(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _name: &OsStr,
        _size: u32,
        reply: fuser::ReplyXattr,
    ) {
        reply.error(Errno::ENODATA);
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
            // Answered first, as the brick's files (`fs::BrickFs`): the
            // file counts as open until the answer is out.
            reply.ok();
            let mut state = self.shared.lock();
            state.clients.remove(&fh.0);
            state.open_files = state.open_files.saturating_sub(1);
        });
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        _offset: u64,
        size: u32,
        flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        guarded("read", || {
            let mut state = self.shared.lock();
            match ino.0 {
                BUTTONS => {
                    if (size as usize) < EVENT_SIZE {
                        return reply.error(Errno::EINVAL);
                    }
                    let Some(client) = state.clients.get_mut(&fh.0) else {
                        return reply.error(Errno::EBADF);
                    };
                    if !client.queue.is_empty() {
                        reply.data(&take_events(&mut client.queue, size));
                    } else if flags.0 & libc::O_NONBLOCK != 0 {
                        reply.error(Errno::EAGAIN);
                    } else {
                        // A blocking read: answered by the next press or release.
                        client.waiting = Some((reply, size));
                    }
                }
                _ => reply.error(Errno::EBADF),
            }
        });
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        guarded("write", || {
            let mut state = self.shared.lock();
            match ino.0 {
                BEEPER => {
                    // evdev takes whole events only.
                    if data.len() < EVENT_SIZE {
                        return reply.error(Errno::EINVAL);
                    }
                    let at = state.started.elapsed();
                    let whole = data.len() / EVENT_SIZE * EVENT_SIZE;
                    for chunk in data[..whole].chunks(EVENT_SIZE) {
                        if let Some(tone) =
                            InputEvent::from_bytes(chunk).and_then(|e| tone_of(&e, at))
                        {
                            state.tones.push(tone);
                        }
                    }
                    // A client writing tones for ever does not grow the
                    // simulator for ever: the oldest go.
                    let excess = state.tones.len().saturating_sub(TONES_KEPT);
                    state.tones.drain(..excess);
                    reply.written(whole as u32);
                }
                _ => reply.error(Errno::EBADF),
            }
        });
    }

    fn ioctl(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        _flags: IoctlFlags,
        cmd: u32,
        _in_data: &[u8],
        out_size: u32,
        reply: ReplyIoctl,
    ) {
        guarded("ioctl", || {
            let is_eviocgkey = cmd & 0xffff == EVIOCGKEY_BASE && cmd >> 30 == IOC_READ;
            if ino.0 != BUTTONS || !is_eviocgkey {
                return reply.error(Errno::ENOTTY);
            }
            let size = ((cmd >> 16) & 0x3fff).min(out_size) as usize;
            let mut state = self.shared.lock();
            if let Some(client) = state.clients.get_mut(&fh.0) {
                flush_key_events(&mut client.queue);
            }
            let keys = state.keys;
            drop(state);
            let mut bitmap = vec![0u8; size];
            for button in keys.iter() {
                let code = usize::from(button.code());
                if let Some(byte) = bitmap.get_mut(code / 8) {
                    *byte |= 1 << (code % 8);
                }
            }
            // EVIOCGKEY returns the number of bytes copied.
            reply.ioctl(size as i32, &bitmap);
        });
    }

    fn poll(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        ph: PollNotifier,
        _events: PollEvents,
        flags: PollFlags,
        reply: ReplyPoll,
    ) {
        guarded("poll", || {
            let mut state = self.shared.lock();
            match ino.0 {
                BUTTONS => {
                    let Some(client) = state.clients.get_mut(&fh.0) else {
                        return reply.error(Errno::EBADF);
                    };
                    if !client.queue.is_empty() {
                        reply.poll(PollEvents::POLLIN | PollEvents::POLLRDNORM);
                    } else {
                        if flags.contains(PollFlags::FUSE_POLL_SCHEDULE_NOTIFY) {
                            client.poller = Some(ph);
                        }
                        reply.poll(PollEvents::empty());
                    }
                }
                _ => reply.poll(PollEvents::POLLOUT | PollEvents::POLLWRNORM),
            }
        });
    }
}
