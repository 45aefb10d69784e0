use std::time::Duration;

use super::*;
use crate::kobject::{KResult, Mode, Model};

fn motor() -> TachoMotor {
    TachoMotor::new(TachoDriver::Ev3Large, "ev3-ports:outA")
}

fn show(m: &TachoMotor, attr: &str) -> String {
    let mut out = Vec::new();
    m.show(attr, &mut out).expect(attr);
    String::from_utf8(out).expect("utf-8")
}

fn store(m: &mut TachoMotor, attr: &str, value: &str) -> KResult<usize> {
    m.store(attr, value.as_bytes(), &mut Effects::default())
}

fn set(m: &mut TachoMotor, attr: &str, value: &str) {
    assert_eq!(store(m, attr, value), Ok(value.len()), "{attr}={value}");
}

fn run(m: &mut TachoMotor, ms: u64) -> Effects {
    let mut fx = Effects::default();
    m.tick(Duration::from_millis(ms), &mut fx);
    fx
}

#[test]
fn shows_the_registered_defaults() {
    let m = motor();
    for (attr, value) in [
        ("address", "ev3-ports:outA\n"),
        ("driver_name", "lego-ev3-l-motor\n"),
        (
            "commands",
            "run-forever run-to-abs-pos run-to-rel-pos run-timed run-direct stop reset\n",
        ),
        ("stop_actions", "coast brake hold\n"),
        ("count_per_rot", "360\n"),
        ("max_speed", "1050\n"),
        ("state", "\n"),
        ("polarity", "normal\n"),
        ("stop_action", "coast\n"),
        ("speed_pid/Kp", "1000\n"),
        ("speed_pid/Ki", "60\n"),
        ("hold_pid/Kp", "80000\n"),
        ("power/control", "auto\n"),
        (
            "uevent",
            "LEGO_DRIVER_NAME=lego-ev3-l-motor\nLEGO_ADDRESS=ev3-ports:outA\n",
        ),
    ] {
        assert_eq!(show(&m, attr), value, "{attr}");
    }
    let medium = TachoMotor::new(TachoDriver::Ev3Medium, "ev3-ports:outB");
    assert_eq!(show(&medium, "max_speed"), "1560\n");
    assert_eq!(show(&medium, "hold_pid/Kp"), "160000\n");
    let attrs = m.attributes();
    let command = attrs.iter().find(|a| a.name == "command").expect("command");
    assert_eq!(command.mode, Mode::WriteOnly);
    assert!(attrs.iter().all(|a| a.size == 4096 && !a.positional));
    assert_eq!(attrs.len(), 31);
}

#[test]
fn bad_values_are_einval_and_leave_the_value() {
    let mut m = motor();
    set(&mut m, "speed_sp", "500\n");
    for (attr, bad) in [
        ("speed_sp", "1051"),
        ("speed_sp", "-1051"),
        ("speed_sp", "5000\n"),
        ("speed_sp", "abc"),
        ("speed_sp", "1.5"),
        ("speed_sp", " 5"),
        ("duty_cycle_sp", "101"),
        ("duty_cycle_sp", "-101"),
        ("time_sp", "-1"),
        ("ramp_up_sp", "60001"),
        ("ramp_down_sp", "-1"),
        ("command", "run"),
        ("command", "run-forever\n\n"),
        ("command", "Stop"),
        ("stop_action", "float"),
        ("polarity", "reversed"),
        ("speed_pid/Kp", "-1"),
        ("position", "x"),
    ] {
        assert_eq!(store(&mut m, attr, bad), Err(libc::EINVAL), "{attr}={bad}");
    }
    assert_eq!(
        store(&mut m, "position_sp", "99999999999"),
        Err(libc::ERANGE)
    );
    assert_eq!(show(&m, "speed_sp"), "500\n");
    set(&mut m, "speed_sp", "1050");
    set(&mut m, "speed_sp", "-1050");
    set(&mut m, "speed_sp", "+20\n");
    // A shorter value replaces the whole value: no stale tail.
    assert_eq!(show(&m, "speed_sp"), "20\n");
    set(&mut m, "stop_action", "hold\n");
    assert_eq!(show(&m, "stop_action"), "hold\n");
}

#[test]
fn a_command_shows_running_at_once_and_notifies_state() {
    let mut m = motor();
    set(&mut m, "speed_sp", "500");
    let mut fx = Effects::default();
    assert_eq!(m.store("command", b"run-forever\n", &mut fx), Ok(12));
    assert_eq!(show(&m, "state"), "running\n");
    assert_eq!(fx.notify, vec!["state".to_owned()]);
    // Setpoints only count at the next command.
    run(&mut m, 200);
    assert_eq!(show(&m, "speed"), "500\n");
    assert_eq!(show(&m, "duty_cycle"), "48\n");
    set(&mut m, "speed_sp", "1000");
    run(&mut m, 100);
    assert_eq!(show(&m, "speed"), "500\n");
    let before = m.position();
    run(&mut m, 1000);
    assert_eq!(m.position() - before, 500);
    // A tick with no change notifies nothing.
    assert!(run(&mut m, 10).notify.is_empty());
    let mut fx = Effects::default();
    m.store("command", b"stop", &mut fx).expect("stop");
    assert_eq!(show(&m, "state"), "\n");
    assert_eq!(fx.notify, vec!["state".to_owned()]);
    // Coasting on after the stop, then at rest.
    run(&mut m, 1000);
    assert_eq!(show(&m, "speed"), "0\n");
    assert_eq!(show(&m, "duty_cycle"), "0\n");
}

#[test]
fn run_to_rel_pos_twice_moves_twice_and_holds() {
    let mut m = motor();
    set(&mut m, "speed_sp", "900");
    set(&mut m, "position_sp", "360");
    set(&mut m, "stop_action", "hold");
    set(&mut m, "command", "run-to-rel-pos");
    assert_eq!(show(&m, "state"), "running\n");
    let fx = run(&mut m, 2000);
    assert_eq!(fx.notify, vec!["state".to_owned()]);
    assert_eq!(show(&m, "position"), "360\n");
    assert_eq!(show(&m, "state"), "holding\n");
    set(&mut m, "command", "run-to-rel-pos");
    run(&mut m, 2000);
    assert_eq!(show(&m, "position"), "720\n");
    assert_eq!(show(&m, "state"), "holding\n");
    // Interrupted and re-issued: the target follows the previous target.
    set(&mut m, "command", "run-to-rel-pos");
    run(&mut m, 100);
    set(&mut m, "command", "run-to-rel-pos");
    run(&mut m, 3000);
    assert_eq!(m.position(), 1440);
    set(&mut m, "command", "run-to-abs-pos");
    run(&mut m, 3000);
    assert_eq!(m.position(), 360);
    // position_sp 0: a stop.
    set(&mut m, "position_sp", "0");
    set(&mut m, "command", "run-to-rel-pos");
    assert_eq!(show(&m, "state"), "holding\n");
}

#[test]
fn reset_zeroes_position_and_setpoints() {
    let mut m = motor();
    set(&mut m, "speed_sp", "300");
    set(&mut m, "polarity", "inversed");
    set(&mut m, "speed_pid/Kp", "5");
    set(&mut m, "command", "run-forever");
    run(&mut m, 500);
    assert!(m.position() < 0);
    set(&mut m, "command", "reset");
    for (attr, value) in [
        ("position", "0\n"),
        ("speed_sp", "0\n"),
        ("polarity", "normal\n"),
        ("stop_action", "coast\n"),
        ("speed_pid/Kp", "1000\n"),
        ("state", "\n"),
    ] {
        assert_eq!(show(&m, attr), value, "{attr}");
    }
}

#[test]
fn polarity_flips_setpoints_and_readings() {
    let mut m = motor();
    set(&mut m, "speed_sp", "100");
    set(&mut m, "polarity", "inversed");
    assert_eq!(show(&m, "speed_sp"), "-100\n");
    set(&mut m, "speed_sp", "200");
    set(&mut m, "command", "run-forever");
    run(&mut m, 1100);
    assert_eq!(show(&m, "speed"), "200\n");
    assert!(m.speed() > 0 && m.position() > 150);
    assert_eq!(m.speed.signum(), -1.0);
    set(&mut m, "position", "1000");
    assert_eq!(show(&m, "position"), "1000\n");
}

#[test]
fn run_timed_stops_after_time_sp() {
    let mut m = motor();
    set(&mut m, "speed_sp", "500");
    set(&mut m, "time_sp", "1000");
    set(&mut m, "stop_action", "brake");
    set(&mut m, "command", "run-timed");
    run(&mut m, 900);
    assert_eq!(show(&m, "state"), "running\n");
    run(&mut m, 200);
    assert_eq!(show(&m, "state"), "\n");
    run(&mut m, 200);
    let p = m.position();
    assert!((480..=520).contains(&p), "{p}");
}

#[test]
fn ramps_step_every_100_ms_and_show_ramping() {
    let mut m = motor();
    set(&mut m, "speed_sp", "1050");
    set(&mut m, "ramp_up_sp", "1000");
    set(&mut m, "ramp_down_sp", "2000");
    set(&mut m, "command", "run-forever");
    assert_eq!(show(&m, "state"), "running ramping\n");
    run(&mut m, 106);
    // Half a period in at the start: 50 ms, then one step at 100 ms: 150 ms
    // (the motor follows within 3 samples).
    assert_eq!(show(&m, "speed"), "158\n");
    run(&mut m, 400);
    assert_eq!(show(&m, "speed"), "577\n");
    run(&mut m, 600);
    assert_eq!(show(&m, "state"), "running\n");
    assert_eq!(show(&m, "speed"), "1050\n");
    // A ramped stop: still running while ramping down, then stopped.
    set(&mut m, "command", "stop");
    assert_eq!(show(&m, "state"), "running ramping\n");
    run(&mut m, 1000);
    assert_eq!(show(&m, "state"), "running ramping\n");
    run(&mut m, 1200);
    assert_eq!(show(&m, "state"), "\n");
    // Crossing zero: down to 0 first, then up.
    set(&mut m, "speed_sp", "500");
    set(&mut m, "command", "run-forever");
    run(&mut m, 1000);
    set(&mut m, "speed_sp", "-500");
    set(&mut m, "command", "run-forever");
    run(&mut m, 700);
    assert!(m.speed() >= 0, "{}", m.speed());
    run(&mut m, 1000);
    assert_eq!(m.speed(), -500);
}

#[test]
fn run_to_pos_with_ramp_down_shows_ramping_while_decelerating() {
    let mut m = motor();
    set(&mut m, "speed_sp", "1000");
    set(&mut m, "ramp_down_sp", "1000");
    set(&mut m, "position_sp", "2000");
    set(&mut m, "command", "run-to-abs-pos");
    run(&mut m, 1000);
    assert_eq!(show(&m, "state"), "running\n");
    let mut seen_ramping = false;
    for _ in 0..200 {
        run(&mut m, 20);
        seen_ramping |= show(&m, "state") == "running ramping\n";
    }
    assert!(seen_ramping);
    assert_eq!(m.position(), 2000);
    assert_eq!(show(&m, "state"), "\n");
}

#[test]
fn a_blocked_motor_stalls() {
    let mut m = motor();
    m.set_blocked(true);
    set(&mut m, "speed_sp", "500");
    set(&mut m, "command", "run-forever");
    run(&mut m, 50);
    assert_eq!(show(&m, "state"), "running\n");
    let fx = run(&mut m, 100);
    assert_eq!(show(&m, "state"), "running overloaded stalled\n");
    assert_eq!(fx.notify, vec!["state".to_owned()]);
    set(&mut m, "command", "run-direct");
    run(&mut m, 200);
    // Duty 0, speed 0 for more than 100 ms: stalled, as the kernel says.
    assert_eq!(show(&m, "state"), "running stalled\n");
    set(&mut m, "duty_cycle_sp", "30");
    assert_eq!(show(&m, "duty_cycle"), "30\n");
    run(&mut m, 200);
    assert_eq!(show(&m, "state"), "running stalled\n");
    m.set_blocked(false);
    run(&mut m, 200);
    assert_eq!(show(&m, "state"), "running\n");
    assert_eq!(show(&m, "speed"), "315\n");
}

#[test]
fn run_forever_at_speed_0_stalls_after_100_ms_as_the_kernel_says() {
    let mut m = motor();
    set(&mut m, "command", "run-forever");
    run(&mut m, 90);
    assert_eq!(show(&m, "state"), "running\n");
    run(&mut m, 200);
    // Speed 0 for more than 100 ms: stalled; the PID gives duty 0 at
    // setpoint 0, so not overloaded.
    assert_eq!(show(&m, "state"), "running stalled\n");
}

#[test]
fn inject_and_unknown_attributes() {
    let mut m = motor();
    let mut fx = Effects::default();
    assert_eq!(m.inject("position", "-42", &mut fx), Ok(()));
    assert_eq!(show(&m, "position"), "-42\n");
    assert_eq!(m.inject("nonsense", "1", &mut fx), Err(libc::ENOENT));
    assert_eq!(store(&mut m, "state", "running"), Err(libc::EACCES));
    assert_eq!(store(&mut m, "power/control", "on"), Ok(2));
}

#[test]
fn a_dragged_motor_keeps_its_regulated_speed_up_to_its_limit_but_not_its_duty() {
    let mut m = motor();
    m.set_drag(0.3);
    set(&mut m, "speed_sp", "420");
    set(&mut m, "command", "run-forever");
    run(&mut m, 20);
    // The speed PID has not learnt the load yet: behind.
    let early: i64 = show(&m, "speed").trim().parse().expect("speed");
    assert!(early < 200, "{early}");
    run(&mut m, 1000);
    assert_eq!(show(&m, "speed"), "420\n");
    // Beyond (1 - 0.3) x 1050 = 735 it cannot.
    set(&mut m, "speed_sp", "1000");
    set(&mut m, "command", "run-forever");
    run(&mut m, 1000);
    assert_eq!(show(&m, "speed"), "735\n");
    // A duty cycle is never made up for: (0.6 - 0.3) x 1050.
    set(&mut m, "duty_cycle_sp", "60");
    set(&mut m, "command", "run-direct");
    run(&mut m, 1000);
    assert_eq!(show(&m, "speed"), "315\n");
    // Coasting from there stops sooner than a free motor does (0.3 s at
    // full speed): 315 / (3500 + 6300) counts/s² is about 32 ms.
    set(&mut m, "command", "stop");
    run(&mut m, 40);
    assert_eq!(show(&m, "speed"), "0\n");
}
