//! The brick LEDs: colors, then a blinking timer trigger, then back to the
//! default.
//!
//!     cargo run --example leds

use std::time::Duration;

use ev3sysfs::led::{BrickLeds, LedColor, Side};
use ev3sysfs_sim::Playground;

fn main() -> ev3sysfs::Result<()> {
    // A simulated brick already has its four LEDs.
    let place = Playground::brick_or_simulated("leds", |_| Ok(()))?;
    let leds = BrickLeds::open(place.root())?;
    for (name, color) in [
        ("red", LedColor::RED),
        ("green", LedColor::GREEN),
        ("amber", LedColor::AMBER),
        ("orange", LedColor::ORANGE),
    ] {
        println!("{name}");
        leds.set_all(color)?;
        std::thread::sleep(Duration::from_millis(400));
    }
    leds.set_color(Side::Left, LedColor::OFF)?;
    println!(
        "left trigger: {}, right green at {}",
        leds.left_green.trigger()?,
        leds.right_green.brightness()?
    );
    if !place.is_simulated() {
        // The mock has no trigger logic (no timer files appear there).
        leds.right_green.set_timer(100, 400)?;
        std::thread::sleep(Duration::from_secs(2));
    }
    leds.set_all(LedColor::GREEN)
}
