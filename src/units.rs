//! Units as types, integer only (the EV3 has no FPU): angles, rotation
//! speeds, distances and linear speeds, so that an angle cannot be passed
//! where a speed is expected.
//!
//! A tacho motor turns them into its counts with its `count_per_rot` (360
//! for LEGO motors); the raw-count methods of
//! [`TachoMotor`](crate::motor::TachoMotor) stay for those who want them.
//!
//! ```
//! use ev3sysfs::units::{DegPerSec, Degrees, Millimetres, Percent, Speed};
//!
//! assert_eq!(Degrees(90).to_counts(360), 90);
//! assert_eq!(Degrees(90).to_counts(720), 180); // a motor with 720 counts per turn
//! assert_eq!(DegPerSec(500).counts_per_sec(360, 1050), 500);
//! assert_eq!(Percent(50).counts_per_sec(360, 1050), 525); // half of max_speed
//! // 100 mm on a 56 mm wheel: 100 / (pi * 56) turns = 204.6 degrees.
//! assert_eq!(Millimetres(100).wheel_degrees(Millimetres(56)), 205);
//! ```

/// `value * num / den` in 128 bits, rounded half away from zero, saturated
/// to `i64`; 0 when `den` is 0.
pub(crate) fn scale(value: i128, num: i128, den: i128) -> i64 {
    if den == 0 {
        return 0;
    }
    let product = value * num;
    let half = den.abs() / 2;
    let magnitude = (product.abs() + half) / den.abs();
    let rounded = if (product < 0) == (den < 0) {
        magnitude
    } else {
        -magnitude
    };
    i64::try_from(rounded).unwrap_or(if rounded < 0 { i64::MIN } else { i64::MAX })
}

/// [`scale`] saturated to `i32`.
pub(crate) fn scale32(value: i64, num: i64, den: i64) -> i32 {
    let v = scale(i128::from(value), i128::from(num), i128::from(den));
    i32::try_from(v).unwrap_or(if v < 0 { i32::MIN } else { i32::MAX })
}

/// Pi as the fraction 355/113 (error 8.5e-8).
pub(crate) const PI_NUM: i64 = 355;
/// See [`PI_NUM`].
pub(crate) const PI_DEN: i64 = 113;

/// An angle in whole degrees (a motor's rotation, a robot's heading).
/// Positive is the motor's positive direction, or clockwise for a robot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Degrees(pub i32);

impl Degrees {
    /// Tacho counts for this angle on a motor with `count_per_rot` counts
    /// per turn, rounded to nearest.
    pub fn to_counts(self, count_per_rot: i32) -> i32 {
        scale32(i64::from(self.0), i64::from(count_per_rot), 360)
    }

    /// The angle `counts` tacho counts make, rounded to nearest.
    pub fn from_counts(counts: i32, count_per_rot: i32) -> Degrees {
        Degrees(scale32(i64::from(counts), 360, i64::from(count_per_rot)))
    }
}

/// A rotation speed in degrees per second (of a motor, or a robot's turn
/// rate, clockwise positive).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct DegPerSec(pub i32);

/// A speed in percent of the motor's `max_speed` (-100..=100).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Percent(pub i32);

/// A distance in millimetres.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Millimetres(pub i32);

impl Millimetres {
    /// Degrees a wheel of diameter `wheel` turns to roll this distance:
    /// `mm * 360 / (pi * wheel)`, rounded.
    pub fn wheel_degrees(self, wheel: Millimetres) -> i32 {
        scale32(i64::from(self.0) * 360, PI_DEN, PI_NUM * i64::from(wheel.0))
    }
}

/// A linear speed in millimetres per second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct MmPerSec(pub i32);

/// A motor speed: [`DegPerSec`] or [`Percent`] of `max_speed`. Angles and
/// distances are not speeds, so a swapped argument does not compile.
pub trait Speed: Copy + std::fmt::Debug {
    /// Tacho counts per second on a motor with `count_per_rot` counts per
    /// turn and `max_speed` counts per second (not clamped).
    fn counts_per_sec(self, count_per_rot: i32, max_speed: i32) -> i32;

    /// For error messages in the caller's own unit: what the unit is
    /// called (e.g. `"speed (% of max_speed)"`), this speed in it, and the
    /// fastest speed in it on that motor.
    fn in_own_unit(self, count_per_rot: i32, max_speed: i32) -> (&'static str, i64, i64);

    /// [`Speed::counts_per_sec`], refused beyond `max_speed` with an
    /// [`crate::Error::OutOfRange`] that speaks the caller's unit (`150` in
    /// `-100..=100` for `Percent(150)`, not encoder counts).
    ///
    /// # Errors
    /// [`crate::Error::OutOfRange`] beyond `max_speed`.
    fn checked_counts_per_sec(self, count_per_rot: i32, max_speed: i32) -> crate::Result<i32> {
        // Never i32::MIN (a `max_speed` the kernel never shows could allow
        // it): every caller may take the speed's `abs()`.
        let counts = self.counts_per_sec(count_per_rot, max_speed).max(-i32::MAX);
        if counts.unsigned_abs() <= max_speed.unsigned_abs() {
            return Ok(counts);
        }
        let (attribute, value, limit) = self.in_own_unit(count_per_rot, max_speed);
        Err(crate::Error::OutOfRange {
            attribute,
            value,
            min: -limit,
            max: limit,
        })
    }
}

impl Speed for DegPerSec {
    fn counts_per_sec(self, count_per_rot: i32, _max_speed: i32) -> i32 {
        scale32(i64::from(self.0), i64::from(count_per_rot), 360)
    }
    fn in_own_unit(self, count_per_rot: i32, max_speed: i32) -> (&'static str, i64, i64) {
        let limit = if count_per_rot == 0 {
            0
        } else {
            i64::from(max_speed).unsigned_abs() * 360 / i64::from(count_per_rot).unsigned_abs()
        };
        (
            "speed (deg/s)",
            i64::from(self.0),
            i64::try_from(limit).unwrap_or(i64::MAX),
        )
    }
}

impl Speed for Percent {
    fn counts_per_sec(self, _count_per_rot: i32, max_speed: i32) -> i32 {
        scale32(i64::from(self.0), i64::from(max_speed), 100)
    }
    fn in_own_unit(self, _count_per_rot: i32, _max_speed: i32) -> (&'static str, i64, i64) {
        ("speed (% of max_speed)", i64::from(self.0), 100)
    }
}

macro_rules! display_unit {
    ($($t:ty => $suffix:literal),*) => {$(
        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, concat!("{}", $suffix), self.0)
            }
        }
    )*};
}

display_unit!(Degrees => "°", DegPerSec => "°/s", Percent => " %", Millimetres => " mm", MmPerSec => " mm/s");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checked_speed_is_never_i32_min() {
        // Found by fuzz/moves: max_speed i32::MIN let i32::MIN through, and
        // a move's `abs()` of it overflowed.
        assert_eq!(
            Percent(100).checked_counts_per_sec(2, i32::MIN).ok(),
            Some(-i32::MAX)
        );
        assert_eq!(
            DegPerSec(i32::MIN)
                .checked_counts_per_sec(360, i32::MIN)
                .ok(),
            Some(-i32::MAX)
        );
    }

    #[test]
    fn conversions_round_to_nearest() {
        assert_eq!(scale(1, 1, 2), 1);
        assert_eq!(scale(-1, 1, 2), -1);
        assert_eq!(scale(2, 1, 3), 1);
        assert_eq!(scale(5, 1, 0), 0);
        assert_eq!(scale32(i64::MAX, 2, 1), i32::MAX);
        assert_eq!(Degrees(-90).to_counts(360), -90);
        assert_eq!(Degrees::from_counts(181, 720), Degrees(91));
        assert_eq!(Percent(-100).counts_per_sec(360, 1560), -1560);
        assert_eq!(DegPerSec(-45).counts_per_sec(720, 0), -90);
        assert_eq!(Millimetres(-176).wheel_degrees(Millimetres(56)), -360);
        assert_eq!(Degrees(90).to_string(), "90°");
        assert_eq!(MmPerSec(5).to_string(), "5 mm/s");
    }
}
