//! What a robot program needs, in one `use`:
//!
//! ```
//! use ev3sysfs::prelude::*;
//!
//! fn forward(base: &DriveBase) -> Result<Finished> {
//!     base.straight(Millimetres(300))
//! }
//! assert_eq!(Port::OutA.to_string(), "outA");
//! ```

pub use std::path::Path;
pub use std::time::Duration;

pub use crate::control::{every, Pid, Tick};
pub use crate::default_root;
pub use crate::drive::{DriveBase, Pose};
pub use crate::error::{Error, Result};
pub use crate::guard::StopGuard;
#[cfg(feature = "sim")]
pub use crate::mock::Playground;
pub use crate::motor::{Finished, StopAction, TachoMotor, Tank, Then};
pub use crate::port::Port;
pub use crate::sensor::{ColorSensor, GyroSensor, InfraredSensor, TouchSensor, UltrasonicSensor};
pub use crate::units::{DegPerSec, Degrees, Millimetres, MmPerSec, Percent, Speed};
