//! How late a real-time simulation's ticks are: each 2 ms tick has a
//! deadline (the simulation's start plus its number of ticks); its
//! lateness is how long after that deadline it was done. What
//! [`RealtimeSim::timing`](crate::RealtimeSim::timing) reports, to see
//! whether something (a live view, a busy machine) keeps the motors'
//! control loop from running on time.

use std::sync::Mutex;
use std::time::Duration;

/// The histogram's resolution.
const BUCKET: Duration = Duration::from_micros(10);

/// Buckets: 0 to 100 ms in steps of [`BUCKET`]; later ticks count in the
/// last one (their exact lateness only in the maximum).
const BUCKETS: usize = 10_000;

/// The lateness of a real-time simulation's ticks so far (see the
/// [module docs](self)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TickLateness {
    /// Ticks done.
    pub ticks: u64,
    /// Ticks skipped because the simulation was more than 0.5 s behind,
    /// or was behind when a client wrote an attribute (see
    /// [`Simulator::run_realtime`](crate::Simulator::run_realtime));
    /// simulated time then runs slower than the wall clock.
    pub dropped: u64,
    /// The median lateness (to 10 us; 100 ms at most).
    pub p50: Duration,
    /// The 99th percentile (to 10 us; 100 ms at most).
    pub p99: Duration,
    /// The largest, exactly.
    pub max: Duration,
    /// The mean.
    pub mean: Duration,
}

impl std::fmt::Display for TickLateness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        write!(
            f,
            "{} ticks ({} dropped), late by {:.2} ms mean, {:.2} ms p50, {:.2} ms p99, {:.2} ms max",
            self.ticks,
            self.dropped,
            ms(self.mean),
            ms(self.p50),
            ms(self.p99),
            ms(self.max)
        )
    }
}

/// The counts behind [`TickLateness`]: a histogram of 10 us buckets,
/// behind a mutex (the brick's armv5te has no 64-bit atomics) taken once
/// per batch of ticks by the simulation thread.
#[derive(Debug)]
pub(crate) struct TickTiming(Mutex<Counts>);

#[derive(Debug)]
struct Counts {
    buckets: Vec<u64>,
    ticks: u64,
    dropped: u64,
    sum_ns: u128,
    max: Duration,
}

impl Default for TickTiming {
    fn default() -> TickTiming {
        TickTiming(Mutex::new(Counts {
            buckets: vec![0; BUCKETS],
            ticks: 0,
            dropped: 0,
            sum_ns: 0,
            max: Duration::ZERO,
        }))
    }
}

impl TickTiming {
    /// Records ticks done at once: each one's lateness, and `dropped`
    /// ticks skipped.
    pub(crate) fn record(&self, lateness: impl Iterator<Item = Duration>, dropped: u64) {
        let mut c = self.0.lock().unwrap_or_else(|p| p.into_inner());
        c.dropped += dropped;
        for late in lateness {
            let i = usize::try_from(late.as_nanos() / BUCKET.as_nanos()).unwrap_or(usize::MAX);
            if let Some(bucket) = c.buckets.get_mut(i.min(BUCKETS - 1)) {
                *bucket += 1;
            }
            c.ticks += 1;
            c.sum_ns += late.as_nanos();
            c.max = c.max.max(late);
        }
    }

    /// The figures so far.
    pub(crate) fn now(&self) -> TickLateness {
        let c = self.0.lock().unwrap_or_else(|p| p.into_inner());
        // The upper edge of the bucket holding the `q`-quantile.
        let quantile = |q: f64| {
            let rank = ((c.ticks as f64) * q).ceil().max(1.0) as u64;
            let mut seen = 0;
            for (i, n) in c.buckets.iter().enumerate() {
                seen += n;
                if seen >= rank {
                    return (BUCKET * u32::try_from(i + 1).unwrap_or(u32::MAX)).min(c.max);
                }
            }
            c.max
        };
        TickLateness {
            ticks: c.ticks,
            dropped: c.dropped,
            p50: quantile(0.5),
            p99: quantile(0.99),
            max: c.max,
            mean: Duration::from_nanos(
                u64::try_from(c.sum_ns.checked_div(u128::from(c.ticks)).unwrap_or(0))
                    .unwrap_or(u64::MAX),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_of_known_lateness() {
        let t = TickTiming::default();
        assert_eq!(t.now(), TickLateness::default());
        // 98 ticks 1 ms late, one 5 ms, one 300 ms (beyond the histogram).
        let ms = Duration::from_millis;
        t.record(std::iter::repeat_n(ms(1), 98), 0);
        t.record([ms(5), ms(300)].into_iter(), 3);
        let l = t.now();
        assert_eq!((l.ticks, l.dropped), (100, 3));
        assert_eq!(l.p50, ms(1) + BUCKET);
        assert_eq!(l.p99, ms(5) + BUCKET);
        assert_eq!(l.max, ms(300));
        assert_eq!(l.mean, Duration::from_micros(4030));
    }
}
