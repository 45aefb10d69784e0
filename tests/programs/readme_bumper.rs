use ev3sysfs::prelude::*;

// A tank drives forward until its bumper is pressed.
fn main() -> Result<()> {
    let root = default_root(); // /sys/class on the brick
    let tank = Tank::large(&root, "outB", "outC")?;
    let bumper = TouchSensor::find(&root, "in1")?;
    // Ctrl-C, a panic or an error: the motors stop.
    let _guard = StopGuard::protecting(&tank)?;
    tank.on(Percent(50), Percent(50))?;
    bumper.wait_for(true, Duration::from_secs(30))?;
    tank.stop()
}
