//! Ports (`lego-port` class): what is plugged in, and forcing a mode.

use std::path::Path;

use crate::device::SysfsDevice;
use crate::discover::{self, Query};
use crate::error::{Error, Result};

/// An EV3 input or output port (`/sys/class/lego-port/portN`).
#[derive(Debug)]
pub struct LegoPort {
    device: SysfsDevice,
    address: String,
    driver_name: String,
    modes: Vec<String>,
}

impl LegoPort {
    /// Opens the port `port` (`in1`..`in4`, `outA`..`outD`, or a full
    /// address).
    ///
    /// # Errors
    /// [`Error::NotFound`], [`Error::Ambiguous`], read errors.
    pub fn find(root: impl AsRef<Path>, port: &str) -> Result<LegoPort> {
        let query = Query {
            class: "lego-port",
            port: Some(port),
            drivers: &[],
        };
        // A port's own address first: `in1` must not pick a sensor's I2C
        // host port `ev3-ports:in1:i2c1` too.
        let strip = |a: &str| a.strip_prefix("ev3-ports:").unwrap_or(a).to_owned();
        let wanted = strip(port);
        let all = discover::list(root.as_ref(), "lego-port")?;
        if let Some(one) = all.iter().find(|d| strip(&d.address) == wanted) {
            return LegoPort::from_device(SysfsDevice::from_dir(&one.path)?);
        }
        LegoPort::from_device(discover::find(root, &query)?)
    }

    /// Opens an already located lego-port device.
    ///
    /// # Errors
    /// Read errors.
    pub fn from_device(device: SysfsDevice) -> Result<LegoPort> {
        Ok(LegoPort {
            address: device.read_string("address")?,
            driver_name: device.read_string("driver_name")?,
            modes: device.read_text("modes", |t| {
                Ok(crate::value::words(t).map(str::to_owned).collect())
            })?,
            device,
        })
    }

    /// The device.
    pub fn device(&self) -> &SysfsDevice {
        &self.device
    }
    /// `address`, e.g. `ev3-ports:in1`.
    pub fn address(&self) -> &str {
        &self.address
    }
    /// `driver_name`: `ev3-input-port` or `ev3-output-port`.
    pub fn driver_name(&self) -> &str {
        &self.driver_name
    }
    /// The modes offered.
    pub fn modes(&self) -> &[String] {
        &self.modes
    }
    /// The current `mode`.
    ///
    /// # Errors
    /// Read errors.
    pub fn mode(&self) -> Result<String> {
        self.device.read_string("mode")
    }
    /// Sets `mode` (`auto`, `tacho-motor`, `dc-motor`, `led`, `other-i2c`,
    /// ...). Every write, even of the current mode, makes the kernel remove
    /// the attached device and register a new one with a new number: find
    /// devices again afterwards. So this is never skipped.
    ///
    /// # Errors
    /// [`Error::NotOffered`] without writing; write errors.
    pub fn set_mode(&self, mode: &str) -> Result<()> {
        if !self.modes.iter().any(|m| m == mode) {
            return Err(Error::NotOffered {
                attribute: "mode",
                value: mode.to_owned(),
                offered: self.modes.join(" "),
            });
        }
        self.device.write_str("mode", mode)
    }
    /// Loads driver `name` on the port (`set_device`), e.g. `lego-nxt-motor`
    /// on an output port in tacho-motor mode.
    ///
    /// The name is checked before anything is written: 1 to
    /// [`LegoPort::MAX_DRIVER_NAME_LEN`] characters from `a-z`, `A-Z`,
    /// `0-9`, `-` and `_` (what ev3dev driver names are made of).
    ///
    /// # Errors
    /// [`Error::NotOffered`] for a malformed name, without writing;
    /// [`Error::Unsupported`] when the port's mode does not allow it; write
    /// errors.
    pub fn set_device(&self, name: &str) -> Result<()> {
        let well_formed = (1..=LegoPort::MAX_DRIVER_NAME_LEN).contains(&name.len())
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !well_formed {
            return Err(Error::NotOffered {
                attribute: "set_device",
                value: name.to_owned(),
                offered: format!(
                    "driver names of 1 to {} characters from a-z, A-Z, 0-9, '-' and '_'",
                    LegoPort::MAX_DRIVER_NAME_LEN
                ),
            });
        }
        self.device.write_str("set_device", name)
    }

    /// The longest driver name [`LegoPort::set_device`] accepts (the
    /// kernel's `LEGO_NAME_SIZE` is 30).
    pub const MAX_DRIVER_NAME_LEN: usize = 30;
    /// `status`: what is detected (`no-motor`, `tacho-motor`, `no-sensor`,
    /// `ev3-uart`...).
    ///
    /// # Errors
    /// Read errors.
    pub fn status(&self) -> Result<String> {
        self.device.read_string("status")
    }
}

/// The EV3's ports, accepted wherever a port name is: `Port` dereferences to
/// its name (`outA`..`outD`, `in1`..`in4`), so `&Port::OutA` is a `&str`.
///
/// ```
/// use ev3sysfs::port::Port;
///
/// fn takes_a_name(port: &str) -> &str { port }
/// assert_eq!(takes_a_name(&Port::OutA), "outA");
/// assert_eq!(Port::In3.to_string(), "in3");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Port {
    /// Output port A.
    OutA,
    /// Output port B.
    OutB,
    /// Output port C.
    OutC,
    /// Output port D.
    OutD,
    /// Input port 1.
    In1,
    /// Input port 2.
    In2,
    /// Input port 3.
    In3,
    /// Input port 4.
    In4,
}

impl Port {
    /// All ports, outputs first.
    pub const ALL: [Port; 8] = [
        Port::OutA,
        Port::OutB,
        Port::OutC,
        Port::OutD,
        Port::In1,
        Port::In2,
        Port::In3,
        Port::In4,
    ];

    /// The port's name as addresses use it (`outA`, `in1`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Port::OutA => "outA",
            Port::OutB => "outB",
            Port::OutC => "outC",
            Port::OutD => "outD",
            Port::In1 => "in1",
            Port::In2 => "in2",
            Port::In3 => "in3",
            Port::In4 => "in4",
        }
    }
}

impl std::ops::Deref for Port {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Port {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl std::fmt::Display for Port {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
