//! What a tacho motor reports: its `state` flags, and PID constants.

/// The `state` flags of a tacho motor, as a bit set (no allocation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct State(u32);

impl State {
    /// The flag names, in the kernel's order (bit `i` is `NAMES[i]`).
    pub const NAMES: [&'static str; 5] = ["running", "ramping", "holding", "overloaded", "stalled"];

    /// Builds a state from bits (bit `i` = [`State::NAMES`]`[i]`).
    pub fn from_bits(bits: u32) -> State {
        State(bits & 0b11111)
    }
    /// The raw bits.
    pub fn bits(self) -> u32 {
        self.0
    }
    /// A run command is active. Cleared by any stop: a held motor shows
    /// only `holding`.
    pub fn running(self) -> bool {
        self.0 & 1 != 0
    }
    /// Ramping up or down, or decelerating toward a position target.
    pub fn ramping(self) -> bool {
        self.0 & 2 != 0
    }
    /// The hold PID keeps the position (after a stop with `hold`).
    pub fn holding(self) -> bool {
        self.0 & 4 != 0
    }
    /// The speed or hold PID is saturated (more than 100 % duty needed).
    pub fn overloaded(self) -> bool {
        self.0 & 8 != 0
    }
    /// Running, but the speed has been 0 for more than 100 ms.
    pub fn stalled(self) -> bool {
        self.0 & 16 != 0
    }
}

impl std::fmt::Display for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut first = true;
        for (i, name) in State::NAMES.iter().enumerate() {
            if self.0 & (1 << i) != 0 {
                if !first {
                    f.write_str(" ")?;
                }
                f.write_str(name)?;
                first = false;
            }
        }
        Ok(())
    }
}

/// PID constants (`speed_pid`, `hold_pid`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pid {
    /// Proportional gain.
    pub kp: i32,
    /// Integral gain.
    pub ki: i32,
    /// Derivative gain.
    pub kd: i32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_display() {
        let s = State::from_bits(0b10101);
        assert!(s.running() && s.holding() && s.stalled() && !s.ramping());
        assert_eq!(s.to_string(), "running holding stalled");
        assert_eq!(State::default().to_string(), "");
    }
}
