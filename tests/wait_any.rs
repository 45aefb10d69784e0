//! Issue 17, point 3: one call waits on a move, a touch sensor, a button
//! and a deadline, and says which happened; each wake-up is one `poll`
//! (strace-counted: no busy loop). On the simulated brick; skips with a
//! reason where it cannot be mounted (or strace is missing).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

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
    // Not a timing check: nothing else happens, so a wait that missed its
    // deadline would sleep until the 5 s bound. (Under qemu-arm on a loaded
    // CI runner the deadline came back after 668 ms.)
    assert!(took < Duration::from_secs(5), "{took:?}");

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
    if brick().is_none() {
        return;
    }
    let Some(lines) = common::traced_waiter("strace_child", CHILD_ENV) else {
        return;
    };
    // 10 ms re-check period off sysfs: about 30 wake-ups in 300 ms, each
    // on the three sources.
    let (window, polls) = common::wait_polls(&lines, 3, WAIT_MS, 10);
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

const DRIVE_CHILD_ENV: &str = "EV3SYSFS_WAIT_ANY_DRIVE_STRACE_CHILD";

/// The child: waits 100 ms for a drive base whose wheels keep running.
#[test]
#[ignore = "started under strace by the test below"]
fn drive_strace_child() {
    if std::env::var_os(DRIVE_CHILD_ENV).is_none() {
        return;
    }
    let Some(b) = brick() else {
        eprintln!("SKIPPED: no simulated brick");
        return;
    };
    for port in ["outB", "outC"] {
        b.tree.add_tacho_motor(port, TachoDriver::Ev3Large).unwrap();
    }
    let base = common::drive_base(&b.tree);
    base.drive(
        ev3sysfs::units::MmPerSec(100),
        ev3sysfs::units::DegPerSec(0),
    )
    .unwrap();
    let mut any = WaitAny::new();
    any.drive_done(&base);
    println!("WAITER {}", nix::unistd::gettid());
    let r = any.wait(Duration::from_millis(100)).unwrap();
    assert_eq!(r, Happened::Deadline);
    base.stop().unwrap();
}

/// A drive base's source wakes on either wheel: each poll asks for
/// `POLLPRI` on both wheels' `state`.
#[test]
fn a_drive_base_source_polls_both_wheels() {
    if brick().is_none() {
        return;
    }
    let Some(lines) = common::traced_waiter("drive_strace_child", DRIVE_CHILD_ENV) else {
        return;
    };
    let (_, polls) = common::wait_polls(&lines, 2, 100, 10);
    for p in polls {
        assert_eq!(p.matches("events=POLLPRI").count(), 2, "{p}");
    }
}
