//! Latency statistics: percentiles, means and a log-scale histogram.

use std::time::Duration;

/// Summary of one strategy's per-operation latencies, in nanoseconds.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub ops: usize,
    pub min: u64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub max: u64,
    pub mean: f64,
}

impl Summary {
    /// Summarises `samples` (sorted in place). `None` for no samples.
    pub fn of(samples: &mut [u64]) -> Option<Summary> {
        if samples.is_empty() {
            return None;
        }
        samples.sort_unstable();
        let sum: u128 = samples.iter().map(|&s| u128::from(s)).sum();
        Some(Summary {
            ops: samples.len(),
            min: samples[0],
            p50: percentile(samples, 50.0),
            p90: percentile(samples, 90.0),
            p99: percentile(samples, 99.0),
            max: samples[samples.len() - 1],
            mean: sum as f64 / samples.len() as f64,
        })
    }
}

/// Nearest-rank percentile of sorted `samples`: the smallest value with at
/// least `p` percent of the samples at or below it.
pub fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Microseconds with one decimal, for tables.
pub fn micros(nanos: f64) -> String {
    format!("{:.1}", nanos / 1000.0)
}

/// Seconds with three decimals.
pub fn seconds(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64())
}

/// A histogram with power-of-two microsecond buckets (`<1`, `1-2`, `2-4`,
/// ...), one line per bucket from the first to the last non-empty one.
pub fn histogram(sorted: &[u64], width: usize) -> Vec<String> {
    let bucket = |ns: u64| -> usize {
        let us = ns / 1000;
        if us == 0 {
            0
        } else {
            (64 - us.leading_zeros()) as usize
        }
    };
    let mut counts = [0usize; 65];
    for &s in sorted {
        counts[bucket(s)] += 1;
    }
    let (Some(first), Some(last)) = (
        counts.iter().position(|&c| c > 0),
        counts.iter().rposition(|&c| c > 0),
    ) else {
        return Vec::new();
    };
    let peak = counts.iter().copied().max().unwrap_or(1).max(1);
    (first..=last)
        .map(|b| {
            let label = if b == 0 {
                "<1 µs".to_string()
            } else {
                format!("{}-{} µs", 1u64 << (b - 1), 1u64 << b)
            };
            let bar = "#".repeat((counts[b] * width).div_ceil(peak));
            format!("{label:>16} | {bar:<width$} {}", counts[b])
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_on_known_data() {
        let data: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&data, 50.0), 50);
        assert_eq!(percentile(&data, 90.0), 90);
        assert_eq!(percentile(&data, 99.0), 99);
        assert_eq!(percentile(&data, 100.0), 100);
        assert_eq!(percentile(&data, 0.0), 1);
        assert_eq!(percentile(&[7], 99.0), 7);
        assert_eq!(percentile(&[], 50.0), 0);
        let ten: Vec<u64> = (1..=10).map(|x| x * 10).collect();
        assert_eq!(percentile(&ten, 50.0), 50);
        assert_eq!(percentile(&ten, 90.0), 90);
        assert_eq!(percentile(&ten, 99.0), 100);
    }

    #[test]
    fn summary_of_unsorted_samples() {
        let mut samples = vec![5000, 1000, 3000, 2000, 4000];
        let s = Summary::of(&mut samples).unwrap();
        assert_eq!((s.ops, s.min, s.p50, s.max), (5, 1000, 3000, 5000));
        assert_eq!(s.p99, 5000);
        assert!((s.mean - 3000.0).abs() < 1e-9);
        assert!(Summary::of(&mut []).is_none());
        assert_eq!(micros(s.mean), "3.0");
    }

    #[test]
    fn histogram_buckets() {
        let samples = [500, 900, 1500, 3000, 3500, 40_000];
        let lines = histogram(&samples, 10);
        assert_eq!(lines.len(), 7, "{lines:#?}");
        assert!(lines[0].contains("<1 µs") && lines[0].ends_with(" 2"));
        assert!(lines[1].contains("1-2 µs") && lines[1].ends_with(" 1"));
        assert!(lines[6].contains("32-64 µs"));
        assert!(histogram(&[], 10).is_empty());
    }
}
