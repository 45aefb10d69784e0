//! Waiting for a tacho motor's state: `poll(POLLPRI)` on `state` with
//! bounded re-checks, never a busy loop.

use crate::clock::Instant;
use std::time::Duration;

use super::tacho::TachoMotor;
use super::State;
use crate::error::{Error, Result};

impl TachoMotor {
    /// The error of a wait on `state` that ended after `waited`, with the
    /// state last seen.
    pub(crate) fn state_timeout(&self, state: State, waited: Duration) -> Error {
        Error::Timeout {
            what: format!(
                "{} on {} (state: [{state}])",
                self.driver_name(),
                self.address()
            ),
            waited,
        }
    }

    /// Waits until `done(state)` holds, for at most `timeout`, and returns
    /// that state. Sleeps in `poll(POLLPRI)` on `state` (the kernel checks
    /// it every 50 ms and may not notify), re-reading at least every 100 ms;
    /// elsewhere than on sysfs it re-reads every 10 ms. Never spins.
    ///
    /// # Errors
    /// [`Error::Timeout`]; read errors ([`Error::Disconnected`]).
    pub fn wait_until(
        &self,
        mut done: impl FnMut(State) -> bool,
        timeout: Duration,
    ) -> Result<State> {
        let start = Instant::now();
        let period = if self.is_sysfs() {
            Duration::from_millis(100)
        } else {
            Duration::from_millis(10)
        };
        loop {
            let state = self.state()?;
            if done(state) {
                return Ok(state);
            }
            let left = timeout.saturating_sub(start.elapsed());
            if left.is_zero() {
                return Err(self.state_timeout(state, start.elapsed()));
            }
            self.state_attribute().wait_for_change(left.min(period))?;
        }
    }

    /// Waits until the motor is no longer running (a run-to-pos or run-timed
    /// command finished, or a stop).
    ///
    /// # Errors
    /// As [`TachoMotor::wait_until`].
    pub fn wait_while_running(&self, timeout: Duration) -> Result<State> {
        self.wait_until(|s| !s.running(), timeout)
    }
}
