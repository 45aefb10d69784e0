//! The brick's six buttons, read from their input device (evdev).
//!
//! On ev3dev the buttons are the `gpio-keys` input device
//! `/dev/input/by-path/platform-gpio_keys-event` ([`Buttons::open_default`]
//! finds it under [`crate::input::default_dev_root`], so `$EV3SYSFS_DEV`
//! points it at a simulated brick). Each button is a key code:
//!
//! | button | key code |
//! |---|---|
//! | [`Button::Up`] | `KEY_UP` (103) |
//! | [`Button::Down`] | `KEY_DOWN` (108) |
//! | [`Button::Left`] | `KEY_LEFT` (105) |
//! | [`Button::Right`] | `KEY_RIGHT` (106) |
//! | [`Button::Enter`] (centre) | `KEY_ENTER` (28) |
//! | [`Button::Backspace`] (back) | `KEY_BACKSPACE` (14) |
//!
//! [`Buttons::pressed`] is one `EVIOCGKEY` ioctl into a stack buffer (no
//! allocation); as on evdev it discards the key events queued on the
//! descriptor. The waits look at the state once, then follow the queued
//! presses and releases in `poll`, so a click that is over before they look
//! is still seen; they never spin and honour their timeout.
//! [`Buttons::events`] reads the presses and releases in order, one `read`
//! per event. The descriptor has its own event queue, which the waits and
//! `pressed` consume: use either the waits or the events on one
//! [`Buttons`], or open two.
//!
//! ```
//! use std::time::Duration;
//! use ev3sysfs::buttons::{Button, Buttons, BUTTONS_DEVICE};
//! use ev3sysfs::Error;
//!
//! fn main() -> ev3sysfs::Result<()> {
//!     # // Not a brick (nor $EV3SYSFS_DEV): nothing to read.
//!     # if !ev3sysfs::input::default_dev_root().join(BUTTONS_DEVICE).exists() { return Ok(()); }
//!     let buttons = Buttons::open_default()?;
//!     println!("held now: {:?}", buttons.pressed()?); // one ioctl
//!     match buttons.wait_for_press(Button::Enter, Duration::from_secs(5)) {
//!         Ok(()) => println!("enter is down"),
//!         Err(e @ Error::Timeout { .. }) => println!("{e}"),
//!         Err(e) => return Err(e),
//!     }
//!     // What happened meanwhile, in order.
//!     while let Some(event) = buttons.next_event(Some(Duration::from_millis(100)))? {
//!         println!("{:?} {:?}", event.button, event.action);
//!     }
//!     Ok(())
//! }
//! ```

use crate::clock::Instant;
use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsFd, AsRawFd};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{Error, Operation, Result};
use crate::input::{InputEvent, EVENT_SIZE, EV_KEY, EV_SYN};

/// `EV_SYN` code: the kernel dropped events (the client's queue was full).
const SYN_DROPPED: u16 = 3;
use crate::sys::{input_key_state, KEY_BITMAP_LEN};

/// Where the buttons are, relative to the device directory (`/dev`).
pub const BUTTONS_DEVICE: &str = "input/by-path/platform-gpio_keys-event";

/// One of the brick's buttons.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Button {
    /// Up (`KEY_UP`, 103).
    Up,
    /// Down (`KEY_DOWN`, 108).
    Down,
    /// Left (`KEY_LEFT`, 105).
    Left,
    /// Right (`KEY_RIGHT`, 106).
    Right,
    /// The centre button (`KEY_ENTER`, 28).
    Enter,
    /// The back button, top left (`KEY_BACKSPACE`, 14).
    Backspace,
}

impl Button {
    /// All six buttons.
    pub const ALL: [Button; 6] = [
        Button::Up,
        Button::Down,
        Button::Left,
        Button::Right,
        Button::Enter,
        Button::Backspace,
    ];

    /// The button's key code (`EV_KEY` code).
    pub const fn code(self) -> u16 {
        match self {
            Button::Up => 103,
            Button::Down => 108,
            Button::Left => 105,
            Button::Right => 106,
            Button::Enter => 28,
            Button::Backspace => 14,
        }
    }

    /// The button with this key code, if it is one of the six.
    pub fn from_code(code: u16) -> Option<Button> {
        Button::ALL.into_iter().find(|b| b.code() == code)
    }

    const fn bit(self) -> u8 {
        1 << self as u8
    }
}

impl fmt::Display for Button {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Button::Up => "up",
            Button::Down => "down",
            Button::Left => "left",
            Button::Right => "right",
            Button::Enter => "enter",
            Button::Backspace => "backspace",
        })
    }
}

/// A set of buttons (e.g. those held down), without allocation.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ButtonSet(u8);

impl ButtonSet {
    /// No button.
    pub const EMPTY: ButtonSet = ButtonSet(0);

    /// The buttons whose bit is set in an `EVIOCGKEY` key bitmap.
    pub fn from_key_bitmap(bitmap: &[u8]) -> ButtonSet {
        let mut set = ButtonSet::EMPTY;
        for button in Button::ALL {
            let code = usize::from(button.code());
            if bitmap
                .get(code / 8)
                .is_some_and(|b| b & (1 << (code % 8)) != 0)
            {
                set.insert(button);
            }
        }
        set
    }

    /// `true` when `button` is in the set.
    pub const fn contains(self, button: Button) -> bool {
        self.0 & button.bit() != 0
    }

    /// Adds `button`.
    pub fn insert(&mut self, button: Button) {
        self.0 |= button.bit();
    }

    /// Removes `button`.
    pub fn remove(&mut self, button: Button) {
        self.0 &= !button.bit();
    }

    /// `true` when no button is in the set.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The number of buttons in the set.
    pub const fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// The buttons in the set, in [`Button::ALL`] order.
    pub fn iter(self) -> impl Iterator<Item = Button> {
        Button::ALL.into_iter().filter(move |b| self.contains(*b))
    }
}

impl fmt::Debug for ButtonSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl FromIterator<Button> for ButtonSet {
    fn from_iter<I: IntoIterator<Item = Button>>(iter: I) -> ButtonSet {
        let mut set = ButtonSet::EMPTY;
        for button in iter {
            set.insert(button);
        }
        set
    }
}

/// What happened to a button.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Pressed (value 1).
    Pressed,
    /// Released (value 0).
    Released,
    /// Still held, auto-repeat (value 2).
    Repeated,
}

/// A press or release, as the kernel reported it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ButtonEvent {
    /// Which button.
    pub button: Button,
    /// What happened.
    pub action: Action,
    /// The kernel's time stamp (`CLOCK_REALTIME` since the epoch).
    pub time: Duration,
}

impl ButtonEvent {
    /// The button event in an input event, if it is one (`EV_KEY` with one
    /// of the six codes).
    pub fn from_input(event: &InputEvent) -> Option<ButtonEvent> {
        if event.kind != EV_KEY {
            return None;
        }
        let action = match event.value {
            0 => Action::Released,
            1 => Action::Pressed,
            2 => Action::Repeated,
            _ => return None,
        };
        Some(ButtonEvent {
            button: Button::from_code(event.code)?,
            action,
            time: event.time,
        })
    }
}

/// The brick's buttons: one open input device.
#[derive(Debug)]
pub struct Buttons {
    file: File,
    path: PathBuf,
}

/// The input device's descriptor (to `poll` it with other things; see
/// [`crate::wait::WaitAny`]).
impl AsFd for Buttons {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.file.as_fd()
    }
}

impl Buttons {
    /// Opens the buttons' input device at `path` (read-only, non-blocking).
    ///
    /// # Errors
    /// [`Error::Disconnected`] when it does not exist, or another open error
    /// ([`Error::PermissionDenied`]: on a brick, the user must be in the
    /// `input` group; `robot` is).
    pub fn open(path: impl Into<PathBuf>) -> Result<Buttons> {
        let path = path.into();
        let file = crate::sys::open_cloexec(&path, libc::O_RDONLY | libc::O_NONBLOCK)
            .map_err(|e| Error::from_io(&path, Operation::Open, None, e))?;
        Ok(Buttons { file, path })
    }

    /// Opens [`BUTTONS_DEVICE`] under [`crate::input::default_dev_root`].
    ///
    /// # Errors
    /// As [`Buttons::open`].
    pub fn open_default() -> Result<Buttons> {
        Buttons::open(crate::input::default_dev_root().join(BUTTONS_DEVICE))
    }

    /// The device's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The buttons held down now: one `EVIOCGKEY` ioctl, no allocation.
    ///
    /// On a real kernel (since Linux 3.12, so on ev3dev's 4.14 too)
    /// `EVIOCGKEY` also **discards the key events queued on this
    /// descriptor** (evdev's `evdev_handle_get_val` flushes them), and the
    /// simulated brick does the same. A program that calls `pressed()`
    /// between [`Buttons::next_event`] calls loses the presses queued
    /// meanwhile: use one [`Buttons`] for events and another for the state.
    /// The waits call it once at their start, then follow the events, so
    /// they see every press that comes after they started, even a click
    /// that is over before they look.
    ///
    /// # Errors
    /// [`Error::Unsupported`] when the file is not an input device (`ENOTTY`),
    /// [`Error::Disconnected`] when the device went away.
    pub fn pressed(&self) -> Result<ButtonSet> {
        let mut bitmap = [0u8; KEY_BITMAP_LEN];
        input_key_state(self.file.as_raw_fd(), &mut bitmap).map_err(|e| self.error(e))?;
        Ok(ButtonSet::from_key_bitmap(&bitmap))
    }

    /// `true` when `button` is held down (one ioctl).
    ///
    /// # Errors
    /// As [`Buttons::pressed`].
    pub fn is_pressed(&self, button: Button) -> Result<bool> {
        Ok(self.pressed()?.contains(button))
    }

    /// Waits until `button` is down (returns at once when it already is).
    ///
    /// # Errors
    /// [`Error::Timeout`], or as [`Buttons::pressed`].
    pub fn wait_for_press(&self, button: Button, timeout: Duration) -> Result<()> {
        self.wait_until(
            timeout,
            |set| set.contains(button),
            || format!("{button} pressed"),
        )
        .map(|_| ())
    }

    /// Waits until `button` is up (returns at once when it already is).
    ///
    /// # Errors
    /// [`Error::Timeout`], or as [`Buttons::pressed`].
    pub fn wait_for_release(&self, button: Button, timeout: Duration) -> Result<()> {
        self.wait_until(
            timeout,
            |set| !set.contains(button),
            || format!("{button} released"),
        )
        .map(|_| ())
    }

    /// Waits until at least one button is down; returns those that are.
    ///
    /// # Errors
    /// [`Error::Timeout`], or as [`Buttons::pressed`].
    pub fn wait_for_any_press(&self, timeout: Duration) -> Result<ButtonSet> {
        self.wait_until(
            timeout,
            |set| !set.is_empty(),
            || "any button pressed".into(),
        )
    }

    /// Looks at the state once (`EVIOCGKEY`, which also discards the key
    /// events queued before it, as evdev does), then follows the presses
    /// and releases queued after it, sleeping in `poll` between them, until
    /// `done` holds for the state after some event. A click shorter than
    /// the time between two looks is still seen: its press is in the queue
    /// even when the button is up again.
    fn wait_until(
        &self,
        timeout: Duration,
        done: impl Fn(ButtonSet) -> bool,
        what: impl FnOnce() -> String,
    ) -> Result<ButtonSet> {
        let start = Instant::now();
        let mut set = self.pressed()?;
        let mut buf = [0u8; EVENT_SIZE * 8];
        loop {
            if done(set) {
                return Ok(set);
            }
            let left = timeout.saturating_sub(start.elapsed());
            if left.is_zero() {
                break;
            }
            let n = match (&self.file).read(&mut buf) {
                Ok(0) => {
                    // The end of a recorded stream: nothing more will come.
                    std::thread::sleep(left);
                    break;
                }
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if !self.wait_readable(left)? {
                        break;
                    }
                    continue;
                }
                Err(e) => return Err(self.error(e)),
            };
            for chunk in buf[..n].as_chunks::<EVENT_SIZE>().0 {
                let Some(event) = InputEvent::from_bytes(chunk) else {
                    continue;
                };
                if event.kind == EV_SYN && event.code == SYN_DROPPED {
                    // The queue overflowed: events were lost, ask the state.
                    set = self.pressed()?;
                } else if let Some(e) = ButtonEvent::from_input(&event) {
                    match e.action {
                        Action::Pressed | Action::Repeated => set.insert(e.button),
                        Action::Released => set.remove(e.button),
                    }
                }
                if done(set) {
                    return Ok(set);
                }
            }
        }
        Err(Error::Timeout {
            what: what(),
            waited: timeout,
        })
    }

    /// `poll(POLLIN)` for at most `timeout`; `true` when readable.
    fn wait_readable(&self, timeout: Duration) -> Result<bool> {
        use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
        // Rounded up, so that a sub-millisecond rest does not spin.
        let millis = timeout.as_micros().div_ceil(1000);
        let millis = u16::try_from(millis).unwrap_or(u16::MAX);
        let mut fds = [PollFd::new(self.file.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::from(millis)) {
            Ok(0) => Ok(false),
            Ok(_) => {
                let revents = fds[0].revents().unwrap_or(PollFlags::empty());
                if revents.intersects(PollFlags::POLLERR | PollFlags::POLLHUP | PollFlags::POLLNVAL)
                {
                    return Err(self.error(io::Error::from_raw_os_error(libc::ENODEV)));
                }
                Ok(true)
            }
            Err(nix::errno::Errno::EINTR) => Ok(true),
            Err(errno) => Err(Error::from_io(
                &self.path,
                Operation::Poll,
                None,
                io::Error::from(errno),
            )),
        }
    }

    /// The next button event, waiting at most `timeout` (`None`: for ever).
    /// Other events (`EV_SYN`, `EV_MSC`) are skipped. `Ok(None)` on timeout,
    /// and at the end of a regular file (a recorded event stream).
    ///
    /// # Errors
    /// [`Error::Disconnected`] when the device went away, other read errors.
    pub fn next_event(&self, timeout: Option<Duration>) -> Result<Option<ButtonEvent>> {
        // A look at the queue (zero timeout) or an endless wait reads no
        // clock: each read is a syscall on the brick (no vDSO on ARMv5).
        let start = timeout.filter(|t| !t.is_zero()).map(|_| Instant::now());
        let elapsed = || start.map_or(Duration::ZERO, |s| s.elapsed());
        let mut buf = [0u8; EVENT_SIZE];
        let mut skipped = 0u32;
        loop {
            match (&self.file).read(&mut buf) {
                Ok(0) => return Ok(None),
                Ok(n) if n < EVENT_SIZE => {
                    return Err(Error::parse(&self.path, &buf[..n], "a whole input_event"))
                }
                Ok(_) => {
                    if let Some(event) =
                        InputEvent::from_bytes(&buf).and_then(|e| ButtonEvent::from_input(&e))
                    {
                        return Ok(Some(event));
                    }
                    // Not a button event (an EV_SYN between two; or
                    // /dev/zero's endless zeros): past a few, the timeout
                    // counts as when nothing comes.
                    skipped += 1;
                    if skipped > 16 && timeout.is_some_and(|t| elapsed() >= t) {
                        return Ok(None);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    let left = match timeout {
                        Some(t) => t.saturating_sub(elapsed()),
                        None => Duration::from_secs(60),
                    };
                    if left.is_zero() {
                        return Ok(None);
                    }
                    if !self.wait_readable(left)? && timeout.is_some() {
                        return Ok(None);
                    }
                }
                Err(e) => return Err(self.error(e)),
            }
        }
    }

    /// The button events, in order, waiting for each as long as it takes.
    /// Ends at the end of a regular file; stops after the first error.
    pub fn events(&self) -> Events<'_> {
        Events {
            buttons: self,
            failed: false,
        }
    }

    fn error(&self, e: io::Error) -> Error {
        if e.raw_os_error() == Some(libc::ENOTTY) {
            return Error::Unsupported {
                path: self.path.clone(),
                operation: Operation::Read,
                source: e,
            };
        }
        Error::from_io(&self.path, Operation::Read, None, e)
    }
}

/// Iterator over button events, from [`Buttons::events`].
#[derive(Debug)]
pub struct Events<'a> {
    buttons: &'a Buttons,
    failed: bool,
}

impl Iterator for Events<'_> {
    type Item = Result<ButtonEvent>;

    fn next(&mut self) -> Option<Result<ButtonEvent>> {
        if self.failed {
            return None;
        }
        match self.buttons.next_event(None) {
            Ok(event) => event.map(Ok),
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_bitmap() {
        for b in Button::ALL {
            assert_eq!(Button::from_code(b.code()), Some(b));
        }
        assert_eq!(Button::from_code(1), None);
        let mut bitmap = [0u8; KEY_BITMAP_LEN];
        bitmap[103 / 8] |= 1 << (103 % 8);
        bitmap[14 / 8] |= 1 << (14 % 8);
        bitmap[30 / 8] |= 1 << (30 % 8); // KEY_A: not a brick button
        let set = ButtonSet::from_key_bitmap(&bitmap);
        assert_eq!(set, [Button::Up, Button::Backspace].into_iter().collect());
        assert_eq!(set.len(), 2);
        assert_eq!(format!("{set:?}"), "{Up, Backspace}");
    }
}
