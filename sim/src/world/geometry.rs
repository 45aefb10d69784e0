//! Plane geometry for the simulated world: points, poses, rectangles,
//! the robot's footprint, ray casts and overlap tests. Millimetres and
//! radians, f64 (host-side only).

/// A point or vector in the arena (mm): `x` to the east, `y` to the north.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Vec2 {
    /// East, mm.
    pub x: f64,
    /// North, mm.
    pub y: f64,
}

impl Vec2 {
    /// The point (`x`, `y`).
    pub const fn new(x: f64, y: f64) -> Vec2 {
        Vec2 { x, y }
    }

    pub(crate) fn add(self, o: Vec2) -> Vec2 {
        Vec2::new(self.x + o.x, self.y + o.y)
    }

    pub(crate) fn sub(self, o: Vec2) -> Vec2 {
        Vec2::new(self.x - o.x, self.y - o.y)
    }

    pub(crate) fn scale(self, k: f64) -> Vec2 {
        Vec2::new(self.x * k, self.y * k)
    }

    pub(crate) fn dot(self, o: Vec2) -> f64 {
        self.x * o.x + self.y * o.y
    }

    pub(crate) fn length(self) -> f64 {
        self.dot(self).sqrt()
    }

    /// The unit vector at `angle` radians counter-clockwise from east.
    pub(crate) fn unit(angle: f64) -> Vec2 {
        Vec2::new(angle.cos(), angle.sin())
    }
}

/// Where the robot is: the centre of its axle and its heading.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Pose {
    /// East, mm.
    pub x: f64,
    /// North, mm.
    pub y: f64,
    /// Radians counter-clockwise from east.
    pub heading: f64,
}

impl Pose {
    /// The arena point at `forward` mm ahead of the axle centre and `left`
    /// mm to its left.
    pub(crate) fn point(&self, forward: f64, left: f64) -> Vec2 {
        let (s, c) = self.heading.sin_cos();
        Vec2::new(
            self.x + forward * c - left * s,
            self.y + forward * s + left * c,
        )
    }

    /// The heading in degrees, in (-180, 180].
    pub fn heading_degrees(&self) -> f64 {
        let d = self.heading.to_degrees() % 360.0;
        if d > 180.0 {
            d - 360.0
        } else if d <= -180.0 {
            d + 360.0
        } else {
            d
        }
    }
}

/// An axis-aligned rectangle (an obstacle or a mat area), mm.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rect {
    /// The south-west corner.
    pub min: Vec2,
    /// The north-east corner.
    pub max: Vec2,
}

impl Rect {
    /// The rectangle with corner (`x`, `y`) and size `w` × `h` (negative
    /// sizes extend west or south).
    pub fn new(x: f64, y: f64, w: f64, h: f64) -> Rect {
        Rect {
            min: Vec2::new(x.min(x + w), y.min(y + h)),
            max: Vec2::new(x.max(x + w), y.max(y + h)),
        }
    }

    pub(crate) fn contains(&self, p: Vec2) -> bool {
        p.x >= self.min.x && p.x <= self.max.x && p.y >= self.min.y && p.y <= self.max.y
    }

    fn corners(&self) -> [Vec2; 4] {
        [
            self.min,
            Vec2::new(self.max.x, self.min.y),
            self.max,
            Vec2::new(self.min.x, self.max.y),
        ]
    }

    /// The distance along the ray from `from` in unit direction `dir` to
    /// where it enters the rectangle (0 when `from` is inside); `None` when
    /// it misses (the slab method).
    pub(crate) fn ray(&self, from: Vec2, dir: Vec2) -> Option<f64> {
        let (mut near, mut far) = (0.0f64, f64::INFINITY);
        for (o, d, lo, hi) in [
            (from.x, dir.x, self.min.x, self.max.x),
            (from.y, dir.y, self.min.y, self.max.y),
        ] {
            if d.abs() < 1e-12 {
                if o < lo || o > hi {
                    return None;
                }
                continue;
            }
            let (a, b) = ((lo - o) / d, (hi - o) / d);
            near = near.max(a.min(b));
            far = far.min(a.max(b));
            if near > far {
                return None;
            }
        }
        Some(near)
    }
}

/// A convex polygon (the robot's footprint in the arena).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Polygon(pub(crate) Vec<Vec2>);

impl Polygon {
    /// Whether the polygon and `rect` overlap (separating axis test).
    pub(crate) fn overlaps(&self, rect: &Rect) -> bool {
        let corners = rect.corners();
        let mut axes = vec![Vec2::new(1.0, 0.0), Vec2::new(0.0, 1.0)];
        for (i, a) in self.0.iter().enumerate() {
            let b = self.0[(i + 1) % self.0.len()];
            let edge = b.sub(*a);
            axes.push(Vec2::new(-edge.y, edge.x));
        }
        axes.iter().all(|axis| {
            let span = |points: &[Vec2]| {
                points
                    .iter()
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
                        let v = p.dot(*axis);
                        (lo.min(v), hi.max(v))
                    })
            };
            let (a, b) = (span(&self.0), span(&corners));
            a.0 < b.1 && b.0 < a.1
        })
    }
}

/// The distance from `p` to the segment `a`–`b`, and how far along it
/// (0..1) the nearest point lies.
pub(crate) fn segment_distance(p: Vec2, a: Vec2, b: Vec2) -> (f64, f64) {
    let ab = b.sub(a);
    let len2 = ab.dot(ab);
    let t = if len2 == 0.0 {
        0.0
    } else {
        (p.sub(a).dot(ab) / len2).clamp(0.0, 1.0)
    };
    (p.sub(a.add(ab.scale(t))).length(), t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rays_enter_rectangles() {
        let r = Rect::new(100.0, -50.0, 20.0, 100.0);
        let east = Vec2::unit(0.0);
        assert_eq!(r.ray(Vec2::new(0.0, 0.0), east), Some(100.0));
        assert_eq!(r.ray(Vec2::new(0.0, 60.0), east), None);
        assert_eq!(r.ray(Vec2::new(110.0, 0.0), east), Some(0.0));
        assert_eq!(
            r.ray(Vec2::new(0.0, 0.0), Vec2::unit(std::f64::consts::PI)),
            None
        );
        let d = r.ray(Vec2::new(0.0, 0.0), Vec2::unit(0.3)).unwrap_or(0.0);
        assert!((d - 100.0 / 0.3f64.cos()).abs() < 1e-9);
    }

    #[test]
    fn polygons_overlap_rectangles() {
        let square = |x: f64| {
            Polygon(vec![
                Vec2::new(x, 0.0),
                Vec2::new(x + 10.0, 0.0),
                Vec2::new(x + 10.0, 10.0),
                Vec2::new(x, 10.0),
            ])
        };
        let wall = Rect::new(20.0, -100.0, 5.0, 200.0);
        assert!(!square(0.0).overlaps(&wall));
        assert!(square(15.0).overlaps(&wall));
        // A diamond whose corner only reaches the wall's side.
        let diamond = Polygon(vec![
            Vec2::new(10.0, 0.0),
            Vec2::new(19.0, 5.0),
            Vec2::new(10.0, 10.0),
            Vec2::new(1.0, 5.0),
        ]);
        assert!(!diamond.overlaps(&wall));
    }

    #[test]
    fn poses_place_points() {
        let pose = Pose {
            x: 10.0,
            y: 20.0,
            heading: std::f64::consts::FRAC_PI_2,
        };
        let p = pose.point(5.0, 2.0);
        assert!(
            (p.x - 8.0).abs() < 1e-9 && (p.y - 25.0).abs() < 1e-9,
            "{p:?}"
        );
        assert!((pose.heading_degrees() - 90.0).abs() < 1e-9);
        assert_eq!(
            segment_distance(
                Vec2::new(5.0, 3.0),
                Vec2::new(0.0, 0.0),
                Vec2::new(10.0, 0.0)
            ),
            (3.0, 0.5)
        );
    }
}
