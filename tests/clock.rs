//! One syscall per clock read at most: `ev3sysfs::clock::Instant::now()` and
//! the crate's waits under strace. On the brick (ARMv5: no vDSO; Linux 4.14:
//! no `clock_gettime64`) `std::time::Instant::now()` is two syscalls, the
//! refused `clock_gettime64` and `clock_gettime`; the crate's clock is one.
//! The ARM guest of `scripts/arm-guest/run` runs this under its 4.14
//! seccomp filter; on a host with a vDSO the count is zero.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::fs;
use std::process::Command;
use std::time::Duration;

use ev3sysfs::clock::Instant;

const READS: usize = 100;
const WAITS: usize = 10;
const CHILD_ENV: &str = "EV3SYSFS_CLOCK_CHILD";
const BEGIN: &str = "/ev3sysfs-clock-window-begin";
const END: &str = "/ev3sysfs-clock-window-end";

fn marker(prefix: &str) -> String {
    format!("{prefix}.{}", nix::unistd::gettid().as_raw())
}

#[test]
#[ignore = "started under strace by the tests below"]
fn clock_child() {
    let (begin, end) = (marker(BEGIN), marker(END));
    match std::env::var(CHILD_ENV).as_deref() {
        Ok("reads") => {
            // The first read asks the kernel which call it has.
            let start = Instant::now();
            let _ = fs::metadata(&begin);
            for _ in 0..READS {
                std::hint::black_box(Instant::now());
            }
            let _ = fs::metadata(&end);
            assert!(start.elapsed() > Duration::ZERO);
        }
        Ok("std") => {
            let _ = std::time::Instant::now();
            let _ = fs::metadata(&begin);
            for _ in 0..READS {
                std::hint::black_box(std::time::Instant::now());
            }
            let _ = fs::metadata(&end);
        }
        Ok("waits") => {
            let tmp = common::TempDir::new("clock-wait");
            let path = tmp.path().join("state");
            fs::write(&path, "running\n").unwrap();
            let attr = ev3sysfs::Attribute::open(&path, ev3sysfs::Access::ReadOnly).unwrap();
            let _ = Instant::now();
            let _ = fs::metadata(&begin);
            for _ in 0..WAITS {
                // A plain file never notifies: each wait times out.
                attr.wait_for_change(Duration::from_millis(1)).unwrap();
            }
            let _ = fs::metadata(&end);
        }
        _ => {}
    }
}

/// The measuring thread's syscall names between its markers, or `None`
/// (after saying why) where strace cannot run the child natively.
fn traced(mode: &str) -> Option<Vec<String>> {
    if std::env::var_os("EV3SYSFS_TEST_RUNNER").is_some_and(|r| !r.is_empty()) {
        common::skip(
            "under qemu-user strace would trace the emulator (the ARM guest runs this natively)",
        );
        return None;
    }
    if Command::new("strace").arg("-V").output().is_err() {
        common::skip("strace is not installed (apt-get install strace)");
        return None;
    }
    let tmp = common::TempDir::new("clock-strace");
    let log = tmp.path().join("trace");
    let out = Command::new("strace")
        .args(["-f", "-qq", "-o"])
        .arg(&log)
        .arg(std::env::current_exe().unwrap())
        .args([
            "clock_child",
            "--exact",
            "--include-ignored",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, mode)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "child under strace failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let trace = fs::read_to_string(&log).unwrap();
    let tid_of = |line: &str| line.split_whitespace().next().map(str::to_owned);
    let begin = trace
        .lines()
        .find(|l| l.contains(BEGIN))
        .unwrap_or_else(|| panic!("no begin marker:\n{trace}"));
    let tid = tid_of(begin).unwrap();
    let calls = trace
        .lines()
        .skip_while(|l| !l.contains(BEGIN))
        .skip(1)
        .filter(|l| tid_of(l).as_deref() == Some(tid.as_str()))
        .take_while(|l| !l.contains(END))
        .filter(|l| !l.contains("<... ") && !l.contains("--- ") && !l.contains("+++ "))
        .map(|l| {
            let call = l.split_whitespace().nth(1).unwrap_or("");
            call.split('(').next().unwrap_or(call).to_owned()
        })
        .collect();
    Some(calls)
}

/// A line in the log even when the test passes (libtest captures
/// `eprintln!`, not the stderr handle).
fn say(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "MEASURED: {text}");
}

fn clock_calls(calls: &[String]) -> Vec<&String> {
    calls
        .iter()
        .filter(|c| c.starts_with("clock_gettime"))
        .collect()
}

#[test]
fn one_syscall_per_clock_read_at_most() {
    let Some(calls) = traced("reads") else { return };
    let clock = clock_calls(&calls);
    say(&format!(
        "{} clock syscalls for {READS} reads: {:?}",
        clock.len(),
        clock.first()
    ));
    assert!(clock.len() <= READS, "{clock:?}");
    assert_eq!(calls.len(), clock.len(), "nothing else: {calls:?}");
}

/// What std's clock costs here, for comparison (on the brick: two
/// syscalls a read); reported, not asserted.
#[test]
fn std_clock_reads_for_comparison() {
    let Some(calls) = traced("std") else { return };
    say(&format!(
        "std::time::Instant::now(): {} clock syscalls for {READS} reads",
        clock_calls(&calls).len()
    ));
}

#[test]
fn a_timed_out_wait_reads_the_clock_twice_with_one_syscall_each_at_most() {
    let Some(calls) = traced("waits") else { return };
    let clock = clock_calls(&calls);
    let polls = calls.iter().filter(|c| c.contains("poll")).count();
    say(&format!(
        "{WAITS} waits: {} clock syscalls, {polls} polls",
        clock.len()
    ));
    assert_eq!(polls, WAITS, "{calls:?}");
    // A deadline and one check of the time left per wait.
    assert!(clock.len() <= 2 * WAITS, "{calls:?}");
}
