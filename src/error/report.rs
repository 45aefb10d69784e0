//! `Debug` for [`Error`]: the readable sentence by default (what Rust prints
//! when `main` returns an error), the structured fields with `{:#?}`.

use std::fmt;

use super::Error;

/// `f.debug_struct(Variant).field(name, value)...` for every variant, so
/// that a new variant without a line here does not compile.
macro_rules! structured {
    ($f:ident, $error:ident, $($variant:ident { $($field:ident),* }),* $(,)?) => {
        match $error {
            $(Error::$variant { $($field),* } => {
                let mut s = $f.debug_struct(stringify!($variant));
                $(s.field(stringify!($field), $field);)*
                s.finish()
            })*
        }
    };
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !f.alternate() {
            // `Error: <this>` is what `fn main() -> ev3sysfs::Result<()>`
            // prints: the sentence a person reads.
            return fmt::Display::fmt(self, f);
        }
        let error = self;
        structured!(
            f,
            error,
            InvalidValue {
                path,
                value,
                source
            },
            Disconnected {
                path,
                operation,
                source
            },
            Unsupported {
                path,
                operation,
                source
            },
            PermissionDenied {
                path,
                operation,
                source
            },
            Io {
                path,
                operation,
                source
            },
            Parse {
                path,
                raw,
                expected
            },
            OutOfRange {
                attribute,
                value,
                min,
                max
            },
            NotOffered {
                attribute,
                value,
                offered
            },
            InvalidName { name },
            NotFound { what, seen },
            Ambiguous { what, matches },
            GuardStopped { path },
            GuardFull { capacity },
            UnknownPort { port, valid },
            NoBrick { root, from_env },
            GyroDrift {
                address,
                degrees,
                over
            },
            Timeout { what, waited },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_is_the_sentence_and_alternate_the_fields() {
        let e = Error::OutOfRange {
            attribute: "speed (% of max_speed)",
            value: 150,
            min: -100,
            max: 100,
        };
        assert_eq!(format!("{e:?}"), e.to_string());
        assert!(e.to_string().contains("150 is out of range -100..=100"));
        let structured = format!("{e:#?}");
        assert!(structured.starts_with("OutOfRange {"), "{structured}");
        assert!(structured.contains("value: 150,"), "{structured}");
    }
}
