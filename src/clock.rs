//! A monotonic clock that costs one syscall per read on the brick.
//!
//! The EV3's ARM926 has no vDSO, so every clock read is a real syscall, and
//! musl 1.2 (what a static Rust binary for the brick links) first tries
//! `clock_gettime64`, which the brick's Linux 4.14 refuses with `ENOSYS`,
//! then `clock_gettime`: **two** syscalls for every `std::time::Instant::now()`.
//! [`Instant::now`] asks the kernel once whether it has `clock_gettime64`;
//! on 32-bit ARM Linux without it, every later read is the 32-bit
//! `clock_gettime` syscall alone. Elsewhere (and on ARM kernels that have
//! the call) it is the C library's `clock_gettime(CLOCK_MONOTONIC)`, what
//! `std::time::Instant::now()` does: a vDSO call where there is one.
//!
//! The crate's waits and `ev3-probe`'s timing read this clock; robot code can
//! too, where it polls the clock in a loop:
//!
//! ```
//! use ev3sysfs::clock::Instant;
//! use std::time::Duration;
//!
//! let start = Instant::now();
//! let deadline = start + Duration::from_millis(5);
//! while Instant::now() < deadline {}
//! assert!(start.elapsed() >= Duration::from_millis(5));
//! ```

use std::ops::{Add, AddAssign, Sub};
use std::time::Duration;

/// A reading of the monotonic clock (`CLOCK_MONOTONIC`), with the subset of
/// `std::time::Instant`'s API the crate needs. Only differences between two
/// readings mean something.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(Duration);

impl Instant {
    /// Reads the clock: one syscall on the brick (no vDSO), none with a
    /// vDSO.
    pub fn now() -> Instant {
        Instant(crate::sys::monotonic_now())
    }

    /// Time passed since `self` (zero if the clock reads earlier).
    pub fn elapsed(&self) -> Duration {
        Instant::now().saturating_duration_since(*self)
    }

    /// `self - earlier`, zero if `earlier` is later.
    pub fn saturating_duration_since(&self, earlier: Instant) -> Duration {
        self.0.saturating_sub(earlier.0)
    }

    /// `self - earlier`, zero if `earlier` is later (as std's, which
    /// saturates too since Rust 1.60).
    pub fn duration_since(&self, earlier: Instant) -> Duration {
        self.saturating_duration_since(earlier)
    }

    /// `self - earlier`, `None` if `earlier` is later.
    pub fn checked_duration_since(&self, earlier: Instant) -> Option<Duration> {
        self.0.checked_sub(earlier.0)
    }

    /// `self + duration`, `None` on overflow.
    pub fn checked_add(&self, duration: Duration) -> Option<Instant> {
        self.0.checked_add(duration).map(Instant)
    }

    /// `self - duration`, `None` before the clock's zero.
    pub fn checked_sub(&self, duration: Duration) -> Option<Instant> {
        self.0.checked_sub(duration).map(Instant)
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;
    /// Saturates instead of overflowing (centuries away).
    fn add(self, duration: Duration) -> Instant {
        Instant(self.0.saturating_add(duration))
    }
}

impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, duration: Duration) {
        *self = *self + duration;
    }
}

impl Sub<Instant> for Instant {
    type Output = Duration;
    fn sub(self, earlier: Instant) -> Duration {
        self.saturating_duration_since(earlier)
    }
}

impl Sub<Duration> for Instant {
    type Output = Instant;
    fn sub(self, duration: Duration) -> Instant {
        Instant(self.0.saturating_sub(duration))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_advance_and_agree_with_std() {
        let std_start = std::time::Instant::now();
        let a = Instant::now();
        std::thread::sleep(Duration::from_millis(20));
        let b = Instant::now();
        let std_elapsed = std_start.elapsed();
        assert!(b > a);
        assert!(b - a >= Duration::from_millis(20));
        assert!(b - a <= std_elapsed, "{:?} > {std_elapsed:?}", b - a);
        assert_eq!(a - b, Duration::ZERO);
        assert_eq!((a + Duration::from_secs(1)) - a, Duration::from_secs(1));
        assert_eq!(a.checked_duration_since(b), None);
    }
}
