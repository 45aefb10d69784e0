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
    let mut pos = buf.len();
    // Beyond 32 bits (no ev3dev value is): 64-bit divisions, a library
    // call each on the brick's 32-bit ARM, until what is left fits.
    let mut wide = value.unsigned_abs();
    while wide > u64::from(u32::MAX) {
        // Below 100, so the cast cannot truncate.
        pos = put_pair(buf, pos, (wide % 100) as usize);
        wide /= 100;
    }
    // At most u32::MAX now: fits.
    pos = put_digits(wide as u32, buf, pos);
    if value < 0 {
        pos -= 1;
        buf[pos] = b'-';
    }
    &buf[pos..]
}

/// Enough bytes for any `i32` in decimal, with sign (11), rounded up to
/// whole words: the buffer is cleared in three stores on the brick.
#[doc(hidden)]
pub const I32_BUF_LEN: usize = 12;

/// [`format_int`] of an `i32` (every ev3dev number), into a smaller buffer.
#[doc(hidden)]
#[inline(always)]
pub fn format_i32(value: i32, buf: &mut [u8; I32_BUF_LEN]) -> &[u8] {
    let mut pos = put_digits(value.unsigned_abs(), buf, I32_BUF_LEN);
    if value < 0 {
        pos -= 1;
        buf[pos] = b'-';
    }
    &buf[pos..]
}

/// Writes the decimal digits of `rest` into `buf` just before `pos`, two a
/// step (a command's value has 1 to 4 digits: one or two steps) in 32 bits
/// (a multiply, not a division, on any CPU); returns where they start.
#[inline(always)]
fn put_digits(mut rest: u32, buf: &mut [u8], mut pos: usize) -> usize {
    while rest >= 100 {
        pos = put_pair(buf, pos, (rest % 100) as usize);
        rest /= 100;
    }
    if rest >= 10 {
        put_pair(buf, pos, rest as usize)
    } else {
        buf[pos - 1] = b'0' + rest as u8;
        pos - 1
    }
}

/// Writes the two digits of `n` (below 100) into `buf` just before `pos`,
/// from a table of the hundred pairs; returns where they start.
#[inline(always)]
fn put_pair(buf: &mut [u8], pos: usize, n: usize) -> usize {
    const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
        2021222324252627282930313233343536373839\
        4041424344454647484950515253545556575859\
        6061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899";
    buf[pos - 2..pos].copy_from_slice(&PAIRS[2 * n..2 * n + 2]);
    pos - 2
}

/// Bytes of `b'0'` before the part of a [`PaddedIntBuf`] the kernel fills:
/// an integer shorter than 8 characters is read as if zero-padded on the
/// left.
#[doc(hidden)]
pub const INT_PAD: usize = 8;

/// The buffer of [`parse_padded_kernel_int`]: [`INT_PAD`] bytes of `b'0'`,
/// then 16 bytes for `pread` (an `i32` takes at most 12 with its newline).
#[doc(hidden)]
pub type PaddedIntBuf = [u8; INT_PAD + 16];

/// The padding before the part of [`IntReadBuf`] that `pread` fills:
/// [`INT_PAD`] where the read path parses a padded value (64-bit CPUs),
/// none where it parses a digit at a time.
#[doc(hidden)]
pub const INT_READ_PAD: usize = if cfg!(target_pointer_width = "64") {
    INT_PAD
} else {
    0
};

/// The integer read path's stack buffer: [`INT_READ_PAD`] bytes of `b'0'`,
/// then 16 bytes for `pread`.
#[doc(hidden)]
pub type IntReadBuf = [u8; INT_READ_PAD + 16];

/// A fresh [`IntReadBuf`]: all `b'0'`, so the padding is in place.
#[doc(hidden)]
pub const INT_READ_BUF: IntReadBuf = [b'0'; INT_READ_PAD + 16];

/// The read path's fast case, the way that suits this CPU: the value of
/// the kernel's `"%d\n"` that `pread` wrote as the first `len` bytes after
/// the padding of `buf`, or `None` for the general parser to decide.
///
/// With 64-bit registers, [`parse_padded_kernel_int`]: an out-of-order CPU
/// pays a parse's latency, and that one is short. With 32-bit ones (the
/// brick's ARM926, in order, one instruction after the other),
/// [`parse_short_kernel_int`]: its 64-bit words would take two registers
/// and several instructions for each step there, where a digit at a time
/// takes four.
#[doc(hidden)]
#[inline(always)]
pub fn parse_read_int(buf: &IntReadBuf, len: usize) -> Option<i32> {
    #[cfg(target_pointer_width = "64")]
    return parse_padded_kernel_int(buf, len);
    #[cfg(not(target_pointer_width = "64"))]
    return parse_short_kernel_int(buf.get(..len)?);
}

/// The kernel's `"%d\n"` of a value of 1 to 9 digits (`"[-]d...d\n"`, 2
/// to 11 bytes), a digit at a time; `None` for anything else (a longer
/// value, no newline, white space, a plus sign...), which the caller hands
/// to [`parse_int`]. Nine digits fit in an `i32` whatever they are.
#[doc(hidden)]
#[inline(always)]
pub fn parse_short_kernel_int(raw: &[u8]) -> Option<i32> {
    let (&newline, body) = raw.split_last()?;
    let (negative, digits) = match body.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, body),
    };
    if newline != b'\n' || digits.is_empty() || digits.len() > 9 {
        return None;
    }
    let mut magnitude = 0u32;
    for &b in digits {
        let digit = b.wrapping_sub(b'0');
        if digit > 9 {
            return None;
        }
        magnitude = magnitude * 10 + u32::from(digit);
    }
    // At most 999 999 999: fits.
    let magnitude = magnitude as i32;
    Some(if negative { -magnitude } else { magnitude })
}

/// The read path's fast case: the value of `"[-]d...d\n"` of 2 to 9 bytes
/// (up to 8 digits, 7 with a sign), that the kernel wrote as the first `len`
/// bytes after the padding of `buf`. `None` for anything else (longer
/// values, no newline, white space...), which the caller hands to
/// [`parse_int`].
///
/// Built for latency, which is what a read costs after the syscall
/// (entering the next syscall waits for it): the eight bytes that end at
/// the last digit are weighed all at once (eight independent multiplies)
/// instead of one digit after the other, the sign is corrected
/// from a table indexed by the length, and the checks (newline, digits,
/// sign) are predicted branches off the value's path.
#[doc(hidden)]
#[inline(always)]
pub fn parse_padded_kernel_int(buf: &PaddedIntBuf, len: usize) -> Option<i32> {
    // For a sign at the start of a `len`-byte value, in the window of the
    // eight bytes before the newline: what turns its '-' into a '0'
    // (`SIGN_FIX`), and what that '-' took from the weighed sum (`SIGN_SUM`:
    // '0' - '-' = 3 at the place of the first digit's neighbour).
    const SIGN_FIX: [u64; 10] = [
        0,
        0,
        0,
        3 << 48,
        3 << 40,
        3 << 32,
        3 << 24,
        3 << 16,
        3 << 8,
        3,
    ];
    const SIGN_SUM: [u32; 10] = [
        0, 0, 0, 30, 300, 3_000, 30_000, 300_000, 3_000_000, 30_000_000,
    ];
    const HIGH: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    if !(2..=9).contains(&len) {
        return None;
    }
    let newline = INT_PAD + len - 1;
    let window: &[u8; 8] = buf.get(newline - 8..newline)?.try_into().ok()?;
    let negative = buf[INT_PAD] == b'-';
    // "-\n" keeps its '-' (no fix for len 2) and fails the digit check.
    let fixed = u64::from_le_bytes(*window).wrapping_add(if negative { SIGN_FIX[len] } else { 0 });
    let all_digits = (fixed & HIGH) | ((fixed.wrapping_add(0x0606_0606_0606_0606) & HIGH) >> 4)
        == 0x3333_3333_3333_3333;
    if buf.get(newline) != Some(&b'\n') || !all_digits {
        return None;
    }
    // Eight independent loads and multiplies (no array `map`: at
    // `opt-level = "s"` that became a loop through memory).
    let digit = |i: usize| u32::from(window[i]);
    let weighed = (digit(0) * 10_000_000 + digit(1) * 1_000_000)
        + (digit(2) * 100_000 + digit(3) * 10_000)
        + ((digit(4) * 1_000 + digit(5) * 100) + (digit(6) * 10 + digit(7)));
    // A '-' (3 below '0') can take the difference below zero, where it
    // wraps; adding the sign's share back gives the magnitude exactly.
    let magnitude = weighed
        .wrapping_sub(u32::from(b'0') * 11_111_111)
        .wrapping_add(if negative { SIGN_SUM[len] } else { 0 });
    // At most 99 999 999: fits.
    let magnitude = magnitude as i32;
    Some(if negative { -magnitude } else { magnitude })
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
}
