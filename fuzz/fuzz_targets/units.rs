//! Units arithmetic at any values: conversions round half away from zero
//! and saturate (checked against 128-bit arithmetic), the PID controller
//! stays within its limit, poses saturate; never a panic or a wrap.
#![no_main]

use ev3sysfs::control::Pid;
use ev3sysfs::drive::Pose;
use ev3sysfs::units::{DegPerSec, Degrees, Millimetres, Percent, Speed};
use libfuzzer_sys::fuzz_target;

/// `value * num / den` rounded half away from zero, saturated to i32; 0
/// when `den` is 0.
fn reference(value: i128, num: i128, den: i128) -> i32 {
    if den == 0 {
        return 0;
    }
    let p = value * num;
    let (q, r) = (p / den, p % den);
    let away = if (p < 0) == (den < 0) { 1 } else { -1 };
    let rounded = if 2 * r.abs() >= den.abs() {
        q + away
    } else {
        q
    };
    rounded.clamp(i128::from(i32::MIN), i128::from(i32::MAX)) as i32
}

fuzz_target!(|input: (
    i32,
    i32,
    i32,
    (i32, i32, i32, i32),
    Vec<i32>,
    (i64, i64, i64)
)| {
    let (a, b, c, (kp, ki, kd, limit), errors, (x, y, heading)) = input;
    let (a128, b128, c128) = (i128::from(a), i128::from(b), i128::from(c));
    assert_eq!(Degrees(a).to_counts(b), reference(a128, b128, 360));
    assert_eq!(
        Degrees::from_counts(a, b),
        Degrees(reference(a128, 360, b128))
    );
    assert_eq!(
        DegPerSec(a).counts_per_sec(b, c),
        reference(a128, b128, 360)
    );
    assert_eq!(Percent(a).counts_per_sec(b, c), reference(a128, c128, 100));
    assert_eq!(
        Millimetres(a).wheel_degrees(Millimetres(b)),
        reference(a128 * 360, 113, 355 * b128)
    );
    let mut pid = Pid::new(kp, ki, kd).with_target(c).with_limit(limit);
    let bound = limit.unsigned_abs();
    for (i, e) in errors.into_iter().take(256).enumerate() {
        let out = if i % 2 == 0 {
            pid.step(e)
        } else {
            pid.step_error(e)
        };
        assert!(out.unsigned_abs() <= bound, "{out} beyond {limit}");
    }
    let pose = Pose {
        x_um: x,
        y_um: y,
        heading_mdeg: heading,
    };
    let exact = ((i128::from(x).pow(2) as u128 + i128::from(y).pow(2) as u128) as f64).sqrt();
    let d = pose.distance_from_start_um();
    assert!(d >= 0);
    // Saturated at i64::MAX; otherwise within float rounding of the root.
    if exact < 9.0e18 {
        assert!(
            (d as f64 - exact).abs() <= exact * 1e-9 + 1.0,
            "{d} vs {exact}"
        );
    }
    let _ = (pose.x(), pose.y(), pose.heading());
});
