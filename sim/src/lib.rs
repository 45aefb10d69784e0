//! A simulated brick, so that robot code and this crate run and test on any
//! Linux host: a FUSE file system that looks and behaves like ev3dev's sysfs
//! classes. A crate of its own (`ev3sysfs-sim`, a member of ev3sysfs's
//! workspace), so that a robot program that depends on `ev3sysfs` compiles
//! none of the simulator's dependencies.
//!
//! [`MockTree::new`] mounts a fresh file system on a new, unpredictable
//! temporary directory and serves it from a thread of this process; dropping
//! the tree unmounts it (lazily when files are still open). Its root holds
//! class directories as `/sys/class` does (`tacho-motor/motor0/...`);
//! devices are numbered per class like the kernel does, never reused.
//!
//! Behind every attribute file is a device model's `show()`/`store()` (see
//! [`kobject`]), as behind sysfs files a driver's: a write is one store of
//! the whole value whatever the offset (bad values get `EINVAL` at the
//! writer's `pwrite`), a read at offset 0 renders afresh, opening in a
//! direction the attribute does not allow is `EACCES` even for root, an
//! unplugged device gives `ENODEV` on held files and wakes their pollers,
//! and `state`-like attributes notify pollers with `POLLPRI`. So any program
//! (python-ev3dev2, a shell, other languages' ev3dev libraries) can use the
//! tree, with `EV3SYSFS_ROOT=<root>` or bound over `/sys/class` (see the
//! `ev3-sim` binary).
//!
//! A [`world`] puts a robot in an arena behind the files: its motors move
//! it, its sensors see what it meets ([`Simulator::add_world`],
//! `ev3-sim --world bumper`, [`Playground::brick_or_world`]). The
//! [`view`] draws it: a picture and JSON lines of every run
//! ([`view::Trace`], `ev3-sim --trace run.svg`) and a live page in the
//! browser ([`view::LiveView`], `ev3-sim --view`).
//!
//! It needs `/dev/fuse` and either root (the tree is mounted with the mount
//! system call) or fuse3's `fusermount3`. Without them [`MockTree::new`]
//! fails with an error that says so, at once.
//!
//! ```no_run
//! # fn main() -> ev3sysfs::Result<()> {
//! use ev3sysfs_sim::{MockTree, TachoDriver};
//! use ev3sysfs::SysfsDevice;
//!
//! let tree = MockTree::new()?;
//! let mock = tree.add_tacho_motor("outA", TachoDriver::Ev3Large)?;
//! let motor = SysfsDevice::open(tree.root(), "tacho-motor", &mock.name())?;
//! motor.write_int("speed_sp", 500)?;
//! motor.write_str("command", "run-forever")?;
//! assert!(mock.read("state")?.contains("running"));
//! mock.set_int("position", 720)?; // inject what the motor would report
//! assert_eq!(motor.read_int("position")?, 720);
//! # Ok(()) }
//! ```

#![deny(missing_docs)]
#![deny(unsafe_code)]
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

// The library's modules under their own names, so that the simulator's code
// reads `crate::error::Error` as it did inside the library.
use ev3sysfs::{buttons, default_root, error, input, screen, sound, validate_name, value};

mod brick_io;
pub mod control;
mod device;
#[cfg(target_os = "linux")]
pub mod fb_ioctl;
mod fs;
mod group;
pub mod kobject;
pub(crate) mod models;
mod playground;
mod serve;
pub mod sim;
mod spec;
mod state;
#[cfg(target_os = "linux")]
mod sys;
pub mod tick_timing;
pub mod view;
pub mod world;

use std::collections::VecDeque;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use brick_io::{SimulatedIo, Tone};
pub use device::MockDevice;
pub use fs::MARKER_XATTR;
pub use playground::Playground;
pub use sim::{RealtimeSim, SimHandle, Simulator, World, TICK};
pub use spec::{SensorDriver, TachoDriver};
pub use tick_timing::TickLateness;
pub use world::{LiveWorld, WorldReport, WorldSpec};

use crate::error::{Error, Operation, Result};
use kobject::{Effects, Model};

/// What kind of device a [`MockDevice`] is, to re-create it on re-plug.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum MockKind {
    /// A tacho motor (`tacho-motor` class).
    TachoMotor(TachoDriver),
    /// A DC motor (`dc-motor` class, `rcx-motor`).
    DcMotor,
    /// A servo motor (`servo-motor` class, `ms-8ch-servo`).
    ServoMotor,
    /// A sensor (`lego-sensor` class).
    Sensor(SensorDriver),
    /// An LED (`leds` class).
    Led,
    /// The battery (`power_supply` class).
    Battery,
    /// A port (`lego-port` class).
    Port,
    /// The board information (`board-info` class).
    BoardInfo,
    /// A model given by the caller ([`MockTree::add_model`]); not re-plugged.
    Custom,
}

/// A simulated brick mounted as a FUSE file system; unmounted on drop.
pub struct MockTree {
    root: PathBuf,
    /// The mount point was made by [`MockTree::new`]: removed on drop.
    made_root: bool,
    brick: fs::SharedBrick,
    service: Mutex<serve::Service>,
}

impl std::fmt::Debug for MockTree {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockTree")
            .field("root", &self.root)
            .finish_non_exhaustive()
    }
}

/// What the simulated brick needs, for error messages.
const NEEDS: &str = "the simulated brick is a FUSE file system: it needs /dev/fuse, \
and root (it mounts with the mount system call) or fuse3's fusermount3";

impl MockTree {
    /// Mounts an empty simulated brick (no devices) on a new temporary
    /// directory and serves it from a thread of this process.
    ///
    /// # Errors
    /// [`Error::Io`] when the directory cannot be created or the file
    /// system cannot be mounted (no `/dev/fuse`, not permitted): the message
    /// says what is needed.
    pub fn new() -> Result<MockTree> {
        let template = std::env::temp_dir().join("ev3sysfs-brick-XXXXXX");
        let root = nix::unistd::mkdtemp(&template)
            .map_err(|e| Error::from_io(&template, Operation::Open, None, io::Error::from(e)))?;
        let tree = MockTree::mount(root.clone(), true);
        if tree.is_err() {
            let _ = std::fs::remove_dir(&root);
        }
        tree
    }

    /// Mounts an empty simulated brick on the existing directory `dir`
    /// (for `ev3-sim --mount`); the directory stays after drop.
    ///
    /// # Errors
    /// As [`MockTree::new`].
    pub fn mount_at(dir: impl Into<PathBuf>) -> Result<MockTree> {
        MockTree::mount(dir.into(), false)
    }

    fn mount(root: PathBuf, made_root: bool) -> Result<MockTree> {
        let brick = Arc::new(Mutex::new(state::Brick::new(models::create)));
        match serve::mount(Arc::clone(&brick), &root, made_root) {
            Ok(service) => Ok(MockTree {
                root,
                made_root,
                brick,
                service: Mutex::new(service),
            }),
            Err(e) => Err(Error::Io {
                source: io::Error::new(
                    e.kind(),
                    format!("cannot mount the simulated brick: {e} ({NEEDS})"),
                ),
                path: root,
                operation: Operation::Open,
            }),
        }
    }

    /// A brick with nothing plugged in: the eight lego-ports, the four
    /// brick LEDs, the battery (rechargeable pack) and `board-info`.
    ///
    /// # Errors
    /// As [`MockTree::new`].
    pub fn ev3() -> Result<MockTree> {
        MockTree::new()?.with_brick_devices()
    }

    /// As [`MockTree::ev3`], mounted on the existing directory `dir` (see
    /// [`MockTree::mount_at`]).
    ///
    /// # Errors
    /// As [`MockTree::new`].
    pub fn ev3_at(dir: impl Into<PathBuf>) -> Result<MockTree> {
        MockTree::mount_at(dir)?.with_brick_devices()
    }

    fn with_brick_devices(self) -> Result<MockTree> {
        let tree = self;
        for port in ["in1", "in2", "in3", "in4", "outA", "outB", "outC", "outD"] {
            tree.add_port(port)?;
        }
        for led in [
            "led0:red:brick-status",
            "led0:green:brick-status",
            "led1:red:brick-status",
            "led1:green:brick-status",
        ] {
            tree.add_led(led, 255)?;
        }
        tree.add_battery(true)?;
        tree.add_board_info()?;
        Ok(tree)
    }

    /// The class root (the mount point): pass it to constructors or as
    /// `EV3SYSFS_ROOT`.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn add(
        &self,
        model: Option<Box<dyn Model>>,
        name: Option<&str>,
        kind: MockKind,
        what: &str,
    ) -> Result<MockDevice> {
        let Some(model) = model else {
            return Err(Error::NotOffered {
                attribute: "driver_name",
                value: what.to_owned(),
                offered: String::new(),
            });
        };
        let class = model.class();
        let mut address = Vec::new();
        let _ = model.show("address", &mut address);
        let address = String::from_utf8_lossy(&address).trim_end().to_owned();
        let mut brick = fs::lock(&self.brick);
        let (id, name) = brick.add(model, name);
        if class != "lego-port" && !address.is_empty() {
            brick.tell_port(&address, Some(what));
        }
        drop(brick);
        Ok(MockDevice {
            dir: self.root.join(class).join(&name),
            class,
            name,
            address,
            kind,
            id,
            brick: Arc::downgrade(&self.brick),
        })
    }

    /// Plugs a tacho motor into output port `port` (`outA`..`outD`).
    ///
    /// # Errors
    /// [`Error::NotOffered`] when no model knows the driver.
    pub fn add_tacho_motor(&self, port: &str, driver: TachoDriver) -> Result<MockDevice> {
        let model = models::create(driver.driver_name(), &port_address(port));
        let kind = MockKind::TachoMotor(driver);
        self.add(model, None, kind, driver.driver_name())
    }

    /// Adds a DC motor on output port `port` (the port in `dc-motor` mode).
    ///
    /// # Errors
    /// [`Error::NotOffered`] when no model knows the driver.
    pub fn add_dc_motor(&self, port: &str) -> Result<MockDevice> {
        let model = models::create("rcx-motor", &port_address(port));
        self.add(model, None, MockKind::DcMotor, "rcx-motor")
    }

    /// Adds servo `channel` (1..8) of a mindsensors 8-channel servo
    /// controller on input port `port`.
    ///
    /// # Errors
    /// [`Error::NotOffered`] when no model knows the driver.
    pub fn add_servo_motor(&self, port: &str, channel: u8) -> Result<MockDevice> {
        let address = format!("{}:i2c88:sv{channel}", port_address(port));
        let model = models::create("ms-8ch-servo", &address);
        self.add(model, None, MockKind::ServoMotor, "ms-8ch-servo")
    }

    /// Plugs a sensor into input port `port` (`in1`..`in4`), in mode 0.
    ///
    /// # Errors
    /// [`Error::NotOffered`] when no model knows the driver.
    pub fn add_sensor(&self, port: &str, driver: SensorDriver) -> Result<MockDevice> {
        let address = driver.address(&port_address(port));
        let model = models::create(driver.driver_name(), &address);
        self.add(model, None, MockKind::Sensor(driver), driver.driver_name())
    }

    /// Adds an LED called `name` (e.g. `led0:green:brick-status`).
    ///
    /// # Errors
    /// [`Error::InvalidName`].
    pub fn add_led(&self, name: &str, max_brightness: u32) -> Result<MockDevice> {
        crate::validate_name(name)?;
        let model = models::create_led(name, max_brightness);
        self.add(Some(model), Some(name), MockKind::Led, "led")
    }

    /// Adds the EV3 battery `lego-ev3-battery`: a rechargeable pack
    /// (`Li-ion`) or AA cells (`Unknown`).
    ///
    /// # Errors
    /// None today; fallible like the other additions.
    pub fn add_battery(&self, rechargeable: bool) -> Result<MockDevice> {
        let model = models::create_battery(rechargeable);
        let name = Some("lego-ev3-battery");
        self.add(Some(model), name, MockKind::Battery, "battery")
    }

    /// Adds the `board-info` class device `board0`.
    ///
    /// # Errors
    /// None today; fallible like the other additions.
    pub fn add_board_info(&self) -> Result<MockDevice> {
        let model = models::create_board_info();
        self.add(Some(model), None, MockKind::BoardInfo, "board-info")
    }

    /// Adds the lego-port of EV3 port `port` (`in1`..`in4`, `outA`..`outD`).
    ///
    /// # Errors
    /// None today; fallible like the other additions.
    pub fn add_port(&self, port: &str) -> Result<MockDevice> {
        let model = models::create_port(&port_address(port));
        self.add(Some(model), None, MockKind::Port, "lego-port")
    }

    /// Registers a device model of the caller's (see [`kobject::Model`]):
    /// named `name`, or numbered in its class like the kernel does.
    ///
    /// # Errors
    /// [`Error::InvalidName`] for a name that is not one plain file name.
    pub fn add_model(&self, model: Box<dyn Model>, name: Option<&str>) -> Result<MockDevice> {
        if let Some(name) = name {
            crate::validate_name(name)?;
        }
        crate::validate_name(model.class())?;
        self.add(Some(model), name, MockKind::Custom, "model")
    }

    /// Plugs the device of kernel driver `driver` (`lego-ev3-l-motor`,
    /// `lego-ev3-color`, `rcx-motor`, ...) into port `port` (`outA`,
    /// `in1`, ...).
    ///
    /// # Errors
    /// [`Error::NotOffered`] for a driver no model knows.
    pub fn plug(&self, port: &str, driver: &str) -> Result<MockDevice> {
        if let Some(tacho) = TachoDriver::from_driver_name(driver) {
            return self.add_tacho_motor(port, tacho);
        }
        if let Some(sensor) = SensorDriver::from_driver_name(driver) {
            return self.add_sensor(port, sensor);
        }
        match driver {
            "rcx-motor" => self.add_dc_motor(port),
            _ => Err(Error::NotOffered {
                attribute: "driver_name",
                value: driver.to_owned(),
                offered: "a tacho motor, sensor or rcx-motor driver".to_owned(),
            }),
        }
    }

    /// Unplugs `device`: its directory goes away; files that are still open
    /// give `ENODEV` ([`Error::Disconnected`]) and their pollers wake with
    /// `POLLPRI | POLLERR`, as on a brick.
    ///
    /// # Errors
    /// [`Error::Disconnected`] when it was not plugged in.
    pub fn unplug(&self, device: &MockDevice) -> Result<()> {
        let mut brick = fs::lock(&self.brick);
        if !brick.contains(device.id) {
            return Err(device.gone(Operation::Write));
        }
        let pollers = brick.remove(device.id);
        if device.class != "lego-port" && !device.address.is_empty() {
            brick.tell_port(&device.address, None);
        }
        drop(brick);
        fs::wake(pollers);
        Ok(())
    }

    /// Plugs `device` back in (after [`MockTree::unplug`]): the same kind on
    /// the same port, with fresh contents and, like the kernel, a new
    /// number.
    ///
    /// # Errors
    /// As the `add_*` function of its kind.
    pub fn replug(&self, device: &MockDevice) -> Result<MockDevice> {
        let port = device
            .address
            .split(':')
            .nth(1)
            .unwrap_or(&device.address)
            .to_owned();
        match &device.kind {
            MockKind::TachoMotor(driver) => self.add_tacho_motor(&port, *driver),
            MockKind::DcMotor => self.add_dc_motor(&port),
            MockKind::Sensor(driver) => self.add_sensor(&port, *driver),
            MockKind::Port => self.add_port(&port),
            MockKind::ServoMotor => {
                let channel = device
                    .address
                    .rsplit(":sv")
                    .next()
                    .and_then(|c| c.parse().ok())
                    .unwrap_or(1);
                self.add_servo_motor(&port, channel)
            }
            MockKind::Led => self.add_led(&device.name, 255),
            MockKind::Battery => self.add_battery(true),
            MockKind::BoardInfo => self.add_board_info(),
            MockKind::Custom => Err(Error::NotOffered {
                attribute: "replug",
                value: device.name.clone(),
                offered: "devices made by the tree's own add functions".to_owned(),
            }),
        }
    }

    /// Runs `f` on `device`'s model (to downcast it, inspect or change it
    /// beyond what [`MockDevice::set`] offers), then carries out the
    /// effects `f` recorded (notifications, changed attributes, port
    /// requests).
    ///
    /// # Errors
    /// [`Error::Disconnected`] when the device is unplugged.
    pub fn with_model<R>(
        &self,
        device: &MockDevice,
        f: impl FnOnce(&mut dyn Model, &mut Effects) -> R,
    ) -> Result<R> {
        device.with_model(f)
    }

    /// Advances every model's simulated time by `dt` (motors move, timers
    /// fire) and carries out what they asked for: pollers are woken,
    /// changed attribute sets appear, lego-ports re-register their devices
    /// (with new numbers).
    pub fn tick(&self, dt: Duration) {
        let pollers = fs::lock(&self.brick).tick(dt);
        fs::wake(pollers);
    }

    /// When a client last wrote one of the brick's attributes (for the
    /// real-time simulation: a write's effects never start before it).
    pub(crate) fn last_write(&self) -> Option<std::time::Instant> {
        fs::lock(&self.brick).last_write()
    }

    /// Whether every device model is sound: the first model that panicked
    /// (in `show`, `store`, `tick` or `inject`) is an error from then on.
    /// A failed model answers `EIO` where it panicked and no longer ticks;
    /// the others go on.
    ///
    /// # Errors
    /// [`Error::Io`] naming the device, the callback and the panic.
    pub fn check_models(&self) -> Result<()> {
        let brick = fs::lock(&self.brick);
        let first = brick.failures().next().map(str::to_owned);
        drop(brick);
        match first {
            None => Ok(()),
            Some(what) => Err(device::model_failed(
                &self.root,
                Operation::Read,
                Some(&what),
            )),
        }
    }

    /// The stores the brick's file system received since the last call,
    /// oldest first (at most the last 4096, and the first 4096 bytes of
    /// each, 1 MiB in all): the attribute's path relative
    /// to the root (`tacho-motor/motor0/command`) and the written bytes.
    /// Injections ([`MockDevice::set`]) are not stores.
    pub fn take_stores(&self) -> Vec<(String, Vec<u8>)> {
        let mut brick = fs::lock(&self.brick);
        let stores: VecDeque<(String, Vec<u8>)> = brick.take_stores();
        stores.into()
    }

    /// How many polls of its attributes the brick has answered: FUSE asks
    /// once a `poll(2)` (or `select`, `epoll_wait`) and again each time the
    /// poll is woken. A quiet attribute is asked once a `poll(2)`; a count
    /// that grows while a program waits shows a busy poll loop.
    pub fn polls_answered(&self) -> u64 {
        fs::lock(&self.brick).polls_answered()
    }
}

impl Drop for MockTree {
    fn drop(&mut self) {
        serve::wait_for_releases(|| fs::lock(&self.brick).open_handles());
        // Unmounted at once when nothing is open, else lazily; the serving
        // thread ends with the connection.
        self.service
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .end(&self.root);
        if self.made_root {
            match std::fs::remove_dir(&self.root) {
                // (Removed already when the brick was ended by a signal.)
                Err(e) if e.kind() != io::ErrorKind::NotFound => {
                    log::warn!("could not remove {}: {e}", self.root.display());
                }
                _ => {}
            }
        }
    }
}

/// `outA` -> `ev3-ports:outA`; a full address is kept as it is.
pub fn port_address(port: &str) -> String {
    if port.contains(':') {
        port.to_owned()
    } else {
        format!("ev3-ports:{port}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_addresses() {
        assert_eq!(port_address("outA"), "ev3-ports:outA");
        assert_eq!(port_address("ev3-ports:in2"), "ev3-ports:in2");
    }
}
