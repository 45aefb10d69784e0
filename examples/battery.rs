//! Battery voltage and current.
//!
//!     cargo run --example battery

use ev3sysfs::power::PowerSupply;
use ev3sysfs_sim::Playground;

fn main() -> ev3sysfs::Result<()> {
    let place = Playground::brick_or_simulated("power_supply", |_| Ok(()))?;
    let battery = PowerSupply::battery(place.root())?;
    let (mv, ma) = (battery.voltage_mv()?, battery.current_ma()?);
    println!(
        "{}: {}.{:03} V, {ma} mA",
        battery.technology()?,
        mv / 1000,
        mv % 1000
    );
    // Not voltage_min_design: the stretch driver reports it ten times too
    // high (60000000 µV for the pack). A pack is low below about 7.0 V, six
    // AA cells below about 6.5 V.
    let low = if battery.technology()? == "Li-ion" {
        7000
    } else {
        6500
    };
    if mv < low {
        println!("low: charge or replace the batteries");
    }
    Ok(())
}
