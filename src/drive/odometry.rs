//! Odometry in integer arithmetic: the pose from both wheel encoders (and a
//! gyro, when there is one), with a CORDIC sine and cosine.

use crate::units::{scale, Degrees, Millimetres, PI_DEN, PI_NUM};

/// Where a drive base is, relative to where its odometry was last reset:
/// `x` forward from there, `y` to its right, `heading` clockwise (as the EV3
/// gyro and pybricks count it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pose {
    /// Forward from the start, in micrometres.
    pub x_um: i64,
    /// To the right of the start, in micrometres.
    pub y_um: i64,
    /// Heading, clockwise, in millidegrees (not wrapped: two turns right
    /// are 720 000).
    pub heading_mdeg: i64,
}

impl Pose {
    /// `x` in whole millimetres.
    pub fn x(&self) -> Millimetres {
        Millimetres(to_i32(scale(i128::from(self.x_um), 1, 1000)))
    }
    /// `y` in whole millimetres.
    pub fn y(&self) -> Millimetres {
        Millimetres(to_i32(scale(i128::from(self.y_um), 1, 1000)))
    }
    /// The heading in whole degrees.
    pub fn heading(&self) -> Degrees {
        Degrees(to_i32(scale(i128::from(self.heading_mdeg), 1, 1000)))
    }
    /// Straight-line distance from the start, in micrometres.
    pub fn distance_from_start_um(&self) -> i64 {
        // Unsigned: two squares of i64::MIN are 2^127, beyond i128.
        let (x, y) = (
            u128::from(self.x_um.unsigned_abs()),
            u128::from(self.y_um.unsigned_abs()),
        );
        i64::try_from(isqrt(x * x + y * y)).unwrap_or(i64::MAX)
    }
}

fn to_i32(v: i64) -> i32 {
    i32::try_from(v).unwrap_or(if v < 0 { i32::MIN } else { i32::MAX })
}

/// Integer square root (Newton), rounded down.
pub(crate) fn isqrt(n: u128) -> u128 {
    if n < 2 {
        return n;
    }
    let mut x = n;
    // n / 2 + 1 >= (n + 1) / 2 without overflowing at u128::MAX.
    let mut y = n / 2 + 1;
    while y < x {
        x = y;
        y = (x + n / x) / 2;
    }
    x
}

/// One in Q30 fixed point.
const ONE: i64 = 1 << 30;
/// The CORDIC gain's inverse (product of 1/sqrt(1 + 2^-2i)), Q30.
const CORDIC_K: i64 = 652_032_874;
/// atan(2^-i) in microdegrees.
const ATAN_UDEG: [i64; 27] = [
    45_000_000, 26_565_051, 14_036_243, 7_125_016, 3_576_334, 1_789_911, 895_174, 447_614, 223_811,
    111_906, 55_953, 27_976, 13_988, 6_994, 3_497, 1_749, 874, 437, 219, 109, 55, 27, 14, 7, 3, 2,
    1,
];

/// `(cos, sin)` of `angle_udeg` microdegrees, Q30 (error about 1e-7).
pub(crate) fn cos_sin(angle_udeg: i64) -> (i64, i64) {
    const FULL: i64 = 360_000_000;
    let mut a = angle_udeg.rem_euclid(FULL);
    if a > FULL / 2 {
        a -= FULL; // -180..=180 degrees
    }
    // CORDIC converges for |a| <= 99.9 degrees: fold the rest by 180.
    let flip = a.abs() > FULL / 4;
    if flip {
        a -= FULL / 2 * a.signum();
    }
    let (mut x, mut y, mut z) = (CORDIC_K, 0i64, a);
    for (i, step) in ATAN_UDEG.iter().enumerate() {
        let (dx, dy) = (y >> i, x >> i);
        if z >= 0 {
            (x, y, z) = (x - dx, y + dy, z - step);
        } else {
            (x, y, z) = (x + dx, y - dy, z + step);
        }
    }
    if flip {
        (-x, -y)
    } else {
        (x, y)
    }
}

/// The fixed geometry of a drive base.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Geometry {
    /// Wheel diameter, mm.
    pub wheel: i64,
    /// Distance between the wheels' contact points, mm.
    pub axle: i64,
    /// Counts per turn, left and right.
    pub cpr: (i64, i64),
}

impl Geometry {
    /// Wheel rotation for `counts` of the left (`left`) or right motor, in
    /// microdegrees.
    fn wheel_udeg(&self, counts: i64, left: bool) -> i64 {
        let cpr = if left { self.cpr.0 } else { self.cpr.1 };
        scale(i128::from(counts) * 360_000_000, 1, i128::from(cpr))
    }

    /// Micrometres rolled for `wheel_udeg` microdegrees of wheel rotation.
    fn rolled_um(&self, wheel_udeg: i64) -> i64 {
        scale(
            i128::from(wheel_udeg) * i128::from(self.wheel) * i128::from(PI_NUM),
            1,
            i128::from(PI_DEN) * 360_000,
        )
    }

    /// Robot heading (microdegrees, clockwise) for a difference of wheel
    /// rotations left - right: `diff * wheel / (2 * axle)`.
    fn heading_udeg(&self, wheel_diff_udeg: i64) -> i64 {
        scale(
            i128::from(wheel_diff_udeg) * i128::from(self.wheel),
            1,
            2 * i128::from(self.axle),
        )
    }
}

/// The integrator: call [`Odometry::update`] with each new pair of encoder
/// readings. Each update adds the arc between the two readings (exact when
/// both wheels turned at constant speeds in between).
#[derive(Debug, Clone)]
pub(crate) struct Odometry {
    geometry: Geometry,
    origin: (i64, i64),
    last: (i64, i64),
    /// Heading source offset: the gyro angle at the reset, in degrees.
    gyro_origin: Option<i32>,
    pose: (i64, i64, i64), // x, y in µm; heading in µdeg
}

impl Odometry {
    pub(crate) fn new(geometry: Geometry, left: i32, right: i32, gyro: Option<i32>) -> Odometry {
        let at = (i64::from(left), i64::from(right));
        Odometry {
            geometry,
            origin: at,
            last: at,
            gyro_origin: gyro,
            pose: (0, 0, 0),
        }
    }

    /// Zero pose at the current readings.
    pub(crate) fn reset(&mut self, left: i32, right: i32, gyro: Option<i32>) {
        *self = Odometry::new(self.geometry, left, right, gyro);
    }

    /// Integrates the motion since the last readings.
    pub(crate) fn update(&mut self, left: i32, right: i32, gyro: Option<i32>) {
        let g = self.geometry;
        let (left, right) = (i64::from(left), i64::from(right));
        let (dl, dr) = (
            g.wheel_udeg(left - self.last.0, true),
            g.wheel_udeg(right - self.last.1, false),
        );
        self.last = (left, right);
        let h0 = self.pose.2;
        let h1 = match (gyro, self.gyro_origin) {
            (Some(angle), Some(origin)) => (i64::from(angle) - i64::from(origin)) * 1_000_000,
            _ => g.heading_udeg(
                g.wheel_udeg(left - self.origin.0, true)
                    - g.wheel_udeg(right - self.origin.1, false),
            ),
        };
        let ds = g.rolled_um((dl + dr) / 2);
        // Chord of the arc: ds * sin(dθ/2) / (dθ/2) = ds * (1 - dθ²/24 + dθ⁴/1920).
        let dtheta = scale(
            (i128::from(h1) - i128::from(h0)) * i128::from(PI_NUM) * i128::from(ONE),
            1,
            i128::from(PI_DEN) * 180_000_000,
        );
        let sq = scale(i128::from(dtheta) * i128::from(dtheta), 1, i128::from(ONE));
        let quad = scale(i128::from(sq) * i128::from(sq), 1, i128::from(ONE));
        let chord = scale(
            i128::from(ds) * i128::from(ONE - sq / 24 + quad / 1920),
            1,
            i128::from(ONE),
        );
        // The mean of two i64 fits in one.
        let middle = (i128::from(h0) + i128::from(h1)) / 2;
        let (cos, sin) = cos_sin(i64::try_from(middle).unwrap_or(0));
        let step = |v: i64| scale(i128::from(chord) * i128::from(v), 1, i128::from(ONE));
        self.pose.0 = self.pose.0.saturating_add(step(cos));
        self.pose.1 = self.pose.1.saturating_add(step(sin));
        self.pose.2 = h1;
    }

    pub(crate) fn pose(&self) -> Pose {
        Pose {
            x_um: self.pose.0,
            y_um: self.pose.1,
            heading_mdeg: scale(i128::from(self.pose.2), 1, 1000),
        }
    }

    /// Distance rolled (mean of both wheels) since the reset, µm.
    pub(crate) fn distance_um(&self) -> i64 {
        let g = self.geometry;
        let l = g.wheel_udeg(self.last.0 - self.origin.0, true);
        let r = g.wheel_udeg(self.last.1 - self.origin.1, false);
        g.rolled_um((l + r) / 2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cordic_matches_libm() {
        for deg in (-720..=720).step_by(7) {
            let udeg = i64::from(deg) * 1_000_000 + 123_456;
            let (c, s) = cos_sin(udeg);
            let rad = (udeg as f64 / 1e6).to_radians();
            let (c, s) = (c as f64 / ONE as f64, s as f64 / ONE as f64);
            assert!((c - rad.cos()).abs() < 1e-6, "cos {deg}: {c}");
            assert!((s - rad.sin()).abs() < 1e-6, "sin {deg}: {s}");
        }
        assert_eq!(isqrt(1_000_000), 1000);
        assert_eq!(isqrt(1_000_001), 1000);
    }

    #[test]
    fn a_quarter_circle_in_one_update_lands_on_the_arc() {
        // Wheels 56 mm, axle 112 mm, 360 counts: the left wheel on a circle
        // of radius 168 + 56 = 224 mm, the right on 112 mm: centre radius
        // 168 mm, a quarter turn clockwise.
        let g = Geometry {
            wheel: 56,
            axle: 112,
            cpr: (360, 360),
        };
        let wheel_deg = |arc_mm: f64| (arc_mm * 360.0 / (std::f64::consts::PI * 56.0)).round();
        let quarter = std::f64::consts::FRAC_PI_2;
        let (l, r) = (wheel_deg(224.0 * quarter), wheel_deg(112.0 * quarter));
        let mut o = Odometry::new(g, 0, 0, None);
        o.update(l as i32, r as i32, None);
        let p = o.pose();
        // Exactly: (168, 168) mm, heading 90 degrees.
        assert!((p.x_um - 168_000).abs() < 1_500, "{p:?}");
        assert!((p.y_um - 168_000).abs() < 1_500, "{p:?}");
        assert!((p.heading_mdeg - 90_000).abs() < 400, "{p:?}");
    }

    #[test]
    fn extreme_readings_saturate_without_overflow() {
        let big = Pose {
            x_um: i64::MIN,
            y_um: i64::MIN,
            heading_mdeg: i64::MAX,
        };
        assert_eq!(big.distance_from_start_um(), i64::MAX);
        assert_eq!(big.x(), Millimetres(i32::MIN));
        assert_eq!(isqrt(u128::MAX), u128::from(u64::MAX));
        for (wheel, axle, cpr) in [(1, i64::from(i32::MAX), 1), (i64::from(i32::MAX), 1, 1)] {
            let g = Geometry {
                wheel,
                axle,
                cpr: (cpr, cpr),
            };
            let mut o = Odometry::new(g, i32::MIN, i32::MAX, Some(i32::MIN));
            for (l, r, gyro) in [
                (i32::MAX, i32::MIN, Some(i32::MAX)),
                (i32::MIN, i32::MAX, Some(i32::MIN)),
                (i32::MAX, i32::MAX, Some(0)),
            ] {
                o.update(l, r, gyro);
                o.update(l, r, None);
                let _ = (o.pose(), o.distance_um());
            }
            let _ = o.pose().distance_from_start_um();
        }
    }
}
