//! The attribute I/O core on its own: open a tacho motor's directory, write
//! setpoints and commands, read values back. One `pwrite` per write, one
//! `pread` per read once the attributes are open.
//!
//! On a brick it uses the first tacho motor; elsewhere it builds a mock tree
//! (nothing moves there: the mock records what was written).
//!
//!     cargo run --example raw_attributes

use ev3sysfs::mock::{MockTree, TachoDriver};
use ev3sysfs::SysfsDevice;

fn main() -> ev3sysfs::Result<()> {
    let root = ev3sysfs::default_root();
    let motors = ev3sysfs::list(&root, "tacho-motor")?;
    // Keep the mock tree alive for as long as the device is used.
    let (_mock, motor) = match motors.first() {
        Some(info) => (None, SysfsDevice::from_dir(&info.path)?),
        None => {
            let tree = MockTree::new()?;
            let mock = tree.add_tacho_motor("outA", TachoDriver::Ev3Large)?;
            println!(
                "no tacho motor under {}: using a mock tree at {}",
                root.display(),
                tree.root().display()
            );
            let motor = SysfsDevice::open(tree.root(), "tacho-motor", &mock.name())?;
            (Some(tree), motor)
        }
    };
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
