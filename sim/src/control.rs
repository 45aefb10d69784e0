//! The simulated brick's control protocol: one command per line, for any
//! language (a shell's `echo`, python's `socket`, C's `write`).
//!
//! `ev3-sim` reads these lines from its control FIFO (`$EV3SIM_CONTROL`,
//! fire and forget: errors go to ev3-sim's stderr) and from its control
//! socket (`$EV3SIM_SOCKET`, a Unix stream socket that answers every line
//! with exactly one reply line, in order). This module is the pure part:
//! [`LineBuffer`] cuts a byte stream into lines, [`Command::parse`] reads
//! one line. Neither allocates without bound nor panics on any input (a
//! fuzz target checks it).
//!
//! | line | does | reply |
//! |---|---|---|
//! | `set PORT ATTR VALUE` | what the device on PORT reports: `set in1 value0 1`, `set outA position 90` (the value is the rest of the line); a touch sensor pressed so stays pressed in a world (whatever its contact) until `set in1 value0 0` | `ok` |
//! | `press BUTTON`, `release BUTTON` | holds / lets go a brick button: `up down left right enter backspace` (`center`, `back` too) | `ok` |
//! | `click BUTTON [MS]` | press, hold MS ms (default 100, as a finger does), release | `ok` after the release |
//! | `block PORT`, `free PORT` | the motor on PORT cannot / can turn again (a blocked running motor stalls) | `ok` |
//! | `battery VOLTS` | the battery's voltage (`battery 7.1`) | `ok` |
//! | `unplug PORT`, `plug PORT DRIVER` | as a cable does (`plug outB lego-ev3-l-motor`); a busy port, a motor on an input port or a sensor on an output port is refused | `ok` |
//! | `get PORT ATTR` | reads what the device shows (`get outA position`) | `ok VALUE` |
//! | `tones` | the tones played on the beeper so far, in Hz (0: silence) | `ok 440 0` |
//! | `screen` | the framebuffer's bytes in hex | `ok ff00...` |
//! | `ping` | nothing | `ok pong` |
//! | anything else (`pose`, `move X Y HEADING`) | offered to the world ([`Extension`]) | the world's reply, or `error unknown command` |
//!
//! A reply is `ok` or `ok TEXT`, or `error MESSAGE` for an unknown,
//! malformed or refused line; the server keeps going. Empty lines and lines
//! starting with `#` are ignored (no reply). A line that is not UTF-8 or
//! longer than [`MAX_LINE`] bytes gets an error reply of its own; the lines
//! around it are served as if it were not there.

use crate::buttons::Button;

/// The longest line served; longer ones are refused (and skipped up to
/// their newline) so that no client can make the server buffer without
/// bound.
pub const MAX_LINE: usize = 4096;

/// How long `click` holds a button when no time is given: about as long as
/// a finger does.
pub const CLICK_MS: u64 = 100;

/// The longest `click` hold accepted, in ms.
pub const MAX_CLICK_MS: u64 = 60_000;

/// One control line, read.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// `set PORT ATTR VALUE`.
    Set {
        /// The port (`in1`, `outA`) or `battery`.
        port: String,
        /// The attribute (`value0`, `position`).
        attr: String,
        /// The value, as written (the rest of the line).
        value: String,
    },
    /// `get PORT ATTR`.
    Get {
        /// The port or `battery`.
        port: String,
        /// The attribute.
        attr: String,
    },
    /// `press BUTTON`.
    Press(Button),
    /// `release BUTTON`.
    Release(Button),
    /// `click BUTTON [MS]`: press, hold, release.
    Click(Button, u64),
    /// `block PORT` (true) or `free PORT` (false).
    Block {
        /// The motor's port.
        port: String,
        /// Blocked or free.
        blocked: bool,
    },
    /// `battery VOLTS`: the voltage in microvolts.
    Battery(i64),
    /// `unplug PORT`.
    Unplug(String),
    /// `plug PORT DRIVER`.
    Plug {
        /// The port.
        port: String,
        /// The kernel driver's name.
        driver: String,
    },
    /// `tones`.
    Tones,
    /// `screen`.
    Screen,
    /// `ping`.
    Ping,
    /// Any other verb, with its words: for an [`Extension`] (a world's
    /// `pose`, `move X Y HEADING`).
    Other(Vec<String>),
}

/// A handler of the lines the brick itself does not know (the simulated
/// world answers `pose` and `move`).
pub trait Extension: Send {
    /// Serves `words` (the line split at white space, verb first): `None`
    /// when the line is not this extension's, else `Ok(reply text)` or
    /// `Err(message)`.
    fn handle(&mut self, words: &[String]) -> Option<Result<String, String>>;
}

/// The world's lines (`pose`, `move X Y HEADING`) for a control server
/// beside a real-time simulator.
impl Extension for crate::world::WorldControl {
    fn handle(&mut self, words: &[String]) -> Option<Result<String, String>> {
        // The world says `ok` for a move: the server adds its own.
        crate::world::WorldControl::handle(self, words)
            .map(|r| r.map(|text| if text == "ok" { String::new() } else { text }))
    }
}

/// A button by its protocol name.
pub fn button(name: &str) -> Option<Button> {
    Some(match name {
        "up" => Button::Up,
        "down" => Button::Down,
        "left" => Button::Left,
        "right" => Button::Right,
        "enter" | "center" | "centre" => Button::Enter,
        "backspace" | "back" => Button::Backspace,
        _ => return None,
    })
}

/// Parses a voltage in volts (`7.1`, `8`) into microvolts, 0..=20 V.
fn volts(text: &str) -> Option<i64> {
    let v: f64 = text.parse().ok()?;
    (v.is_finite() && (0.0..=20.0).contains(&v)).then(|| (v * 1e6).round() as i64)
}

/// `line` after its first `n` words, trimmed.
fn after_words(line: &str, n: usize) -> &str {
    let mut rest = line.trim_start();
    for _ in 0..n {
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        rest = rest[end..].trim_start();
    }
    rest.trim_end()
}

impl Command {
    /// Reads one line (without its newline). `Ok(None)` for an empty or
    /// comment line.
    ///
    /// # Errors
    /// What is wrong with the line, as the error reply says it.
    pub fn parse(line: &str) -> Result<Option<Command>, String> {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            return Ok(None);
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        let owned = |s: &str| s.to_owned();
        let named = |s: &str| {
            button(s).ok_or_else(|| {
                format!("unknown button {s:?}: expected up, down, left, right, enter or backspace")
            })
        };
        let command = match words.as_slice() {
            ["set", port, attr, _, ..] => {
                // The value is the rest of the line after the attribute.
                let value = after_words(line, 3);
                Command::Set {
                    port: owned(port),
                    attr: owned(attr),
                    value: owned(value),
                }
            }
            ["set", ..] => return Err("expected `set PORT ATTR VALUE`".into()),
            ["get", port, attr] => Command::Get {
                port: owned(port),
                attr: owned(attr),
            },
            ["get", ..] => return Err("expected `get PORT ATTR`".into()),
            ["press", b] => Command::Press(named(b)?),
            ["release", b] => Command::Release(named(b)?),
            ["click", b] => Command::Click(named(b)?, CLICK_MS),
            ["click", b, ms] => {
                let ms = ms
                    .parse::<u64>()
                    .ok()
                    .filter(|ms| *ms <= MAX_CLICK_MS)
                    .ok_or_else(|| {
                        format!("click: {ms:?} is not a time in ms (0..={MAX_CLICK_MS})")
                    })?;
                Command::Click(named(b)?, ms)
            }
            ["press" | "release" | "click", ..] => {
                return Err(format!("expected `{} BUTTON`", words[0]))
            }
            ["block", port] => Command::Block {
                port: owned(port),
                blocked: true,
            },
            ["free", port] => Command::Block {
                port: owned(port),
                blocked: false,
            },
            ["block" | "free", ..] => return Err(format!("expected `{} PORT`", words[0])),
            ["battery", v] => Command::Battery(
                volts(v).ok_or_else(|| format!("battery: {v:?} is not a voltage (0..=20 V)"))?,
            ),
            ["battery", ..] => return Err("expected `battery VOLTS`".into()),
            ["unplug", port] => Command::Unplug(owned(port)),
            ["unplug", ..] => return Err("expected `unplug PORT`".into()),
            ["plug", port, driver] => Command::Plug {
                port: owned(port),
                driver: owned(driver),
            },
            ["plug", ..] => return Err("expected `plug PORT DRIVER`".into()),
            ["tones"] => Command::Tones,
            ["screen"] => Command::Screen,
            ["ping"] => Command::Ping,
            ["tones" | "screen" | "ping", ..] => {
                return Err(format!("`{}` takes no arguments", words[0]))
            }
            _ => Command::Other(words.iter().map(|w| owned(w)).collect()),
        };
        Ok(Some(command))
    }
}

/// Cuts a byte stream into lines, whatever the writes' boundaries: each
/// complete line comes out as text, or as an error of its own (not UTF-8,
/// too long), never taking a neighbour with it. Holds at most
/// [`MAX_LINE`] bytes.
#[derive(Debug, Default)]
pub struct LineBuffer {
    partial: Vec<u8>,
    /// The current line went past [`MAX_LINE`]: dropped up to its newline.
    overlong: bool,
}

impl LineBuffer {
    /// An empty buffer.
    pub fn new() -> LineBuffer {
        LineBuffer::default()
    }

    /// Takes `bytes` and calls `line` with each line they complete
    /// (without the newline or a trailing `\r`).
    pub fn push(&mut self, bytes: &[u8], mut line: impl FnMut(Result<&str, String>)) {
        for piece in bytes.split_inclusive(|&b| b == b'\n') {
            let (body, complete) = match piece.strip_suffix(b"\n") {
                Some(body) => (body, true),
                None => (piece, false),
            };
            if !self.overlong {
                if self.partial.len() + body.len() > MAX_LINE {
                    self.overlong = true;
                    self.partial.clear();
                } else {
                    self.partial.extend_from_slice(body);
                }
            }
            if complete {
                self.finish(&mut line);
            }
        }
    }

    /// Ends the stream: a last line without a newline is served too.
    pub fn end(&mut self, mut line: impl FnMut(Result<&str, String>)) {
        if self.overlong || !self.partial.is_empty() {
            self.finish(&mut line);
        }
    }

    fn finish(&mut self, line: &mut impl FnMut(Result<&str, String>)) {
        if std::mem::take(&mut self.overlong) {
            line(Err(format!("line longer than {MAX_LINE} bytes")));
        } else {
            let body = self.partial.strip_suffix(b"\r").unwrap_or(&self.partial);
            match std::str::from_utf8(body) {
                Ok(text) => line(Ok(text)),
                Err(_) => line(Err("line is not UTF-8".into())),
            }
        }
        self.partial.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(chunks: &[&[u8]]) -> Vec<Result<String, String>> {
        let mut out = Vec::new();
        let mut buffer = LineBuffer::new();
        for chunk in chunks {
            buffer.push(chunk, |l| out.push(l.map(str::to_owned)));
        }
        buffer.end(|l| out.push(l.map(str::to_owned)));
        out
    }

    #[test]
    fn a_bad_line_takes_no_neighbour_with_it() {
        let out = lines(&[b"press enter\n\xff\xfe bad\nunplug outA\n"]);
        assert_eq!(out.len(), 3);
        assert_eq!(out[0], Ok("press enter".into()));
        assert!(out[1].is_err());
        assert_eq!(out[2], Ok("unplug outA".into()));
        // Split anywhere, \r\n, a last line without newline.
        let out = lines(&[b"pi", b"ng\r", b"\nto", b"nes"]);
        assert_eq!(out, [Ok("ping".into()), Ok("tones".into())]);
        let long = vec![b'x'; MAX_LINE + 10];
        let out = lines(&[&long, b"\nping\n"]);
        assert!(out[0].is_err());
        assert_eq!(out[1], Ok("ping".into()));
    }

    /// What the fuzz target checks, on 20 000 pseudo-random byte strings
    /// built from the protocol's words and hostile bytes.
    #[test]
    fn any_bytes_give_one_result_per_line_and_no_panic() {
        let words: [&[u8]; 12] = [
            b"set ",
            b"in1 ",
            b"value0 ",
            b"click ",
            b"enter ",
            b"9999999999999999999999 ",
            b"\n",
            b"\r\n",
            b"\xff\xfe",
            b"battery ",
            b"-1e309 ",
            b"plug ",
        ];
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..20_000 {
            let mut input = Vec::new();
            for _ in 0..(x % 24) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                input.extend_from_slice(words[(x % 12) as usize]);
            }
            let newlines = input.iter().filter(|&&b| b == b'\n').count();
            let mut count = 0;
            let mut buffer = LineBuffer::new();
            let split = input.len() / 2;
            let mut serve = |line: Result<&str, String>| {
                count += 1;
                if let Ok(text) = line {
                    let _ = Command::parse(text);
                }
            };
            buffer.push(&input[..split], &mut serve);
            buffer.push(&input[split..], &mut serve);
            buffer.end(&mut serve);
            assert!(count == newlines || count == newlines + 1);
        }
    }

    #[test]
    fn parses_every_command_and_refuses_malformed_ones() {
        let p = |l: &str| Command::parse(l);
        assert_eq!(
            p("set in1 value0 1"),
            Ok(Some(Command::Set {
                port: "in1".into(),
                attr: "value0".into(),
                value: "1".into()
            }))
        );
        assert_eq!(
            p("set outA  address  a b "),
            Ok(Some(Command::Set {
                port: "outA".into(),
                attr: "address".into(),
                value: "a b".into()
            }))
        );
        assert_eq!(
            p("click enter"),
            Ok(Some(Command::Click(Button::Enter, CLICK_MS)))
        );
        assert_eq!(
            p("click back 5"),
            Ok(Some(Command::Click(Button::Backspace, 5)))
        );
        assert_eq!(p("battery 7.1"), Ok(Some(Command::Battery(7_100_000))));
        assert_eq!(p("  # comment"), Ok(None));
        assert_eq!(p(""), Ok(None));
        assert_eq!(
            p("move 1 2 90"),
            Ok(Some(Command::Other(vec![
                "move".into(),
                "1".into(),
                "2".into(),
                "90".into()
            ])))
        );
        for bad in [
            "set in1",
            "press",
            "press nose",
            "click enter -1",
            "click enter 99999999999999999999",
            "battery -1",
            "battery NaN",
            "plug outA",
            "unplug",
            "tones now",
            "block",
        ] {
            assert!(p(bad).is_err(), "{bad}");
        }
    }
}
