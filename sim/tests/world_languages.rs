//! Unmodified programs in other languages in simulated worlds: python-ev3dev2
//! (a bumper, a line follower on `ColorSensor.reflected_light_intensity`,
//! a gyro square with `MoveTank` + `GyroSensor`, a colour sorter that
//! switches modes on every reading) and a shell script
//! (`echo`/`cat`) run under `ev3-sim --world NAME --over-sys-class`, and
//! ev3-sim's closing report says whether the robot reached its goal. The
//! programs live in `tests/worlds/`.
//!
//! Needs root (a mount namespace), `/dev/fuse`, `ev3-sim`, and python3 with
//! python-ev3dev2 for the Python ones; each test prints why it skips.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::Command;

#[path = "../../tests/common/mod.rs"]
mod common;
use common::skip;

fn python() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import ev3dev2.motor, ev3dev2.sensor.lego"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        skip("python3 with python-ev3dev2 is missing (scripts/install-test-deps installs it)");
    }
    ok
}

/// Runs `program` (in tests/worlds) with `interpreter` in `world`; returns
/// its stdout and ev3-sim's world report line.
fn run(sim: &Path, world: &str, interpreter: &str, program: &str) -> (String, String) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/worlds")
        .join(program);
    let output = Command::new("timeout")
        .arg("120")
        .arg(sim)
        .args(["--world", world, "--over-sys-class", "--", interpreter])
        .arg(&path)
        .output()
        .expect("run ev3-sim");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    );
    eprintln!("{stdout}{stderr}");
    assert!(output.status.success(), "{program} failed");
    let report = stderr
        .lines()
        .find(|l| l.starts_with("ev3-sim: world "))
        .expect("ev3-sim reported no world")
        .to_owned();
    (stdout, report)
}

/// The number just before `unit` in `text`, e.g. `number(r, " mm from the wall")`.
fn number(text: &str, unit: &str) -> f64 {
    let before = &text[..text
        .find(unit)
        .unwrap_or_else(|| panic!("no {unit:?} in {text}"))];
    before.rsplit(' ').next().unwrap().parse().unwrap()
}

#[test]
fn python_bumper_stops_at_the_wall() {
    let Some(sim) = common::ev3_sim_over_sys_class() else {
        return;
    };
    if !python() {
        return;
    }
    let (out, report) = run(&sim, "bumper", "python3", "bumper.py");
    assert!(out.contains("PRESSED"), "{out}");
    assert!(number(&report, " mm from the wall") <= 20.0, "{report}");
}

#[test]
fn python_line_follower_completes_a_lap() {
    let Some(sim) = common::ev3_sim_over_sys_class() else {
        return;
    };
    if !python() {
        return;
    }
    let (_, report) = run(&sim, "line", "python3", "line.py");
    let lap = number(&report, " s (");
    // The 1540 mm lap at 30 % (154 mm/s) ideally takes 10 s.
    assert!(
        report.contains("completed a lap") && lap <= 20.0,
        "{report}"
    );
}

#[test]
fn python_gyro_square_ends_where_it_started() {
    let Some(sim) = common::ev3_sim_over_sys_class() else {
        return;
    };
    if !python() {
        return;
    }
    let (out, report) = run(&sim, "empty", "python3", "gyro_square.py");
    assert!(out.contains("ANGLE"), "{out}");
    // Within 3 % of the 300 mm side.
    assert!(number(&report, " mm from its start") <= 9.0, "{report}");
}

#[test]
fn python_colour_sorter_reads_each_colour_at_once_after_a_mode_switch() {
    let Some(sim) = common::ev3_sim_over_sys_class() else {
        return;
    };
    if !python() {
        return;
    }
    let (out, _) = run(&sim, "sorter", "python3", "sorter.py");
    assert!(out.contains("COLOURS Red Green Blue Yellow"), "{out}");
    // The arm asked for 80 degrees and got them (its end stop is at 90).
    assert!(out.contains("ARM 80"), "{out}");
}

#[test]
fn a_bad_world_file_is_named_with_its_line_and_field() {
    let Some(sim) = common::ev3_sim_over_sys_class() else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("ev3-sim-world-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bad.toml");
    std::fs::write(&file, "name = \"bad\"\n[ports]\nin9 = \"lego-ev3-touch\"\n").unwrap();
    let output = Command::new("timeout")
        .arg("60")
        .arg(&sim)
        .arg("--world")
        .arg(&file)
        .args(["--over-sys-class", "--", "true"])
        .output()
        .expect("run ev3-sim");
    let _ = std::fs::remove_dir_all(&dir);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("line 3, field ports.in9"), "{stderr}");
}

#[test]
fn shell_bumper_drives_with_echo_and_cat() {
    let Some(sim) = common::ev3_sim_over_sys_class() else {
        return;
    };
    let (out, report) = run(&sim, "bumper", "sh", "bumper.sh");
    assert!(out.contains("PRESSED"), "{out}");
    assert!(number(&report, " mm from the wall") <= 20.0, "{report}");
}
