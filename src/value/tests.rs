//! Unit tests of `value` (also run under Miri, `scripts/test-all`).

use super::*;

/// Parses a 32-bit integer exactly as the kernel prints one (`"%d\n"`: an
/// optional `-`, 1 to 10 digits, an optional newline), with no overflow
/// check per digit: ten digits cannot overflow an `i64`; `None` for
/// anything else. The read path's fast case before the padded one, kept
/// here as the reference that one is checked against.
fn parse_kernel_int(raw: &[u8]) -> Option<i32> {
    let text = match raw.split_last() {
        Some((b'\n', rest)) => rest,
        _ => raw,
    };
    let (negative, digits) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    if digits.is_empty() || digits.len() > 10 {
        return None;
    }
    let mut acc: i64 = 0;
    for &b in digits {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        acc = acc * 10 + i64::from(d);
    }
    i32::try_from(if negative { -acc } else { acc }).ok()
}

#[test]
fn formats_every_edge() {
    let mut buf = [0u8; INT_BUF_LEN];
    for v in [
        0i64,
        1,
        -1,
        9,
        10,
        -10,
        1050,
        -1560,
        i64::from(i32::MAX),
        i64::from(i32::MIN),
        i64::MAX,
        i64::MIN,
    ] {
        let text = format_int(v, &mut buf);
        assert_eq!(text, v.to_string().as_bytes());
        assert_eq!(parse_int(text), Some(v));
        if let Ok(small) = i32::try_from(v) {
            let mut small_buf = [0u8; I32_BUF_LEN];
            assert_eq!(format_i32(small, &mut small_buf), v.to_string().as_bytes());
        }
    }
}

#[test]
fn formats_every_value_of_up_to_five_digits() {
    // Every length a command's value has, each pair and digit of the table,
    // against std's formatting.
    let mut buf = [0u8; I32_BUF_LEN];
    let step = if cfg!(miri) { 997 } else { 1 };
    for v in (-100_001..=100_001).step_by(step) {
        assert_eq!(format_i32(v, &mut buf), v.to_string().as_bytes());
    }
}

#[test]
fn parses_kernel_ints() {
    assert_eq!(parse_int(b"42\n"), Some(42));
    assert_eq!(parse_int(b"-1050\n"), Some(-1050));
    assert_eq!(parse_int(b"+7"), Some(7));
    assert_eq!(parse_int(b"  3 \n"), Some(3));
    assert_eq!(parse_int(b""), None);
    assert_eq!(parse_int(b"\n"), None);
    assert_eq!(parse_int(b"-"), None);
    assert_eq!(parse_int(b"1.5"), None);
    assert_eq!(parse_int(b"0x10"), None);
    assert_eq!(parse_int(b"1 2"), None);
    assert_eq!(parse_int(b"99999999999999999999"), None);
    assert_eq!(parse_int(b"-9223372036854775808"), Some(i64::MIN));
    assert_eq!(parse_int(b"9223372036854775808"), None);
}

#[test]
fn parses_kernel_ints_fast() {
    assert_eq!(parse_kernel_int(b"42\n"), Some(42));
    assert_eq!(parse_kernel_int(b"-1050\n"), Some(-1050));
    assert_eq!(parse_kernel_int(b"0"), Some(0));
    assert_eq!(parse_kernel_int(b"2147483647\n"), Some(i32::MAX));
    assert_eq!(parse_kernel_int(b"-2147483648\n"), Some(i32::MIN));
    assert_eq!(parse_kernel_int(b"2147483648\n"), None);
    assert_eq!(parse_kernel_int(b"9999999999\n"), None);
    assert_eq!(parse_kernel_int(b"-9999999999\n"), None);
    assert_eq!(parse_kernel_int(b"00000000001\n"), None);
    for other in [
        &b""[..],
        b"\n",
        b"-",
        b"-\n",
        b"+7",
        b" 3\n",
        b"1 2",
        b"1.5",
        b"12\n\n",
    ] {
        assert_eq!(parse_kernel_int(other), None, "{other:?}");
    }
    let mut rng = XorShift(777);
    let mut buf = [0u8; INT_BUF_LEN];
    for _ in 0..if cfg!(miri) { 300 } else { 20_000 } {
        let v = rng.next() as i32;
        assert_eq!(
            parse_kernel_int(format_int(i64::from(v), &mut buf)),
            Some(v)
        );
        let mut small_buf = [0u8; I32_BUF_LEN];
        assert_eq!(parse_kernel_int(format_i32(v, &mut small_buf)), Some(v));
    }
}

#[test]
fn lists() {
    let commands = "run-forever run-to-abs-pos run-to-rel-pos run-timed run-direct stop reset\n";
    assert_eq!(words(commands).count(), 7);
    assert!(list_contains(commands, "run-direct"));
    assert!(!list_contains(commands, "run"));
    assert_eq!(words("").count(), 0);
    assert_eq!(words("\n").count(), 0);
}

#[test]
fn selected_lists() {
    let trigger = "none mmc0 [timer] heartbeat default-on\n";
    assert_eq!(selected(trigger), Some("timer"));
    assert_eq!(selected("[none] mmc0"), Some("none"));
    assert_eq!(selected("none mmc0"), None);
    assert!(list_contains(trigger, "timer"));
    assert_eq!(
        words(trigger).collect::<Vec<_>>(),
        ["none", "mmc0", "timer", "heartbeat", "default-on"]
    );
}

#[test]
fn flag_sets() {
    const NAMES: [&str; 5] = ["running", "ramping", "holding", "overloaded", "stalled"];
    assert_eq!(flags("\n", &NAMES), Ok(0));
    assert_eq!(flags("running ramping\n", &NAMES), Ok(0b11));
    assert_eq!(flags("holding", &NAMES), Ok(0b100));
    assert_eq!(flags("running stalled", &NAMES), Ok(0b10001));
    assert_eq!(flags("running flying", &NAMES), Err("flying"));
}

/// [`parse_padded_kernel_int`] of `raw`, read into a fresh buffer as
/// the read path reads it.
fn padded(raw: &[u8]) -> Option<i32> {
    let mut buf: PaddedIntBuf = [b'0'; INT_PAD + 16];
    buf[INT_PAD..INT_PAD + raw.len()].copy_from_slice(raw);
    parse_padded_kernel_int(&buf, raw.len())
}

#[test]
fn parses_short_kernel_ints_padded() {
    for (raw, v) in [
        (&b"0\n"[..], 0),
        (b"7\n", 7),
        (b"-7\n", -7),
        (b"1500\n", 1500),
        (b"-1050\n", -1050),
        (b"99999999\n", 99_999_999),
        (b"-9999999\n", -9_999_999),
        (b"-0\n", 0),
        (b"00012\n", 12),
    ] {
        assert_eq!(padded(raw), Some(v), "{raw:?}");
    }
    // Not the short plain case: the caller's general way decides.
    for raw in [
        &b""[..],
        b"\n",
        b"-\n",
        b"--5\n",
        b"5-\n",
        b"1-2\n",
        b"+7\n",
        b" 3\n",
        b"42",
        b"12\n\n",
        b"123456789\n",
        b"-12345678\n",
        b"12:4\n",
        b"12/4\n",
    ] {
        assert_eq!(padded(raw), None, "{raw:?}");
    }
}

#[test]
fn parses_short_kernel_ints_a_digit_at_a_time() {
    for (raw, v) in [
        (&b"0\n"[..], 0),
        (b"-7\n", -7),
        (b"1500\n", 1500),
        (b"999999999\n", 999_999_999),
        (b"-999999999\n", -999_999_999),
        (b"-0\n", 0),
    ] {
        assert_eq!(parse_short_kernel_int(raw), Some(v), "{raw:?}");
    }
    for raw in [
        &b""[..],
        b"\n",
        b"-\n",
        b"1234567890\n",
        b"+7\n",
        b"42",
        b"4 2\n",
    ] {
        assert_eq!(parse_short_kernel_int(raw), None, "{raw:?}");
    }
    // What the read path calls on this CPU, on the buffer as it fills it.
    let mut buf = INT_READ_BUF;
    buf[INT_READ_PAD..INT_READ_PAD + 6].copy_from_slice(b"-1560\n");
    assert_eq!(parse_read_int(&buf, 6), Some(-1560));
}

/// Every string of up to 7 bytes over the characters that matter (digits
/// at both ends of the range, their ASCII neighbours, sign, newline,
/// space), and random longer ones: wherever a fast case (padded, or a
/// digit at a time) answers, it answers what the kernel-format parser
/// does, and it answers for every short plain value.
#[test]
fn fast_cases_agree_with_the_kernel_parser() {
    let alphabet = b"09/:-\n +";
    let check = |raw: &[u8]| {
        let body = raw.strip_suffix(b"\n").unwrap_or(b"");
        let digits = body.strip_prefix(b"-").unwrap_or(body);
        let plain = !digits.is_empty() && digits.iter().all(u8::is_ascii_digit);
        let fast = padded(raw);
        if fast.is_some() {
            assert_eq!(fast, parse_kernel_int(raw), "{raw:?}");
        }
        assert_eq!(fast.is_some(), plain && raw.len() <= 9, "{raw:?}");
        let short = parse_short_kernel_int(raw);
        if short.is_some() {
            assert_eq!(short, parse_kernel_int(raw), "{raw:?}");
        }
        assert_eq!(short.is_some(), plain && digits.len() <= 9, "{raw:?}");
    };
    let max_len = if cfg!(miri) { 3 } else { 7 };
    let mut raw = Vec::new();
    for len in 0..=max_len {
        let count = alphabet.len().pow(len as u32);
        for mut code in 0..count {
            raw.clear();
            for _ in 0..len {
                raw.push(alphabet[code % alphabet.len()]);
                code /= alphabet.len();
            }
            check(&raw);
        }
    }
    let mut rng = XorShift(0xE53F);
    for _ in 0..if cfg!(miri) { 300 } else { 50_000 } {
        let v = rng.next() as i32 >> (rng.next() % 32);
        let mut buf = [0u8; INT_BUF_LEN];
        let text = [format_int(i64::from(v), &mut buf), b"\n"].concat();
        check(&text);
    }
}

/// A small deterministic generator: no dependency, same sequence on
/// every platform (the suite also runs on 32-bit ARM under qemu).
struct XorShift(u64);
impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn arbitrary_bytes_never_panic() {
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    let alphabet = b"0123456789-+ \n\t[]abc\xff\x00";
    // Miri interprets: fewer rounds there (tens of seconds, not hours).
    for _ in 0..if cfg!(miri) { 300 } else { 20_000 } {
        let len = (rng.next() % 40) as usize;
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                let r = rng.next();
                if r.is_multiple_of(4) {
                    r as u8
                } else {
                    alphabet[(r % alphabet.len() as u64) as usize]
                }
            })
            .collect();
        // The fast case agrees with the general parser wherever it
        // answers.
        if let Some(v) = parse_kernel_int(&bytes) {
            assert_eq!(parse_int(&bytes), Some(i64::from(v)));
        }
        if let Some(v) = parse_int(&bytes) {
            // Whatever parses must print back to the trimmed digits
            // (modulo a plus sign and leading zeros).
            let mut buf = [0u8; INT_BUF_LEN];
            assert_eq!(parse_int(format_int(v, &mut buf)), Some(v));
        }
        if let Some(text) = parse_str(&bytes) {
            let _ = selected(text);
            let _ = words(text).count();
            let _ = flags(text, &["a", "b"]);
        }
    }
}

#[test]
fn random_ints_round_trip() {
    let mut rng = XorShift(12345);
    let mut buf = [0u8; INT_BUF_LEN];
    for _ in 0..if cfg!(miri) { 300 } else { 20_000 } {
        let v = rng.next() as i64;
        assert_eq!(parse_int(format_int(v, &mut buf)), Some(v));
    }
}
