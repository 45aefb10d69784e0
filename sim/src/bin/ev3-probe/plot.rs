//! `--plot FILE.svg`: every measured strategy's latency histogram as one
//! SVG picture (hand-written SVG text: output only). Rows are strategies,
//! columns the power-of-two microsecond buckets of `--histogram` on one
//! shared log-scale axis, so strategies compare at a glance; each row has
//! its median and 99th percentile marked and written beside it.

use std::fmt::Write as _;

use crate::stats::micros;
use crate::strategy::{Kind, Outcome};

const ROW: f64 = 36.0;
const LABEL: f64 = 170.0;
const COLUMN: f64 = 46.0;
const STATS: f64 = 280.0;

/// The bucket of `ns`: 0 for under 1 µs, then `b` for `2^(b-1)..2^b` µs.
fn bucket(ns: u64) -> usize {
    let us = ns / 1000;
    if us == 0 {
        0
    } else {
        (64 - us.leading_zeros()) as usize
    }
}

fn bucket_label(b: usize) -> String {
    if b == 0 {
        "<1".into()
    } else {
        format!("{}", 1u64 << (b - 1))
    }
}

/// Where `ns` falls on the axis (in columns from the first bucket, within
/// its bucket on a log scale).
fn position(ns: u64, first: usize) -> f64 {
    let b = bucket(ns);
    let within = if b == 0 {
        ns as f64 / 1000.0
    } else {
        let low = (1u64 << (b - 1)) as f64 * 1000.0;
        (ns as f64 / low).log2().clamp(0.0, 1.0)
    };
    (b as f64 - first as f64 + within) * COLUMN
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The picture of `outcomes` (strategies that could not run are listed
/// with their reason), titled `title`.
pub fn svg(title: &str, outcomes: &[Outcome]) -> String {
    let measured: Vec<(&Outcome, &[u64])> = outcomes
        .iter()
        .filter_map(|o| o.result.as_ref().ok().map(|m| (o, m.samples.as_slice())))
        .collect();
    let all = measured.iter().flat_map(|(_, s)| s.iter().copied());
    let first = all.clone().map(bucket).min().unwrap_or(0);
    let last = all.map(bucket).max().unwrap_or(0);
    let columns = last - first + 1;
    let failed: Vec<&Outcome> = outcomes.iter().filter(|o| o.result.is_err()).collect();
    let width = LABEL + columns as f64 * COLUMN + STATS;
    let height = 60.0 + ROW * measured.len() as f64 + 40.0 + 18.0 * failed.len() as f64;
    let mut o = String::new();
    let _ = writeln!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" font-family="DejaVu Sans, sans-serif" font-size="12">"#
    );
    let _ = writeln!(
        o,
        r##"<rect width="100%" height="100%" fill="#fff"/><text x="8" y="20" font-size="14" font-weight="bold">{}</text>"##,
        esc(title)
    );
    let _ = writeln!(
        o,
        r##"<text x="8" y="38" fill="#555">operations per power-of-two bucket of latency (µs, log scale); | median, ¦ 99th percentile</text>"##
    );
    let top = 50.0;
    for (row, (outcome, samples)) in measured.iter().enumerate() {
        let y = top + ROW * row as f64;
        let colour = match outcome.kind {
            Kind::Write => "#d1361f",
            Kind::Read => "#1f6fd1",
        };
        let mut counts = vec![0usize; columns];
        for &s in *samples {
            counts[bucket(s) - first] += 1;
        }
        let peak = counts.iter().copied().max().unwrap_or(1).max(1) as f64;
        let _ = writeln!(
            o,
            r#"<text x="8" y="{:.1}">{}</text>"#,
            y + ROW / 2.0,
            esc(&outcome.label())
        );
        for (c, &n) in counts.iter().enumerate() {
            if n == 0 {
                continue;
            }
            let h = (ROW - 12.0) * n as f64 / peak;
            let _ = writeln!(
                o,
                r#"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{h:.1}" fill="{colour}" fill-opacity="0.75"><title>{n}</title></rect>"#,
                LABEL + COLUMN * c as f64 + 1.0,
                y + ROW - 6.0 - h,
                COLUMN - 2.0
            );
        }
        let p50 = crate::stats::percentile(samples, 50.0);
        let p99 = crate::stats::percentile(samples, 99.0);
        for (ns, dash) in [(p50, ""), (p99, r#" stroke-dasharray="3,2""#)] {
            let x = LABEL + position(ns, first);
            let _ = writeln!(
                o,
                r##"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="#000" stroke-width="1.5"{dash}/>"##,
                y + 2.0,
                y + ROW - 4.0
            );
        }
        let _ = writeln!(
            o,
            r#"<text x="{:.1}" y="{:.1}">median {} µs, p99 {} µs ({} ops)</text>"#,
            LABEL + COLUMN * columns as f64 + 8.0,
            y + ROW / 2.0,
            micros(p50 as f64),
            micros(p99 as f64),
            samples.len()
        );
    }
    let axis = top + ROW * measured.len() as f64;
    let _ = writeln!(
        o,
        r##"<line x1="{LABEL:.1}" y1="{axis:.1}" x2="{:.1}" y2="{axis:.1}" stroke="#333"/>"##,
        LABEL + COLUMN * columns as f64
    );
    for c in 0..=columns {
        let x = LABEL + COLUMN * c as f64;
        let _ = writeln!(
            o,
            r##"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="#333"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
            axis,
            axis + 4.0,
            axis + 17.0,
            bucket_label(first + c)
        );
    }
    for (i, f) in failed.iter().enumerate() {
        let why = f.result.as_ref().err().map_or("", String::as_str);
        let _ = writeln!(
            o,
            r##"<text x="8" y="{:.1}" fill="#777">{}: not measured here: {}</text>"##,
            axis + 40.0 + 18.0 * i as f64,
            esc(&f.label()),
            esc(why)
        );
    }
    o.push_str("</svg>\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Summary;
    use crate::strategy::Measurement;
    use std::time::Duration;

    fn outcome(strategy: &'static str, mut samples: Vec<u64>) -> Outcome {
        Outcome {
            kind: Kind::Write,
            strategy,
            flags: "none",
            result: Ok(Measurement {
                summary: Summary::of(&mut samples).unwrap(),
                samples,
                user: Duration::ZERO,
                system: Duration::ZERO,
                wall: Duration::ZERO,
                voluntary_switches: 0,
                involuntary_switches: 0,
            }),
        }
    }

    #[test]
    fn one_row_per_strategy_on_a_shared_axis() {
        let failed = Outcome {
            kind: Kind::Read,
            strategy: "pread",
            flags: "O_DIRECT",
            result: Err("EINVAL <here>".into()),
        };
        let picture = svg(
            "probe",
            &[
                outcome("pwrite", vec![1500, 1600, 3000]),
                outcome("driver", vec![40_000]),
                failed,
            ],
        );
        assert!(picture.starts_with("<svg") && picture.ends_with("</svg>\n"));
        // Buckets 1-2 µs .. 32-64 µs: six columns, seven ticks.
        assert_eq!(picture.matches("text-anchor=\"middle\"").count(), 7);
        assert!(picture.contains(">pwrite</text>") && picture.contains(">driver</text>"));
        assert!(picture.contains("median 1.6 µs, p99 3.0 µs (3 ops)"));
        assert!(picture.contains("pread/O_DIRECT: not measured here: EINVAL &lt;here&gt;"));
        assert_eq!(position(1000, 1), 0.0);
        assert_eq!(position(2000, 1), COLUMN);
    }
}
