//! [`LiveWorld`]: a world running on a simulated brick, tick by tick.

use std::fmt::Write as _;
use std::time::Duration;

use super::geometry::{segment_distance, Polygon, Pose, Vec2};
use super::mat::Shape;
use super::report::WorldReport;
use super::sensors::{self, Scene};
use super::spec::{Mount, WorldSpec};
use crate::error::Result;
use crate::models::sensor::Sensor;
use crate::models::tacho::TachoMotor;
use crate::{MockDevice, MockTree};

/// Counts per turn of every EV3 and NXT tacho motor.
const COUNTS_PER_TURN: f64 = 360.0;
/// How far ahead of the robot an obstacle counts as "the wall", mm.
const NEAR_MM: f64 = 200.0;

/// A sensor in the world and its gyro state.
#[derive(Debug)]
struct Placed {
    mount: Mount,
    device: MockDevice,
    resets: u64,
    zero_turned: f64,
    zero_time: Duration,
}

/// A world running on a simulated brick's devices: see the [module
/// docs](super).
#[derive(Debug)]
pub struct LiveWorld {
    spec: WorldSpec,
    devices: Vec<(String, MockDevice)>,
    pose: Pose,
    /// Heading change since the start, unwrapped, radians.
    turned: f64,
    rate: f64,
    wheels: Option<[(MockDevice, f64); 2]>,
    sensors: Vec<Placed>,
    blocked: bool,
    time: Duration,
    driven: f64,
    moved_at: Duration,
    lap: Option<Lap>,
    trace: Option<(u32, String)>,
}

/// Progress along the track's closed line.
#[derive(Debug)]
struct Lap {
    line: usize,
    length: f64,
    last: Option<f64>,
    progress: f64,
    done: Option<Duration>,
}

impl LiveWorld {
    /// Plugs the devices of `spec` into `tree` and places the robot at its
    /// start.
    ///
    /// # Errors
    /// Errors plugging a device.
    pub fn plug(tree: &MockTree, spec: &WorldSpec) -> Result<LiveWorld> {
        let mut devices = Vec::new();
        for (port, driver) in &spec.ports {
            devices.push((port.clone(), tree.plug(port, driver)?));
        }
        let find = |port: &str| {
            devices
                .iter()
                .find(|(p, _)| p == port)
                .map(|(_, d)| d.clone())
        };
        let wheels = spec.drive.as_ref().and_then(|d| {
            let (l, r) = (find(&d.left)?, find(&d.right)?);
            set_drag(&l, d.drag[0]);
            set_drag(&r, d.drag[1]);
            Some([(l, 0.0), (r, 0.0)])
        });
        for (port, stops) in &spec.arms {
            if let Some(device) = find(port) {
                set_end_stops(&device, *stops);
            }
        }
        let sensors = spec
            .sensors
            .iter()
            .filter_map(|m| {
                Some(Placed {
                    mount: m.clone(),
                    device: find(&m.port)?,
                    resets: 0,
                    zero_turned: 0.0,
                    zero_time: Duration::ZERO,
                })
            })
            .collect();
        let lap = spec
            .mat
            .shapes
            .iter()
            .position(|(s, _)| matches!(s, Shape::Line { closed: true, .. }))
            .map(|line| Lap {
                line,
                length: line_length(&spec.mat.shapes[line].0),
                last: None,
                progress: 0.0,
                done: None,
            });
        let mut world = LiveWorld {
            spec: spec.clone(),
            devices,
            pose: spec.drive.as_ref().map(|d| d.start).unwrap_or_default(),
            turned: 0.0,
            rate: 0.0,
            wheels,
            sensors,
            blocked: false,
            time: Duration::ZERO,
            driven: 0.0,
            moved_at: Duration::ZERO,
            lap,
            trace: None,
        };
        world.sense();
        Ok(world)
    }

    /// The world's description.
    pub fn spec(&self) -> &WorldSpec {
        &self.spec
    }

    /// The devices the world plugged in, by port.
    pub fn devices(&self) -> &[(String, MockDevice)] {
        &self.devices
    }

    /// Takes `device`, plugged (again) into `port`, as the world's device
    /// there: a wheel, an arm (its end stops as the world file says, from where
    /// plugged in again: around where it is now) or a sensor. For a control
    /// line's `plug`.
    pub fn replugged(&mut self, port: &str, device: &MockDevice) {
        match self.devices.iter_mut().find(|(p, _)| p == port) {
            Some((_, d)) => *d = device.clone(),
            None => return,
        }
        if let (Some(drive), Some(wheels)) = (&self.spec.drive, &mut self.wheels) {
            for (i, wheel) in [&drive.left, &drive.right].iter().enumerate() {
                if wheel.as_str() == port {
                    wheels[i] = (device.clone(), 0.0);
                    set_drag(device, drive.drag[i]);
                }
            }
        }
        if let Some((_, stops)) = self.spec.arms.iter().find(|(p, _)| p == port) {
            set_end_stops(device, *stops);
        }
        for placed in &mut self.sensors {
            if placed.mount.port == port {
                placed.device = device.clone();
                placed.resets = 0;
                placed.zero_turned = self.turned;
                placed.zero_time = self.time;
            }
        }
        self.sense();
    }

    /// The robot's footprint now (corners in the arena, mm), if it has one.
    pub fn footprint_now(&self) -> Vec<Vec2> {
        self.footprint(&self.pose).map(|p| p.0).unwrap_or_default()
    }

    /// Where each sensor is now: port and point in the arena (a touch
    /// sensor's tip, a colour sensor's spot).
    pub fn sensor_points(&self) -> Vec<(String, Vec2)> {
        self.sensors
            .iter()
            .map(|s| {
                (
                    s.mount.port.clone(),
                    self.pose.point(s.mount.at.0, s.mount.at.1),
                )
            })
            .collect()
    }

    /// The robot's pose.
    pub fn pose(&self) -> Pose {
        self.pose
    }

    /// Puts the robot at `pose` (a hand lifting it): the motors keep their
    /// positions, the gyro sees the turn.
    pub fn move_robot(&mut self, pose: Pose) {
        self.turned += pose.heading - self.pose.heading;
        self.pose = pose;
        self.set_blocked(false);
        self.sense();
    }

    /// Records a trace line (JSON: time, pose, motor positions, sensor
    /// values) every `every` of simulated time (rounded to 2 ms ticks);
    /// [`LiveWorld::take_trace`] collects them.
    pub fn trace_every(&mut self, every: Duration) {
        let ticks = every.as_millis().div_ceil(2).max(1);
        self.trace = Some((u32::try_from(ticks).unwrap_or(u32::MAX), String::new()));
    }

    /// The trace lines recorded since the last call.
    pub fn take_trace(&mut self) -> String {
        self.trace
            .as_mut()
            .map(|(_, t)| std::mem::take(t))
            .unwrap_or_default()
    }

    /// One tick of `dt` (the simulator calls it after the devices ticked):
    /// the robot moves as its wheels turned, unless an obstacle stops it;
    /// then every sensor measures.
    pub fn tick(&mut self, dt: Duration) {
        self.time += dt;
        self.drive(dt.as_secs_f64());
        self.sense();
        self.track_lap();
        let tick = (self.time.as_millis() / 2) as u64;
        if let Some((every, _)) = &self.trace {
            if tick.is_multiple_of(u64::from(*every)) {
                let line = self.trace_line();
                if let Some((_, out)) = &mut self.trace {
                    out.push_str(&line);
                }
            }
        }
    }

    fn drive(&mut self, dt: f64) {
        let Some(drive) = self.spec.drive.clone() else {
            return;
        };
        let Some(wheels) = &mut self.wheels else {
            return;
        };
        let mm_per_count = std::f64::consts::PI * drive.wheel_diameter / COUNTS_PER_TURN;
        let mut moved = [0.0; 2];
        let mut wanted = [0.0; 2];
        for (i, (device, last)) in wheels.iter_mut().enumerate() {
            let now = device
                .with_model(|m, _| {
                    let motor = m.as_any().downcast_ref::<TachoMotor>()?;
                    Some((motor.shaft_position(), motor.wanted_speed()))
                })
                .ok()
                .flatten();
            let Some((shaft, speed)) = now else { continue };
            moved[i] = (shaft - *last) * mm_per_count;
            *last = shaft;
            wanted[i] = speed * dt * mm_per_count;
        }
        let before = self.pose;
        if self.blocked {
            // Pushing against the obstacle, or free to back away?
            let (trial, _) = advance(before, wanted[0], wanted[1], drive.axle_track);
            if !self.collides(&trial) {
                self.set_blocked(false);
            }
            self.rate = 0.0;
            return;
        }
        let (next, dtheta) = advance(before, moved[0], moved[1], drive.axle_track);
        if self.collides(&next) {
            self.set_blocked(true);
            self.rate = 0.0;
            return;
        }
        self.pose = next;
        self.turned += dtheta;
        self.rate = dtheta / dt;
        let step = Vec2::new(next.x - before.x, next.y - before.y).length();
        self.driven += step;
        if step > 1e-6 || dtheta.abs() > 1e-9 {
            self.moved_at = self.time;
        }
    }

    fn set_blocked(&mut self, blocked: bool) {
        self.blocked = blocked;
        if let Some(wheels) = &self.wheels {
            for (device, _) in wheels {
                let _ = device.with_model(|m, _| {
                    if let Some(motor) = m.as_any_mut().downcast_mut::<TachoMotor>() {
                        motor.set_blocked(blocked);
                    }
                });
            }
        }
    }

    /// The robot's footprint at `pose`.
    fn footprint(&self, pose: &Pose) -> Option<Polygon> {
        let d = self.spec.drive.as_ref()?;
        let w = d.width / 2.0;
        Some(Polygon(vec![
            pose.point(d.front, w),
            pose.point(-d.back, w),
            pose.point(-d.back, -w),
            pose.point(d.front, -w),
        ]))
    }

    fn collides(&self, pose: &Pose) -> bool {
        self.footprint(pose)
            .is_some_and(|body| self.spec.obstacles.iter().any(|r| body.overlaps(r)))
    }

    /// Every sensor measures, in every mode.
    fn sense(&mut self) {
        let (pose, turned, rate, time) = (self.pose, self.turned, self.rate, self.time);
        let (obstacles, mat) = (&self.spec.obstacles, &self.spec.mat);
        for placed in &mut self.sensors {
            let _ = placed.device.with_model(|m, fx| {
                let Some(sensor) = m.as_any_mut().downcast_mut::<Sensor>() else {
                    return;
                };
                if sensor.resets() != placed.resets {
                    placed.resets = sensor.resets();
                    placed.zero_turned = turned;
                    placed.zero_time = time;
                }
                let scene = Scene {
                    pose,
                    obstacles,
                    mat,
                    turned: turned - placed.zero_turned,
                    rate,
                    since_reset: (time - placed.zero_time).as_secs_f64(),
                };
                for (i, v) in sensors::values(&placed.mount, &scene) {
                    sensor.set_mode_values(i, &v, fx);
                }
            });
        }
    }

    /// Follows the first colour sensor's progress along the closed line.
    fn track_lap(&mut self) {
        let Some(lap) = &mut self.lap else { return };
        if lap.done.is_some() {
            return;
        }
        let at = self
            .spec
            .sensors
            .iter()
            .find(|m| m.driver == crate::SensorDriver::Ev3Color)
            .map_or((0.0, 0.0), |m| m.at);
        let p = self.pose.point(at.0, at.1);
        let s = arc_position(&self.spec.mat.shapes[lap.line].0, p);
        if let Some(last) = lap.last {
            let mut ds = s - last;
            if ds > lap.length / 2.0 {
                ds -= lap.length;
            } else if ds < -lap.length / 2.0 {
                ds += lap.length;
            }
            lap.progress += ds;
        }
        lap.last = Some(s);
        if lap.progress.abs() >= lap.length {
            lap.done = Some(self.time);
        }
    }

    fn trace_line(&self) -> String {
        let mut line = format!(
            "{{\"t_ms\":{},\"x\":{:.3},\"y\":{:.3},\"heading\":{:.3}",
            self.time.as_millis(),
            self.pose.x,
            self.pose.y,
            self.pose.heading_degrees()
        );
        for (port, device) in &self.devices {
            let value = match device.class() {
                "tacho-motor" => device.read_int("position").ok().map(|p| p.to_string()),
                "lego-sensor" => {
                    let n = device.read_int("num_values").unwrap_or(0);
                    let v: Vec<String> = (0..n)
                        .filter_map(|i| device.read_int(&format!("value{i}")).ok())
                        .map(|v| v.to_string())
                        .collect();
                    Some(format!("[{}]", v.join(",")))
                }
                _ => None,
            };
            if let Some(v) = value {
                let _ = write!(line, ",\"{port}\":{v}");
            }
        }
        line.push_str("}\n");
        line
    }

    /// What happened so far.
    pub fn report(&self) -> WorldReport {
        let arms = self
            .spec
            .arms
            .iter()
            .filter_map(|(port, stops)| {
                let (_, device) = self.devices.iter().find(|(p, _)| p == port)?;
                let shaft = device
                    .with_model(|m, _| {
                        m.as_any()
                            .downcast_ref::<TachoMotor>()
                            .map(TachoMotor::shaft_position)
                    })
                    .ok()
                    .flatten()?;
                Some((port.clone(), shaft / COUNTS_PER_TURN * 360.0, *stops))
            })
            .collect();
        WorldReport {
            world: self.spec.name.clone(),
            time: self.time,
            pose: self.pose,
            driven_mm: self.driven,
            from_start_mm: self.spec.drive.as_ref().map_or(0.0, |d| {
                Vec2::new(self.pose.x - d.start.x, self.pose.y - d.start.y).length()
            }),
            stopped_at: self.moved_at,
            gap_ahead_mm: self.gap_ahead(),
            in_contact: self.blocked,
            lap: self.lap.as_ref().map(|l| (l.length, l.done)),
            arms,
        }
    }

    /// The gap between the robot's front edge and the nearest obstacle
    /// straight ahead, if within [`NEAR_MM`].
    fn gap_ahead(&self) -> Option<f64> {
        let d = self.spec.drive.as_ref()?;
        let scene = Scene {
            pose: self.pose,
            obstacles: &self.spec.obstacles,
            mat: &self.spec.mat,
            turned: 0.0,
            rate: 0.0,
            since_reset: 0.0,
        };
        let w = d.width / 2.0;
        let gap = [-w, 0.0, w]
            .iter()
            .map(|left| scene.range(self.pose.point(d.front, *left), self.pose.heading))
            .fold(f64::INFINITY, f64::min);
        (gap <= NEAR_MM).then_some(gap)
    }
}

/// Puts a load of `drag` (a fraction of the stall torque) on motor `device`.
fn set_drag(device: &MockDevice, drag: f64) {
    let _ = device.with_model(|m, _| {
        if let Some(motor) = m.as_any_mut().downcast_mut::<TachoMotor>() {
            motor.set_drag(drag);
        }
    });
}

/// Puts end stops (degrees from where the shaft is now) on motor `device`.
fn set_end_stops(device: &MockDevice, (low, high): (f64, f64)) {
    let counts = |deg: f64| (deg / 360.0 * COUNTS_PER_TURN).round() as i64;
    let _ = device.with_model(|m, _| {
        if let Some(motor) = m.as_any_mut().downcast_mut::<TachoMotor>() {
            motor.set_end_stops(Some((counts(low), counts(high))));
        }
    });
}

/// The pose after the wheels moved `left` and `right` mm, and the turn.
fn advance(pose: Pose, left: f64, right: f64, axle: f64) -> (Pose, f64) {
    let (ds, dtheta) = ((left + right) / 2.0, (right - left) / axle);
    let mid = pose.heading + dtheta / 2.0;
    let next = Pose {
        x: pose.x + ds * mid.cos(),
        y: pose.y + ds * mid.sin(),
        heading: pose.heading + dtheta,
    };
    (next, dtheta)
}

fn line_length(shape: &Shape) -> f64 {
    let Shape::Line { points, .. } = shape else {
        return 0.0;
    };
    shape
        .segments()
        .map(|(a, b)| points[b].sub(points[a]).length())
        .sum()
}

/// Where along the line (mm from its first point) the point nearest `p` is.
fn arc_position(shape: &Shape, p: Vec2) -> f64 {
    let Shape::Line { points, .. } = shape else {
        return 0.0;
    };
    let (mut best, mut at, mut before) = (f64::INFINITY, 0.0, 0.0);
    for (a, b) in shape.segments() {
        let len = points[b].sub(points[a]).length();
        let (d, t) = segment_distance(p, points[a], points[b]);
        if d < best {
            best = d;
            at = before + t * len;
        }
        before += len;
    }
    at
}
