//! [`Snapshot`]: the simulated brick's state at one moment, and its JSON.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::json::{key, number, string};
use super::{Look, Sight};
use crate::buttons::{Button, ButtonSet};
use crate::kobject::Model;
use crate::models::sensor::VALUES;
use crate::{fs, MockTree, RealtimeSim, SimulatedIo, Simulator};

/// A tacho (or DC) motor as the brick shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MotorState {
    /// The port, `outA`.
    pub port: String,
    /// The driver, `lego-ev3-l-motor`.
    pub driver: String,
    /// `position`, counts.
    pub position: i64,
    /// `speed`, counts/s.
    pub speed: i64,
    /// `state`'s flags (`running stalled`), empty when idle.
    pub state: String,
}

/// A sensor as the brick shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SensorState {
    /// The port, `in1`.
    pub port: String,
    /// The driver, `lego-ev3-touch`.
    pub driver: String,
    /// The current mode, `TOUCH`.
    pub mode: String,
    /// `value0..` of the mode.
    pub values: Vec<i64>,
}

/// One LED (`led0:green:brick-status`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedLight {
    /// Its name.
    pub name: String,
    /// `brightness` (what it shows now, blinking included).
    pub brightness: u32,
    /// `max_brightness`.
    pub max: u32,
}

/// The simulated brick's state at one moment, and the world's [`Look`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Snapshot {
    /// Simulated time.
    pub time: Duration,
    /// Motors, in the order they were plugged in.
    pub motors: Vec<MotorState>,
    /// Sensors, in the order they were plugged in.
    pub sensors: Vec<SensorState>,
    /// LEDs.
    pub leds: Vec<LedLight>,
    /// The brick buttons held down.
    pub buttons: ButtonSet,
    /// Tones played so far (a stop counts too).
    pub tones: usize,
    /// The tone playing now (Hz; 0: silence).
    pub tone: u32,
    /// The framebuffer's bytes, when taken with the screen.
    pub screen: Option<Vec<u8>>,
    /// The robot as the simulated world has it (when it has a robot): its
    /// pose and footprint, what a [`super::WorldScene`] shows.
    pub robot: Option<(super::Pose, Vec<super::Point>)>,
    /// The robot and sensors' sights (filled by a [`super::Scene`]).
    pub look: Look,
}

/// The attributes copied of each class of device, in order.
const MOTOR: &[&str] = &["address", "driver_name", "position", "speed", "state"];
/// (Then `value0`..`value7`.)
const SENSOR: &[&str] = &["address", "driver_name", "mode", "num_values"];
const LED: &[&str] = &["brightness", "max_brightness"];

/// What the models show, copied under the brick's lock as the bytes of
/// their attributes one after the other (`show` writes into one buffer:
/// no parsing, no allocation but the LEDs' names); read after the lock is
/// released.
#[derive(Default)]
struct Shown {
    bytes: Vec<u8>,
    /// Each device's class, name (LEDs only) and where each attribute of
    /// its class's list ends in `bytes`.
    devices: Vec<(&'static str, String, Vec<usize>)>,
}

impl Shown {
    fn copy(&mut self, class: &'static str, name: &str, model: &dyn Model) {
        let (attrs, values, name): (_, &[&str], _) = match class {
            "tacho-motor" | "dc-motor" => (MOTOR, &[], String::new()),
            "lego-sensor" => (SENSOR, &VALUES, String::new()),
            "leds" => (LED, &[], name.to_owned()),
            _ => return,
        };
        let mut ends = Vec::with_capacity(attrs.len() + values.len());
        for attr in attrs.iter().chain(values) {
            let start = self.bytes.len();
            if model.show(attr, &mut self.bytes).is_err() {
                self.bytes.truncate(start);
            }
            ends.push(self.bytes.len());
        }
        self.devices.push((class, name, ends));
    }

    /// Fills `s`'s motors, sensors and LEDs.
    fn fill(&self, s: &mut Snapshot) {
        let mut start = 0;
        for (class, name, ends) in &self.devices {
            let values: Vec<String> = ends
                .iter()
                .map(|&end| {
                    let text = self.bytes.get(start..end).unwrap_or_default();
                    start = end;
                    String::from_utf8_lossy(text).trim_end().to_owned()
                })
                .collect();
            let text = |i: usize| values.get(i).cloned().unwrap_or_default();
            let int = |i: usize| values.get(i).and_then(|v| v.parse().ok()).unwrap_or(0i64);
            match *class {
                "lego-sensor" => {
                    let n = usize::try_from(int(3)).unwrap_or(0).min(8);
                    s.sensors.push(SensorState {
                        port: port(&text(0)),
                        driver: text(1),
                        mode: text(2),
                        values: (4..4 + n).map(int).collect(),
                    });
                }
                "leds" => s.leds.push(LedLight {
                    name: name.clone(),
                    brightness: u32::try_from(int(0)).unwrap_or(0),
                    max: u32::try_from(int(1)).unwrap_or(255),
                }),
                _ => s.motors.push(MotorState {
                    port: port(&text(0)),
                    driver: text(1),
                    position: int(2),
                    speed: int(3),
                    state: text(4),
                }),
            }
        }
    }
}

/// `ev3-ports:outA` -> `outA`.
fn port(address: &str) -> String {
    address
        .strip_prefix("ev3-ports:")
        .unwrap_or(address)
        .to_owned()
}

impl Snapshot {
    /// The state of `tree` (and of its buttons, beeper and screen, `io`)
    /// at simulated time `time`; the framebuffer's bytes with `screen`.
    /// Holds the brick's lock only to copy what the models show (see
    /// `Shown`); the rest is done after.
    pub fn take(
        tree: &MockTree,
        io: Option<&SimulatedIo>,
        time: Duration,
        screen: bool,
    ) -> Snapshot {
        let mut s = Snapshot::take_held(tree, time).0;
        if let Some(io) = io {
            s.read_io(io, screen);
        }
        s
    }

    /// [`Snapshot::take`] without the buttons, and how long it held the
    /// brick's lock.
    pub(crate) fn take_held(tree: &MockTree, time: Duration) -> (Snapshot, Duration) {
        let mut shown = Shown::default();
        let locked = Instant::now();
        fs::lock(&tree.brick).each_device(|class, name, model| shown.copy(class, name, model));
        let held = locked.elapsed();
        let mut s = Snapshot {
            time,
            ..Snapshot::default()
        };
        shown.fill(&mut s);
        (s, held)
    }

    /// The state of real-time simulator `sim`'s brick (and of `io`) now,
    /// with the world's robot: the simulator's lock is held only to copy
    /// simulated time and the robot's pose, the brick's only to copy what
    /// the models show. So a picture of the run does not keep the motors'
    /// control loop waiting.
    pub fn of_realtime(sim: &RealtimeSim, io: Option<&SimulatedIo>, screen: bool) -> Snapshot {
        let mut s = Snapshot::of_realtime_held(sim).0;
        if let Some(io) = io {
            s.read_io(io, screen);
        }
        s
    }

    /// [`Snapshot::of_realtime`] without the buttons, and how long it held
    /// the simulator's lock and then the brick's.
    pub(crate) fn of_realtime_held(sim: &RealtimeSim) -> (Snapshot, Duration, Duration) {
        let (tree, time, robot, held) = sim.with(|s| {
            let locked = Instant::now();
            let copied = (s.time(), super::world_scene::robot(s));
            (Arc::clone(s.tree()), copied.0, copied.1, locked.elapsed())
        });
        let (mut snap, brick) = Snapshot::take_held(&tree, time);
        snap.robot = robot;
        (snap, held, brick)
    }

    /// Adds the buttons, tones and (with `screen`) the framebuffer of `io`
    /// as they are now (outside the simulator's lock, see [`LiveView`]).
    ///
    /// [`LiveView`]: super::LiveView
    pub fn read_io(&mut self, io: &SimulatedIo, screen: bool) {
        self.buttons = io.pressed();
        let tones = io.tones();
        self.tones = tones.len();
        self.tone = tones.last().map_or(0, |t| t.hz);
        if screen {
            self.screen = Some(io.framebuffer());
        }
    }

    /// The state of `sim`'s brick (and of `io`) now, in its simulated time,
    /// with the world's robot; the framebuffer's bytes with `screen`.
    pub fn of(sim: &Simulator, io: Option<&SimulatedIo>, screen: bool) -> Snapshot {
        let mut s = Snapshot::take(sim.tree(), io, sim.time(), screen);
        s.robot = super::world_scene::robot(sim);
        s
    }

    /// The snapshot as one JSON object (no newline): `t` (ms), `pose`,
    /// `motors`, `sensors`, `leds`, `buttons`, `tone`, `sights`.
    pub fn to_json(&self) -> String {
        let mut o = String::with_capacity(512);
        o.push('{');
        key(&mut o, "t", true);
        let _ = write!(o, "{}", self.time.as_millis());
        key(&mut o, "pose", false);
        match self.look.pose {
            Some(p) => {
                o.push_str("{\"x\":");
                number(&mut o, p.x);
                o.push_str(",\"y\":");
                number(&mut o, p.y);
                o.push_str(",\"heading\":");
                number(&mut o, p.heading);
                o.push('}');
            }
            None => o.push_str("null"),
        }
        key(&mut o, "motors", false);
        o.push('[');
        for (i, m) in self.motors.iter().enumerate() {
            if i > 0 {
                o.push(',');
            }
            o.push('{');
            key(&mut o, "port", true);
            string(&mut o, &m.port);
            key(&mut o, "driver", false);
            string(&mut o, &m.driver);
            let _ = write!(o, ",\"position\":{},\"speed\":{}", m.position, m.speed);
            key(&mut o, "state", false);
            string(&mut o, &m.state);
            o.push('}');
        }
        o.push(']');
        key(&mut o, "sensors", false);
        o.push('[');
        for (i, s) in self.sensors.iter().enumerate() {
            if i > 0 {
                o.push(',');
            }
            o.push('{');
            key(&mut o, "port", true);
            string(&mut o, &s.port);
            key(&mut o, "driver", false);
            string(&mut o, &s.driver);
            key(&mut o, "mode", false);
            string(&mut o, &s.mode);
            key(&mut o, "values", false);
            let values: Vec<String> = s.values.iter().map(i64::to_string).collect();
            let _ = write!(o, "[{}]}}", values.join(","));
        }
        o.push(']');
        key(&mut o, "leds", false);
        o.push('{');
        for (i, l) in self.leds.iter().enumerate() {
            key(&mut o, &l.name, i == 0);
            let _ = write!(
                o,
                "{}",
                u64::from(l.brightness) * 255 / u64::from(l.max.max(1))
            );
        }
        o.push('}');
        key(&mut o, "buttons", false);
        let buttons: Vec<String> = Button::ALL
            .iter()
            .filter(|b| self.buttons.contains(**b))
            .map(|b| format!("\"{b}\""))
            .collect();
        let _ = write!(o, "[{}]", buttons.join(","));
        let _ = write!(o, ",\"tone\":{},\"tones\":{}", self.tone, self.tones);
        if !self.look.outline.is_empty() {
            key(&mut o, "outline", false);
            o.push('[');
            for (i, p) in self.look.outline.iter().enumerate() {
                if i > 0 {
                    o.push(',');
                }
                o.push('[');
                number(&mut o, p.0);
                o.push(',');
                number(&mut o, p.1);
                o.push(']');
            }
            o.push(']');
        }
        key(&mut o, "sights", false);
        o.push('[');
        for (i, sight) in self.look.sights.iter().enumerate() {
            if i > 0 {
                o.push(',');
            }
            sight_json(&mut o, sight);
        }
        o.push_str("]}");
        o
    }
}

fn point(o: &mut String, name: &str, (x, y): (f64, f64)) {
    key(o, name, false);
    o.push('[');
    number(o, x);
    o.push(',');
    number(o, y);
    o.push(']');
}

fn sight_json(o: &mut String, sight: &Sight) {
    o.push('{');
    key(o, "kind", true);
    match sight {
        Sight::Ray { port, from, to } | Sight::Bumper { port, from, to } => {
            let kind = if matches!(sight, Sight::Ray { .. }) {
                "ray"
            } else {
                "bumper"
            };
            string(o, kind);
            key(o, "port", false);
            string(o, port);
            point(o, "from", *from);
            point(o, "to", *to);
        }
        Sight::Spot { port, at, radius } => {
            string(o, "spot");
            key(o, "port", false);
            string(o, port);
            point(o, "at", *at);
            key(o, "radius", false);
            number(o, *radius);
        }
    }
    o.push('}');
}
