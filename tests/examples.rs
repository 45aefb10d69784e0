//! The robot examples (`bumper`, `line_follower`, `arm_to_position`) run
//! in this process on a simulated brick (EV3SYSFS_ROOT is an empty
//! directory, so each builds its simulated world) and end with `Ok`. Skips
//! (with a reason) where no simulated brick can be mounted.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, dead_code)]
// Each example brings its own copy of examples/common.
#![allow(clippy::duplicate_mod)]

mod common;

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
        println!("example {name}: ok in {:?}", start.elapsed());
    }
}
