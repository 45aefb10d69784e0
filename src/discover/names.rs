//! Port names as people type them (`outA`, `OutA`, `A`, `in1`, `1`), and
//! telling "no such device" from "no brick at all".

use std::borrow::Cow;
use std::path::Path;

use crate::error::{Error, Result};

/// The EV3's output ports, as an error lists them.
pub const OUTPUT_PORTS: &str = "outA outB outC outD";
/// The EV3's input ports, as an error lists them.
pub const INPUT_PORTS: &str = "in1 in2 in3 in4";

const PREFIX: &str = "ev3-ports:";

/// The classes ev3dev's EV3 drivers create: a root with none of them is
/// not a brick.
const EV3_CLASSES: [&str; 5] = [
    "lego-port",
    "tacho-motor",
    "lego-sensor",
    "dc-motor",
    "servo-motor",
];

/// `port` in the kernel's spelling: `OutA`, `outa` and `A` are `outA`;
/// `IN1` and `1` are `in1` (also after an `ev3-ports:` prefix and before an
/// I2C suffix such as `:i2c1`). Names of other platforms pass unchanged.
///
/// # Errors
/// [`Error::UnknownPort`] for a name that looks like an EV3 port but is
/// none (`outE`, `in5`, `Z`), listing the ports.
pub fn canonical_port(port: &str) -> Result<Cow<'_, str>> {
    let (prefix, rest) = match port.get(..PREFIX.len()) {
        Some(p) if p.eq_ignore_ascii_case(PREFIX) => (PREFIX, &port[PREFIX.len()..]),
        _ => ("", port),
    };
    let (head, tail) = rest.split_at(rest.find(':').unwrap_or(rest.len()));
    let unknown = |valid| {
        Err(Error::UnknownPort {
            port: port.to_owned(),
            valid,
        })
    };
    let bytes = head.as_bytes();
    let canonical = match bytes {
        [c] if (b'a'..=b'd').contains(&c.to_ascii_lowercase()) => {
            format!("out{}", char::from(c.to_ascii_uppercase()))
        }
        [c @ b'1'..=b'4'] => format!("in{}", char::from(*c)),
        [_] => return unknown("outA outB outC outD (or A..D), in1 in2 in3 in4 (or 1..4)"),
        _ if head.len() >= 3 && head[..3].eq_ignore_ascii_case("out") => match bytes {
            [_, _, _, c] if (b'a'..=b'd').contains(&c.to_ascii_lowercase()) => {
                format!("out{}", char::from(c.to_ascii_uppercase()))
            }
            _ => return unknown(OUTPUT_PORTS),
        },
        _ if head.len() >= 2 && head[..2].eq_ignore_ascii_case("in") => match bytes {
            [_, _, c @ b'1'..=b'4'] => format!("in{}", char::from(*c)),
            _ => return unknown(INPUT_PORTS),
        },
        _ => return Ok(Cow::Borrowed(port)),
    };
    if canonical == head {
        Ok(Cow::Borrowed(port))
    } else {
        Ok(Cow::Owned(format!("{prefix}{canonical}{tail}")))
    }
}

/// [`Error::NoBrick`] when `root` has none of ev3dev's classes.
pub(crate) fn no_brick(root: &Path) -> Option<Error> {
    if EV3_CLASSES.iter().any(|class| root.join(class).exists()) {
        return None;
    }
    let from_env = std::env::var_os(crate::device::ROOT_ENV).is_some_and(|r| !r.is_empty());
    Some(Error::NoBrick {
        root: root.to_path_buf(),
        from_env,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(port: &str) -> String {
        canonical_port(port).unwrap().into_owned()
    }

    #[test]
    fn people_spell_ports_many_ways() {
        for (given, kernel) in [
            ("outA", "outA"),
            ("OutA", "outA"),
            ("OUTB", "outB"),
            ("outc", "outC"),
            ("A", "outA"),
            ("d", "outD"),
            ("in1", "in1"),
            ("IN4", "in4"),
            ("2", "in2"),
            ("ev3-ports:outA", "ev3-ports:outA"),
            ("EV3-PORTS:outa", "ev3-ports:outA"),
            ("in1:i2c1", "in1:i2c1"),
            ("ev3-ports:In1:i2c88:sv3", "ev3-ports:in1:i2c88:sv3"),
            ("spi0.1:S1", "spi0.1:S1"),
            ("serial0-0:MA", "serial0-0:MA"),
        ] {
            assert_eq!(ok(given), kernel, "{given}");
        }
    }

    #[test]
    fn impossible_ports_list_the_real_ones() {
        for (given, valid) in [
            ("outE", OUTPUT_PORTS),
            ("out", OUTPUT_PORTS),
            ("outAB", OUTPUT_PORTS),
            ("in5", INPUT_PORTS),
            ("in0", INPUT_PORTS),
            ("ev3-ports:in9", INPUT_PORTS),
        ] {
            match canonical_port(given) {
                Err(e @ Error::UnknownPort { .. }) => {
                    let text = e.to_string();
                    assert!(text.contains(valid), "{text}");
                    assert!(text.contains(given), "{text}");
                }
                other => panic!("{given}: {other:?}"),
            }
        }
        assert!(matches!(
            canonical_port("E"),
            Err(Error::UnknownPort { .. })
        ));
    }
}
