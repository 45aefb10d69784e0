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

#[path = "../../tests/common/mod.rs"]
mod common;
use common::skip;

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

fn programs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/other_languages")
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
    let Some(sim) = common::ev3_sim_over_sys_class() else {
        return;
    };
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
    let Some(sim) = common::ev3_sim_over_sys_class() else {
        return;
    };
    let script = programs().join("shell_checks.sh");
    let output = run_over_sys_class(&sim, &["sh", script.to_str().unwrap()]);
    let (counts, fails) = summary(&output);
    let (passed, total) = counts.expect("the script printed no SUMMARY line");
    assert!(total >= 20, "only {total} checks ran");
    assert_eq!(passed, total, "shell checks failed: {fails:#?}");
    assert!(output.status.success());
}

/// Issue 15 "ev3-sim is a complete stand-in": python-ev3dev2's `Button`
/// (buttons_pressed, an on_<button> + process() menu driven by clicks sent
/// to `$EV3SIM_SOCKET`), `Sound.beep`/`Sound.tone` (ev3-sim's `beep`,
/// recorded by the simulated beeper), `/dev/fb0` mapped as its `Display`
/// maps it, and `Display` itself (its `FBIOGET_*SCREENINFO` answered by
/// ev3-sim), read back through the control protocol's `screen`.
#[test]
fn python_ev3dev2_buttons_sound_and_framebuffer_under_ev3_sim() {
    let Some(sim) = common::ev3_sim_over_sys_class() else {
        return;
    };
    let python = Command::new("python3")
        .args(["-c", "import ev3dev2.button, ev3dev2.sound"])
        .output();
    match python {
        Err(_) => return skip("python3 is missing"),
        Ok(o) if !o.status.success() => {
            return skip("python-ev3dev2 is missing (scripts/install-test-deps installs it)")
        }
        Ok(_) => {}
    }
    let program = programs().join("ev3dev2_brick_io.py");
    let output = run_over_sys_class(&sim, &["python3", program.to_str().unwrap()]);
    let (counts, fails) = summary(&output);
    let (passed, total) = counts.expect("the program printed no SUMMARY line");
    assert!(total >= 13, "only {total} behaviours ran");
    assert_eq!(
        passed, total,
        "python-ev3dev2 behaviours failed: {fails:#?}"
    );
    assert!(output.status.success());
}
