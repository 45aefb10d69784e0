//! [`WorldScene`]: the simulated world ([`crate::world`]) in pictures: its
//! arena, its robot's footprint and what each sensor looks at.

use super::{Arena, Look, Point, Pose, Rgb, Scene, Shape, Sight, Snapshot};
use crate::world::{self, Vec2, WorldSpec};
use crate::SensorDriver;

/// The mat's colours as a person sees them (by `COL-COLOR` code).
fn colour(c: world::Colour) -> Rgb {
    match c.code {
        1 => Rgb(0x22, 0x22, 0x22),
        2 => Rgb(0x25, 0x55, 0xc8),
        3 => Rgb(0x2f, 0x9e, 0x44),
        4 => Rgb(0xf2, 0xd0, 0x24),
        5 => Rgb(0xd6, 0x33, 0x2a),
        7 => Rgb(0x8b, 0x5a, 0x2b),
        _ => Rgb(0xf6, 0xf6, 0xf2),
    }
}

fn point(v: Vec2) -> Point {
    (v.x, v.y)
}

/// The robot of `sim`'s world now: its pose (degrees) and footprint.
pub(super) fn robot(sim: &crate::Simulator) -> Option<(Pose, Vec<Point>)> {
    let w = sim.world()?;
    let p = w.pose();
    let pose = Pose {
        x: p.x,
        y: p.y,
        heading: p.heading.to_degrees(),
    };
    Some((pose, w.footprint_now().into_iter().map(point).collect()))
}

/// The scene of a [`WorldSpec`]: the arena once, then the robot where the
/// world has it ([`Snapshot::robot`]) and its sensors' spots, bumpers and
/// rays (as long as the sensor measured).
#[derive(Debug, Clone)]
pub struct WorldScene {
    spec: WorldSpec,
}

impl WorldScene {
    /// The scene of world `spec`.
    pub fn new(spec: &WorldSpec) -> WorldScene {
        WorldScene { spec: spec.clone() }
    }
}

impl Scene for WorldScene {
    fn arena(&self) -> Arena {
        let spec = &self.spec;
        let (width, height) = spec.size();
        let mut arena = Arena::table(width, height);
        arena.floor = colour(spec.floor());
        for (shape, c) in spec.mat() {
            let colour = colour(*c);
            arena.shapes.push(match shape {
                world::Shape::Rect(r) => Shape::Area {
                    from: point(r.min),
                    to: point(r.max),
                    colour,
                },
                world::Shape::Circle(centre, radius) => Shape::Disc {
                    centre: point(*centre),
                    radius: *radius,
                    colour,
                },
                world::Shape::Line {
                    points,
                    half_width,
                    closed,
                } => {
                    let mut list: Vec<Point> = points.iter().map(|p| point(*p)).collect();
                    if *closed {
                        list.extend(list.first().copied());
                    }
                    Shape::Line {
                        points: list,
                        width: half_width * 2.0,
                        colour,
                    }
                }
            });
        }
        for r in spec.obstacles() {
            arena.shapes.push(Shape::Block {
                from: point(r.min),
                to: point(r.max),
            });
        }
        arena
    }

    fn look(&mut self, brick: &Snapshot) -> Look {
        let Some((p, footprint)) = &brick.robot else {
            return Look::default();
        };
        let heading = p.heading.to_radians();
        let (s, c) = heading.sin_cos();
        let at =
            |forward: f64, left: f64| (p.x + forward * c - left * s, p.y + forward * s + left * c);
        let mut sights = Vec::new();
        for m in &self.spec.sensors {
            let from = at(m.at.0, m.at.1);
            let port = m.port.clone();
            let shown = brick.sensors.iter().find(|x| x.port == m.port);
            // How far the sensor measured, mm, in the modes that measure it.
            let range = shown.and_then(|x| {
                let v = *x.values.first()? as f64;
                match x.mode.as_str() {
                    "US-DIST-CM" | "US-SI-CM" => Some(v),
                    "US-DIST-IN" | "US-SI-IN" => Some(v * 2.54),
                    "IR-PROX" => Some(v * 7.0),
                    _ => None,
                }
            });
            let angle = heading + m.look;
            sights.push(match (m.driver, range) {
                (SensorDriver::Ev3Touch | SensorDriver::NxtTouch, _) => Sight::Bumper {
                    port,
                    from: at(m.at.0, m.at.1 + 25.0),
                    to: at(m.at.0, m.at.1 - 25.0),
                },
                (_, Some(mm)) => Sight::Ray {
                    port,
                    from,
                    to: (from.0 + mm * angle.cos(), from.1 + mm * angle.sin()),
                },
                (SensorDriver::Ev3Gyro, None) => continue,
                (_, None) => Sight::Spot {
                    port,
                    at: from,
                    radius: 6.0,
                },
            });
        }
        Look {
            pose: Some(*p),
            outline: footprint.clone(),
            sights,
        }
    }
}
