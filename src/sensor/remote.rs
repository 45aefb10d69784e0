//! The EV3 IR remote and beacon as events: [`Remote`] follows the four
//! channels of an [`InfraredSensor`] in `IR-REMOTE` mode and reports each
//! change as a [`RemoteEvent`] (channel, buttons now and before), with
//! waits; [`RemoteButtons::tank`] turns the buttons into a joystick-style
//! tank drive (red: left motor, blue: right motor, as on the LEGO remote).

use std::time::Duration;

use super::{InfraredSensor, RemoteButtons};
use crate::clock::Instant;
use crate::error::Result;
use crate::units::Percent;

/// The IR beacon as the sensor sees it (`IR-SEEK`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Beacon {
    /// The channel, 1..=4.
    pub channel: u8,
    /// Direction, -25 (far left) ..= 25 (far right), 0 straight ahead.
    pub heading: i32,
    /// Distance, 0..=100 (about 2 m at 100).
    pub distance: i32,
}

impl InfraredSensor {
    /// The beacon on `channel` (1..=4), or `None` when none is seen (the
    /// mode is re-checked on the device, as every typed reading).
    ///
    /// # Errors
    /// [`crate::Error::OutOfRange`] for a bad channel; mode and read errors.
    pub fn beacon(&self, channel: u8) -> Result<Option<Beacon>> {
        Ok(self.seek(channel)?.map(|(heading, distance)| Beacon {
            channel,
            heading,
            distance,
        }))
    }

    /// Waits up to `timeout` until the beacon on `channel` is seen (reads
    /// every [`Remote::PERIOD`], sleeping in between).
    ///
    /// # Errors
    /// [`crate::Error::Timeout`]; as [`InfraredSensor::beacon`].
    pub fn wait_for_beacon(&self, channel: u8, timeout: Duration) -> Result<Beacon> {
        let start = Instant::now();
        loop {
            if let Some(b) = self.beacon(channel)? {
                return Ok(b);
            }
            let left = timeout.saturating_sub(start.elapsed());
            if left.is_zero() {
                return Err(crate::Error::Timeout {
                    what: format!(
                        "the IR beacon on channel {channel} ({})",
                        self.sensor().address()
                    ),
                    waited: start.elapsed(),
                });
            }
            std::thread::sleep(left.min(Remote::PERIOD));
        }
    }
}

/// A change on one remote channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RemoteEvent {
    /// The channel, 1..=4 (the red slider on the remote).
    pub channel: u8,
    /// The buttons held now.
    pub buttons: RemoteButtons,
    /// The buttons held before this change.
    pub before: RemoteButtons,
}

impl RemoteEvent {
    /// The buttons that went down with this change.
    pub fn pressed(&self) -> RemoteButtons {
        self.buttons.minus(self.before)
    }
    /// The buttons that came up with this change.
    pub fn released(&self) -> RemoteButtons {
        self.before.minus(self.buttons)
    }
}

impl RemoteButtons {
    /// Held here and not in `other`.
    pub fn minus(self, other: RemoteButtons) -> RemoteButtons {
        RemoteButtons {
            red_up: self.red_up && !other.red_up,
            red_down: self.red_down && !other.red_down,
            blue_up: self.blue_up && !other.blue_up,
            blue_down: self.blue_down && !other.blue_down,
            beacon: self.beacon && !other.beacon,
        }
    }

    /// `true` when no button is held.
    pub fn is_empty(self) -> bool {
        self == RemoteButtons::default()
    }

    /// Joystick-style tank drive: red up/down drive the left motor
    /// forward/backward at `speed`, blue up/down the right one; nothing
    /// held (or both of a pair) stops that side.
    pub fn tank(self, speed: Percent) -> (Percent, Percent) {
        let side = |up: bool, down: bool| match (up, down) {
            (true, false) => speed,
            (false, true) => Percent(speed.0.saturating_neg()),
            _ => Percent(0),
        };
        (
            side(self.red_up, self.red_down),
            side(self.blue_up, self.blue_down),
        )
    }
}

/// Follows the IR remote on all four channels (see the module docs).
#[derive(Debug)]
pub struct Remote<'a> {
    ir: &'a InfraredSensor,
    /// What was last reported, per channel.
    last: [RemoteButtons; 4],
    /// What the last read saw.
    seen: [RemoteButtons; 4],
}

impl<'a> Remote<'a> {
    /// How often [`Remote::wait`] reads the sensor (the IR sensor's
    /// values do not notify; it updates about every 10 ms).
    pub const PERIOD: Duration = Duration::from_millis(10);

    /// Switches `ir` to `IR-REMOTE` and takes the buttons held now as the
    /// starting point (no event for them).
    ///
    /// # Errors
    /// Mode and read errors.
    pub fn new(ir: &'a InfraredSensor) -> Result<Remote<'a>> {
        let mut remote = Remote {
            ir,
            last: [RemoteButtons::default(); 4],
            seen: [RemoteButtons::default(); 4],
        };
        remote.last = remote.read()?;
        remote.seen = remote.last;
        Ok(remote)
    }

    /// All four channels: makes sure of the mode (one `pread`, a write if
    /// another program switched it), then one `pread` of `bin_data`.
    fn read(&self) -> Result<[RemoteButtons; 4]> {
        let sensor = self.ir.sensor();
        sensor.set_mode("IR-REMOTE")?;
        let mut raw = [0i64; 4];
        let n = sensor.bin_values(&mut raw)?;
        let mut out = [RemoteButtons::default(); 4];
        for (slot, v) in out.iter_mut().zip(&raw[..n]) {
            *slot = RemoteButtons::from_value(i32::try_from(*v).unwrap_or(0));
        }
        Ok(out)
    }

    /// The buttons held on `channel` (1..=4) at the last look (events
    /// not yet taken included).
    pub fn buttons(&self, channel: u8) -> RemoteButtons {
        self.seen[usize::from(channel.clamp(1, 4) - 1)]
    }

    /// Looks once: the first channel (in order) that changed since the
    /// last look, or `None`. Changes on several channels in one look come
    /// out one per call (the later ones without reading again).
    ///
    /// # Errors
    /// Mode and read errors.
    pub fn poll(&mut self) -> Result<Option<RemoteEvent>> {
        if self.seen == self.last {
            self.seen = self.read()?;
        }
        let Some(i) = (0..4).find(|&i| self.seen[i] != self.last[i]) else {
            return Ok(None);
        };
        let event = RemoteEvent {
            channel: u8::try_from(i + 1).unwrap_or(4),
            buttons: self.seen[i],
            before: self.last[i],
        };
        self.last[i] = self.seen[i];
        Ok(Some(event))
    }

    /// Waits up to `timeout` for the next change on any channel (`None`
    /// when none came), reading every [`Remote::PERIOD`] and sleeping in
    /// between.
    ///
    /// # Errors
    /// Mode and read errors.
    pub fn wait(&mut self, timeout: Duration) -> Result<Option<RemoteEvent>> {
        let start = Instant::now();
        loop {
            if let Some(event) = self.poll()? {
                return Ok(Some(event));
            }
            let left = timeout.saturating_sub(start.elapsed());
            if left.is_zero() {
                return Ok(None);
            }
            std::thread::sleep(left.min(Self::PERIOD));
        }
    }

    /// Waits up to `timeout` for a change on `channel` only (changes on
    /// other channels are taken in and dropped).
    ///
    /// # Errors
    /// Mode and read errors.
    pub fn wait_on(&mut self, channel: u8, timeout: Duration) -> Result<Option<RemoteEvent>> {
        let start = Instant::now();
        loop {
            let left = timeout.saturating_sub(start.elapsed());
            match self.wait(left)? {
                Some(e) if e.channel == channel => return Ok(Some(e)),
                Some(_) => {}
                None => return Ok(None),
            }
        }
    }
}

/// `red up + blue down`, or `none`.
impl std::fmt::Display for RemoteButtons {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names = [
            (self.red_up, "red up"),
            (self.red_down, "red down"),
            (self.blue_up, "blue up"),
            (self.blue_down, "blue down"),
            (self.beacon, "beacon"),
        ];
        let mut any = false;
        for (_, name) in names.iter().filter(|(held, _)| *held) {
            if any {
                f.write_str(" + ")?;
            }
            f.write_str(name)?;
            any = true;
        }
        if !any {
            f.write_str("none")?;
        }
        Ok(())
    }
}
