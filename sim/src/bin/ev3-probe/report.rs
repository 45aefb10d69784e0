//! Table, CSV and JSON output.

use std::fmt::Write as _;

use crate::stats::{micros, seconds};
use crate::strategy::{Kind, Outcome};

/// The header lines: what was measured, where, how.
pub type Header = Vec<(&'static str, String)>;

const COLUMNS: [&str; 16] = [
    "kind",
    "strategy",
    "flags",
    "ops",
    "min_us",
    "p50_us",
    "p90_us",
    "p99_us",
    "max_us",
    "mean_us",
    "user_s",
    "sys_s",
    "wall_s",
    "vcsw",
    "ivcsw",
    "x_fastest",
];

fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Write => "write",
        Kind::Read => "read",
    }
}

/// Mean of the fastest successful strategy of the same kind.
fn fastest(outcomes: &[Outcome], kind: Kind) -> Option<f64> {
    outcomes
        .iter()
        .filter(|o| o.kind == kind)
        .filter_map(|o| o.result.as_ref().ok())
        .map(|m| m.summary.mean)
        .min_by(f64::total_cmp)
}

/// The cells of one row (all columns), or the reason it did not run.
fn cells(o: &Outcome, all: &[Outcome]) -> Result<Vec<String>, String> {
    let m = o.result.as_ref().map_err(Clone::clone)?;
    let s = &m.summary;
    let ratio = fastest(all, o.kind).map_or(1.0, |f| s.mean / f.max(1.0));
    Ok(vec![
        kind_name(o.kind).into(),
        o.strategy.into(),
        o.flags.into(),
        s.ops.to_string(),
        micros(s.min as f64),
        micros(s.p50 as f64),
        micros(s.p90 as f64),
        micros(s.p99 as f64),
        micros(s.max as f64),
        micros(s.mean),
        seconds(m.user),
        seconds(m.system),
        seconds(m.wall),
        m.voluntary_switches.to_string(),
        m.involuntary_switches.to_string(),
        format!("{ratio:.2}"),
    ])
}

pub fn table(header: &Header, outcomes: &[Outcome]) -> String {
    let mut out = String::new();
    for (k, v) in header {
        let _ = writeln!(out, "{k:>12}: {v}");
    }
    let titles = [
        "",
        "strategy",
        "flags",
        "ops",
        "min",
        "p50",
        "p90",
        "p99",
        "max",
        "mean",
        "user s",
        "sys s",
        "wall s",
        "vcsw",
        "ivcsw",
        "x fastest",
    ];
    let rows: Vec<Result<Vec<String>, String>> =
        outcomes.iter().map(|o| cells(o, outcomes)).collect();
    let mut widths: Vec<usize> = titles.iter().map(|t| t.chars().count()).collect();
    for row in rows.iter().flatten() {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cols: &[String]| -> String {
        let mut l = String::new();
        for (i, (c, w)) in cols.iter().zip(&widths).enumerate() {
            if i < 3 {
                let _ = write!(l, "{c:<w$}  ");
            } else {
                let _ = write!(l, "{c:>w$}  ");
            }
        }
        l.trim_end().to_string()
    };
    let _ = writeln!(
        out,
        "\nlatency per operation in µs (min, percentiles, max, mean)"
    );
    let titles: Vec<String> = titles.iter().map(|t| t.to_string()).collect();
    let _ = writeln!(out, "{}", line(&titles));
    for (o, row) in outcomes.iter().zip(&rows) {
        match row {
            Ok(cells) => {
                let _ = writeln!(out, "{}", line(cells));
            }
            Err(reason) => {
                let _ = writeln!(
                    out,
                    "{:<w0$}  {:<w1$}  {:<w2$}  unsupported here: {reason}",
                    kind_name(o.kind),
                    o.strategy,
                    o.flags,
                    w0 = widths[0],
                    w1 = widths[1],
                    w2 = widths[2]
                );
            }
        }
    }
    out
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

pub fn csv(outcomes: &[Outcome]) -> String {
    let mut out = COLUMNS.join(",");
    out.push_str(",error\n");
    for o in outcomes {
        let row = match cells(o, outcomes) {
            Ok(cells) => {
                let mut r: Vec<String> = cells.iter().map(|c| csv_field(c)).collect();
                r.push(String::new());
                r
            }
            Err(reason) => {
                let mut r = vec![kind_name(o.kind).into(), o.strategy.into(), o.flags.into()];
                r.extend(std::iter::repeat_n(String::new(), COLUMNS.len() - 3));
                r.push(csv_field(&reason));
                r
            }
        };
        out.push_str(&row.join(","));
        out.push('\n');
    }
    out
}

fn json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

pub fn json(header: &Header, outcomes: &[Outcome]) -> String {
    let mut out = String::from("{\n  \"header\": {");
    let fields: Vec<String> = header
        .iter()
        .map(|(k, v)| format!("{}: {}", json_string(k), json_string(v)))
        .collect();
    out.push_str(&fields.join(", "));
    out.push_str("},\n  \"results\": [\n");
    let rows: Vec<String> = outcomes
        .iter()
        .map(|o| {
            let mut fields = vec![
                format!("\"kind\": {}", json_string(kind_name(o.kind))),
                format!("\"strategy\": {}", json_string(o.strategy)),
                format!("\"flags\": {}", json_string(o.flags)),
            ];
            match cells(o, outcomes) {
                Ok(cells) => {
                    for (name, value) in COLUMNS.iter().zip(&cells).skip(3) {
                        fields.push(format!("{}: {value}", json_string(name)));
                    }
                }
                Err(reason) => fields.push(format!("\"error\": {}", json_string(&reason))),
            }
            format!("    {{{}}}", fields.join(", "))
        })
        .collect();
    out.push_str(&rows.join(",\n"));
    out.push_str("\n  ]\n}\n");
    out
}
