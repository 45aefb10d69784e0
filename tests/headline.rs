//! The README's headline program, exactly as the README shows it (it
//! depends on the library alone and finds its devices under
//! `default_root()`), runs unchanged on a laptop in the built-in world
//! `bumper` and stops its tank within 20 mm of the wall. Skips (with a
//! reason) where no simulated brick can be mounted.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, dead_code)]

mod common;

use ev3sysfs_sim::Playground;

/// tests/programs/readme_bumper.rs is the README's first code block,
/// byte for byte (the first test checks it).
mod headline {
    include!("programs/readme_bumper.rs");

    pub(crate) fn run() -> ev3sysfs::Result<()> {
        main()
    }
}

fn readme_program() -> String {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let start = readme.find("```rust,no_run\n").expect("a rust block") + "```rust,no_run\n".len();
    let end = start + readme[start..].find("```").expect("the block's end");
    readme[start..end].to_owned()
}

#[test]
fn the_readme_program_is_the_one_tested() {
    let tested = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/programs/readme_bumper.rs"
    ))
    .unwrap();
    assert_eq!(
        readme_program(),
        tested,
        "README.md's headline program and tests/programs/readme_bumper.rs differ: copy it over"
    );
}

#[test]
fn the_readme_program_stops_at_the_wall_in_the_bumper_world() {
    if common::ev3_brick().is_none() {
        return;
    }
    // The only test here that touches the environment: nothing else in
    // this binary reads EV3SYSFS_ROOT.
    let empty = common::TempDir::new("headline");
    std::env::set_var("EV3SYSFS_ROOT", empty.path());
    let place = Playground::brick_or_world("bumper").unwrap();
    assert!(place.is_simulated());
    // What `ev3-sim --world bumper` gives the program: the world's classes
    // where it looks for them.
    std::env::set_var("EV3SYSFS_ROOT", place.root());
    headline::run().unwrap();
    let report = place.report().expect("a world report");
    println!("{report}");
    // Where it stopped is a real-time matter: checked on the host, not
    // under qemu-user (tests/world.rs checks the bumper in simulated time).
    if !common::real_time_keeps_up() {
        return;
    }
    let gap = report.gap_ahead_mm.expect("a wall ahead");
    assert!(gap <= 20.0, "{report}");
    assert!(report.driven_mm > 400.0, "{report}");
}
