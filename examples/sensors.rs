//! Read every sensor type that is plugged in: touch, color, ultrasonic,
//! gyro, infrared. Elsewhere: a simulated brick with one of each and some
//! scripted values.
//!
//!     cargo run --example sensors

use ev3sysfs::sensor::{
    ColorSensor, GyroSensor, InfraredSensor, Sensor, TouchSensor, UltrasonicSensor,
};
use ev3sysfs_sim::{Playground, SensorDriver};

fn main() -> ev3sysfs::Result<()> {
    let place = Playground::brick_or_simulated("lego-sensor", |tree| {
        tree.add_sensor("in1", SensorDriver::Ev3Touch)?;
        tree.add_sensor("in2", SensorDriver::Ev3Color)?
            .set_int("value0", 42)?;
        tree.add_sensor("in3", SensorDriver::Ev3Ultrasonic)?
            .set_int("value0", 1234)?;
        tree.add_sensor("in4", SensorDriver::Ev3Gyro)?
            .set_int("value0", -15)?;
        Ok(())
    })?;
    let root = place.root();
    for info in ev3sysfs::list(root, "lego-sensor")? {
        let sensor = Sensor::from_device(ev3sysfs::SysfsDevice::from_dir(&info.path)?)?;
        println!(
            "{} on {}: mode {} ({} values, units {:?})",
            info.driver_name,
            info.address,
            sensor.mode(),
            sensor.num_values(),
            sensor.units()
        );
        let port = info.address.as_str();
        match info.driver_name.as_str() {
            "lego-ev3-touch" | "lego-nxt-touch" => {
                println!("  pressed: {}", TouchSensor::find(root, port)?.pressed()?)
            }
            "lego-ev3-color" => println!(
                "  reflected: {} %",
                ColorSensor::find(root, port)?.reflected()?
            ),
            "lego-ev3-us" | "lego-nxt-us" => println!(
                "  distance: {} mm",
                UltrasonicSensor::find(root, port)?.distance_mm()?
            ),
            "lego-ev3-gyro" => println!(
                "  angle: {} degrees",
                GyroSensor::find(root, port)?.angle()?
            ),
            "lego-ev3-ir" => println!(
                "  proximity: {}",
                InfraredSensor::find(root, port)?.proximity()?
            ),
            _ => println!("  value0: {}", sensor.scaled(0)?),
        }
    }
    Ok(())
}
