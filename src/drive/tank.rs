//! [`Tank`] in units: open both motors at once, run them at [`Speed`]s.

use std::path::Path;

use crate::error::Result;
use crate::motor::{TachoMotor, Tank};
use crate::units::Speed;

impl Tank {
    /// Opens the EV3 large motors on `left` and `right` (port names or
    /// [`Port`](crate::port::Port)s) as a tank.
    ///
    /// # Errors
    /// As [`TachoMotor::large`].
    pub fn large(root: impl AsRef<Path>, left: &str, right: &str) -> Result<Tank> {
        // Both motors from one scan of the class.
        let (left, right) = TachoMotor::large_pair(root.as_ref(), left, right)?;
        Ok(Tank::new(left, right))
    }

    /// Runs the left and right motors at their [`Speed`]s
    /// ([`Percent`](crate::units::Percent) of `max_speed`,
    /// [`DegPerSec`](crate::units::DegPerSec)) until stopped.
    ///
    /// # Errors
    /// [`crate::Error::OutOfRange`] beyond `max_speed`, before anything is
    /// written; write errors.
    pub fn on(&self, left: impl Speed, right: impl Speed) -> Result<()> {
        // Checked in the caller's unit: Percent(150) is reported as 150 %.
        let l = left.checked_counts_per_sec(cpr(&self.left), self.left.max_speed())?;
        let r = right.checked_counts_per_sec(cpr(&self.right), self.right.max_speed())?;
        self.drive(l, r)
    }
}

fn cpr(m: &TachoMotor) -> i32 {
    m.count_per_rot().unwrap_or(360)
}
