//! Issue 17, point 3: one call waits on a move, a touch sensor, a button
//! and a deadline, and says which happened; each wake-up is one `poll`
//! (strace-counted: no busy loop). On the simulated brick; skips with a
//! reason where it cannot be mounted (or strace is missing).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ev3sysfs::buttons::{Button, Buttons};
use ev3sysfs::motor::TachoMotor;
use ev3sysfs::screen::Geometry;
use ev3sysfs::sensor::{TouchSensor, UltrasonicSensor};
use ev3sysfs::wait::{Happened, Threshold, WaitAny};
use ev3sysfs_sim::{MockDevice, MockTree, SensorDriver, SimulatedIo, Simulator, TachoDriver};

struct Brick {
    tree: Arc<MockTree>,
    io: SimulatedIo,
    touch: MockDevice,
    us: MockDevice,
}

fn brick() -> Option<Brick> {
    let tree = Arc::new(common::ev3_brick()?);
    tree.add_tacho_motor("outA", TachoDriver::Ev3Medium)
        .unwrap();
    let touch = tree.add_sensor("in1", SensorDriver::Ev3Touch).unwrap();
    let us = tree.add_sensor("in2", SensorDriver::Ev3Ultrasonic).unwrap();
    let io = match tree.add_brick_io(Geometry::EV3_MONO) {
        Ok(io) => io,
        Err(e) => {
            common::skip(&format!("the simulated buttons need FUSE: {e}"));
            return None;
        }
    };
    Some(Brick {
        tree,
        io,
        touch,
        us,
    })
}

#[test]
fn the_first_of_a_move_a_bumper_a_button_and_a_deadline() {
    let Some(b) = brick() else { return };
    let _sim = Simulator::new(Arc::clone(&b.tree)).unwrap().run_realtime();
    let arm = TachoMotor::find(b.tree.root(), "outA").unwrap();
    let bumper = TouchSensor::find(b.tree.root(), "in1").unwrap();
    let buttons = Buttons::open(b.io.buttons_path()).unwrap();
    let mut any = WaitAny::new();
    let moved = any.motor_stopped(&arm);
    let hit = any.touch(&bumper, true).unwrap();
    let enter = any.button_pressed(&buttons, Some(Button::Enter));
    assert_eq!(any.len(), 3);

    // Nothing happens: the deadline, on time.
    arm.run_forever(200).unwrap();
    let start = Instant::now();
    assert_eq!(
        any.wait(Duration::from_millis(200)).unwrap(),
        Happened::Deadline
    );
    let took = start.elapsed();
    assert!(took >= Duration::from_millis(200), "{took:?}");
    assert!(took < Duration::from_millis(600), "{took:?}");

    // A button click from another thread (over before the wait looks).
    std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(50));
            b.io.click(Button::Enter);
        });
        assert_eq!(
            any.wait(Duration::from_secs(5)).unwrap(),
            Happened::Ready(enter)
        );
    });
    // Another button does not count.
    b.io.click(Button::Up);
    assert_eq!(
        any.wait(Duration::from_millis(50)).unwrap(),
        Happened::Deadline
    );

    // The bumper.
    std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(50));
            b.touch.set_int("value0", 1).unwrap();
        });
        assert_eq!(
            any.wait(Duration::from_secs(5)).unwrap(),
            Happened::Ready(hit)
        );
    });
    b.touch.set_int("value0", 0).unwrap();

    // The move: a quarter turn at 500 deg/s.
    arm.stop().unwrap();
    let before = arm.position().unwrap();
    arm.run_to_abs_pos(before + 90, 500).unwrap();
    let start = Instant::now();
    assert_eq!(
        any.wait(Duration::from_secs(5)).unwrap(),
        Happened::Ready(moved)
    );
    let turned = arm.position().unwrap() - before;
    assert!(
        (80..=100).contains(&turned),
        "{turned} after {:?}",
        start.elapsed()
    );
}

#[test]
fn a_sensor_threshold_in_its_mode() {
    let Some(b) = brick() else { return };
    let us = UltrasonicSensor::find(b.tree.root(), "in2").unwrap();
    let mut any = WaitAny::new();
    let near = any
        .sensor_value(us.sensor(), Some("US-DIST-CM"), 0, Threshold::Below(200))
        .unwrap();
    std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(50));
            b.us.set_int("value0", 150).unwrap();
        });
        assert_eq!(
            any.wait(Duration::from_secs(5)).unwrap(),
            Happened::Ready(near)
        );
    });
}

const CHILD_ENV: &str = "EV3SYSFS_WAIT_ANY_STRACE_CHILD";
const WAIT_MS: u64 = 300;

/// The child: waits 300 ms on a motor, a touch sensor and a button with
/// nothing happening, and says which thread waited.
#[test]
#[ignore = "started under strace by the test below"]
fn strace_child() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    let Some(b) = brick() else {
        eprintln!("SKIPPED: no simulated brick");
        return;
    };
    let arm = TachoMotor::find(b.tree.root(), "outA").unwrap();
    let bumper = TouchSensor::find(b.tree.root(), "in1").unwrap();
    let buttons = Buttons::open(b.io.buttons_path()).unwrap();
    arm.run_forever(100).unwrap();
    let mut any = WaitAny::new();
    any.motor_stopped(&arm);
    any.touch(&bumper, true).unwrap();
    any.button_pressed(&buttons, None);
    println!("WAITER {}", nix::unistd::gettid());
    let r = any.wait(Duration::from_millis(WAIT_MS)).unwrap();
    assert_eq!(r, Happened::Deadline);
    arm.stop().unwrap();
}

#[test]
fn one_poll_per_wake_up_and_no_busy_loop() {
    if cfg!(not(any(target_arch = "x86_64", target_arch = "aarch64"))) {
        return common::skip("strace tests run on the host architecture only");
    }
    if !common::has_command("strace") {
        return common::skip("strace is not installed (apt-get install strace)");
    }
    if brick().is_none() {
        return;
    }
    let tmp = common::TempDir::new("wait-any-strace");
    let log = tmp.path().join("trace");
    let out = Command::new("strace")
        .args(["-f", "-qq", "-o"])
        .arg(&log)
        .arg(std::env::current_exe().unwrap())
        .args([
            "strace_child",
            "--exact",
            "--include-ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let Some(tid) = stdout
        .lines()
        .find_map(|l| l.split("WAITER ").nth(1))
        .map(|t| t.trim().to_owned())
    else {
        return common::skip(&format!(
            "the child skipped: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    };
    let trace = std::fs::read_to_string(&log).unwrap();
    // The waiter's syscalls from its first poll to its last.
    let mine: Vec<&str> = trace
        .lines()
        .filter_map(|l| l.strip_prefix(tid.as_str()))
        .map(str::trim_start)
        .collect();
    // The wait's polls (the only ones asking for POLLPRI).
    let is_wait_poll = |l: &str| l.starts_with("poll(") && l.contains("POLLPRI");
    let first = mine.iter().position(|l| is_wait_poll(l)).unwrap();
    let last = mine.iter().rposition(|l| is_wait_poll(l)).unwrap();
    // strace splits a call another thread interrupts into "<unfinished
    // ...>" and "<... resumed>": count the call once.
    let window: Vec<&str> = mine[first..=last]
        .iter()
        .copied()
        .filter(|l| !l.starts_with("<..."))
        .collect();
    let window = &window[..];
    let polls: Vec<&&str> = window.iter().filter(|l| l.starts_with("poll(")).collect();
    // 10 ms re-check period off sysfs: about 30 wake-ups in 300 ms.
    let most = usize::try_from(WAIT_MS / 10).unwrap() + 3;
    println!(
        "{} polls in {WAIT_MS} ms, {} syscalls in the window",
        polls.len(),
        window.len()
    );
    assert!(
        polls.len() <= most,
        "busy loop: {} polls: {polls:?}",
        polls.len()
    );
    for p in &polls {
        // poll([{fd=.., events=POLLPRI}, ..., {..POLLIN}], 3, 10) = 0 (Timeout)
        assert!(p.contains("], 3, "), "one poll on the three sources: {p}");
        let timeout: i64 = p
            .split("], 3, ")
            .nth(1)
            .and_then(|t| t.split([')', ' ']).next())
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or_else(|| panic!("{p}"));
        assert!(timeout >= 1, "a zero timeout spins: {p}");
    }
    // Between two polls: one look per source (state, value0, the button
    // queue), nothing else.
    let others = window.len() - polls.len();
    assert!(
        others <= 4 * polls.len(),
        "{others} other syscalls for {} polls: {window:#?}",
        polls.len()
    );
}

#[test]
fn a_drive_base_move_or_a_deadline() {
    let Some(b) = brick() else { return };
    b.tree
        .add_tacho_motor("outB", TachoDriver::Ev3Large)
        .unwrap();
    b.tree
        .add_tacho_motor("outC", TachoDriver::Ev3Large)
        .unwrap();
    let _sim = Simulator::new(Arc::clone(&b.tree)).unwrap().run_realtime();
    let base = ev3sysfs::drive::DriveBase::new(
        TachoMotor::large(b.tree.root(), "outB").unwrap(),
        TachoMotor::large(b.tree.root(), "outC").unwrap(),
        ev3sysfs::units::Millimetres(56),
        ev3sysfs::units::Millimetres(112),
    )
    .unwrap();
    let mut any = WaitAny::new();
    let moved = any.drive_done(&base);
    base.start_straight(ev3sysfs::units::Millimetres(100))
        .unwrap();
    std::thread::sleep(Duration::from_millis(30));
    assert_eq!(
        any.wait(Duration::from_millis(50)).unwrap(),
        Happened::Deadline
    );
    assert_eq!(
        any.wait(Duration::from_secs(5)).unwrap(),
        Happened::Ready(moved)
    );
    let d = base.distance().unwrap().0;
    assert!((95..=105).contains(&d), "{d}");
}
