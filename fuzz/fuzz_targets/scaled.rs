//! Fixed-point sensor values: any `raw`, any `decimals`, any target
//! decimals; checked against 128-bit and text arithmetic.
#![no_main]

use ev3sysfs::sensor::Scaled;
use libfuzzer_sys::fuzz_target;

fn reference_in_decimals(raw: i32, decimals: u8, want: u8) -> i64 {
    let raw = i128::from(raw);
    let saturate = |v: i128| v.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64;
    if want >= decimals {
        match 10i128.checked_pow(u32::from(want - decimals)) {
            Some(f) => saturate(raw.saturating_mul(f)),
            None => saturate(raw.signum() * i128::MAX),
        }
    } else {
        10i128
            .checked_pow(u32::from(decimals - want))
            .map_or(0, |d| saturate(raw / d))
    }
}

fuzz_target!(|input: (i32, u8, u8)| {
    let (raw, decimals, want) = input;
    let s = Scaled { raw, decimals };
    assert_eq!(
        s.in_decimals(want),
        reference_in_decimals(raw, decimals, want)
    );
    let _ = s.to_f32();
    let text = s.to_string();
    // `[-]whole[.fraction]` with exactly `decimals` fraction digits...
    let unsigned = text.strip_prefix('-').unwrap_or(&text);
    assert_eq!(text.starts_with('-'), raw < 0);
    let (whole, fraction) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    assert_eq!(fraction.len(), usize::from(decimals), "{text}");
    assert!(
        !whole.is_empty() && (whole == "0" || !whole.starts_with('0')),
        "{text}"
    );
    // ...whose digits are raw's.
    let digits = format!("{whole}{fraction}");
    let value: u128 = digits.trim_start_matches('0').parse().unwrap_or(0);
    assert_eq!(value, u128::from(raw.unsigned_abs()), "{text}");
});
