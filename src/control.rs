//! Control-loop helpers, integer only: [`Pid`], a fixed-point PID
//! controller, and [`every`], a fixed-rate loop that sleeps to each deadline
//! (never busy-waits) and reports overruns.
//!
//! ```
//! use std::time::Duration;
//! use ev3sysfs::control::{every, Pid};
//!
//! // Gains in thousandths: kp = 1.5, ki = 0.02, kd = 4.
//! let mut pid = Pid::new(1500, 20, 4000).with_target(50).with_limit(100);
//! let mut level = 20; // something the output pushes toward the target
//! for tick in every(Duration::from_millis(1)).take(200) {
//!     level += pid.step(level) / 10;
//!     if tick.missed > 0 {
//!         println!("late by {:?}", tick.late);
//!     }
//! }
//! assert!((level - 50).abs() <= 2, "{level}");
//! ```

use std::time::{Duration, Instant};

/// A PID controller in integer arithmetic (no FPU on the brick).
///
/// Gains are in thousandths and per step: run it at a fixed rate (see
/// [`every`]), so that the integral is a sum of errors and the derivative
/// the difference of the last two, as robot programs usually do.
/// `output = (kp * e + ki * sum(e) + kd * (e - e_prev)) / 1000`, clamped to
/// `±limit`; while the output is clamped the integral stops growing (no
/// wind-up).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pid {
    kp: i64,
    ki: i64,
    kd: i64,
    target: i32,
    limit: i32,
    integral: i64,
    last_error: Option<i32>,
}

impl Pid {
    /// A controller with gains in thousandths (`Pid::new(1500, 0, 0)` is
    /// kp = 1.5), target 0 and no output limit.
    pub fn new(kp_milli: i32, ki_milli: i32, kd_milli: i32) -> Pid {
        Pid {
            kp: i64::from(kp_milli),
            ki: i64::from(ki_milli),
            kd: i64::from(kd_milli),
            target: 0,
            limit: i32::MAX,
            integral: 0,
            last_error: None,
        }
    }

    /// The value [`Pid::step`] steers the measurement to.
    pub fn with_target(mut self, target: i32) -> Pid {
        self.target = target;
        self
    }

    /// Clamps the output to `-limit..=limit` (negative: its magnitude).
    pub fn with_limit(mut self, limit: i32) -> Pid {
        self.limit = limit.saturating_abs();
        self
    }

    /// Changes the target (the integral is kept).
    pub fn set_target(&mut self, target: i32) {
        self.target = target;
    }

    /// The target.
    pub fn target(&self) -> i32 {
        self.target
    }

    /// One step with `measured`: the error is `target - measured`.
    pub fn step(&mut self, measured: i32) -> i32 {
        self.step_error(self.target.saturating_sub(measured))
    }

    /// One step with the error given directly.
    pub fn step_error(&mut self, error: i32) -> i32 {
        let e = i64::from(error);
        let derivative = self.last_error.map_or(0, |last| e - i64::from(last));
        self.last_error = Some(error);
        let integral = self.integral.saturating_add(e);
        let raw = |integral: i64| {
            let sum = self
                .kp
                .saturating_mul(e)
                .saturating_add(self.ki.saturating_mul(integral))
                .saturating_add(self.kd.saturating_mul(derivative));
            crate::units::scale(i128::from(sum), 1, 1000)
        };
        let limit = i64::from(self.limit);
        let unclamped = raw(integral);
        if (-limit..=limit).contains(&unclamped)
            || integral.unsigned_abs() < self.integral.unsigned_abs()
        {
            self.integral = integral;
        }
        let out = raw(self.integral).clamp(-limit, limit);
        i32::try_from(out).unwrap_or(if out < 0 { i32::MIN } else { i32::MAX })
    }

    /// Forgets the integral and the last error.
    pub fn reset(&mut self) {
        self.integral = 0;
        self.last_error = None;
    }
}

/// A fixed-rate loop: iterate to run the body once per `period`.
///
/// The first tick is at once; each following one sleeps (`nanosleep`) until
/// its deadline, `start + n * period`, so the rate does not drift with the
/// body's duration. When the body overran one or more deadlines, the
/// missed ones are skipped (no burst to catch up) and the tick says how
/// many ([`Tick::missed`]) and how late it is. Never busy-waits. A period
/// beyond what `Instant` holds (`Duration::MAX`) ticks once, then sleeps
/// for ever.
pub fn every(period: Duration) -> Every {
    Every {
        period: period.max(Duration::from_micros(1)),
        next: None,
        index: 0,
        overruns: 0,
    }
}

/// The iterator [`every`] returns (endless: `take(n)` or `break`).
#[derive(Debug, Clone)]
pub struct Every {
    period: Duration,
    /// `None` before the first tick; then the next deadline, `None` when
    /// it is beyond what an `Instant` holds.
    next: Option<Option<Instant>>,
    index: u64,
    overruns: u64,
}

/// One iteration of an [`every`] loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tick {
    /// Deadlines since the start (missed ones included).
    pub index: u64,
    /// Deadlines missed since the previous tick (the body overran).
    pub missed: u32,
    /// How long after its deadline this tick started.
    pub late: Duration,
}

impl Every {
    /// Ticks that came after one or more missed deadlines, so far.
    pub fn overruns(&self) -> u64 {
        self.overruns
    }

    /// The period.
    pub fn period(&self) -> Duration {
        self.period
    }
}

impl Iterator for Every {
    type Item = Tick;

    fn next(&mut self) -> Option<Tick> {
        let now = Instant::now();
        let Some(next) = self.next else {
            self.next = Some(now.checked_add(self.period));
            return Some(Tick {
                index: 0,
                missed: 0,
                late: Duration::ZERO,
            });
        };
        let Some(mut deadline) = next else {
            // A period beyond what an Instant holds (Duration::MAX): the
            // next deadline never comes.
            loop {
                std::thread::sleep(Duration::MAX);
            }
        };
        let mut missed = 0u32;
        self.index = self.index.saturating_add(1);
        if now < deadline {
            std::thread::sleep(deadline - now);
        } else {
            // Skip the deadlines already past, keeping the phase.
            let behind = now - deadline;
            let skip = behind.as_nanos() / self.period.as_nanos();
            if skip > 0 {
                let skip = u32::try_from(skip).unwrap_or(u32::MAX);
                missed = skip;
                // skip * period <= behind: within the Instants seen.
                deadline = deadline
                    .checked_add(self.period.saturating_mul(skip))
                    .unwrap_or(now);
                self.index = self.index.saturating_add(u64::from(skip));
                self.overruns = self.overruns.saturating_add(1);
            }
        }
        self.next = Some(deadline.checked_add(self.period));
        Some(Tick {
            index: self.index,
            missed,
            late: Instant::now().saturating_duration_since(deadline),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pid_terms() {
        let mut p = Pid::new(2000, 0, 0).with_target(10);
        assert_eq!(p.step(4), 12);
        let mut i = Pid::new(0, 500, 0);
        assert_eq!(i.step_error(2), 1);
        assert_eq!(i.step_error(2), 2);
        let mut d = Pid::new(0, 0, 1000);
        assert_eq!(d.step_error(5), 0, "no derivative on the first step");
        assert_eq!(d.step_error(8), 3);
        d.reset();
        assert_eq!(d.step_error(8), 0);
    }

    #[test]
    fn pid_clamps_without_windup() {
        let mut p = Pid::new(1000, 1000, 0).with_limit(10);
        for _ in 0..100 {
            assert_eq!(p.step_error(50), 10);
        }
        // The integral did not grow while clamped: one step back inside.
        assert!(p.step_error(-5) < 10);
        assert_eq!(Pid::new(1000, 0, 0).step_error(i32::MAX), i32::MAX);
    }

    #[test]
    fn every_skips_missed_deadlines() {
        let mut e = every(Duration::from_millis(5));
        assert_eq!(e.next().map(|t| t.index), Some(0));
        let t1 = e.next().unwrap();
        assert_eq!((t1.index, t1.missed), (1, 0));
        std::thread::sleep(Duration::from_millis(18));
        let t2 = e.next().unwrap();
        assert!(t2.missed >= 2, "{t2:?}");
        assert_eq!(t2.index, 2 + u64::from(t2.missed));
        assert_eq!(e.overruns(), 1);
    }
}
