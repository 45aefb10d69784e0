//! Other languages on the simulated brick (issue 9, "Proof"): an unmodified
//! python-ev3dev2 2.1 program and a shell script (`echo`/`cat`) run under
//! `ev3-sim --over-sys-class`, which binds the FUSE brick over `/sys/class`
//! in a private mount namespace. The programs live in
//! `tests/other_languages/`; each prints `PASS`/`FAIL` per behaviour and a
//! `SUMMARY passed/total` line.
//!
//! Needs root (for the mount namespace), `/dev/fuse`, `ev3-sim` (built with
//! the `sim` feature), and for the Python half python3 with
//! python-ev3dev2 (`scripts/install-test-deps` installs it). Each test
//! prints why it skips when something is missing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The devices both programs expect: a large motor on outA, a colour sensor
/// on in3 (the brick's LEDs, ports, battery and board-info come with every
/// simulated brick).
const DEVICES: [&str; 4] = [
    "--motor",
    "outA:lego-ev3-l-motor",
    "--sensor",
    "in3:lego-ev3-color",
];

fn skip(reason: &str) {
    eprintln!("skipped: {reason}");
}

fn programs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/other_languages")
}

/// `ev3-sim`, when this build has it and the machine can mount it.
fn simulator() -> Option<PathBuf> {
    let Some(bin) = option_env!("CARGO_BIN_EXE_ev3-sim") else {
        skip("ev3-sim is not built (cargo test)");
        return None;
    };
    if !nix::unistd::geteuid().is_root() {
        skip("not root: ev3-sim --over-sys-class needs a mount namespace");
        return None;
    }
    if !Path::new("/dev/fuse").exists() {
        skip("/dev/fuse is missing");
        return None;
    }
    if cfg!(not(any(target_arch = "x86_64", target_arch = "aarch64"))) {
        skip("ev3-sim --over-sys-class runs on the host architecture only (not under qemu-user)");
        return None;
    }
    Some(PathBuf::from(bin))
}

/// Runs `command` under `ev3-sim --over-sys-class` with [`DEVICES`].
fn run_over_sys_class(sim: &Path, command: &[&str]) -> Output {
    let output = Command::new("timeout")
        .arg("180")
        .arg(sim)
        .args(DEVICES)
        .arg("--over-sys-class")
        .arg("--")
        .args(command)
        .output()
        .expect("run ev3-sim");
    eprintln!("{}", String::from_utf8_lossy(&output.stdout));
    eprintln!("{}", String::from_utf8_lossy(&output.stderr));
    output
}

/// The `SUMMARY passed/total` line of a program's output, and its FAIL
/// lines.
fn summary(output: &Output) -> (Option<(u32, u32)>, Vec<String>) {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let fails = stdout
        .lines()
        .filter(|l| l.starts_with("FAIL"))
        .map(str::to_owned)
        .collect();
    let counts = stdout.lines().find_map(|l| {
        let (passed, total) = l.strip_prefix("SUMMARY ")?.split_once('/')?;
        Some((passed.trim().parse().ok()?, total.trim().parse().ok()?))
    });
    (counts, fails)
}

#[test]
fn python_ev3dev2_program_runs_unchanged() {
    let Some(sim) = simulator() else { return };
    let python = Command::new("python3")
        .args([
            "-c",
            "import ev3dev2.motor, ev3dev2.sensor.lego, ev3dev2.led",
        ])
        .output();
    match python {
        Err(_) => return skip("python3 is missing"),
        Ok(o) if !o.status.success() => {
            return skip("python-ev3dev2 is missing (scripts/install-test-deps installs it)")
        }
        Ok(_) => {}
    }
    let program = programs().join("ev3dev2_program.py");
    let output = run_over_sys_class(&sim, &["python3", program.to_str().unwrap()]);
    let (counts, fails) = summary(&output);
    let (passed, total) = counts.expect("the program printed no SUMMARY line");
    assert!(total >= 14, "only {total} behaviours ran");
    assert_eq!(
        passed, total,
        "python-ev3dev2 behaviours failed: {fails:#?}"
    );
    assert!(output.status.success());
}

#[test]
fn shell_echo_and_cat_see_sysfs_semantics() {
    let Some(sim) = simulator() else { return };
    let script = programs().join("shell_checks.sh");
    let output = run_over_sys_class(&sim, &["sh", script.to_str().unwrap()]);
    let (counts, fails) = summary(&output);
    let (passed, total) = counts.expect("the script printed no SUMMARY line");
    assert!(total >= 20, "only {total} checks ran");
    assert_eq!(passed, total, "shell checks failed: {fails:#?}");
    assert!(output.status.success());
}
