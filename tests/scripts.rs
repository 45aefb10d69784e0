//! The repository's shell scripts: `scripts/wait-apt-lock` waits while
//! another process holds the lock (held here with util-linux `flock`, which
//! /proc/locks lists as apt's own fcntl locks are listed) and gives up after
//! its timeout with a message; `scripts/test-all`'s summary counts skipped
//! tests apart from passed ones; the start-up benchmark's strace window
//! (`scripts/startup/window.awk`) and launcher (`scripts/startup/exec-timed.c`).
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

/// An `strace -f` log: a wrapper that execs the program, a second thread,
/// a call split into unfinished/resumed halves, an exit line, the first run
/// command, and calls after it.
const STARTUP_LOG: &str = "\
100 execve(\"/usr/bin/seccomp-414\", [\"seccomp-414\", \"/x/startup\"], 0x7e /* 3 vars */) = 0
100 prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) = 0
100 execve(\"/x/startup\", [\"/x/startup\"], 0x7e /* 3 vars */) = 0
100 getdents64(3, 0x1000 /* 4 entries */, 2048) = 112
100 openat(AT_FDCWD, \"/sys/class/tacho-motor/motor0/command\", O_WRONLY|O_CLOEXEC) = 4
100 open(\"/sys/class/lego-sensor\", O_RDONLY|O_DIRECTORY|O_CLOEXEC) = 5
101 read(5,  <unfinished ...>
100 pwrite64(4, \"reset\", 5, 0) = 5
101 <... read resumed>\"x\", 1) = 1
101 +++ exited with 0 +++
100 pwrite64(4, \"run-forever\", 11, 0) = 11
100 openat(AT_FDCWD, \"/after\", O_RDONLY) = 6
";

fn startup_window(log: &str, program: Option<&str>) -> Option<String> {
    if cfg!(not(any(target_arch = "x86_64", target_arch = "aarch64"))) {
        skip("the scripts run on the host, not under qemu-user");
        return None;
    }
    let dir = common::TempDir::new("startupwindow");
    let path = dir.path().join("strace.log");
    std::fs::write(&path, log).unwrap();
    let mut awk = Command::new("awk");
    if let Some(program) = program {
        awk.arg("-v").arg(format!("program={program}"));
    }
    let out = awk
        .arg("-f")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/startup/window.awk"))
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    Some(String::from_utf8(out.stdout).unwrap())
}

#[test]
fn the_startup_window_runs_from_the_programs_execve_to_its_first_run_command() {
    // From the program's own execve (not the wrapper's, whose arguments
    // name it too): execve, getdents64, openat, open, read (once, not its
    // resumed half), pwrite64 reset, pwrite64 run-forever; the exit line
    // is not a syscall.
    let Some(counted) = startup_window(STARTUP_LOG, Some("/x/startup")) else {
        return;
    };
    assert_eq!(counted, "7 2 1\n");
    // Without a program: from the first execve, the wrapper's two calls too.
    assert_eq!(startup_window(STARTUP_LOG, None).unwrap(), "9 2 1\n");
    // No run command in the log: no figure, not a wrong one.
    let cut = &STARTUP_LOG[..STARTUP_LOG.find("100 pwrite64(4, \"run-").unwrap()];
    assert_eq!(startup_window(cut, Some("/x/startup")).unwrap(), "? ? ?\n");
}

#[test]
fn the_startup_launcher_prints_the_time_then_execs_its_arguments() {
    if cfg!(not(any(target_arch = "x86_64", target_arch = "aarch64"))) {
        skip("the scripts run on the host, not under qemu-user");
        return;
    }
    if !common::has_command("cc") {
        skip("no C compiler (cc) to build scripts/startup/exec-timed.c");
        return;
    }
    let dir = common::TempDir::new("exectimed");
    let exe = dir.path().join("exec-timed");
    let built = Command::new("cc")
        .args(["-O2", "-Wall", "-Werror", "-o"])
        .arg(&exe)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/startup/exec-timed.c"))
        .status()
        .unwrap();
    assert!(built.success());
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let out = Command::new(&exe)
        .args(["sh", "-c", "echo ran $0 $1", "a", "b"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    let stamp: u128 = lines
        .next()
        .and_then(|l| l.strip_prefix("exec-ns "))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no exec-ns line: {text:?}"));
    assert!(stamp >= before, "{stamp} < {before}");
    assert_eq!(lines.next(), Some("ran a b"));
    // A program that cannot be run: exit 127 and why, like a shell.
    let out = Command::new(&exe)
        .arg("/nonexistent/program")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(127));
    assert!(String::from_utf8_lossy(&out.stderr).contains("No such file"));
    // No program: usage, exit 2.
    let out = Command::new(&exe).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}
