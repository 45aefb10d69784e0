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
//! Once the guard has fired (fatal signal, exit) or was dropped, run
//! commands on the motors it protected are refused
//! ([`crate::Error::GuardStopped`]), through every handle of the motor: the
//! fence is keyed by the device (`guard/fence.rs`).

use std::sync::atomic::{AtomicU32, Ordering::SeqCst};

pub(crate) use crate::guard::RunPermit;
use crate::guard::{DeviceKey, Fence};

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

/// A motor handle's state shared with the stop guard.
#[derive(Debug)]
pub(crate) struct Shared {
    /// The command last sent (index + 1 into `Command::ALL`).
    pub(crate) command: Remembered,
    /// The stop action last written (index + 1 into `StopAction::ALL`).
    pub(crate) stop_action: Remembered,
    /// The motor's place behind the guard's fence (keyed by the device).
    pub(crate) fence: Fence,
}

impl Shared {
    pub(crate) fn new(stop_action: u8, key: DeviceKey) -> Shared {
        Shared {
            command: Remembered::new(UNKNOWN),
            stop_action: Remembered::new(stop_action),
            fence: Fence::new(key),
        }
    }

    /// Checks the fence before a run command; `None` when it is up. Keep
    /// the permit until the command is written.
    pub(crate) fn run_permit(&self) -> Option<RunPermit> {
        self.fence.run_permit()
    }
}
