//! Moves and waits as futures (feature `async`), so that one thread runs an
//! arm, a drive base and a button watcher at the same time, as Pybricks'
//! `multitask` does, with no thread per task.
//!
//! ```no_run
//! use ev3sysfs::prelude::*;
//! use ev3sysfs::tasks::{self, block_on, or, zip};
//! # fn demo(arm: &TachoMotor, base: &DriveBase, buttons: &ev3sysfs::buttons::Buttons) -> Result<()> {
//! let outcome = block_on(async {
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
//! })??;
//! println!("{outcome}");
//! # Ok(()) }
//! ```
//!
//! # The runtime, and why
//! [`block_on`] is this crate's own small reactor (`tasks/reactor.rs`): it
//! runs the future on the calling thread and, while it is pending, makes
//! **one `poll(2)` per wake-up** on every descriptor its waits registered,
//! with the earliest of their deadlines as the timeout (rounded up to whole
//! milliseconds; a deadline that passed while the futures ran is looked at
//! once with a 0 ms timeout, and when the futures cannot keep up with
//! their periods, every following wake-up sleeps at least 1 ms until they
//! do: never a spin). No thread is
//! started (not even a helper), no epoll instance, and no panic path: a
//! `poll` error comes back as an [`Error`]. The combinators ([`zip`],
//! [`or`]: the first of two to finish, the other dropped) are
//! futures-lite's (without its `std` feature: its dependencies are
//! futures-core and pin-project-lite alone). The futures here wait only
//! under [`block_on`]; polled by another executor, each wait blocks its
//! thread in a `poll(2)` of its own (correct, not concurrent). A waker
//! woken from another thread is seen at the next wake-up (at the latest
//! the earliest deadline: every wait here has one).
//!
//! Measured (static armv5te release builds, `scripts/cargo-armv5te build
//! --release`, a program that waits for a move or a button press): 338 520
//! bytes with these futures, 343 760 with [`crate::wait::WaitAny`], 400 264
//! with the async-io runtime this module used before.
//!
//! # How the futures wait
//! * Motors: `POLLPRI` on the motor's `state` (a drive base: both wheels'),
//!   which ev3dev notifies when the flags change; since it checks them at
//!   most every 50 ms and may not notify at all, every wait also re-reads
//!   `state` every [`MOTOR_PERIOD`] on a brick (10 ms elsewhere).
//! * Buttons: `POLLIN` on the input device: the press itself wakes the
//!   wait (re-checked every [`BUTTON_PERIOD`] anyway).
//! * Sensor values: `POLLPRI` on the value file (most drivers never
//!   notify), re-read every [`SENSOR_PERIOD`].
//! * [`straight`] holds its heading as [`DriveBase::straight`] does: it
//!   corrects both wheels every [`HOLD_PERIOD`](crate::drive::HOLD_PERIOD)
//!   on the reactor's timer.
//!
//! Each re-read is one `pread`; between wake-ups the thread sleeps in
//! `poll(2)`.

mod reactor;

use std::os::fd::AsFd;
use std::time::Duration;

pub use futures_lite::future::{or, zip};
pub use reactor::block_on;

use crate::clock::Instant;
use reactor::{now, WakeUp};

use crate::buttons::{Action, Button, Buttons};
use crate::drive::{DriveBase, Hold, Step};
use crate::error::{Error, Result};
use crate::motor::{Finished, State, TachoMotor, Then};
use crate::sensor::{Sensor, TouchSensor};
use crate::units::{Degrees, Millimetres, Speed};
use crate::wait::Threshold;

/// How often a motor's `state` is re-read on a brick when no notification
/// came (as [`crate::wait::WaitAny::MOTOR_PERIOD`]).
pub const MOTOR_PERIOD: Duration = Duration::from_millis(100);
/// How often a sensor value is re-read on a brick.
pub const SENSOR_PERIOD: Duration = Duration::from_millis(10);
/// How often a button wait looks at the input device when it did not
/// wake.
pub const BUTTON_PERIOD: Duration = Duration::from_secs(1);
/// The re-read period elsewhere than sysfs (the simulated brick).
const OTHER_PERIOD: Duration = Duration::from_millis(10);

/// Sleeps `duration` without blocking the other tasks (a deadline in the
/// reactor).
pub async fn sleep(duration: Duration) {
    // A wait without a descriptor cannot fail in the reactor; outside it,
    // an interrupted sleep ends early.
    let _ = WakeUp::new(None, 0, Instant::now() + duration).await;
}

/// Until `motor`'s `state` is notified or `period` passes (at most
/// `deadline`).
async fn state_changed(motor: &TachoMotor, period: Duration, deadline: Instant) -> Result<()> {
    let at = deadline.min(now() + period);
    WakeUp::new(Some(motor.state_attribute().as_fd()), libc::POLLPRI, at).await
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
        let waited = now().saturating_duration_since(start);
        if waited >= timeout {
            return Err(motor.state_timeout(state, waited));
        }
        state_changed(motor, period, start + timeout).await?;
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
    let deadline = start + crate::motor::STALL_WAIT_LIMIT;
    let grace = if base.left().is_sysfs() {
        Duration::ZERO
    } else {
        Duration::from_millis(100)
    };
    let mut seen_running = false;
    loop {
        let waited = now().saturating_duration_since(start);
        match base.check()? {
            Some(Finished::Done) if !seen_running && waited < grace => {}
            Some(finished) => return Ok(finished),
            None => seen_running = true,
        }
        if waited > crate::motor::STALL_WAIT_LIMIT {
            base.stop()?;
            return Err(Error::Timeout {
                what: "drive base move".to_owned(),
                waited,
            });
        }
        // Either wheel's notification (or the period) wakes it.
        or(
            state_changed(base.left(), period, deadline),
            state_changed(base.right(), period, deadline),
        )
        .await?;
    }
}

/// [`DriveBase::straight`] as a future: the heading held the same way
/// (gyro or encoders, corrected every
/// [`HOLD_PERIOD`](crate::drive::HOLD_PERIOD) on the reactor's timer), so
/// a dragged wheel does not bend it; the other tasks run in between.
///
/// # Errors
/// As [`DriveBase::straight`].
pub async fn straight(base: &DriveBase, distance: Millimetres) -> Result<Finished> {
    let Some(mut hold) = Hold::begin(base, distance)? else {
        base.start_straight(distance)?;
        return finish_drive(base).await;
    };
    let mut next = Instant::now();
    loop {
        match hold.step(base)? {
            Step::Go => {}
            Step::Stalled => return Ok(Finished::Stalled),
            Step::Final => break,
        }
        next += crate::drive::HOLD_PERIOD;
        WakeUp::new(None, 0, next).await?;
    }
    hold.finish(base)?;
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
/// says which. Sleeps in the reactor on the input device (`POLLIN`: the
/// press wakes it). Drops the events queued on `buttons` before the call;
/// two watchers on one [`Buttons`] share (and consume) its events.
///
/// # Errors
/// Read errors ([`Error::Disconnected`]); a `poll` error.
pub async fn button_pressed(buttons: &Buttons, button: Option<Button>) -> Result<Button> {
    while buttons.next_event(Some(Duration::ZERO))?.is_some() {}
    loop {
        while let Some(event) = buttons.next_event(Some(Duration::ZERO))? {
            if event.action == Action::Pressed && button.is_none_or(|b| b == event.button) {
                return Ok(event.button);
            }
        }
        let at = now() + BUTTON_PERIOD;
        WakeUp::new(Some(buttons.as_fd()), libc::POLLIN, at).await?;
    }
}

/// Waits until raw `value<index>` of `sensor` crosses `threshold` and
/// returns it (the sensor's current mode: set it first).
///
/// # Errors
/// Read errors.
pub async fn sensor_value(sensor: &Sensor, index: usize, threshold: Threshold) -> Result<i32> {
    let attribute = sensor.value_attribute(index)?;
    let period = if attribute.backing() == crate::Backing::Sysfs {
        SENSOR_PERIOD
    } else {
        OTHER_PERIOD
    };
    loop {
        let value = attribute.read_int()?;
        if threshold.holds(value) {
            return Ok(value);
        }
        let at = now() + period;
        WakeUp::new(Some(attribute.as_fd()), libc::POLLPRI, at).await?;
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
