//! The lego-sensor model: `/sys/class/lego-sensor/sensorN` for every EV3
//! and NXT sensor driver the mock knows ([`SensorDriver`]), with the class
//! attributes of `lego_sensor_class.c` and what each kind of driver (analog,
//! UART, I2C) supports.
//!
//! * `mode` takes effect in the store: when the write returns, `num_values`,
//!   `units`, `decimals`, `bin_data_format` and the values are the new
//!   mode's (the UART driver's write blocks until the sensor sends data in
//!   the new mode). Values are kept per mode, so a value injected in one
//!   mode is there again when the mode comes back.
//! * `value0`..`value7` always exist; reading one at or beyond `num_values`
//!   fails with `ENXIO`. `bin_data` holds the current mode's values in
//!   `bin_data_format`, `num_values` × the format's size bytes.
//! * `text_value` is `EOPNOTSUPP`; `poll_ms` too except on I2C sensors;
//!   `direct` is `EOPNOTSUPP` on analog sensors, write-only in effect on
//!   UART sensors (offset 0, at most 32 bytes), read-write on I2C ones.
//! * `commands` is an empty line and every `command` is `EINVAL`.
//! * EV3 touch `value0` notifies its pollers when it changes.

use super::kernel::{
    bin, match_string, power_attrs, ro, rw, show_int, show_lego_uevent, show_power, show_str,
    sscanf_u32, store_power,
};
use crate::kobject::{AttrInfo, Effects, KResult, Mode, Model};
use crate::SensorDriver;

/// `value0`..`value7`: each mode's values (those at or beyond
/// `num_values` fail with `ENXIO`).
pub(crate) const VALUES: [&str; 8] = [
    "value0", "value1", "value2", "value3", "value4", "value5", "value6", "value7",
];

/// The size of `bin_data` (the class's `battr->size`).
const BIN_DATA_SIZE: u64 = 32;
/// The size of `direct`.
const DIRECT_SIZE: u64 = 255;
/// The NXT I2C driver's shortest polling period (0 turns polling off).
const MIN_POLL_MS: u32 = 50;

/// How the sensor is connected: what its driver supports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bus {
    Analog,
    Uart,
    I2c,
}

/// One simulated sensor. See the [module docs](self).
#[derive(Debug)]
pub(crate) struct Sensor {
    driver: SensorDriver,
    address: String,
    mode: usize,
    /// The values of each mode (fixed point, as `valueN` shows them).
    values: Vec<Vec<i64>>,
    poll_ms: u32,
    /// Mode changes and `direct` writes so far (a gyro resets its angle).
    resets: u64,
    /// A touch sensor: `value0` as pressed by hand (injected: a control
    /// line's `set in1 value0 1`, the live view's button) and as the
    /// world's contact has it; it shows the larger (see
    /// [`Sensor::set_mode_values`]).
    touch: Touch,
}

/// A touch sensor's two presses: by hand and by the world.
#[derive(Debug, Default, Clone, Copy)]
struct Touch {
    hand: i64,
    world: i64,
}

impl Sensor {
    /// A sensor of `driver` at `address`, in mode 0 (the default after
    /// connect).
    pub(crate) fn new(driver: SensorDriver, address: &str) -> Sensor {
        let values = driver
            .modes()
            .iter()
            .map(|m| default_values(driver, m.0, usize::from(m.1)))
            .collect();
        Sensor {
            driver,
            address: address.to_owned(),
            mode: 0,
            values,
            poll_ms: 50,
            resets: 0,
            touch: Touch::default(),
        }
    }

    fn bus(&self) -> Bus {
        match self.driver {
            SensorDriver::Ev3Color
            | SensorDriver::Ev3Ultrasonic
            | SensorDriver::Ev3Gyro
            | SensorDriver::Ev3Infrared => Bus::Uart,
            SensorDriver::NxtUltrasonic => Bus::I2c,
            _ => Bus::Analog,
        }
    }

    /// The current mode's name.
    pub(crate) fn mode_name(&self) -> &'static str {
        self.driver.modes()[self.mode].0
    }

    fn num_values(&self) -> usize {
        usize::from(self.driver.modes()[self.mode].1)
    }

    fn format(&self) -> &'static str {
        self.driver.modes()[self.mode].2
    }

    /// The current mode's value `index`, as `valueN` shows it.
    pub(crate) fn value(&self, index: usize) -> Option<i64> {
        self.values[self.mode].get(index).copied()
    }

    /// Sets value `index` of the current mode (what the sensor measures);
    /// notifies `value0` of an EV3 touch sensor when it changes.
    ///
    /// # Errors
    /// `ENXIO` for an index at or beyond `num_values`.
    pub(crate) fn set_value(&mut self, index: usize, value: i64, fx: &mut Effects) -> KResult<()> {
        let slot = self.values[self.mode].get_mut(index).ok_or(libc::ENXIO)?;
        let changed = *slot != value;
        *slot = value;
        if changed && index == 0 && self.driver == SensorDriver::Ev3Touch {
            fx.notify("value0");
        }
        Ok(())
    }

    fn is_touch(&self) -> bool {
        matches!(self.driver, SensorDriver::Ev3Touch | SensorDriver::NxtTouch)
    }

    /// Sets the values of mode `mode` (what the sensor measures in that
    /// mode, as the simulated world has it), so that a switch to it reads
    /// them at once; in the current mode, as [`Sensor::set_value`] does.
    /// A touch sensor pressed by hand stays pressed until released by
    /// hand, whatever the world says: it shows the larger of the two.
    pub(crate) fn set_mode_values(&mut self, mode: usize, values: &[i64], fx: &mut Effects) {
        if self.is_touch() && mode == self.mode {
            if let Some(&world) = values.first() {
                self.touch.world = world;
                let _ = self.set_value(0, world.max(self.touch.hand), fx);
            }
        } else if mode == self.mode {
            for (i, v) in values.iter().enumerate() {
                let _ = self.set_value(i, *v, fx);
            }
        } else if let Some(slots) = self.values.get_mut(mode) {
            for (slot, v) in slots.iter_mut().zip(values) {
                *slot = *v;
            }
        }
    }

    /// How many mode changes and `direct` writes the sensor has seen.
    pub(crate) fn resets(&self) -> u64 {
        self.resets
    }

    /// `bin_data`: the current values in `bin_data_format`.
    fn bin_data(&self, out: &mut Vec<u8>) {
        let decimals = self.driver.modes()[self.mode].4;
        for &v in &self.values[self.mode] {
            match self.format() {
                "u8" | "s8" => out.push(v as u8),
                "u16" | "s16" => out.extend_from_slice(&(v as u16).to_le_bytes()),
                "s16_be" => out.extend_from_slice(&(v as u16).to_be_bytes()),
                "s32be" | "s32_be" => out.extend_from_slice(&(v as u32).to_be_bytes()),
                "float" => {
                    let f = v as f64 / 10f64.powi(i32::from(decimals));
                    out.extend_from_slice(&(f as f32).to_le_bytes());
                }
                _ => out.extend_from_slice(&(v as u32).to_le_bytes()),
            }
        }
        // The kernel copies its whole raw buffer (32 bytes) whatever the
        // mode's size: the rest is zero here.
        out.resize(BIN_DATA_SIZE as usize, 0);
    }

    fn store_mode(&mut self, value: &[u8], fx: &mut Effects) -> KResult<()> {
        let names: Vec<&str> = self.driver.modes().iter().map(|m| m.0).collect();
        let mode = match_string(value, &names).ok_or(libc::EINVAL)?;
        if mode != self.mode {
            self.resets += 1;
        }
        self.mode = mode;
        fx.attributes_changed = true;
        Ok(())
    }
}

/// What a sensor shows before anything is measured.
fn default_values(driver: SensorDriver, mode: &str, n: usize) -> Vec<i64> {
    let mut values = vec![0; n];
    match (driver, mode) {
        (SensorDriver::Ev3Ultrasonic, "US-DIST-CM" | "US-DC-CM" | "US-SI-CM") => values[0] = 2550,
        (SensorDriver::Ev3Ultrasonic, "US-DIST-IN" | "US-DC-IN" | "US-SI-IN") => values[0] = 1003,
        (SensorDriver::NxtUltrasonic, "US-DIST-CM" | "US-SI-CM") => values[0] = 255,
        (SensorDriver::NxtUltrasonic, "US-DIST-IN" | "US-SI-IN") => values[0] = 1003,
        (SensorDriver::Ev3Infrared, "IR-PROX") => values[0] = 100,
        (SensorDriver::Ev3Infrared, "IR-REM-A") => values[0] = 384,
        (SensorDriver::Ev3Infrared, "IR-SEEK") => {
            // No beacon on any channel: heading 0, distance -128.
            for pair in values.chunks_mut(2) {
                pair[1] = -128;
            }
        }
        _ => {}
    }
    values
}

impl Model for Sensor {
    fn class(&self) -> &'static str {
        "lego-sensor"
    }

    fn attributes(&self) -> Vec<AttrInfo> {
        let mut attrs: Vec<AttrInfo> = ro(&[
            "address",
            "bin_data_format",
            "commands",
            "decimals",
            "driver_name",
            "fw_version",
            "modes",
            "num_values",
            "text_value",
            "uevent",
            "units",
        ])
        .chain(ro(&VALUES))
        .chain(rw(&["mode", "poll_ms"]))
        .chain(power_attrs())
        .collect();
        attrs.push(AttrInfo::text("command", Mode::WriteOnly));
        attrs.push(bin("bin_data", Mode::ReadOnly, BIN_DATA_SIZE));
        attrs.push(bin("direct", Mode::ReadWrite, DIRECT_SIZE));
        attrs
    }

    fn show(&self, attr: &str, out: &mut Vec<u8>) -> KResult<()> {
        let (_, _, format, units, decimals) = self.driver.modes()[self.mode];
        match attr {
            "address" => show_str(out, &self.address),
            "bin_data_format" => show_str(out, format),
            "commands" | "fw_version" => show_str(out, ""),
            "decimals" => show_int(out, decimals),
            "driver_name" => show_str(out, self.driver.driver_name()),
            "modes" => {
                let names: Vec<&str> = self.driver.modes().iter().map(|m| m.0).collect();
                show_str(out, &names.join(" "));
            }
            "mode" => show_str(out, self.mode_name()),
            "num_values" => show_int(out, self.num_values()),
            "units" => show_str(out, units),
            "uevent" => show_lego_uevent(out, self.driver.driver_name(), &self.address),
            "text_value" => return Err(libc::EOPNOTSUPP),
            "poll_ms" if self.bus() == Bus::I2c => show_int(out, self.poll_ms),
            "poll_ms" => return Err(libc::EOPNOTSUPP),
            "bin_data" => self.bin_data(out),
            "direct" if self.bus() == Bus::I2c => out.resize(DIRECT_SIZE as usize, 0),
            "direct" => return Err(libc::EOPNOTSUPP),
            _ => {
                if let Some(index) = attr.strip_prefix("value") {
                    let index: usize = index.parse().map_err(|_| libc::EACCES)?;
                    let v = self.value(index).ok_or(libc::ENXIO)?;
                    show_int(out, v);
                } else {
                    return show_power(attr, out).unwrap_or(Err(libc::EACCES));
                }
            }
        }
        Ok(())
    }

    fn store(&mut self, attr: &str, value: &[u8], fx: &mut Effects) -> KResult<usize> {
        match attr {
            "mode" => self.store_mode(value, fx)?,
            // No LEGO sensor on stretch has commands.
            "command" => return Err(libc::EINVAL),
            "poll_ms" if self.bus() == Bus::I2c => {
                let ms = sscanf_u32(value)?;
                if ms > 0 && ms < MIN_POLL_MS {
                    return Err(libc::EINVAL);
                }
                self.poll_ms = ms;
            }
            "poll_ms" => return Err(libc::EOPNOTSUPP),
            "direct" => return self.store_at(attr, 0, value, fx),
            a if a.starts_with("power/") => {
                return store_power(attr, value).unwrap_or(Err(libc::EACCES))
            }
            _ => return Err(libc::EACCES),
        }
        Ok(value.len())
    }

    fn store_at(
        &mut self,
        attr: &str,
        offset: u64,
        value: &[u8],
        _fx: &mut Effects,
    ) -> KResult<usize> {
        if attr != "direct" {
            return Err(libc::EACCES);
        }
        if offset >= DIRECT_SIZE {
            return Err(libc::EFBIG);
        }
        match self.bus() {
            Bus::Analog => Err(libc::EOPNOTSUPP),
            Bus::Uart if offset != 0 || value.len() > 32 => Err(libc::EINVAL),
            Bus::Uart => {
                self.resets += 1;
                Ok(value.len())
            }
            Bus::I2c => Ok(value.len().min((DIRECT_SIZE - offset) as usize)),
        }
    }

    fn inject(&mut self, attr: &str, value: &str, fx: &mut Effects) -> KResult<()> {
        let Some(index) = attr.strip_prefix("value") else {
            return match attr {
                "mode" => self.store_mode(value.as_bytes(), fx),
                _ => Err(libc::ENOENT),
            };
        };
        let index: usize = index.parse().map_err(|_| libc::ENOENT)?;
        let v: i64 = value.trim().parse().map_err(|_| libc::EINVAL)?;
        if index == 0 && self.is_touch() {
            // Pressed (or released) by hand: held against the world.
            self.touch.hand = v;
            return self.set_value(0, v.max(self.touch.world), fx);
        }
        self.set_value(index, v, fx)
    }
}

#[cfg(test)]
#[path = "sensor_tests.rs"]
mod tests;
