//! The attribute I/O core on its own: open a tacho motor's directory, write
//! setpoints and commands, read values back. One `pwrite` per write, one
//! `pread` per read once the attributes are open.
//!
//! On a brick it uses the first tacho motor; elsewhere a simulated one.
//!
//!     cargo run --example raw_attributes

use ev3sysfs::SysfsDevice;
use ev3sysfs_sim::{Playground, TachoDriver};

fn main() -> ev3sysfs::Result<()> {
    let place = Playground::brick_or_simulated("tacho-motor", |tree| {
        tree.add_tacho_motor("outA", TachoDriver::Ev3Large)
            .map(drop)
    })?;
    if place.is_simulated() {
        println!(
            "no tacho motor here: simulating one under {}",
            place.root().display()
        );
    }
    let motors = ev3sysfs::list(place.root(), "tacho-motor")?;
    let Some(info) = motors.first() else {
        return Err(ev3sysfs::Error::NotFound {
            what: "tacho-motor".into(),
            seen: String::new(),
        });
    };
    let motor = SysfsDevice::from_dir(&info.path)?;
    println!(
        "{}: {} on {}",
        motor.dir().display(),
        motor.read_string("driver_name")?,
        motor.read_string("address")?
    );
    let max_speed = motor.read_int("max_speed")?;
    motor.preopen(&["speed_sp", "command", "position", "state"])?;

    motor.write_int("speed_sp", i64::from(max_speed / 4))?;
    motor.write_str("command", "run-forever")?;
    for _ in 0..5 {
        std::thread::sleep(std::time::Duration::from_millis(100));
        let state = motor.read_string("state")?;
        println!(
            "position {:>6}  state [{state}]",
            motor.read_int("position")?
        );
    }
    motor.write_str("command", "stop")?;
    Ok(())
}
