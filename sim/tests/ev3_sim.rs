//! The `ev3-sim` binary: `--mount DIR` serves a brick until SIGTERM and
//! leaves no mount; `--over-sys-class` runs a command with the brick over
//! /sys/class and exits with its status.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../../tests/common/mod.rs"]
mod common;

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

fn ev3_sim() -> Option<PathBuf> {
    let Some(bin) = option_env!("CARGO_BIN_EXE_ev3-sim") else {
        common::skip("ev3-sim is not built (features bin + sim)");
        return None;
    };
    if !common::is_root() {
        common::skip("ev3-sim needs root here (mount namespace, mount syscall)");
        return None;
    }
    if cfg!(not(any(target_arch = "x86_64", target_arch = "aarch64"))) {
        // ev3-sim is a host tool: under qemu-user it would start `unshare`,
        // which cannot exec the emulated binary again.
        common::skip("ev3-sim runs on the host architecture only (not under qemu-user)");
        return None;
    }
    // Can this machine mount the brick at all?
    common::brick()?;
    Some(PathBuf::from(bin))
}

fn mounted(dir: &std::path::Path) -> bool {
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let dir = dir.to_string_lossy();
    info.lines()
        .any(|l| l.split(' ').nth(4) == Some(dir.as_ref()))
}

#[test]
fn mount_serves_until_sigterm_and_leaves_no_mount() {
    let Some(sim) = ev3_sim() else { return };
    let dir = common::TempDir::new("ev3-sim-mount");
    let mut child = Command::new(&sim)
        .arg("--mount")
        .arg(dir.path())
        .args(["--device", "outB=lego-ev3-m-motor"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let driver = dir.path().join("tacho-motor/motor0/driver_name");
    let start = Instant::now();
    while !driver.exists() && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let shown = std::fs::read_to_string(&driver);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(shown.unwrap(), "lego-ev3-m-motor\n");
    assert!(status.success(), "{status}");
    assert!(!mounted(dir.path()));
    assert!(!driver.exists());
}

#[test]
fn over_sys_class_runs_the_command_and_exits_with_its_status() {
    let Some(sim) = ev3_sim() else { return };
    if Command::new("unshare").arg("--version").output().is_err() {
        return common::skip("util-linux unshare is missing");
    }
    let out = Command::new("timeout")
        .arg("120")
        .arg(&sim)
        .args(["--over-sys-class", "--", "sh", "-c"])
        .arg(
            "cat /sys/class/tacho-motor/motor2/driver_name \
             /sys/class/lego-sensor/sensor3/driver_name \
             /sys/class/board-info/board0/uevent; exit 7",
        )
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(7),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The default brick: outC medium motor, in4 infrared.
    assert!(stdout.contains("lego-ev3-m-motor"), "{stdout}");
    assert!(stdout.contains("lego-ev3-ir"), "{stdout}");
    assert!(
        stdout.contains("BOARD_INFO_MODEL=LEGO MINDSTORMS EV3"),
        "{stdout}"
    );
    // The namespace was private: nothing is bound over this /sys/class.
    assert!(!mounted(std::path::Path::new("/sys/class")));
}

#[test]
fn the_control_fifo_unplugs_and_plugs_devices_for_other_programs() {
    let Some(sim) = ev3_sim() else { return };
    if Command::new("unshare").arg("--version").output().is_err() {
        return common::skip("util-linux unshare is missing");
    }
    let out = Command::new("timeout")
        .arg("120")
        .arg(&sim)
        .args(["--device", "outA=lego-ev3-l-motor", "--over-sys-class"])
        .args(["--", "sh", "-c"])
        .arg(
            "exec 3</sys/class/tacho-motor/motor0/position; \
             echo 'unplug outA' > \"$EV3SIM_CONTROL\"; sleep 0.3; \
             ls /sys/class/tacho-motor; echo ---; \
             cat <&3 || echo held-fd-failed; \
             echo 'plug outA lego-ev3-m-motor' > \"$EV3SIM_CONTROL\"; sleep 0.3; \
             cat /sys/class/tacho-motor/motor1/driver_name",
        )
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    // Unplugged: the class is empty and the held descriptor fails; plugged
    // again: a new number.
    let (before, after) = stdout.split_once("---\n").unwrap();
    assert_eq!(before.trim(), "", "{stdout}");
    assert!(after.contains("held-fd-failed"), "{stdout}\n{stderr}");
    assert!(after.ends_with("lego-ev3-m-motor\n"), "{stdout}");
}
