//! [`Trace`]: a run's data as JSON lines and its picture as SVG.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::json::{key, number, string};
use super::{svg, Arena, Pose, Scene, Snapshot};
use crate::error::{Error, Operation, Result};
use crate::{MockTree, SimulatedIo, Simulator};

/// Something that happened during a run, marked in its picture.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Simulated time.
    pub time: Duration,
    /// Where the robot was, when the world has a robot.
    pub at: Option<Pose>,
    /// What happened: `bumper in1 pressed`, `outB stalled`, `tone 440 Hz`.
    pub what: String,
}

/// A run's record: every sample as a JSON line (time, pose, motors,
/// sensors, LEDs, buttons, tone), the robot's path and the events (touch
/// sensors pressed, motors stalled, tones), drawn by [`Trace::svg`].
///
/// Deterministic: the same samples give the same bytes (fixed decimals,
/// simulated time), so a program run in simulated time gives the same trace
/// twice.
///
/// ```
/// # fn main() -> ev3sysfs::Result<()> {
/// use std::sync::Arc;
/// use std::time::Duration;
/// use ev3sysfs_sim::{MockTree, Simulator, TachoDriver};
/// use ev3sysfs_sim::view::{Arena, Odometry, Pose, Trace};
///
/// let tree = match MockTree::ev3() {
///     Ok(tree) => Arc::new(tree),
///     Err(e) => return Ok(eprintln!("no simulated brick here: {e}")),
/// };
/// let left = tree.add_tacho_motor("outB", TachoDriver::Ev3Large)?;
/// let right = tree.add_tacho_motor("outC", TachoDriver::Ev3Large)?;
/// let mut sim = Simulator::new(Arc::clone(&tree))?;
/// let start = Pose { x: 100.0, y: 300.0, heading: 0.0 };
/// let scene = Odometry::new(Arena::table(800.0, 600.0), "outB", "outC", 56.0, 112.0, start);
/// let mut trace = Trace::new(scene);
/// for motor in [&left, &right] {
///     let motor = ev3sysfs::SysfsDevice::open(tree.root(), "tacho-motor", &motor.name())?;
///     motor.write_int("speed_sp", 360)?;
///     motor.write_str("command", "run-forever")?;
/// }
/// trace.run(&mut sim, None, Duration::from_secs(1), Duration::from_millis(20))?;
/// assert!(trace.path().last().unwrap().1.x > 200.0); // one turn of a 56 mm wheel
/// let svg = trace.svg("forward for a second");
/// assert!(svg.starts_with("<svg"));
/// # Ok(()) }
/// ```
pub struct Trace {
    scene: Box<dyn Scene>,
    arena: Arena,
    lines: String,
    path: Vec<(Duration, Pose)>,
    events: Vec<Event>,
    last: Option<Snapshot>,
}

impl std::fmt::Debug for Trace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trace")
            .field("samples", &self.path.len())
            .field("events", &self.events)
            .finish_non_exhaustive()
    }
}

impl Trace {
    /// An empty trace of a run in `scene`'s world.
    pub fn new(scene: impl Scene + 'static) -> Trace {
        let arena = scene.arena();
        Trace {
            scene: Box::new(scene),
            arena,
            lines: String::new(),
            path: Vec::new(),
            events: Vec::new(),
            last: None,
        }
    }

    /// Takes a sample of `tree` (and `io`) at simulated time `time`.
    pub fn record(&mut self, tree: &MockTree, io: Option<&SimulatedIo>, time: Duration) {
        self.push(Snapshot::take(tree, io, time, false));
    }

    /// Adds a snapshot taken elsewhere (its look is the scene's, now).
    pub fn push(&mut self, mut snapshot: Snapshot) {
        snapshot.look = self.scene.look(&snapshot);
        snapshot.screen = None;
        self.lines.push_str(&snapshot.to_json());
        self.lines.push('\n');
        if let Some(pose) = snapshot.look.pose {
            self.path.push((snapshot.time, pose));
        }
        self.find_events(&snapshot);
        self.last = Some(snapshot);
    }

    /// Steps `sim` for `duration` of simulated time, taking a sample every
    /// `every` (and one at the start).
    ///
    /// # Errors
    /// As [`Simulator::step`].
    pub fn run(
        &mut self,
        sim: &mut Simulator,
        io: Option<&SimulatedIo>,
        duration: Duration,
        every: Duration,
    ) -> Result<()> {
        let end = sim.time() + duration;
        self.push(Snapshot::of(sim, io, false));
        while sim.time() < end {
            sim.step(every.min(end - sim.time()))?;
            self.push(Snapshot::of(sim, io, false));
        }
        Ok(())
    }

    fn find_events(&mut self, now: &Snapshot) {
        let at = now.look.pose;
        let mut add = |what: String| {
            self.events.push(Event {
                time: now.time,
                at,
                what,
            });
        };
        let before = self.last.as_ref();
        for s in &now.sensors {
            if s.driver != "lego-ev3-touch" && s.driver != "lego-nxt-touch" {
                continue;
            }
            let was = before
                .and_then(|b| b.sensors.iter().find(|p| p.port == s.port))
                .and_then(|p| p.values.first().copied())
                .unwrap_or(0);
            let is = s.values.first().copied().unwrap_or(0);
            if was == 0 && is != 0 {
                add(format!("bumper {} pressed", s.port));
            }
        }
        for m in &now.motors {
            let was = before
                .and_then(|b| b.motors.iter().find(|p| p.port == m.port))
                .is_some_and(|p| p.state.contains("stalled"));
            if !was && m.state.contains("stalled") {
                add(format!("{} stalled", m.port));
            }
        }
        let played = before.map_or(0, |b| b.tones);
        if now.tones > played && now.tone != 0 {
            add(format!("tone {} Hz", now.tone));
        }
    }

    /// The samples, one JSON object per line.
    pub fn json_lines(&self) -> &str {
        &self.lines
    }

    /// The robot's path: simulated time and pose of each sample.
    pub fn path(&self) -> &[(Duration, Pose)] {
        &self.path
    }

    /// What happened, in order.
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// The run's picture: the arena, the robot's path, where it stopped and
    /// the events, with `title` above.
    pub fn svg(&self, title: &str) -> String {
        let outline = self.last.as_ref().map_or(&[][..], |s| &s.look.outline[..]);
        svg::run_picture(&self.arena, &self.path, outline, &self.events, title)
    }

    /// The events as JSON lines (`{"t":ms,"what":...}`).
    pub fn events_json(&self) -> String {
        let mut o = String::new();
        for e in &self.events {
            o.push('{');
            key(&mut o, "t", true);
            o.push_str(&e.time.as_millis().to_string());
            if let Some(p) = e.at {
                o.push_str(",\"x\":");
                number(&mut o, p.x);
                o.push_str(",\"y\":");
                number(&mut o, p.y);
            }
            key(&mut o, "event", false);
            string(&mut o, &e.what);
            o.push_str("}\n");
        }
        o
    }

    /// Writes the picture to `svg_path` and the samples beside it, with
    /// the extension `.jsonl` (`run.svg` -> `run.jsonl`); returns that path.
    ///
    /// # Errors
    /// [`Error::Io`] when a file cannot be written.
    pub fn save(&self, svg_path: impl AsRef<Path>, title: &str) -> Result<PathBuf> {
        let svg_path = svg_path.as_ref();
        let lines = svg_path.with_extension("jsonl");
        let write = |path: &Path, text: &str| {
            std::fs::write(path, text).map_err(|e| Error::from_io(path, Operation::Write, None, e))
        };
        write(svg_path, &self.svg(title))?;
        write(&lines, &self.lines)?;
        Ok(lines)
    }
}
