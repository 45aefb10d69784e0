//! Pictures of the simulated brick: what a run did, as an
//! SVG picture and JSON lines ([`Trace`]), and live in a browser
//! ([`LiveView`]).
//!
//! Both are drawn from [`Snapshot`]s: the brick's state at one moment
//! (motors, sensors, LEDs, buttons, tones, screen), taken under the brick's
//! lock in microseconds, plus what a [`Scene`] says about the world around
//! the brick: the arena (mat, lines, walls), the robot's pose and what each
//! sensor looks at. The simulated world supplies its own scene; without
//! one, [`Odometry`] places a two-wheeled robot on an empty table from its
//! wheels' positions.
//!
//! Coordinates are millimetres in the arena, `x` to the right, `y` up, the
//! heading in degrees counter-clockwise from `+x`.

mod json;
mod odometry;
mod snapshot;
mod svg;
mod trace;
mod world_scene;

mod server;

pub use odometry::Odometry;
pub use snapshot::{LedLight, MotorState, SensorState, Snapshot};
pub use svg::run_picture;
pub use trace::{Event, Trace};
pub use world_scene::WorldScene;

pub use server::{FrameStats, LiveView, ViewTarget};

/// A colour, `#rrggbb` in pictures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rgb(pub u8, pub u8, pub u8);

impl std::fmt::Display for Rgb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "#{:02x}{:02x}{:02x}", self.0, self.1, self.2)
    }
}

/// A point in the arena, mm.
pub type Point = (f64, f64);

/// One thing drawn in the arena.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Shape {
    /// A coloured area of the mat (axis-aligned rectangle).
    Area {
        /// Lower-left corner.
        from: Point,
        /// Upper-right corner.
        to: Point,
        /// Its colour.
        colour: Rgb,
    },
    /// A coloured disc on the mat.
    Disc {
        /// Centre.
        centre: Point,
        /// Radius, mm.
        radius: f64,
        /// Its colour.
        colour: Rgb,
    },
    /// A line on the mat (a polyline; closed when first == last).
    Line {
        /// Its points.
        points: Vec<Point>,
        /// Width, mm.
        width: f64,
        /// Its colour.
        colour: Rgb,
    },
    /// An obstacle the robot cannot pass (axis-aligned rectangle).
    Block {
        /// Lower-left corner.
        from: Point,
        /// Upper-right corner.
        to: Point,
    },
    /// A wall or obstacle side the robot cannot pass.
    Wall {
        /// One end.
        from: Point,
        /// The other end.
        to: Point,
    },
}

/// The arena: a table of `width` x `height` mm with its mat and walls.
#[derive(Debug, Clone, PartialEq)]
pub struct Arena {
    /// Width, mm (`x` from 0).
    pub width: f64,
    /// Height, mm (`y` from 0).
    pub height: f64,
    /// The mat's colour where nothing is drawn.
    pub floor: Rgb,
    /// Areas, lines and walls, drawn in order.
    pub shapes: Vec<Shape>,
}

impl Arena {
    /// An empty white table.
    pub fn table(width: f64, height: f64) -> Arena {
        Arena {
            width,
            height,
            floor: Rgb(0xf4, 0xf4, 0xf0),
            shapes: Vec::new(),
        }
    }
}

/// Where the robot is: the middle of its axle and its heading.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Pose {
    /// mm.
    pub x: f64,
    /// mm.
    pub y: f64,
    /// Degrees counter-clockwise from `+x`.
    pub heading: f64,
}

/// What one sensor looks at.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Sight {
    /// A ray (ultrasonic, infrared proximity): from the sensor to what it hit.
    Ray {
        /// The sensor's port (`in4`).
        port: String,
        /// The sensor.
        from: Point,
        /// Where the ray ends.
        to: Point,
    },
    /// A spot on the mat (colour, light): what the sensor sees.
    Spot {
        /// The sensor's port (`in3`).
        port: String,
        /// The spot's centre.
        at: Point,
        /// Its radius, mm.
        radius: f64,
    },
    /// A touch sensor's bumper, at the front of the robot.
    Bumper {
        /// The sensor's port (`in1`).
        port: String,
        /// One end of the bumper.
        from: Point,
        /// The other end.
        to: Point,
    },
}

/// What the world around the brick looks like now.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Look {
    /// The robot's pose, when the world has a robot.
    pub pose: Option<Pose>,
    /// The robot's footprint (corners in the arena), when known.
    pub outline: Vec<Point>,
    /// What the sensors look at.
    pub sights: Vec<Sight>,
}

/// What the simulated world supplies to pictures of the brick: the arena
/// once, then the robot's pose and sensors' sights for each snapshot.
/// Implemented by the world; [`Odometry`] is the stand-in without one.
pub trait Scene: Send {
    /// The arena (drawn once per picture).
    fn arena(&self) -> Arena;
    /// The robot and its sensors now; `brick` is the brick's state at the
    /// same moment.
    fn look(&mut self, brick: &Snapshot) -> Look;
}

/// An empty table and no robot: the scene when nothing better is known.
#[derive(Debug, Clone)]
pub struct Table(pub Arena);

impl Scene for Table {
    fn arena(&self) -> Arena {
        self.0.clone()
    }
    fn look(&mut self, _: &Snapshot) -> Look {
        Look::default()
    }
}

/// The scene of `sim`: its world's ([`WorldScene`]), or a robot placed by
/// [`Odometry`] on its first two large motors, or an empty [`Table`].
pub fn scene_of(sim: &crate::Simulator) -> Box<dyn Scene> {
    if let Some(world) = sim.world() {
        return Box::new(WorldScene::new(world.spec()));
    }
    let brick = Snapshot::take(sim.tree(), None, sim.time(), false);
    match Odometry::guess(&brick) {
        Some(odometry) => Box::new(odometry),
        None => Box::new(Table(Arena::table(2000.0, 1200.0))),
    }
}

impl<S: Scene + ?Sized> Scene for Box<S> {
    fn arena(&self) -> Arena {
        (**self).arena()
    }
    fn look(&mut self, brick: &Snapshot) -> Look {
        (**self).look(brick)
    }
}
