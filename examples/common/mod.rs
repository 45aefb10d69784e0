//! The worlds the robot examples (`bumper`, `line_follower`,
//! `arm_to_position`) run in when there is no brick: a simulated brick
//! ([`Playground`]) with the devices plugged in and the sensors scripted
//! from the motors' positions. Not robot code: on a brick each function
//! just returns the brick's devices.
#![allow(dead_code)]

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

use ev3sysfs::Result;
use ev3sysfs_sim::{MockDevice, Playground, SensorDriver, TachoDriver, World};

/// Wheel diameter and axle track of the simulated robot, mm.
const WHEEL_MM: f64 = 56.0;
const AXLE_MM: f64 = 112.0;

/// A brick's devices or a simulated brick; when simulated, says on drop
/// how the robot did.
pub struct Brick {
    place: Playground,
    report: Option<Box<dyn Fn()>>,
}

impl Brick {
    /// The class root to find devices under.
    pub fn root(&self) -> &std::path::Path {
        self.place.root()
    }
}

impl Drop for Brick {
    fn drop(&mut self) {
        if let Some(report) = &self.report {
            report();
        }
    }
}

/// Builds the simulated brick (`plug` plugs in the devices) unless a brick
/// with a tacho motor is here; then `script` scripts its sensors.
fn brick(
    plug: impl FnOnce(&ev3sysfs_sim::MockTree) -> Result<Vec<MockDevice>>,
    script: impl FnOnce(&mut ev3sysfs_sim::Simulator, Vec<MockDevice>),
) -> Result<Brick> {
    let mut devices = Vec::new();
    let place = Playground::brick_or_simulated("tacho-motor", |tree| {
        devices = plug(tree)?;
        Ok(())
    })?;
    if let Some(sim) = place.simulator() {
        println!(
            "(no brick here: a simulated one under {})",
            place.root().display()
        );
        sim.with(|s| script(s, devices));
    }
    Ok(Brick {
        place,
        report: None,
    })
}

fn tank_and(
    tree: &ev3sysfs_sim::MockTree,
    sensor: (&str, SensorDriver),
) -> Result<Vec<MockDevice>> {
    Ok(vec![
        tree.add_tacho_motor("outB", TachoDriver::Ev3Large)?,
        tree.add_tacho_motor("outC", TachoDriver::Ev3Large)?,
        tree.add_sensor(sensor.0, sensor.1)?,
    ])
}

/// Mean distance driven by both wheels, mm (EV3 large motors: 360 counts
/// per turn).
fn driven_mm(world: &World<'_>, left: &MockDevice, right: &MockDevice) -> f64 {
    let counts = (world.position(left) + world.position(right)) as f64 / 2.0;
    counts / 360.0 * std::f64::consts::PI * WHEEL_MM
}

/// Tank on outB/outC, touch sensor on in1: a wall 400 mm ahead presses the
/// bumper.
pub fn bumper_world() -> Result<Brick> {
    brick(
        |tree| tank_and(tree, ("in1", SensorDriver::Ev3Touch)),
        |sim, d| {
            let (left, right, touch) = (d[0].clone(), d[1].clone(), d[2].clone());
            sim.script_sensor(&touch, 0, move |w| {
                i64::from(driven_mm(w, &left, &right) >= 400.0)
            });
        },
    )
}

/// Tank on outB/outC, color sensor on in3, 60 mm ahead of the axle: the
/// floor is white (95 %) with a black disc (5 %) of radius 400 mm whose
/// edge passes under the sensor at the start, curving to the right. The
/// reflection ramps over the 30 mm around the edge. On drop, says how far
/// the sensor strayed from the edge after the first second.
pub fn line_world() -> Result<Brick> {
    let worst_um = Arc::new(AtomicI32::new(-1));
    let seen = Arc::clone(&worst_um);
    let mut brick = brick(
        |tree| tank_and(tree, ("in3", SensorDriver::Ev3Color)),
        move |sim, d| {
            let (left, right, color) = (d[0].clone(), d[1].clone(), d[2].clone());
            let (radius, ahead) = (400.0, 60.0);
            // Robot pose: axle centre (x forward, y right), heading clockwise.
            let (mut x, mut y, mut heading) = (-ahead, 0.0, 0.0f64);
            let mut last = (0i64, 0i64);
            sim.script_sensor(&color, 0, move |w| {
                let now = (w.position(&left), w.position(&right));
                let mm = |c: i64| c as f64 / 360.0 * std::f64::consts::PI * WHEEL_MM;
                let (dl, dr) = (mm(now.0 - last.0), mm(now.1 - last.1));
                last = now;
                heading += (dl - dr) / AXLE_MM;
                x += (dl + dr) / 2.0 * heading.cos();
                y += (dl + dr) / 2.0 * heading.sin();
                let (sx, sy) = (x + ahead * heading.cos(), y + ahead * heading.sin());
                let off = (sx * sx + (sy - radius) * (sy - radius)).sqrt() - radius;
                if w.time.as_millis() > 1000 {
                    worst_um.fetch_max(
                        (off.abs() * 1000.0).min(f64::from(i32::MAX)) as i32,
                        Ordering::Relaxed,
                    );
                }
                (50.0 + off * 3.0).clamp(5.0, 95.0).round() as i64
            });
        },
    )?;
    if brick.place.is_simulated() {
        brick.report = Some(Box::new(move || {
            let um = seen.load(Ordering::Relaxed);
            println!("(simulated: the sensor stayed within {um} um of the edge)");
        }));
    }
    Ok(brick)
}

/// Medium motor on outC: the arm turns between end stops 200 degrees
/// below and 300 above where it starts.
pub fn arm_world() -> Result<Brick> {
    brick(
        |tree| Ok(vec![tree.add_tacho_motor("outC", TachoDriver::Ev3Medium)?]),
        |sim, d| sim.end_stops(&d[0], Some((-200, 300))),
    )
}
