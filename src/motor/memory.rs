//! What a motor handle shares with the stop guard: the values it remembers
//! (to skip writes that change nothing, only for a handle declared
//! `TachoMotor::assume_sole_owner`) and the fence the guard puts up
//! once it has fired.
//!
//! # The rule for remembered values
//! A remembered value (say "run-direct is the active command") is used only
//! when
//! * it was recorded by a write through this handle that overlapped no
//!   other write of the same attribute through this handle (every write
//!   counts itself in flight; a write that starts while another is in
//!   flight poisons the memory until all are done, and then nothing is
//!   remembered), and
//! * no stop by the stop guard (signal, panic, exit, drop, `stop_now`)
//!   started or ended since the write began (a process-wide stop epoch,
//!   bumped before and after every guard stop).
//!
//! Otherwise the value is written again. All of it is atomics in one word
//! per attribute: no lock, no syscall, safe from a signal handler.
//!
//! # The fence
//! Once the guard has fired (panic, fatal signal, exit) or was dropped, run
//! commands on the motors it protected are refused
//! ([`crate::Error::GuardStopped`]). A run command on a protected motor
//! counts itself in flight while it checks the fence and writes; the guard
//! raises the fence first, waits (briefly, bounded) for the commands in
//! flight, and stops the motors after them: its stop is the last write.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering::SeqCst};

use crate::sys;

/// Nothing remembered.
pub(crate) const UNKNOWN: u8 = 0;

const CODE_MASK: u32 = 0x7;
const POISON: u32 = 0x8;
const IN_FLIGHT_SHIFT: u32 = 4;
const IN_FLIGHT_MAX: u32 = 0xfff;
const EPOCH_SHIFT: u32 = 16;

/// Bumped before and after every stop by the guard.
static STOP_EPOCH: AtomicU32 = AtomicU32::new(0);

/// Makes every handle forget what it remembers. Async-signal-safe.
pub(crate) fn invalidate_all() {
    STOP_EPOCH.fetch_add(1, SeqCst);
}

fn stop_epoch() -> u32 {
    STOP_EPOCH.load(SeqCst) & 0xffff
}

/// One remembered value (a small code, [`UNKNOWN`] for none), with the
/// bookkeeping that keeps it true (see the module docs).
#[derive(Debug)]
pub(crate) struct Remembered(AtomicU32);

/// A write in progress, from [`Remembered::begin`].
#[must_use]
pub(crate) struct Write {
    epoch: u32,
}

impl Remembered {
    pub(crate) fn new(code: u8) -> Remembered {
        Remembered(AtomicU32::new(
            (stop_epoch() << EPOCH_SHIFT) | (u32::from(code) & CODE_MASK),
        ))
    }

    /// Whether `code` is remembered and still true.
    pub(crate) fn is(&self, code: u8) -> bool {
        let w = self.0.load(SeqCst);
        code != UNKNOWN
            && (w >> IN_FLIGHT_SHIFT) & IN_FLIGHT_MAX == 0
            && w & CODE_MASK == u32::from(code)
            && w >> EPOCH_SHIFT == stop_epoch()
    }

    /// Starts a write: forgets the value, counts the write in flight.
    pub(crate) fn begin(&self) -> Write {
        let mut w = self.0.load(SeqCst);
        loop {
            let in_flight = (w >> IN_FLIGHT_SHIFT) & IN_FLIGHT_MAX;
            if in_flight == IN_FLIGHT_MAX {
                std::thread::yield_now();
                w = self.0.load(SeqCst);
                continue;
            }
            let poison = if in_flight > 0 || w & POISON != 0 {
                POISON
            } else {
                0
            };
            let new = (w & !(IN_FLIGHT_MAX << IN_FLIGHT_SHIFT) & !CODE_MASK & !POISON)
                | poison
                | ((in_flight + 1) << IN_FLIGHT_SHIFT);
            match self.0.compare_exchange_weak(w, new, SeqCst, SeqCst) {
                Ok(_) => break,
                Err(now) => w = now,
            }
        }
        Write {
            epoch: stop_epoch(),
        }
    }

    /// Ends a write; `code` is what it made true ([`UNKNOWN`] after an
    /// error). Remembered only if no other write overlapped.
    pub(crate) fn finish(&self, write: Write, code: u8) {
        let mut w = self.0.load(SeqCst);
        loop {
            let in_flight = ((w >> IN_FLIGHT_SHIFT) & IN_FLIGHT_MAX).saturating_sub(1);
            let new = if in_flight > 0 {
                (w & !(IN_FLIGHT_MAX << IN_FLIGHT_SHIFT)) | (in_flight << IN_FLIGHT_SHIFT)
            } else if w & POISON != 0 {
                u32::from(UNKNOWN)
            } else {
                (write.epoch << EPOCH_SHIFT) | (u32::from(code) & CODE_MASK)
            };
            match self.0.compare_exchange_weak(w, new, SeqCst, SeqCst) {
                Ok(_) => return,
                Err(now) => w = now,
            }
        }
    }
}

/// Set once a guard has fired for the whole process (panic, fatal signal,
/// exit): protected motors refuse run commands from then on.
static STOPPING: AtomicBool = AtomicBool::new(false);
/// Run commands on protected motors between their fence check and the end
/// of their write.
static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);

const FENCED: u32 = 1 << 31;

/// Raises the process-wide fence and waits (at most about 50 ms: a signal
/// handler may have interrupted a command in flight on its own thread) for
/// run commands in flight. Async-signal-safe.
pub(crate) fn stop_everything_from_now() {
    STOPPING.store(true, SeqCst);
    wait_for_commands_in_flight();
}

pub(crate) fn wait_for_commands_in_flight() {
    for _ in 0..200 {
        if IN_FLIGHT.load(SeqCst) == 0 {
            return;
        }
        sys::pause_briefly();
    }
}

/// A motor handle's state shared with the stop guard.
#[derive(Debug)]
pub(crate) struct Shared {
    /// The command last sent (index + 1 into `Command::ALL`).
    pub(crate) command: Remembered,
    /// The stop action last written (index + 1 into `StopAction::ALL`).
    pub(crate) stop_action: Remembered,
    /// How many guard entries protect the motor, and [`FENCED`].
    protection: AtomicU32,
}

/// Permission to send one run command; ends its time in flight on drop.
pub(crate) struct RunPermit(bool);

impl Drop for RunPermit {
    fn drop(&mut self) {
        if self.0 {
            IN_FLIGHT.fetch_sub(1, SeqCst);
        }
    }
}

impl Shared {
    pub(crate) fn new(stop_action: u8) -> Shared {
        Shared {
            command: Remembered::new(UNKNOWN),
            stop_action: Remembered::new(stop_action),
            protection: AtomicU32::new(0),
        }
    }

    /// Checks the fence before a run command; `None` when it is up. Keep
    /// the permit until the command is written.
    pub(crate) fn run_permit(&self) -> Option<RunPermit> {
        let p = self.protection.load(SeqCst);
        if p & FENCED != 0 {
            return None;
        }
        if p == 0 {
            return Some(RunPermit(false));
        }
        IN_FLIGHT.fetch_add(1, SeqCst);
        let permit = RunPermit(true);
        if STOPPING.load(SeqCst) || self.protection.load(SeqCst) & FENCED != 0 {
            return None;
        }
        Some(permit)
    }

    pub(crate) fn protected(&self) {
        self.protection.fetch_add(1, SeqCst);
    }

    pub(crate) fn unprotected(&self) {
        let _ = self.protection.fetch_update(SeqCst, SeqCst, |p| {
            Some((p & FENCED) | (p & !FENCED).saturating_sub(1))
        });
    }

    /// Refuses run commands from now on (the guard was dropped armed).
    pub(crate) fn fence(&self) {
        self.protection.fetch_or(FENCED, SeqCst);
    }
}
