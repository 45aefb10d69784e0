//! The brick itself: the battery (`power_supply/lego-ev3-battery`, the
//! stretch `lego_ev3_battery.c` driver) and `board-info/board0`.

use super::kernel::{
    kstrtol, match_string, power_attrs, ro, show_int, show_power, show_str, store_power,
};
use crate::kobject::{AttrInfo, Effects, KResult, Mode, Model};

/// `power_supply_technology_text[]`.
const TECHNOLOGIES: [&str; 7] = [
    "Unknown", "NiMH", "Li-ion", "Li-poly", "LiFe", "NiCd", "LiMn",
];
const UNKNOWN: usize = 0;
const NIMH: usize = 1;
const LI_ION: usize = 2;

/// The simulated EV3 battery.
#[derive(Debug)]
pub(crate) struct Battery {
    technology: usize,
    /// `technology` is writable only if it was `Unknown` at registration.
    writable: bool,
    voltage_now: i32,
    current_now: i32,
}

impl Battery {
    /// The battery with a rechargeable pack (`Li-ion`) or AA cells
    /// (`Unknown`, which `technology` may turn into `NiMH`).
    pub(crate) fn new(rechargeable: bool) -> Battery {
        Battery {
            technology: if rechargeable { LI_ION } else { UNKNOWN },
            writable: !rechargeable,
            voltage_now: 7_540_000,
            current_now: 180_000,
        }
    }

    /// (`voltage_max_design`, `voltage_min_design`), as the driver has them.
    fn design(&self) -> (i32, i32) {
        match self.technology {
            LI_ION => (84_000_000, 60_000_000),
            NIMH => (7_800_000, 5_400_000),
            _ => (90_000_000, 48_000_000),
        }
    }

    /// The properties in the driver's order, as (uevent name, value).
    fn properties(&self) -> [(&'static str, String); 6] {
        let (max, min) = self.design();
        [
            ("TECHNOLOGY", TECHNOLOGIES[self.technology].to_owned()),
            ("VOLTAGE_NOW", self.voltage_now.to_string()),
            ("VOLTAGE_MAX_DESIGN", max.to_string()),
            ("VOLTAGE_MIN_DESIGN", min.to_string()),
            ("CURRENT_NOW", self.current_now.to_string()),
            ("SCOPE", "System".to_owned()),
        ]
    }
}

impl Model for Battery {
    fn class(&self) -> &'static str {
        "power_supply"
    }

    fn attributes(&self) -> Vec<AttrInfo> {
        let mut attrs: Vec<AttrInfo> = ro(&[
            "type",
            "scope",
            "voltage_now",
            "current_now",
            "voltage_max_design",
            "voltage_min_design",
            "uevent",
        ])
        .chain(power_attrs())
        .collect();
        let mode = if self.writable {
            Mode::ReadWrite
        } else {
            Mode::ReadOnly
        };
        attrs.push(AttrInfo::text("technology", mode));
        attrs
    }

    fn show(&self, attr: &str, out: &mut Vec<u8>) -> KResult<()> {
        let (max, min) = self.design();
        match attr {
            "type" => show_str(out, "Battery"),
            "scope" => show_str(out, "System"),
            "technology" => show_str(out, TECHNOLOGIES[self.technology]),
            "voltage_now" => show_int(out, self.voltage_now),
            "current_now" => show_int(out, self.current_now),
            "voltage_max_design" => show_int(out, max),
            "voltage_min_design" => show_int(out, min),
            "uevent" => {
                out.extend_from_slice(b"POWER_SUPPLY_NAME=lego-ev3-battery\n");
                for (name, value) in self.properties() {
                    out.extend_from_slice(format!("POWER_SUPPLY_{name}={value}\n").as_bytes());
                }
            }
            _ => return show_power(attr, out).unwrap_or(Err(libc::EACCES)),
        }
        Ok(())
    }

    fn store(&mut self, attr: &str, value: &[u8], _fx: &mut Effects) -> KResult<usize> {
        match attr {
            "technology" if self.writable => {
                // sysfs_match_string first, then kstrtol.
                let wanted = match match_string(value, &TECHNOLOGIES) {
                    Some(i) => i,
                    None => usize::try_from(kstrtol(value)?).map_err(|_| libc::EINVAL)?,
                };
                if self.technology != UNKNOWN || wanted != NIMH {
                    return Err(libc::EINVAL);
                }
                self.technology = NIMH;
            }
            a if a.starts_with("power/") => {
                return store_power(attr, value).unwrap_or(Err(libc::EACCES))
            }
            _ => return Err(libc::EACCES),
        }
        Ok(value.len())
    }

    fn inject(&mut self, attr: &str, value: &str, _fx: &mut Effects) -> KResult<()> {
        let v: i32 = value.trim().parse().map_err(|_| libc::EINVAL)?;
        match attr {
            "voltage_now" => self.voltage_now = v,
            "current_now" => self.current_now = v,
            _ => return Err(libc::ENOENT),
        }
        Ok(())
    }
}

/// `board-info/board0`: what `ev3_board.c` registers for the main board.
#[derive(Debug)]
pub(crate) struct BoardInfo;

impl Model for BoardInfo {
    fn class(&self) -> &'static str {
        "board-info"
    }

    fn attributes(&self) -> Vec<AttrInfo> {
        ro(&["uevent"]).chain(power_attrs()).collect()
    }

    fn show(&self, attr: &str, out: &mut Vec<u8>) -> KResult<()> {
        match attr {
            "uevent" => out.extend_from_slice(
                b"BOARD_INFO_HW_REV=6\nBOARD_INFO_MODEL=LEGO MINDSTORMS EV3\n\
                  BOARD_INFO_ROM_REV=6\nBOARD_INFO_SERIAL_NUM=0016533F5B1E\n\
                  BOARD_INFO_TYPE=main\n",
            ),
            _ => return show_power(attr, out).unwrap_or(Err(libc::EACCES)),
        }
        Ok(())
    }

    fn store(&mut self, attr: &str, value: &[u8], _fx: &mut Effects) -> KResult<usize> {
        store_power(attr, value).unwrap_or(Err(libc::EACCES))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(m: &dyn Model, attr: &str) -> String {
        let mut out = Vec::new();
        m.show(attr, &mut out).expect(attr);
        String::from_utf8(out).expect("utf-8")
    }

    #[test]
    fn rechargeable_battery_is_read_only() {
        let mut b = Battery::new(true);
        assert_eq!(show(&b, "technology"), "Li-ion\n");
        assert_eq!(show(&b, "type"), "Battery\n");
        assert_eq!(show(&b, "voltage_max_design"), "84000000\n");
        let tech = b.attributes().into_iter().find(|a| a.name == "technology");
        assert_eq!(tech.map(|a| a.mode), Some(Mode::ReadOnly));
        let mut fx = Effects::default();
        b.inject("voltage_now", "7100000", &mut fx).unwrap();
        assert_eq!(show(&b, "voltage_now"), "7100000\n");
        assert_eq!(
            show(&b, "uevent"),
            "POWER_SUPPLY_NAME=lego-ev3-battery\nPOWER_SUPPLY_TECHNOLOGY=Li-ion\n\
             POWER_SUPPLY_VOLTAGE_NOW=7100000\nPOWER_SUPPLY_VOLTAGE_MAX_DESIGN=84000000\n\
             POWER_SUPPLY_VOLTAGE_MIN_DESIGN=60000000\nPOWER_SUPPLY_CURRENT_NOW=180000\n\
             POWER_SUPPLY_SCOPE=System\n"
        );
        assert_eq!(b.inject("type", "1", &mut fx), Err(libc::ENOENT));
    }

    #[test]
    fn aa_battery_takes_nimh_once() {
        let mut b = Battery::new(false);
        let mut fx = Effects::default();
        assert_eq!(show(&b, "technology"), "Unknown\n");
        assert_eq!(b.store("technology", b"Li-ion", &mut fx), Err(libc::EINVAL));
        assert_eq!(
            b.store("technology", b"Unknown", &mut fx),
            Err(libc::EINVAL)
        );
        assert_eq!(b.store("technology", b"x", &mut fx), Err(libc::EINVAL));
        assert_eq!(b.store("technology", b"1\n", &mut fx), Ok(2));
        assert_eq!(show(&b, "technology"), "NiMH\n");
        assert_eq!(show(&b, "voltage_min_design"), "5400000\n");
        assert_eq!(b.store("technology", b"NiMH", &mut fx), Err(libc::EINVAL));
    }

    #[test]
    fn board_info_names_the_ev3() {
        let uevent = show(&BoardInfo, "uevent");
        assert!(uevent.contains("BOARD_INFO_MODEL=LEGO MINDSTORMS EV3\n"));
        assert!(uevent.contains("BOARD_INFO_TYPE=main\n"));
        assert_eq!(show(&BoardInfo, "power/runtime_status"), "unsupported\n");
    }
}
