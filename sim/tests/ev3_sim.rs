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
    if common::under_qemu_user() {
        // Under qemu-user ev3-sim would start `unshare`, which cannot exec
        // the emulated binary again (on a real ARM kernel it can).
        common::skip("ev3-sim does not run under qemu-user");
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

fn run_sh(sim: &std::path::Path, devices: &[&str], script: &str) -> (bool, String, String) {
    let out = Command::new("timeout")
        .arg("120")
        .arg(sim)
        .args(devices)
        .args(["--over-sys-class", "--", "sh", "-c", script])
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Issue 18: a non-UTF-8 line does not take the valid line after it (same
/// write) with it; `plug` onto a busy port or a motor on an input port is
/// refused with an error line, and the rest is served.
#[test]
fn the_control_fifo_keeps_the_lines_around_a_bad_one_and_refuses_bad_plugs() {
    let Some(sim) = ev3_sim() else { return };
    if Command::new("unshare").arg("--version").output().is_err() {
        return common::skip("util-linux unshare is missing");
    }
    let (ok, stdout, stderr) = run_sh(
        &sim,
        &["--device", "outA=lego-ev3-l-motor", "--device", "in1=lego-ev3-touch"],
        "printf 'plug outA lego-ev3-m-motor\\nplug in2 lego-ev3-l-motor\\n\\377\\376 x\\nset in1 value0 1\\n' \
           > \"$EV3SIM_CONTROL\"; sleep 0.5; \
         cat /sys/class/lego-sensor/sensor0/value0; ls /sys/class/tacho-motor",
    );
    assert!(ok, "{stdout}\n{stderr}");
    assert_eq!(stdout, "1\nmotor0\n", "{stderr}");
    assert!(stderr.contains("outA is busy"), "{stderr}");
    assert!(
        stderr.contains("is a motor: plug it into outA..outD"),
        "{stderr}"
    );
    assert!(stderr.contains("not UTF-8"), "{stderr}");
}

/// The control socket answers each line with one line, for a shell too.
#[test]
fn the_control_socket_answers_every_line() {
    let Some(sim) = ev3_sim() else { return };
    if Command::new("python3").arg("--version").output().is_err() {
        return common::skip("python3 is missing (the socket's client here)");
    }
    let client = "import os, socket, sys\n\
        s = socket.socket(socket.AF_UNIX); s.connect(os.environ['EV3SIM_SOCKET'])\n\
        s.sendall(sys.stdin.buffer.read()); s.shutdown(socket.SHUT_WR)\n\
        sys.stdout.write(s.makefile().read())";
    let script = format!(
        "printf 'ping\\n\\377\\nblock outA\\nbattery 6.5\\nget battery voltage_now\\nclick enter 5\\nmove 1 2 3\\n' \
         | python3 -c \"{client}\""
    );
    let (ok, stdout, stderr) = run_sh(&sim, &["--device", "outA=lego-ev3-l-motor"], &script);
    assert!(ok, "{stdout}\n{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 7, "{stdout}");
    assert_eq!(lines[0], "ok pong");
    assert!(lines[1].starts_with("error"), "{stdout}");
    assert_eq!(&lines[2..6], ["ok", "ok", "ok 6500000", "ok"], "{stdout}");
    assert!(
        lines[6].starts_with("error move: this brick has no world"),
        "{stdout}"
    );
}

/// Issue 18: after SIGKILL the mount is stale (ENOTCONN); the next
/// `--mount` on the directory cleans it and serves; a second ev3-sim on a
/// directory already served refuses clearly.
#[test]
fn a_stale_mount_is_cleaned_and_a_served_directory_refused() {
    let Some(sim) = ev3_sim() else { return };
    let dir = common::TempDir::new("ev3-sim-stale");
    let start = |dir: &std::path::Path| {
        Command::new(&sim)
            .arg("--mount")
            .arg(dir)
            .args(["--empty"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let board = dir.path().join("board-info/board0/uevent");
    let wait_served = || {
        let t = Instant::now();
        while !board.exists() && t.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(board.exists());
    };
    let mut first = start(dir.path());
    wait_served();
    // A second one on the same directory refuses, and says why.
    let second = start(dir.path()).wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&second.stderr);
    assert!(!second.status.success());
    assert!(said.contains("already served by another ev3-sim"), "{said}");
    // SIGKILL: the mount stays, stale.
    first.kill().unwrap();
    first.wait().unwrap();
    let stale = std::fs::metadata(dir.path()).unwrap_err();
    assert_eq!(stale.raw_os_error(), Some(libc::ENOTCONN));
    let third = start(dir.path());
    wait_served();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(third.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let out = third.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("stale mount"), "{said}");
    assert!(!mounted(dir.path()));
}

/// Issue 15 "Kernel facts", seen by non-crate clients under ev3-sim: a user
/// outside the files' group gets EACCES (a user in it may drive the motor);
/// `stalled` at speed setpoint 0 after ~100 ms; `fstat` on a held file after
/// an unplug succeeds while its read is ENODEV; `bin_data` reads 32 bytes.
#[test]
fn kernel_facts_seen_by_a_shell_and_python() {
    let Some(sim) = ev3_sim() else { return };
    if Command::new("setpriv").arg("--version").output().is_err()
        || Command::new("python3").arg("--version").output().is_err()
    {
        return common::skip("util-linux setpriv or python3 is missing");
    }
    let script = r#"
m=/sys/class/tacho-motor/motor0
ls -ln $m/command $m/speed_sp $m/state | awk '{print $1}'
g=$(stat -c %g $m/command)
setpriv --reuid=65534 --regid=65534 --clear-groups sh -c "echo run-forever > $m/command" 2>/dev/null \
  && echo outsider-drove || echo outsider-refused
setpriv --reuid=65534 --regid=65534 --groups=$g sh -c "echo 0 > $m/speed_sp && echo run-forever > $m/command" \
  && echo member-drove
sleep 0.4; cat $m/state; echo stop > $m/command
python3 - <<'PY'
import os, errno
with open('/sys/class/lego-sensor/sensor0/bin_data', 'rb', 0) as f:
    print('bin_data', len(f.read()))
fd = os.open('/sys/class/lego-sensor/sensor0/value0', os.O_RDONLY)
with open(os.environ['EV3SIM_CONTROL'], 'w') as c:
    c.write('unplug in1\n')
import time; time.sleep(0.4)
print('fstat', 'ok' if os.fstat(fd).st_size >= 0 else 'bad')
try:
    os.pread(fd, 64, 0); print('read ok?')
except OSError as e:
    print('read', errno.errorcode[e.errno])
PY
"#;
    let out = Command::new("timeout")
        .arg("120")
        .arg(&sim)
        .args([
            "--device",
            "outA=lego-ev3-l-motor",
            "--device",
            "in1=lego-ev3-touch",
        ])
        .args(["--over-sys-class", "--", "sh", "-c", script])
        .env_remove("EV3SIM_GROUP")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert_eq!(
        stdout,
        "--w--w----\n-rw-rw-r--\n-r--r--r--\noutsider-refused\nmember-drove\n\
         running stalled\nbin_data 32\nfstat ok\nread ENODEV\n",
        "{stderr}"
    );
}

/// A shell program under ev3-sim reads the brick's buttons where ev3dev has
/// them (`dd` of two `struct input_event`s: a click sent to the FIFO) and
/// plays on the beeper with `beep`.
#[test]
fn a_shell_reads_a_click_from_the_buttons_and_beeps() {
    let Some(sim) = ev3_sim() else { return };
    if Command::new("unshare").arg("--version").output().is_err() {
        return common::skip("util-linux unshare is missing");
    }
    let size = std::mem::size_of::<libc::input_event>();
    let script = format!(
        "b=/dev/input/by-path/platform-gpio_keys-event; \
         ( dd if=$b bs={size} count=2 2>/dev/null | od -An -v -tu2 -w{size} ) > /tmp/ev3sim-$$ & \
         sleep 0.5; echo 'click enter 5' > \"$EV3SIM_CONTROL\"; wait; cat /tmp/ev3sim-$$; rm /tmp/ev3sim-$$; \
         beep -f 523 -l 10 && echo beeped"
    );
    let (ok, stdout, stderr) = run_sh(&sim, &["--empty"], &script);
    // ev3-sim lays its `beep` over /usr/bin with overlayfs; a kernel
    // without it (the ARM926 guest's) gets the buttons but no `beep`.
    let no_beep = stderr.contains("no beep for this program");
    assert!(ok || no_beep, "{stdout}\n{stderr}");
    let lines: Vec<Vec<u32>> = stdout
        .lines()
        .filter(|l| !l.contains("beeped"))
        .map(|l| l.split_whitespace().map(|w| w.parse().unwrap()).collect())
        .collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    // After the time: type EV_KEY, code KEY_ENTER, value 1; then EV_SYN.
    let tail = |l: &Vec<u32>| l[l.len() - 4..].to_vec();
    assert_eq!(tail(&lines[0]), [1, 28, 1, 0], "{stdout}");
    assert_eq!(tail(&lines[1]), [0, 0, 0, 0], "{stdout}");
    if no_beep {
        return common::skip(&format!(
            "the beep half: ev3-sim could not provide `beep` here ({})",
            stderr
                .lines()
                .find(|l| l.contains("no beep"))
                .unwrap_or_default()
        ));
    }
    assert!(stdout.ends_with("beeped\n"), "{stdout}\n{stderr}");
}

/// `EV3SIM_GROUP` gives the files another group (a host without `ev3dev`):
/// its members may drive the motors, others may not.
#[test]
fn ev3sim_group_chooses_the_files_group() {
    let Some(sim) = ev3_sim() else { return };
    // By its path: busybox's sh (the ARM926 guest's) would run its own
    // setpriv applet, which has no --reuid.
    let Some(setpriv) = common::command_path("setpriv") else {
        return common::skip("util-linux setpriv is missing");
    };
    // The refusals below are only worth something where setpriv itself can
    // drop to nobody: a setpriv that fails looks like a refused member.
    let drop = Command::new(&setpriv)
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "true"])
        .output()
        .unwrap();
    if !drop.status.success() {
        return common::skip(&format!(
            "setpriv cannot drop to nobody here: {}",
            String::from_utf8_lossy(&drop.stderr).trim()
        ));
    }
    let setpriv = setpriv.display();
    let script = format!(
        "m=/sys/class/tacho-motor/motor0; stat -c %g $m/command; \
        {setpriv} --reuid=65534 --regid=65534 --clear-groups sh -c \"echo 100 > $m/speed_sp\" 2>/dev/null \
          && echo member-wrote || echo member-refused; \
        {setpriv} --reuid=65534 --regid=65533 --clear-groups sh -c \"echo 100 > $m/speed_sp\" 2>/dev/null \
          && echo outsider-wrote || echo outsider-refused"
    );
    let out = Command::new("timeout")
        .arg("120")
        .arg(&sim)
        .args([
            "--device",
            "outA=lego-ev3-l-motor",
            "--over-sys-class",
            "--",
        ])
        .args(["sh", "-c", &script])
        .env("EV3SIM_GROUP", "65534")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout, "65534\nmember-wrote\noutsider-refused\n");
}

/// The world's lines go through the same control socket: `move` puts the
/// robot somewhere, `pose` says where it is.
#[test]
fn the_control_socket_serves_the_worlds_pose_and_move() {
    let Some(sim) = ev3_sim() else { return };
    if Command::new("python3").arg("--version").output().is_err() {
        return common::skip("python3 is missing (the socket's client here)");
    }
    let script = "printf 'move 100 200 90\\npose\\nmove 1 2\\n' | python3 -c \"\
import os, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(os.environ['EV3SIM_SOCKET'])
s.sendall(sys.stdin.buffer.read()); s.shutdown(socket.SHUT_WR)
sys.stdout.write(s.makefile().read())\"";
    let (ok, stdout, stderr) = run_sh(&sim, &["--world", "bumper"], script);
    assert!(ok, "{stdout}\n{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], "ok", "{stdout}");
    assert!(lines[1].starts_with("ok pose 100.0 200.0 90.0"), "{stdout}");
    assert!(
        lines[2].starts_with("error expected `move X Y HEADING`"),
        "{stdout}"
    );
}

/// Issue 16: a touch sensor pressed by a control line in a world that has
/// it free (the bumper world's robot stands 510 mm from the wall) stays
/// pressed, tick after tick, until a control line releases it.
#[test]
fn a_touch_pressed_by_a_control_line_stays_pressed_in_a_world_until_released() {
    let Some(sim) = ev3_sim() else { return };
    let script = "for d in /sys/class/lego-sensor/*; do \
           [ \"$(cat $d/address)\" = ev3-ports:in1 ] && touch=$d/value0; done; \
         cat $touch; \
         echo 'set in1 value0 1' > \"$EV3SIM_CONTROL\"; sleep 0.3; cat $touch; \
         sleep 0.3; cat $touch; \
         echo 'set in1 value0 0' > \"$EV3SIM_CONTROL\"; sleep 0.3; cat $touch";
    let (ok, stdout, stderr) = run_sh(&sim, &["--world", "bumper"], script);
    assert!(ok, "{stdout}\n{stderr}");
    assert_eq!(
        stdout, "0\n1\n1\n0\n",
        "free, pressed, held, released: {stderr}"
    );
}
