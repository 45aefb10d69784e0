use super::*;

fn sensor(driver: SensorDriver) -> Sensor {
    Sensor::new(driver, &driver.address("ev3-ports:in1"))
}

fn show(s: &Sensor, attr: &str) -> KResult<String> {
    let mut out = Vec::new();
    s.show(attr, &mut out)?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

fn bytes(s: &Sensor, attr: &str) -> Vec<u8> {
    let mut out = Vec::new();
    s.show(attr, &mut out).expect(attr);
    out
}

#[test]
fn color_rgb_raw_has_three_values_as_soon_as_the_mode_store_returns() {
    let mut s = sensor(SensorDriver::Ev3Color);
    assert_eq!(show(&s, "mode").as_deref(), Ok("COL-REFLECT\n"));
    assert_eq!(show(&s, "value1"), Err(libc::ENXIO));
    let mut fx = Effects::default();
    assert_eq!(s.store("mode", b"RGB-RAW\n", &mut fx), Ok(8));
    assert!(fx.attributes_changed);
    assert_eq!(show(&s, "mode").as_deref(), Ok("RGB-RAW\n"));
    assert_eq!(show(&s, "num_values").as_deref(), Ok("3\n"));
    assert_eq!(show(&s, "bin_data_format").as_deref(), Ok("s16\n"));
    assert_eq!(show(&s, "units").as_deref(), Ok("\n"));
    for i in 0..3 {
        assert_eq!(show(&s, &format!("value{i}")).as_deref(), Ok("0\n"));
    }
    assert_eq!(show(&s, "value3"), Err(libc::ENXIO));
    assert_eq!(show(&s, "value7"), Err(libc::ENXIO));
    s.inject("value0", "300", &mut fx).unwrap();
    s.inject("value2", "-2", &mut fx).unwrap();
    assert_eq!(s.inject("value3", "1", &mut fx), Err(libc::ENXIO));
    assert_eq!(bytes(&s, "bin_data")[..6], [44, 1, 0, 0, 0xfe, 0xff]);
    // Values are kept per mode.
    s.store("mode", b"COL-COLOR", &mut fx).unwrap();
    assert_eq!(show(&s, "value0").as_deref(), Ok("0\n"));
    assert_eq!(show(&s, "units").as_deref(), Ok("col\n"));
    s.store("mode", b"RGB-RAW", &mut fx).unwrap();
    assert_eq!(show(&s, "value0").as_deref(), Ok("300\n"));
}

#[test]
fn bad_modes_and_commands_are_einval() {
    let mut s = sensor(SensorDriver::Ev3Infrared);
    let mut fx = Effects::default();
    for bad in [&b"FLY"[..], b"ir-prox", b"IR-PROX ", b"IR-PROX\n\n", b""] {
        assert_eq!(s.store("mode", bad, &mut fx), Err(libc::EINVAL), "{bad:?}");
    }
    assert_eq!(s.store("command", b"RESET", &mut fx), Err(libc::EINVAL));
    assert!(!fx.attributes_changed);
    assert_eq!(show(&s, "commands").as_deref(), Ok("\n"));
    assert_eq!(
        show(&s, "modes").as_deref(),
        Ok("IR-PROX IR-SEEK IR-REMOTE IR-REM-A IR-S-ALT IR-CAL\n")
    );
    s.store("mode", b"IR-SEEK", &mut fx).unwrap();
    assert_eq!(show(&s, "num_values").as_deref(), Ok("8\n"));
    assert_eq!(show(&s, "value7").as_deref(), Ok("-128\n"));
    assert_eq!(bytes(&s, "bin_data").len(), 32);
}

#[test]
fn unsupported_attributes_give_the_kernels_errors() {
    let mut fx = Effects::default();
    let mut touch = sensor(SensorDriver::Ev3Touch);
    assert_eq!(show(&touch, "text_value"), Err(libc::EOPNOTSUPP));
    assert_eq!(show(&touch, "poll_ms"), Err(libc::EOPNOTSUPP));
    assert_eq!(show(&touch, "direct"), Err(libc::EOPNOTSUPP));
    assert_eq!(
        touch.store("poll_ms", b"100", &mut fx),
        Err(libc::EOPNOTSUPP)
    );
    assert_eq!(
        touch.store_at("direct", 0, b"x", &mut fx),
        Err(libc::EOPNOTSUPP)
    );
    let mut color = sensor(SensorDriver::Ev3Color);
    assert_eq!(show(&color, "direct"), Err(libc::EOPNOTSUPP));
    assert_eq!(color.store_at("direct", 0, &[1, 2], &mut fx), Ok(2));
    assert_eq!(
        color.store_at("direct", 1, &[1], &mut fx),
        Err(libc::EINVAL)
    );
    assert_eq!(
        color.store_at("direct", 0, &[0; 33], &mut fx),
        Err(libc::EINVAL)
    );
    let mut us = sensor(SensorDriver::NxtUltrasonic);
    assert_eq!(show(&us, "address").as_deref(), Ok("ev3-ports:in1:i2c1\n"));
    assert_eq!(show(&us, "poll_ms").as_deref(), Ok("50\n"));
    assert_eq!(us.store("poll_ms", b"100ms", &mut fx), Ok(5));
    assert_eq!(show(&us, "poll_ms").as_deref(), Ok("100\n"));
    assert_eq!(us.store("poll_ms", b"10", &mut fx), Err(libc::EINVAL));
    assert_eq!(us.store("poll_ms", b"-1", &mut fx), Err(libc::EINVAL));
    assert_eq!(us.store_at("direct", 250, &[0; 10], &mut fx), Ok(5));
    assert_eq!(us.store_at("direct", 255, &[0], &mut fx), Err(libc::EFBIG));
    assert_eq!(bytes(&us, "direct").len(), 255);
    assert_eq!(show(&us, "value0").as_deref(), Ok("255\n"));
    assert_eq!(bytes(&us, "bin_data")[..1], [255]);
}

#[test]
fn touch_value0_notifies_on_change_only() {
    let mut s = sensor(SensorDriver::Ev3Touch);
    let mut fx = Effects::default();
    s.inject("value0", "1", &mut fx).unwrap();
    assert_eq!(fx.notify, vec!["value0".to_owned()]);
    let mut fx = Effects::default();
    s.inject("value0", "1", &mut fx).unwrap();
    assert!(fx.notify.is_empty());
    assert_eq!(bytes(&s, "bin_data")[..4], [1, 0, 0, 0]);
    assert_eq!(show(&s, "bin_data_format").as_deref(), Ok("s32\n"));
    let mut nxt = sensor(SensorDriver::NxtTouch);
    nxt.inject("value0", "1", &mut fx).unwrap();
    assert!(fx.notify.is_empty());
}

#[test]
fn a_touch_pressed_by_hand_stays_pressed_whatever_the_world_says() {
    let mut s = sensor(SensorDriver::Ev3Touch);
    let mut fx = Effects::default();
    s.inject("value0", "1", &mut fx).unwrap();
    s.set_mode_values(0, &[0], &mut fx);
    assert_eq!(show(&s, "value0").as_deref(), Ok("1\n"), "held by hand");
    s.inject("value0", "0", &mut fx).unwrap();
    assert_eq!(show(&s, "value0").as_deref(), Ok("0\n"), "released");
    s.set_mode_values(0, &[1], &mut fx);
    assert_eq!(
        show(&s, "value0").as_deref(),
        Ok("1\n"),
        "the world's contact"
    );
    s.inject("value0", "0", &mut fx).unwrap();
    assert_eq!(
        show(&s, "value0").as_deref(),
        Ok("1\n"),
        "still against the wall"
    );
    s.set_mode_values(0, &[0], &mut fx);
    assert_eq!(show(&s, "value0").as_deref(), Ok("0\n"));
}

#[test]
fn every_driver_shows_every_mode_consistently() {
    for driver in SensorDriver::ALL {
        let mut s = sensor(driver);
        let mut fx = Effects::default();
        assert_eq!(s.attributes().len(), 29, "{driver:?}");
        for (name, n, format, units, decimals) in driver.modes() {
            s.store("mode", name.as_bytes(), &mut fx).unwrap();
            let n = usize::from(*n);
            assert_eq!(show(&s, "num_values").unwrap(), format!("{n}\n"));
            assert_eq!(show(&s, "bin_data_format").unwrap(), format!("{format}\n"));
            assert_eq!(show(&s, "units").unwrap(), format!("{units}\n"));
            assert_eq!(show(&s, "decimals").unwrap(), format!("{decimals}\n"));
            let width = match *format {
                "u8" | "s8" => 1,
                "u16" | "s16" | "s16_be" => 2,
                _ => 4,
            };
            // The kernel's whole raw buffer, the mode's values first.
            let data = bytes(&s, "bin_data");
            assert_eq!(data.len(), 32);
            assert!(data[(n * width).min(32)..].iter().all(|b| *b == 0));
            assert!(show(&s, &format!("value{}", n - 1)).is_ok());
            if n < 8 {
                assert_eq!(show(&s, &format!("value{n}")), Err(libc::ENXIO));
            }
        }
        assert_eq!(
            show(&s, "uevent").unwrap(),
            format!(
                "LEGO_DRIVER_NAME={}\nLEGO_ADDRESS={}\n",
                driver.driver_name(),
                driver.address("ev3-ports:in1")
            )
        );
    }
}

#[test]
fn nxt_light_is_fixed_point_with_one_decimal() {
    let mut s = sensor(SensorDriver::NxtLight);
    let mut fx = Effects::default();
    s.inject("value0", "456", &mut fx).unwrap();
    assert_eq!(show(&s, "value0").as_deref(), Ok("456\n"));
    assert_eq!(show(&s, "decimals").as_deref(), Ok("1\n"));
    assert_eq!(s.inject("speed", "1", &mut fx), Err(libc::ENOENT));
    assert_eq!(s.inject("value0", "x", &mut fx), Err(libc::EINVAL));
}
