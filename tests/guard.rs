//! The stop guard, in child processes against a mock tree: killed by SIGINT
//! or SIGTERM, panicking, calling exit(), dropping the guard, opting out.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::{BufRead, BufReader};
use std::time::Duration;

use ev3sysfs::motor::{StopAction, TachoMotor};
use ev3sysfs::StopGuard;
use ev3sysfs_sim::{MockTree, TachoDriver};

const CHILD_ENV: &str = "EV3SYSFS_GUARD_CHILD";

/// What the child does, chosen by the parent.
#[test]
#[ignore = "run as a child process by the tests below"]
fn guard_child() {
    let Ok(mode) = std::env::var(CHILD_ENV) else {
        return;
    };
    let root = ev3sysfs::default_root();
    let motor = TachoMotor::find(&root, "outA").unwrap();
    let guard = StopGuard::install_with(StopAction::Brake).unwrap();
    guard.protect(&motor).unwrap();
    motor.run_forever(300).unwrap();
    match mode.as_str() {
        "signal" => {
            println!("ready");
            std::thread::sleep(Duration::from_secs(30));
            panic!("not interrupted");
        }
        "release" => {
            assert!(guard.release(motor.device().dir()));
            println!("ready");
            std::thread::sleep(Duration::from_secs(30));
        }
        "panic" => panic!("robot code failed"),
        "exit" => {
            std::mem::forget(guard);
            std::process::exit(3);
        }
        "drop" => drop(guard),
        "disarm" => guard.disarm(),
        "suspend" => {
            println!("ready");
            // Stopped (Ctrl-Z) and continued meanwhile.
            std::thread::sleep(Duration::from_millis(1500));
            eprintln!("run after continue: {:?}", motor.run_forever(300).err());
            guard.disarm();
        }
        "fork-exit" | "fork-panic" => {
            // SAFETY (test code): the child only exits, through libc, or
            // catches a panic and `_exit`s.
            match unsafe { nix::unistd::fork() }.unwrap() {
                nix::unistd::ForkResult::Child => {
                    if mode == "fork-panic" {
                        let _ = std::panic::catch_unwind(|| panic!("child failed"));
                        unsafe { libc::_exit(0) };
                    }
                    unsafe { libc::exit(0) };
                }
                nix::unistd::ForkResult::Parent { child } => {
                    let status = nix::sys::wait::waitpid(child, None).unwrap();
                    println!("child ended: {status:?}");
                }
            }
            guard.disarm();
        }
        other => panic!("unknown mode {other}"),
    }
}

fn child(tree: &MockTree, mode: &str) -> std::process::Child {
    common::child_test("guard_child", CHILD_ENV, mode, tree.root())
        .spawn()
        .unwrap()
}

fn wait_ready(child: &mut std::process::Child) {
    let stdout = child.stdout.take().unwrap();
    for line in BufReader::new(stdout).lines() {
        // libtest prints "test guard_child ... " without a newline first.
        if line.unwrap().trim_end().ends_with("ready") {
            return;
        }
    }
    panic!("child never got ready");
}

fn motor_tree() -> Option<(MockTree, ev3sysfs_sim::MockDevice)> {
    let tree = common::brick()?;
    let motor = tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    Some((tree, motor))
}

fn signalled(status: std::process::ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    status.signal()
}

#[test]
fn sigint_and_sigterm_stop_the_motor() {
    for sig in [
        nix::sys::signal::Signal::SIGINT,
        nix::sys::signal::Signal::SIGTERM,
    ] {
        let Some((tree, motor)) = motor_tree() else {
            return;
        };
        let mut c = child(&tree, "signal");
        wait_ready(&mut c);
        assert_eq!(motor.last_written("command").unwrap(), "run-forever");
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(c.id() as i32), sig).unwrap();
        let status = c.wait().unwrap();
        // The signal is raised again: the process ends as if unhandled.
        assert_eq!(signalled(status), Some(sig as i32), "{status:?}");
        assert_eq!(motor.last_written("command").unwrap(), "stop", "{sig}");
        assert_eq!(motor.last_written("stop_action").unwrap(), "brake");
    }
}

#[test]
fn panic_exit_and_drop_stop_the_motor() {
    for mode in ["panic", "exit", "drop"] {
        let Some((tree, motor)) = motor_tree() else {
            return;
        };
        let out = child(&tree, mode).wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        match mode {
            "panic" => assert!(
                !out.status.success() && stderr.contains("robot code failed"),
                "{stderr}"
            ),
            "exit" => assert_eq!(out.status.code(), Some(3), "{stderr}"),
            _ => assert!(out.status.success(), "{stderr}"),
        }
        assert_eq!(
            motor.last_written("command").unwrap(),
            "stop",
            "{mode}: {stderr}"
        );
        assert_eq!(
            motor.last_written("stop_action").unwrap(),
            "brake",
            "{mode}"
        );
    }
}

#[test]
fn opting_out_leaves_the_motor_alone() {
    let Some((tree, motor)) = motor_tree() else {
        return;
    };
    let out = child(&tree, "disarm").wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(motor.last_written("command").unwrap(), "run-forever");

    let Some((tree, motor)) = motor_tree() else {
        return;
    };
    let mut c = child(&tree, "release");
    wait_ready(&mut c);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(c.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    c.wait().unwrap();
    assert_eq!(motor.last_written("command").unwrap(), "run-forever");
}

#[test]
fn guard_in_process_stop_now_and_capacity() {
    let Some((tree, mock)) = motor_tree() else {
        return;
    };
    let motor = TachoMotor::find(tree.root(), "outA").unwrap();
    let guard = StopGuard::install_without_signals(Some(StopAction::Hold)).unwrap();
    guard.protect(&motor).unwrap();
    motor.run_forever(100).unwrap();
    guard.stop_now();
    assert_eq!(mock.last_written("command").unwrap(), "stop");
    assert_eq!(mock.last_written("stop_action").unwrap(), "hold");
    // A dropped motor handle does not disturb the guard's descriptors.
    motor.run_forever(100).unwrap();
    drop(motor);
    drop(guard);
    assert_eq!(mock.last_written("command").unwrap(), "stop");
    let text = format!(
        "{:?}",
        StopGuard::install_without_signals(Some(StopAction::Coast)).unwrap()
    );
    assert!(text.contains("Coast"));
}

#[test]
fn stop_now_reaches_the_simulator_and_the_handle_forgets_run_direct() {
    use ev3sysfs_sim::Simulator;
    use std::sync::Arc;
    let Some(tree) = common::brick() else { return };
    let tree = Arc::new(tree);
    tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    let mut sim = Simulator::new(Arc::clone(&tree)).unwrap();
    let motor = TachoMotor::find(tree.root(), "outA").unwrap();
    let guard = StopGuard::install_without_signals(Some(StopAction::Brake)).unwrap();
    guard.protect(&motor).unwrap();
    motor.run_direct(50).unwrap();
    sim.step(Duration::from_millis(100)).unwrap();
    assert!(motor.state().unwrap().running());
    guard.stop_now();
    sim.step(Duration::from_millis(300)).unwrap();
    assert!(
        !motor.state().unwrap().running(),
        "the simulator saw the stop"
    );
    assert_eq!(motor.speed().unwrap(), 0);
    // The handle forgot that run-direct was active: the command is sent.
    motor.run_direct(50).unwrap();
    sim.step(Duration::from_millis(100)).unwrap();
    assert!(
        motor.state().unwrap().running(),
        "run_direct after a guard stop restarts"
    );
    guard.disarm();
}

/// Issue 18: a forked child that exits (or catches a panic and `_exit`s)
/// does not stop its parent's motors: the guard acts only in the process
/// that installed it.
#[test]
fn a_forked_child_leaves_the_parents_motors_alone() {
    for mode in ["fork-exit", "fork-panic"] {
        let Some((tree, _motor)) = motor_tree() else {
            return;
        };
        let out = child(&tree, mode).wait_with_output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{mode}: {text}");
        assert!(text.contains("child ended: Exited"), "{mode}: {text}");
        let commands: Vec<String> = tree
            .take_stores()
            .into_iter()
            .filter(|(path, _)| path.ends_with("/command"))
            .map(|(_, bytes)| String::from_utf8_lossy(&bytes).trim_end().to_owned())
            .collect();
        assert_eq!(commands, ["run-forever"], "{mode}: {text}");
    }
}

/// Issue 18: Ctrl-Z (SIGTSTP) stops the protected motors before the
/// process stops; it stops as the default action would, and after SIGCONT
/// the program drives again.
#[test]
fn ctrl_z_stops_the_motor_before_the_process_stops() {
    use nix::sys::signal::{kill, Signal};
    let Some((tree, motor)) = motor_tree() else {
        return;
    };
    // A process group of its own, whose parent (this test) is in another
    // group of the same session: not orphaned, so SIGTSTP's default action
    // stops it. (In an orphaned group, as under CI's detached runner, the
    // kernel discards a default SIGTSTP: the guard then stops the motor and
    // the process goes on, as without the guard.)
    let mut c = {
        use std::os::unix::process::CommandExt;
        let mut command = common::child_test("guard_child", CHILD_ENV, "suspend", tree.root());
        command.process_group(0);
        command.spawn().unwrap()
    };
    let mut lines = BufReader::new(c.stdout.take().unwrap()).lines();
    assert!(lines.any(|l| l.unwrap().trim_end().ends_with("ready")));
    // Keep reading: the child writes to its stdout after it continues.
    std::thread::spawn(move || lines.for_each(drop));
    let pid = nix::unistd::Pid::from_raw(c.id() as i32);
    kill(pid, Signal::SIGTSTP).unwrap();
    let state = || {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", c.id())).unwrap();
        stat.rsplit(") ").next().unwrap().chars().next().unwrap()
    };
    let start = std::time::Instant::now();
    while state() != 'T' {
        assert!(start.elapsed() < Duration::from_secs(20), "never stopped");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(motor.last_written("command").unwrap(), "stop");
    assert_eq!(motor.last_written("stop_action").unwrap(), "brake");
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(state(), 'T', "stays stopped until SIGCONT");
    kill(pid, Signal::SIGCONT).unwrap();
    let out = c.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("run after continue: None"), "{text}");
    assert_eq!(motor.last_written("command").unwrap(), "run-forever");
}
