//! The values sensors show: [`BinFormat`] (the layout of `bin_data`) and
//! [`Scaled`] (a fixed-point `valueN`).

/// The layout of `bin_data`, from `bin_data_format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinFormat {
    /// Unsigned 8-bit.
    U8,
    /// Signed 8-bit.
    S8,
    /// Unsigned 16-bit, little-endian.
    U16,
    /// Signed 16-bit, little-endian.
    S16,
    /// Signed 16-bit, big-endian.
    S16Be,
    /// Signed 32-bit, little-endian.
    S32,
    /// Signed 32-bit, big-endian (`s32be` in the kernel, `s32_be` in docs).
    S32Be,
    /// IEEE 754 single precision, little-endian.
    Float,
}

impl BinFormat {
    /// Parses the kernel's name.
    pub fn parse(text: &str) -> Option<BinFormat> {
        Some(match text {
            "u8" => BinFormat::U8,
            "s8" => BinFormat::S8,
            "u16" => BinFormat::U16,
            "s16" => BinFormat::S16,
            "s16_be" => BinFormat::S16Be,
            "s32" => BinFormat::S32,
            "s32_be" | "s32be" => BinFormat::S32Be,
            "float" => BinFormat::Float,
            _ => return None,
        })
    }

    /// Bytes per value.
    pub fn size(self) -> usize {
        match self {
            BinFormat::U8 | BinFormat::S8 => 1,
            BinFormat::U16 | BinFormat::S16 | BinFormat::S16Be => 2,
            _ => 4,
        }
    }

    /// Decodes value `index` of `raw` as an integer (a float is truncated
    /// toward zero). `None` when `raw` is too short.
    pub fn decode(self, raw: &[u8], index: usize) -> Option<i64> {
        let at = index.checked_mul(self.size())?;
        let b = raw.get(at..at.checked_add(self.size())?)?;
        Some(match self {
            BinFormat::U8 => i64::from(b[0]),
            BinFormat::S8 => i64::from(b[0] as i8),
            BinFormat::U16 => i64::from(u16::from_le_bytes([b[0], b[1]])),
            BinFormat::S16 => i64::from(i16::from_le_bytes([b[0], b[1]])),
            BinFormat::S16Be => i64::from(i16::from_be_bytes([b[0], b[1]])),
            BinFormat::S32 => i64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            BinFormat::S32Be => i64::from(i32::from_be_bytes([b[0], b[1], b[2], b[3]])),
            BinFormat::Float => f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as i64,
        })
    }
}

/// A fixed-point sensor value: `raw / 10^decimals` (integer maths only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scaled {
    /// The value as the kernel shows it.
    pub raw: i32,
    /// Decimal places.
    pub decimals: u8,
}

impl Scaled {
    /// The value in units of 10^-`want`, converted from `decimals` places
    /// (rounded toward zero), e.g. cm with one decimal to mm:
    /// `in_decimals(1)`. Exact for any `decimals` and `want` while the result
    /// fits in `i64`; beyond that it saturates at `i64::MIN`/`i64::MAX`.
    pub fn in_decimals(self, want: u8) -> i64 {
        let raw = i64::from(self.raw);
        if want >= self.decimals {
            match 10i64.checked_pow(u32::from(want - self.decimals)) {
                Some(factor) => raw.saturating_mul(factor),
                // 10^19 and more: any non-zero raw value saturates.
                None => match raw.cmp(&0) {
                    std::cmp::Ordering::Less => i64::MIN,
                    std::cmp::Ordering::Equal => 0,
                    std::cmp::Ordering::Greater => i64::MAX,
                },
            }
        } else {
            // |raw| < 10^10: dividing by 10^19 or more gives 0.
            10i64
                .checked_pow(u32::from(self.decimals - want))
                .map_or(0, |divisor| raw / divisor)
        }
    }

    /// As a float (soft-float on the brick: prefer [`Scaled::in_decimals`] in
    /// loops).
    pub fn to_f32(self) -> f32 {
        self.raw as f32 / 10f32.powi(i32::from(self.decimals))
    }
}

impl std::fmt::Display for Scaled {
    /// `raw` with a decimal point `decimals` places from the right, with
    /// leading zeros as needed (`-0.05`), for any `decimals`; no allocation.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use std::fmt::Write;
        let mut buf = [0u8; crate::value::INT_BUF_LEN];
        let digits = crate::value::format_int(i64::from(self.raw.unsigned_abs()), &mut buf);
        // ASCII digits only.
        let digits = std::str::from_utf8(digits).map_err(|_| std::fmt::Error)?;
        if self.raw < 0 {
            f.write_char('-')?;
        }
        let decimals = usize::from(self.decimals);
        if decimals == 0 {
            return f.write_str(digits);
        }
        match digits.len().checked_sub(decimals) {
            Some(split) if split > 0 => {
                let (whole, fraction) = digits.split_at(split);
                write!(f, "{whole}.{fraction}")
            }
            _ => {
                f.write_str("0.")?;
                for _ in digits.len()..decimals {
                    f.write_char('0')?;
                }
                f.write_str(digits)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bin_formats() {
        let raw = [0xff, 0x7f, 0x00, 0x80, 0x01, 0x02, 0x03, 0x04];
        assert_eq!(BinFormat::U8.decode(&raw, 0), Some(255));
        assert_eq!(BinFormat::S8.decode(&raw, 0), Some(-1));
        assert_eq!(BinFormat::U16.decode(&raw, 0), Some(0x7fff));
        assert_eq!(BinFormat::S16.decode(&raw, 1), Some(-32768));
        assert_eq!(BinFormat::S16Be.decode(&raw, 0), Some(-129));
        assert_eq!(BinFormat::S32.decode(&raw, 1), Some(0x0403_0201));
        assert_eq!(BinFormat::S32Be.decode(&raw, 1), Some(0x0102_0304));
        assert_eq!(BinFormat::Float.decode(&1.5f32.to_le_bytes(), 0), Some(1));
        assert_eq!(BinFormat::S32.decode(&raw, 2), None);
        assert_eq!(BinFormat::parse("s32be"), Some(BinFormat::S32Be));
        assert_eq!(BinFormat::parse("s32_be"), Some(BinFormat::S32Be));
        assert_eq!(BinFormat::parse("u64"), None);
    }

    #[test]
    fn fixed_point() {
        let d = Scaled {
            raw: 2553,
            decimals: 1,
        };
        assert_eq!(d.to_string(), "255.3");
        assert_eq!(d.in_decimals(1), 2553);
        assert_eq!(d.in_decimals(0), 255);
        assert_eq!(d.in_decimals(2), 25530);
        assert_eq!(
            Scaled {
                raw: -5,
                decimals: 2
            }
            .to_string(),
            "-0.05"
        );
        assert_eq!(
            Scaled {
                raw: 42,
                decimals: 0
            }
            .to_string(),
            "42"
        );
        assert!((d.to_f32() - 255.3).abs() < 1e-3);
    }

    #[test]
    fn fixed_point_with_any_decimals() {
        let s = |raw, decimals| Scaled { raw, decimals };
        // From 19 decimals 10^decimals overflows i64; from 64 the old
        // shift-free maths divided by zero.
        for decimals in [19u8, 20, 38, 39, 63, 64, 100, 255] {
            assert_eq!(s(i32::MAX, decimals).in_decimals(1), 0, "{decimals}");
            assert_eq!(s(i32::MIN, decimals).in_decimals(0), 0, "{decimals}");
            assert_eq!(s(7, decimals).in_decimals(decimals), 7);
            let text = s(-5, decimals).to_string();
            let zeros = usize::from(decimals) - 1;
            assert_eq!(text, format!("-0.{}5", "0".repeat(zeros)), "{decimals}");
            let text = s(i32::MIN, decimals).to_string();
            assert_eq!(text.len(), usize::from(decimals) + 3, "{text}");
            assert!(text.starts_with("-0.") && text.ends_with("2147483648"));
            assert_eq!(s(0, decimals).to_f32(), 0.0);
        }
        // Exact as long as the value fits, saturated beyond.
        assert_eq!(s(1, 0).in_decimals(18), 1_000_000_000_000_000_000);
        assert_eq!(s(9, 0).in_decimals(18), 9_000_000_000_000_000_000);
        assert_eq!(s(10, 0).in_decimals(18), i64::MAX);
        assert_eq!(s(-10, 0).in_decimals(18), i64::MIN);
        assert_eq!(s(1, 0).in_decimals(255), i64::MAX);
        assert_eq!(s(-1, 0).in_decimals(19), i64::MIN);
        assert_eq!(s(0, 0).in_decimals(255), 0);
        assert_eq!(s(i32::MAX, 9).in_decimals(0), 2);
        assert_eq!(s(i32::MIN, 10).in_decimals(0), 0);
        assert_eq!(s(i32::MIN, 10).in_decimals(1), -2);
        assert_eq!(s(i32::MIN, 0).to_string(), "-2147483648");
        assert_eq!(s(i32::MIN, 3).to_string(), "-2147483.648");
        assert_eq!(s(i32::MAX, 10).to_string(), "0.2147483647");
        assert_eq!(s(1234, 4).to_string(), "0.1234");
        assert_eq!(s(1234, 3).to_string(), "1.234");
        assert_eq!(s(-1000, 3).to_string(), "-1.000");
    }

    #[test]
    fn bin_decode_never_overflows() {
        let raw = [1u8, 2, 3, 4];
        for format in [
            BinFormat::U8,
            BinFormat::S16,
            BinFormat::S32,
            BinFormat::Float,
        ] {
            for index in [
                usize::MAX,
                usize::MAX / 2,
                usize::MAX / 4,
                usize::MAX / 4 + 1,
            ] {
                assert_eq!(format.decode(&raw, index), None, "{format:?} {index}");
            }
        }
        assert_eq!(BinFormat::U8.decode(&raw, 3), Some(4));
        assert_eq!(BinFormat::U8.decode(&raw, 4), None);
    }
}
