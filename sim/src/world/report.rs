//! [`WorldReport`]: what a robot did in its world, in one or two lines.

use std::fmt::Write as _;
use std::time::Duration;

use super::geometry::Pose;

/// What the world looked like when asked: see [`LiveWorld::report`](super::LiveWorld::report).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct WorldReport {
    /// The world's name.
    pub world: String,
    /// Simulated time so far.
    pub time: Duration,
    /// The robot's pose now.
    pub pose: Pose,
    /// Path length the robot's axle centre travelled, mm.
    pub driven_mm: f64,
    /// Straight-line distance from the start to where the robot is, mm.
    pub from_start_mm: f64,
    /// When the robot last moved.
    pub stopped_at: Duration,
    /// Gap between the robot's front and an obstacle ahead (within 200 mm).
    pub gap_ahead_mm: Option<f64>,
    /// The robot pushes against an obstacle.
    pub in_contact: bool,
    /// The first lap of the track's closed line: its length (mm) and when
    /// the robot's colour sensor completed it.
    pub lap: Option<(f64, Option<Duration>)>,
    /// Arms: port, angle (degrees at the motor), end stops.
    pub arms: Vec<(String, f64, (f64, f64))>,
}

impl std::fmt::Display for WorldReport {
    /// One or two lines: what the robot (and its arms) did.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        if self.driven_mm > 0.5 {
            let mut s = format!("robot drove {:.0} mm and stopped", self.driven_mm);
            if let Some(gap) = self.gap_ahead_mm {
                let _ = write!(s, " {gap:.0} mm from the wall");
            }
            let _ = write!(s, " after {:.1} s", self.stopped_at.as_secs_f64());
            if self.in_contact {
                s.push_str(" (against it, motors stalled)");
            }
            let _ = write!(s, ", {:.0} mm from its start", self.from_start_mm);
            parts.push(s);
        }
        if let Some((length, lap)) = self.lap {
            parts.push(match lap {
                Some(t) => format!(
                    "completed a lap of the line ({length:.0} mm) in {:.1} s",
                    t.as_secs_f64()
                ),
                None => format!("no complete lap of the line ({length:.0} mm)"),
            });
        }
        for (port, angle, (low, high)) in &self.arms {
            parts.push(format!(
                "arm on {port} {:.0} degrees above its low end stop (travel {:.0})",
                angle - low,
                high - low
            ));
        }
        if parts.is_empty() {
            parts.push("nothing moved".to_owned());
        }
        write!(
            f,
            "world {}: {} ({:.1} s simulated)",
            self.world,
            parts.join("; "),
            self.time.as_secs_f64()
        )
    }
}
