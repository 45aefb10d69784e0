//! [`Odometry`]: the stand-in [`Scene`] when there is no simulated world.

use super::{Arena, Look, Pose, Scene, Snapshot};

/// A two-wheeled robot on an empty table, placed by differential-drive
/// odometry from its wheel motors' positions (the stand-in [`Scene`] when
/// no simulated world is given). It shows no sensor sights.
#[derive(Debug, Clone)]
pub struct Odometry {
    arena: Arena,
    left: String,
    right: String,
    /// mm per count.
    mm_per_count: f64,
    axle: f64,
    pose: Pose,
    last: Option<(i64, i64)>,
}

impl Odometry {
    /// A robot whose left and right wheels are driven by the motors on
    /// ports `left` and `right` (`outB`), `wheel` mm in diameter, `axle` mm
    /// apart, 360 counts per turn, starting at `start` in `arena`.
    pub fn new(arena: Arena, left: &str, right: &str, wheel: f64, axle: f64, start: Pose) -> Self {
        Odometry {
            arena,
            left: left.to_owned(),
            right: right.to_owned(),
            mm_per_count: std::f64::consts::PI * wheel / 360.0,
            axle,
            pose: start,
            last: None,
        }
    }

    /// The usual EV3 robot (56 mm wheels, 112 mm apart) on the first two
    /// large motors of `brick` (by port), in the middle of a 2 x 1.2 m
    /// table heading right; `None` without two large motors.
    pub fn guess(brick: &Snapshot) -> Option<Odometry> {
        let mut large: Vec<&str> = brick
            .motors
            .iter()
            .filter(|m| m.driver == "lego-ev3-l-motor")
            .map(|m| m.port.as_str())
            .collect();
        large.sort_unstable();
        let [left, right, ..] = large[..] else {
            return None;
        };
        let start = Pose {
            x: 400.0,
            y: 600.0,
            heading: 0.0,
        };
        Some(Odometry::new(
            Arena::table(2000.0, 1200.0),
            left,
            right,
            56.0,
            112.0,
            start,
        ))
    }
}

impl Scene for Odometry {
    fn arena(&self) -> Arena {
        self.arena.clone()
    }

    fn look(&mut self, brick: &Snapshot) -> Look {
        let position = |port: &str| {
            brick
                .motors
                .iter()
                .find(|m| m.port == port)
                .map(|m| m.position)
        };
        if let (Some(l), Some(r)) = (position(&self.left), position(&self.right)) {
            if let Some((l0, r0)) = self.last {
                let dl = (l - l0) as f64 * self.mm_per_count;
                let dr = (r - r0) as f64 * self.mm_per_count;
                let mid = self.pose.heading.to_radians() + (dr - dl) / self.axle / 2.0;
                self.pose.x += (dl + dr) / 2.0 * mid.cos();
                self.pose.y += (dl + dr) / 2.0 * mid.sin();
                self.pose.heading += ((dr - dl) / self.axle).to_degrees();
            }
            self.last = Some((l, r));
        }
        Look {
            pose: Some(self.pose),
            ..Look::default()
        }
    }
}
