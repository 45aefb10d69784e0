//! What a mock device looks like: attribute names, access modes and initial
//! contents per class and driver, as the ev3dev-stretch kernel shows them.
//!
//! On a brick, after udev, RO = 0444, WO = 0220, RW = 0664 (group `ev3dev`).
//! Mock files carry the brick's access in their **group** bits (what the
//! crate's I/O core and ev3dev's Python library go by on a non-sysfs file)
//! and keep the owner's read and write bits, so that the tree's owner can
//! inject values into read-only attributes without being root.

use std::borrow::Cow;

/// Read-only attribute mode in a mock tree.
pub(crate) const RO: u32 = 0o644;
/// Write-only attribute mode in a mock tree.
pub(crate) const WO: u32 = 0o620;
/// Read-write attribute mode in a mock tree.
pub(crate) const RW: u32 = 0o664;

/// One attribute file of a mock device: relative path, mode, contents.
pub(crate) type AttrFile = (Cow<'static, str>, u32, Cow<'static, [u8]>);

fn text(name: &'static str, mode: u32, value: impl Into<String>) -> AttrFile {
    let mut v = value.into();
    if mode != WO {
        v.push('\n');
    }
    (Cow::Borrowed(name), mode, Cow::Owned(v.into_bytes()))
}

fn owned(name: String, mode: u32, value: impl Into<String>) -> AttrFile {
    let (_, mode, bytes) = text("", mode, value);
    (Cow::Owned(name), mode, bytes)
}

/// Tacho motor drivers of the `legoev3-motor` lego driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TachoDriver {
    /// EV3 Large Servo Motor, `lego-ev3-l-motor`.
    Ev3Large,
    /// EV3 Medium Servo Motor, `lego-ev3-m-motor`.
    Ev3Medium,
    /// NXT Servo Motor, `lego-nxt-motor`.
    Nxt,
}

impl TachoDriver {
    /// The kernel's `driver_name`.
    pub fn driver_name(self) -> &'static str {
        match self {
            TachoDriver::Ev3Large => "lego-ev3-l-motor",
            TachoDriver::Ev3Medium => "lego-ev3-m-motor",
            TachoDriver::Nxt => "lego-nxt-motor",
        }
    }

    /// The driver for a kernel `driver_name`.
    pub fn from_driver_name(name: &str) -> Option<TachoDriver> {
        [
            TachoDriver::Ev3Large,
            TachoDriver::Ev3Medium,
            TachoDriver::Nxt,
        ]
        .into_iter()
        .find(|d| d.driver_name() == name)
    }

    /// `max_speed` in tacho counts per second.
    pub fn max_speed(self) -> i32 {
        match self {
            TachoDriver::Ev3Large => 1050,
            TachoDriver::Ev3Medium => 1560,
            TachoDriver::Nxt => 1020,
        }
    }

    /// Default `hold_pid/Kp`.
    fn hold_kp(self) -> i32 {
        match self {
            TachoDriver::Ev3Medium => 160_000,
            _ => 80_000,
        }
    }
}

/// The tacho-motor commands, in the kernel's order.
pub(crate) const TACHO_COMMANDS: &str =
    "run-forever run-to-abs-pos run-to-rel-pos run-timed run-direct stop reset";

pub(crate) fn tacho_motor(driver: TachoDriver, address: &str) -> Vec<AttrFile> {
    let mut files = vec![
        text("address", RO, address),
        text("command", WO, ""),
        text("commands", RO, TACHO_COMMANDS),
        text("count_per_rot", RO, "360"),
        text("driver_name", RO, driver.driver_name()),
        text("duty_cycle", RO, "0"),
        text("duty_cycle_sp", RW, "0"),
        text("max_speed", RO, driver.max_speed().to_string()),
        text("polarity", RW, "normal"),
        text("position", RW, "0"),
        text("position_sp", RW, "0"),
        text("ramp_down_sp", RW, "0"),
        text("ramp_up_sp", RW, "0"),
        text("speed", RO, "0"),
        text("speed_sp", RW, "0"),
        text("state", RO, ""),
        text("stop_action", RW, "coast"),
        text("stop_actions", RO, "coast brake hold"),
        text("time_sp", RW, "0"),
        text("speed_pid/Kp", RW, "1000"),
        text("speed_pid/Ki", RW, "60"),
        text("speed_pid/Kd", RW, "0"),
        text("hold_pid/Kp", RW, driver.hold_kp().to_string()),
        text("hold_pid/Ki", RW, "0"),
        text("hold_pid/Kd", RW, "0"),
    ];
    files.push(uevent(driver.driver_name(), address));
    files
}

pub(crate) fn dc_motor(address: &str) -> Vec<AttrFile> {
    vec![
        text("address", RO, address),
        text("command", WO, ""),
        text("commands", RO, "run-forever run-timed run-direct stop"),
        text("driver_name", RO, "rcx-motor"),
        text("duty_cycle", RO, "0"),
        text("duty_cycle_sp", RW, "0"),
        text("polarity", RW, "normal"),
        text("ramp_down_sp", RW, "0"),
        text("ramp_up_sp", RW, "0"),
        text("state", RO, ""),
        // Write-only in the kernel: there is no show function.
        text("stop_action", WO, ""),
        text("stop_actions", RO, "coast brake"),
        text("time_sp", RW, "0"),
        uevent("rcx-motor", address),
    ]
}

pub(crate) fn servo_motor(address: &str) -> Vec<AttrFile> {
    vec![
        text("address", RO, address),
        text("command", WO, ""),
        text("driver_name", RO, "ms-8ch-servo"),
        text("max_pulse_sp", RW, "2500"),
        text("mid_pulse_sp", RW, "1500"),
        text("min_pulse_sp", RW, "500"),
        text("polarity", RW, "normal"),
        // Floating: pulse 0 scaled against min 500.
        text("position_sp", RW, "-150"),
        text("rate_sp", RW, "0"),
        text("state", RO, ""),
        uevent("ms-8ch-servo", address),
    ]
}

/// One mode of a sensor: name, number of values, `bin_data_format`, units,
/// decimals.
pub(crate) type SensorMode = (&'static str, u8, &'static str, &'static str, u8);

/// Sensor drivers the mock knows, with their modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SensorDriver {
    /// EV3 Touch Sensor (analog), `lego-ev3-touch`.
    Ev3Touch,
    /// EV3 Color Sensor (UART), `lego-ev3-color`.
    Ev3Color,
    /// EV3 Ultrasonic Sensor (UART), `lego-ev3-us`.
    Ev3Ultrasonic,
    /// EV3 Gyro Sensor (UART), `lego-ev3-gyro`.
    Ev3Gyro,
    /// EV3 Infrared Sensor (UART), `lego-ev3-ir`.
    Ev3Infrared,
    /// NXT Touch Sensor (analog), `lego-nxt-touch`.
    NxtTouch,
    /// NXT Light Sensor (analog), `lego-nxt-light`.
    NxtLight,
    /// NXT Ultrasonic Sensor (I2C), `lego-nxt-us`.
    NxtUltrasonic,
    /// NXT Sound Sensor (analog), `lego-nxt-sound`.
    NxtSound,
    /// Any NXT analog sensor, as the input port's `nxt-analog` mode
    /// registers it before a `set_device`: `nxt-analog`.
    NxtAnalog,
}

impl SensorDriver {
    /// The kernel's `driver_name`.
    pub fn driver_name(self) -> &'static str {
        match self {
            SensorDriver::Ev3Touch => "lego-ev3-touch",
            SensorDriver::Ev3Color => "lego-ev3-color",
            SensorDriver::Ev3Ultrasonic => "lego-ev3-us",
            SensorDriver::Ev3Gyro => "lego-ev3-gyro",
            SensorDriver::Ev3Infrared => "lego-ev3-ir",
            SensorDriver::NxtTouch => "lego-nxt-touch",
            SensorDriver::NxtLight => "lego-nxt-light",
            SensorDriver::NxtUltrasonic => "lego-nxt-us",
            SensorDriver::NxtSound => "lego-nxt-sound",
            SensorDriver::NxtAnalog => "nxt-analog",
        }
    }

    /// The driver for a kernel `driver_name`.
    pub fn from_driver_name(name: &str) -> Option<SensorDriver> {
        [
            SensorDriver::Ev3Touch,
            SensorDriver::Ev3Color,
            SensorDriver::Ev3Ultrasonic,
            SensorDriver::Ev3Gyro,
            SensorDriver::Ev3Infrared,
            SensorDriver::NxtTouch,
            SensorDriver::NxtLight,
            SensorDriver::NxtUltrasonic,
            SensorDriver::NxtSound,
            SensorDriver::NxtAnalog,
        ]
        .into_iter()
        .find(|d| d.driver_name() == name)
    }

    /// The modes, mode 0 (the default after connect) first.
    pub(crate) fn modes(self) -> &'static [SensorMode] {
        match self {
            SensorDriver::Ev3Touch => &[("TOUCH", 1, "s32", "", 0)],
            SensorDriver::Ev3Color => &[
                ("COL-REFLECT", 1, "s8", "pct", 0),
                ("COL-AMBIENT", 1, "s8", "pct", 0),
                ("COL-COLOR", 1, "s8", "col", 0),
                ("REF-RAW", 2, "s16", "", 0),
                ("RGB-RAW", 3, "s16", "", 0),
                ("COL-CAL", 4, "s32", "", 0),
            ],
            SensorDriver::Ev3Ultrasonic => &[
                ("US-DIST-CM", 1, "s16", "cm", 1),
                ("US-DIST-IN", 1, "s16", "in", 1),
                ("US-LISTEN", 1, "s8", "", 0),
                ("US-SI-CM", 1, "s16", "cm", 1),
                ("US-SI-IN", 1, "s16", "in", 1),
                ("US-DC-CM", 1, "s16", "cm", 1),
                ("US-DC-IN", 1, "s16", "in", 1),
            ],
            SensorDriver::Ev3Gyro => &[
                ("GYRO-ANG", 1, "s16", "deg", 0),
                ("GYRO-RATE", 1, "s16", "d/s", 0),
                ("GYRO-FAS", 1, "s16", "", 0),
                ("GYRO-G&A", 2, "s16", "", 0),
                ("GYRO-CAL", 4, "s16", "", 0),
                ("TILT-RATE", 1, "s16", "d/s", 0),
                ("TILT-ANG", 1, "s16", "deg", 0),
            ],
            SensorDriver::Ev3Infrared => &[
                ("IR-PROX", 1, "s8", "pct", 0),
                ("IR-SEEK", 8, "s8", "pct", 0),
                ("IR-REMOTE", 4, "s8", "btn", 0),
                ("IR-REM-A", 1, "s16", "", 0),
                ("IR-S-ALT", 4, "s8", "pct", 0),
                ("IR-CAL", 2, "s32", "", 0),
            ],
            SensorDriver::NxtTouch => &[("TOUCH", 1, "u8", "", 0)],
            SensorDriver::NxtLight => &[
                ("REFLECT", 1, "s32", "pct", 1),
                ("AMBIENT", 1, "s32", "pct", 1),
            ],
            SensorDriver::NxtSound => &[("DB", 1, "s32", "pct", 1), ("DBA", 1, "s32", "pct", 1)],
            SensorDriver::NxtAnalog => &[
                ("ANALOG-0", 1, "s32", "V", 3),
                ("ANALOG-1", 1, "s32", "V", 3),
            ],
            SensorDriver::NxtUltrasonic => &[
                ("US-DIST-CM", 1, "u8", "cm", 0),
                ("US-DIST-IN", 1, "u8", "in", 1),
                ("US-SI-CM", 1, "u8", "cm", 0),
                ("US-SI-IN", 1, "u8", "in", 1),
                ("US-LISTEN", 1, "u8", "", 0),
            ],
        }
    }

    /// Whether the driver implements `poll_ms` (I2C sensors do).
    pub(crate) fn has_poll_ms(self) -> bool {
        matches!(self, SensorDriver::NxtUltrasonic)
    }

    /// The device address for a sensor on input port `port` (`in1`...).
    pub(crate) fn address(self, port_address: &str) -> String {
        match self {
            // I2C sensors add the bus address.
            SensorDriver::NxtUltrasonic => format!("{port_address}:i2c1"),
            _ => port_address.to_owned(),
        }
    }
}

/// Files that depend on the sensor mode: `mode`, `num_values`,
/// `bin_data_format`, `units`, `decimals`, `value0..` (all zero).
pub(crate) fn sensor_mode_files(mode: &SensorMode) -> Vec<AttrFile> {
    let (name, values, format, units, decimals) = *mode;
    let mut files = vec![
        text("mode", RW, name),
        text("num_values", RO, values.to_string()),
        text("bin_data_format", RO, format),
        text("units", RO, units),
        text("decimals", RO, decimals.to_string()),
    ];
    for i in 0..values {
        files.push(owned(format!("value{i}"), RO, "0"));
    }
    files
}

pub(crate) fn sensor(driver: SensorDriver, address: &str) -> Vec<AttrFile> {
    let modes: Vec<&str> = driver.modes().iter().map(|m| m.0).collect();
    let mut files = vec![
        text("address", RO, address),
        text("command", WO, ""),
        // No LEGO sensor on ev3dev-stretch has commands: an empty line.
        text("commands", RO, ""),
        text("driver_name", RO, driver.driver_name()),
        text("fw_version", RO, ""),
        text("modes", RO, modes.join(" ")),
        (Cow::Borrowed("bin_data"), RO, Cow::Owned(vec![0u8; 32])),
        uevent(driver.driver_name(), address),
    ];
    if driver.has_poll_ms() {
        files.push(text("poll_ms", RW, "50"));
    }
    files.extend(sensor_mode_files(&driver.modes()[0]));
    files
}

/// LED class device.
pub(crate) fn led(max_brightness: u32) -> Vec<AttrFile> {
    vec![
        text("brightness", RW, "0"),
        text("max_brightness", RO, max_brightness.to_string()),
        text(
            "trigger",
            RW,
            "none kbd-scrolllock kbd-numlock kbd-capslock kbd-kanalock kbd-shiftlock \
             kbd-altgrlock kbd-ctrllock kbd-altlock kbd-shiftllock kbd-shiftrlock kbd-ctrlllock \
             kbd-ctrlrlock [mmc0] timer oneshot heartbeat backlight gpio cpu0 default-on \
             transient panic",
        ),
        text("uevent", RO, ""),
    ]
}

/// The EV3 battery, `lego-ev3-battery`, with a rechargeable pack
/// (`Li-ion`) or AA cells (`Unknown`).
pub(crate) fn battery(rechargeable: bool) -> Vec<AttrFile> {
    let (technology, mode, max, min) = if rechargeable {
        ("Li-ion", RO, "84000000", "60000000")
    } else {
        ("Unknown", RW, "90000000", "48000000")
    };
    vec![
        text("type", RO, "Battery"),
        text("scope", RO, "System"),
        text("technology", mode, technology),
        text("voltage_now", RO, "7540000"),
        text("current_now", RO, "180000"),
        text("voltage_max_design", RO, max),
        text("voltage_min_design", RO, min),
        text("uevent", RO, "POWER_SUPPLY_NAME=lego-ev3-battery"),
    ]
}

/// A lego-port for EV3 port `port` (`in1`..`in4`, `outA`..`outD`).
pub(crate) fn lego_port(address: &str, input: bool) -> Vec<AttrFile> {
    let (driver, modes, status) = if input {
        (
            "ev3-input-port",
            "auto nxt-analog nxt-color nxt-i2c other-i2c ev3-analog ev3-uart other-uart raw",
            "no-sensor",
        )
    } else {
        (
            "ev3-output-port",
            "auto tacho-motor dc-motor led raw",
            "no-motor",
        )
    };
    vec![
        text("address", RO, address),
        text("driver_name", RO, driver),
        text("modes", RO, modes),
        text("mode", RW, "auto"),
        text("set_device", WO, ""),
        text("status", RO, status),
        uevent(driver, address),
    ]
}

fn uevent(driver: &str, address: &str) -> AttrFile {
    (
        Cow::Borrowed("uevent"),
        RO,
        Cow::Owned(format!("LEGO_DRIVER_NAME={driver}\nLEGO_ADDRESS={address}\n").into_bytes()),
    )
}
