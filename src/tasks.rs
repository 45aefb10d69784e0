//! Moves and waits as futures (feature `async`), so that one thread runs an
//! arm, a drive base and a button watcher at the same time, as Pybricks'
//! `multitask` does, with no thread per task.
//!
//! ```no_run
//! use ev3sysfs::prelude::*;
//! use ev3sysfs::tasks::{self, block_on, or, zip};
//! # fn demo(arm: &TachoMotor, base: &DriveBase, buttons: &ev3sysfs::buttons::Buttons) -> Result<()> {
//! block_on(async {
//!     let arm_moves = tasks::run_angle(arm, DegPerSec(500), Degrees(90), Then::Hold);
//!     let square_side = tasks::straight(base, Millimetres(300));
//!     let both = async {
//!         let (a, b) = zip(arm_moves, square_side).await;
//!         a.and(b).map(|_| "done")
//!     };
//!     let abort = async {
//!         tasks::button_pressed(buttons, Some(ev3sysfs::buttons::Button::Backspace)).await?;
//!         base.stop()?;
//!         Ok("aborted")
//!     };
//!     or(both, abort).await
//! })?;
//! # Ok(()) }
//! ```
//!
//! # The runtime, and why
//! [`block_on`] is `async_io::block_on`: it runs the future on the calling
//! thread and drives async-io's reactor (epoll) and timers there while it
//! waits, so tasks never get a thread of their own: async-io adds one
//! helper thread ("async-io") at first use, which idles while `block_on`
//! drives the reactor, whatever the number of tasks. The combinators
//! ([`zip`], [`or`]: the first of two to finish, the other dropped) are futures-lite's. Both are smol's building
//! blocks, maintained, free of `unsafe` in this crate's use, and far smaller
//! than a multi-threaded runtime (no thread pool on a one-core, 64 MB brick).
//! Measured: one program waiting for a move or a button press is 350 728
//! bytes with [`crate::wait::WaitAny`] and 400 200 bytes with these futures
//! (static armv5te release build, `scripts/cargo-armv5te build --release`):
//! the runtime costs about 48 KiB.
//!
//! # How the futures wait
//! Button futures sleep in epoll on the input device (`POLLIN`: woken by
//! the press itself). A sysfs attribute is always "readable" to epoll and
//! its `POLLPRI` is not what async-io waits for, so motor states and sensor
//! values are re-read on a timer: every [`MOTOR_PERIOD`] and
//! [`SENSOR_PERIOD`] on a brick (ev3dev checks `state` every 50 ms), every
//! 10 ms elsewhere. Each re-read is one `pread`; between them the thread
//! sleeps in the reactor.

use std::future::Future;
use std::time::{Duration, Instant};

pub use futures_lite::future::{or, zip};

use crate::buttons::{Action, Button, Buttons};
use crate::drive::DriveBase;
use crate::error::{Error, Result};
use crate::motor::{Finished, State, TachoMotor, Then};
use crate::sensor::{Sensor, TouchSensor};
use crate::units::{Degrees, Millimetres, Speed};
use crate::wait::Threshold;

/// How often a motor's `state` is re-read on a brick.
pub const MOTOR_PERIOD: Duration = Duration::from_millis(20);
/// How often a sensor value is re-read on a brick.
pub const SENSOR_PERIOD: Duration = Duration::from_millis(10);
/// The re-read period elsewhere than sysfs (the simulated brick).
const OTHER_PERIOD: Duration = Duration::from_millis(10);

/// Runs `future` to completion on this thread, driving the timers and the
/// input devices it waits on (async-io's reactor).
pub fn block_on<T>(future: impl Future<Output = T>) -> T {
    async_io::block_on(future)
}

/// Sleeps `duration` without blocking the other tasks.
pub async fn sleep(duration: Duration) {
    async_io::Timer::after(duration).await;
}

fn motor_period(motor: &TachoMotor) -> Duration {
    if motor.is_sysfs() {
        MOTOR_PERIOD
    } else {
        OTHER_PERIOD
    }
}

/// Waits until `done(state)` holds for `motor`, at most `timeout`.
///
/// # Errors
/// [`Error::Timeout`]; read errors.
pub async fn motor_until(
    motor: &TachoMotor,
    mut done: impl FnMut(State) -> bool,
    timeout: Duration,
) -> Result<State> {
    let start = Instant::now();
    let period = motor_period(motor);
    loop {
        let state = motor.state()?;
        if done(state) {
            return Ok(state);
        }
        let left = timeout.saturating_sub(start.elapsed());
        if left.is_zero() {
            return Err(Error::Timeout {
                what: format!(
                    "{} on {} (state: [{state}])",
                    motor.driver_name(),
                    motor.address()
                ),
                waited: start.elapsed(),
            });
        }
        sleep(left.min(period)).await;
    }
}

/// Waits for the end of a move `motor` was given (it no longer runs, or
/// it stalled: then it is stopped with `then`).
async fn finish_move(motor: &TachoMotor, then: Then) -> Result<Finished> {
    // The simulated brick shows `running` a tick after the command.
    if !motor.is_sysfs() {
        sleep(OTHER_PERIOD * 2).await;
    }
    let state = motor_until(
        motor,
        |s| !s.running() || s.stalled(),
        crate::motor::STALL_WAIT_LIMIT,
    )
    .await?;
    if state.stalled() && state.running() {
        motor.stop_with(then)?;
        return Ok(Finished::Stalled);
    }
    Ok(Finished::Done)
}

/// [`TachoMotor::run_angle`] as a future: starts the move, then waits for
/// it without blocking the other tasks.
///
/// # Errors
/// As [`TachoMotor::run_angle`].
pub async fn run_angle(
    motor: &TachoMotor,
    speed: impl Speed,
    angle: Degrees,
    then: Then,
) -> Result<Finished> {
    motor.run_angle(speed, angle, then, false)?;
    finish_move(motor, then).await
}

/// [`TachoMotor::run_target`] as a future.
///
/// # Errors
/// As [`TachoMotor::run_target`].
pub async fn run_target(
    motor: &TachoMotor,
    speed: impl Speed,
    target: Degrees,
    then: Then,
) -> Result<Finished> {
    motor.run_target(speed, target, then, false)?;
    finish_move(motor, then).await
}

/// Waits for the drive base's current move, updating its odometry.
async fn finish_drive(base: &DriveBase) -> Result<Finished> {
    let period = motor_period(base.left());
    let start = Instant::now();
    let grace = if base.left().is_sysfs() {
        Duration::ZERO
    } else {
        Duration::from_millis(100)
    };
    let mut seen_running = false;
    loop {
        match base.check()? {
            Some(Finished::Done) if !seen_running && start.elapsed() < grace => {}
            Some(finished) => return Ok(finished),
            None => seen_running = true,
        }
        if start.elapsed() > crate::motor::STALL_WAIT_LIMIT {
            base.stop()?;
            return Err(Error::Timeout {
                what: "drive base move".to_owned(),
                waited: start.elapsed(),
            });
        }
        sleep(period).await;
    }
}

/// [`DriveBase::straight`] as a future (encoders only: the blocking
/// version is the one that holds a gyro heading).
///
/// # Errors
/// As [`DriveBase::straight`].
pub async fn straight(base: &DriveBase, distance: Millimetres) -> Result<Finished> {
    base.start_straight(distance)?;
    finish_drive(base).await
}

/// [`DriveBase::turn`] as a future (encoders only).
///
/// # Errors
/// As [`DriveBase::turn`].
pub async fn turn(base: &DriveBase, angle: Degrees) -> Result<Finished> {
    base.start_turn(angle)?;
    finish_drive(base).await
}

/// Waits until `button` (any for `None`) is pressed after the call, and
/// says which. Sleeps in the reactor on the input device: the press wakes
/// it. Drops the events queued on `buttons` before the call.
///
/// Only one future at a time may wait on one [`Buttons`] (epoll takes a
/// descriptor once): open one [`Buttons`] per watcher.
///
/// # Errors
/// Read errors ([`Error::Disconnected`]); registering the descriptor.
pub async fn button_pressed(buttons: &Buttons, button: Option<Button>) -> Result<Button> {
    while buttons.next_event(Some(Duration::ZERO))?.is_some() {}
    let watched = async_io::Async::new(buttons)
        .map_err(|e| Error::from_io(buttons.path(), crate::error::Operation::Poll, None, e))?;
    loop {
        while let Some(event) = buttons.next_event(Some(Duration::ZERO))? {
            if event.action == Action::Pressed && button.is_none_or(|b| b == event.button) {
                return Ok(event.button);
            }
        }
        watched
            .readable()
            .await
            .map_err(|e| Error::from_io(buttons.path(), crate::error::Operation::Poll, None, e))?;
    }
}

/// Waits until raw `value<index>` of `sensor` crosses `threshold` and
/// returns it (the sensor's current mode: set it first).
///
/// # Errors
/// Read errors.
pub async fn sensor_value(sensor: &Sensor, index: usize, threshold: Threshold) -> Result<i32> {
    let period = if sensor
        .value_attribute(0)
        .is_ok_and(|a| a.backing() == crate::Backing::Sysfs)
    {
        SENSOR_PERIOD
    } else {
        OTHER_PERIOD
    };
    loop {
        let value = sensor.value(index)?;
        if threshold.holds(value) {
            return Ok(value);
        }
        sleep(period).await;
    }
}

/// Waits until the touch sensor is `pressed` (or released).
///
/// # Errors
/// Read errors.
pub async fn touch(sensor: &TouchSensor, pressed: bool) -> Result<()> {
    let threshold = if pressed {
        Threshold::Above(0)
    } else {
        Threshold::Below(1)
    };
    sensor_value(sensor.sensor(), 0, threshold).await.map(drop)
}
