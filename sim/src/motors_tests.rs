use std::time::Duration;

use super::*;

fn show(m: &dyn Model, attr: &str) -> KResult<String> {
    let mut out = Vec::new();
    m.show(attr, &mut out)?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

fn store(m: &mut dyn Model, attr: &str, value: &str) -> KResult<usize> {
    m.store(attr, value.as_bytes(), &mut Effects::default())
}

#[test]
fn dc_motor_validates_and_runs() {
    let mut m = DcMotor::new("ev3-ports:outA");
    assert_eq!(show(&m, "driver_name").as_deref(), Ok("rcx-motor\n"));
    assert_eq!(
        show(&m, "commands").as_deref(),
        Ok("run-forever run-timed run-direct stop\n")
    );
    assert_eq!(show(&m, "state").as_deref(), Ok("\n"));
    for (attr, bad) in [
        ("duty_cycle_sp", "101"),
        ("duty_cycle_sp", "x"),
        ("ramp_up_sp", "10001"),
        ("ramp_up_sp", "-1"),
        ("ramp_down_sp", "ms"),
        ("time_sp", "60001"),
        ("time_sp", "-1"),
        ("command", "run-to-abs-pos"),
        ("stop_action", "hold"),
        ("polarity", "x"),
    ] {
        assert_eq!(store(&mut m, attr, bad), Err(libc::EINVAL), "{attr}={bad}");
    }
    // sscanf("%u"): trailing garbage is ignored.
    assert_eq!(store(&mut m, "ramp_up_sp", "1000 ms"), Ok(7));
    assert_eq!(show(&m, "ramp_up_sp").as_deref(), Ok("1000\n"));
    assert_eq!(store(&mut m, "stop_action", "brake\n"), Ok(6));
    let stop_action = m.attributes().into_iter().find(|a| a.name == "stop_action");
    assert_eq!(stop_action.map(|a| a.mode), Some(Mode::WriteOnly));
    store(&mut m, "duty_cycle_sp", "-50").unwrap();
    store(&mut m, "command", "run-forever").unwrap();
    assert_eq!(show(&m, "state").as_deref(), Ok("running ramping\n"));
    let mut fx = Effects::default();
    m.tick(Duration::from_millis(1000), &mut fx);
    assert_eq!(show(&m, "duty_cycle").as_deref(), Ok("-50\n"));
    assert_eq!(show(&m, "state").as_deref(), Ok("running\n"));
    assert_eq!(fx.notify, vec!["state".to_owned()]);
    store(&mut m, "command", "stop").unwrap();
    assert_eq!(show(&m, "state").as_deref(), Ok("\n"));
    // run-timed with no ramp: stops after time_sp.
    store(&mut m, "ramp_up_sp", "0").unwrap();
    store(&mut m, "time_sp", "500").unwrap();
    store(&mut m, "polarity", "inversed").unwrap();
    store(&mut m, "command", "run-timed").unwrap();
    assert_eq!(m.duty_cycle(), 50);
    assert_eq!(show(&m, "duty_cycle").as_deref(), Ok("-50\n"));
    assert_eq!(show(&m, "duty_cycle_sp").as_deref(), Ok("-50\n"));
    m.tick(Duration::from_millis(600), &mut fx);
    assert_eq!(show(&m, "state").as_deref(), Ok("\n"));
    // run-direct applies duty_cycle_sp at once.
    store(&mut m, "polarity", "normal").unwrap();
    store(&mut m, "command", "run-direct").unwrap();
    store(&mut m, "duty_cycle_sp", "20").unwrap();
    m.tick(Duration::from_millis(100), &mut fx);
    assert_eq!(show(&m, "duty_cycle").as_deref(), Ok("20\n"));
}

#[test]
fn servo_reads_back_the_pulse_scaled() {
    let mut s = ServoMotor::new("ev3-ports:in1:i2c88:sv1");
    assert_eq!(show(&s, "position_sp").as_deref(), Ok("-150\n"));
    assert_eq!(show(&s, "state").as_deref(), Ok("\n"));
    assert_eq!(store(&mut s, "position_sp", "50deg"), Ok(5));
    assert_eq!(show(&s, "position_sp").as_deref(), Ok("-150\n"));
    store(&mut s, "command", "run").unwrap();
    assert_eq!(show(&s, "position_sp").as_deref(), Ok("50\n"));
    assert_eq!(show(&s, "state").as_deref(), Ok("running\n"));
    store(&mut s, "position_sp", "-100").unwrap();
    assert_eq!(show(&s, "position_sp").as_deref(), Ok("-100\n"));
    for (attr, bad) in [
        ("position_sp", "101"),
        ("max_pulse_sp", "1999"),
        ("mid_pulse_sp", "2001"),
        ("min_pulse_sp", "-1"),
        ("command", "go"),
        ("polarity", "up"),
        ("rate_sp", "x"),
    ] {
        assert_eq!(store(&mut s, attr, bad), Err(libc::EINVAL), "{attr}={bad}");
    }
    store(&mut s, "command", "float").unwrap();
    assert_eq!(show(&s, "state").as_deref(), Ok("\n"));
    assert_eq!(show(&s, "max_pulse_sp").as_deref(), Ok("2500\n"));
    assert_eq!(
        show(&s, "uevent").as_deref(),
        Ok("LEGO_DRIVER_NAME=ms-8ch-servo\nLEGO_ADDRESS=ev3-ports:in1:i2c88:sv1\n")
    );
}
