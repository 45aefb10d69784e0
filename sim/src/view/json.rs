//! JSON output for snapshots and traces: objects of numbers, strings and
//! arrays, written straight into a `String` (output only, nothing is parsed
//! here; numbers have a fixed number of decimals so that the same run gives
//! the same bytes).

use std::fmt::Write as _;

/// Appends `s` as a JSON string (quoted, escaped).
pub(super) fn string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Appends `v` with one decimal (mm, degrees); non-finite values as `null`.
pub(super) fn number(out: &mut String, v: f64) {
    if v.is_finite() {
        // -0.0 and 0.0 print the same.
        let v = if v == 0.0 { 0.0 } else { v };
        let _ = write!(out, "{v:.1}");
    } else {
        out.push_str("null");
    }
}

/// Appends `,"key":` (or `"key":` when `first`).
pub(super) fn key(out: &mut String, key: &str, first: bool) {
    if !first {
        out.push(',');
    }
    string(out, key);
    out.push(':');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_escaped_and_numbers_fixed() {
        let mut out = String::new();
        string(&mut out, "a\"b\\c\nd\u{1}é");
        assert_eq!(out, r#""a\"b\\c\nd\u0001é""#);
        let mut out = String::new();
        number(&mut out, -0.0);
        out.push(' ');
        number(&mut out, 12.345);
        out.push(' ');
        number(&mut out, f64::NAN);
        assert_eq!(out, "0.0 12.3 null");
    }
}
