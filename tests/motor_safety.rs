//! Motors never move wrongly: every value checked before the first write,
//! remembered state invalidated by every stop path and consistent across
//! threads, groups protected by a guard, re-protection after a reconnect,
//! `set_device` checked. In-process, against a mock tree.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::{Arc, Barrier};
use std::time::Duration;

use ev3sysfs::motor::{StopAction, TachoGroup, TachoMotor, Tank};
use ev3sysfs::port::LegoPort;
use ev3sysfs::{Error, StopGuard};
use ev3sysfs_sim::TachoDriver;

#[test]
fn group_run_to_rel_pos_needs_one_target_per_motor() {
    let Some(tree) = common::brick() else {
        return;
    };
    let (ma, mb) = (
        tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap(),
        tree.add_tacho_motor("outB", TachoDriver::Ev3Large).unwrap(),
    );
    let a = TachoMotor::find(tree.root(), "outA").unwrap();
    let b = TachoMotor::find(tree.root(), "outB").unwrap();
    let motors = [&a, &b];
    let group = TachoGroup::new(&motors);
    let err = group.run_to_rel_pos(&[3600], &[200, 200]).unwrap_err();
    assert!(matches!(err, Error::OutOfRange { value: 1, .. }), "{err}");
    for m in [&ma, &mb] {
        assert_eq!(m.read("position_sp").unwrap(), "0");
        assert_eq!(m.read("speed_sp").unwrap(), "0");
        assert_ne!(m.last_written("command").unwrap(), "run-to-rel-pos");
    }
    // A speed out of range on the second motor: nothing written to the first.
    assert!(group.run_forever(&[100, 5000]).is_err());
    assert_eq!(ma.read("speed_sp").unwrap(), "0");
    assert!(group.run_timed(&[100, 100], -1).is_err());
    assert_eq!(ma.read("speed_sp").unwrap(), "0");
}

#[test]
fn rejected_run_commands_write_nothing() {
    let Some(tree) = common::brick() else {
        return;
    };
    let mock = tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    let motor = TachoMotor::find(tree.root(), "outA").unwrap();
    assert!(motor.run_timed(5000, 1000).is_err());
    assert_eq!(mock.read("time_sp").unwrap(), "0", "time_sp written");
    assert!(motor.run_timed(100, -1).is_err());
    assert_eq!(mock.read("speed_sp").unwrap(), "0", "speed_sp written");
    assert!(motor.run_to_abs_pos(900, 5000).is_err());
    assert_eq!(
        mock.read("position_sp").unwrap(),
        "0",
        "position_sp written"
    );
    assert!(motor.run_to_rel_pos(900, -5000).is_err());
    assert_eq!(mock.read("position_sp").unwrap(), "0");
    assert!(motor.run_direct(101).is_err());
    assert_eq!(mock.read("duty_cycle_sp").unwrap(), "0");
}

#[test]
fn set_stop_action_after_a_guard_stop_is_written() {
    let Some(tree) = common::brick() else {
        return;
    };
    let mock = tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    let motor = TachoMotor::find(tree.root(), "outA").unwrap();
    let guard = StopGuard::install_without_signals(Some(StopAction::Brake)).unwrap();
    guard.protect(&motor).unwrap();
    motor.set_stop_action(StopAction::Hold).unwrap();
    motor.run_forever(100).unwrap();
    guard.stop_now();
    assert_eq!(mock.read("stop_action").unwrap(), "brake");
    motor.set_stop_action(StopAction::Hold).unwrap();
    assert_eq!(mock.read("stop_action").unwrap(), "hold", "skipped");
    guard.disarm();
}

#[test]
fn a_guard_without_a_forced_action_keeps_the_motors_own() {
    let Some(tree) = common::brick() else {
        return;
    };
    let mock = tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    let motor = TachoMotor::find(tree.root(), "outA").unwrap();
    let guard = StopGuard::install_without_signals(None).unwrap();
    guard.protect(&motor).unwrap();
    motor.set_stop_action(StopAction::Hold).unwrap();
    motor.run_to_abs_pos(90, 200).unwrap();
    drop(guard);
    assert_eq!(mock.last_written("command").unwrap(), "stop");
    assert_eq!(mock.read("stop_action").unwrap(), "hold", "the arm let go");
    // The dropped guard fenced the motor: no thread restarts it.
    assert!(matches!(
        motor.run_forever(100),
        Err(Error::GuardStopped { .. })
    ));
    assert_eq!(mock.last_written("command").unwrap(), "stop");
}

#[test]
fn a_guard_protects_groups_and_tanks_once_per_motor() {
    let Some(tree) = common::brick() else {
        return;
    };
    let (ma, mb) = (
        tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap(),
        tree.add_tacho_motor("outB", TachoDriver::Ev3Large).unwrap(),
    );
    let tank = Tank::new(
        TachoMotor::find(tree.root(), "outA").unwrap(),
        TachoMotor::find(tree.root(), "outB").unwrap(),
    );
    let guard = StopGuard::install_without_signals(None).unwrap();
    // Far more than the capacity: the same motors use no further slot.
    for _ in 0..2 * ev3sysfs::guard::CAPACITY {
        guard.protect(&tank).unwrap();
        let motors = [&tank.left, &tank.right];
        guard.protect(&TachoGroup::new(&motors)).unwrap();
        // Another handle of the same motor, too.
        guard
            .protect(&TachoMotor::find(tree.root(), "outA").unwrap())
            .unwrap();
    }
    tank.drive(100, 100).unwrap();
    guard.stop_now();
    assert_eq!(ma.last_written("command").unwrap(), "stop");
    assert_eq!(mb.last_written("command").unwrap(), "stop");
    assert_eq!(
        format!("{guard:?}").matches("tacho-motor/").count(),
        2,
        "{guard:?}"
    );
    guard.disarm();
}

#[test]
fn reconnect_is_protected_by_the_same_guard() {
    let Some(tree) = common::brick() else {
        return;
    };
    let mock = tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    let motor = TachoMotor::find(tree.root(), "outA").unwrap();
    let guard = StopGuard::install_without_signals(Some(StopAction::Brake)).unwrap();
    guard.protect(&motor).unwrap();
    tree.unplug(&mock).unwrap();
    let new_mock = tree.replug(&mock).unwrap();
    let motor = motor
        .reconnect(tree.root(), Duration::from_secs(2))
        .unwrap();
    motor.run_forever(200).unwrap();
    guard.stop_now();
    assert_eq!(
        new_mock.last_written("command").unwrap(),
        "stop",
        "not re-protected"
    );
    assert_eq!(new_mock.read("stop_action").unwrap(), "brake");
    let text = format!("{guard:?}");
    assert!(
        text.contains(&*motor.device().dir().to_string_lossy()),
        "{text}"
    );
    assert_eq!(text.matches("tacho-motor/").count(), 1, "{text}");
    guard.disarm();
}

/// Four threads send run-direct and stop through one handle at once; then
/// run_direct must reach the motor whatever the interleaving was.
#[test]
fn a_shared_handle_never_desyncs_its_memory() {
    let Some(tree) = common::brick() else {
        return;
    };
    let mock = tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    let motor = Arc::new(TachoMotor::find(tree.root(), "outA").unwrap());
    let rounds = common::repetitions("EV3SYSFS_STRESS_ROUNDS", 10_000);
    let threads = 4;
    let start = Arc::new(Barrier::new(threads + 1));
    let done = Arc::new(Barrier::new(threads + 1));
    let workers: Vec<_> = (0..threads)
        .map(|i| {
            let (motor, start, done) = (Arc::clone(&motor), Arc::clone(&start), Arc::clone(&done));
            std::thread::spawn(move || {
                for _ in 0..rounds {
                    start.wait();
                    if i % 2 == 0 {
                        motor.run_direct(40).unwrap();
                        motor.set_stop_action(StopAction::Hold).unwrap();
                    } else {
                        motor.stop().unwrap();
                        motor.set_stop_action(StopAction::Brake).unwrap();
                    }
                    done.wait();
                }
            })
        })
        .collect();
    let mut desynced = 0;
    for _ in 0..rounds {
        start.wait();
        done.wait();
        motor.run_direct(30).unwrap();
        motor.set_stop_action(StopAction::Coast).unwrap();
        if mock.last_written("command").unwrap() != "run-direct"
            || mock.read("stop_action").unwrap() != "coast"
        {
            desynced += 1;
            // Bring the mock back in line for the next round.
            motor.stop().unwrap();
        }
    }
    workers.into_iter().for_each(|w| w.join().unwrap());
    assert_eq!(desynced, 0, "desynced {desynced}/{rounds} rounds");
}

#[test]
fn set_device_checks_the_driver_name_before_writing() {
    let Some(tree) = common::brick() else {
        return;
    };
    let mock = tree.add_port("outA").unwrap();
    let port = LegoPort::find(tree.root(), "outA").unwrap();
    // set_device is offered in tacho-motor mode (the kernel says EOPNOTSUPP
    // elsewhere).
    port.set_mode("tacho-motor").unwrap();
    let before = mock.last_written("set_device").unwrap_or_default();
    for bad in [
        "",
        "lego nxt motor",
        "lego-nxt-motor\n",
        "../x",
        "a\0b",
        "motör",
        &"x".repeat(64),
    ] {
        let err = port.set_device(bad).unwrap_err();
        assert!(matches!(err, Error::NotOffered { .. }), "{bad:?}: {err}");
        assert_eq!(
            mock.last_written("set_device").unwrap_or_default(),
            before,
            "{bad:?}"
        );
    }
    port.set_device("lego-nxt-motor").unwrap();
    assert_eq!(mock.last_written("set_device").unwrap(), "lego-nxt-motor");
}
