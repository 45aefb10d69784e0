//! The device models of the simulated brick, and the factory that makes one
//! for a kernel driver name: what a lego driver's `probe()` is to the
//! kernel. Each model answers its class's attribute reads and writes as the
//! ev3dev-stretch drivers do (see [`crate::kobject`]).

#[path = "board.rs"]
pub(crate) mod board;
#[path = "kernel.rs"]
pub(crate) mod kernel;
#[path = "led.rs"]
pub(crate) mod led;
#[path = "motors.rs"]
pub(crate) mod motors;
#[path = "port.rs"]
pub(crate) mod port;
#[path = "sensor.rs"]
pub(crate) mod sensor;
#[path = "tacho.rs"]
pub(crate) mod tacho;

use crate::kobject::Model;
use crate::{SensorDriver, TachoDriver};

/// The model for a device of kernel driver `driver` at `address` (a port
/// address such as `ev3-ports:outA`; an I2C sensor's address carries its
/// bus address, `ev3-ports:in1:i2c1`; a servo's its channel,
/// `ev3-ports:in1:i2c88:sv1`). `None` for a driver name no model knows.
pub(crate) fn create(driver: &str, address: &str) -> Option<Box<dyn Model>> {
    if let Some(tacho) = TachoDriver::from_driver_name(driver) {
        return Some(Box::new(tacho::TachoMotor::new(tacho, address)));
    }
    if let Some(sensor) = SensorDriver::from_driver_name(driver) {
        return Some(Box::new(sensor::Sensor::new(sensor, address)));
    }
    match driver {
        motors::DC_DRIVER => Some(Box::new(motors::DcMotor::new(address))),
        motors::SERVO_DRIVER => Some(Box::new(motors::ServoMotor::new(address))),
        _ => None,
    }
}

/// An LED class device called `name` (`led0:green:brick-status`): the
/// brick's LEDs start on the `mmc0` trigger, an output port's `rcx-led`
/// (`ev3-ports:outA::brick-status`) on `none`.
pub(crate) fn create_led(name: &str, max_brightness: u32) -> Box<dyn Model> {
    Box::new(led::Led::new(name, max_brightness))
}

/// The EV3 battery `lego-ev3-battery`: a rechargeable pack (`Li-ion`) or
/// AA cells (`Unknown`).
pub(crate) fn create_battery(rechargeable: bool) -> Box<dyn Model> {
    Box::new(board::Battery::new(rechargeable))
}

/// The lego-port of EV3 port `address` (`ev3-ports:in1`..`ev3-ports:outD`).
pub(crate) fn create_port(address: &str) -> Box<dyn Model> {
    Box::new(port::LegoPort::new(address))
}

/// The `board-info` class device `board0`.
pub(crate) fn create_board_info() -> Box<dyn Model> {
    Box::new(board::BoardInfo)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factory_knows_the_kernel_driver_names() {
        for (driver, class) in [
            ("lego-ev3-l-motor", "tacho-motor"),
            ("lego-ev3-m-motor", "tacho-motor"),
            ("lego-nxt-motor", "tacho-motor"),
            ("rcx-motor", "dc-motor"),
            ("ms-8ch-servo", "servo-motor"),
            ("lego-ev3-touch", "lego-sensor"),
            ("lego-ev3-color", "lego-sensor"),
            ("lego-ev3-us", "lego-sensor"),
            ("lego-ev3-gyro", "lego-sensor"),
            ("lego-ev3-ir", "lego-sensor"),
            ("lego-nxt-touch", "lego-sensor"),
            ("lego-nxt-light", "lego-sensor"),
            ("lego-nxt-sound", "lego-sensor"),
            ("lego-nxt-us", "lego-sensor"),
            ("nxt-analog", "lego-sensor"),
        ] {
            let model = create(driver, "ev3-ports:outA");
            assert_eq!(model.map(|m| m.class()), Some(class), "{driver}");
        }
        assert!(create("no-such-driver", "ev3-ports:in1").is_none());
        assert_eq!(create_led("led0:red:brick-status", 255).class(), "leds");
        assert_eq!(create_battery(true).class(), "power_supply");
        assert_eq!(create_port("ev3-ports:in1").class(), "lego-port");
        assert_eq!(create_board_info().class(), "board-info");
    }
}
