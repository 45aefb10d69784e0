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
mod tests;
