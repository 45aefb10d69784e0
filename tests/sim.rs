//! The motor simulator: each command's physics (positions reached, timing
//! within the model's tolerance, state flags), and a small robot scenario.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use ev3sysfs::motor::{StopAction, TachoMotor, Tank};
use ev3sysfs::sensor::{Sensor, TouchSensor};
use ev3sysfs_sim::{MockDevice, MockTree, RealtimeSim, SensorDriver, Simulator, TachoDriver};

const MS: Duration = Duration::from_millis(1);

fn setup() -> Option<(Simulator, MockDevice, TachoMotor)> {
    let tree = Arc::new(common::brick()?);
    let mock = tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    let sim = Simulator::new(Arc::clone(&tree)).unwrap();
    let motor = TachoMotor::find(tree.root(), "outA").unwrap();
    Some((sim, mock, motor))
}

fn near(actual: i32, expected: i32, tolerance: i32) {
    assert!(
        (actual - expected).abs() <= tolerance,
        "{actual} not within {tolerance} of {expected}"
    );
}

#[test]
fn run_forever_then_coast_and_brake() {
    let Some((mut sim, _mock, m)) = setup() else {
        return;
    };
    m.run_forever(500).unwrap();
    sim.step(1000 * MS).unwrap();
    // 0 to 500 counts/s in 500/21000 s: about 6 counts lost.
    near(m.position().unwrap(), 494, 2);
    assert_eq!(m.speed().unwrap(), 500);
    assert!(m.state().unwrap().running());
    near(m.duty_cycle().unwrap(), 48, 1);
    m.stop().unwrap();
    sim.step(2 * MS).unwrap();
    assert!(
        !m.state().unwrap().running(),
        "running is cleared by any stop"
    );
    sim.step(500 * MS).unwrap();
    assert_eq!(m.speed().unwrap(), 0);
    let coasted = m.position().unwrap() - 494;
    // Coast: 500 counts/s at 3500 counts/s² is about 36 counts.
    near(coasted, 36, 4);

    m.stop_with(StopAction::Brake).unwrap();
    m.run_forever(500).unwrap();
    sim.step(500 * MS).unwrap();
    let before = m.position().unwrap();
    m.stop().unwrap();
    sim.step(500 * MS).unwrap();
    let braked = m.position().unwrap() - before;
    assert!(braked < coasted / 2, "brake {braked} vs coast {coasted}");
    assert_eq!(m.duty_cycle().unwrap(), 0);
}

#[test]
fn run_timed_stops_after_time_sp() {
    let Some((mut sim, _mock, m)) = setup() else {
        return;
    };
    m.run_timed(300, 1000).unwrap();
    sim.step(990 * MS).unwrap();
    assert!(m.state().unwrap().running());
    sim.step(20 * MS).unwrap();
    assert!(!m.state().unwrap().running());
    sim.step(500 * MS).unwrap();
    // About 300 counts in 1 s, plus a short coast.
    near(m.position().unwrap(), 300, 20);
}

#[test]
fn run_to_abs_pos_holds_the_target() {
    let Some((mut sim, _mock, m)) = setup() else {
        return;
    };
    m.set_stop_action(StopAction::Hold).unwrap();
    m.run_to_abs_pos(720, 600).unwrap();
    sim.step(600 * MS).unwrap();
    assert!(m.state().unwrap().running());
    sim.step(1000 * MS).unwrap();
    assert_eq!(m.position().unwrap(), 720);
    let state = m.state().unwrap();
    assert!(state.holding() && !state.running(), "{state}");
    // Backwards, with the sign of speed ignored.
    m.run_to_abs_pos(-90, 600).unwrap();
    sim.step(2000 * MS).unwrap();
    assert_eq!(m.position().unwrap(), -90);
}

#[test]
fn the_same_relative_command_twice_moves_twice() {
    let Some((mut sim, _mock, m)) = setup() else {
        return;
    };
    // Both writes land before the simulator runs: two events, not one.
    m.run_to_rel_pos(360, 800).unwrap();
    m.run_to_rel_pos(360, 800).unwrap();
    sim.step(3000 * MS).unwrap();
    assert_eq!(m.position().unwrap(), 720);
    // The next relative move starts from the previous target.
    m.run_to_rel_pos(-180, 800).unwrap();
    sim.step(2000 * MS).unwrap();
    assert_eq!(m.position().unwrap(), 540);
    // position_sp 0 is a stop.
    m.run_to_rel_pos(0, 800).unwrap();
    sim.step(10 * MS).unwrap();
    assert!(!m.state().unwrap().running());
}

#[test]
fn run_direct_applies_duty_changes_at_once() {
    let Some((mut sim, _mock, m)) = setup() else {
        return;
    };
    m.run_direct(50).unwrap();
    sim.step(200 * MS).unwrap();
    assert_eq!(m.speed().unwrap(), 525);
    assert_eq!(m.duty_cycle().unwrap(), 50);
    m.run_direct(-100).unwrap(); // duty only: run-direct is active
    sim.step(200 * MS).unwrap();
    assert_eq!(m.speed().unwrap(), -1050);
    assert_eq!(m.duty_cycle().unwrap(), -100);
}

#[test]
fn ramps_take_their_time_and_show_ramping() {
    let Some((mut sim, _mock, m)) = setup() else {
        return;
    };
    m.set_ramp_up_sp(1000).unwrap();
    m.set_ramp_down_sp(500).unwrap();
    m.run_forever(1050).unwrap();
    sim.step(500 * MS).unwrap();
    // Half-way up the ramp (the driver's speed estimate lags a little).
    near(m.speed().unwrap(), 525, 15);
    assert!(m.state().unwrap().ramping());
    sim.step(600 * MS).unwrap();
    assert_eq!(m.speed().unwrap(), 1050);
    assert!(!m.state().unwrap().ramping());
    // Ramp down to a lower speed: 525 counts/s less at 2100 counts/s².
    m.run_forever(525).unwrap();
    sim.step(100 * MS).unwrap();
    assert!(m.state().unwrap().ramping());
    sim.step(100 * MS).unwrap();
    // The class ramp steps every 100 ms; the regulated speed follows.
    near(m.speed().unwrap(), 630, 70);
}

#[test]
fn speed_sp_beyond_max_speed_is_refused_and_blocking_stalls() {
    let Some((mut sim, mock, m)) = setup() else {
        return;
    };
    // Past the typed API's check, the driver refuses it (EINVAL).
    let err = m.device().write_int("speed_sp", 5000).unwrap_err();
    assert_eq!(err.errno(), Some(libc::EINVAL), "{err:?}");
    m.device().write_int("speed_sp", 1050).unwrap();
    m.device().write_str("command", "run-forever").unwrap();
    sim.step(300 * MS).unwrap();
    assert_eq!(m.speed().unwrap(), 1050);
    sim.block(&mock, true);
    sim.step(50 * MS).unwrap();
    assert!(!m.state().unwrap().stalled(), "not before 100 ms");
    sim.step(100 * MS).unwrap();
    let state = m.state().unwrap();
    assert!(
        state.running() && state.stalled() && state.overloaded(),
        "{state}"
    );
    sim.block(&mock, false);
    sim.step(50 * MS).unwrap();
    assert!(!m.state().unwrap().stalled());
}

#[test]
fn a_scripted_block_holds_the_motor_in_simulated_time_until_block_ends_it() {
    let Some((mut sim, mock, m)) = setup() else {
        return;
    };
    m.run_forever(500).unwrap();
    // Held still the first 40 ms of every 120 ms: never long enough to stall.
    sim.script_block(&mock, |w| w.time.as_millis() % 120 < 40);
    sim.step(Duration::from_millis(1200)).unwrap();
    let state = m.state().unwrap();
    assert!(state.running() && !state.stalled(), "{state}");
    let dragged = m.position().unwrap();
    assert!((250..500).contains(&dragged), "{dragged}");
    // `block(false)` ends the script: the motor runs freely.
    sim.block(&mock, false);
    sim.step(Duration::from_millis(1200)).unwrap();
    let free = m.position().unwrap() - dragged;
    assert!(free > dragged + 100, "{free} vs {dragged}");
}

#[test]
fn reset_zeroes_position_and_setpoints() {
    let Some((mut sim, mock, m)) = setup() else {
        return;
    };
    m.set_stop_action(StopAction::Brake).unwrap();
    m.run_forever(400).unwrap();
    sim.step(300 * MS).unwrap();
    assert!(m.position().unwrap() > 0);
    m.reset().unwrap();
    sim.step(300 * MS).unwrap();
    // Coasting on, but counted from 0 again.
    assert!(m.position().unwrap() < 100);
    assert_eq!(mock.read_int("speed_sp").unwrap(), 0);
    assert_eq!(mock.read("stop_action").unwrap(), "coast");
    assert!(!m.state().unwrap().running());
}

#[test]
fn sensor_mode_writes_are_applied_like_the_driver() {
    let Some(tree) = common::brick() else { return };
    let tree = Arc::new(tree);
    tree.add_sensor("in3", SensorDriver::Ev3Infrared).unwrap();
    let mut sim = Simulator::new(Arc::clone(&tree)).unwrap();
    let ir = Sensor::find(tree.root(), "in3", &[]).unwrap();
    ir.set_mode("IR-SEEK").unwrap();
    // The store switched the mode at once, before any simulated time.
    assert_eq!(ir.device().read_int("num_values").unwrap(), 8);
    assert_eq!(ir.num_values(), 8);
    // Channel 4's distance without a beacon, as the driver shows it.
    assert_eq!(ir.value(7).unwrap(), -128);
    // No value8 in the class: refused without a syscall, naming the file.
    match ir.value(8) {
        Err(ev3sysfs::Error::Unsupported { path, .. }) => assert!(path.ends_with("value8")),
        other => panic!("value(8): {other:?}"),
    }
    assert!(ir.value(usize::MAX).is_err());
    sim.step(2 * MS).unwrap();
}

#[test]
fn sensor_value_sequences() {
    let Some(tree) = common::brick() else { return };
    let tree = Arc::new(tree);
    let us = tree.add_sensor("in2", SensorDriver::Ev3Ultrasonic).unwrap();
    let mut sim = Simulator::new(Arc::clone(&tree)).unwrap();
    sim.script_sequence(
        &us,
        0,
        vec![(Duration::ZERO, 2550), (300 * MS, 400), (600 * MS, 120)],
    );
    let sensor = ev3sysfs::sensor::UltrasonicSensor::find(tree.root(), "in2").unwrap();
    let mut seen = Vec::new();
    for _ in 0..8 {
        sim.step(100 * MS).unwrap();
        seen.push(sensor.distance_mm().unwrap());
    }
    assert_eq!(seen, [2550, 2550, 400, 400, 400, 120, 120, 120]);
}

#[test]
fn robot_drives_until_the_touch_sensor_is_pressed() {
    let Some(tree) = common::ev3_brick() else {
        return;
    };
    let tree = Arc::new(tree);
    let left = tree.add_tacho_motor("outB", TachoDriver::Ev3Large).unwrap();
    tree.add_tacho_motor("outC", TachoDriver::Ev3Large).unwrap();
    let bumper = tree.add_sensor("in1", SensorDriver::Ev3Touch).unwrap();
    let mut sim = Simulator::new(Arc::clone(&tree)).unwrap();
    // The wall is 2 wheel turns away.
    let wheel = left.clone();
    sim.script_sensor(&bumper, 0, move |world| {
        i64::from(world.position(&wheel) >= 720)
    });

    // Robot code, as it would run on the brick.
    let root = tree.root();
    let tank = Tank::new(
        TachoMotor::find(root, "outB").unwrap(),
        TachoMotor::find(root, "outC").unwrap(),
    );
    let touch = TouchSensor::find(root, "in1").unwrap();
    tank.left.set_stop_action(StopAction::Brake).unwrap();
    tank.right.set_stop_action(StopAction::Brake).unwrap();
    tank.drive(600, 600).unwrap();
    let mut steps = 0;
    while !touch.pressed().unwrap() {
        sim.step(10 * MS).unwrap(); // the control loop's period
        steps += 1;
        assert!(steps < 500, "never reached the wall");
    }
    tank.stop().unwrap();
    sim.step(500 * MS).unwrap();

    // About 1.2 s at 600 counts/s, stopped within a control period or so.
    assert!((115..=130).contains(&steps), "{steps} steps");
    let position = tank.left.position().unwrap();
    assert!((720..=740).contains(&position), "{position}");
    assert_eq!(
        tank.left.position().unwrap(),
        tank.right.position().unwrap()
    );
    assert!(!tank.left.state().unwrap().running());
}

/// A medium motor (stop action `hold`) on a simulated brick running in
/// real time.
fn realtime_medium_motor() -> Option<(Arc<MockTree>, RealtimeSim, TachoMotor)> {
    let tree = Arc::new(common::brick()?);
    tree.add_tacho_motor("outA", TachoDriver::Ev3Medium)
        .unwrap();
    let sim = Simulator::new(Arc::clone(&tree)).unwrap().run_realtime();
    let m = TachoMotor::find(tree.root(), "outA").unwrap();
    m.set_stop_action(StopAction::Hold).unwrap();
    Some((tree, sim, m))
}

#[test]
fn realtime_mode_runs_examples_on_the_host() {
    let Some((_tree, sim, m)) = realtime_medium_motor() else {
        return;
    };
    let start = std::time::Instant::now();
    m.run_to_rel_pos(360, 1200).unwrap();
    // The wait polls: the simulator moves in the background.
    m.wait_until(|s| s.running(), Duration::from_secs(2))
        .unwrap();
    let state = m.wait_while_running(Duration::from_secs(5)).unwrap();
    assert!(state.holding());
    assert_eq!(m.position().unwrap(), 360);
    // 360 counts at 1200 counts/s plus speeding up and slowing down: 0.33 s
    // of simulated motion, kept to the wall clock.
    let took = start.elapsed();
    assert!(
        took >= Duration::from_millis(250) && took < Duration::from_secs(3),
        "{took:?}"
    );
    sim.with(|s| assert!(s.time() >= Duration::from_millis(250)));
}

#[test]
fn a_command_written_while_the_simulation_thread_waited_moves_no_sooner() {
    let Some((_tree, sim, m)) = realtime_medium_motor() else {
        return;
    };
    // The simulation thread waits 200 ms for the simulator (as it would
    // for a CPU on a busy machine); the command comes at the end of it.
    let start = sim.with(|_| {
        std::thread::sleep(200 * MS);
        let start = std::time::Instant::now();
        m.run_to_rel_pos(360, 1200).unwrap();
        start
    });
    let state = m.wait_while_running(Duration::from_secs(5)).unwrap();
    let took = start.elapsed();
    assert!(state.holding());
    // The move takes 330 ms of simulated time (165 ticks when stepped); at
    // most the 10 ms leeway and a tick of it ran before the write. Without
    // the drop, the 200 ms of ticks caught up ran with the command applied
    // (the move was done 130 ms after its command).
    assert!(took >= Duration::from_millis(300), "{took:?}");
    // The ticks due before the write (less the leeway) were dropped, not run.
    let dropped = sim.timing().dropped;
    assert!(dropped >= 90, "{dropped} ticks dropped");
}

#[test]
fn unplugging_one_motor_leaves_the_others_flags_alone() {
    let Some(tree) = common::brick() else { return };
    let tree = Arc::new(tree);
    let a = tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    tree.add_tacho_motor("outB", TachoDriver::Ev3Large).unwrap();
    let mut sim = Simulator::new(Arc::clone(&tree)).unwrap();
    let ma = TachoMotor::find(tree.root(), "outA").unwrap();
    let mb = TachoMotor::find(tree.root(), "outB").unwrap();
    ma.set_ramp_up_sp(10_000).unwrap();
    ma.run_forever(1000).unwrap(); // ramps for seconds
    mb.run_forever(500).unwrap(); // no ramp
    sim.step(100 * MS).unwrap();
    assert!(ma.state().unwrap().ramping());
    assert!(!mb.state().unwrap().ramping());
    tree.unplug(&a).unwrap();
    sim.step(100 * MS).unwrap();
    let state = mb.state().unwrap();
    assert!(state.running() && !state.ramping(), "{state}");
}
