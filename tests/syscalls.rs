//! Syscall counts under strace: N writes and N reads of an open attribute are
//! exactly N `pwrite64` and N `pread64` and nothing else, on real kernfs
//! (root) as on the simulated brick (FUSE): the I/O core has no emulation.
//!
//! The test runs this test binary again under `strace -f`; the child marks
//! the measured window by stat()ing two unique paths, and only the marking
//! thread's calls are counted (the brick's file system thread answers the
//! FUSE requests meanwhile, in the same process).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::fs;
use std::path::Path;
use std::process::Command;

use common::{is_root, with_kernfs, TempDir};
use ev3sysfs::mock::{MockTree, TachoDriver};
use ev3sysfs::SysfsDevice;

const N: usize = 200;
const CHILD_ENV: &str = "EV3SYSFS_STRACE_CHILD";
const BEGIN: &str = "/ev3sysfs-strace-window-begin";
const END: &str = "/ev3sysfs-strace-window-end";

/// What the child does inside the window: `(text attribute, a value it
/// takes)`, `(integer attribute, a base value)`.
fn drive(dev: &SysfsDevice, (text_attr, text): (&str, &str), (int_attr, base): (&str, i64)) {
    let attr = dev.attribute(int_attr).unwrap();
    dev.attribute(text_attr).unwrap();
    let _ = fs::metadata(BEGIN);
    for i in 0..N {
        if i % 2 == 0 {
            attr.write_int(base + (i % 50) as i64).unwrap();
            assert!(i64::from(attr.read_int().unwrap()) >= base);
        } else {
            dev.write_str(text_attr, text).unwrap();
            dev.read_text(text_attr, |t| Ok(t.len())).unwrap();
        }
    }
    let _ = fs::metadata(END);
}

/// The child: only does work when started by `run_under_strace`.
#[test]
#[ignore = "started under strace by the tests below"]
fn strace_child() {
    match std::env::var(CHILD_ENV).as_deref() {
        Ok("mock") => {
            let tree = MockTree::new().unwrap();
            let mock = tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
            let dev = SysfsDevice::open(tree.root(), "tacho-motor", &mock.name()).unwrap();
            drive(&dev, ("polarity", "inversed"), ("speed_sp", 100));
        }
        Ok("typed") => {
            use ev3sysfs::motor::TachoMotor;
            let tree = MockTree::new().unwrap();
            tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
            let motor = TachoMotor::find(tree.root(), "outA").unwrap();
            motor.run_direct(10).unwrap();
            let _ = fs::metadata(BEGIN);
            for i in 0..N {
                motor.set_speed_sp(100 + i as i32).unwrap();
                assert!(motor.position().unwrap() >= 0);
                assert!(!motor.state().unwrap().stalled());
                // run-direct is active: only duty_cycle_sp is written.
                motor.run_direct(20).unwrap();
            }
            let _ = fs::metadata(END);
        }
        Ok("kernfs") => {
            assert!(with_kernfs(|k| {
                let dev = SysfsDevice::open(&k.class_root, "net", &k.ifname).unwrap();
                drive(&dev, ("ifalias", "run-forever"), ("mtu", 1400));
            }));
        }
        _ => {}
    }
}

/// Syscall names, in order, between the two markers.
fn traced_window(mode: &str) -> Option<Vec<String>> {
    if cfg!(not(target_arch = "x86_64")) && cfg!(not(target_arch = "aarch64")) {
        // Under qemu-user, strace would trace the emulator, not the program.
        common::skip("strace tests run on the host architecture only (under qemu-user strace would trace the emulator)");
        return None;
    }
    if Command::new("strace").arg("-V").output().is_err() {
        if std::env::var_os("CI").is_some() {
            panic!("strace is not installed in CI");
        }
        common::skip("strace is not installed (apt-get install strace)");
        return None;
    }
    let tmp = TempDir::new("strace-out");
    let log = tmp.path().join("trace");
    let exe = std::env::current_exe().unwrap();
    let status = Command::new("strace")
        .args(["-f", "-qq", "-o"])
        .arg(&log)
        .arg(&exe)
        .args([
            "strace_child",
            "--exact",
            "--include-ignored",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, mode)
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "child under strace failed: {}\n{}{}",
        status.status,
        String::from_utf8_lossy(&status.stdout),
        String::from_utf8_lossy(&status.stderr)
    );
    let trace = fs::read_to_string(&log).unwrap();
    Some(window(&trace))
}

/// The calls of the thread that marked the window, between the markers
/// (a call interrupted by another thread's counts once: its
/// `<... resumed>` line is skipped).
fn window(trace: &str) -> Vec<String> {
    let mut marker_tid: Option<Option<&str>> = None;
    let mut calls = Vec::new();
    for line in trace.lines() {
        let tid = thread_id(line);
        if line.contains(BEGIN) {
            marker_tid = Some(tid);
            continue;
        }
        let Some(marker) = marker_tid else { continue };
        if tid != marker {
            continue;
        }
        if line.contains(END) {
            return calls;
        }
        if !line.contains(" resumed>") {
            calls.push(syscall_name(line).to_owned());
        }
    }
    panic!("markers not found in strace output:\n{trace}");
}

/// `1234  pread64(...)` -> `Some("1234")`; `None` without a thread id.
fn thread_id(line: &str) -> Option<&str> {
    line.trim_start()
        .split_once(char::is_whitespace)
        .map(|(pid, _)| pid)
        .filter(|pid| pid.chars().all(|c| c.is_ascii_digit()))
}

/// `1234  pread64(3, ...) = 5` -> `pread64`.
fn syscall_name(line: &str) -> &str {
    let line = line.trim_start();
    let line = line
        .split_once(char::is_whitespace)
        .filter(|(pid, _)| pid.chars().all(|c| c.is_ascii_digit()))
        .map_or(line, |(_, rest)| rest)
        .trim_start();
    let line = line.strip_prefix("<... ").unwrap_or(line);
    line.split(['(', ' ']).next().unwrap_or(line)
}

fn count(calls: &[String], name: &str) -> usize {
    calls.iter().filter(|c| *c == name).count()
}

#[test]
fn simulated_brick_exactly_one_syscall_per_operation() {
    if common::brick().is_none() {
        return;
    }
    let Some(calls) = traced_window("mock") else {
        return;
    };
    assert_eq!(count(&calls, "pwrite64"), N, "{calls:?}");
    assert_eq!(count(&calls, "pread64"), N, "{calls:?}");
    assert_eq!(
        calls.len(),
        2 * N,
        "other syscalls in the window: {calls:?}"
    );
}

#[test]
fn typed_motor_api_one_syscall_per_value_and_no_redundant_command() {
    if common::brick().is_none() {
        return;
    }
    let Some(calls) = traced_window("typed") else {
        return;
    };
    // N speed_sp + N duty_cycle_sp writes; the repeated run-direct command
    // is skipped. N position + N state reads.
    assert_eq!(count(&calls, "pwrite64"), 2 * N, "{calls:?}");
    assert_eq!(count(&calls, "pread64"), 2 * N, "{calls:?}");
    assert_eq!(
        calls.len(),
        4 * N,
        "other syscalls in the window: {calls:?}"
    );
}

#[test]
fn real_kernfs_exactly_one_syscall_per_operation() {
    if !is_root() {
        common::skip("the real kernfs strace test needs root");
        return;
    }
    let Some(calls) = traced_window("kernfs") else {
        return;
    };
    assert_eq!(count(&calls, "pwrite64"), N, "{calls:?}");
    assert_eq!(count(&calls, "pread64"), N, "{calls:?}");
    assert_eq!(
        calls.len(),
        2 * N,
        "other syscalls in the window: {calls:?}"
    );
}

#[test]
fn strace_line_parsing() {
    assert_eq!(
        syscall_name("1234  pread64(3, \"0\\n\", 256, 0) = 2"),
        "pread64"
    );
    assert_eq!(syscall_name("pwrite64(4, \"stop\", 4, 0) = 4"), "pwrite64");
    assert_eq!(syscall_name("99 <... futex resumed>) = 0"), "futex");
    assert_eq!(thread_id("1234  pread64(3) = 2"), Some("1234"));
    assert_eq!(thread_id("pread64(3) = 2"), None);
    assert!(Path::new(BEGIN).is_absolute());
}
