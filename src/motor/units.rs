//! Unit helpers for tacho motors, integer only (the EV3 has no FPU).

use super::TachoMotor;

impl TachoMotor {
    fn cpr(&self) -> i64 {
        i64::from(self.count_per_rot().unwrap_or(360))
    }

    /// Tacho counts for `degrees` of rotation, rounded to nearest.
    pub fn degrees_to_counts(&self, degrees: i32) -> i32 {
        scale(i64::from(degrees), self.cpr(), 360)
    }
    /// Degrees of rotation for `counts`, rounded to nearest.
    pub fn counts_to_degrees(&self, counts: i32) -> i32 {
        scale(i64::from(counts), 360, self.cpr())
    }
    /// Tacho counts for `milli_rotations` thousandths of a rotation.
    pub fn rotations_to_counts(&self, milli_rotations: i32) -> i32 {
        scale(i64::from(milli_rotations), self.cpr(), 1000)
    }
    /// Counts per second for `rpm` rotations per minute.
    pub fn rpm_to_speed(&self, rpm: i32) -> i32 {
        scale(i64::from(rpm), self.cpr(), 60)
    }
    /// Rotations per minute for `speed` counts per second.
    pub fn speed_to_rpm(&self, speed: i32) -> i32 {
        scale(i64::from(speed), 60, self.cpr())
    }
}

/// `value * num / den`, rounded half away from zero, saturated to i32.
fn scale(value: i64, num: i64, den: i64) -> i32 {
    if den == 0 {
        return 0;
    }
    let product = value * num;
    let half = den.abs() / 2;
    let rounded = if (product < 0) == (den < 0) {
        (product.abs() + half) / den.abs()
    } else {
        -((product.abs() + half) / den.abs())
    };
    i32::try_from(rounded).unwrap_or(if rounded < 0 { i32::MIN } else { i32::MAX })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_scaling() {
        assert_eq!(scale(90, 360, 360), 90);
        assert_eq!(scale(1, 1, 2), 1);
        assert_eq!(scale(-1, 1, 2), -1);
        assert_eq!(scale(1, 1, 3), 0);
        assert_eq!(scale(2, 1, 3), 1);
        assert_eq!(scale(-2, 1, 3), -1);
        assert_eq!(scale(1500, 360, 1000), 540);
        assert_eq!(scale(60, 360, 60), 360);
        assert_eq!(scale(i64::from(i32::MAX), 4, 1), i32::MAX);
        assert_eq!(scale(5, 1, 0), 0);
    }
}
