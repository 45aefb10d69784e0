//! [`StopGuard`]: motors stop when the program ends, panics, aborts, is
//! interrupted or suspended.
//!
//! The kernel keeps a motor's last command: a program that exits, panics or
//! is stopped with Ctrl-C leaves its motors running. A guard stops every
//! motor it protects
//! * when the guard is dropped (normal end of `main`),
//! * at `exit()` (also `std::process::exit`), again even if the guard was
//!   dropped before,
//! * on a panic, before the panic message (also with `panic = "abort"`),
//! * on SIGINT, SIGTERM, SIGHUP and SIGQUIT, and on SIGABRT (`abort()`, out
//!   of memory, a stack overflow reported by Rust), SIGSEGV and SIGBUS
//!   (the handler runs on an alternate signal stack). Then the action the
//!   signal had before runs: the program's own handler is called (chained),
//!   a default action ends the process as usual. A signal the program
//!   ignores (SIGHUP under `nohup`) stays ignored,
//! * on Ctrl-Z (SIGTSTP, also SIGTTIN and SIGTTOU): the motors stop before
//!   the process stops, then it stops as the default action would (or the
//!   program's own handler runs); run commands sent meanwhile wait, and
//!   after `fg` (SIGCONT) the program drives again. (In an orphaned
//!   process group the kernel discards a default SIGTSTP: the motors stop
//!   and the program goes on running, as it would without the guard.)
//!
//! Each motor stops with its own stop action (what its `stop_action` holds:
//! an arm that was holding keeps holding) unless the guard was installed
//! with [`StopGuard::install_with`], which forces one.
//!
//! # The guard wins, through every handle
//! The guard protects the motor, not the handle: the device (device and
//! inode of its `command` file) is the key. Once the program ends (exit,
//! fatal signal, the guard dropped), run commands on a protected motor fail
//! with [`Error::GuardStopped`] before anything is written, through ANY
//! handle of it in the process, also a control thread's own
//! `TachoMotor::find` that was never passed to [`StopGuard::protect`]. The
//! guard raises this fence, waits until no run command that passed it is
//! still being written (bounded: one second; then it stops, waits and
//! stops again), then stops the motors: a command that passed the fence
//! lands before the stop, a later one is refused, so the stop is the last
//! write. Checking the fence costs a few atomic operations, no syscall.
//! After a guard was dropped its motors stay fenced until a guard protects
//! them again. [`StopGuard::stop_now`] stops without raising the fence.
//! Every stop by the guard also makes the motor handles forget their
//! remembered state, so that a following `run_direct` or `set_stop_action`
//! is written again.
//!
//! # A panic the program survives is not its end
//! A panic stops every protected motor at once (the code that failed may be
//! the code that drives them), but raises no fence: if the program goes on
//! (the panic was caught by `catch_unwind` in a worker thread, or a worker
//! died and `main` carries on), run commands are accepted again, through
//! old handles and new ones, under the same or a new guard. When the panic
//! ends the program (it unwinds out of `main`, or `panic = "abort"`), the
//! end of the program stops and fences as above. A panic inside the
//! simulated brick's own code (a device model's bug) is the simulator's,
//! not the program's: the guard does not act on it (see
//! `ev3sysfs_sim::MockTree::check_models`).
//!
//! # Only in the process that installed it
//! A forked child inherits the guard's handlers; they act only in the
//! process that protected the motors: a child's `exit`, `_exit` or caught
//! panic never stops its parent's motors.
//!
//! # A program that serves the simulated brick itself
//! When the process serves a simulated brick from one of its threads
//! (`ev3sysfs_sim::MockTree`, `ev3-probe --mock`), the end of the program
//! (exit, fatal signal) ends the brick's service first (its FUSE connection
//! is aborted and the mount detached), so that nothing waits on a file
//! system that nobody will serve; the motors of that brick need no stop
//! then. The guard never writes from the brick's own threads.
//!
//! # What cannot be handled
//! SIGKILL (also the kernel's out-of-memory killer), power loss, a kernel
//! crash, or a process stopped with SIGSTOP: no code runs. On a brick, add
//! a watchdog outside the program for those, for example a small service
//! (or `ExecStopPost=` of the systemd unit that runs the program) that
//! writes `reset` to every `/sys/class/tacho-motor/*/command` when the
//! program's process is gone, or a supervisor that the program "pets"
//! (writes to a pipe) in its control loop and that resets the motors when
//! the petting stops. A program that handles these signals itself and
//! keeps running should use [`StopGuard::install_without_signals`] (a
//! fatal signal's handler ends the served bricks and fences the motors).
//!
//! The signal handler only reads atomics and calls `pwrite`, `nanosleep`,
//! `getpid` and (for a served brick) `umount2`, which are
//! async-signal-safe; the descriptors it writes to are duplicates owned by
//! the guard, so dropping a motor handle does not pull them away.
//!
//! After [`TachoMotor::reconnect`], the new motor is protected by the
//! guards that protected the old one, automatically.

mod fence;
mod stoppable;

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use crate::attr::Attribute;
use crate::error::{Error, Operation, Result};
use crate::motor::memory::{self, Shared};
use crate::motor::{StopAction, TachoMotor};
use crate::sys;

pub use fence::CAPACITY;
pub(crate) use fence::{in_simulator_code, DeviceKey, Fence, RunPermit};
#[doc(hidden)]
pub use stoppable::StopFiles;
pub use stoppable::Stoppable;

/// The process is ending (exit, fatal signal): end the service of the
/// simulated bricks this process serves (so that nothing waits on them),
/// fence every protected motor, wait for the commands in flight, stop them.
/// Async-signal-safe.
fn fire() {
    sys::end_served_bricks();
    let mine = fence::owned();
    if mine == 0 {
        return;
    }
    memory::invalidate_all();
    fence::stop_everything_from_now();
    if in_simulator_code() {
        // On a thread of a brick this process serves (a model's abort, a
        // synchronous signal there): a write could wait on this very thread
        // if the brick could not be ended (not root, no fusectl).
        return;
    }
    let drained = fence::wait_for_commands_in_flight(mine);
    fence::stop_slots(mine);
    if !drained {
        fence::wait_for_commands_in_flight(mine);
        fence::stop_slots(mine);
    }
    memory::invalidate_all();
}

/// A panic: stop every protected motor at once, without a fence (see the
/// module docs: a caught panic is not the program's end). Not from the
/// simulated brick's own threads: a model's panic is the simulator's, and
/// writing from there could wait on the thread itself.
fn on_panic() {
    if in_simulator_code() {
        return;
    }
    memory::invalidate_all();
    fence::stop_slots(fence::owned());
    memory::invalidate_all();
}

/// Job control (SIGTSTP, SIGTTIN, SIGTTOU): run commands wait, the motors
/// stop, then the process stops. Async-signal-safe.
fn on_job_stop() {
    fence::pause(true);
    if in_simulator_code() {
        return;
    }
    let mine = fence::owned();
    memory::invalidate_all();
    fence::wait_for_commands_in_flight(mine);
    fence::stop_slots(mine);
    memory::invalidate_all();
}

/// The process continues after a job-control stop.
fn on_job_continue() {
    fence::pause(false);
}

extern "C" fn on_exit() {
    fire();
}

/// Signals after which the guard stops the motors.
pub const SIGNALS: [i32; 7] = [
    libc::SIGINT,
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGQUIT,
    libc::SIGABRT,
    libc::SIGSEGV,
    libc::SIGBUS,
];

/// Job-control signals (Ctrl-Z, background reads and writes of the
/// terminal): the guard stops the motors, then the process stops.
pub const JOB_SIGNALS: [i32; 3] = [libc::SIGTSTP, libc::SIGTTIN, libc::SIGTTOU];

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
            on_panic();
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
        .get_or_init(|| {
            sys::install_chained(&SIGNALS, fire)?;
            sys::install_job_control(&JOB_SIGNALS, on_job_stop, on_job_continue)
        })
        .as_ref()
        .map_err(|e| setup_error("sigaction", e))
        .copied()
}

/// The guard id of a fenced motor whose guard is gone (dropped armed): its
/// slot keeps refusing run commands, and the exit handler stops it again.
const FENCED: u64 = 0;

/// One protected motor of one guard.
struct Protected {
    /// The guard's id, or [`FENCED`].
    guard: u64,
    slot: usize,
    /// Device and inode of the `command` file: the motor's identity.
    key: DeviceKey,
    command_path: PathBuf,
    forced: Option<StopAction>,
    _command: OwnedFd,
    _stop_action: Option<OwnedFd>,
}

impl Protected {
    /// The motor's device directory.
    fn dir(&self) -> &Path {
        self.command_path.parent().unwrap_or(&self.command_path)
    }

    fn mask(&self) -> u32 {
        1 << self.slot
    }

    fn release(self) {
        // Unpublish before the descriptors are closed (when self drops).
        fence::free(self.slot);
    }
}

fn mask_of<'a>(protected: impl IntoIterator<Item = &'a Protected>) -> u32 {
    protected.into_iter().fold(0, |m, p| m | p.mask())
}

/// Every protected motor of every guard.
static REGISTRY: Mutex<Vec<Protected>> = Mutex::new(Vec::new());

fn registry() -> MutexGuard<'static, Vec<Protected>> {
    REGISTRY.lock().unwrap_or_else(|p| p.into_inner())
}

/// Stops the motors it protects when the program ends, panics or receives
/// a signal (see the [module docs](self)).
///
/// ```no_run
/// # fn main() -> ev3sysfs::Result<()> {
/// use ev3sysfs::{motor::TachoMotor, StopGuard};
/// let guard = StopGuard::install()?;
/// let motor = TachoMotor::find(ev3sysfs::default_root(), "outA")?;
/// guard.protect(&motor)?;
/// motor.run_forever(500)?; // Ctrl-C now: the motor stops
/// # Ok(()) }
/// ```
pub struct StopGuard {
    id: u64,
    forced: Option<StopAction>,
    armed: AtomicBool,
}

impl std::fmt::Debug for StopGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let protected: Vec<PathBuf> = registry()
            .iter()
            .filter(|p| p.guard == self.id)
            .map(|p| p.dir().to_path_buf())
            .collect();
        f.debug_struct("StopGuard")
            .field("forced_stop_action", &self.forced)
            .field("protected", &protected)
            .finish()
    }
}

impl StopGuard {
    /// Installs a guard, signal handlers included; each motor stops with
    /// its own stop action.
    ///
    /// # Errors
    /// [`Error::Io`] when a handler cannot be installed.
    pub fn install() -> Result<StopGuard> {
        install_common()?;
        install_signals()?;
        Ok(StopGuard::new(None))
    }

    /// Installs a guard (as [`StopGuard::install`]) protecting `motors`:
    /// the one-line form for a program's start. Keep it alive:
    /// `let _guard = StopGuard::protecting(&tank)?;`.
    ///
    /// # Errors
    /// As [`StopGuard::install`] and [`StopGuard::protect`].
    pub fn protecting(motors: &impl Stoppable) -> Result<StopGuard> {
        let guard = StopGuard::install()?;
        guard.protect(motors)?;
        Ok(guard)
    }

    /// Installs a guard, signal handlers included, that stops every motor
    /// with `action` (motors that do not offer it coast).
    ///
    /// # Errors
    /// [`Error::Io`] when a handler cannot be installed.
    pub fn install_with(action: StopAction) -> Result<StopGuard> {
        install_common()?;
        install_signals()?;
        Ok(StopGuard::new(Some(action)))
    }

    /// Installs a guard without touching signal handlers (for programs
    /// that handle signals themselves: call [`StopGuard::stop_now`] there).
    /// Drop, exit and panic still stop the motors, with `action` if given,
    /// else with each motor's own.
    ///
    /// # Errors
    /// [`Error::Io`] when the exit handler cannot be registered.
    pub fn install_without_signals(action: Option<StopAction>) -> Result<StopGuard> {
        install_common()?;
        Ok(StopGuard::new(action))
    }

    fn new(forced: Option<StopAction>) -> StopGuard {
        static NEXT_ID: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
        StopGuard {
            id: u64::from(NEXT_ID.fetch_add(1, Ordering::Relaxed)),
            forced,
            armed: AtomicBool::new(true),
        }
    }

    /// Protects `motors`: a [`TachoMotor`], a [`DcMotor`](crate::motor::DcMotor), a [`TachoGroup`](crate::motor::TachoGroup),
    /// a [`Tank`](crate::motor::Tank) or a [`DriveBase`](crate::drive::DriveBase) (both its
    /// motors). Protecting a motor again (also through another handle
    /// of it) uses no further slot.
    ///
    /// # Errors
    /// [`Error::GuardFull`] when [`CAPACITY`] motors are protected already
    /// (motors of a group before it stay protected); errors duplicating the
    /// descriptors.
    pub fn protect(&self, motors: &impl Stoppable) -> Result<()> {
        let mut registry = registry();
        motors.each_motor(self.forced, &mut |files| {
            protect_one(&mut registry, self.id, files)
        })
    }

    /// Stops protecting the motor whose device directory is `dir` (opt-out
    /// for one motor). Returns whether it was protected.
    pub fn release(&self, dir: &Path) -> bool {
        let mut registry = registry();
        let (gone, kept): (Vec<_>, Vec<_>) = registry
            .drain(..)
            .partition(|p| p.guard == self.id && p.dir() == dir);
        *registry = kept;
        let released = !gone.is_empty();
        gone.into_iter().for_each(Protected::release);
        released
    }

    /// Stops every motor this guard protects, now. The motors' handles
    /// forget their remembered state; run commands stay allowed.
    pub fn stop_now(&self) {
        let registry = registry();
        memory::invalidate_all();
        fence::stop_slots(mask_of(registry.iter().filter(|p| p.guard == self.id)));
        memory::invalidate_all();
    }

    /// Drops the guard without stopping anything (opt-out for all).
    pub fn disarm(self) {
        self.armed.store(false, Ordering::Relaxed);
    }
}

fn key_of(attribute: &Attribute) -> Result<DeviceKey> {
    DeviceKey::of(attribute.as_fd())
        .map_err(|e| Error::from_io(attribute.path(), Operation::Open, None, e))
}

fn protect_one(registry: &mut Vec<Protected>, guard: u64, files: StopFiles<'_>) -> Result<()> {
    let key = key_of(files.command)?;
    if registry.iter().any(|p| p.guard == guard && p.key == key) {
        return Ok(());
    }
    // A new guard lifts the fence a dropped guard left on the motor.
    if let Some(i) = registry
        .iter()
        .position(|p| p.guard == FENCED && p.key == key)
    {
        registry.swap_remove(i).release();
    }
    let dup = |a: &Attribute| {
        a.as_fd()
            .try_clone_to_owned()
            .map_err(|e| Error::from_io(a.path(), Operation::Open, None, e))
    };
    let command_fd = dup(files.command)?;
    let stop_action = match (files.forced, files.stop_action) {
        (Some(_), Some(a)) => Some(dup(a)?),
        _ => None,
    };
    let action_index = files
        .forced
        .and_then(|f| StopAction::ALL.iter().position(|a| *a == f))
        .unwrap_or(0);
    let slot = match fence::claim(key) {
        Some(slot) => slot,
        None => {
            // Full: the oldest fenced motor of a dropped guard gives way.
            let Some(i) = registry.iter().position(|p| p.guard == FENCED) else {
                return Err(Error::GuardFull { capacity: CAPACITY });
            };
            registry.remove(i).release();
            fence::claim(key).ok_or(Error::GuardFull { capacity: CAPACITY })?
        }
    };
    let s = &fence::SLOTS[slot];
    s.stop_action.store(
        stop_action.as_ref().map_or(-1, |fd| fd.as_raw_fd()),
        Ordering::Relaxed,
    );
    s.action.store(action_index as u8, Ordering::Relaxed);
    fence::publish(slot, command_fd.as_raw_fd());
    registry.push(Protected {
        guard,
        slot,
        key,
        command_path: files.command.path().to_path_buf(),
        forced: files.forced,
        _command: command_fd,
        _stop_action: stop_action,
    });
    Ok(())
}

/// After a reconnect: the guards that protected `old` (a handle of the
/// unplugged motor) protect `new` instead.
pub(crate) fn reprotect(old: &Arc<Shared>, new: &TachoMotor) -> Result<()> {
    let mut registry = registry();
    let key = old.fence.key();
    let (gone, kept): (Vec<_>, Vec<_>) = registry.drain(..).partition(|p| p.key == key);
    *registry = kept;
    let guards: Vec<(u64, Option<StopAction>)> = gone
        .iter()
        .filter(|p| p.guard != FENCED)
        .map(|p| (p.guard, p.forced))
        .collect();
    gone.into_iter().for_each(Protected::release);
    for (guard, forced) in guards {
        new.each_motor(forced, &mut |files| {
            protect_one(&mut registry, guard, files)
        })?;
    }
    Ok(())
}

impl Drop for StopGuard {
    fn drop(&mut self) {
        let mut registry = registry();
        if !self.armed.load(Ordering::Relaxed) {
            let (mine, others): (Vec<_>, Vec<_>) =
                registry.drain(..).partition(|p| p.guard == self.id);
            *registry = others;
            mine.into_iter().for_each(Protected::release);
            return;
        }
        // Fence first, so that no thread (through any handle) restarts a
        // motor after the stop; the motors stay fenced.
        let mine = registry.iter_mut().filter(|p| p.guard == self.id);
        let mask = mine.fold(0, |m, p| {
            p.guard = FENCED;
            m | p.mask()
        });
        memory::invalidate_all();
        fence::fence_and_stop(mask);
        memory::invalidate_all();
    }
}

/// What the simulated brick's crate (`ev3sysfs-sim`) needs from the guard:
/// not an API for robot programs.
#[doc(hidden)]
pub mod served {
    use std::os::fd::OwnedFd;
    use std::path::Path;

    pub use super::fence::SimulatorCode;

    /// Registers a simulated brick this process serves at `mount` (its
    /// fusectl `abort` file, if any): it is ended first when the process
    /// ends (exit, fatal signal, the guard), and `mount` is removed then
    /// when `made_for_it`. `None` when the table is full.
    pub fn register(mount: &Path, abort: Option<OwnedFd>, made_for_it: bool) -> Option<usize> {
        crate::sys::register_served(mount, abort, made_for_it)
    }

    /// Forgets entry `i` (before the brick is unmounted).
    pub fn unregister(i: usize) {
        crate::sys::unregister_served(i);
    }

    /// Once per process: at exit and on the signals that end a process (see
    /// [`super::SIGNALS`]), the served bricks are ended, also without a
    /// guard.
    ///
    /// # Errors
    /// When the exit or signal handlers cannot be installed.
    pub fn end_at_process_end() -> std::io::Result<()> {
        static ONCE: std::sync::OnceLock<std::result::Result<(), String>> =
            std::sync::OnceLock::new();
        extern "C" fn at_exit() {
            crate::sys::end_served_bricks();
        }
        ONCE.get_or_init(|| {
            crate::sys::at_exit(at_exit).map_err(|e| e.to_string())?;
            crate::sys::install_chained(&super::SIGNALS, crate::sys::end_served_bricks)
                .map_err(|e| e.to_string())
        })
        .clone()
        .map_err(std::io::Error::other)
    }
}
