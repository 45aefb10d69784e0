//! Linux input devices (evdev), which carry the brick's buttons and its
//! beeper: where they are, and the `struct input_event` record they speak.
//!
//! The buttons ([`crate::buttons`]) and the beeper ([`crate::sound`]) are not
//! sysfs attributes but character devices under `/dev/input`. Their directory
//! is a runtime value like the sysfs root: [`default_dev_root`] reads
//! `$EV3SYSFS_DEV` before falling back to `/dev`, so a program runs
//! unchanged against a simulated brick.
//!
//! An event is `struct input_event`: a `timeval`, then type, code and value.
//! Its size follows the C library's `timeval`: 16 bytes on the brick (32-bit
//! ARM), 24 bytes on x86_64. [`InputEvent`] encodes and decodes the native
//! layout, taken from `libc::input_event`.
//!
//! ```
//! use ev3sysfs::input::{InputEvent, EVENT_SIZE, EV_SND, SND_TONE};
//!
//! let tone = InputEvent::new(EV_SND, SND_TONE, 440);
//! let bytes = tone.to_bytes();
//! assert_eq!(bytes.len(), EVENT_SIZE);
//! assert_eq!(InputEvent::from_bytes(&bytes), Some(tone));
//! ```

use std::mem::{offset_of, size_of};
use std::path::PathBuf;
use std::time::Duration;

/// Where device nodes live on a brick.
pub const DEFAULT_DEV_ROOT: &str = "/dev";

/// Environment variable that overrides [`DEFAULT_DEV_ROOT`], e.g. to use the
/// devices of a simulated brick.
pub const DEV_ENV: &str = "EV3SYSFS_DEV";

/// The device directory to use: `$EV3SYSFS_DEV` when set and not empty,
/// otherwise [`DEFAULT_DEV_ROOT`].
pub fn default_dev_root() -> PathBuf {
    match std::env::var_os(DEV_ENV) {
        Some(root) if !root.is_empty() => PathBuf::from(root),
        _ => PathBuf::from(DEFAULT_DEV_ROOT),
    }
}

/// Size of one `struct input_event` on this target (16 bytes on 32-bit ARM,
/// 24 on x86_64).
pub const EVENT_SIZE: usize = size_of::<libc::input_event>();

/// Bytes of each of the two time fields (seconds, microseconds).
const TIME_WORD: usize = (EVENT_SIZE - 8) / 2;

// The layout this module encodes: two time words, then u16 type, u16 code,
// i32 value, with no padding. Checked against libc at compile time.
const _: () = assert!(EVENT_SIZE == 16 || EVENT_SIZE == 24);
const _: () = assert!(offset_of!(libc::input_event, type_) == 2 * TIME_WORD);
const _: () = assert!(offset_of!(libc::input_event, code) == 2 * TIME_WORD + 2);
const _: () = assert!(offset_of!(libc::input_event, value) == 2 * TIME_WORD + 4);

/// Event type: end of a group of events.
pub const EV_SYN: u16 = 0x00;
/// Event type: a key or button changed (value 1 press, 0 release, 2 repeat).
pub const EV_KEY: u16 = 0x01;
/// Event type: sound (beeper) output.
pub const EV_SND: u16 = 0x12;
/// `EV_SND` code: a bell; non-zero rings (1000 Hz on the EV3).
pub const SND_BELL: u16 = 0x01;
/// `EV_SND` code: a tone; the value is the frequency in Hz, 0 stops it.
pub const SND_TONE: u16 = 0x02;

/// One `struct input_event`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct InputEvent {
    /// When the kernel queued it (`CLOCK_REALTIME` unless changed); zero in
    /// events written to a device.
    pub time: Duration,
    /// Event type (`EV_KEY`, `EV_SND`, ...).
    pub kind: u16,
    /// Code within the type (a key code, `SND_TONE`, ...).
    pub code: u16,
    /// Value (key state, frequency, ...).
    pub value: i32,
}

impl InputEvent {
    /// An event with a zero time stamp, as written to a device.
    pub const fn new(kind: u16, code: u16, value: i32) -> InputEvent {
        InputEvent {
            time: Duration::ZERO,
            kind,
            code,
            value,
        }
    }

    /// The native `struct input_event` bytes.
    pub fn to_bytes(&self) -> [u8; EVENT_SIZE] {
        let mut out = [0u8; EVENT_SIZE];
        let secs = self.time.as_secs();
        let micros = u64::from(self.time.subsec_micros());
        if TIME_WORD == 8 {
            out[..8].copy_from_slice(&secs.to_ne_bytes());
            out[8..16].copy_from_slice(&micros.to_ne_bytes());
        } else {
            // 32-bit time words: the kernel's own wrap-around.
            out[..4].copy_from_slice(&(secs as u32).to_ne_bytes());
            out[4..8].copy_from_slice(&(micros as u32).to_ne_bytes());
        }
        let at = 2 * TIME_WORD;
        out[at..at + 2].copy_from_slice(&self.kind.to_ne_bytes());
        out[at + 2..at + 4].copy_from_slice(&self.code.to_ne_bytes());
        out[at + 4..at + 8].copy_from_slice(&self.value.to_ne_bytes());
        out
    }

    /// Decodes the first [`EVENT_SIZE`] bytes; `None` when there are fewer.
    pub fn from_bytes(bytes: &[u8]) -> Option<InputEvent> {
        let bytes: &[u8; EVENT_SIZE] = bytes.get(..EVENT_SIZE)?.try_into().ok()?;
        let word = |at: usize| -> u64 {
            if TIME_WORD == 8 {
                let mut b = [0u8; 8];
                b.copy_from_slice(&bytes[at..at + 8]);
                u64::from_ne_bytes(b)
            } else {
                let mut b = [0u8; 4];
                b.copy_from_slice(&bytes[at..at + 4]);
                u64::from(u32::from_ne_bytes(b))
            }
        };
        let (secs, micros) = (word(0), word(TIME_WORD));
        let at = 2 * TIME_WORD;
        let u16_at = |i: usize| u16::from_ne_bytes([bytes[i], bytes[i + 1]]);
        let value =
            i32::from_ne_bytes([bytes[at + 4], bytes[at + 5], bytes[at + 6], bytes[at + 7]]);
        Some(InputEvent {
            time: Duration::from_secs(secs) + Duration::from_micros(micros.min(999_999)),
            kind: u16_at(at),
            code: u16_at(at + 2),
            value,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_matches_libc() {
        let event = InputEvent {
            time: Duration::from_secs(7) + Duration::from_micros(250),
            kind: EV_KEY,
            code: 28,
            value: -3,
        };
        let bytes = event.to_bytes();
        assert_eq!(InputEvent::from_bytes(&bytes), Some(event));
        assert_eq!(
            u16::from_ne_bytes([bytes[2 * TIME_WORD], bytes[2 * TIME_WORD + 1]]),
            EV_KEY
        );
        assert_eq!(InputEvent::from_bytes(&bytes[..EVENT_SIZE - 1]), None);
    }
}
