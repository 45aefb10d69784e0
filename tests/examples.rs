//! The robot examples (`bumper`, `line_follower`, `arm_to_position`) run
//! unchanged in this process in their built-in worlds (EV3SYSFS_ROOT is an
//! empty directory: no brick), end with `Ok` and reach their goal: the
//! bumper stops the tank within 20 mm of the wall, the line follower
//! completes a lap within twice the ideal time, the arm ends 120 degrees
//! above its low end stop. Skips (with a reason) where no simulated brick
//! can be mounted.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, dead_code)]
// Each example brings its own copy of examples/common.
#![allow(clippy::duplicate_mod)]

mod common;

use ev3sysfs_sim::{Playground, WorldReport};

#[path = "../examples/bumper.rs"]
mod bumper;

#[path = "../examples/line_follower.rs"]
mod line_follower;

#[path = "../examples/arm_to_position.rs"]
mod arm_to_position;

type Main = fn() -> ev3sysfs::Result<()>;

#[test]
fn robot_examples_run_on_the_simulated_brick() {
    if common::ev3_brick().is_none() {
        return;
    }
    let empty = common::TempDir::new("examples");
    // The only test in this binary: no other thread reads the environment.
    std::env::set_var("EV3SYSFS_ROOT", empty.path());
    let examples: [(&str, Main); 3] = [
        ("bumper", bumper::main),
        ("line_follower", line_follower::main),
        ("arm_to_position", arm_to_position::main),
    ];
    for (name, main) in examples {
        let start = std::time::Instant::now();
        main().unwrap_or_else(|e| panic!("example {name}: {e}"));
        let report = Playground::last_report().expect("a world report");
        println!("example {name}: ok in {:?}: {report}", start.elapsed());
        // The goals need the real-time loops to keep time: on the host.
        // Under an emulator (qemu-user, the brick build's test run) the
        // deterministic tests/world.rs checks them in simulated time.
        if cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
            check(name, &report);
        } else {
            println!("example {name}: goal not checked under emulation");
        }
    }
}

/// The example reached its goal in its world.
fn check(name: &str, report: &WorldReport) {
    match name {
        "bumper" => {
            let gap = report.gap_ahead_mm.expect("a wall ahead");
            assert!(gap <= 20.0, "{report}");
            assert!(report.driven_mm > 400.0, "{report}");
        }
        "line_follower" => {
            // The ideal: the lap's length at the program's 30 % speed
            // (315 counts/s of a 56 mm wheel: 154 mm/s).
            let (length, lap) = report.lap.expect("a track");
            let ideal = length / (315.0 / 360.0 * std::f64::consts::PI * 56.0);
            let lap = lap.unwrap_or_else(|| panic!("no lap: {report}"));
            assert!(
                lap.as_secs_f64() <= 2.0 * ideal,
                "ideal {ideal:.1} s: {report}"
            );
        }
        "arm_to_position" => {
            let (_, angle, (low, _)) = report.arms[0].clone();
            assert!((angle - low - 120.0).abs() <= 2.0, "{report}");
        }
        _ => unreachable!(),
    }
}
