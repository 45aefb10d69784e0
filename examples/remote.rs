//! Drive a tank with the EV3 IR remote, joystick style: on channel 1, red
//! up/down drive the left motor forward/backward, blue up/down the right
//! one; the beacon button ends the program. Every change comes as a typed
//! event (channel, buttons now and before).
//!
//! On a brick: large motors on outB (left) and outC (right), IR sensor on
//! in4. Elsewhere: a simulated brick where a simulated thumb presses both
//! ups, then red up alone (a turn), then the beacon button.
//!
//!     cargo run --example remote

use ev3sysfs::prelude::*;
use ev3sysfs::sensor::{Remote, RemoteButtons};
use ev3sysfs_sim::{MockDevice, Playground, SensorDriver, TachoDriver};

pub fn main() -> Result<()> {
    let mut ir_mock: Option<MockDevice> = None;
    let place = Playground::brick_or_simulated("tacho-motor", |tree| {
        tree.add_tacho_motor("outB", TachoDriver::Ev3Large)?;
        tree.add_tacho_motor("outC", TachoDriver::Ev3Large)?;
        ir_mock = Some(tree.add_sensor("in4", SensorDriver::Ev3Infrared)?);
        Ok(())
    })?;
    let tank = Tank::large(place.root(), "outB", "outC")?;
    let ir = InfraredSensor::find(place.root(), "in4")?;
    let _guard = StopGuard::protecting(&tank)?;
    let mut remote = Remote::new(&ir)?;
    let thumb = ir_mock.map(|ir| {
        std::thread::spawn(move || {
            // IR-REMOTE codes on channel 1: 5 both ups, 1 red up, 9 beacon.
            for (code, ms) in [(5, 800), (1, 400), (0, 200), (9, 100)] {
                let _ = ir.set_int("value0", code);
                std::thread::sleep(Duration::from_millis(ms));
            }
        })
    });

    let start = std::time::Instant::now();
    loop {
        let Some(event) = remote.wait_on(1, Duration::from_secs(60))? else {
            println!("no remote for a minute: stopping");
            break;
        };
        println!(
            "{:>5} ms  channel {}: pressed {}, released {}",
            start.elapsed().as_millis(),
            event.channel,
            event.pressed(),
            event.released()
        );
        if event.buttons.beacon {
            break;
        }
        let (left, right) = event.buttons.tank(Percent(60));
        tank.on(left, right)?;
    }
    tank.stop()?;
    if let Some(thumb) = thumb {
        let _ = thumb.join();
    }
    let held: RemoteButtons = remote.buttons(1);
    println!("done (holding {held})");
    Ok(())
}
