//! The guard's slots and its fence: what a signal handler can read and
//! write (atomics only), and the permit a run command takes.
//!
//! # The fence is keyed by the device
//! A protected motor is a slot holding the device and inode of its
//! `command` file (the motor's identity, whatever handle opened it) and a
//! duplicate of that file's descriptor. A run command on ANY handle of this
//! process looks its device up (one slot compared through a remembered
//! index, a scan of the table when that misses), counts itself in flight on
//! the slot, then checks the fence: the slot fenced (its guard fired or was
//! dropped) or the process stopping (exit, fatal signal) refuses it.
//!
//! # The stop is the last write
//! The guard raises the fence, then waits until no command that passed it
//! is still in flight on the fenced slots (a command in flight on the very
//! thread the guard runs on, interrupted by a signal, is left out), then
//! stops: a command that passed the fence has landed before the stop; any
//! later one is refused. The wait is bounded (one second); if it ends with
//! commands still in flight, the guard stops, waits again and stops again.

use std::cell::Cell;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU8, AtomicUsize, Ordering};

use crate::sys;

/// How many motors can be protected at once (an EV3 has four output ports;
/// daisy-chained or I2C motor controllers add more).
pub const CAPACITY: usize = 32;

/// A slot's descriptor when free.
pub(super) const FREE: i32 = -1;
/// A slot's descriptor while being filled.
const CLAIMED: i32 = -2;

/// A motor's identity: device and inode of its `command` file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DeviceKey(pub(crate) u64, pub(crate) u64);

impl DeviceKey {
    /// The key of the open attribute `fd` (one `fstat`).
    pub(crate) fn of(fd: BorrowedFd<'_>) -> std::io::Result<DeviceKey> {
        let stat = nix::sys::stat::fstat(fd.as_raw_fd()).map_err(std::io::Error::from)?;
        #[allow(clippy::useless_conversion, clippy::unnecessary_cast)]
        Ok(DeviceKey(stat.st_dev as u64, stat.st_ino as u64))
    }

    fn words(self) -> [u32; 4] {
        [
            self.0 as u32,
            (self.0 >> 32) as u32,
            self.1 as u32,
            (self.1 >> 32) as u32,
        ]
    }
}

pub(super) struct Slot {
    /// Descriptor of `command`, [`FREE`] or [`CLAIMED`]. Published last.
    pub(super) command: AtomicI32,
    /// Descriptor of `stop_action`, or -1 to stop with the motor's own.
    pub(super) stop_action: AtomicI32,
    /// Index into [`crate::motor::StopAction::ALL`].
    pub(super) action: AtomicU8,
    /// The process that protected it: a forked child does not stop its
    /// parent's motors.
    pub(super) owner: AtomicI32,
    /// The device (32-bit words: armv5te has no 64-bit atomics).
    key: [AtomicU32; 4],
    /// Run commands on the device are refused (its guard fired or was
    /// dropped).
    pub(super) fenced: AtomicBool,
    /// Run commands on the device between their fence check and the end of
    /// their write.
    in_flight: AtomicU32,
}

impl Slot {
    const fn new() -> Slot {
        Slot {
            command: AtomicI32::new(FREE),
            stop_action: AtomicI32::new(-1),
            action: AtomicU8::new(0),
            owner: AtomicI32::new(0),
            key: [const { AtomicU32::new(0) }; 4],
            fenced: AtomicBool::new(false),
            in_flight: AtomicU32::new(0),
        }
    }

    fn holds(&self, key: DeviceKey) -> bool {
        self.command.load(Ordering::Acquire) >= 0
            && self
                .key
                .iter()
                .zip(key.words())
                .all(|(a, w)| a.load(Ordering::Relaxed) == w)
    }

    fn ours(&self, me: i32) -> bool {
        self.command.load(Ordering::Acquire) >= 0 && self.owner.load(Ordering::Relaxed) == me
    }
}

pub(super) static SLOTS: [Slot; CAPACITY] = [const { Slot::new() }; CAPACITY];
/// Slots not free (published or being filled): 0 makes the fence check one
/// atomic load.
static USED: AtomicUsize = AtomicUsize::new(0);
/// Set once the process is ending (exit, fatal signal): every protected
/// device refuses run commands.
static STOPPING: AtomicBool = AtomicBool::new(false);
/// Set while the process stops for a job-control signal (Ctrl-Z): run
/// commands on protected devices wait until it continues.
static PAUSED: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// The slot a run command of this thread is in flight on, or -1 (read
    /// by a signal handler interrupting the thread: no destructor, const).
    static IN_FLIGHT_HERE: Cell<i32> = const { Cell::new(-1) };
    /// Non-zero while this thread runs the simulated brick's code (serves
    /// its file system or holds its lock).
    static SIMULATOR_CODE: Cell<u32> = const { Cell::new(0) };
}

/// Marks the current thread as running the simulated brick's own code
/// while alive: the guard never writes from such a thread through a file
/// system the thread would have to serve.
#[derive(Debug)]
pub struct SimulatorCode(());

impl SimulatorCode {
    /// Marks the current thread until the value is dropped.
    pub fn enter() -> SimulatorCode {
        let _ = SIMULATOR_CODE.try_with(|c| c.set(c.get() + 1));
        SimulatorCode(())
    }
}

impl Drop for SimulatorCode {
    fn drop(&mut self) {
        let _ = SIMULATOR_CODE.try_with(|c| c.set(c.get().saturating_sub(1)));
    }
}

/// Whether the current thread runs the simulated brick's code.
pub(crate) fn in_simulator_code() -> bool {
    SIMULATOR_CODE.try_with(|c| c.get() > 0).unwrap_or(false)
}

/// Claims a free slot for `key` (fill it, then [`publish`] it).
pub(super) fn claim(key: DeviceKey) -> Option<usize> {
    let slot = SLOTS.iter().position(|slot| {
        slot.command
            .compare_exchange(FREE, CLAIMED, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
    })?;
    USED.fetch_add(1, Ordering::SeqCst);
    let s = &SLOTS[slot];
    for (a, w) in s.key.iter().zip(key.words()) {
        a.store(w, Ordering::Relaxed);
    }
    s.fenced.store(false, Ordering::SeqCst);
    s.owner
        .store(nix::unistd::getpid().as_raw(), Ordering::Relaxed);
    Some(slot)
}

/// Publishes a claimed slot.
pub(super) fn publish(slot: usize, command: i32) {
    SLOTS[slot].command.store(command, Ordering::Release);
}

/// Frees a slot (before its descriptors are closed).
pub(super) fn free(slot: usize) {
    let s = &SLOTS[slot];
    s.command.store(FREE, Ordering::SeqCst);
    s.stop_action.store(-1, Ordering::Relaxed);
    s.fenced.store(false, Ordering::SeqCst);
    USED.fetch_sub(1, Ordering::SeqCst);
}

/// A handle's link to the fence: its device and where it was last found.
#[derive(Debug)]
pub(crate) struct Fence {
    key: DeviceKey,
    hint: AtomicU32,
}

impl Fence {
    pub(crate) fn new(key: DeviceKey) -> Fence {
        Fence {
            key,
            hint: AtomicU32::new(0),
        }
    }

    pub(crate) fn key(&self) -> DeviceKey {
        self.key
    }

    fn slot(&self) -> Option<usize> {
        let hint = self.hint.load(Ordering::Relaxed) as usize;
        if hint < CAPACITY && SLOTS[hint].holds(self.key) {
            return Some(hint);
        }
        let found = SLOTS.iter().position(|s| s.holds(self.key))?;
        self.hint.store(found as u32, Ordering::Relaxed);
        Some(found)
    }

    /// Checks the fence before a run command; `None` when it is up. Keep
    /// the permit until the command is written.
    pub(crate) fn run_permit(&self) -> Option<RunPermit> {
        loop {
            if USED.load(Ordering::SeqCst) == 0 {
                return Some(RunPermit(-1));
            }
            let Some(slot) = self.slot() else {
                return Some(RunPermit(-1));
            };
            let s = &SLOTS[slot];
            s.in_flight.fetch_add(1, Ordering::SeqCst);
            let _ = IN_FLIGHT_HERE.try_with(|c| c.set(slot as i32));
            let permit = RunPermit(slot as i32);
            if !s.holds(self.key) {
                // Freed or reused meanwhile: look again.
                drop(permit);
                continue;
            }
            if s.fenced.load(Ordering::SeqCst) || STOPPING.load(Ordering::SeqCst) {
                return None;
            }
            if PAUSED.load(Ordering::SeqCst) {
                drop(permit);
                while PAUSED.load(Ordering::SeqCst) {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                continue;
            }
            return Some(permit);
        }
    }
}

/// Permission to send one run command; ends its time in flight on drop.
pub(crate) struct RunPermit(i32);

impl Drop for RunPermit {
    fn drop(&mut self) {
        if let Ok(slot) = usize::try_from(self.0) {
            let _ = IN_FLIGHT_HERE.try_with(|c| c.set(-1));
            SLOTS[slot].in_flight.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// The slots this process protects, as a bit mask.
pub(super) fn owned() -> u32 {
    let me = nix::unistd::getpid().as_raw();
    SLOTS
        .iter()
        .enumerate()
        .filter(|(_, s)| s.ours(me))
        .fold(0, |mask, (i, _)| mask | 1 << i)
}

/// Waits (at most about a second) until no run command is in flight on the
/// slots of `mask`, except one of the current thread's (a signal handler
/// may have interrupted it). Returns whether none is. Async-signal-safe.
pub(super) fn wait_for_commands_in_flight(mask: u32) -> bool {
    let here = IN_FLIGHT_HERE.try_with(Cell::get).unwrap_or(-1);
    for _ in 0..4000 {
        let busy = SLOTS.iter().enumerate().any(|(i, s)| {
            mask & (1 << i) != 0 && s.in_flight.load(Ordering::SeqCst) > u32::from(i as i32 == here)
        });
        if !busy {
            return true;
        }
        sys::pause_briefly();
    }
    false
}

/// The process is ending: every protected device refuses run commands.
pub(super) fn stop_everything_from_now() {
    STOPPING.store(true, Ordering::SeqCst);
}

/// Job control: run commands wait (`true`) or go on (`false`).
pub(super) fn pause(paused: bool) {
    PAUSED.store(paused, Ordering::SeqCst);
}

const ACTION_BYTES: [&[u8]; 3] = [b"coast", b"brake", b"hold"];

/// Stops the motors of the slots in `mask`: two `pwrite`s each.
/// Async-signal-safe.
pub(super) fn stop_slots(mask: u32) {
    let me = nix::unistd::getpid().as_raw();
    for (i, slot) in SLOTS.iter().enumerate() {
        if mask & (1 << i) == 0 || !slot.ours(me) {
            continue;
        }
        let command = slot.command.load(Ordering::Acquire);
        let action = usize::from(slot.action.load(Ordering::Relaxed)).min(ACTION_BYTES.len() - 1);
        sys::store_raw(
            slot.stop_action.load(Ordering::Relaxed),
            ACTION_BYTES[action],
        );
        sys::store_raw(command, b"stop");
    }
}

/// Fences the slots of `mask`, waits for the commands in flight on them,
/// stops them (again after a second wait if the first ran out).
/// Async-signal-safe.
pub(super) fn fence_and_stop(mask: u32) {
    for (i, slot) in SLOTS.iter().enumerate() {
        if mask & (1 << i) != 0 {
            slot.fenced.store(true, Ordering::SeqCst);
        }
    }
    let drained = wait_for_commands_in_flight(mask);
    stop_slots(mask);
    if !drained {
        wait_for_commands_in_flight(mask);
        stop_slots(mask);
    }
}
