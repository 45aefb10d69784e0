//! What a robot program needs, in one `use`:
//!
//! ```
//! use ev3sysfs::prelude::*;
//!
//! fn square(base: &DriveBase) -> Result<Pose> {
//!     for _ in 0..4 {
//!         base.straight(Millimetres(300))?;
//!         base.turn(Degrees(90))?;
//!     }
//!     base.state()
//! }
//!
//! // Large motors on outB and outC: on the brick, or simulated here (the
//! // simulated brick is the `ev3sysfs-sim` crate, a dev-dependency).
//! use ev3sysfs_sim::Playground;
//! let brick = Playground::brick_or_simulated("tacho-motor", |tree| {
//!     tree.add_tacho_motor(&Port::OutB, ev3sysfs_sim::TachoDriver::Ev3Large)?;
//!     tree.add_tacho_motor(&Port::OutC, ev3sysfs_sim::TachoDriver::Ev3Large)?;
//!     Ok(())
//! })?;
//! let left = TachoMotor::large(brick.root(), &Port::OutB)?;
//! let right = TachoMotor::large(brick.root(), &Port::OutC)?;
//! let base = DriveBase::new(left, right, Millimetres(56), Millimetres(112))?;
//! let end = square(&base)?;
//! assert!(end.distance_from_start_um() < 24_000); // within 2 % of the path
//! # Ok::<(), Error>(())
//! ```

pub use std::path::Path;
pub use std::time::Duration;

pub use crate::control::{every, Pid, Tick};
pub use crate::default_root;
pub use crate::drive::{DriveBase, Pose};
pub use crate::error::{Error, Result};
pub use crate::guard::StopGuard;
pub use crate::motor::{Finished, StopAction, TachoMotor, Tank, Then};
pub use crate::port::Port;
pub use crate::sensor::{ColorSensor, GyroSensor, InfraredSensor, TouchSensor, UltrasonicSensor};
pub use crate::units::{DegPerSec, Degrees, Millimetres, MmPerSec, Percent, Speed};
