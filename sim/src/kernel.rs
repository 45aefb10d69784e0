//! The kernel's parsing and formatting helpers, as the ev3dev drivers' store
//! functions use them (`lib/kstrtox.c`, `sysfs_streq`, `vsscanf`), and the
//! attributes every class device has (`uevent`, `power/`).
//!
//! A store buffer is a C string: the kernel NUL-terminates the written
//! bytes, so parsing stops at the first NUL.

use crate::kobject::{AttrInfo, Errno, KResult, Mode};

/// The written bytes up to the first NUL (the C string the store sees).
fn c_str(buf: &[u8]) -> &[u8] {
    buf.iter()
        .position(|&b| b == 0)
        .map_or(buf, |nul| &buf[..nul])
}

/// `_kstrtoull(s, 10)`: decimal digits, at most one trailing `\n`, nothing
/// else. `EINVAL` for no digits or any other character, `ERANGE` past u64.
fn kstrtoull_plain(s: &[u8]) -> Result<u64, Errno> {
    let digits = s.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 {
        return Err(libc::EINVAL);
    }
    let mut value: u64 = 0;
    let mut overflow = false;
    for &b in &s[..digits] {
        match value
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(b - b'0')))
        {
            Some(v) => value = v,
            None => overflow = true,
        }
    }
    if overflow {
        return Err(libc::ERANGE);
    }
    let rest = &s[digits..];
    let rest = rest.strip_prefix(b"\n").unwrap_or(rest);
    if rest.is_empty() {
        Ok(value)
    } else {
        Err(libc::EINVAL)
    }
}

/// `kstrtoull(s, 10)`: one optional leading `+`, then as `_kstrtoull`.
pub(crate) fn kstrtoull(buf: &[u8]) -> Result<u64, Errno> {
    let s = c_str(buf);
    kstrtoull_plain(s.strip_prefix(b"+").unwrap_or(s))
}

/// `kstrtoll(s, 10)`: `-digits`, or `+` then `kstrtoull` (which takes one
/// more `+`: `"++5"` is 5, as in the kernel). `ERANGE` outside i64.
pub(crate) fn kstrtoll(buf: &[u8]) -> Result<i64, Errno> {
    let s = c_str(buf);
    if let Some(digits) = s.strip_prefix(b"-") {
        let v = kstrtoull_plain(digits)?;
        if v > i64::MIN.unsigned_abs() {
            return Err(libc::ERANGE);
        }
        return Ok(0i64.wrapping_sub_unsigned(v));
    }
    let s = s.strip_prefix(b"+").unwrap_or(s);
    i64::try_from(kstrtoull(s)?).map_err(|_| libc::ERANGE)
}

/// `kstrtoint(s, 10)`: as `kstrtoll`, `ERANGE` outside i32.
pub(crate) fn kstrtoint(buf: &[u8]) -> Result<i32, Errno> {
    i32::try_from(kstrtoll(buf)?).map_err(|_| libc::ERANGE)
}

/// `kstrtol(s, 10)` on the EV3 (32-bit ARM: `long` is 32 bits).
pub(crate) fn kstrtol(buf: &[u8]) -> Result<i32, Errno> {
    kstrtoint(buf)
}

/// `kstrtoul(s, 10)` on the EV3 (`unsigned long` is 32 bits): no `-`.
pub(crate) fn kstrtoul(buf: &[u8]) -> Result<u32, Errno> {
    u32::try_from(kstrtoull(buf)?).map_err(|_| libc::ERANGE)
}

/// `sscanf(buf, "%u...")`: leading white space skipped, then at least one
/// digit (no sign); whatever follows is ignored. The value wraps to 32 bits
/// as the kernel's conversion does. `EINVAL` when nothing converts.
pub(crate) fn sscanf_u32(buf: &[u8]) -> Result<u32, Errno> {
    let s = c_str(buf);
    let start = s
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(s.len());
    let digits: Vec<u8> = s[start..]
        .iter()
        .copied()
        .take_while(u8::is_ascii_digit)
        .collect();
    if digits.is_empty() {
        return Err(libc::EINVAL);
    }
    let mut value: u64 = 0;
    for b in digits {
        value = value.wrapping_mul(10).wrapping_add(u64::from(b - b'0'));
    }
    Ok(value as u32)
}

/// `sscanf(buf, "%d")`: leading white space, an optional sign, digits;
/// trailing garbage ignored. `EINVAL` when nothing converts.
pub(crate) fn sscanf_i32(buf: &[u8]) -> Result<i32, Errno> {
    let s = c_str(buf);
    let start = s
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(s.len());
    let s = &s[start..];
    let (negative, s) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    let digits = s.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 {
        return Err(libc::EINVAL);
    }
    let mut value: i64 = 0;
    for &b in &s[..digits] {
        value = value.wrapping_mul(10).wrapping_add(i64::from(b - b'0'));
    }
    let value = value as i32;
    Ok(if negative {
        value.wrapping_neg()
    } else {
        value
    })
}

/// `sysfs_streq(buf, name)`: equal, but for one trailing `\n` on the
/// written side; case-sensitive.
pub(crate) fn sysfs_streq(buf: &[u8], name: &str) -> bool {
    let s = c_str(buf);
    let s = s.strip_suffix(b"\n").unwrap_or(s);
    s == name.as_bytes()
}

/// Finds the written word in a list of names (`sysfs_match_string`).
pub(crate) fn match_string(buf: &[u8], names: &[&str]) -> Option<usize> {
    names.iter().position(|n| sysfs_streq(buf, n))
}

/// Appends `value` and a newline (`"%s\n"`).
pub(crate) fn show_str(out: &mut Vec<u8>, value: &str) {
    out.extend_from_slice(value.as_bytes());
    out.push(b'\n');
}

/// Appends `value` and a newline (`"%d\n"`).
pub(crate) fn show_int(out: &mut Vec<u8>, value: impl std::fmt::Display) {
    out.extend_from_slice(value.to_string().as_bytes());
    out.push(b'\n');
}

/// Read-only text attributes.
pub(crate) fn ro<'a>(names: &'a [&'a str]) -> impl Iterator<Item = AttrInfo> + 'a {
    names.iter().map(|n| AttrInfo::text(*n, Mode::ReadOnly))
}

/// Read-write text attributes.
pub(crate) fn rw<'a>(names: &'a [&'a str]) -> impl Iterator<Item = AttrInfo> + 'a {
    names.iter().map(|n| AttrInfo::text(*n, Mode::ReadWrite))
}

/// A binary attribute of `size` bytes (`bin_data`, `direct`).
pub(crate) fn bin(name: &str, mode: Mode, size: u64) -> AttrInfo {
    AttrInfo {
        name: name.to_owned(),
        mode,
        positional: true,
        size,
    }
}

/// The runtime-PM files of every class device's `power/` directory.
pub(crate) const POWER_ATTRS: [(&str, Mode); 5] = [
    ("power/autosuspend_delay_ms", Mode::ReadWrite),
    ("power/control", Mode::ReadWrite),
    ("power/runtime_active_time", Mode::ReadOnly),
    ("power/runtime_status", Mode::ReadOnly),
    ("power/runtime_suspended_time", Mode::ReadOnly),
];

/// The `power/` attributes, to append to a device's list.
pub(crate) fn power_attrs() -> impl Iterator<Item = AttrInfo> {
    POWER_ATTRS
        .iter()
        .map(|(name, mode)| AttrInfo::text(*name, *mode))
}

/// Shows a `power/` attribute as a class device without runtime PM does;
/// `None` when `attr` is not one of them.
///
/// `autosuspend_delay_ms` fails with `EIO` (autosuspend is not in use).
pub(crate) fn show_power(attr: &str, out: &mut Vec<u8>) -> Option<KResult<()>> {
    let value = match attr {
        "power/autosuspend_delay_ms" => return Some(Err(libc::EIO)),
        "power/control" => "auto",
        "power/runtime_active_time" | "power/runtime_suspended_time" => "0",
        "power/runtime_status" => "unsupported",
        _ => return None,
    };
    show_str(out, value);
    Some(Ok(()))
}

/// Stores a `power/` attribute: `control` takes `auto` or `on`,
/// `autosuspend_delay_ms` an int; `None` when `attr` is not one of them.
pub(crate) fn store_power(attr: &str, value: &[u8]) -> Option<KResult<usize>> {
    let ok = match attr {
        "power/control" => match_string(value, &["auto", "on"]).is_some(),
        "power/autosuspend_delay_ms" => kstrtol(value).is_ok(),
        _ => return None,
    };
    Some(if ok {
        Ok(value.len())
    } else {
        Err(libc::EINVAL)
    })
}

/// The `uevent` of a LEGO class device.
pub(crate) fn show_lego_uevent(out: &mut Vec<u8>, driver: &str, address: &str) {
    out.extend_from_slice(
        format!("LEGO_DRIVER_NAME={driver}\nLEGO_ADDRESS={address}\n").as_bytes(),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kstrtoint_follows_lib_kstrtox() {
        assert_eq!(kstrtoint(b"42"), Ok(42));
        assert_eq!(kstrtoint(b"42\n"), Ok(42));
        assert_eq!(kstrtoint(b"+42"), Ok(42));
        assert_eq!(kstrtoint(b"++42"), Ok(42));
        assert_eq!(kstrtoint(b"-42\n"), Ok(-42));
        assert_eq!(kstrtoint(b"42\0junk"), Ok(42));
        assert_eq!(kstrtoint(b"-2147483648"), Ok(i32::MIN));
        for bad in [
            &b""[..],
            b"\n",
            b"42\n\n",
            b" 42",
            b"42 ",
            b"1.5",
            b"0x10",
            b"-+5",
            b"+-5",
            b"--5",
            b"abc",
        ] {
            assert_eq!(kstrtoint(bad), Err(libc::EINVAL), "{bad:?}");
        }
        assert_eq!(kstrtoint(b"2147483648"), Err(libc::ERANGE));
        assert_eq!(kstrtoint(b"-2147483649"), Err(libc::ERANGE));
        assert_eq!(kstrtoint(b"99999999999999999999"), Err(libc::ERANGE));
        assert_eq!(kstrtoll(b"-9223372036854775808"), Ok(i64::MIN));
        assert_eq!(kstrtoll(b"9223372036854775808"), Err(libc::ERANGE));
        assert_eq!(kstrtoul(b"-1"), Err(libc::EINVAL));
        assert_eq!(kstrtoul(b"4294967296"), Err(libc::ERANGE));
    }

    #[test]
    fn sscanf_ignores_trailing_garbage() {
        assert_eq!(sscanf_u32(b"  300ms"), Ok(300));
        assert_eq!(sscanf_u32(b"-5"), Err(libc::EINVAL));
        assert_eq!(sscanf_u32(b"x"), Err(libc::EINVAL));
        assert_eq!(sscanf_i32(b"-40 deg"), Ok(-40));
        assert_eq!(sscanf_i32(b""), Err(libc::EINVAL));
    }

    #[test]
    fn sysfs_streq_ignores_one_trailing_newline() {
        assert!(sysfs_streq(b"coast", "coast"));
        assert!(sysfs_streq(b"coast\n", "coast"));
        assert!(!sysfs_streq(b"coast\n\n", "coast"));
        assert!(!sysfs_streq(b"coast ", "coast"));
        assert!(!sysfs_streq(b"Coast", "coast"));
        assert_eq!(match_string(b"brake\n", &["coast", "brake"]), Some(1));
    }

    #[test]
    fn power_files_look_like_sysfs() {
        let mut out = Vec::new();
        assert_eq!(show_power("power/control", &mut out), Some(Ok(())));
        assert_eq!(out, b"auto\n");
        assert_eq!(
            show_power("power/autosuspend_delay_ms", &mut Vec::new()),
            Some(Err(libc::EIO))
        );
        assert!(show_power("state", &mut Vec::new()).is_none());
        assert_eq!(store_power("power/control", b"on\n"), Some(Ok(3)));
        assert_eq!(
            store_power("power/control", b"off"),
            Some(Err(libc::EINVAL))
        );
    }
}
