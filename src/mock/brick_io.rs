//! The simulated brick's buttons, beeper and screen (feature `sim`): the
//! device nodes a brick has under `/dev`, served over FUSE by a thread of
//! this process, so that [`crate::buttons`], [`crate::sound`] and
//! [`crate::screen`] run unchanged against them.
//!
//! [`SimulatedIo::mount`] mounts, at a directory used as the device root
//! (`$EV3SYSFS_DEV`):
//!
//! * `input/by-path/platform-gpio_keys-event`: an input device as evdev
//!   behaves: every open file has its own event queue, [`SimulatedIo::press`]
//!   and [`SimulatedIo::release`] queue `EV_KEY` + `EV_SYN` and wake
//!   `poll`ers, a non-blocking read of an empty queue gets `EAGAIN`, a
//!   blocking one waits, and `EVIOCGKEY` answers the key bitmap (FUSE passes
//!   ioctls whose number encodes their size);
//! * `input/by-path/platform-sound-event`: the beeper; written `EV_SND`
//!   events are recorded as the EV3 driver would play them
//!   ([`SimulatedIo::tones`]: frequencies clamped to 100..10 000 Hz, a bell
//!   is 1000 Hz);
//! * `fb0`: a framebuffer of the given [`Geometry`], read back with
//!   [`SimulatedIo::framebuffer`] (or a second [`crate::screen::Screen`]).
//!
//! [`SimulatedIo::write_sysfs`] adds `graphics/fb0/{virtual_size,
//! bits_per_pixel,stride}` to a (mock) class root. Mounting needs
//! `/dev/fuse` and root (or a user namespace); [`SimulatedIo::mount`] fails
//! with a clear error, never hangs, when it is unavailable.
//!
//! ```
//! # fn main() -> ev3sysfs::Result<()> {
//! use std::time::Duration;
//! use ev3sysfs::buttons::{Button, Buttons};
//! use ev3sysfs::mock::SimulatedIo;
//! use ev3sysfs::screen::Geometry;
//!
//! let dir = std::env::temp_dir().join(format!("ev3sysfs-doc-io-{}", std::process::id()));
//! let sim = match SimulatedIo::mount(&dir, Geometry::EV3_MONO) {
//!     Ok(sim) => sim,
//!     Err(e) => { eprintln!("no FUSE here: {e}"); return Ok(()); }
//! };
//! let buttons = Buttons::open(sim.buttons_path())?;
//! sim.press(Button::Enter);
//! assert!(buttons.is_pressed(Button::Enter)?);
//! buttons.wait_for_press(Button::Enter, Duration::from_secs(1))?;
//! # Ok(()) }
//! ```

use std::collections::{HashMap, VecDeque};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use fuser::{
    BackgroundSession, Config, Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags,
    INodeNo, IoctlFlags, LockOwner, MountOption, OpenFlags, PollEvents, PollFlags, PollNotifier,
    ReplyAttr, ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyIoctl, ReplyOpen, ReplyPoll,
    ReplyWrite, Request, WriteFlags,
};

use crate::buttons::{Button, ButtonSet, BUTTONS_DEVICE};
use crate::error::{Error, Operation, Result};
use crate::input::{InputEvent, EVENT_SIZE, EV_KEY, EV_SND, EV_SYN, SND_BELL, SND_TONE};
use crate::screen::{Geometry, FRAMEBUFFER_DEVICE, FRAMEBUFFER_SYSFS};
use crate::sound::{BEEPER_DEVICE, MAX_TONE_HZ, MIN_TONE_HZ};

/// A tone as the simulated beeper played it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tone {
    /// Frequency in Hz as the driver plays it (clamped); 0: silence.
    pub hz: u32,
    /// When, since the devices were mounted.
    pub at: Duration,
}

const ROOT: u64 = 1;
const INPUT_DIR: u64 = 2;
const BY_PATH_DIR: u64 = 3;
const BUTTONS: u64 = 4;
const BEEPER: u64 = 5;
const FRAMEBUFFER: u64 = 6;

/// `EVIOCGKEY`'s type and number ('E', 0x18); its size is encoded above.
const EVIOCGKEY_BASE: u32 = (b'E' as u32) << 8 | 0x18;
const IOC_READ: u32 = 2;

/// One open file of the buttons' device: its own queue, like an evdev
/// client.
#[derive(Default)]
struct Client {
    queue: VecDeque<InputEvent>,
    poller: Option<PollNotifier>,
    /// A blocking read waiting for events: its reply and size.
    waiting: Option<(ReplyData, u32)>,
}

struct State {
    keys: ButtonSet,
    clients: HashMap<u64, Client>,
    next_fh: u64,
    tones: Vec<Tone>,
    framebuffer: Vec<u8>,
    started: Instant,
}

struct Shared {
    state: Mutex<State>,
    geometry: Geometry,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The simulated buttons, beeper and framebuffer, mounted over FUSE at a
/// device root. Unmounted on drop.
pub struct SimulatedIo {
    dev_root: PathBuf,
    shared: Arc<Shared>,
    session: Option<BackgroundSession>,
}

impl std::fmt::Debug for SimulatedIo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimulatedIo")
            .field("dev_root", &self.dev_root)
            .field("geometry", &self.shared.geometry)
            .finish()
    }
}

impl SimulatedIo {
    /// Creates `dev_root` if needed and mounts the simulated devices there,
    /// with a white framebuffer of `geometry`.
    ///
    /// # Errors
    /// [`Error::Io`] when the directory cannot be created or FUSE cannot
    /// mount (no `/dev/fuse`, not root); [`Error::Unsupported`] for a
    /// geometry the screen module cannot draw.
    pub fn mount(dev_root: impl Into<PathBuf>, geometry: Geometry) -> Result<SimulatedIo> {
        let dev_root = dev_root.into();
        let io_error = |e: std::io::Error| {
            Error::Io {
            path: dev_root.clone(),
            operation: Operation::Open,
            source: std::io::Error::new(
                e.kind(),
                format!("mounting the simulated brick's devices over FUSE: {e} (needs /dev/fuse and root)"),
            ),
        }
        };
        // The screen's own check of the layout.
        geometry.check(&dev_root)?;
        if !Path::new("/dev/fuse").exists() {
            return Err(io_error(std::io::Error::from_raw_os_error(libc::ENOENT)));
        }
        std::fs::create_dir_all(&dev_root).map_err(io_error)?;
        let white = if geometry.bits_per_pixel == 1 {
            0
        } else {
            0xff
        };
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                keys: ButtonSet::EMPTY,
                clients: HashMap::new(),
                next_fh: 1,
                tones: Vec::new(),
                framebuffer: vec![white; geometry.size()],
                started: Instant::now(),
            }),
            geometry,
        });
        let mut config = Config::default();
        config.mount_options = vec![MountOption::FSName("ev3sysfs-sim-dev".into())];
        let fs = DevFs {
            shared: Arc::clone(&shared),
            uid: nix::unistd::geteuid().as_raw(),
            gid: nix::unistd::getegid().as_raw(),
        };
        let session = fuser::Session::new(fs, &dev_root, &config)
            .and_then(fuser::Session::spawn)
            .map_err(io_error)?;
        Ok(SimulatedIo {
            dev_root,
            shared,
            session: Some(session),
        })
    }

    /// The device root to use as `$EV3SYSFS_DEV`.
    pub fn dev_root(&self) -> &Path {
        &self.dev_root
    }

    /// The buttons' input device.
    pub fn buttons_path(&self) -> PathBuf {
        self.dev_root.join(BUTTONS_DEVICE)
    }

    /// The beeper's input device.
    pub fn beeper_path(&self) -> PathBuf {
        self.dev_root.join(BEEPER_DEVICE)
    }

    /// The framebuffer device.
    pub fn framebuffer_path(&self) -> PathBuf {
        self.dev_root.join(FRAMEBUFFER_DEVICE)
    }

    /// The framebuffer's layout.
    pub fn geometry(&self) -> Geometry {
        self.shared.geometry
    }

    /// Writes `graphics/fb0/{virtual_size,bits_per_pixel,stride}` under the
    /// class root `class_root` (e.g. a mock tree's root); returns that
    /// directory, the one [`crate::screen::Screen::open`] takes.
    ///
    /// # Errors
    /// [`Error::Io`] when the files cannot be written.
    pub fn write_sysfs(&self, class_root: impl AsRef<Path>) -> Result<PathBuf> {
        let dir = class_root.as_ref().join(FRAMEBUFFER_SYSFS);
        let g = self.shared.geometry;
        let write = |name: &str, text: String| {
            let path = dir.join(name);
            std::fs::create_dir_all(&dir)
                .and_then(|()| std::fs::write(&path, text))
                .map_err(|e| Error::from_io(&path, Operation::Write, None, e))
        };
        write("virtual_size", format!("{},{}\n", g.width, g.height))?;
        write("bits_per_pixel", format!("{}\n", g.bits_per_pixel))?;
        write("stride", format!("{}\n", g.stride))?;
        Ok(dir)
    }

    /// Presses `button` (nothing happens if it is already down): every open
    /// file of the buttons' device gets `EV_KEY` value 1 and `EV_SYN`.
    pub fn press(&self, button: Button) {
        self.key(button, true);
    }

    /// Releases `button` (nothing happens if it is up).
    pub fn release(&self, button: Button) {
        self.key(button, false);
    }

    /// Presses and releases `button`.
    pub fn click(&self, button: Button) {
        self.press(button);
        self.release(button);
    }

    /// The buttons held down.
    pub fn pressed(&self) -> ButtonSet {
        self.shared.lock().keys
    }

    fn key(&self, button: Button, down: bool) {
        let mut state = self.shared.lock();
        if state.keys.contains(button) == down {
            return;
        }
        if down {
            state.keys.insert(button);
        } else {
            state.keys.remove(button);
        }
        let time = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let events = [
            InputEvent {
                time,
                ..InputEvent::new(EV_KEY, button.code(), i32::from(down))
            },
            InputEvent {
                time,
                ..InputEvent::new(EV_SYN, 0, 0)
            },
        ];
        for client in state.clients.values_mut() {
            client.queue.extend(events);
            if let Some((reply, size)) = client.waiting.take() {
                reply.data(&take_events(&mut client.queue, size));
            }
            if let Some(poller) = client.poller.take() {
                if let Err(e) = poller.notify() {
                    log::debug!("poll notification: {e}");
                }
            }
        }
    }

    /// The tones played so far, in order (a stop is a tone of 0 Hz).
    pub fn tones(&self) -> Vec<Tone> {
        self.shared.lock().tones.clone()
    }

    /// The framebuffer's bytes (`stride * height`).
    pub fn framebuffer(&self) -> Vec<u8> {
        self.shared.lock().framebuffer.clone()
    }
}

impl Drop for SimulatedIo {
    fn drop(&mut self) {
        if let Some(session) = self.session.take() {
            if let Err(e) = session.umount_and_join() {
                log::warn!("unmounting {}: {e}", self.dev_root.display());
                let _ = nix::mount::umount2(&self.dev_root, nix::mount::MntFlags::MNT_DETACH);
            }
        }
        let _ = std::fs::remove_dir(&self.dev_root);
    }
}

/// Takes whole events, at most `size` bytes, off the queue.
fn take_events(queue: &mut VecDeque<InputEvent>, size: u32) -> Vec<u8> {
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

struct DevFs {
    shared: Arc<Shared>,
    uid: u32,
    gid: u32,
}

impl DevFs {
    fn attr(&self, ino: u64) -> Option<FileAttr> {
        let (kind, perm, size) = match ino {
            ROOT | INPUT_DIR | BY_PATH_DIR => (FileType::Directory, 0o755, 0),
            BUTTONS => (FileType::RegularFile, 0o660, 0),
            BEEPER => (FileType::RegularFile, 0o660, 0),
            FRAMEBUFFER => (
                FileType::RegularFile,
                0o660,
                self.shared.geometry.size() as u64,
            ),
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
            ROOT => &[("input", INPUT_DIR), ("fb0", FRAMEBUFFER)],
            INPUT_DIR => &[("by-path", BY_PATH_DIR)],
            BY_PATH_DIR => &[
                ("platform-gpio_keys-event", BUTTONS),
                ("platform-sound-event", BEEPER),
            ],
            _ => &[],
        }
    }
}

const TTL: Duration = Duration::from_secs(1);

impl Filesystem for DevFs {
    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let found = DevFs::children(parent.0)
            .iter()
            .find(|(n, _)| OsStr::new(n) == name)
            .and_then(|&(_, ino)| self.attr(ino));
        match found {
            Some(attr) => reply.entry(&TTL, &attr, fuser::Generation(0)),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match self.attr(ino.0) {
            Some(attr) => reply.attr(&TTL, &attr),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn readdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
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
    }

    fn open(&self, _req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
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
                reply.opened(FileHandle(fh), stream);
            }
            BEEPER if read => reply.error(Errno::EACCES),
            BEEPER => reply.opened(FileHandle(fh), stream),
            FRAMEBUFFER => reply.opened(FileHandle(fh), FopenFlags::FOPEN_DIRECT_IO),
            _ => reply.error(Errno::EISDIR),
        }
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
        self.shared.lock().clients.remove(&fh.0);
        reply.ok();
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        size: u32,
        flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
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
            FRAMEBUFFER => {
                let fb = &state.framebuffer;
                let start = (offset as usize).min(fb.len());
                let end = start.saturating_add(size as usize).min(fb.len());
                reply.data(&fb[start..end]);
            }
            _ => reply.error(Errno::EBADF),
        }
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
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
                    if let Some(tone) = InputEvent::from_bytes(chunk).and_then(|e| tone_of(&e, at))
                    {
                        state.tones.push(tone);
                    }
                }
                reply.written(whole as u32);
            }
            FRAMEBUFFER => {
                let fb = &mut state.framebuffer;
                let start = offset as usize;
                if start >= fb.len() {
                    return reply.error(Errno::EFBIG);
                }
                let end = start.saturating_add(data.len()).min(fb.len());
                fb[start..end].copy_from_slice(&data[..end - start]);
                reply.written((end - start) as u32);
            }
            _ => reply.error(Errno::EBADF),
        }
    }

    fn ioctl(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _flags: IoctlFlags,
        cmd: u32,
        _in_data: &[u8],
        out_size: u32,
        reply: ReplyIoctl,
    ) {
        let is_eviocgkey = cmd & 0xffff == EVIOCGKEY_BASE && cmd >> 30 == IOC_READ;
        if ino.0 != BUTTONS || !is_eviocgkey {
            return reply.error(Errno::ENOTTY);
        }
        let size = ((cmd >> 16) & 0x3fff).min(out_size) as usize;
        let keys = self.shared.lock().keys;
        let mut bitmap = vec![0u8; size];
        for button in keys.iter() {
            let code = usize::from(button.code());
            if let Some(byte) = bitmap.get_mut(code / 8) {
                *byte |= 1 << (code % 8);
            }
        }
        // EVIOCGKEY returns the number of bytes copied.
        reply.ioctl(size as i32, &bitmap);
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
    }
}
