//! The stop guard against a control thread that keeps sending run commands
//! while the program panics (also like `panic = "abort"`), is interrupted or
//! ends normally: the guard must win every time. Child processes against a
//! simulated brick; the outcome is the last command the motor was sent.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::{BufRead, BufReader};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use ev3sysfs::motor::TachoMotor;
use ev3sysfs::StopGuard;
use ev3sysfs_sim::{MockTree, TachoDriver};

const CHILD_ENV: &str = "EV3SYSFS_RACE_CHILD";

/// How many child runs per mode (`EV3SYSFS_RACE_RUNS` overrides).
fn runs() -> usize {
    std::env::var("EV3SYSFS_RACE_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20)
}

#[test]
#[ignore = "run as a child process by the tests below"]
fn race_child() {
    let Ok(mode) = std::env::var(CHILD_ENV) else {
        return;
    };
    if mode == "abort" {
        // What `panic = "abort"` does after the panic hooks: abort.
        std::panic::set_hook(Box::new(|_| std::process::abort()));
    }
    let root = ev3sysfs::default_root();
    let motor = Arc::new(TachoMotor::find(&root, "outA").unwrap());
    let guard = StopGuard::install().unwrap();
    guard.protect(&*motor).unwrap();
    let sent = Arc::new(AtomicU32::new(0));
    {
        let (motor, sent) = (Arc::clone(&motor), Arc::clone(&sent));
        std::thread::spawn(move || loop {
            // Errors (refused after the guard fired) are ignored, as a
            // careless control loop would.
            let _ = motor.run_forever(300);
            sent.fetch_add(1, Ordering::Relaxed);
        });
    }
    while sent.load(Ordering::Relaxed) < 20 {
        std::thread::yield_now();
    }
    match mode.as_str() {
        "abort" | "panic" => panic!("robot code failed"),
        "signal" => {
            println!("ready");
            std::thread::sleep(Duration::from_secs(30));
        }
        "end" => drop(guard),
        other => panic!("unknown mode {other}"),
    }
}

fn child(tree: &MockTree, mode: &str) -> std::process::Child {
    common::child_test("race_child", CHILD_ENV, mode, tree.root())
        .spawn()
        .unwrap()
}

/// Runs `mode` `runs()` times; returns how often the motor was left running.
fn left_running(mode: &str) -> (usize, usize) {
    let n = runs();
    let mut running = 0;
    for _ in 0..n {
        let Some(tree) = common::brick() else {
            return (0, 0);
        };
        let motor = tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
        let mut c = child(&tree, mode);
        if mode == "signal" {
            let stdout = c.stdout.take().unwrap();
            let ready = BufReader::new(stdout)
                .lines()
                .any(|l| l.unwrap().trim_end().ends_with("ready"));
            assert!(ready, "child never got ready");
            nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(c.id() as i32),
                nix::sys::signal::Signal::SIGINT,
            )
            .unwrap();
        }
        let out = c.wait_with_output().unwrap();
        if mode == "end" {
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        // `command` is write-only: the brick remembers what was stored last.
        let command = motor.last_written("command").unwrap();
        if command != "stop" {
            running += 1;
        }
    }
    (running, n)
}

#[test]
fn guard_wins_over_a_driving_thread_when_main_panics_with_abort() {
    let (running, n) = left_running("abort");
    assert_eq!(running, 0, "left running {running}/{n}");
}

#[test]
fn guard_wins_over_a_driving_thread_when_main_panics() {
    let (running, n) = left_running("panic");
    assert_eq!(running, 0, "left running {running}/{n}");
}

#[test]
fn guard_wins_over_a_driving_thread_at_the_end_of_main() {
    let (running, n) = left_running("end");
    assert_eq!(running, 0, "left running {running}/{n}");
}

#[test]
fn guard_wins_over_a_driving_thread_on_sigint() {
    let (running, n) = left_running("signal");
    assert_eq!(running, 0, "left running {running}/{n}");
}
