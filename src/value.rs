//! Formatting and parsing of sysfs attribute values, in place and without
//! allocation.
//!
//! The kernel prints integers as `"%d\n"`, strings as `"%s\n"`, lists as
//! space-separated words and the LED `trigger` list with the active entry in
//! `[brackets]`. Parsers here accept exactly one value with surrounding ASCII
//! white space (the trailing newline, or none at all in a mock tree).

/// Enough bytes for any `i64` in decimal, with sign.
#[doc(hidden)] // used by the simulated brick (ev3sysfs-sim)
pub const INT_BUF_LEN: usize = 20;

/// Formats `value` in decimal into the end of `buf`; returns the used part.
/// Inline: a command's integer is formatted in the caller's loop.
#[doc(hidden)] // used by the simulated brick (ev3sysfs-sim)
#[inline(always)]
pub fn format_int(value: i64, buf: &mut [u8; INT_BUF_LEN]) -> &[u8] {
    // Two digits a step (a command's value has 1 to 4 digits: one or two
    // steps), from a table of the hundred pairs.
    const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
        2021222324252627282930313233343536373839\
        4041424344454647484950515253545556575859\
        6061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899";
    let mut pos = buf.len();
    let mut rest = value.unsigned_abs();
    while rest >= 100 {
        // Below 100, so the cast cannot truncate.
        let pair = 2 * (rest % 100) as usize;
        rest /= 100;
        pos -= 2;
        buf[pos..pos + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    }
    if rest >= 10 {
        let pair = 2 * rest as usize;
        pos -= 2;
        buf[pos..pos + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    } else {
        pos -= 1;
        buf[pos] = b'0' + rest as u8;
    }
    if value < 0 {
        pos -= 1;
        buf[pos] = b'-';
    }
    &buf[pos..]
}

/// Parses a 32-bit integer exactly as the kernel prints one (`"%d\n"`: an
/// optional `-`, 1 to 10 digits, an optional newline), with no overflow
/// check per digit: ten digits cannot overflow an `i64`. The read path's
/// fast case; `None` for anything else, which [`parse_int`] then judges.
#[doc(hidden)] // the integer read path's fast case
#[inline(always)]
pub fn parse_kernel_int(raw: &[u8]) -> Option<i32> {
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

/// The value without surrounding ASCII white space (the kernel's trailing
/// newline in particular).
#[inline]
pub fn trim(raw: &[u8]) -> &[u8] {
    raw.trim_ascii()
}

/// Parses a decimal integer with optional sign, as the kernel prints it.
///
/// Returns `None` for anything else: empty text, other characters, more than
/// one value, or a number that does not fit in `i64`.
#[inline]
pub fn parse_int(raw: &[u8]) -> Option<i64> {
    let text = trim(raw);
    let (negative, digits) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, text),
    };
    if digits.is_empty() {
        return None;
    }
    // Accumulate negatively so that i64::MIN parses too.
    let mut acc: i64 = 0;
    for &b in digits {
        let d = match b {
            b'0'..=b'9' => i64::from(b - b'0'),
            _ => return None,
        };
        acc = acc.checked_mul(10)?.checked_sub(d)?;
    }
    if negative {
        Some(acc)
    } else {
        acc.checked_neg()
    }
}

/// The value as UTF-8 text without surrounding white space.
pub fn parse_str(raw: &[u8]) -> Option<&str> {
    std::str::from_utf8(trim(raw)).ok()
}

/// Iterates the words of a space-separated list (`commands`, `modes`,
/// `state`...). Brackets of a selected entry are removed.
pub fn words(text: &str) -> impl Iterator<Item = &str> + Clone {
    text.split_ascii_whitespace().map(strip_brackets)
}

fn strip_brackets(word: &str) -> &str {
    word.strip_prefix('[')
        .and_then(|w| w.strip_suffix(']'))
        .unwrap_or(word)
}

/// The selected entry of a `[selected]` list such as the LED `trigger`
/// (`none [mmc0] timer`), or `None` when no entry is bracketed.
pub fn selected(text: &str) -> Option<&str> {
    text.split_ascii_whitespace()
        .find_map(|w| w.strip_prefix('[').and_then(|w| w.strip_suffix(']')))
}

/// `true` when `word` is one of the words of the list `text`.
pub fn list_contains(text: &str, word: &str) -> bool {
    words(text).any(|w| w == word)
}

/// Converts a space-separated flag list into a bit set: bit `i` is set when
/// `names[i]` is present.
///
/// Returns the first word that is not in `names` as `Err`; the bits found so
/// far are lost in that case, as the kernel never prints unknown flags.
pub fn flags<'a>(text: &'a str, names: &[&str]) -> Result<u32, &'a str> {
    let mut bits = 0u32;
    for word in words(text) {
        match names.iter().position(|n| *n == word) {
            Some(i) if i < 32 => bits |= 1 << i,
            _ => return Err(word),
        }
    }
    Ok(bits)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        }
    }

    #[test]
    fn lists() {
        let commands =
            "run-forever run-to-abs-pos run-to-rel-pos run-timed run-direct stop reset\n";
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
}
