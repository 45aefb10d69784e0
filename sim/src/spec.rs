//! The drivers the simulated brick knows: kernel driver names and what
//! differs between drivers of one class (`max_speed`, sensor modes). The
//! device models in [`crate::models`] behave by these tables.

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

    /// Every sensor driver the mock knows.
    pub const ALL: [SensorDriver; 10] = [
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
    ];

    /// The driver for a kernel `driver_name`.
    pub fn from_driver_name(name: &str) -> Option<SensorDriver> {
        SensorDriver::ALL
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

    /// The device address for a sensor on input port `port` (`in1`...).
    pub(crate) fn address(self, port_address: &str) -> String {
        match self {
            // I2C sensors add the bus address.
            SensorDriver::NxtUltrasonic => format!("{port_address}:i2c1"),
            _ => port_address.to_owned(),
        }
    }
}
