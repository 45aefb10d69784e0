//! The lego-port model (`/sys/class/lego-port/portN`): an EV3 input or
//! output port, its modes, its `status` and the re-registrations its
//! `mode` and `set_device` stores cause.
//!
//! What is physically plugged in is told to the port with
//! [`LegoPort::set_plugged`] (or `inject("plugged", driver)`); in `auto`
//! mode `status` follows it. Writing any valid `mode`, even the current
//! one, asks (through [`Effects::port`]) for the device on the port to be
//! unregistered and, when the mode implies one, a new one registered with
//! a new number: output `tacho-motor` → `lego-ev3-l-motor`, `dc-motor` →
//! `rcx-motor`, `led` → `rcx-led` (an LED class device
//! `<address>::brick-status`); input `nxt-analog` → `nxt-analog`; `auto`
//! → what is plugged (an NXT motor is detected as an EV3 large motor).

use super::kernel::{match_string, power_attrs, ro, rw, show_lego_uevent, show_power, show_str};
use crate::kobject::{AttrInfo, Effects, KResult, Mode, Model, PortRequest};
use crate::{SensorDriver, TachoDriver};

const INPUT_MODES: [&str; 9] = [
    "auto",
    "nxt-analog",
    "nxt-color",
    "nxt-i2c",
    "other-i2c",
    "ev3-analog",
    "ev3-uart",
    "other-uart",
    "raw",
];
const OUTPUT_MODES: [&str; 5] = ["auto", "tacho-motor", "dc-motor", "led", "raw"];
/// The longest `set_device` name (`LEGO_NAME_SIZE`).
const MAX_NAME: usize = 50;

/// One simulated lego-port. See the [module docs](self).
#[derive(Debug)]
pub(crate) struct LegoPort {
    address: String,
    input: bool,
    mode: usize,
    plugged: Option<String>,
}

impl LegoPort {
    /// The port at `address`; an input port when the address names `inN`.
    pub(crate) fn new(address: &str) -> LegoPort {
        LegoPort {
            address: address.to_owned(),
            input: address
                .rsplit(':')
                .next()
                .is_some_and(|p| p.starts_with("in")),
            mode: 0,
            plugged: None,
        }
    }

    /// Tells the port what is plugged in: a driver name, or nothing.
    pub(crate) fn set_plugged(&mut self, driver: Option<&str>) {
        self.plugged = driver.map(str::to_owned);
    }

    fn modes(&self) -> &'static [&'static str] {
        if self.input {
            &INPUT_MODES
        } else {
            &OUTPUT_MODES
        }
    }

    /// The current mode's name.
    pub(crate) fn mode(&self) -> &'static str {
        self.modes()[self.mode]
    }

    /// What the port detects from the plugged driver.
    fn detected(&self) -> &'static str {
        let Some(driver) = self.plugged.as_deref() else {
            return if self.input { "no-sensor" } else { "no-motor" };
        };
        if !self.input {
            return match driver {
                "rcx-motor" => "dc-motor",
                "rcx-led" => "led",
                _ => "tacho-motor",
            };
        }
        match SensorDriver::from_driver_name(driver) {
            Some(SensorDriver::Ev3Touch) => "ev3-analog",
            Some(
                SensorDriver::Ev3Color
                | SensorDriver::Ev3Ultrasonic
                | SensorDriver::Ev3Gyro
                | SensorDriver::Ev3Infrared,
            ) => "ev3-uart",
            Some(SensorDriver::NxtUltrasonic) => "nxt-i2c",
            Some(_) => "nxt-analog",
            None => "error",
        }
    }

    /// `status`: output ports show the mode unless in `auto`; input ports
    /// always show the detected or forced sensor type.
    pub(crate) fn status(&self) -> &'static str {
        match (self.input, self.mode()) {
            (_, "auto") => self.detected(),
            (false, mode) => mode,
            (true, "other-i2c") => "nxt-i2c",
            (true, "other-uart") => "ev3-uart",
            (true, "raw") => "no-sensor",
            (true, mode) => mode,
        }
    }

    /// The driver the current mode registers.
    fn mode_driver(&self) -> Option<String> {
        let plugged = self.plugged.clone();
        let plugged_is = |status: &str| self.detected() == status;
        match (self.input, self.mode()) {
            (false, "auto") => plugged.map(|d| {
                if TachoDriver::from_driver_name(&d).is_some() {
                    // Only EV3 motors are told apart; NXT reads as large.
                    if d == "lego-ev3-m-motor" {
                        d
                    } else {
                        "lego-ev3-l-motor".to_owned()
                    }
                } else {
                    d
                }
            }),
            (false, "tacho-motor") => Some("lego-ev3-l-motor".to_owned()),
            (false, "dc-motor") => Some("rcx-motor".to_owned()),
            (false, "led") => Some("rcx-led".to_owned()),
            (true, "auto") => plugged,
            (true, "nxt-analog") => Some("nxt-analog".to_owned()),
            (true, "ev3-analog") if plugged_is("ev3-analog") => plugged,
            (true, "ev3-analog") => Some("ev3-analog".to_owned()),
            (true, "ev3-uart") if plugged_is("ev3-uart") => plugged,
            (true, "nxt-i2c") if plugged_is("nxt-i2c") => plugged,
            (true, "nxt-color") => Some("lego-nxt-color".to_owned()),
            _ => None,
        }
    }

    fn set_device(&mut self, value: &[u8], fx: &mut Effects) -> KResult<()> {
        let allowed = if self.input {
            self.status() == "nxt-analog"
        } else {
            self.status() == "tacho-motor"
        };
        if !allowed {
            return Err(libc::EOPNOTSUPP);
        }
        let name = String::from_utf8_lossy(value);
        let name = name.trim_matches(|c: char| c.is_ascii_whitespace() || c == '\0');
        if name.is_empty() || name.len() > MAX_NAME {
            return Err(libc::EINVAL);
        }
        fx.port = Some(PortRequest {
            address: self.address.clone(),
            driver: Some(name.to_owned()),
        });
        Ok(())
    }
}

impl Model for LegoPort {
    fn class(&self) -> &'static str {
        "lego-port"
    }

    fn attributes(&self) -> Vec<AttrInfo> {
        let mut attrs: Vec<AttrInfo> = ro(&["address", "driver_name", "modes", "status", "uevent"])
            .chain(rw(&["mode"]))
            .chain(power_attrs())
            .collect();
        attrs.push(AttrInfo::text("set_device", Mode::WriteOnly));
        attrs
    }

    fn show(&self, attr: &str, out: &mut Vec<u8>) -> KResult<()> {
        let driver = if self.input {
            "ev3-input-port"
        } else {
            "ev3-output-port"
        };
        match attr {
            "address" => show_str(out, &self.address),
            "driver_name" => show_str(out, driver),
            "modes" => show_str(out, &self.modes().join(" ")),
            "mode" => show_str(out, self.mode()),
            "status" => show_str(out, self.status()),
            "uevent" => show_lego_uevent(out, driver, &self.address),
            _ => return show_power(attr, out).unwrap_or(Err(libc::EACCES)),
        }
        Ok(())
    }

    fn store(&mut self, attr: &str, value: &[u8], fx: &mut Effects) -> KResult<usize> {
        match attr {
            "mode" => {
                self.mode = match_string(value, self.modes()).ok_or(libc::EINVAL)?;
                fx.port = Some(PortRequest {
                    address: self.address.clone(),
                    driver: self.mode_driver(),
                });
            }
            "set_device" => self.set_device(value, fx)?,
            a if a.starts_with("power/") => {
                return super::kernel::store_power(attr, value).unwrap_or(Err(libc::EACCES))
            }
            _ => return Err(libc::EACCES),
        }
        Ok(value.len())
    }

    fn inject(&mut self, attr: &str, value: &str, _fx: &mut Effects) -> KResult<()> {
        match attr {
            "plugged" => {
                self.set_plugged(Some(value).filter(|v| !v.is_empty()));
                Ok(())
            }
            _ => Err(libc::ENOENT),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(p: &LegoPort, attr: &str) -> String {
        let mut out = Vec::new();
        p.show(attr, &mut out).expect(attr);
        String::from_utf8(out).expect("utf-8")
    }

    fn store(p: &mut LegoPort, attr: &str, value: &str) -> (KResult<usize>, Option<PortRequest>) {
        let mut fx = Effects::default();
        let r = p.store(attr, value.as_bytes(), &mut fx);
        (r, fx.port)
    }

    fn request(address: &str, driver: Option<&str>) -> Option<PortRequest> {
        Some(PortRequest {
            address: address.to_owned(),
            driver: driver.map(str::to_owned),
        })
    }

    #[test]
    fn output_port_modes_re_register() {
        let mut p = LegoPort::new("ev3-ports:outB");
        assert_eq!(show(&p, "driver_name"), "ev3-output-port\n");
        assert_eq!(show(&p, "modes"), "auto tacho-motor dc-motor led raw\n");
        assert_eq!(show(&p, "status"), "no-motor\n");
        p.set_plugged(Some("lego-nxt-motor"));
        assert_eq!(show(&p, "status"), "tacho-motor\n");
        // The same mode again still re-registers.
        let (r, req) = store(&mut p, "mode", "auto\n");
        assert_eq!(r, Ok(5));
        assert_eq!(req, request("ev3-ports:outB", Some("lego-ev3-l-motor")));
        let (r, req) = store(&mut p, "set_device", "lego-nxt-motor\n");
        assert_eq!(r, Ok(15));
        assert_eq!(req, request("ev3-ports:outB", Some("lego-nxt-motor")));
        let (_, req) = store(&mut p, "mode", "dc-motor");
        assert_eq!(req, request("ev3-ports:outB", Some("rcx-motor")));
        assert_eq!(show(&p, "status"), "dc-motor\n");
        assert_eq!(show(&p, "mode"), "dc-motor\n");
        assert_eq!(
            store(&mut p, "set_device", "lego-ev3-m-motor"),
            (Err(libc::EOPNOTSUPP), None)
        );
        let (_, req) = store(&mut p, "mode", "led");
        assert_eq!(req, request("ev3-ports:outB", Some("rcx-led")));
        let (_, req) = store(&mut p, "mode", "raw");
        assert_eq!(req, request("ev3-ports:outB", None));
        assert_eq!(
            store(&mut p, "mode", "other-i2c"),
            (Err(libc::EINVAL), None)
        );
        assert_eq!(store(&mut p, "mode", "Auto"), (Err(libc::EINVAL), None));
        assert_eq!(show(&p, "mode"), "raw\n");
        store(&mut p, "mode", "tacho-motor").0.unwrap();
        assert_eq!(
            store(&mut p, "set_device", &"x".repeat(51)).0,
            Err(libc::EINVAL)
        );
    }

    #[test]
    fn input_port_status_is_the_sensor_type() {
        let mut p = LegoPort::new("ev3-ports:in1");
        assert_eq!(show(&p, "driver_name"), "ev3-input-port\n");
        assert_eq!(show(&p, "status"), "no-sensor\n");
        let mut fx = Effects::default();
        p.inject("plugged", "lego-ev3-color", &mut fx).unwrap();
        assert_eq!(show(&p, "status"), "ev3-uart\n");
        assert_eq!(
            store(&mut p, "set_device", "lego-nxt-touch"),
            (Err(libc::EOPNOTSUPP), None)
        );
        let (_, req) = store(&mut p, "mode", "ev3-uart");
        assert_eq!(req, request("ev3-ports:in1", Some("lego-ev3-color")));
        let (_, req) = store(&mut p, "mode", "nxt-analog");
        assert_eq!(req, request("ev3-ports:in1", Some("nxt-analog")));
        assert_eq!(show(&p, "status"), "nxt-analog\n");
        let (r, req) = store(&mut p, "set_device", "lego-nxt-light");
        assert_eq!(r, Ok(14));
        assert_eq!(req, request("ev3-ports:in1", Some("lego-nxt-light")));
        p.inject("plugged", "", &mut fx).unwrap();
        store(&mut p, "mode", "auto").0.unwrap();
        assert_eq!(show(&p, "status"), "no-sensor\n");
        p.set_plugged(Some("lego-ev3-touch"));
        assert_eq!(show(&p, "status"), "ev3-analog\n");
        p.set_plugged(Some("lego-nxt-us"));
        assert_eq!(show(&p, "status"), "nxt-i2c\n");
        assert_eq!(
            show(&p, "uevent"),
            "LEGO_DRIVER_NAME=ev3-input-port\nLEGO_ADDRESS=ev3-ports:in1\n"
        );
        assert_eq!(p.inject("status", "x", &mut fx), Err(libc::ENOENT));
    }
}
