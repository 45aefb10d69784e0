//! Typed devices against mock trees (and the captured brick files):
//! discovery, invariants, validation, remembered state, waits, unplug and
//! re-plug, sensors, LEDs, battery, ports.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{install_fixture, TempDir};
use ev3sysfs::led::{BrickLeds, Led, LedColor, Side};
use ev3sysfs::motor::{
    Command, DcCommand, DcMotor, Pid, Polarity, ServoMotor, StopAction, TachoGroup, TachoMotor,
    Tank,
};
use ev3sysfs::port::LegoPort;
use ev3sysfs::power::PowerSupply;
use ev3sysfs::sensor::{
    BinFormat, Color, ColorSensor, GyroSensor, InfraredSensor, NxtLightSensor, Sensor, TouchSensor,
    UltrasonicSensor,
};
use ev3sysfs::Error;
use ev3sysfs_sim::{SensorDriver, TachoDriver};

#[test]
fn tacho_motor_found_by_port_with_invariants() {
    let Some(tree) = common::ev3_brick() else {
        return;
    };
    tree.add_tacho_motor("outB", TachoDriver::Ev3Medium)
        .unwrap();
    tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    let root = tree.root();
    for port in ["outA", "ev3-ports:outA"] {
        let m = TachoMotor::find(root, port).unwrap();
        assert_eq!(m.driver_name(), "lego-ev3-l-motor");
        assert_eq!(m.address(), "ev3-ports:outA");
        assert_eq!((m.max_speed(), m.count_per_rot()), (1050, Some(360)));
        assert_eq!(m.count_per_m(), None);
        assert!(m.offers(Command::RunDirect) && m.offers_stop_action(StopAction::Hold));
        assert!(!m.is_sysfs());
    }
    assert_eq!(TachoMotor::medium(root, "outB").unwrap().max_speed(), 1560);
    // The wrong driver: the error says what is there.
    let err = TachoMotor::large(root, "outB").unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }));
    let text = err.to_string();
    assert!(
        text.contains("lego-ev3-m-motor") && text.contains("outB"),
        "{text}"
    );
    // Nothing on the port: the error lists what the class has.
    let text = TachoMotor::find(root, "outD").unwrap_err().to_string();
    assert!(
        text.contains("outD") && text.contains("motor0") && text.contains("motor1"),
        "{text}"
    );
    let all = ev3sysfs::list(root, "tacho-motor").unwrap();
    assert_eq!(all.len(), 2);
}

#[test]
fn captured_brick_motor_with_old_style_address() {
    let tmp = TempDir::new("devices");
    install_fixture("large_motor", tmp.path(), "tacho-motor", "motor7");
    let m = TachoMotor::find(tmp.path(), "outA").unwrap();
    assert_eq!(m.address(), "outA");
    let m = TachoMotor::find(tmp.path(), "ev3-ports:outA").unwrap();
    assert_eq!(m.driver_name(), "lego-ev3-l-motor");
    m.run_forever(-200).unwrap();
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("tacho-motor/motor7/command")).unwrap(),
        "run-forever"
    );
    install_fixture("touch_sensor", tmp.path(), "lego-sensor", "sensor3");
    let touch = TouchSensor::find(tmp.path(), "in4").unwrap();
    assert!(!touch.pressed().unwrap());
    assert_eq!(touch.sensor().bin_format(), Some(BinFormat::U8));
}

#[test]
fn setters_validate_before_writing() {
    let Some(tree) = common::brick() else { return };
    let mock = tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    let m = TachoMotor::find(tree.root(), "outA").unwrap();
    m.set_speed_sp(1050).unwrap();
    m.set_speed_sp(-1050).unwrap();
    let err = m.set_speed_sp(1051).unwrap_err();
    assert!(matches!(
        err,
        Error::OutOfRange {
            attribute: "speed_sp",
            value: 1051,
            min: -1050,
            max: 1050
        }
    ));
    assert!(err.to_string().contains("nothing was written"));
    assert_eq!(
        mock.read_int("speed_sp").unwrap(),
        -1050,
        "rejected value not written"
    );
    assert!(m.set_duty_cycle_sp(101).is_err() && m.set_duty_cycle_sp(-101).is_err());
    m.set_duty_cycle_sp(-100).unwrap();
    assert!(m.set_time_sp(-1).is_err());
    assert!(m.set_ramp_up_sp(60_001).is_err() && m.set_ramp_down_sp(-1).is_err());
    m.set_ramp_up_sp(60_000).unwrap();
    assert!(m.run_forever(2000).is_err());
    assert_eq!(
        mock.last_written("command").unwrap(),
        "",
        "no command after a rejected setpoint"
    );
    let err = m
        .set_speed_pid(Pid {
            kp: 1,
            ki: -1,
            kd: 0,
        })
        .unwrap_err();
    assert!(matches!(
        err,
        Error::OutOfRange {
            attribute: "Ki",
            ..
        }
    ));
    assert_eq!(
        mock.read_int("speed_pid/Kp").unwrap(),
        1000,
        "nothing of the PID written"
    );
    m.set_hold_pid(Pid {
        kp: 90_000,
        ki: 1,
        kd: 2,
    })
    .unwrap();
    assert_eq!(
        m.hold_pid().unwrap(),
        Pid {
            kp: 90_000,
            ki: 1,
            kd: 2
        }
    );
    assert_eq!(
        m.speed_pid().unwrap(),
        Pid {
            kp: 1000,
            ki: 60,
            kd: 0
        }
    );
}

#[test]
fn commands_all_written_in_order() {
    let Some(tree) = common::brick() else { return };
    let mock = tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    let m = TachoMotor::find(tree.root(), "outA").unwrap();
    m.run_to_rel_pos(360, 500).unwrap();
    m.run_to_rel_pos(360, 500).unwrap();
    m.run_timed(300, 1500).unwrap();
    m.run_to_abs_pos(-90, -400).unwrap();
    assert_eq!(mock.read_int("position_sp").unwrap(), -90);
    assert_eq!(mock.read_int("speed_sp").unwrap(), -400);
    assert_eq!(mock.read_int("time_sp").unwrap(), 1500);
    // Every stop action and command is written, even when it repeats what
    // this handle wrote last: other programs write the same files.
    m.set_stop_action(StopAction::Coast).unwrap();
    m.stop_with(StopAction::Hold).unwrap();
    m.stop_with(StopAction::Hold).unwrap();
    // run-direct twice: both write the duty cycle and the command.
    m.run_direct(30).unwrap();
    m.run_direct(-40).unwrap();
    m.reset().unwrap();
    // After reset the stop action is written again.
    m.set_stop_action(StopAction::Hold).unwrap();
    m.set_polarity(Polarity::Inversed).unwrap();
    assert_eq!(m.polarity().unwrap(), Polarity::Inversed);
    let writes: Vec<String> = tree
        .take_stores()
        .into_iter()
        .map(|(k, v)| {
            format!(
                "{}={}",
                k.rsplit('/').next().unwrap(),
                String::from_utf8_lossy(&v)
            )
        })
        .collect();
    assert_eq!(
        writes,
        [
            "position_sp=360",
            "speed_sp=500",
            "command=run-to-rel-pos",
            "position_sp=360",
            "speed_sp=500",
            "command=run-to-rel-pos",
            "time_sp=1500",
            "speed_sp=300",
            "command=run-timed",
            "position_sp=-90",
            "speed_sp=-400",
            "command=run-to-abs-pos",
            "stop_action=coast",
            "stop_action=hold",
            "command=stop",
            "stop_action=hold",
            "command=stop",
            "duty_cycle_sp=30",
            "command=run-direct",
            "duty_cycle_sp=-40",
            "command=run-direct",
            "command=reset",
            "stop_action=hold",
            "polarity=inversed",
        ]
    );
    assert_eq!(m.stop_action().unwrap(), StopAction::Hold);
}

#[test]
fn group_and_tank_write_setpoints_first_then_commands() {
    let Some(tree) = common::brick() else { return };
    tree.add_tacho_motor("outB", TachoDriver::Ev3Large).unwrap();
    tree.add_tacho_motor("outC", TachoDriver::Ev3Large).unwrap();
    let tank = Tank::new(
        TachoMotor::find(tree.root(), "outB").unwrap(),
        TachoMotor::find(tree.root(), "outC").unwrap(),
    );
    tank.drive(400, -400).unwrap();
    let journal = tree.take_stores();
    let names: Vec<&str> = journal
        .iter()
        .map(|(k, _)| k.rsplit('/').next().unwrap())
        .collect();
    assert_eq!(names, ["speed_sp", "speed_sp", "command", "command"]);
    // A bad speed for the second motor: nothing at all is written.
    assert!(tank.drive(400, 5000).is_err());
    assert!(tree.take_stores().is_empty());
    let motors = [&tank.left, &tank.right];
    let group = TachoGroup::new(&motors);
    assert!(
        group.run_forever(&[1, 2, 3]).is_err(),
        "one speed per motor"
    );
    group.run_timed(&[100, 200], 700).unwrap();
    group.stop().unwrap();
    tank.drive_counts(360, 180, 300).unwrap();
    tank.stop().unwrap();
    let tail: Vec<String> = tree
        .take_stores()
        .into_iter()
        .map(|(_, v)| String::from_utf8(v).unwrap())
        .collect();
    assert_eq!(tail.iter().filter(|v| *v == "stop").count(), 4);
}

#[test]
fn units_are_integer() {
    let Some(tree) = common::brick() else { return };
    tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    let m = TachoMotor::find(tree.root(), "outA").unwrap();
    assert_eq!(m.degrees_to_counts(90), 90);
    assert_eq!(m.counts_to_degrees(-720), -720);
    assert_eq!(m.rotations_to_counts(2500), 900);
    assert_eq!(m.rpm_to_speed(60), 360);
    assert_eq!(m.speed_to_rpm(1050), 175);
}

#[test]
fn waits_use_timeouts_and_see_changes() {
    let Some(tree) = common::brick() else { return };
    tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    let m = TachoMotor::find(tree.root(), "outA").unwrap();
    // The command takes effect in the store: running at once.
    m.run_forever(100).unwrap();
    let start = Instant::now();
    let err = m
        .wait_while_running(Duration::from_millis(120))
        .unwrap_err();
    assert!(matches!(err, Error::Timeout { .. }), "{err:?}");
    assert!(start.elapsed() >= Duration::from_millis(120));
    assert!(err.to_string().contains("running"));
    let stopper = {
        let root = tree.root().to_path_buf();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(60));
            let m = TachoMotor::find(root, "outA").unwrap();
            m.stop_with(StopAction::Hold).unwrap();
        })
    };
    let state = m.wait_while_running(Duration::from_secs(5)).unwrap();
    assert!(!state.running());
    stopper.join().unwrap();
    let state = m.wait_until(|s| s.holding(), Duration::ZERO).unwrap();
    assert_eq!(state.to_string(), "holding");
}

#[test]
fn unplug_and_replug_on_the_same_port() {
    let Some(tree) = common::brick() else { return };
    let tree = Arc::new(tree);
    let mock = tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    let m = TachoMotor::find(tree.root(), "outA").unwrap();
    m.run_forever(100).unwrap();
    tree.unplug(&mock).unwrap();
    let err = m.position().unwrap_err();
    assert!(err.is_disconnected(), "{err:?}");
    assert!(m.stop().unwrap_err().is_disconnected());
    // Nothing comes back in time.
    let err = m
        .reconnect(tree.root(), Duration::from_millis(100))
        .unwrap_err();
    assert!(matches!(err, Error::Timeout { .. }), "{err:?}");
    let replugger = {
        let tree = Arc::clone(&tree);
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(80));
            tree.replug(&mock).unwrap()
        })
    };
    let again = m.reconnect(tree.root(), Duration::from_secs(5)).unwrap();
    let new_mock = replugger.join().unwrap();
    assert_eq!(new_mock.name(), "motor1");
    assert!(again.device().dir().ends_with("motor1"));
    again.run_forever(100).unwrap();
    assert_eq!(new_mock.last_written("command").unwrap(), "run-forever");
}

#[test]
fn dc_and_servo_motors() {
    let Some(tree) = common::brick() else { return };
    let dc_mock = tree.add_dc_motor("outC").unwrap();
    let dc = DcMotor::find(tree.root(), "outC").unwrap();
    dc.run_direct(-60).unwrap();
    assert_eq!(dc_mock.last_written("command").unwrap(), "run-direct");
    assert!(dc.set_duty_cycle_sp(120).is_err());
    assert!(dc.set_ramp_up_sp(10_001).is_err() && dc.set_time_sp(60_001).is_err());
    dc.set_ramp_down_sp(10_000).unwrap();
    dc.set_stop_action(StopAction::Brake).unwrap();
    assert!(matches!(
        dc.set_stop_action(StopAction::Hold),
        Err(Error::NotOffered { .. })
    ));
    assert!(matches!(dc.send(DcCommand::RunTimed), Ok(())));
    dc.stop().unwrap();
    // ramp_down_sp 10 s: still coming down, then stopped.
    assert!(dc.running().unwrap());
    tree.tick(Duration::from_secs(11));
    assert!(!dc.running().unwrap());
    assert_eq!(dc.duty_cycle_sp().unwrap(), -60);

    let servo_mock = tree.add_servo_motor("in1", 2).unwrap();
    let servo = ServoMotor::find(tree.root(), "in1").unwrap();
    servo.run_to(50).unwrap();
    assert_eq!(servo_mock.last_written("command").unwrap(), "run");
    assert_eq!(servo.position_sp().unwrap(), 50);
    assert!(servo.run_to(101).is_err());
    assert!(servo.set_pulses(500, 2500, 2500).is_err());
    servo.set_pulses(600, 1500, 2400).unwrap();
    servo.float().unwrap();
    assert_eq!(servo_mock.last_written("command").unwrap(), "float");
}

#[test]
fn generic_sensor_modes_values_and_bin_data() {
    let Some(tree) = common::brick() else { return };
    let mock = tree.add_sensor("in2", SensorDriver::Ev3Ultrasonic).unwrap();
    let s = Sensor::find(tree.root(), "in2", &[]).unwrap();
    assert_eq!(s.driver_name(), "lego-ev3-us");
    assert_eq!(s.mode(), "US-DIST-CM");
    assert_eq!(
        (s.num_values(), s.decimals(), s.units()),
        (1, 1, "cm".to_string())
    );
    mock.set_int("value0", 1234).unwrap();
    assert_eq!(s.scaled(0).unwrap().to_string(), "123.4");
    s.set_mode("US-DIST-CM").unwrap();
    assert!(tree.take_stores().is_empty(), "same mode: nothing written");
    assert!(matches!(
        s.set_mode("US-FLY"),
        Err(Error::NotOffered { .. })
    ));
    // The driver switches the files; the sensor re-reads what depends on it.
    s.set_mode("US-LISTEN").unwrap();
    assert_eq!(tree.take_stores().len(), 1);
    assert_eq!((s.decimals(), s.bin_format()), (0, Some(BinFormat::S8)));
    assert!(matches!(s.value(1), Err(Error::Unsupported { .. })));
    assert!(matches!(s.value(9), Err(Error::Unsupported { .. })));
    mock.set_int("value0", -2).unwrap(); // bin_data mirrors the values
    let mut out = [0i64; 4];
    assert_eq!(s.bin_values(&mut out).unwrap(), 1);
    assert_eq!(out[0], -2);
    assert!(matches!(s.poll_ms(), Err(Error::Unsupported { .. })));
    assert!(s.commands().unwrap().is_empty());
    assert!(matches!(s.send("RESET"), Err(Error::NotOffered { .. })));
    assert_eq!(s.fw_version().unwrap(), "");
}

#[test]
fn typed_sensors() {
    let Some(tree) = common::brick() else { return };
    let touch_mock = tree.add_sensor("in1", SensorDriver::Ev3Touch).unwrap();
    let color_mock = tree.add_sensor("in2", SensorDriver::Ev3Color).unwrap();
    let ir_mock = tree.add_sensor("in3", SensorDriver::Ev3Infrared).unwrap();
    let gyro_mock = tree.add_sensor("in4", SensorDriver::Ev3Gyro).unwrap();
    let root = tree.root();

    let touch = TouchSensor::find(root, "in1").unwrap();
    assert!(!touch.pressed().unwrap());
    touch_mock.set_int("value0", 1).unwrap();
    assert!(touch.pressed().unwrap());
    let presser = {
        let m = touch_mock.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            m.set_int("value0", 0).unwrap();
        })
    };
    touch.wait_for(false, Duration::from_secs(5)).unwrap();
    presser.join().unwrap();
    assert!(matches!(
        touch.wait_for(true, Duration::from_millis(30)),
        Err(Error::Timeout { .. })
    ));
    assert!(matches!(
        ColorSensor::find(root, "in1"),
        Err(Error::NotFound { .. })
    ));

    let color = ColorSensor::find(root, "in2").unwrap();
    color_mock.set_int("value0", 57).unwrap();
    assert_eq!(color.reflected().unwrap(), 57);
    // Each reading switches the mode (the store completes at once); then
    // the injected values show.
    color.color().unwrap();
    assert_eq!(color_mock.read("mode").unwrap(), "COL-COLOR");
    color_mock.set_int("value0", 5).unwrap();
    assert_eq!(color.color().unwrap(), Color::Red);
    assert_eq!(
        color.rgb_raw().unwrap(),
        (0, 0, 0),
        "works on the first call"
    );
    color_mock.set_int("value2", 900).unwrap();
    assert_eq!(color.rgb_raw().unwrap(), (0, 0, 900));

    let ir = InfraredSensor::find(root, "in3").unwrap();
    ir_mock.set_int("value0", 33).unwrap();
    assert_eq!(ir.proximity().unwrap(), 33);
    ir.seek(2).unwrap(); // switches to IR-SEEK
    ir_mock.set_int("value2", -12).unwrap();
    ir_mock.set_int("value3", 40).unwrap();
    ir_mock.set_int("value1", -128).unwrap();
    assert_eq!(ir.seek(2).unwrap(), Some((-12, 40)));
    assert_eq!(ir.seek(1).unwrap(), None);
    assert!(ir.seek(5).is_err());
    ir.remote(4).unwrap(); // switches to IR-REMOTE
    ir_mock.set_int("value3", 9).unwrap();
    assert!(ir.remote(4).unwrap().beacon);

    let gyro = GyroSensor::find(root, "in4").unwrap();
    gyro_mock.set_int("value0", -90).unwrap();
    assert_eq!(gyro.angle().unwrap(), -90);
    gyro.angle_and_rate().unwrap(); // switches to GYRO-G&A
    gyro_mock.set_int("value1", 12).unwrap();
    assert_eq!(gyro.angle_and_rate().unwrap().1, 12);
    gyro.reset_angle().unwrap();
    assert_eq!(gyro_mock.read("mode").unwrap(), "GYRO-ANG");

    let Some(nxt) = common::brick() else { return };
    let us_mock = nxt.add_sensor("in1", SensorDriver::NxtUltrasonic).unwrap();
    let light_mock = nxt.add_sensor("in2", SensorDriver::NxtLight).unwrap();
    nxt.add_sensor("in3", SensorDriver::NxtTouch).unwrap();
    let us = UltrasonicSensor::find(nxt.root(), "in1").unwrap();
    us_mock.set_int("value0", 25).unwrap();
    assert_eq!(us.distance_mm().unwrap(), 250, "NXT: whole cm");
    assert_eq!(us.sensor().poll_ms().unwrap(), 50);
    us.sensor().set_poll_ms(100).unwrap();
    light_mock.set_int("value0", 456).unwrap();
    let light = NxtLightSensor::find(nxt.root(), "in2").unwrap();
    assert_eq!(light.reflected().unwrap().to_string(), "45.6");
    assert!(!TouchSensor::find(nxt.root(), "in3")
        .unwrap()
        .pressed()
        .unwrap());
}

#[test]
fn leds_battery_and_ports() {
    let Some(tree) = common::ev3_brick() else {
        return;
    };
    let root = tree.root();
    let leds = BrickLeds::open(root).unwrap();
    leds.set_color(Side::Left, LedColor::AMBER).unwrap();
    leds.set_color(Side::Right, LedColor::ORANGE).unwrap();
    assert_eq!(leds.left_red.brightness().unwrap(), 255);
    assert_eq!(leds.right_green.brightness().unwrap(), 127);
    assert!(leds.left_green.set_brightness(256).is_err());
    assert!(leds.left_green.set_percent(101).is_err());
    leds.set_all(LedColor::OFF).unwrap();

    let led = Led::open(root, "led0:green:brick-status").unwrap();
    // Brightness 0 cleared the mmc0 trigger, as in the kernel.
    assert_eq!(led.trigger().unwrap(), "none");
    assert!(led.triggers().unwrap().iter().any(|t| t == "heartbeat"));
    assert!(matches!(
        led.set_trigger("disco"),
        Err(Error::NotOffered { .. })
    ));
    // The timer trigger creates delay_on/delay_off, as the kernel does.
    let dir = led.device().dir().to_path_buf();
    led.set_timer(100, 900).unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.join("delay_on")).unwrap(),
        "100\n"
    );
    assert_eq!(led.trigger().unwrap(), "timer");
    led.set_timer(200, 800).unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.join("delay_off")).unwrap(),
        "800\n"
    );

    let battery = PowerSupply::battery(root).unwrap();
    assert_eq!(battery.voltage_uv().unwrap(), 7_540_000);
    assert_eq!(battery.voltage_mv().unwrap(), 7540);
    assert!((battery.voltage_volts().unwrap() - 7.54).abs() < 1e-4);
    assert_eq!(battery.current_ma().unwrap(), 180);
    assert_eq!(battery.technology().unwrap(), "Li-ion");
    assert_eq!(battery.kind().unwrap(), "Battery");
    assert_eq!(battery.voltage_max_design_uv().unwrap(), 84_000_000);

    let port = LegoPort::find(root, "outB").unwrap();
    assert_eq!(port.address(), "ev3-ports:outB");
    assert_eq!(port.driver_name(), "ev3-output-port");
    assert_eq!(port.status().unwrap(), "no-motor");
    port.set_mode("dc-motor").unwrap();
    assert_eq!(port.mode().unwrap(), "dc-motor");
    assert!(matches!(
        port.set_mode("other-i2c"),
        Err(Error::NotOffered { .. })
    ));
    let input = LegoPort::find(root, "ev3-ports:in1").unwrap();
    assert!(input.modes().iter().any(|m| m == "other-i2c"));
    // set_device only in nxt-analog mode (EOPNOTSUPP otherwise, as the
    // kernel); the new device registers with a new number.
    assert!(matches!(
        input.set_device("lego-nxt-touch"),
        Err(Error::Unsupported { .. })
    ));
    input.set_mode("nxt-analog").unwrap();
    input.set_device("lego-nxt-touch").unwrap();
    let touch = ev3sysfs::sensor::TouchSensor::find(root, "in1").unwrap();
    assert!(!touch.pressed().unwrap());
}

#[test]
fn one_unreadable_entry_never_aborts_a_scan() {
    // A hand-made tree: a motor, a broken one, a stray file.
    let tmp = TempDir::new("scan");
    let motor = tmp.path().join("tacho-motor/motor0");
    std::fs::create_dir_all(&motor).unwrap();
    std::fs::write(motor.join("address"), "ev3-ports:outA\n").unwrap();
    std::fs::write(motor.join("driver_name"), "lego-ev3-l-motor\n").unwrap();
    let broken = tmp.path().join("tacho-motor/motor9");
    std::fs::create_dir_all(broken.join("address")).unwrap(); // a directory: unreadable
    std::fs::write(tmp.path().join("tacho-motor/stray-file"), "x").unwrap();
    let all = ev3sysfs::list(tmp.path(), "tacho-motor").unwrap();
    assert_eq!(all.len(), 1, "{all:?}");
    assert!(ev3sysfs::list(tmp.path(), "no-such-class")
        .unwrap()
        .is_empty());
    let Some(tree) = common::brick() else { return };
    tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    assert!(TachoMotor::find(tree.root(), "outA").is_ok());
    // Two motors on one port: ambiguous, naming both.
    tree.add_tacho_motor("outA", TachoDriver::Ev3Medium)
        .unwrap();
    match TachoMotor::find(tree.root(), "outA") {
        Err(Error::Ambiguous { matches, .. }) => assert_eq!(matches.len(), 2),
        other => panic!("expected Ambiguous, got {other:?}"),
    }
}
