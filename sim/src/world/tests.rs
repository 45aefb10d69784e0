use std::path::Path;

use super::*;

fn error(text: &str) -> String {
    match WorldSpec::parse(text, Path::new("w.toml")) {
        Ok(_) => panic!("parsed: {text}"),
        Err(e) => format!(
            "{e} {}",
            std::error::Error::source(&e)
                .map(ToString::to_string)
                .unwrap_or_default()
        ),
    }
}

#[test]
fn every_builtin_world_parses() {
    for name in WorldSpec::builtin_names() {
        let spec = WorldSpec::load(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(spec.name(), name);
        assert!(!spec.about().is_empty(), "{name}");
        assert!(!spec.ports().is_empty(), "{name}");
    }
    let bumper = WorldSpec::load("bumper").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        bumper.ports()[0],
        ("in1".to_owned(), "lego-ev3-touch".to_owned())
    );
}

#[test]
fn bad_files_name_the_line_and_field() {
    let e = error("name = \"x\"\n\n[ports]\nin9 = \"lego-ev3-touch\"\n");
    assert!(e.contains("line 4") && e.contains("ports.in9"), "{e}");
    let e = error("[ports]\nin1 = \"lego-ev3-l-motor\"\n");
    assert!(
        e.contains("line 2") && e.contains("not a sensor driver"),
        "{e}"
    );
    let e = error("[arena]\nsize = [100, 100]\nflor = \"white\"\n");
    assert!(e.contains("line 3, field arena.flor"), "{e}");
    let e = error("[[mat]]\ncolour = \"pink\"\nrect = [0, 0, 1, 1]\n");
    assert!(
        e.contains("line 1") && e.contains("pink") && e.contains("mat[0]"),
        "{e}"
    );
    let e = error("[ports]\noutB = \"lego-ev3-l-motor\"\n[drive]\nleft = \"outB\"\nright = \"outC\"\nwheel_diameter = 56\naxle_track = 112\n");
    assert!(e.contains("drive.right") && e.contains("outC"), "{e}");
    let e = error("[arena]\nsize = \"big\"\n");
    assert!(e.contains("line 2, field arena.size"), "{e}");
    let e = error(
        "[drive]\nleft = \"outB\"\nright = \"outC\"\nwheel_diameter = \"56\"\naxle_track = 112\n",
    );
    assert!(e.contains("line 4, field drive.wheel_diameter"), "{e}");
    let e = error("x = 1\n");
    assert!(e.contains("unknown field") && e.contains("line 1"), "{e}");
    let e = format!("{:?}", WorldSpec::load("no-such-world").err());
    assert!(e.contains("bumper, line"), "{e}");
}

#[test]
fn drag_is_a_fraction_of_the_stall_torque() {
    let text = WorldSpec::builtin_text("empty")
        .unwrap_or_default()
        .replace("axle_track = 112", "axle_track = 112\ndrag = [0.3, 0]");
    let spec = WorldSpec::parse(&text, Path::new("w.toml")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(spec.drive.map(|d| d.drag), Some([0.3, 0.0]));
    let e = error(&text.replace("drag = [0.3, 0]", "drag = [1.5, 0]"));
    assert!(
        e.contains("drive.drag") && e.contains("between 0 and 1"),
        "{e}"
    );
}
