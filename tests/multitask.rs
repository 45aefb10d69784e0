//! Issue 17, point 3: the `multitask` example (an arm, a drive base and a
//! button watcher as futures on one thread) runs on the simulated brick,
//! the tasks interleave, and no task has a thread of its own. Skips (with a
//! reason) where no simulated brick can be mounted.
#![cfg(feature = "async")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, dead_code)]

mod common;

#[path = "../examples/multitask.rs"]
mod multitask;

use std::time::{Duration, Instant};

use ev3sysfs::tasks::{self, block_on, zip};

fn thread_names() -> Vec<String> {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .map(|n| n.trim().to_owned())
        .collect()
}

#[test]
fn the_multitask_example_runs_on_the_simulated_brick() {
    if common::ev3_brick().is_none() {
        return;
    }
    let empty = common::TempDir::new("multitask");
    // The only test in this binary that reads the environment.
    std::env::set_var("EV3SYSFS_ROOT", empty.path());
    multitask::main().unwrap();
    // async-io's one helper thread, not one per task.
    let names = thread_names();
    let helpers = names.iter().filter(|n| *n == "async-io").count();
    assert!(helpers <= 1, "{names:?}");
}

#[test]
fn futures_run_concurrently_on_the_calling_thread() {
    // Three 200 ms sleeps, zipped: 200 ms, not 600, and the polls all on
    // this thread.
    let caller = std::thread::current().id();
    let start = Instant::now();
    let on = |ms| async move {
        tasks::sleep(Duration::from_millis(ms)).await;
        std::thread::current().id()
    };
    let ((a, b), c) = block_on(zip(zip(on(200), on(200)), on(200)));
    let took = start.elapsed();
    assert!([a, b, c].iter().all(|t| *t == caller));
    assert!(took < Duration::from_millis(450), "{took:?}");
}
