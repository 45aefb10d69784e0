//! Waiting on many things at once: "the move finished OR the bumper was hit
//! OR a button OR 5 s", in one call that says which happened.
//!
//! ```no_run
//! use std::time::Duration;
//! use ev3sysfs::wait::{Happened, WaitAny};
//! # fn demo(arm: &ev3sysfs::motor::TachoMotor, bumper: &ev3sysfs::sensor::TouchSensor,
//! #         buttons: &ev3sysfs::buttons::Buttons) -> ev3sysfs::Result<()> {
//! let mut any = WaitAny::new();
//! let moved = any.motor_stopped(arm);
//! let hit = any.touch(bumper, true)?;
//! let enter = any.button_pressed(buttons, Some(ev3sysfs::buttons::Button::Enter));
//! match any.wait(Duration::from_secs(5))? {
//!     Happened::Ready(which) if which == moved => println!("arm in place"),
//!     Happened::Ready(which) if which == hit => println!("bumped"),
//!     Happened::Ready(which) if which == enter => println!("enter"),
//!     _ => println!("5 s passed"),
//! }
//! # Ok(()) }
//! ```
//!
//! # How it waits
//! Each wake-up is one `poll` on every source's descriptor at once
//! (`POLLPRI` on the motors' `state` and the sensors' value files, which
//! the kernel notifies, both wheels' for a drive base; `POLLIN` on the
//! buttons' input device), then one
//! `pread` per source (and the queued button events) to decide. Since
//! ev3dev notifies `state` at most every 50 ms and most sensor values not
//! at all, the `poll` timeout is the shortest re-check period of the
//! sources ([`WaitAny::MOTOR_PERIOD`], [`WaitAny::SENSOR_PERIOD`]; 10 ms
//! elsewhere than sysfs) and never more than the time left: never a busy
//! loop, never a sleep past the deadline. Building the set allocates; a
//! wait allocates once (the `poll` array), not per wake-up.

use std::os::fd::{AsFd, BorrowedFd};
use std::time::Duration;

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};

use crate::attr::{Attribute, Backing};
use crate::buttons::{Action, Button, Buttons};
use crate::clock::Instant;
use crate::drive::DriveBase;
use crate::error::{Error, Operation, Result};
use crate::motor::{State, TachoMotor};
use crate::sensor::{Sensor, TouchSensor};

/// Which source of a [`WaitAny`] (returned when it is added).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Source(usize);

impl Source {
    /// The order in which the source was added, from 0.
    pub fn index(self) -> usize {
        self.0
    }
}

/// What ended a [`WaitAny::wait`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Happened {
    /// This source's condition held (the first one, in the order added,
    /// when several hold at once).
    Ready(Source),
    /// The deadline passed first.
    Deadline,
}

/// A sensor value threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Threshold {
    /// The raw value is below this.
    Below(i32),
    /// The raw value is above this.
    Above(i32),
}

impl Threshold {
    /// Whether `value` is beyond the threshold.
    pub fn holds(self, value: i32) -> bool {
        match self {
            Threshold::Below(t) => value < t,
            Threshold::Above(t) => value > t,
        }
    }
}

enum Condition<'a> {
    Motor {
        motor: &'a TachoMotor,
        done: fn(State) -> bool,
    },
    Value {
        attribute: &'a Attribute,
        sensor: &'a Sensor,
        mode: Option<String>,
        threshold: Threshold,
    },
    Button {
        buttons: &'a Buttons,
        button: Option<Button>,
    },
    Drive {
        base: &'a DriveBase,
    },
}

impl Condition<'_> {
    /// The descriptors to poll: one, or a drive base's two wheels' `state`
    /// (either wheel may end the move or stall first).
    fn fds(&self) -> [Option<(BorrowedFd<'_>, PollFlags)>; 2] {
        let one = |fd, flags| [Some((fd, flags)), None];
        match self {
            Condition::Motor { motor, .. } => {
                one(motor.state_attribute().as_fd(), PollFlags::POLLPRI)
            }
            Condition::Value { attribute, .. } => one(attribute.as_fd(), PollFlags::POLLPRI),
            Condition::Button { buttons, .. } => one(buttons.as_fd(), PollFlags::POLLIN),
            Condition::Drive { base } => [base.left(), base.right()]
                .map(|m| Some((m.state_attribute().as_fd(), PollFlags::POLLPRI))),
        }
    }

    fn period(&self) -> Duration {
        let sysfs = match self {
            Condition::Motor { motor, .. } => motor.is_sysfs(),
            Condition::Drive { base } => base.left().is_sysfs(),
            Condition::Value { attribute, .. } => attribute.backing() == Backing::Sysfs,
            // Input devices wake the poll themselves.
            Condition::Button { .. } => return Duration::from_secs(60),
        };
        match (sysfs, self) {
            (false, _) => Duration::from_millis(10),
            (true, Condition::Motor { .. } | Condition::Drive { .. }) => WaitAny::MOTOR_PERIOD,
            (true, _) => WaitAny::SENSOR_PERIOD,
        }
    }

    fn ready(&self) -> Result<bool> {
        match self {
            Condition::Motor { motor, done } => Ok(done(motor.state()?)),
            // Updates the odometry; a stall stops both motors.
            Condition::Drive { base } => Ok(base.check()?.is_some()),
            Condition::Value {
                attribute,
                threshold,
                ..
            } => Ok(threshold.holds(attribute.read_int()?)),
            Condition::Button { buttons, button } => {
                // Every queued event counts: a click that is over before
                // this look is still seen.
                let mut seen = false;
                while let Some(event) = buttons.next_event(Some(Duration::ZERO))? {
                    if event.action == Action::Pressed && button.is_none_or(|b| b == event.button) {
                        seen = true;
                    }
                }
                Ok(seen)
            }
        }
    }

    /// Before the first look: a value threshold makes sure its sensor is in
    /// its mode (another program may have switched it).
    fn prepare(&self) -> Result<()> {
        match self {
            Condition::Value {
                sensor,
                mode: Some(mode),
                ..
            } => sensor.set_mode(mode),
            _ => Ok(()),
        }
    }
}

/// A set of things to wait for; [`WaitAny::wait`] returns the first that
/// happens. See the module docs for how it waits.
#[derive(Default)]
pub struct WaitAny<'a> {
    conditions: Vec<Condition<'a>>,
}

impl std::fmt::Debug for WaitAny<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WaitAny")
            .field("sources", &self.conditions.len())
            .finish()
    }
}

impl<'a> WaitAny<'a> {
    /// How often a motor's `state` is re-read on a brick when no
    /// notification came (the kernel checks it every 50 ms and may not
    /// notify).
    pub const MOTOR_PERIOD: Duration = Duration::from_millis(100);
    /// How often a sensor value is re-read on a brick (most sensor drivers
    /// do not notify; UART sensors update about every 10 ms).
    pub const SENSOR_PERIOD: Duration = Duration::from_millis(10);

    /// An empty set (a wait on it is a sleep until the deadline).
    pub fn new() -> WaitAny<'a> {
        WaitAny::default()
    }

    fn add(&mut self, condition: Condition<'a>) -> Source {
        self.conditions.push(condition);
        Source(self.conditions.len() - 1)
    }

    /// Ready when `done(state)` holds for `motor`.
    pub fn motor_state(&mut self, motor: &'a TachoMotor, done: fn(State) -> bool) -> Source {
        self.add(Condition::Motor { motor, done })
    }

    /// Ready when `motor` no longer runs: its move finished (run-to-pos,
    /// run-timed) or someone stopped it.
    pub fn motor_stopped(&mut self, motor: &'a TachoMotor) -> Source {
        self.motor_state(motor, |s| !s.running())
    }

    /// Ready when `motor` stalls (or no longer runs).
    pub fn motor_stalled(&mut self, motor: &'a TachoMotor) -> Source {
        self.motor_state(motor, |s| s.stalled() || !s.running())
    }

    /// Ready when the drive base's move is over (neither wheel runs; a
    /// stall stops both). Each look updates its odometry.
    pub fn drive_done(&mut self, base: &'a DriveBase) -> Source {
        self.add(Condition::Drive { base })
    }

    /// Ready while the touch sensor is `pressed` (or released).
    ///
    /// # Errors
    /// Opening `value0` fails.
    pub fn touch(&mut self, touch: &'a TouchSensor, pressed: bool) -> Result<Source> {
        let threshold = if pressed {
            Threshold::Above(0)
        } else {
            Threshold::Below(1)
        };
        self.sensor_value(touch.sensor(), None, 0, threshold)
    }

    /// Ready when raw `value<index>` of `sensor` crosses `threshold`. With
    /// a `mode`, the wait first makes sure the sensor is in it (reads
    /// `mode`, writes it if another program switched it); without, the
    /// values are the sensor's current mode's.
    ///
    /// # Errors
    /// [`Error::Unsupported`] for an index beyond `value7`; open errors.
    pub fn sensor_value(
        &mut self,
        sensor: &'a Sensor,
        mode: Option<&str>,
        index: usize,
        threshold: Threshold,
    ) -> Result<Source> {
        let attribute = sensor.value_attribute(index)?;
        Ok(self.add(Condition::Value {
            attribute,
            sensor,
            mode: mode.map(str::to_owned),
            threshold,
        }))
    }

    /// Ready when `button` (any button for `None`) is pressed after the
    /// wait started: every press queued on `buttons` counts, even a click
    /// that is over before the wait looks. Consumes the events queued on
    /// `buttons`.
    pub fn button_pressed(&mut self, buttons: &'a Buttons, button: Option<Button>) -> Source {
        self.add(Condition::Button { buttons, button })
    }

    /// How many sources the set has.
    pub fn len(&self) -> usize {
        self.conditions.len()
    }

    /// `true` when no source was added.
    pub fn is_empty(&self) -> bool {
        self.conditions.is_empty()
    }

    /// Waits until one source is ready or `timeout` has passed, and says
    /// which (the first ready in the order added). Button presses queued
    /// before the call are dropped (a press must come after the wait
    /// starts); every other condition is looked at once before the first
    /// `poll`, so one that already holds returns at once.
    ///
    /// # Errors
    /// The sources' read errors ([`Error::Disconnected`] after an unplug),
    /// a `poll` error.
    pub fn wait(&self, timeout: Duration) -> Result<Happened> {
        let start = Instant::now();
        for c in &self.conditions {
            c.prepare()?;
            if let Condition::Button { buttons, .. } = c {
                while buttons.next_event(Some(Duration::ZERO))?.is_some() {}
            }
        }
        let period = self
            .conditions
            .iter()
            .map(Condition::period)
            .min()
            .unwrap_or(Duration::from_secs(60));
        let mut fds: Vec<PollFd<'_>> = self
            .conditions
            .iter()
            .flat_map(Condition::fds)
            .flatten()
            .map(|(fd, flags)| PollFd::new(fd, flags))
            .collect();
        loop {
            for (i, c) in self.conditions.iter().enumerate() {
                if c.ready()? {
                    return Ok(Happened::Ready(Source(i)));
                }
            }
            let left = timeout.saturating_sub(start.elapsed());
            if left.is_zero() {
                return Ok(Happened::Deadline);
            }
            // Round up: a 0 ms poll would spin through the last millisecond.
            let slice = left.min(period);
            let millis = u16::try_from(slice.as_micros().div_ceil(1000)).unwrap_or(u16::MAX);
            match poll(&mut fds, PollTimeout::from(millis)) {
                Ok(_) | Err(nix::errno::Errno::EINTR) => {}
                Err(errno) => {
                    return Err(Error::Io {
                        path: std::path::PathBuf::from("(wait-any poll)"),
                        operation: Operation::Poll,
                        source: std::io::Error::from(errno),
                    })
                }
            }
        }
    }
}
