//! A mock ev3dev sysfs tree, so that robot code and this crate run and test on
//! any Linux host.
//!
//! [`MockTree`] creates, in a temporary directory (on tmpfs, `/dev/shm`, when
//! there is one), the class directories of a brick with the layout, file
//! names, permission bits and initial contents of ev3dev-stretch: tacho, DC
//! and servo motors by driver, each sensor type with its modes, the four
//! brick LEDs, the battery and the eight lego-ports. Devices are numbered
//! like the kernel does: per class, counting up, never reused.
//!
//! Code under test finds the tree through its root:
//! `SysfsDevice::open(tree.root(), ...)`, or `EV3SYSFS_ROOT=<root>` for any
//! program (non-Rust ev3dev libraries too, with a bind mount of the root over
//! `/sys/class`).
//!
//! The crate's I/O core recognises the mock files (they are not sysfs) and
//! emulates sysfs stores on them: a write replaces the whole value, and a
//! device removed with [`MockTree::unplug`] reports
//! [`Error::Disconnected`] on handles that are
//! still open, as a real unplug does.
//!
//! ```
//! # fn main() -> ev3sysfs::Result<()> {
//! use ev3sysfs::mock::{MockTree, TachoDriver};
//! use ev3sysfs::SysfsDevice;
//!
//! let tree = MockTree::new()?;
//! let mock = tree.add_tacho_motor("outA", TachoDriver::Ev3Large)?;
//! let motor = SysfsDevice::open(tree.root(), "tacho-motor", &mock.name())?;
//! motor.write_int("speed_sp", 500)?;
//! motor.write_str("command", "run-forever")?;
//! assert_eq!(mock.read("command")?, "run-forever");
//! mock.set_int("position", 720)?; // inject what the motor would report
//! assert_eq!(motor.read_int("position")?, 720);
//! # Ok(()) }
//! ```

mod device;
pub mod kobject;
mod model;
pub(crate) mod models;
mod playground;
pub mod sim;
mod spec;

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

pub use device::MockDevice;
pub use playground::Playground;
pub use sim::{RealtimeSim, Simulator, World, TICK};
pub use spec::{SensorDriver, TachoDriver};

use crate::attr::{locked, store_whole, JOURNAL_NAME, MAX_VALUE_LEN};
use crate::error::{Error, Operation, Result};
use spec::AttrFile;

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
}

/// Per-class device counters: numbers grow and are never reused.
#[derive(Debug, Default)]
struct Counters {
    motor: AtomicU32,
    dc: AtomicU32,
    servo: AtomicU32,
    sensor: AtomicU32,
    port: AtomicU32,
}

/// A temporary ev3dev-like sysfs tree. Deleted on drop unless
/// [`MockTree::keep`] is called.
#[derive(Debug)]
pub struct MockTree {
    base: PathBuf,
    root: PathBuf,
    delete_on_drop: bool,
    counters: Counters,
    /// Serialises re-plugs and additions that must pick a fresh number.
    add_lock: Mutex<()>,
}

impl MockTree {
    /// Creates an empty tree (no devices) in a new temporary directory, on
    /// tmpfs (`/dev/shm`) when available.
    ///
    /// # Errors
    /// [`Error::Io`] when the directory cannot be created.
    pub fn new() -> Result<MockTree> {
        static SEQ: AtomicU32 = AtomicU32::new(0);
        let shm = Path::new("/dev/shm");
        let parent = if shm.is_dir() {
            shm.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let base = parent.join(format!(
            "ev3sysfs-mock-{}-{}-{nanos}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        MockTree::create(base, true)
    }

    /// Creates an empty tree in `dir` (created if missing), kept after drop.
    ///
    /// # Errors
    /// [`Error::Io`] when the directory cannot be created.
    pub fn in_dir(dir: impl Into<PathBuf>) -> Result<MockTree> {
        MockTree::create(dir.into(), false)
    }

    fn create(base: PathBuf, delete_on_drop: bool) -> Result<MockTree> {
        let root = base.join("class");
        fs::create_dir_all(&root).map_err(|e| io_error(&root, Operation::Open, e))?;
        Ok(MockTree {
            base,
            root,
            delete_on_drop,
            counters: Counters::default(),
            add_lock: Mutex::new(()),
        })
    }

    /// A tree set up like a brick with nothing plugged in: the eight
    /// lego-ports, the four brick LEDs and the battery (rechargeable pack).
    ///
    /// # Errors
    /// As [`MockTree::new`].
    pub fn ev3() -> Result<MockTree> {
        let tree = MockTree::new()?;
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
        Ok(tree)
    }

    /// The class root (`.../class`): pass it to constructors or as
    /// `EV3SYSFS_ROOT`.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Keeps the tree on disk after drop (for a look at what was written)
    /// and returns its class root.
    pub fn keep(mut self) -> PathBuf {
        self.delete_on_drop = false;
        self.root.clone()
    }

    /// Starts a write journal at the root: from now on, every store through
    /// this crate's I/O core on attributes opened afterwards is also
    /// recorded, in order (see [`MockTree::take_journal`]). The motor
    /// simulator uses it to see every command, even the same one twice.
    ///
    /// # Errors
    /// [`Error::Io`] when the file cannot be created.
    pub fn enable_journal(&self) -> Result<()> {
        let path = self.root.join(JOURNAL_NAME);
        OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map(drop)
            .map_err(|e| io_error(&path, Operation::Open, e))
    }

    /// Takes the writes recorded since the last call, oldest first: (path
    /// relative to the root, e.g. `tacho-motor/motor0/command`; value).
    ///
    /// # Errors
    /// [`Error::Io`] when there is no journal; [`Error::Parse`] on a damaged
    /// journal.
    pub fn take_journal(&self) -> Result<Vec<(String, Vec<u8>)>> {
        let path = self.root.join(JOURNAL_NAME);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| io_error(&path, Operation::Open, e))?;
        let bytes = locked(&file, true, || {
            let mut bytes = Vec::new();
            io::Read::read_to_end(&mut &file, &mut bytes)?;
            file.set_len(0)?;
            Ok(bytes)
        })
        .map_err(|e| io_error(&path, Operation::Read, e))?;
        parse_journal(&bytes).ok_or_else(|| Error::parse(&path, &bytes, "journal records"))
    }

    fn next_name(&self, class: &str) -> String {
        let (prefix, counter) = match class {
            "tacho-motor" => ("motor", &self.counters.motor),
            "dc-motor" => ("motor", &self.counters.dc),
            "servo-motor" => ("motor", &self.counters.servo),
            "lego-sensor" => ("sensor", &self.counters.sensor),
            _ => ("port", &self.counters.port),
        };
        format!("{prefix}{}", counter.fetch_add(1, Ordering::Relaxed))
    }

    fn add(
        &self,
        class: &'static str,
        name: Option<&str>,
        address: String,
        kind: MockKind,
        files: Vec<AttrFile>,
    ) -> Result<MockDevice> {
        let _guard = self
            .add_lock
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let name = name.map_or_else(|| self.next_name(class), str::to_owned);
        let dir = self.root.join(class).join(&name);
        fs::create_dir_all(&dir).map_err(|e| io_error(&dir, Operation::Open, e))?;
        write_files(&dir, &files)?;
        Ok(MockDevice {
            dir,
            class,
            name,
            address,
            kind,
        })
    }

    /// Plugs a tacho motor into output port `port` (`outA`..`outD`).
    ///
    /// # Errors
    /// [`Error::Io`] when the files cannot be written.
    pub fn add_tacho_motor(&self, port: &str, driver: TachoDriver) -> Result<MockDevice> {
        let address = port_address(port);
        let files = spec::tacho_motor(driver, &address);
        let kind = MockKind::TachoMotor(driver);
        self.add("tacho-motor", None, address, kind, files)
    }

    /// Adds a DC motor on output port `port` (the port in `dc-motor` mode).
    ///
    /// # Errors
    /// [`Error::Io`] when the files cannot be written.
    pub fn add_dc_motor(&self, port: &str) -> Result<MockDevice> {
        let address = port_address(port);
        let files = spec::dc_motor(&address);
        self.add("dc-motor", None, address, MockKind::DcMotor, files)
    }

    /// Adds servo `channel` (1..8) of a mindsensors 8-channel servo
    /// controller on input port `port`.
    ///
    /// # Errors
    /// [`Error::Io`] when the files cannot be written.
    pub fn add_servo_motor(&self, port: &str, channel: u8) -> Result<MockDevice> {
        let address = format!("{}:i2c88:sv{channel}", port_address(port));
        let files = spec::servo_motor(&address);
        self.add("servo-motor", None, address, MockKind::ServoMotor, files)
    }

    /// Plugs a sensor into input port `port` (`in1`..`in4`), in mode 0.
    ///
    /// # Errors
    /// [`Error::Io`] when the files cannot be written.
    pub fn add_sensor(&self, port: &str, driver: SensorDriver) -> Result<MockDevice> {
        let address = driver.address(&port_address(port));
        let files = spec::sensor(driver, &address);
        self.add(
            "lego-sensor",
            None,
            address,
            MockKind::Sensor(driver),
            files,
        )
    }

    /// Adds an LED called `name` (e.g. `led0:green:brick-status`).
    ///
    /// # Errors
    /// [`Error::InvalidName`]; [`Error::Io`] when the files cannot be written.
    pub fn add_led(&self, name: &str, max_brightness: u32) -> Result<MockDevice> {
        crate::validate_name(name)?;
        self.add(
            "leds",
            Some(name),
            String::new(),
            MockKind::Led,
            spec::led(max_brightness),
        )
    }

    /// Adds the EV3 battery `lego-ev3-battery`: a rechargeable pack
    /// (`Li-ion`) or AA cells (`Unknown`).
    ///
    /// # Errors
    /// [`Error::Io`] when the files cannot be written.
    pub fn add_battery(&self, rechargeable: bool) -> Result<MockDevice> {
        let files = spec::battery(rechargeable);
        let name = Some("lego-ev3-battery");
        self.add(
            "power_supply",
            name,
            String::new(),
            MockKind::Battery,
            files,
        )
    }

    /// Adds the lego-port of EV3 port `port` (`in1`..`in4`, `outA`..`outD`).
    ///
    /// # Errors
    /// [`Error::Io`] when the files cannot be written.
    pub fn add_port(&self, port: &str) -> Result<MockDevice> {
        let address = port_address(port);
        let files = spec::lego_port(&address, address.contains(":in"));
        self.add("lego-port", None, address, MockKind::Port, files)
    }

    /// Unplugs `device`: its directory goes away. Handles that are still
    /// open report [`Error::Disconnected`], as on a brick.
    ///
    /// # Errors
    /// [`Error::Io`] when the directory cannot be removed.
    pub fn unplug(&self, device: &MockDevice) -> Result<()> {
        fs::remove_dir_all(&device.dir).map_err(|e| io_error(&device.dir, Operation::Write, e))
    }

    /// Plugs `device` back in (after [`MockTree::unplug`]): the same kind on
    /// the same port, with fresh contents and, like the kernel, a new
    /// number.
    ///
    /// # Errors
    /// [`Error::Io`] when the files cannot be written.
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
            MockKind::Led => {
                let files = spec::led(255);
                let name = Some(device.name.as_str());
                self.add("leds", name, String::new(), MockKind::Led, files)
            }
            MockKind::Battery => self.add_battery(true),
        }
    }
}

impl Drop for MockTree {
    fn drop(&mut self) {
        if self.delete_on_drop {
            if let Err(e) = fs::remove_dir_all(&self.base) {
                log::warn!("could not delete mock tree {}: {e}", self.base.display());
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

pub(super) fn io_error(path: &Path, operation: Operation, e: io::Error) -> Error {
    Error::Io {
        path: path.to_path_buf(),
        operation,
        source: e,
    }
}

pub(super) fn write_files(dir: &Path, files: &[AttrFile]) -> Result<()> {
    for (name, mode, contents) in files {
        let path = dir.join(name.as_ref());
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(|e| io_error(parent, Operation::Write, e))?;
        }
        // Write while still writable, then set the brick's mode.
        if path.exists() {
            store(&path, contents)?;
        } else {
            fs::write(&path, contents).map_err(|e| io_error(&path, Operation::Write, e))?;
        }
        fs::set_permissions(&path, fs::Permissions::from_mode(*mode))
            .map_err(|e| io_error(&path, Operation::Write, e))?;
    }
    Ok(())
}

/// Replaces a mock file's contents under the same lock the I/O core takes.
pub(super) fn store(path: &Path, bytes: &[u8]) -> Result<()> {
    let map = |e| crate::attr::open_error(path, e);
    let file = OpenOptions::new().write(true).open(path).map_err(map)?;
    locked(&file, true, || store_whole(&file, bytes).map(drop))
        .map_err(|e| Error::from_io(path, Operation::Write, Some(bytes), e))
}

/// Reads a mock file's contents under the shared lock.
pub(super) fn load(path: &Path) -> Result<Vec<u8>> {
    let file = File::open(path).map_err(|e| crate::attr::open_error(path, e))?;
    let mut buf = vec![0u8; MAX_VALUE_LEN];
    let n = locked(&file, false, || file.read_at(&mut buf, 0))
        .map_err(|e| Error::from_io(path, Operation::Read, None, e))?;
    buf.truncate(n);
    Ok(buf)
}

/// Parses journal records: `"<key len> <value len>\n<key><value>\n"`.
fn parse_journal(mut bytes: &[u8]) -> Option<Vec<(String, Vec<u8>)>> {
    let mut records = Vec::new();
    while !bytes.is_empty() {
        let newline = bytes.iter().position(|&b| b == b'\n')?;
        let header = std::str::from_utf8(&bytes[..newline]).ok()?;
        let (k, v) = header.split_once(' ')?;
        let (k, v): (usize, usize) = (k.parse().ok()?, v.parse().ok()?);
        let rest = &bytes[newline + 1..];
        let key = rest.get(..k)?;
        let val = rest.get(k..k + v)?;
        if rest.get(k + v) != Some(&b'\n') {
            return None;
        }
        records.push((String::from_utf8(key.to_vec()).ok()?, val.to_vec()));
        bytes = &rest[k + v + 1..];
    }
    Some(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn journal_records_parse() {
        let raw = b"26 4\ntacho-motor/motor0/commandstop\n8 3\na/b/c/ddone\n";
        let records = parse_journal(raw).unwrap();
        assert_eq!(records.len(), 2);
        assert_eq!(records[0].0, "tacho-motor/motor0/command");
        assert_eq!(records[0].1, b"stop");
        assert_eq!(records[1].1, b"one");
        assert!(parse_journal(b"3 1\nabc").is_none());
        assert!(parse_journal(b"x y\n").is_none());
        assert_eq!(parse_journal(b"").unwrap().len(), 0);
    }

    #[test]
    fn port_addresses() {
        assert_eq!(port_address("outA"), "ev3-ports:outA");
        assert_eq!(port_address("ev3-ports:in2"), "ev3-ports:in2");
    }
}
