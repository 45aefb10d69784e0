//! World files: the TOML format (see the [module docs](super)), its
//! parsing and checks, and the built-in worlds.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use super::geometry::{Pose, Rect, Vec2};
use super::mat::{Colour, Mat, Shape};
use crate::error::{Error, Operation, Result};
use crate::{SensorDriver, TachoDriver};

/// The built-in worlds: name and file text.
const BUILTIN: [(&str, &str); 5] = [
    ("bumper", include_str!("builtin/bumper.toml")),
    ("line", include_str!("builtin/line.toml")),
    ("sorter", include_str!("builtin/sorter.toml")),
    ("arm", include_str!("builtin/arm.toml")),
    ("empty", include_str!("builtin/empty.toml")),
];

const PORTS: [&str; 8] = ["in1", "in2", "in3", "in4", "outA", "outB", "outC", "outD"];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    name: Option<String>,
    about: Option<String>,
    #[serde(default)]
    ports: BTreeMap<Spanned<String>, Spanned<String>>,
    #[serde(default)]
    arena: ArenaFile,
    #[serde(default)]
    obstacles: Vec<Spanned<ObstacleFile>>,
    #[serde(default)]
    mat: Vec<Spanned<MatFile>>,
    drive: Option<Spanned<DriveFile>>,
    #[serde(default)]
    sensors: BTreeMap<Spanned<String>, Spanned<SensorFile>>,
    #[serde(default)]
    arms: BTreeMap<Spanned<String>, Spanned<ArmFile>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ArenaFile {
    #[serde(default = "default_size")]
    size: [f64; 2],
    #[serde(default = "yes")]
    walls: bool,
    #[serde(default = "white")]
    floor: Spanned<String>,
    #[serde(default = "default_ambient")]
    ambient: f64,
}

impl Default for ArenaFile {
    fn default() -> Self {
        ArenaFile {
            size: default_size(),
            walls: true,
            floor: white(),
            ambient: default_ambient(),
        }
    }
}

fn default_size() -> [f64; 2] {
    [2000.0, 2000.0]
}
fn yes() -> bool {
    true
}
fn white() -> Spanned<String> {
    Spanned::new(0..0, "white".to_owned())
}
fn default_ambient() -> f64 {
    10.0
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ObstacleFile {
    rect: [f64; 4],
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MatFile {
    colour: String,
    reflect: Option<f64>,
    rect: Option<[f64; 4]>,
    circle: Option<[f64; 3]>,
    line: Option<Vec<[f64; 2]>>,
    width: Option<f64>,
    #[serde(default)]
    closed: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DriveFile {
    left: String,
    right: String,
    wheel_diameter: f64,
    axle_track: f64,
    #[serde(default)]
    start: [f64; 3],
    #[serde(default)]
    body: BodyFile,
    #[serde(default)]
    drag: [f64; 2],
}

#[derive(Deserialize, Clone, Copy)]
#[serde(deny_unknown_fields)]
struct BodyFile {
    front: f64,
    back: f64,
    width: f64,
}

impl Default for BodyFile {
    fn default() -> Self {
        BodyFile {
            front: 80.0,
            back: 60.0,
            width: 120.0,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SensorFile {
    #[serde(default)]
    at: [f64; 2],
    #[serde(default)]
    look: f64,
    #[serde(default)]
    drift: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ArmFile {
    stops: [f64; 2],
}

/// The robot's drive: which motors turn which wheel, and its shape.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Drive {
    pub(crate) left: String,
    pub(crate) right: String,
    pub(crate) wheel_diameter: f64,
    pub(crate) axle_track: f64,
    pub(crate) start: Pose,
    /// Footprint: mm ahead of the axle, behind it, and its full width.
    pub(crate) front: f64,
    pub(crate) back: f64,
    pub(crate) width: f64,
    /// Friction on the left and right wheel, a fraction of the motor's
    /// stall torque (0..1).
    pub(crate) drag: [f64; 2],
}

/// Where a sensor sits on the robot and where it looks.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Mount {
    pub(crate) port: String,
    pub(crate) driver: SensorDriver,
    /// mm ahead of the axle centre, mm to its left.
    pub(crate) at: (f64, f64),
    /// Radians counter-clockwise from straight ahead.
    pub(crate) look: f64,
    /// Gyro drift, degrees per second (clockwise positive, as it reads).
    pub(crate) drift: f64,
}

/// A world: the devices on each port, the robot and its arena. Load one
/// with [`WorldSpec::load`]; see the [module docs](super) for the format.
#[derive(Debug, Clone, PartialEq)]
pub struct WorldSpec {
    pub(crate) name: String,
    pub(crate) about: String,
    pub(crate) ports: Vec<(String, String)>,
    pub(crate) size: (f64, f64),
    pub(crate) obstacles: Vec<Rect>,
    pub(crate) mat: Mat,
    pub(crate) drive: Option<Drive>,
    pub(crate) sensors: Vec<Mount>,
    /// Motor port and end stops (degrees at the motor).
    pub(crate) arms: Vec<(String, (f64, f64))>,
}

impl WorldSpec {
    /// The names of the built-in worlds.
    pub fn builtin_names() -> Vec<&'static str> {
        BUILTIN.iter().map(|(n, _)| *n).collect()
    }

    /// The text of built-in world `name`, if there is one.
    pub fn builtin_text(name: &str) -> Option<&'static str> {
        BUILTIN.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
    }

    /// Built-in world `name` (see [`WorldSpec::builtin_names`]) or else the
    /// world file at path `name`.
    ///
    /// # Errors
    /// [`Error::Io`] when there is no such built-in world or file, or the
    /// file is not a valid world: the message names the line and field.
    pub fn load(name: &str) -> Result<WorldSpec> {
        if let Some(text) = WorldSpec::builtin_text(name) {
            return WorldSpec::parse(text, Path::new(&format!("builtin:{name}")));
        }
        let path = PathBuf::from(name);
        match std::fs::read_to_string(&path) {
            Ok(text) => WorldSpec::parse(&text, &path),
            Err(e) if e.kind() == io::ErrorKind::NotFound && !name.contains(['/', '.']) => {
                Err(invalid(
                    &path,
                    format!(
                        "no built-in world {name:?} and no such file (built-in worlds: {})",
                        WorldSpec::builtin_names().join(", ")
                    ),
                ))
            }
            Err(e) => Err(Error::Io {
                path,
                operation: Operation::Read,
                source: e,
            }),
        }
    }

    /// Parses the world file `text` (read from `origin`, named in errors).
    ///
    /// # Errors
    /// [`Error::Io`] (`InvalidData`) saying where and what is wrong, e.g.
    /// `line 7, field ports.in9: no such port (in1..in4, outA..outD)`.
    pub fn parse(text: &str, origin: &Path) -> Result<WorldSpec> {
        let file: File = toml::from_str(text).map_err(|e| {
            let msg = e.message().trim_end().to_owned();
            let Some(span) = e.span() else {
                return invalid(origin, msg);
            };
            let line = line_of(text, span.start);
            invalid(
                origin,
                match field_at(text, span.start) {
                    Some(field) => format!("line {line}, field {field}: {msg}"),
                    None => format!("line {line}: {msg}"),
                },
            )
        })?;
        let at = |span: std::ops::Range<usize>, field: &str, what: String| {
            invalid(
                origin,
                format!("line {}, field {field}: {what}", line_of(text, span.start)),
            )
        };
        let mut ports = Vec::new();
        for (port, driver) in &file.ports {
            if !PORTS.contains(&port.get_ref().as_str()) {
                let what = "no such port (in1..in4, outA..outD)".to_owned();
                return Err(at(port.span(), &format!("ports.{}", port.get_ref()), what));
            }
            let known = TachoDriver::from_driver_name(driver.get_ref()).is_some()
                || SensorDriver::from_driver_name(driver.get_ref()).is_some()
                || driver.get_ref() == "rcx-motor";
            let input = port.get_ref().starts_with("in");
            let sensor = SensorDriver::from_driver_name(driver.get_ref()).is_some();
            if !known || input != sensor {
                let what = format!(
                    "{:?} is not a {} driver (e.g. {})",
                    driver.get_ref(),
                    if input { "sensor" } else { "motor" },
                    if input {
                        "lego-ev3-touch"
                    } else {
                        "lego-ev3-l-motor"
                    }
                );
                return Err(at(
                    driver.span(),
                    &format!("ports.{}", port.get_ref()),
                    what,
                ));
            }
            ports.push((port.get_ref().clone(), driver.get_ref().clone()));
        }
        let driver_on = |port: &str| {
            ports
                .iter()
                .find(|(p, _)| p == port)
                .map(|(_, d)| d.clone())
        };
        let colour = |name: &Spanned<String>, field: &str| {
            Colour::from_name(name.get_ref()).ok_or_else(|| {
                let what = format!("unknown colour {:?} ({})", name.get_ref(), Colour::NAMES);
                at(name.span(), field, what)
            })
        };
        let arena = &file.arena;
        let size = (arena.size[0], arena.size[1]);
        if size.0 <= 0.0 || size.1 <= 0.0 {
            return Err(invalid(
                origin,
                "field arena.size: must be positive".to_owned(),
            ));
        }
        let mut obstacles: Vec<Rect> = file
            .obstacles
            .iter()
            .map(|o| {
                let [x, y, w, h] = o.get_ref().rect;
                Rect::new(x, y, w, h)
            })
            .collect();
        if arena.walls {
            let t = 1000.0;
            obstacles.push(Rect::new(-t, -t, t, size.1 + 2.0 * t));
            obstacles.push(Rect::new(size.0, -t, t, size.1 + 2.0 * t));
            obstacles.push(Rect::new(-t, -t, size.0 + 2.0 * t, t));
            obstacles.push(Rect::new(-t, size.1, size.0 + 2.0 * t, t));
        }
        let floor = colour(&arena.floor, "arena.floor")?;
        let mut mat = Mat::new(floor, arena.ambient);
        for (i, item) in file.mat.iter().enumerate() {
            let field = format!("mat[{i}]");
            let m = item.get_ref();
            let c = colour(&Spanned::new(item.span(), m.colour.clone()), &field)?;
            let shapes = [m.rect.is_some(), m.circle.is_some(), m.line.is_some()];
            let shape = match (&m.rect, &m.circle, &m.line) {
                _ if shapes.iter().filter(|s| **s).count() != 1 => {
                    let what = "give exactly one of rect, circle, line".to_owned();
                    return Err(at(item.span(), &field, what));
                }
                (Some([x, y, w, h]), _, _) => Shape::Rect(Rect::new(*x, *y, *w, *h)),
                (_, Some([x, y, r]), _) => Shape::Circle(Vec2::new(*x, *y), *r),
                (_, _, Some(points)) if points.len() >= 2 => Shape::Line {
                    points: points.iter().map(|[x, y]| Vec2::new(*x, *y)).collect(),
                    half_width: m.width.unwrap_or(20.0) / 2.0,
                    closed: m.closed,
                },
                _ => {
                    let what = "a line needs at least two points".to_owned();
                    return Err(at(item.span(), &format!("{field}.line"), what));
                }
            };
            mat.push(shape, c, m.reflect);
        }
        let drive = match &file.drive {
            None => None,
            Some(d) => {
                let (span, f) = (d.span(), d.get_ref());
                for (field, port) in [("drive.left", &f.left), ("drive.right", &f.right)] {
                    let motor = driver_on(port).and_then(|d| TachoDriver::from_driver_name(&d));
                    if motor.is_none() {
                        let what = format!("no tacho motor on port {port:?} under [ports]");
                        return Err(at(span.clone(), field, what));
                    }
                }
                if f.drag.iter().any(|d| !(0.0..=1.0).contains(d)) {
                    let what = "drag must be between 0 and 1 (of the stall torque)".to_owned();
                    return Err(at(span, "drive.drag", what));
                }
                if f.wheel_diameter <= 0.0 || f.axle_track <= 0.0 {
                    let what = "wheel_diameter and axle_track must be positive".to_owned();
                    return Err(at(span, "drive", what));
                }
                Some(Drive {
                    left: f.left.clone(),
                    right: f.right.clone(),
                    wheel_diameter: f.wheel_diameter,
                    axle_track: f.axle_track,
                    start: Pose {
                        x: f.start[0],
                        y: f.start[1],
                        heading: f.start[2].to_radians(),
                    },
                    front: f.body.front,
                    back: f.body.back,
                    width: f.body.width,
                    drag: f.drag,
                })
            }
        };
        let mut sensors = Vec::new();
        for (port, mount) in &file.sensors {
            let field = format!("sensors.{}", port.get_ref());
            let driver = driver_on(port.get_ref()).and_then(|d| SensorDriver::from_driver_name(&d));
            let Some(driver) = driver else {
                let what = format!("no sensor on port {:?} under [ports]", port.get_ref());
                return Err(at(port.span(), &field, what));
            };
            let m = mount.get_ref();
            sensors.push(Mount {
                port: port.get_ref().clone(),
                driver,
                at: (m.at[0], m.at[1]),
                look: m.look.to_radians(),
                drift: m.drift,
            });
        }
        // Sensors on ports without a [sensors] entry sit at the axle centre.
        for (port, driver) in &ports {
            let Some(driver) = SensorDriver::from_driver_name(driver) else {
                continue;
            };
            if !sensors.iter().any(|m| &m.port == port) {
                sensors.push(Mount {
                    port: port.clone(),
                    driver,
                    at: (0.0, 0.0),
                    look: 0.0,
                    drift: 0.0,
                });
            }
        }
        let mut arms = Vec::new();
        for (port, arm) in &file.arms {
            let field = format!("arms.{}", port.get_ref());
            let motor = driver_on(port.get_ref()).and_then(|d| TachoDriver::from_driver_name(&d));
            if motor.is_none() {
                let what = format!("no tacho motor on port {:?} under [ports]", port.get_ref());
                return Err(at(port.span(), &field, what));
            }
            let [a, b] = arm.get_ref().stops;
            if a >= b {
                let what = "stops = [low, high] with low < high (degrees)".to_owned();
                return Err(at(arm.span(), &field, what));
            }
            arms.push((port.get_ref().clone(), (a, b)));
        }
        Ok(WorldSpec {
            name: file.name.unwrap_or_else(|| origin.display().to_string()),
            about: file.about.unwrap_or_default(),
            ports,
            size,
            obstacles,
            mat,
            drive,
            sensors,
            arms,
        })
    }

    /// The world's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the world is, in a sentence.
    pub fn about(&self) -> &str {
        &self.about
    }

    /// The devices the world plugs in: (port, kernel driver name).
    pub fn ports(&self) -> &[(String, String)] {
        &self.ports
    }

    /// The arena's extent (mm, east and north from the origin).
    pub fn size(&self) -> (f64, f64) {
        self.size
    }

    /// The obstacles (with the walls round the arena when it has them).
    pub fn obstacles(&self) -> &[Rect] {
        &self.obstacles
    }

    /// The floor's colour.
    pub fn floor(&self) -> Colour {
        self.mat.floor
    }

    /// The mat's colour at point `p`.
    pub fn colour_at(&self, p: Vec2) -> Colour {
        self.mat.at(p)
    }

    /// The shapes on the mat, bottom first, with their colours.
    pub fn mat(&self) -> &[(Shape, Colour)] {
        &self.mat.shapes
    }
}

/// The dotted name (`arena.size`) of the key on the line of byte `offset`
/// in `text`, under the last table header above it.
fn field_at(text: &str, offset: usize) -> Option<String> {
    let before = text.get(..offset)?;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = text[start..].lines().next()?.trim();
    let key = line
        .split_once('=')
        .map(|(k, _)| k.trim())
        .filter(|k| !k.is_empty() && !k.starts_with('['));
    let table = before[..start]
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('['))
        .map(|l| l.trim_matches(|c| c == '[' || c == ']').trim().to_owned());
    match (table, key) {
        (Some(t), Some(k)) => Some(format!("{t}.{k}")),
        (None, Some(k)) => Some(k.to_owned()),
        _ => None,
    }
}

/// The 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text.get(..offset).map_or(0, |t| t.matches('\n').count()) + 1
}

fn invalid(origin: &Path, message: String) -> Error {
    Error::Io {
        path: origin.to_path_buf(),
        operation: Operation::Read,
        source: io::Error::new(io::ErrorKind::InvalidData, format!("bad world: {message}")),
    }
}
