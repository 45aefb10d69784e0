//! [`DriveBase`]: a two-wheeled robot driven in millimetres and degrees,
//! with odometry from both encoders (and an EV3 gyro, when given); and
//! [`Tank`](crate::motor::Tank) helpers in units.
//!
//! Conventions (as pybricks and the EV3 gyro): distances forward are
//! positive, angles and turn rates clockwise (to the right) are positive;
//! [`DriveBase::state`] gives `x` forward from the start, `y` to the right,
//! and the heading.
//!
//! All arithmetic is integer (the EV3 has no FPU): π is 355/113, sine and
//! cosine are a CORDIC. Moves are `run-to-abs-pos` on both motors, set up
//! first and started back to back; waits sleep 10 ms between checks and
//! update the odometry as they go.
//!
//! ```
//! use std::sync::Arc;
//! use ev3sysfs::drive::DriveBase;
//! use ev3sysfs_sim::{MockTree, Simulator, TachoDriver};
//! use ev3sysfs::motor::TachoMotor;
//! use ev3sysfs::units::{Degrees, Millimetres};
//!
//! let tree = Arc::new(MockTree::ev3()?);
//! tree.add_tacho_motor("outB", TachoDriver::Ev3Large)?;
//! tree.add_tacho_motor("outC", TachoDriver::Ev3Large)?;
//! let _sim = Simulator::new(Arc::clone(&tree))?.run_realtime();
//! let base = DriveBase::new(
//!     TachoMotor::large(tree.root(), "outB")?,
//!     TachoMotor::large(tree.root(), "outC")?,
//!     Millimetres(56),  // wheel diameter
//!     Millimetres(112), // axle track
//! )?;
//! base.straight(Millimetres(200))?;
//! base.turn(Degrees(90))?; // to the right
//! base.straight(Millimetres(100))?;
//! let pose = base.state()?;
//! // Within a few mm and a degree (the real-time simulator stops each move
//! // within a tick or two of its target):
//! assert!((pose.x().0 - 200).abs() <= 3 && (pose.y().0 - 100).abs() <= 3, "{pose:?}");
//! assert!((pose.heading().0 - 90).abs() <= 1, "{pose:?}");
//! # Ok::<(), ev3sysfs::Error>(())
//! ```

mod held;
mod hold;
mod line;
mod odometry;
mod tank;

pub use held::HOLD_PERIOD;
pub use hold::FINAL_MM;
#[cfg(feature = "async")]
pub(crate) use hold::{Hold, Step};
pub use line::{line_pid, LineCalibration};

use crate::clock::Instant;
use std::sync::Mutex;
use std::time::Duration;

pub use odometry::Pose;
use odometry::{Geometry, Odometry};

use crate::error::{Error, Result};
use crate::motor::{Command, Finished, TachoMotor, Then};
use crate::sensor::GyroSensor;
use crate::units::{scale, scale32, DegPerSec, Degrees, Millimetres, MmPerSec, PI_DEN, PI_NUM};

/// Time between checks while waiting for a move.
const POLL: Duration = Duration::from_millis(10);
/// Extra time a wait allows beyond a move's nominal duration.
const SLACK: Duration = Duration::from_secs(2);
/// How many corrective turns a gyro-corrected turn makes at most.
const GYRO_CORRECTIONS: usize = 3;

/// Two motors driving a robot (see the [module docs](self)).
#[derive(Debug)]
pub struct DriveBase {
    left: TachoMotor,
    right: TachoMotor,
    wheel: Millimetres,
    axle: Millimetres,
    gyro: Option<GyroSensor>,
    speed: MmPerSec,
    turn_rate: DegPerSec,
    then: Then,
    odometry: Mutex<Odometry>,
    nominal: Mutex<Duration>,
    /// The gyro's drift, millidegrees per second, from
    /// [`DriveBase::measure_gyro_drift`]: held straights subtract it.
    gyro_drift: std::sync::atomic::AtomicI32,
}

impl DriveBase {
    /// A drive base from its `left` and `right` motors, the wheel diameter
    /// and the axle track (distance between the wheels' contact points).
    /// Speeds default to 40 % of the slower motor's `max_speed`, the end of
    /// a move to [`Then::Hold`]; the odometry starts at zero here.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] for a diameter or track below 1 mm; read
    /// errors.
    pub fn new(
        left: TachoMotor,
        right: TachoMotor,
        wheel_diameter: Millimetres,
        axle_track: Millimetres,
    ) -> Result<DriveBase> {
        for (what, mm) in [
            ("wheel_diameter", wheel_diameter),
            ("axle_track", axle_track),
        ] {
            crate::motor::check_range(what, i64::from(mm.0), 1, i64::from(i32::MAX))?;
        }
        let geometry = Geometry {
            wheel: i64::from(wheel_diameter.0),
            axle: i64::from(axle_track.0),
            cpr: (i64::from(cpr(&left)), i64::from(cpr(&right))),
        };
        let odometry = Odometry::new(geometry, left.position()?, right.position()?, None);
        let mut base = DriveBase {
            left,
            right,
            wheel: wheel_diameter,
            axle: axle_track,
            gyro: None,
            speed: MmPerSec(0),
            turn_rate: DegPerSec(0),
            then: Then::Hold,
            odometry: Mutex::new(odometry),
            nominal: Mutex::new(Duration::ZERO),
            gyro_drift: std::sync::atomic::AtomicI32::new(0),
        };
        // 40 % of the slower wheel's top speed, as pybricks.
        let top = i64::from(base.left.max_speed().min(base.right.max_speed())) * 2 / 5;
        let wheel_deg = scale32(top, 360, i64::from(cpr(&base.left)));
        // In 128 bits: 2^31 * 2^31 * 355 does not fit in 64.
        let speed = scale(
            i128::from(wheel_deg) * i128::from(geometry.wheel) * i128::from(PI_NUM),
            1,
            360 * i128::from(PI_DEN),
        );
        base.speed = MmPerSec(i32::try_from(speed).unwrap_or(i32::MAX));
        base.turn_rate = DegPerSec(scale32(i64::from(wheel_deg), geometry.wheel, geometry.axle));
        Ok(base)
    }

    /// Uses `gyro` for the heading: the odometry's heading (and so `x`,
    /// `y`) comes from the gyro's angle, and [`DriveBase::turn`] corrects
    /// the remaining error the gyro sees after each turn. The gyro's
    /// current angle becomes heading 0 (keep the robot still). A drifting
    /// gyro turns a held straight into a slow spiral: check it first with
    /// [`GyroSensor::check_still`] (an [`Error::GyroDrift`] names the
    /// drift and the fix: recalibrate while still).
    ///
    /// # Errors
    /// Read errors.
    pub fn with_gyro(mut self, gyro: GyroSensor) -> Result<DriveBase> {
        let angle = gyro.angle()?;
        self.gyro = Some(gyro);
        let (l, r) = (self.left.position()?, self.right.position()?);
        self.lock_odometry().reset(l, r, Some(angle));
        Ok(self)
    }

    /// Speed for [`DriveBase::straight`] and [`DriveBase::curve`], and turn
    /// rate for [`DriveBase::turn`] (signs ignored).
    pub fn set_speeds(&mut self, speed: MmPerSec, turn_rate: DegPerSec) {
        self.speed = MmPerSec(speed.0.saturating_abs());
        self.turn_rate = DegPerSec(turn_rate.0.saturating_abs());
    }

    /// What the motors do at the end of a move (default [`Then::Hold`]).
    pub fn set_then(&mut self, then: Then) {
        self.then = then;
    }

    /// The speeds set (see [`DriveBase::set_speeds`]).
    pub fn speeds(&self) -> (MmPerSec, DegPerSec) {
        (self.speed, self.turn_rate)
    }

    /// The left motor.
    pub fn left(&self) -> &TachoMotor {
        &self.left
    }
    /// The right motor.
    pub fn right(&self) -> &TachoMotor {
        &self.right
    }
    /// The gyro, when one is used.
    pub fn gyro(&self) -> Option<&GyroSensor> {
        self.gyro.as_ref()
    }

    fn lock_odometry(&self) -> std::sync::MutexGuard<'_, Odometry> {
        self.odometry.lock().unwrap_or_else(|p| p.into_inner())
    }

    // ----- moves -------------------------------------------------------------

    /// Turns in place by `angle` (positive: clockwise, to the right) and
    /// waits. With a gyro, then turns by what the gyro says is left, up to
    /// three times, until within 1 degree.
    ///
    /// # Errors
    /// As [`DriveBase::straight`].
    pub fn turn(&self, angle: Degrees) -> Result<Finished> {
        let Some(gyro) = &self.gyro else {
            self.start_turn(angle)?;
            return self.wait();
        };
        let goal = gyro.angle()?.saturating_add(angle.0);
        self.start_turn(angle)?;
        let mut finished = self.wait()?;
        for _ in 0..GYRO_CORRECTIONS {
            let left = goal.saturating_sub(gyro.angle()?);
            if finished == Finished::Stalled || left.abs() < 1 {
                break;
            }
            self.start_turn(Degrees(left))?;
            finished = self.wait()?;
        }
        Ok(finished)
    }

    /// Drives along a circle of `radius` (at the robot's centre; negative:
    /// backwards) until the heading has changed by `angle` (positive:
    /// clockwise), and waits.
    ///
    /// # Errors
    /// As [`DriveBase::straight`].
    pub fn curve(&self, radius: Millimetres, angle: Degrees) -> Result<Finished> {
        self.start_curve(radius, angle)?;
        self.wait()
    }

    /// Starts a straight of `distance` without waiting: both wheels
    /// `run-to-abs-pos`, each regulated on its own (not held together: use
    /// [`DriveBase::straight`] for that).
    ///
    /// # Errors
    /// I/O errors.
    pub fn start_straight(&self, distance: Millimetres) -> Result<()> {
        let wheel = distance.wheel_degrees(self.wheel);
        let speed = self.wheel_speed(self.speed);
        self.start_move((wheel, speed), (wheel, speed))
    }

    /// Starts [`DriveBase::turn`] (encoders only) without waiting.
    ///
    /// # Errors
    /// I/O errors.
    pub fn start_turn(&self, angle: Degrees) -> Result<()> {
        let wheel = self.turn_wheel_degrees(angle.0);
        let speed = self.turn_wheel_degrees(self.turn_rate.0);
        // Saturated: -i32::MIN does not fit.
        self.start_move((wheel, speed), (wheel.saturating_neg(), speed))
    }

    /// Starts [`DriveBase::curve`] without waiting.
    ///
    /// # Errors
    /// I/O errors.
    pub fn start_curve(&self, radius: Millimetres, angle: Degrees) -> Result<()> {
        // Centre arc r * |θ|, heading change (left - right) / axle = θ.
        // In 128 bits: i32::MAX * i32::MAX * 355 does not fit in 64.
        let centre = scale(
            i128::from(radius.0) * i128::from(angle.0.unsigned_abs()) * i128::from(PI_NUM),
            1,
            180 * i128::from(PI_DEN),
        );
        let centre = i32::try_from(centre).unwrap_or(if centre < 0 { i32::MIN } else { i32::MAX });
        let centre = Millimetres(centre).wheel_degrees(self.wheel);
        let turn = self.turn_wheel_degrees(angle.0);
        let (l, r) = (centre.saturating_add(turn), centre.saturating_sub(turn));
        let fastest = self.wheel_speed(self.speed);
        let longest = l.unsigned_abs().max(r.unsigned_abs()).max(1);
        let share = |d: i32| {
            scale32(
                i64::from(fastest),
                i64::from(d.unsigned_abs()),
                i64::from(longest),
            )
            .max(1)
        };
        self.start_move((l, share(l)), (r, share(r)))
    }

    /// Wheel degrees for a robot rotation of `deg` degrees: `deg * axle /
    /// wheel`.
    fn turn_wheel_degrees(&self, deg: i32) -> i32 {
        scale32(
            i64::from(deg),
            i64::from(self.axle.0),
            i64::from(self.wheel.0),
        )
    }

    /// Wheel degrees per second for a linear speed.
    fn wheel_speed(&self, speed: MmPerSec) -> i32 {
        Millimetres(speed.0).wheel_degrees(self.wheel)
    }

    /// Runs each motor by its wheel degrees at its wheel speed (deg/s),
    /// setpoints first, then both commands.
    fn start_move(&self, left: (i32, i32), right: (i32, i32)) -> Result<()> {
        let (lp, rp) = self.update_positions()?;
        let mut nominal = Duration::ZERO;
        let mut plans =
            [(&self.left, lp, left), (&self.right, rp, right)].map(|(m, at, (deg, speed))| {
                let c = cpr(m);
                let counts = scale32(i64::from(deg), i64::from(c), 360);
                let speed = scale32(i64::from(speed), i64::from(c), 360)
                    .unsigned_abs()
                    .clamp(1, m.max_speed().unsigned_abs().max(1));
                let speed = i32::try_from(speed).unwrap_or(i32::MAX);
                let ms = u64::from(counts.unsigned_abs()) * 1000
                    / u64::from(speed.unsigned_abs().max(1));
                nominal = nominal.max(Duration::from_millis(ms));
                (m, at.saturating_add(counts), speed)
            });
        *self.nominal.lock().unwrap_or_else(|p| p.into_inner()) = nominal;
        for (m, target, speed) in &mut plans {
            m.set_stop_action(self.then)?;
            m.set_position_sp(*target)?;
            m.set_speed_sp(*speed)?;
        }
        for (m, _, _) in &plans {
            m.send(Command::RunToAbsPos)?;
        }
        Ok(())
    }

    /// Whether the current move is over (neither motor running), after
    /// updating the odometry. A stalled motor ends the move: both are
    /// stopped. (A simulator shows `running` a tick after a command: step
    /// it before asking.)
    ///
    /// # Errors
    /// I/O errors.
    pub fn done(&self) -> Result<bool> {
        Ok(self.check()?.is_some())
    }

    /// `Some` once the move is over (after stopping both on a stall).
    pub(crate) fn check(&self) -> Result<Option<Finished>> {
        let (ls, rs) = (self.left.state()?, self.right.state()?);
        self.update_positions()?;
        if ls.stalled() || rs.stalled() {
            self.stop()?;
            return Ok(Some(Finished::Stalled));
        }
        Ok((!ls.running() && !rs.running()).then_some(Finished::Done))
    }

    /// Waits for the current move to end, updating the odometry every
    /// 10 ms (sleeping in between, never spinning). A stall stops both
    /// motors and returns [`Finished::Stalled`].
    ///
    /// # Errors
    /// I/O errors; [`Error::Timeout`] after twice the move's nominal time
    /// plus 2 s.
    pub fn wait(&self) -> Result<Finished> {
        let start = Instant::now();
        let timeout = self
            .nominal
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .saturating_mul(2)
            .saturating_add(SLACK);
        // On a mock tree `running` shows a tick after the command.
        let grace = if self.left.is_sysfs() {
            Duration::ZERO
        } else {
            Duration::from_millis(100)
        };
        let mut seen_running = false;
        loop {
            let result = self.check()?;
            match result {
                Some(Finished::Done) if !seen_running && start.elapsed() < grace => {}
                Some(finished) => return Ok(finished),
                None => seen_running = true,
            }
            if start.elapsed() > timeout {
                self.stop()?;
                return Err(Error::Timeout {
                    what: format!(
                        "drive base move ({} and {})",
                        self.left.address(),
                        self.right.address()
                    ),
                    waited: start.elapsed(),
                });
            }
            std::thread::sleep(POLL);
        }
    }

    /// Drives at `speed` while turning at `turn_rate` (clockwise positive)
    /// until told otherwise. Wheel speeds beyond `max_speed` are scaled down
    /// together (the curve's radius is kept), never refused, so a control
    /// loop does not fail mid-way. Four writes (two setpoints, two
    /// commands), no read.
    ///
    /// # Errors
    /// Write errors.
    pub fn drive(&self, speed: MmPerSec, turn_rate: DegPerSec) -> Result<()> {
        let forward = i64::from(self.wheel_speed(speed));
        let turn = i64::from(self.turn_wheel_degrees(turn_rate.0));
        let to_counts = |m: &TachoMotor, deg: i64| scale(i128::from(deg), i128::from(cpr(m)), 360);
        let (mut l, mut r) = (
            to_counts(&self.left, forward + turn),
            to_counts(&self.right, forward - turn),
        );
        // In 128 bits: counts and max_speed are only bounded by i64 and i32.
        let over = |v: i64, m: &TachoMotor| (i128::from(v).abs(), i128::from(m.max_speed().max(0)));
        let ((la, lmax), (ra, rmax)) = (over(l, &self.left), over(r, &self.right));
        // Scale both by the largest overshoot (cross-multiplied).
        let (num, den) = if la * rmax >= ra * lmax {
            (lmax, la)
        } else {
            (rmax, ra)
        };
        if num < den {
            l = scale(i128::from(l), num, den);
            r = scale(i128::from(r), num, den);
        }
        let clamp = |v: i64, m: &TachoMotor| {
            let max = m.max_speed().max(0);
            let v = i32::try_from(v).unwrap_or(if v < 0 { i32::MIN } else { i32::MAX });
            v.clamp(-max, max)
        };
        self.left.set_speed_sp(clamp(l, &self.left))?;
        self.right.set_speed_sp(clamp(r, &self.right))?;
        self.left.send(Command::RunForever)?;
        self.right.send(Command::RunForever)
    }

    /// Stops both motors with the end-of-move action ([`DriveBase::set_then`]).
    ///
    /// # Errors
    /// Write errors.
    pub fn stop(&self) -> Result<()> {
        self.left.set_stop_action(self.then)?;
        self.right.set_stop_action(self.then)?;
        self.left.send(Command::Stop)?;
        self.right.send(Command::Stop)
    }

    // ----- odometry ------------------------------------------------------------

    /// Reads both encoders (and the gyro) and integrates the motion since
    /// the last reading; returns the positions read.
    fn update_positions(&self) -> Result<(i32, i32)> {
        let (l, r) = (self.left.position()?, self.right.position()?);
        let gyro = self.gyro.as_ref().map(GyroSensor::angle).transpose()?;
        self.lock_odometry().update(l, r, gyro);
        Ok((l, r))
    }

    /// Updates the odometry and returns the pose: `x` forward from the
    /// start, `y` to its right, heading clockwise. Call it often while
    /// curving with [`DriveBase::drive`]: each update adds one arc (exact
    /// when the wheel speeds were constant since the last one).
    ///
    /// # Errors
    /// Read errors.
    pub fn state(&self) -> Result<Pose> {
        self.update_positions()?;
        Ok(self.lock_odometry().pose())
    }

    /// Distance driven since the start (mean of both wheels; backwards
    /// counts negative).
    ///
    /// # Errors
    /// Read errors.
    pub fn distance(&self) -> Result<Millimetres> {
        self.update_positions()?;
        let um = self.lock_odometry().distance_um();
        Ok(Millimetres(scale32(um, 1, 1000)))
    }

    /// Heading since the start, clockwise (from the gyro when there is one).
    ///
    /// # Errors
    /// Read errors.
    pub fn angle(&self) -> Result<Degrees> {
        Ok(self.state()?.heading())
    }

    /// Makes the current place the origin: pose (0, 0, 0), distance 0.
    ///
    /// # Errors
    /// Read errors.
    pub fn reset(&self) -> Result<()> {
        let (l, r) = (self.left.position()?, self.right.position()?);
        let gyro = self.gyro.as_ref().map(GyroSensor::angle).transpose()?;
        self.lock_odometry().reset(l, r, gyro);
        Ok(())
    }
}

fn cpr(m: &TachoMotor) -> i32 {
    m.count_per_rot().unwrap_or(360).max(1)
}
