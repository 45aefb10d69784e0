//! The world's lines of `ev3-sim`'s control protocol.

use super::geometry::Pose;
use super::live::LiveWorld;
use crate::SimHandle;

/// Answers a control line about the world, or `None` when it is not one:
/// * `pose` → `pose X Y HEADING` (mm, mm, degrees counter-clockwise from
///   east, as in world files);
/// * `move X Y HEADING` puts the robot there (a hand lifting it) → `ok`.
///
/// Malformed lines answer `Err` with what was expected.
pub fn control_line(world: &mut LiveWorld, line: &str) -> Option<Result<String, String>> {
    let words: Vec<&str> = line.split_whitespace().collect();
    control_words(world, &words)
}

/// As [`control_line`], for a line already split at white space (verb
/// first), as a control server's extension gets it.
pub fn control_words<S: AsRef<str>>(
    world: &mut LiveWorld,
    words: &[S],
) -> Option<Result<String, String>> {
    let words: Vec<&str> = words.iter().map(AsRef::as_ref).collect();
    match words.first().copied() {
        Some("pose") if words.len() == 1 => {
            let p = world.pose();
            Some(Ok(format!(
                "pose {:.1} {:.1} {:.1}",
                p.x,
                p.y,
                p.heading_degrees()
            )))
        }
        Some("pose") => Some(Err("expected `pose`".to_owned())),
        Some("move") => {
            let numbers: Vec<f64> = words[1..].iter().filter_map(|w| w.parse().ok()).collect();
            match numbers[..] {
                [x, y, heading] if words.len() == 4 && numbers.iter().all(|n| n.is_finite()) => {
                    world.move_robot(Pose {
                        x,
                        y,
                        heading: heading.to_radians(),
                    });
                    Some(Ok("ok".to_owned()))
                }
                _ => Some(Err(
                    "expected `move X Y HEADING` (mm, mm, degrees)".to_owned()
                )),
            }
        }
        _ => None,
    }
}

/// The world's part of a control server running beside a real-time
/// simulator: answers `pose` and `move` through a [`SimHandle`].
#[derive(Debug, Clone)]
pub struct WorldControl(pub SimHandle);

impl WorldControl {
    /// Serves `words` (a control line split at white space, verb first):
    /// `None` when it is not the world's line, or there is no world (any
    /// more).
    pub fn handle<S: AsRef<str>>(&mut self, words: &[S]) -> Option<Result<String, String>> {
        self.0
            .with(|sim| sim.world_mut().and_then(|w| control_words(w, words)))
            .flatten()
    }
}
