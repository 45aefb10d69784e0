//! The run picture: hand-written SVG text (output only), one decimal per
//! coordinate so that the same run gives the same bytes.

use std::fmt::Write as _;
use std::time::Duration;

use super::{Arena, Event, Point, Pose, Shape};

/// Height of the caption under the arena, per line, in mm of the picture.
const LINE: f64 = 1.0 / 28.0;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The robot at `pose`: its `outline` (a 160 x 120 mm body when empty) and
/// a heading line.
fn robot(out: &mut String, pose: Pose, outline: &[Point], height: f64, colour: &str) {
    let (s, c) = pose.heading.to_radians().sin_cos();
    let corner = |fx: f64, fy: f64| {
        let x = pose.x + fx * c - fy * s;
        let y = pose.y + fx * s + fy * c;
        format!("{:.1},{:.1}", x, height - y)
    };
    let body: Vec<String> = if outline.is_empty() {
        vec![
            corner(-40.0, -60.0),
            corner(120.0, -60.0),
            corner(120.0, 60.0),
            corner(-40.0, 60.0),
        ]
    } else {
        outline
            .iter()
            .map(|(x, y)| format!("{x:.1},{:.1}", height - y))
            .collect()
    };
    let _ = writeln!(
        out,
        r#"<polygon points="{}" fill="{colour}" fill-opacity="0.35" stroke="{colour}" stroke-width="3"/>"#,
        body.join(" ")
    );
    let _ = writeln!(
        out,
        r#"<polyline points="{} {}" stroke="{colour}" stroke-width="5" marker-end="url(#arrow)"/>"#,
        corner(0.0, 0.0),
        corner(110.0, 0.0)
    );
}

/// SVG of a run: the arena with its mat and walls, the robot's `path`,
/// where it started and stopped (its `outline` there, when known), and
/// numbered `events` listed under the arena with their times, `title` above.
pub fn run_picture(
    arena: &Arena,
    path: &[(Duration, Pose)],
    outline: &[Point],
    events: &[Event],
    title: &str,
) -> String {
    let (w, ah) = (arena.width, arena.height);
    // What is drawn: the table, and a margin round it when something
    // sticks out of it (walls round the arena: clipped to the margin).
    let outside = arena
        .shapes
        .iter()
        .flat_map(shape_points)
        .any(|(x, y)| x < 0.0 || y < 0.0 || x > w || y > ah);
    let margin = if outside { w.max(ah) * 0.03 } else { 0.0 };
    let (left, bottom, right, h) = (-margin, -margin, w + margin, ah + margin);
    let span = h - bottom;
    let font = (w.max(ah) / 40.0).max(8.0);
    let line = (w.max(ah) * LINE).max(font * 1.3);
    let caption = line * (2 + events.len().min(12)) as f64;
    let top = line * 1.5;
    let mut o = String::new();
    let _ = writeln!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="{left:.1} {:.1} {:.1} {:.1}" width="800" font-family="DejaVu Sans, sans-serif" font-size="{font:.1}">"#,
        -top,
        right - left,
        span + top + caption,
    );
    o.push_str(concat!(
        r#"<defs><marker id="arrow" viewBox="0 0 10 10" refX="5" refY="5" markerWidth="4" markerHeight="4" orient="auto">"#,
        r#"<path d="M0,0 L10,5 L0,10 z" fill="context-stroke"/></marker></defs>"#,
        "\n"
    ));
    let _ = writeln!(
        o,
        r#"<text x="{left:.1}" y="{:.1}" font-weight="bold">{}</text>"#,
        -top / 3.0,
        esc(title)
    );
    let _ = writeln!(
        o,
        r##"<rect x="0" y="{:.1}" width="{w:.1}" height="{ah:.1}" fill="{}" stroke="#555" stroke-width="4"/>"##,
        h - ah,
        arena.floor
    );
    let _ = writeln!(
        o,
        r#"<clipPath id="table"><rect x="{left:.1}" y="0" width="{:.1}" height="{span:.1}"/></clipPath><g clip-path="url(#table)">"#,
        right - left
    );
    for shape in &arena.shapes {
        shape_svg(&mut o, shape, h);
    }
    o.push_str("</g>\n");
    if let (Some((t0, first)), Some((_, last))) = (path.first(), path.last()) {
        // When it last moved (by more than half a millimetre or degree).
        let still = path
            .iter()
            .rev()
            .take_while(|(_, p)| {
                (p.x - last.x).hypot(p.y - last.y) < 0.5 && (p.heading - last.heading).abs() < 0.5
            })
            .last()
            .map_or(Duration::ZERO, |(t, _)| *t);
        let points: Vec<String> = path
            .iter()
            .map(|(_, p)| format!("{:.1},{:.1}", p.x, h - p.y))
            .collect();
        let _ = writeln!(
            o,
            r##"<polyline points="{}" fill="none" stroke="#1f6fd1" stroke-width="6" stroke-linejoin="round"/>"##,
            points.join(" ")
        );
        let _ = writeln!(
            o,
            r##"<circle cx="{:.1}" cy="{:.1}" r="{:.1}" fill="#2a9d3a"/>"##,
            first.x,
            h - first.y,
            font / 2.0
        );
        robot(&mut o, *last, outline, h, "#1f3f8f");
        let _ = writeln!(
            o,
            r#"<text x="{:.1}" y="{:.1}">start {:.1} s</text>"#,
            first.x,
            h - first.y + font * 1.6,
            t0.as_secs_f64()
        );
        let _ = writeln!(
            o,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">stopped {:.1} s</text>"#,
            last.x,
            h - last.y - 70.0 - font,
            still.as_secs_f64()
        );
    }
    for (i, e) in events.iter().enumerate().take(12) {
        if let Some(p) = e.at {
            let _ = writeln!(
                o,
                r##"<circle cx="{:.1}" cy="{:.1}" r="{:.1}" fill="#d1361f" fill-opacity="0.8"/><text x="{:.1}" y="{:.1}" fill="#fff" text-anchor="middle" font-size="{:.1}">{}</text>"##,
                p.x,
                h - p.y,
                font * 0.7,
                p.x,
                h - p.y + font * 0.3,
                font * 0.8,
                i + 1
            );
        }
        let _ = writeln!(
            o,
            r#"<text x="{left:.1}" y="{:.1}">{}. {:.3} s: {}</text>"#,
            span + line * (i + 2) as f64,
            i + 1,
            e.time.as_secs_f64(),
            esc(&e.what)
        );
    }
    if events.len() > 12 {
        let _ = writeln!(
            o,
            r#"<text x="{left:.1}" y="{:.1}">... and {} more events (see the JSON lines)</text>"#,
            span + line * 14.0,
            events.len() - 12
        );
    }
    o.push_str("</svg>\n");
    o
}

/// The points that bound `shape`.
fn shape_points(shape: &Shape) -> Vec<Point> {
    match shape {
        Shape::Area { from, to, .. } | Shape::Block { from, to } | Shape::Wall { from, to } => {
            vec![*from, *to]
        }
        Shape::Disc { centre, radius, .. } => vec![
            (centre.0 - radius, centre.1 - radius),
            (centre.0 + radius, centre.1 + radius),
        ],
        Shape::Line { points, .. } => points.clone(),
    }
}

fn shape_svg(o: &mut String, shape: &Shape, h: f64) {
    match shape {
        Shape::Area { from, to, colour } => {
            let _ = writeln!(
                o,
                r#"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{colour}"/>"#,
                from.0.min(to.0),
                h - from.1.max(to.1),
                (to.0 - from.0).abs(),
                (to.1 - from.1).abs()
            );
        }
        Shape::Disc {
            centre,
            radius,
            colour,
        } => {
            let _ = writeln!(
                o,
                r#"<circle cx="{:.1}" cy="{:.1}" r="{radius:.1}" fill="{colour}"/>"#,
                centre.0,
                h - centre.1
            );
        }
        Shape::Line {
            points,
            width,
            colour,
        } => {
            let points: Vec<String> = points
                .iter()
                .map(|(x, y)| format!("{x:.1},{:.1}", h - y))
                .collect();
            let _ = writeln!(
                o,
                r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="{width:.1}" stroke-linejoin="round"/>"#,
                points.join(" ")
            );
        }
        Shape::Block { from, to } => {
            let _ = writeln!(
                o,
                r##"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="#8a4b20" stroke="#5a2f10" stroke-width="4"/>"##,
                from.0.min(to.0),
                h - from.1.max(to.1),
                (to.0 - from.0).abs(),
                (to.1 - from.1).abs()
            );
        }
        Shape::Wall { from, to } => {
            let _ = writeln!(
                o,
                r##"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#8a4b20" stroke-width="16" stroke-linecap="round"/>"##,
                from.0,
                h - from.1,
                to.0,
                h - to.1
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_picture_has_the_table_the_path_and_the_events() {
        let mut arena = Arena::table(1000.0, 500.0);
        arena.shapes.push(Shape::Block {
            from: (1000.0, -1000.0),
            to: (2000.0, 1500.0),
        });
        let pose = |x: f64| Pose {
            x,
            y: 250.0,
            heading: 0.0,
        };
        let path = [
            (Duration::ZERO, pose(100.0)),
            (Duration::from_millis(500), pose(300.0)),
            (Duration::from_millis(900), pose(300.2)),
        ];
        let events: Vec<Event> = (0..14)
            .map(|i| Event {
                time: Duration::from_millis(100 * i),
                at: Some(pose(300.0)),
                what: format!("tone {i} <Hz>"),
            })
            .collect();
        let svg = run_picture(&arena, &path, &[], &events, "a & b");
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
        // A wall beyond the table: a margin of 3 %, clipped there.
        assert!(svg.contains(r#"viewBox="-30.0 "#), "{svg}");
        assert!(svg.contains(
            r#"<clipPath id="table"><rect x="-30.0" y="0" width="1060.0" height="560.0"/>"#
        ));
        assert!(svg.contains(">a &amp; b</text>"));
        assert!(
            svg.contains("points=\"100.0,280.0 300.0,280.0 300.2,280.0\""),
            "y flipped"
        );
        // It stopped when it last moved more than half a millimetre.
        assert!(svg.contains(">stopped 0.5 s</text>"));
        assert!(svg.contains("12. 1.100 s: tone 11 &lt;Hz&gt;"));
        assert!(svg.contains("... and 2 more events"));
        assert_eq!(svg, run_picture(&arena, &path, &[], &events, "a & b"));
    }
}
