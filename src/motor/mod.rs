//! Motors: tacho motors (EV3 large and medium, NXT), DC motors and servo
//! motors, plus the vocabulary they share.

mod dc;
mod group;
pub(crate) mod memory;
mod moves;
mod servo;
mod state;
mod tacho;
mod units;
mod wait;

pub use dc::{DcCommand, DcMotor};
pub use group::{TachoGroup, Tank};
pub use moves::{Finished, Then, STALL_WAIT_LIMIT};
pub use servo::ServoMotor;
pub use state::{Pid, State};
pub use tacho::TachoMotor;

use crate::error::{Error, Result};

/// Motor commands, as the `command` attribute takes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Command {
    /// Run at `speed_sp` until told otherwise.
    RunForever,
    /// Run to `position_sp` (absolute), then apply the stop action.
    RunToAbsPos,
    /// Run by `position_sp` counts from the last target, then stop.
    RunToRelPos,
    /// Run at `speed_sp` for `time_sp` ms, then stop.
    RunTimed,
    /// Run open-loop at `duty_cycle_sp`; later duty writes apply at once.
    RunDirect,
    /// Stop with the stop action.
    Stop,
    /// Stop (coast) and reset every setpoint, the position and the PIDs.
    Reset,
}

impl Command {
    /// All commands, in the kernel's order (bit `i` of a command set).
    pub const ALL: [Command; 7] = [
        Command::RunForever,
        Command::RunToAbsPos,
        Command::RunToRelPos,
        Command::RunTimed,
        Command::RunDirect,
        Command::Stop,
        Command::Reset,
    ];

    /// The text the kernel takes.
    pub fn as_str(self) -> &'static str {
        match self {
            Command::RunForever => "run-forever",
            Command::RunToAbsPos => "run-to-abs-pos",
            Command::RunToRelPos => "run-to-rel-pos",
            Command::RunTimed => "run-timed",
            Command::RunDirect => "run-direct",
            Command::Stop => "stop",
            Command::Reset => "reset",
        }
    }

    /// `true` for the commands that make the motor run.
    pub fn runs(self) -> bool {
        !matches!(self, Command::Stop | Command::Reset)
    }
}

/// What a motor does when it stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StopAction {
    /// Let the motor float.
    Coast,
    /// Short the terminals: stops faster, holds nothing.
    Brake,
    /// Actively hold the position (tacho motors only).
    Hold,
}

impl StopAction {
    /// All stop actions (bit `i` of a stop action set).
    pub const ALL: [StopAction; 3] = [StopAction::Coast, StopAction::Brake, StopAction::Hold];

    /// The text the kernel takes.
    pub fn as_str(self) -> &'static str {
        match self {
            StopAction::Coast => "coast",
            StopAction::Brake => "brake",
            StopAction::Hold => "hold",
        }
    }

    /// Parses the kernel's text.
    pub fn parse(text: &str) -> Option<StopAction> {
        StopAction::ALL.into_iter().find(|a| a.as_str() == text)
    }
}

/// Which way positive values turn the motor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Polarity {
    /// Positive values turn clockwise (as seen from the hub).
    Normal,
    /// Positive values turn counter-clockwise.
    Inversed,
}

impl Polarity {
    /// The text the kernel takes.
    pub fn as_str(self) -> &'static str {
        match self {
            Polarity::Normal => "normal",
            Polarity::Inversed => "inversed",
        }
    }

    /// Parses the kernel's text.
    pub fn parse(text: &str) -> Option<Polarity> {
        match text {
            "normal" => Some(Polarity::Normal),
            "inversed" => Some(Polarity::Inversed),
            _ => None,
        }
    }
}

/// A set of names from a fixed list (commands, stop actions), as a bit set
/// read once from a `commands`-style attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NameSet(u16);

impl NameSet {
    /// The set of `names` present in the space-separated `list`; unknown
    /// names are ignored, and so are names after the 16th (a set holds
    /// name numbers 0..16 only).
    pub fn parse(list: &str, names: &[&str]) -> NameSet {
        let mut bits = 0u16;
        for word in crate::value::words(list) {
            if let Some(i) = names.iter().position(|n| *n == word) {
                bits |= u32::try_from(i)
                    .ok()
                    .and_then(|i| 1u16.checked_shl(i))
                    .unwrap_or(0);
            }
        }
        NameSet(bits)
    }

    /// Whether name number `index` is in the set.
    pub fn contains(self, index: usize) -> bool {
        index < 16 && self.0 & (1 << index) != 0
    }

    fn describe(self, names: &[&str]) -> String {
        let present: Vec<&str> = names
            .iter()
            .enumerate()
            .filter(|(i, _)| self.contains(*i))
            .map(|(_, n)| *n)
            .collect();
        present.join(" ")
    }
}

pub(crate) fn command_names() -> [&'static str; 7] {
    Command::ALL.map(Command::as_str)
}

pub(crate) fn stop_action_names() -> [&'static str; 3] {
    StopAction::ALL.map(StopAction::as_str)
}

/// Checks that `command` is offered, without I/O.
pub(crate) fn check_command(set: NameSet, command: Command) -> Result<()> {
    let index = Command::ALL.iter().position(|c| *c == command).unwrap_or(0);
    if set.contains(index) {
        Ok(())
    } else {
        Err(Error::NotOffered {
            attribute: "command",
            value: command.as_str().to_owned(),
            offered: set.describe(&command_names()),
        })
    }
}

/// Checks that `action` is offered, without I/O.
pub(crate) fn check_stop_action(set: NameSet, action: StopAction) -> Result<()> {
    let index = StopAction::ALL
        .iter()
        .position(|a| *a == action)
        .unwrap_or(0);
    if set.contains(index) {
        Ok(())
    } else {
        Err(Error::NotOffered {
            attribute: "stop_action",
            value: action.as_str().to_owned(),
            offered: set.describe(&stop_action_names()),
        })
    }
}

/// Checks `value` against `min..=max`, without I/O. Inline, with the
/// error built out of line: it guards every setpoint write.
#[inline(always)]
pub(crate) fn check_range(attribute: &'static str, value: i64, min: i64, max: i64) -> Result<()> {
    if (min..=max).contains(&value) {
        Ok(())
    } else {
        Err(out_of_range(attribute, value, min, max))
    }
}

#[cold]
#[inline(never)]
fn out_of_range(attribute: &'static str, value: i64, min: i64, max: i64) -> Error {
    Error::OutOfRange {
        attribute,
        value,
        min,
        max,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_sets() {
        let set = NameSet::parse("run-forever stop reset bogus", &command_names());
        assert!(check_command(set, Command::Stop).is_ok());
        let err = check_command(set, Command::RunDirect).unwrap_err();
        assert!(err.to_string().contains("run-forever stop reset"), "{err}");
        let actions = NameSet::parse("coast brake", &stop_action_names());
        assert!(check_stop_action(actions, StopAction::Brake).is_ok());
        assert!(matches!(
            check_stop_action(actions, StopAction::Hold),
            Err(Error::NotOffered { .. })
        ));
    }

    #[test]
    fn name_sets_of_more_than_sixteen_names() {
        let names: Vec<String> = (0..40).map(|i| format!("n{i}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let set = NameSet::parse("n0 n15 n16 n17 n31 n32 n39", &names);
        assert!(set.contains(0) && set.contains(15));
        // Only 16 names fit: the others are not in the set, never a
        // wrapped-around bit.
        for index in [1, 14, 16, 17, 31, 32, 39, usize::MAX] {
            assert!(!set.contains(index), "{index}");
        }
        assert_eq!(set, NameSet::parse("n0 n15", &names));
    }

    #[test]
    fn ranges() {
        assert!(check_range("speed_sp", 1050, -1050, 1050).is_ok());
        assert!(matches!(
            check_range("speed_sp", 1051, -1050, 1050),
            Err(Error::OutOfRange { value: 1051, .. })
        ));
    }

    #[test]
    fn texts() {
        for c in Command::ALL {
            assert!(command_names().contains(&c.as_str()));
        }
        assert_eq!(StopAction::parse("hold"), Some(StopAction::Hold));
        assert_eq!(Polarity::parse("inversed"), Some(Polarity::Inversed));
        assert_eq!(Polarity::parse("reversed"), None);
        assert!(Command::RunDirect.runs() && !Command::Stop.runs());
    }
}
