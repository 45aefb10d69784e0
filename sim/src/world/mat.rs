//! The floor mat: coloured shapes on a floor colour, and what an EV3
//! colour sensor looking down at a spot of it measures.

use super::geometry::{segment_distance, Rect, Vec2};

/// Radius of the spot a colour sensor sees on the mat, mm.
const SPOT_MM: f64 = 6.0;
/// Samples across the spot's diameter (at cell centres: none on its axes).
const SPOT_SAMPLES: i32 = 8;

/// A colour on the mat, as an EV3 colour sensor sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Colour {
    /// `COL-COLOR` code (1 black .. 7 brown).
    pub code: i64,
    /// `COL-REFLECT`, percent.
    pub reflect: f64,
    /// `RGB-RAW` (0..1020 each).
    pub rgb: [f64; 3],
}

impl Colour {
    /// The colour names a world file may use.
    pub const NAMES: &'static str = "black, blue, green, yellow, red, white, brown";

    /// The colour called `name` (one of [`Colour::NAMES`]).
    pub fn from_name(name: &str) -> Option<Colour> {
        let (code, reflect, rgb) = match name {
            "black" => (1, 5.0, [28.0, 32.0, 24.0]),
            "blue" => (2, 14.0, [40.0, 80.0, 170.0]),
            "green" => (3, 16.0, [50.0, 130.0, 50.0]),
            "yellow" => (4, 72.0, [340.0, 300.0, 60.0]),
            "red" => (5, 58.0, [330.0, 60.0, 40.0]),
            "white" => (6, 90.0, [380.0, 390.0, 350.0]),
            "brown" => (7, 22.0, [110.0, 65.0, 35.0]),
            _ => return None,
        };
        Some(Colour { code, reflect, rgb })
    }
}

/// A shape drawn on the mat.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// A filled rectangle.
    Rect(Rect),
    /// A filled disc: centre and radius.
    Circle(Vec2, f64),
    /// A polyline of tape, `half_width` to each side; `closed` joins the
    /// last point to the first.
    Line {
        /// The tape's middle line.
        points: Vec<Vec2>,
        /// Half the tape's width, mm.
        half_width: f64,
        /// The last point joins the first.
        closed: bool,
    },
}

impl Shape {
    fn contains(&self, p: Vec2) -> bool {
        match self {
            Shape::Rect(r) => r.contains(p),
            Shape::Circle(c, r) => p.sub(*c).length() <= *r,
            Shape::Line {
                points, half_width, ..
            } => self
                .segments()
                .any(|(a, b)| segment_distance(p, points[a], points[b]).0 <= *half_width),
        }
    }

    /// Index pairs of a line's segments.
    pub(crate) fn segments(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        let (n, closed) = match self {
            Shape::Line { points, closed, .. } => (points.len(), *closed),
            _ => (0, false),
        };
        let last = if closed { n } else { n.saturating_sub(1) };
        (0..last).map(move |i| (i, (i + 1) % n))
    }
}

/// A shape near a spot, its colour, and (for a line) its segments there.
type Near<'a> = (&'a Shape, Colour, Vec<(usize, usize)>);

/// What a colour sensor measures over a spot.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Seen {
    pub(crate) reflect: f64,
    pub(crate) rgb: [f64; 3],
    pub(crate) code: i64,
}

/// The floor: a colour, shapes on it (later ones on top), ambient light.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Mat {
    pub(crate) floor: Colour,
    pub(crate) ambient: f64,
    pub(crate) shapes: Vec<(Shape, Colour)>,
}

impl Mat {
    pub(crate) fn new(floor: Colour, ambient: f64) -> Mat {
        Mat {
            floor,
            ambient,
            shapes: Vec::new(),
        }
    }

    /// Draws `shape` in `colour` (its reflection overridden by `reflect`).
    pub(crate) fn push(&mut self, shape: Shape, colour: Colour, reflect: Option<f64>) {
        let mut colour = colour;
        if let Some(r) = reflect {
            colour.reflect = r.clamp(0.0, 100.0);
        }
        self.shapes.push((shape, colour));
    }

    /// The colour at point `p`.
    pub(crate) fn at(&self, p: Vec2) -> Colour {
        self.shapes
            .iter()
            .rev()
            .find(|(s, _)| s.contains(p))
            .map_or(self.floor, |(_, c)| *c)
    }

    /// What a sensor looking down at `centre` sees: the mean reflection and
    /// RGB over its spot, and the colour that covers most of it.
    pub(crate) fn seen(&self, centre: Vec2) -> Seen {
        // Only the shapes (and a line's segments) that reach the spot.
        let reach = SPOT_MM + 1e-6;
        let near: Vec<Near<'_>> = self
            .shapes
            .iter()
            .filter_map(|(shape, colour)| {
                let segments = match shape {
                    Shape::Line {
                        points, half_width, ..
                    } => {
                        let close = |&(a, b): &(usize, usize)| {
                            segment_distance(centre, points[a], points[b]).0 <= half_width + reach
                        };
                        let segments: Vec<_> = shape.segments().filter(close).collect();
                        if segments.is_empty() {
                            return None;
                        }
                        segments
                    }
                    Shape::Rect(r) => {
                        let nearest = Vec2::new(
                            centre.x.clamp(r.min.x, r.max.x),
                            centre.y.clamp(r.min.y, r.max.y),
                        );
                        if nearest.sub(centre).length() > reach {
                            return None;
                        }
                        Vec::new()
                    }
                    Shape::Circle(c, r) => {
                        if c.sub(centre).length() > r + reach {
                            return None;
                        }
                        Vec::new()
                    }
                };
                Some((shape, *colour, segments))
            })
            .collect();
        let colour_at = |p: Vec2| {
            near.iter()
                .rev()
                .find(|(shape, _, segments)| match shape {
                    Shape::Line {
                        points, half_width, ..
                    } => segments
                        .iter()
                        .any(|&(a, b)| segment_distance(p, points[a], points[b]).0 <= *half_width),
                    _ => shape.contains(p),
                })
                .map_or(self.floor, |(_, c, _)| *c)
        };
        let (mut reflect, mut rgb, mut n) = (0.0, [0.0; 3], 0.0);
        let mut votes = [0u32; 8];
        let half = SPOT_SAMPLES / 2;
        let step = SPOT_MM / f64::from(half);
        for i in -half..half {
            for j in -half..half {
                let d = Vec2::new(f64::from(i) + 0.5, f64::from(j) + 0.5).scale(step);
                if d.length() > SPOT_MM + 1e-9 {
                    continue;
                }
                let c = colour_at(centre.add(d));
                reflect += c.reflect;
                for (sum, v) in rgb.iter_mut().zip(c.rgb) {
                    *sum += v;
                }
                votes[c.code.clamp(0, 7) as usize] += 1;
                n += 1.0;
            }
        }
        let code = (0..8).rev().max_by_key(|&k| votes[k]).unwrap_or(0) as i64;
        Seen {
            reflect: reflect / n,
            rgb: rgb.map(|v| v / n),
            code,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spot_averages_across_an_edge() {
        let (white, black) = (Colour::from_name("white"), Colour::from_name("black"));
        let (Some(white), Some(black)) = (white, black) else {
            panic!("colours")
        };
        let mut mat = Mat::new(white, 10.0);
        mat.push(
            Shape::Rect(Rect::new(0.0, -100.0, 100.0, 200.0)),
            black,
            None,
        );
        let on_edge = mat.seen(Vec2::new(0.0, 0.0));
        assert!((on_edge.reflect - 47.5).abs() < 5.0, "{on_edge:?}");
        assert_eq!(mat.seen(Vec2::new(50.0, 0.0)).code, 1);
        assert_eq!(mat.seen(Vec2::new(-50.0, 0.0)).reflect, 90.0);
        let inside = mat.seen(Vec2::new(3.0, 0.0)).reflect;
        assert!(inside < on_edge.reflect, "{inside}");
    }
}
