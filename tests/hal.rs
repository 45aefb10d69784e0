//! embedded-hal 1.0: code written only against the traits drives mock
//! motors, LEDs and a touch sensor; the I2C bus of an input port.
#![cfg(feature = "hal")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::time::{Duration, Instant};

use embedded_hal::delay::DelayNs;
use embedded_hal::digital::{InputPin, OutputPin, StatefulOutputPin};
use embedded_hal::pwm::{self, SetDutyCycle};
use ev3sysfs::hal::Delay;
use ev3sysfs::led::Led;
use ev3sysfs::motor::{DcMotor, TachoMotor};
use ev3sysfs::port::LegoPort;
use ev3sysfs::sensor::TouchSensor;
use ev3sysfs::Error;
use ev3sysfs_sim::{SensorDriver, TachoDriver};

/// Knows nothing of ev3sysfs: any PWM output, any pin, any input, any delay.
fn conveyor<M, L, B, D>(
    motor: &mut M,
    lamp: &mut L,
    button: &mut B,
    delay: &mut D,
) -> Result<bool, String>
where
    M: SetDutyCycle,
    L: OutputPin + StatefulOutputPin,
    B: InputPin,
    D: DelayNs,
{
    let e = |e: &dyn core::fmt::Debug| format!("{e:?}");
    if button.is_high().map_err(|x| e(&x))? {
        motor.set_duty_cycle_fully_off().map_err(|x| e(&x))?;
        lamp.set_low().map_err(|x| e(&x))?;
        return Ok(false);
    }
    motor.set_duty_cycle_percent(60).map_err(|x| e(&x))?;
    lamp.set_high().map_err(|x| e(&x))?;
    delay.delay_ms(2);
    lamp.is_set_high().map_err(|x| e(&x))
}

#[test]
fn generic_code_drives_mock_devices() {
    let Some(tree) = common::ev3_brick() else {
        return;
    };
    let motor_mock = tree
        .add_tacho_motor("outA", TachoDriver::Ev3Medium)
        .unwrap();
    let dc_mock = tree.add_dc_motor("outB").unwrap();
    let touch_mock = tree.add_sensor("in1", SensorDriver::Ev3Touch).unwrap();
    let root = tree.root();
    let mut motor = TachoMotor::find(root, "outA").unwrap();
    let mut lamp = Led::open(root, "led0:green:brick-status").unwrap();
    let mut button = TouchSensor::find(root, "in1").unwrap();

    assert!(conveyor(&mut motor, &mut lamp, &mut button, &mut Delay).unwrap());
    assert_eq!(motor_mock.last_written("command").unwrap(), "run-direct");
    assert_eq!(motor_mock.read_int("duty_cycle_sp").unwrap(), 60);
    assert_eq!(lamp.brightness().unwrap(), 255);

    touch_mock.set_int("value0", 1).unwrap();
    assert!(!conveyor(&mut motor, &mut lamp, &mut button, &mut Delay).unwrap());
    assert_eq!(motor_mock.read_int("duty_cycle_sp").unwrap(), 0);
    assert!(lamp.is_set_low().unwrap());
    assert!(button.is_high().unwrap() && !button.is_low().unwrap());

    let mut dc = DcMotor::find(root, "outB").unwrap();
    dc.set_duty_cycle_fraction(1, 4).unwrap();
    assert_eq!(dc_mock.read_int("duty_cycle_sp").unwrap(), 25);
    assert_eq!(dc_mock.last_written("command").unwrap(), "run-direct");
}

#[test]
fn duty_and_errors() {
    let Some(tree) = common::ev3_brick() else {
        return;
    };
    let mock = tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    let mut motor = TachoMotor::find(tree.root(), "outA").unwrap();
    assert_eq!(motor.max_duty_cycle(), 100);
    let err = motor.set_duty_cycle(101).unwrap_err();
    assert!(matches!(
        err,
        Error::OutOfRange {
            attribute: "duty_cycle_sp",
            value: 101,
            ..
        }
    ));
    assert_eq!(pwm::Error::kind(&err), pwm::ErrorKind::Other);
    assert_eq!(mock.last_written("command").unwrap(), "", "nothing written");
    // The cause stays reachable: unplugged is Disconnected with its errno.
    tree.unplug(&mock).unwrap();
    let err = motor.set_duty_cycle(10).unwrap_err();
    assert!(err.is_disconnected());
    assert!(std::error::Error::source(&err).is_some());

    let mut led = Led::open(tree.root(), "led1:red:brick-status").unwrap();
    assert_eq!(led.max_duty_cycle(), 255);
    led.set_duty_cycle_fraction(1, 2).unwrap();
    assert_eq!(led.brightness().unwrap(), 127);
    assert!(led.set_duty_cycle(256).is_err());
    led.toggle().unwrap();
    assert!(led.is_set_low().unwrap());
}

#[test]
fn delay_sleeps() {
    let start = Instant::now();
    Delay.delay_ms(20);
    Delay.delay_us(500);
    assert!(start.elapsed() >= Duration::from_micros(20_500));
}

#[test]
fn i2c_bus_of_an_input_port() {
    let Some(tree) = common::ev3_brick() else {
        return;
    };
    let dev = common::TempDir::new("i2c-dev");
    let port = LegoPort::find(tree.root(), "in2").unwrap();
    // Nothing plugged in: no bus node.
    let Err(err) = port.i2c_bus_in(dev.path()) else {
        panic!("no bus expected")
    };
    assert!(err.is_disconnected(), "{err:?}");
    assert!(err.to_string().contains("i2c-4"), "{err}");
    assert_eq!(
        port.mode().unwrap(),
        "other-i2c",
        "the port was switched first"
    );
    // A node that is no I2C adapter: the ioctl fails, clearly.
    std::fs::write(dev.path().join("i2c-in2"), "").unwrap();
    let Err(err) = port.i2c_bus_in(dev.path()) else {
        panic!("not an adapter")
    };
    assert!(err.to_string().contains("i2c-in2"), "{err}");
    assert!(err.errno().is_some());
    // Output ports have no I2C bus.
    let out = LegoPort::find(tree.root(), "outA").unwrap();
    assert!(matches!(
        out.i2c_bus_in(dev.path()),
        Err(Error::NotOffered { .. })
    ));
}
