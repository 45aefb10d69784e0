//! The stop guard and signals, in child processes against a mock tree:
//! abort and stack overflow stop the motors, an ignored SIGHUP stays
//! ignored, the program's own handler still runs (chained), a survived
//! panic stops the motors without fencing them, and a full guard says what
//! to do.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::process::Output;
use std::sync::atomic::{AtomicBool, Ordering};

use ev3sysfs::motor::TachoMotor;
use ev3sysfs::StopGuard;
use ev3sysfs_sim::{MockTree, TachoDriver};
use nix::sys::signal::{self, SigHandler, Signal};

const CHILD_ENV: &str = "EV3SYSFS_SIGNAL_CHILD";

static OWN_HANDLER_RAN: AtomicBool = AtomicBool::new(false);

extern "C" fn own_handler(_: i32) {
    OWN_HANDLER_RAN.store(true, Ordering::SeqCst);
}

fn recurse(n: u64) -> u64 {
    let buf = [n; 128];
    std::hint::black_box(&buf);
    if n == u64::MAX {
        return 0;
    }
    recurse(n + 1).wrapping_add(buf[7])
}

#[test]
#[ignore = "run as a child process by the tests below"]
fn signal_child() {
    let Ok(mode) = std::env::var(CHILD_ENV) else {
        return;
    };
    let root = ev3sysfs::default_root();
    match mode.as_str() {
        // SAFETY (test code): plain handler changes before any thread of
        // ours runs.
        "nohup" => unsafe {
            signal::signal(Signal::SIGHUP, SigHandler::SigIgn).unwrap();
        },
        "chained" => unsafe {
            signal::signal(Signal::SIGTERM, SigHandler::Handler(own_handler)).unwrap();
        },
        _ => {}
    }
    let guard = StopGuard::install().unwrap();
    if mode == "capacity" {
        for i in 0..=ev3sysfs::guard::CAPACITY {
            let motor = TachoMotor::find(&root, &format!("p{i}")).unwrap();
            if let Err(e) = guard.protect(&motor) {
                println!("full at {i}: {e}");
                assert!(matches!(e, ev3sysfs::Error::GuardFull { .. }));
            }
        }
        guard.disarm();
        return;
    }
    let motor = TachoMotor::find(&root, "outA").unwrap();
    guard.protect(&motor).unwrap();
    motor.run_forever(300).unwrap();
    match mode.as_str() {
        "abort" => std::process::abort(),
        "overflow" => {
            println!("{}", recurse(0));
        }
        "nohup" => {
            signal::raise(Signal::SIGHUP).unwrap();
            println!("survived SIGHUP");
            guard.disarm();
        }
        "chained" => {
            signal::raise(Signal::SIGTERM).unwrap();
            println!(
                "own handler ran: {}",
                OWN_HANDLER_RAN.load(Ordering::SeqCst)
            );
            let refused = motor.run_forever(300).err();
            println!(
                "run after the signal: {refused:?} (GuardStopped: {})",
                matches!(refused, Some(ev3sysfs::Error::GuardStopped { .. }))
            );
            guard.disarm();
        }
        "panic-then-run" | "caught-panic" => {
            if mode == "caught-panic" {
                let caught = std::thread::spawn(|| {
                    std::panic::catch_unwind(|| panic!("worker failed")).is_err()
                })
                .join()
                .unwrap();
                assert!(caught);
            } else {
                let died = std::thread::spawn(|| panic!("control thread failed")).join();
                assert!(died.is_err());
            }
            println!("run after the panic: {:?}", motor.run_forever(300).err());
            let other = TachoMotor::find(&root, "outA").unwrap();
            let second = StopGuard::install().unwrap();
            second.protect(&other).unwrap();
            println!("new handle, new guard: {:?}", other.run_forever(200).err());
            second.disarm();
            guard.disarm();
        }
        other => panic!("unknown mode {other}"),
    }
}

fn run_child(tree: &MockTree, mode: &str) -> (Output, String) {
    let out = common::child_test("signal_child", CHILD_ENV, mode, tree.root())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out, text)
}

fn signalled(out: &Output) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    out.status.signal()
}

#[test]
fn abort_and_stack_overflow_stop_the_motor() {
    for mode in ["abort", "overflow"] {
        let Some(tree) = common::brick() else {
            return;
        };
        let motor = tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
        let (out, text) = run_child(&tree, mode);
        assert_eq!(signalled(&out), Some(libc::SIGABRT), "{mode}: {text}");
        assert_eq!(
            motor.last_written("command").unwrap(),
            "stop",
            "{mode}: {text}"
        );
    }
}

#[test]
fn an_ignored_sighup_stays_ignored() {
    let Some(tree) = common::brick() else {
        return;
    };
    let motor = tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    let (out, text) = run_child(&tree, "nohup");
    assert!(out.status.success(), "{text}");
    assert!(text.contains("survived SIGHUP"), "{text}");
    assert_eq!(
        motor.last_written("command").unwrap(),
        "run-forever",
        "{text}"
    );
}

#[test]
fn the_programs_own_handler_runs_after_the_stop() {
    let Some(tree) = common::brick() else {
        return;
    };
    let motor = tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    let (out, text) = run_child(&tree, "chained");
    assert!(out.status.success(), "{text}");
    assert!(text.contains("own handler ran: true"), "{text}");
    assert!(text.contains("(GuardStopped: true)"), "{text}");
    assert_eq!(motor.last_written("command").unwrap(), "stop", "{text}");
}

/// Issue 22: a panic stops the protected motors at once, but a panic the
/// program survives (caught by `catch_unwind` in a worker, or a worker that
/// died while main goes on) is not the program's end: run commands are
/// accepted again, through the old handle and a new one under a new guard.
#[test]
fn a_survived_panic_stops_the_motors_but_does_not_fence_them() {
    for mode in ["caught-panic", "panic-then-run"] {
        let Some(tree) = common::brick() else {
            return;
        };
        let motor = tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
        let (out, text) = run_child(&tree, mode);
        assert!(out.status.success(), "{mode}: {text}");
        assert!(text.contains("run after the panic: None"), "{mode}: {text}");
        assert!(
            text.contains("new handle, new guard: None"),
            "{mode}: {text}"
        );
        let commands: Vec<String> = tree
            .take_stores()
            .into_iter()
            .filter(|(path, _)| path.ends_with("/command"))
            .map(|(_, bytes)| String::from_utf8_lossy(&bytes).trim_end().to_owned())
            .collect();
        assert_eq!(
            commands,
            ["run-forever", "stop", "run-forever", "run-forever"],
            "{mode}: {text}"
        );
        assert_eq!(motor.last_written("command").unwrap(), "run-forever");
    }
}

#[test]
fn a_full_guard_says_what_to_do() {
    let Some(tree) = common::brick() else {
        return;
    };
    for i in 0..=ev3sysfs::guard::CAPACITY {
        tree.add_tacho_motor(&format!("p{i}"), TachoDriver::Ev3Large)
            .unwrap();
    }
    let (out, text) = run_child(&tree, "capacity");
    assert!(out.status.success(), "{text}");
    let full = format!("full at {}", ev3sysfs::guard::CAPACITY);
    assert!(text.contains(&full), "{text}");
    assert!(text.contains("StopGuard::release"), "{text}");
}
