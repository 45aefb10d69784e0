//! [`StopGuard`]: motors stop when the program ends, panics or is
//! interrupted.
//!
//! The kernel keeps a motor's last command: a program that exits, panics or
//! is stopped with Ctrl-C leaves its motors running. A guard stops every
//! motor it protects
//! * when the guard is dropped (normal end of `main`),
//! * at `exit()` (also `std::process::exit`) if the guard is still alive,
//! * on a panic, before the panic message (also with `panic = "abort"`),
//! * on SIGINT, SIGTERM, SIGHUP and SIGQUIT, after which the signal is
//!   raised again with its default action, so the process ends as usual.
//!
//! SIGKILL and power loss cannot be caught. The signal handler only reads
//! atomics and calls `pwrite` (and `ftruncate` on mock files), which are
//! async-signal-safe; the descriptors it writes to are duplicates owned by
//! the guard, so dropping a motor handle does not pull them away.
//!
//! From ordinary code ([`StopGuard::stop_now`], dropping the guard) the
//! motor's handle also forgets the command it sent last (so a following
//! `run_direct` is written again); the stop is the same two `pwrite`s as
//! from a signal, on a brick and on the simulated brick alike.

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU8, Ordering};
use std::sync::{Mutex, OnceLock};

use crate::attr::Attribute;
use crate::error::{Error, Operation, Result};
use crate::motor::{CommandMemory, DcMotor, StopAction, TachoMotor};
use crate::sys;

/// How many motors can be protected at once (an EV3 has four output ports;
/// daisy-chained or I2C motor controllers add more).
pub const CAPACITY: usize = 32;

struct Slot {
    /// Descriptor of `command`, or -1 for a free slot. Published last.
    command: AtomicI32,
    /// Descriptor of `stop_action`, or -1.
    stop_action: AtomicI32,
    /// Index into [`StopAction::ALL`].
    action: AtomicU8,
}

impl Slot {
    const fn new() -> Slot {
        Slot {
            command: AtomicI32::new(-1),
            stop_action: AtomicI32::new(-1),
            action: AtomicU8::new(0),
        }
    }
}

static SLOTS: [Slot; CAPACITY] = [const { Slot::new() }; CAPACITY];

const ACTION_BYTES: [&[u8]; 3] = [b"coast", b"brake", b"hold"];

fn stop_slot(slot: &Slot) {
    let command = slot.command.load(Ordering::Acquire);
    if command < 0 {
        return;
    }
    let action = usize::from(slot.action.load(Ordering::Relaxed)).min(ACTION_BYTES.len() - 1);
    sys::store_raw(
        slot.stop_action.load(Ordering::Relaxed),
        ACTION_BYTES[action],
    );
    sys::store_raw(command, b"stop");
}

/// Stops every protected motor. Async-signal-safe.
fn stop_all() {
    SLOTS.iter().for_each(stop_slot);
}

extern "C" fn on_signal(sig: i32) {
    stop_all();
    sys::reraise_default(sig);
}

extern "C" fn on_exit() {
    stop_all();
}

/// Signals after which the guard stops the motors.
pub const SIGNALS: [i32; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

fn setup_error(what: &str, e: &std::io::Error) -> Error {
    Error::Io {
        path: PathBuf::from(what),
        operation: Operation::Write,
        source: std::io::Error::new(e.kind(), e.to_string()),
    }
}

/// Installs the process-wide parts once: panic hook and atexit.
fn install_common() -> Result<()> {
    static COMMON: OnceLock<std::result::Result<(), std::io::Error>> = OnceLock::new();
    let result = COMMON.get_or_init(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            stop_all();
            previous(info);
        }));
        sys::at_exit(on_exit)
    });
    result
        .as_ref()
        .map_err(|e| setup_error("atexit", e))
        .copied()
}

fn install_signals() -> Result<()> {
    static SIGNAL_SETUP: OnceLock<std::result::Result<(), std::io::Error>> = OnceLock::new();
    SIGNAL_SETUP
        .get_or_init(|| sys::install_handler(&SIGNALS, on_signal))
        .as_ref()
        .map_err(|e| setup_error("sigaction", e))
        .copied()
}

/// What a guard needs of a motor to stop it.
#[doc(hidden)]
#[derive(Debug)]
pub struct StopFiles<'a> {
    command: &'a Attribute,
    stop_action: &'a Attribute,
    action: StopAction,
    memory: Option<CommandMemory>,
}

/// A motor a guard can stop.
pub trait Stoppable: sealed::Sealed {
    /// The open `command` and `stop_action` attributes, the stop action to
    /// use given the one the guard wants (a motor that does not offer it
    /// coasts), and the handle's command memory.
    #[doc(hidden)]
    fn stop_files(&self, wanted: StopAction) -> Result<StopFiles<'_>>;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for crate::motor::TachoMotor {}
    impl Sealed for crate::motor::DcMotor {}
}

impl Stoppable for TachoMotor {
    fn stop_files(&self, wanted: StopAction) -> Result<StopFiles<'_>> {
        let action = if self.offers_stop_action(wanted) {
            wanted
        } else {
            StopAction::Coast
        };
        let (command, stop_action) = self.stop_attributes();
        Ok(StopFiles {
            command,
            stop_action,
            action,
            memory: Some(self.command_memory()),
        })
    }
}

impl Stoppable for DcMotor {
    fn stop_files(&self, wanted: StopAction) -> Result<StopFiles<'_>> {
        let action = match wanted {
            StopAction::Brake => StopAction::Brake,
            _ => StopAction::Coast,
        };
        Ok(StopFiles {
            command: self.command_attribute(),
            stop_action: self.device().attribute("stop_action")?,
            action,
            memory: None,
        })
    }
}

struct Protected {
    slot: usize,
    command_path: PathBuf,
    memory: Option<CommandMemory>,
    _command: OwnedFd,
    _stop_action: OwnedFd,
}

impl Protected {
    /// The motor's device directory.
    fn dir(&self) -> &std::path::Path {
        self.command_path.parent().unwrap_or(&self.command_path)
    }

    /// Stops the motor from ordinary code (not a signal handler): the
    /// handle forgets its last command, then the same two `pwrite`s as on a
    /// signal.
    fn stop(&self) {
        if let Some(memory) = &self.memory {
            memory.forget();
        }
        stop_slot(&SLOTS[self.slot]);
    }
}

/// Stops the motors it protects when the program ends, panics or receives
/// SIGINT/SIGTERM/SIGHUP/SIGQUIT (see the [module docs](self)).
///
/// ```no_run
/// # fn main() -> ev3sysfs::Result<()> {
/// use ev3sysfs::{motor::{StopAction, TachoMotor}, StopGuard};
/// let guard = StopGuard::install(StopAction::Brake)?;
/// let motor = TachoMotor::find(ev3sysfs::default_root(), "outA")?;
/// guard.protect(&motor)?;
/// motor.run_forever(500)?; // Ctrl-C now: the motor brakes
/// # Ok(()) }
/// ```
pub struct StopGuard {
    action: StopAction,
    protected: Mutex<Vec<Protected>>,
    armed: AtomicBool,
}

impl std::fmt::Debug for StopGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StopGuard")
            .field("action", &self.action)
            .field(
                "protected",
                &self
                    .lock()
                    .iter()
                    .map(|p| p.dir().to_path_buf())
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl StopGuard {
    /// Installs the guard, signal handlers included, stopping with `action`
    /// (motors that do not offer it coast).
    ///
    /// # Errors
    /// [`Error::Io`] when a handler cannot be installed.
    pub fn install(action: StopAction) -> Result<StopGuard> {
        install_common()?;
        install_signals()?;
        Ok(StopGuard::new(action))
    }

    /// Installs the guard without touching signal handlers (for programs
    /// that handle signals themselves: call [`StopGuard::stop_now`] there).
    /// Drop, exit and panic still stop the motors.
    ///
    /// # Errors
    /// [`Error::Io`] when the exit handler cannot be registered.
    pub fn install_without_signals(action: StopAction) -> Result<StopGuard> {
        install_common()?;
        Ok(StopGuard::new(action))
    }

    fn new(action: StopAction) -> StopGuard {
        StopGuard {
            action,
            protected: Mutex::new(Vec::new()),
            armed: AtomicBool::new(true),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Protected>> {
        self.protected.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Protects `motor`.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] when [`CAPACITY`] motors are protected already;
    /// errors duplicating its descriptors.
    pub fn protect(&self, motor: &impl Stoppable) -> Result<()> {
        let files = motor.stop_files(self.action)?;
        let (command, stop_action, action) = (files.command, files.stop_action, files.action);
        let dup = |a: &Attribute| {
            a.as_fd()
                .try_clone_to_owned()
                .map_err(|e| Error::from_io(a.path(), Operation::Open, None, e))
        };
        let (command_fd, stop_action_fd) = (dup(command)?, dup(stop_action)?);
        let action_index = StopAction::ALL
            .iter()
            .position(|a| *a == action)
            .unwrap_or(0);
        for (i, slot) in SLOTS.iter().enumerate() {
            if slot
                .command
                .compare_exchange(-1, -2, Ordering::AcqRel, Ordering::Relaxed)
                .is_err()
            {
                continue;
            }
            // Claimed (-2 = being filled, skipped by stop_slot).
            slot.stop_action
                .store(stop_action_fd.as_raw_fd(), Ordering::Relaxed);
            slot.action.store(action_index as u8, Ordering::Relaxed);
            slot.command
                .store(command_fd.as_raw_fd(), Ordering::Release);
            self.lock().push(Protected {
                slot: i,
                command_path: command.path().to_path_buf(),
                memory: files.memory,
                _command: command_fd,
                _stop_action: stop_action_fd,
            });
            return Ok(());
        }
        Err(Error::OutOfRange {
            attribute: "protected motors",
            value: CAPACITY as i64 + 1,
            min: 0,
            max: CAPACITY as i64,
        })
    }

    /// Stops protecting the motor whose device directory is `dir` (opt-out
    /// for one motor). Returns whether it was protected.
    pub fn release(&self, dir: &std::path::Path) -> bool {
        let mut protected = self.lock();
        let before = protected.len();
        protected.retain(|p| {
            if p.dir() == dir {
                free(p.slot);
                false
            } else {
                true
            }
        });
        protected.len() != before
    }

    /// Stops every motor this guard protects, now.
    pub fn stop_now(&self) {
        for p in self.lock().iter() {
            p.stop();
        }
    }

    /// Drops the guard without stopping anything (opt-out for all).
    pub fn disarm(self) {
        self.armed.store(false, Ordering::Relaxed);
    }
}

fn free(slot: usize) {
    // Unpublish before the descriptors are closed by the caller.
    SLOTS[slot].command.store(-1, Ordering::Release);
    SLOTS[slot].stop_action.store(-1, Ordering::Relaxed);
}

impl Drop for StopGuard {
    fn drop(&mut self) {
        if self.armed.load(Ordering::Relaxed) {
            self.stop_now();
        }
        for p in self.lock().drain(..) {
            free(p.slot);
        }
    }
}
