//! The repository's shell scripts: `scripts/wait-apt-lock` waits while
//! another process holds the lock (held here with util-linux `flock`, which
//! /proc/locks lists as apt's own fcntl locks are listed) and gives up after
//! its timeout with a message; `scripts/test-all`'s summary counts skipped
//! tests apart from passed ones.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::skip;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn script(name: &str) -> Command {
    Command::new(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("scripts")
            .join(name),
    )
}

/// Holds an exclusive lock on `file` for `seconds` in a child `flock`.
fn hold_lock(file: &Path, seconds: u32) -> Option<std::process::Child> {
    let child = Command::new("flock")
        .arg("--exclusive")
        .arg(file)
        .args(["sleep", &seconds.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    // Until flock has the lock, /proc/locks does not list it.
    let ino = std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(file).unwrap());
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        let locks = std::fs::read_to_string("/proc/locks").unwrap_or_default();
        if locks.lines().any(|l| {
            l.split_whitespace()
                .nth(5)
                .is_some_and(|f| f.rsplit(':').next() == Some(&ino.to_string()))
        }) {
            return Some(child);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

fn usable() -> bool {
    if cfg!(not(any(target_arch = "x86_64", target_arch = "aarch64"))) {
        skip("the scripts run on the host, not under qemu-user");
        return false;
    }
    if !common::has_command("flock") {
        skip("util-linux flock is missing");
        return false;
    }
    true
}

#[test]
fn wait_apt_lock_waits_for_the_holder_and_says_so() {
    if !usable() {
        return;
    }
    let dir = common::TempDir::new("aptlock");
    let lock = dir.path().join("lock-frontend");
    std::fs::write(&lock, b"").unwrap();
    let Some(mut holder) = hold_lock(&lock, 3) else {
        return skip("flock did not take the lock");
    };
    let start = Instant::now();
    let out = script("wait-apt-lock")
        .args(["--timeout", "60"])
        .arg(&lock)
        .output()
        .unwrap();
    let waited = start.elapsed();
    holder.wait().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(waited >= Duration::from_secs(1), "did not wait: {waited:?}");
    assert!(stderr.contains("waiting"), "{stderr}");
    assert!(stderr.contains("at most 60 s"), "{stderr}");
    assert!(stderr.contains("is free after"), "{stderr}");
}

#[test]
fn wait_apt_lock_gives_up_after_its_timeout_with_a_message() {
    if !usable() {
        return;
    }
    let dir = common::TempDir::new("aptlock");
    let lock = dir.path().join("lock");
    std::fs::write(&lock, b"").unwrap();
    let Some(mut holder) = hold_lock(&lock, 30) else {
        return skip("flock did not take the lock");
    };
    let out = script("wait-apt-lock")
        .args(["--timeout", "1"])
        .arg(&lock)
        .output()
        .unwrap();
    let _ = holder.kill();
    let _ = holder.wait();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("still locked after 1 s"), "{stderr}");
}

#[test]
fn wait_apt_lock_returns_at_once_when_nobody_holds_the_lock() {
    if !usable() {
        return;
    }
    let dir = common::TempDir::new("aptlock");
    let lock = dir.path().join("lock");
    std::fs::write(&lock, b"").unwrap();
    let out = script("wait-apt-lock")
        .args(["--timeout", "1"])
        .arg(&lock)
        .arg(dir.path().join("missing"))
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn count_tests_counts_skip_markers_and_ignored_tests_as_skipped() {
    if !usable() {
        return;
    }
    let dir = common::TempDir::new("counttests");
    let host = dir.path().join("host.log");
    // Two binaries with a test of the same name each; one test skips in
    // both binaries, one marker repeats, one marked test fails anyway; the
    // single-thread interleaving of libtest's line and the marker.
    std::fs::write(
        &host,
        "     Running tests/a.rs (target/debug/deps/a-1)\n\
         SKIPPED: needs root [probe_runs]\n\
         SKIPPED: needs root again [probe_runs]\n\
         test probe_runs ... ok\n\
         test other ... SKIPPED: no fuse [other]\n\
         ok\n\
         SKIPPED: needs strace [broken]\n\
         test broken ... FAILED\n\
         test result: FAILED. 5 passed; 1 failed; 2 ignored; 0 measured; 0 filtered out\n\
         \n     Running tests/b.rs (target/debug/deps/b-2)\n\
         SKIPPED: needs root [probe_runs]\n\
         test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n",
    )
    .unwrap();
    let arm = dir.path().join("arm.log");
    std::fs::write(
        &arm,
        "   Doc-tests ev3sysfs\n\
         test result: ok. 4 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out\n",
    )
    .unwrap();
    let out = script("count-tests").arg(&host).arg(&arm).output().unwrap();
    assert!(out.status.success());
    // passed 5+3+4 = 12 minus 3 skipped; skipped 3 markers + 3 ignored.
    assert_eq!(String::from_utf8_lossy(&out.stdout), "9 1 6\n");
}
