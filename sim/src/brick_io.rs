//! [`SimulatedIo`]: the simulated brick's buttons, beeper and screen, device
//! nodes served over FUSE (feature `sim`).

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use fuser::{BackgroundSession, Config, MountOption, PollNotifier, ReplyData};

use super::MockTree;
use crate::buttons::{Button, ButtonSet, BUTTONS_DEVICE};
use crate::error::{Error, Operation, Result};
use crate::input::{InputEvent, EV_KEY, EV_SYN};
use crate::screen::{Geometry, Screen, FRAMEBUFFER_DEVICE, FRAMEBUFFER_SYSFS};
use crate::sound::BEEPER_DEVICE;

/// A tone as the simulated beeper played it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tone {
    /// Frequency in Hz as the driver plays it (clamped); 0: silence.
    pub hz: u32,
    /// When, since the devices were mounted.
    pub at: Duration,
}

mod devfs;
mod graphics;

use devfs::{take_events, DevFs};

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
    /// Open files (the buttons' and the beeper's), until their `RELEASE`
    /// is answered (see `serve::wait_for_releases`).
    open_files: usize,
    next_fh: u64,
    tones: Vec<Tone>,
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

/// The simulated brick's buttons, beeper and screen (feature `sim`): the
/// device nodes a brick has under `/dev`, served over FUSE by a thread of
/// this process, so that [`crate::buttons`], [`crate::sound`] and
/// [`crate::screen`] run unchanged against them.
///
/// [`SimulatedIo::mount`] mounts, at a directory used as the device root
/// (`$EV3SYSFS_DEV`):
///
/// * `input/by-path/platform-gpio_keys-event`: an input device as evdev
///   behaves: every open file has its own event queue, [`SimulatedIo::press`]
///   and [`SimulatedIo::release`] queue `EV_KEY` + `EV_SYN` and wake
///   `poll`ers, a non-blocking read of an empty queue gets `EAGAIN`, a
///   blocking one waits, and `EVIOCGKEY` answers the key bitmap (FUSE passes
///   ioctls whose number encodes their size) and, as evdev does since Linux
///   3.12, discards the key events queued on that descriptor;
/// * `input/by-path/platform-sound-event` (and jessie's
///   `platform-snd-legoev3-event`): the beeper; written `EV_SND` events are
///   recorded as the EV3 driver would play them ([`SimulatedIo::tones`]:
///   frequencies clamped to 100..10 000 Hz, a bell is 1000 Hz);
/// * `fb0`: a framebuffer of the given [`Geometry`]: a regular file that
///   this handle owns, so that programs can `mmap` it (`MAP_SHARED`) as
///   they map a brick's `/dev/fb0`, or `pwrite` it; read back, as a display
///   refresh would, with [`SimulatedIo::framebuffer`] (or a second
///   [`crate::screen::Screen`]).
///
/// `input/` is the FUSE mount; the device root itself and `fb0` are plain.
///
/// [`MockTree::add_brick_io`] gives a simulated brick these devices, beside
/// its tree, and `graphics/fb0/{virtual_size,bits_per_pixel,stride}` in it;
/// [`SimulatedIo::write_sysfs`] writes those attributes into a plain
/// directory instead, for devices without a tree. Mounting needs
/// `/dev/fuse` and root (or a user namespace); [`SimulatedIo::mount`] fails
/// with a clear error, never hangs, when it is unavailable.
///
/// ```
/// # fn main() -> ev3sysfs::Result<()> {
/// use std::time::Duration;
/// use ev3sysfs::buttons::{Button, Buttons};
/// use ev3sysfs_sim::MockTree;
/// use ev3sysfs::screen::{Color, Geometry};
/// use ev3sysfs::sound::Beeper;
///
/// let tree = match MockTree::ev3() {
///     Ok(tree) => tree,
///     Err(e) => return Ok(eprintln!("no simulated brick here: {e}")),
/// };
/// let io = tree.add_brick_io(Geometry::EV3_MONO)?; // $EV3SYSFS_DEV: io.dev_root()
/// let buttons = Buttons::open(io.buttons_path())?;
/// # if let Err(e) = buttons.pressed() {
/// #     if e.errno() == Some(38) { return Ok(eprintln!("EVIOCGKEY is ENOSYS here (qemu-user)")); }
/// # }
/// io.press(Button::Enter);
/// buttons.wait_for_press(Button::Enter, Duration::from_secs(1))?;
///
/// Beeper::open(io.beeper_path())?.tone(440, Duration::from_millis(1))?;
/// let played: Vec<u32> = io.tones().iter().map(|t| t.hz).collect();
/// assert_eq!(played, [440, 0]);
///
/// let mut screen = io.open_screen()?; // geometry from graphics/fb0
/// screen.fill_rect(0, 0, 8, 1, Color::Black);
/// screen.show()?;
/// assert_eq!(io.framebuffer()[0], 0xff); // 1 bpp: bit set = black
/// # Ok(()) }
/// ```
///
/// Unmounted on drop.
pub struct SimulatedIo {
    dev_root: PathBuf,
    shared: Arc<Shared>,
    session: Option<BackgroundSession>,
    /// `graphics/fb0` in a class tree, once there is one.
    sysfs_dir: Option<PathBuf>,
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
        std::fs::create_dir_all(dev_root.join("input")).map_err(io_error)?;
        let white = if geometry.bits_per_pixel == 1 {
            0
        } else {
            0xff
        };
        std::fs::write(
            dev_root.join(FRAMEBUFFER_DEVICE),
            vec![white; geometry.size()],
        )
        .map_err(io_error)?;
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                keys: ButtonSet::EMPTY,
                clients: HashMap::new(),
                open_files: 0,
                next_fh: 1,
                tones: Vec::new(),
                started: Instant::now(),
            }),
            geometry,
        });
        let mut config = Config::default();
        config.mount_options = vec![MountOption::FSName("ev3sysfs-sim-dev".into())];
        // Other users (a program run by `ev3-sim` as another user) may use
        // the devices when root mounts them.
        if nix::unistd::geteuid().is_root() {
            config.acl = fuser::SessionACL::All;
        }
        let fs = DevFs {
            shared: Arc::clone(&shared),
            uid: nix::unistd::geteuid().as_raw(),
            gid: nix::unistd::getegid().as_raw(),
        };
        let session = fuser::Session::new(fs, dev_root.join("input"), &config)
            .and_then(fuser::Session::spawn)
            .map_err(io_error)?;
        Ok(SimulatedIo {
            dev_root,
            shared,
            session: Some(session),
            sysfs_dir: None,
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

    /// The framebuffer's sysfs directory, when the devices belong to a
    /// [`MockTree`] ([`MockTree::add_brick_io`]).
    pub fn sysfs_dir(&self) -> Option<&Path> {
        self.sysfs_dir.as_deref()
    }

    /// Opens a [`Screen`] on the simulated framebuffer (its geometry from
    /// sysfs when the devices belong to a tree).
    ///
    /// # Errors
    /// As [`Screen::open`].
    pub fn open_screen(&self) -> Result<Screen> {
        match &self.sysfs_dir {
            Some(dir) => Screen::open(self.framebuffer_path(), dir),
            None => Screen::with_geometry(self.framebuffer_path(), self.shared.geometry),
        }
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

    /// Presses and releases `button` at once (a 0 ms click: what only a
    /// wait that follows the events sees; [`SimulatedIo::click_for`] holds
    /// it as a finger does).
    pub fn click(&self, button: Button) {
        self.press(button);
        self.release(button);
    }

    /// Presses `button`, holds it for `hold` (a finger holds about 100 ms),
    /// and releases it.
    pub fn click_for(&self, button: Button, hold: Duration) {
        self.press(button);
        std::thread::sleep(hold);
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

    /// The tones played so far, in order (a stop is a tone of 0 Hz); the
    /// last 65 536 at most.
    pub fn tones(&self) -> Vec<Tone> {
        self.shared.lock().tones.clone()
    }

    /// The framebuffer's bytes (`stride * height`), as the display shows
    /// them now (read from the mapped file).
    pub fn framebuffer(&self) -> Vec<u8> {
        let mut bytes = std::fs::read(self.framebuffer_path()).unwrap_or_default();
        bytes.resize(self.shared.geometry.size(), 0);
        bytes
    }
}

impl Drop for SimulatedIo {
    fn drop(&mut self) {
        let input = self.dev_root.join("input");
        crate::serve::wait_for_releases(|| self.shared.lock().open_files);
        if let Some(session) = self.session.take() {
            if let Err(e) = session.umount_and_join() {
                log::warn!("unmounting {}: {e}", input.display());
                let _ = nix::mount::umount2(&input, nix::mount::MntFlags::MNT_DETACH);
            }
        }
        let _ = std::fs::remove_dir(&input);
        let _ = std::fs::remove_file(self.framebuffer_path());
        let _ = std::fs::remove_dir(&self.dev_root);
    }
}

impl MockTree {
    /// Gives the simulated brick its buttons, beeper and screen: mounts the
    /// device nodes ([`SimulatedIo`]) on a directory beside the tree (the
    /// tree's root with `.dev` appended: use it as `$EV3SYSFS_DEV`) and adds
    /// `graphics/fb0` with `geometry` to the tree. Keep the returned handle
    /// as long as the devices are used; it unmounts them on drop.
    ///
    /// # Errors
    /// As [`SimulatedIo::mount`].
    pub fn add_brick_io(&self, geometry: Geometry) -> Result<SimulatedIo> {
        let mut dev = self.root().as_os_str().to_owned();
        dev.push(".dev");
        let mut io = SimulatedIo::mount(PathBuf::from(dev), geometry)?;
        let model = Box::new(graphics::Framebuffer { geometry });
        let (_, name) = super::fs::lock(&self.brick).add(model, Some("fb0"));
        io.sysfs_dir = Some(self.root().join("graphics").join(name));
        Ok(io)
    }
}
