//! embedded-hal 1.0 on the brick: a small "driver" written only against the
//! traits (any PWM output, any output pin, any input pin, any delay), used
//! with an EV3 motor, a brick LED and a touch sensor. The same driver runs
//! on a microcontroller board with its HAL.
//!
//!     cargo run --features hal --example hal_driver

use embedded_hal::delay::DelayNs;
use embedded_hal::digital::{InputPin, OutputPin};
use embedded_hal::pwm::SetDutyCycle;
use ev3sysfs::hal::Delay;
use ev3sysfs::led::Led;
use ev3sysfs::motor::TachoMotor;
use ev3sysfs::sensor::TouchSensor;
use ev3sysfs_sim::{Playground, SensorDriver, TachoDriver};

/// A conveyor belt: runs at a duty cycle with its lamp on until the stop
/// button is pressed.
struct Conveyor<M, L, B> {
    motor: M,
    lamp: L,
    stop_button: B,
}

impl<M: SetDutyCycle, L: OutputPin, B: InputPin> Conveyor<M, L, B> {
    fn run(&mut self, percent: u8, delay: &mut impl DelayNs, max_ms: u32) -> Result<u32, String> {
        let e = |e: &dyn core::fmt::Debug| format!("{e:?}");
        self.motor
            .set_duty_cycle_percent(percent)
            .map_err(|x| e(&x))?;
        self.lamp.set_high().map_err(|x| e(&x))?;
        let mut waited = 0;
        while waited < max_ms && !self.stop_button.is_high().map_err(|x| e(&x))? {
            delay.delay_ms(10);
            waited += 10;
        }
        self.motor.set_duty_cycle_fully_off().map_err(|x| e(&x))?;
        self.lamp.set_low().map_err(|x| e(&x))?;
        Ok(waited)
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let place = Playground::brick_or_simulated("tacho-motor", |tree| {
        tree.add_tacho_motor("outA", TachoDriver::Ev3Medium)?;
        tree.add_sensor("in1", SensorDriver::Ev3Touch).map(drop)
    })?;
    let root = place.root();
    let mut conveyor = Conveyor {
        motor: TachoMotor::find(root, "outA")?,
        lamp: Led::open(root, "led0:green:brick-status")?,
        stop_button: TouchSensor::find(root, "in1")?,
    };
    let ran = conveyor.run(40, &mut Delay, 1000)?;
    println!(
        "conveyor ran {ran} ms; motor at {} counts",
        conveyor.motor.position()?
    );
    Ok(())
}
