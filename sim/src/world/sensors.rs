//! What each simulated sensor measures in the world, in every one of its
//! modes (so that a mode switch reads the new mode's value at once).

use super::geometry::{Pose, Rect, Vec2};
use super::mat::{Mat, Seen};
use super::spec::Mount;
use crate::SensorDriver;

/// Half the ultrasonic sensor's cone, radians (rays at -, 0, +).
const US_CONE: f64 = 0.14;
/// The farthest the EV3 ultrasonic sensor reports, mm.
const US_MAX_MM: f64 = 2550.0;
/// IR proximity: 100 % at this distance and beyond, mm.
const IR_FAR_MM: f64 = 700.0;

/// What the world looks like to a sensor this tick.
#[derive(Debug)]
pub(crate) struct Scene<'a> {
    pub(crate) pose: Pose,
    pub(crate) obstacles: &'a [Rect],
    pub(crate) mat: &'a Mat,
    /// Heading change since the gyro's last reset, radians
    /// (counter-clockwise positive).
    pub(crate) turned: f64,
    /// Turn rate, radians per second (counter-clockwise positive).
    pub(crate) rate: f64,
    /// Seconds since the gyro's last reset (for drift).
    pub(crate) since_reset: f64,
}

impl Scene<'_> {
    /// Distance from `from` along `angle` to the nearest obstacle, mm.
    pub(crate) fn range(&self, from: Vec2, angle: f64) -> f64 {
        let dir = Vec2::unit(angle);
        self.obstacles
            .iter()
            .filter_map(|r| r.ray(from, dir))
            .fold(f64::INFINITY, f64::min)
    }

    /// Whether point `p` is inside an obstacle.
    pub(crate) fn touches(&self, p: Vec2) -> bool {
        self.obstacles.iter().any(|r| r.contains(p))
    }
}

/// The values of each mode of the sensor at `mount` (fixed point, as
/// `valueN` shows them), by mode index; modes the world has nothing to say
/// about (the sensor keeps what it has) are left out.
pub(crate) fn values(mount: &Mount, scene: &Scene<'_>) -> Vec<(usize, Vec<i64>)> {
    let at = scene.pose.point(mount.at.0, mount.at.1);
    // What the sensor looks at, measured once for all its modes.
    let seen = match mount.driver {
        SensorDriver::Ev3Color | SensorDriver::NxtLight => Some(scene.mat.seen(at)),
        _ => None,
    };
    let range = match mount.driver {
        SensorDriver::Ev3Ultrasonic | SensorDriver::NxtUltrasonic => {
            let heading = scene.pose.heading + mount.look;
            [-US_CONE, 0.0, US_CONE]
                .iter()
                .map(|d| scene.range(at, heading + d))
                .fold(f64::INFINITY, f64::min)
        }
        SensorDriver::Ev3Infrared => scene.range(at, scene.pose.heading + mount.look),
        _ => f64::INFINITY,
    };
    let look = Look {
        at,
        seen: seen.unwrap_or(Seen {
            reflect: 0.0,
            rgb: [0.0; 3],
            code: 0,
        }),
        range,
    };
    mount
        .driver
        .modes()
        .iter()
        .enumerate()
        .filter_map(|(i, m)| Some((i, mode_values(mount, m.0, scene, &look)?)))
        .collect()
}

/// What a sensor looks at this tick.
struct Look {
    at: Vec2,
    seen: Seen,
    range: f64,
}

fn mode_values(mount: &Mount, mode: &str, scene: &Scene<'_>, look: &Look) -> Option<Vec<i64>> {
    let (at, seen) = (look.at, look.seen);
    let round = |v: f64| v.round() as i64;
    match mount.driver {
        SensorDriver::Ev3Touch | SensorDriver::NxtTouch => Some(vec![i64::from(scene.touches(at))]),
        SensorDriver::Ev3Color => {
            let reflect = seen.reflect;
            Some(match mode {
                "COL-REFLECT" => vec![round(reflect)],
                "COL-AMBIENT" => vec![round(scene.mat.ambient)],
                "COL-COLOR" => vec![seen.code],
                "REF-RAW" => vec![round(680.0 - reflect * 5.0), round(620.0)],
                "RGB-RAW" => seen.rgb.iter().map(|v| round(*v)).collect(),
                _ => return None,
            })
        }
        SensorDriver::NxtLight => Some(match mode {
            "REFLECT" => vec![round(seen.reflect * 10.0)],
            "AMBIENT" => vec![round(scene.mat.ambient * 10.0)],
            _ => return None,
        }),
        SensorDriver::Ev3Ultrasonic | SensorDriver::NxtUltrasonic => {
            let mm = look.range.min(US_MAX_MM);
            let nxt = mount.driver == SensorDriver::NxtUltrasonic;
            Some(match mode {
                "US-LISTEN" => vec![0],
                m if m.ends_with("-IN") => vec![round((mm / 2.54).min(1003.0))],
                _ if nxt => vec![round((mm / 10.0).min(255.0))],
                _ => vec![round(mm)],
            })
        }
        SensorDriver::Ev3Infrared => match mode {
            "IR-PROX" => Some(vec![round(
                (look.range / IR_FAR_MM * 100.0).clamp(0.0, 100.0),
            )]),
            _ => None,
        },
        SensorDriver::Ev3Gyro => {
            // Clockwise positive, as the EV3 gyro reads upright.
            let angle = -scene.turned.to_degrees() + mount.drift * scene.since_reset;
            let rate = -scene.rate.to_degrees() + mount.drift;
            Some(match mode {
                "GYRO-ANG" => vec![round(angle)],
                "GYRO-RATE" | "GYRO-FAS" => vec![round(rate)],
                "GYRO-G&A" => vec![round(angle), round(rate)],
                _ => return None,
            })
        }
        _ => None,
    }
}
