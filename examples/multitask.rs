//! Three tasks at once on one thread (feature `async`): an arm waves, the
//! drive base drives a square, and a button watcher reports Enter presses
//! and aborts everything on Back. No thread per task: `tasks::block_on`
//! runs them all on the main thread and sleeps in one `poll(2)` per
//! wake-up between their checks.
//!
//! On a brick: medium motor on outA (the arm), large motors on outB (left)
//! and outC (right), the brick's buttons. Elsewhere: a simulated brick in
//! real time, where someone presses Enter once after a second.
//!
//!     cargo run --example multitask --features async

use std::sync::Arc;

use ev3sysfs::buttons::{Button, Buttons};
use ev3sysfs::prelude::*;
use ev3sysfs::screen::Geometry;
use ev3sysfs::tasks::{self, block_on, or, zip};
use ev3sysfs_sim::{Playground, SimulatedIo, TachoDriver};

pub fn main() -> Result<()> {
    let place = Playground::brick_or_simulated("tacho-motor", |tree| {
        tree.add_tacho_motor("outA", TachoDriver::Ev3Medium)?;
        tree.add_tacho_motor("outB", TachoDriver::Ev3Large)?;
        tree.add_tacho_motor("outC", TachoDriver::Ev3Large)?;
        Ok(())
    })?;
    // The buttons: the brick's, or simulated ones beside the simulated brick.
    let simulated: Option<SimulatedIo> = match place.tree() {
        Some(tree) => Some(tree.add_brick_io(Geometry::EV3_MONO)?),
        None => None,
    };
    let buttons = match &simulated {
        Some(io) => Buttons::open(io.buttons_path())?,
        None => Buttons::open_default()?,
    };
    let root = place.root();
    let arm = TachoMotor::medium(root, "outA")?;
    let base = DriveBase::new(
        TachoMotor::large(root, "outB")?,
        TachoMotor::large(root, "outC")?,
        Millimetres(56),
        Millimetres(112),
    )?;
    let _guard = StopGuard::protecting(&arm)?;
    _guard.protect(base.left())?;
    _guard.protect(base.right())?;

    let io = simulated.map(Arc::new);
    let presser = io.clone().map(|io| {
        // Someone at the simulated brick presses Enter once.
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_secs(1));
            io.click(Button::Enter);
        })
    });

    let start = ev3sysfs::clock::Instant::now();
    let outcome = block_on(async {
        let arm_task = async {
            for _ in 0..3 {
                tasks::run_angle(&arm, DegPerSec(400), Degrees(60), Then::Hold).await?;
                tasks::run_angle(&arm, DegPerSec(400), Degrees(-60), Then::Hold).await?;
            }
            println!("arm: waved 3 times ({:?})", start.elapsed());
            Ok::<(), Error>(())
        };
        let drive_task = async {
            for side in 1..=4 {
                tasks::straight(&base, Millimetres(150)).await?;
                tasks::turn(&base, Degrees(90)).await?;
                println!("drive base: side {side} ({:?})", start.elapsed());
            }
            Ok::<(), Error>(())
        };
        let watcher = async {
            loop {
                match tasks::button_pressed(&buttons, None).await? {
                    Button::Backspace => {
                        base.stop()?;
                        arm.stop()?;
                        return Ok::<&str, Error>("aborted by Back");
                    }
                    b => println!("buttons: {b:?} pressed ({:?})", start.elapsed()),
                }
            }
        };
        let work = async {
            let (arm_done, drive_done) = zip(arm_task, drive_task).await;
            arm_done?;
            drive_done?;
            Ok("all done")
        };
        or(work, watcher).await
    })??;
    if let Some(presser) = presser {
        let _ = presser.join();
    }
    let pose = base.state()?;
    println!(
        "{outcome} in {:?} on one thread; robot at x {} y {}, heading {}",
        start.elapsed(),
        pose.x(),
        pose.y(),
        pose.heading()
    );
    Ok(())
}
