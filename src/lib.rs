//! # ev3sysfs
//!
//! Drive LEGO EV3 motors, sensors, LEDs and the battery through ev3dev's sysfs
//! attribute files with the lowest latency the kernel allows.
//!
//! A robot program: a tank drives forward until its bumper is pressed; the
//! stop guard stops the motors however the program ends. This example runs
//! anywhere (it is a doctest): its first lines build a simulated brick (a
//! FUSE file system from the `ev3sysfs-sim` crate, a dev-dependency here; it
//! needs `/dev/fuse` and root or
//! `fusermount3`) with two large motors, a touch sensor and a wall that the
//! bumper meets after 820 counts. On a brick, drop those lines and use
//! `let root = default_root();` (`$EV3SYSFS_ROOT` or `/sys/class`); the rest
//! is unchanged.
//!
//! ```
//! use ev3sysfs::prelude::*;
//! use ev3sysfs_sim::{MockTree, SensorDriver, Simulator, TachoDriver};
//! use std::sync::Arc;
//!
//! fn main() -> Result<()> {
//!     // The simulated brick (on a brick: `let root = default_root();`).
//!     let tree = Arc::new(MockTree::ev3()?);
//!     let left = tree.add_tacho_motor("outB", TachoDriver::Ev3Large)?;
//!     tree.add_tacho_motor("outC", TachoDriver::Ev3Large)?;
//!     let touch = tree.add_sensor("in1", SensorDriver::Ev3Touch)?;
//!     let mut sim = Simulator::new(Arc::clone(&tree))?;
//!     sim.script_sensor(&touch, 0, move |w| i64::from(w.position(&left) > 820));
//!     let _sim = sim.run_realtime(); // the motors move in real time
//!     let root = tree.root();
//!
//!     let tank = Tank::large(&root, "outB", "outC")?;
//!     let bumper = TouchSensor::find(&root, "in1")?;
//!     // Ctrl-C, a panic or an error: the motors stop.
//!     let _guard = StopGuard::protecting(&tank)?;
//!     tank.on(Percent(50), Percent(50))?;
//!     bumper.wait_for(true, Duration::from_secs(30))?;
//!     tank.stop()
//! }
//! ```
//!
//! [`prelude`] has what robot programs use; [`drive::DriveBase`] drives in
//! millimetres and degrees with odometry, [`control`] has a PID and a
//! fixed-rate loop, and [`units`] the units and one-call moves
//! ([`motor::TachoMotor::run_angle`] and co.).
//!
//! The I/O underneath: every attribute file is opened once (`O_SYNC |
//! O_CLOEXEC`, with the access mode the attribute allows) and kept open. After that a command is **one**
//! `pwrite(fd, bytes, 0)` and a read is **one** `pread(fd, buf, 0)` into a
//! stack buffer: no `lseek`, no reopen, no heap allocation. Methods take
//! `&self` and every type is `Send + Sync` without locks, since positional
//! I/O has no shared file cursor.
//!
//! The sysfs root is a runtime value: constructors take it, and
//! [`default_root`] reads `$EV3SYSFS_ROOT` (falling back to `/sys/class`), so
//! the same program runs on a brick and against a simulated brick on a laptop.
//!
//! ```no_run
//! use ev3sysfs::SysfsDevice;
//!
//! fn main() -> ev3sysfs::Result<()> {
//!     // /sys/class/tacho-motor/motor0, or $EV3SYSFS_ROOT/tacho-motor/motor0
//!     let motor = SysfsDevice::open_default("tacho-motor", "motor0")?;
//!     motor.preopen(&["speed_sp", "command", "position"])?;
//!     motor.write_int("speed_sp", 500)?; // one pwrite
//!     motor.write_str("command", "run-forever")?; // one pwrite
//!     let position = motor.read_int("position")?; // one pread
//!     println!("position: {position}");
//!     motor.write_str("command", "stop")?;
//!     Ok(())
//! }
//! ```
//!
//! Errors keep their cause (attribute path, value, errno): see [`Error`].
#![deny(missing_docs)]
#![deny(unsafe_code)]
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod attr;
pub mod buttons;
pub mod clock;
pub mod control;
pub mod datalog;
pub mod device;
pub mod discover;
pub mod drive;
pub mod error;
pub mod guard;
#[cfg(feature = "hal")]
pub mod hal;
pub mod input;
pub mod led;
pub mod motor;
pub mod port;
pub mod power;
pub mod prelude;
pub mod screen;
pub mod sensor;
pub mod sound;
mod sys;
#[cfg(feature = "async")]
pub mod tasks;
pub mod units;
pub mod value;
pub mod wait;

pub use attr::{Access, Attribute, Backing, MAX_VALUE_LEN};
pub use device::{default_root, validate_name, SysfsDevice, DEFAULT_ROOT, ROOT_ENV};
pub use discover::{
    address_matches, canonical_port, find, list, DeviceInfo, Query, INPUT_PORTS, OUTPUT_PORTS,
};
pub use error::{Error, Operation, Result};
pub use guard::StopGuard;

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
