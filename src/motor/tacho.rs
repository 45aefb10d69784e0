//! [`TachoMotor`]: EV3 large and medium motors, NXT motors (and the linear
//! actuators of the same class).

use crate::clock::Instant;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::memory::{RunPermit, Shared, UNKNOWN};
use super::{
    check_command, check_range, check_stop_action, command_names, stop_action_names, Command,
    NameSet, StopAction,
};
use crate::attr::{Attribute, Backing};
use crate::device::SysfsDevice;
use crate::discover::{self, DeviceInfo, Query};
use crate::error::{Error, Result};

pub use super::state::State;

mod setpoints;

fn encode<T: PartialEq + Copy>(all: &[T], value: T) -> u8 {
    all.iter()
        .position(|v| *v == value)
        .map_or(UNKNOWN, |i| i as u8 + 1)
}

/// A tacho motor (`/sys/class/tacho-motor/motorN`): EV3 large and medium
/// servo motors, NXT motors.
///
/// Opened by port, never by number. The invariants (`driver_name`,
/// `address`, `max_speed`, `count_per_rot`, `commands`, `stop_actions`) are
/// read once at open; the attributes a control loop uses are opened then and
/// kept open, so each setter is one `pwrite` and each getter one `pread`.
///
/// Setters check values before writing: a rejected value is never written,
/// and the error names the attribute, the value and the allowed range.
///
/// # Every command is written
/// Other programs (`brickrun`, python-ev3dev2 scripts, a shell `echo`)
/// write the same files, so a handle never trusts what it wrote last:
/// every command, setpoint and stop action the program asks for is written,
/// each time. Repeating [`TachoMotor::run_direct`] costs two `pwrite`s
/// (`duty_cycle_sp`, then `command`).
///
/// A program that alone drives the motor may opt in to
/// [`TachoMotor::assume_sole_owner`]: the handle then skips the repeated
/// `run-direct` command and a stop action equal to the one it wrote last.
/// **Risk:** if anything else touches the motor (another program, another
/// handle, a user at a shell), commands silently vanish: a `run_direct`
/// after someone else stopped the motor leaves it stopped.
///
/// # Protected motors
/// Once a guard protecting this motor has fired (panic, signal, exit) or
/// was dropped, run commands fail with [`Error::GuardStopped`] before
/// anything is written: no thread restarts a motor the guard stopped.
#[derive(Debug)]
pub struct TachoMotor {
    device: SysfsDevice,
    driver_name: String,
    address: String,
    max_speed: i32,
    count_per_rot: Option<i32>,
    count_per_m: Option<i32>,
    full_travel_count: Option<i32>,
    commands: NameSet,
    stop_actions: NameSet,
    command: Attribute,
    speed_sp: Attribute,
    duty_cycle_sp: Attribute,
    position_sp: Attribute,
    time_sp: Attribute,
    position: Attribute,
    speed: Attribute,
    duty_cycle: Attribute,
    state: Attribute,
    stop_action: Attribute,
    shared: Arc<Shared>,
    /// Opted in to skipping writes by [`TachoMotor::assume_sole_owner`].
    sole_owner: bool,
}

impl TachoMotor {
    /// How long [`TachoMotor::reconnect`] retries at least while the new
    /// motor's files refuse access (udev sets their group and mode a moment
    /// after the kernel creates them).
    pub const PERMISSION_WINDOW: Duration = Duration::from_secs(1);

    /// Driver names of EV3 and NXT rotation motors.
    pub const ROTATION_DRIVERS: [&'static str; 3] =
        ["lego-ev3-l-motor", "lego-ev3-m-motor", "lego-nxt-motor"];

    /// Opens the tacho motor on `port` (`outA`, `ev3-ports:outA`...) under
    /// `root`, whatever its driver.
    ///
    /// # Errors
    /// [`Error::NotFound`] (naming what is on that port), [`Error::Ambiguous`],
    /// and the errors of [`TachoMotor::from_device`].
    pub fn find(root: impl AsRef<Path>, port: &str) -> Result<TachoMotor> {
        TachoMotor::find_with(root, port, &[])
    }

    /// Opens the tacho motor on `port` if its driver is one of `drivers`
    /// (empty: any).
    ///
    /// # Errors
    /// As [`TachoMotor::find`].
    pub fn find_with(root: impl AsRef<Path>, port: &str, drivers: &[&str]) -> Result<TachoMotor> {
        let query = Query {
            class: "tacho-motor",
            port: Some(port),
            drivers,
        };
        let (device, seen) = discover::find_found(root.as_ref(), &query)?;
        TachoMotor::from_found(device, Some(seen))
    }

    /// The EV3 large motors on ports `left` and `right`, found with one
    /// scan of the class.
    pub(crate) fn large_pair(
        root: &Path,
        left: &str,
        right: &str,
    ) -> Result<(TachoMotor, TachoMotor)> {
        let query = |port| Query {
            class: "tacho-motor",
            port: Some(port),
            drivers: &["lego-ev3-l-motor"],
        };
        let mut found = discover::find_many_found(root, &[query(left), query(right)])?.into_iter();
        match (found.next(), found.next()) {
            (Some((l, l_seen)), Some((r, r_seen))) => Ok((
                TachoMotor::from_found(l, Some(l_seen))?,
                TachoMotor::from_found(r, Some(r_seen))?,
            )),
            // find_many_found returns one device per query, or an error.
            _ => Err(Error::NotFound {
                what: format!("large motors on {left} and {right}"),
                seen: String::new(),
            }),
        }
    }

    /// Opens the EV3 large motor on `port`.
    ///
    /// # Errors
    /// As [`TachoMotor::find`]; [`Error::NotFound`] names the driver found
    /// when another motor is on that port.
    pub fn large(root: impl AsRef<Path>, port: &str) -> Result<TachoMotor> {
        TachoMotor::find_with(root, port, &["lego-ev3-l-motor"])
    }

    /// Opens the EV3 medium motor on `port`.
    ///
    /// # Errors
    /// As [`TachoMotor::large`].
    pub fn medium(root: impl AsRef<Path>, port: &str) -> Result<TachoMotor> {
        TachoMotor::find_with(root, port, &["lego-ev3-m-motor"])
    }

    /// Opens an already located tacho-motor device.
    ///
    /// # Errors
    /// The errors of opening and reading the invariant attributes, e.g.
    /// [`Error::Disconnected`].
    pub fn from_device(device: SysfsDevice) -> Result<TachoMotor> {
        TachoMotor::from_found(device, None)
    }

    /// [`TachoMotor::from_device`], with the `driver_name` and `address`
    /// discovery has just read (`seen`) not read again.
    fn from_found(device: SysfsDevice, seen: Option<DeviceInfo>) -> Result<TachoMotor> {
        let (driver_name, address) = discover::identity(&device, seen)?;
        let max_speed = device.read_int("max_speed")?;
        let optional = |name: &str| match device.read_int(name) {
            Ok(v) => Ok(Some(v)),
            Err(Error::Unsupported { .. }) => Ok(None),
            Err(e) => Err(e),
        };
        let count_per_rot = optional("count_per_rot")?;
        // The kernel registers one group or the other: a rotation motor
        // has `count_per_rot` and never the linear pair.
        let (count_per_m, full_travel_count) = match count_per_rot {
            Some(_) => (None, None),
            None => (optional("count_per_m")?, optional("full_travel_count")?),
        };
        let commands = device.read_text("commands", |t| Ok(NameSet::parse(t, &command_names())))?;
        let stop_actions = device.read_text("stop_actions", |t| {
            Ok(NameSet::parse(t, &stop_action_names()))
        })?;
        let open = |name: &str| device.open_inferred(name);
        let stop_action = open("stop_action")?;
        let current = stop_action.read_text(|t| Ok(StopAction::parse(t)))?;
        let command = open("command")?;
        let key = crate::guard::DeviceKey::of(command.as_fd())
            .map_err(|e| Error::from_io(command.path(), crate::error::Operation::Open, None, e))?;
        Ok(TachoMotor {
            command,
            speed_sp: open("speed_sp")?,
            duty_cycle_sp: open("duty_cycle_sp")?,
            position_sp: open("position_sp")?,
            time_sp: open("time_sp")?,
            position: open("position")?,
            speed: open("speed")?,
            duty_cycle: open("duty_cycle")?,
            state: open("state")?,
            shared: Arc::new(Shared::new(
                current.map_or(UNKNOWN, |a| encode(&StopAction::ALL, a)),
                key,
            )),
            stop_action,
            sole_owner: false,
            device,
            driver_name,
            address,
            max_speed,
            count_per_rot,
            count_per_m,
            full_travel_count,
            commands,
            stop_actions,
        })
    }

    /// After an unplug ([`Error::Disconnected`]), waits up to `timeout` for a
    /// motor with the same driver to come back on the same port (it has a
    /// new number) and opens it. While udev has not yet given the new
    /// attribute files their permissions, opening fails with
    /// [`Error::PermissionDenied`]: that is retried for up to `timeout`, and
    /// at least [`TachoMotor::PERMISSION_WINDOW`]. A [`crate::StopGuard`]
    /// that protected this motor protects the new one.
    ///
    /// # Errors
    /// [`Error::Timeout`] when it does not come back in time;
    /// [`Error::PermissionDenied`] when it stays inaccessible.
    pub fn reconnect(&self, root: impl AsRef<Path>, timeout: Duration) -> Result<TachoMotor> {
        let drivers = [self.driver_name.as_str()];
        let query = Query {
            class: "tacho-motor",
            port: Some(&self.address),
            drivers: &drivers,
        };
        let start = Instant::now();
        let mut deadline = timeout;
        loop {
            let found = discover::wait_for(
                root.as_ref(),
                &query,
                deadline.saturating_sub(start.elapsed()),
            );
            let opened = match found {
                // The old directory may still be listed for a moment.
                Ok(device) if device.dir() == self.device.dir() => None,
                Ok(device) => Some(TachoMotor::from_device(device)),
                Err(e) => Some(Err(e)),
            };
            match opened {
                Some(Ok(mut motor)) => {
                    motor.sole_owner = self.sole_owner;
                    crate::guard::reprotect(&self.shared, &motor)?;
                    return Ok(motor);
                }
                Some(Err(Error::PermissionDenied { .. }))
                    if start.elapsed() < timeout.max(TachoMotor::PERMISSION_WINDOW) =>
                {
                    deadline = timeout.max(TachoMotor::PERMISSION_WINDOW);
                }
                Some(Err(e)) => return Err(e),
                None if start.elapsed() >= deadline => {
                    return Err(Error::Timeout {
                        what: format!("{} to come back on {}", self.driver_name, self.address),
                        waited: start.elapsed(),
                    })
                }
                None => {}
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Declares that this handle alone drives the motor, so that it may
    /// skip writes that would change nothing by what it remembers: a
    /// repeated `run-direct` command (only `duty_cycle_sp` is written) and a
    /// stop action equal to the one last written through it.
    ///
    /// **Risk:** the handle cannot see writes by anyone else. If another
    /// program, another handle or a shell stops the motor or changes its
    /// stop action, later commands through this handle can silently do
    /// nothing (the motor stays stopped after `run_direct`). Use it only
    /// when nothing else on the brick touches this motor and the saved
    /// `pwrite` matters (it is about 56 µs on a brick). A stop by the
    /// [`crate::StopGuard`] and [`TachoMotor::reset`] still make the handle
    /// forget.
    #[must_use]
    pub fn assume_sole_owner(mut self) -> TachoMotor {
        self.sole_owner = true;
        self
    }

    /// Whether [`TachoMotor::assume_sole_owner`] was declared.
    pub fn is_sole_owner(&self) -> bool {
        self.sole_owner
    }

    // ----- invariants ------------------------------------------------------

    /// The device (for attributes without a typed method).
    pub fn device(&self) -> &SysfsDevice {
        &self.device
    }
    /// `driver_name`, e.g. `lego-ev3-l-motor`.
    pub fn driver_name(&self) -> &str {
        &self.driver_name
    }
    /// `address`, e.g. `ev3-ports:outA`.
    pub fn address(&self) -> &str {
        &self.address
    }
    /// `max_speed` in counts per second (1050 large, 1560 medium).
    pub fn max_speed(&self) -> i32 {
        self.max_speed
    }
    /// `count_per_rot` (360 for LEGO rotation motors); `None` for linear
    /// actuators.
    pub fn count_per_rot(&self) -> Option<i32> {
        self.count_per_rot
    }
    /// `count_per_m` of a linear actuator.
    pub fn count_per_m(&self) -> Option<i32> {
        self.count_per_m
    }
    /// `full_travel_count` of a linear actuator.
    pub fn full_travel_count(&self) -> Option<i32> {
        self.full_travel_count
    }
    /// Whether the driver offers `command`.
    pub fn offers(&self, command: Command) -> bool {
        check_command(self.commands, command).is_ok()
    }
    /// Whether the driver offers stop action `action`.
    pub fn offers_stop_action(&self, action: StopAction) -> bool {
        check_stop_action(self.stop_actions, action).is_ok()
    }
    /// The open `command` and `stop_action` attributes (for the stop guard).
    pub(crate) fn stop_attributes(&self) -> (&Attribute, &Attribute) {
        (&self.command, &self.stop_action)
    }

    /// The open `state` attribute (for waits).
    pub(crate) fn state_attribute(&self) -> &Attribute {
        &self.state
    }

    /// `true` when this is real sysfs, `false` elsewhere (the simulated brick).
    pub fn is_sysfs(&self) -> bool {
        self.command.backing() == Backing::Sysfs
    }

    // ----- commands --------------------------------------------------------

    /// Sends `command` (one `pwrite`), after checking that the driver offers
    /// it, every time (see [`TachoMotor::assume_sole_owner`] for the one
    /// exception).
    ///
    /// # Errors
    /// [`Error::NotOffered`] without writing; [`Error::GuardStopped`] for a
    /// run command after the stop guard fired; the write's errors.
    pub fn send(&self, command: Command) -> Result<()> {
        check_command(self.commands, command)?;
        let _permit = self.permit(command)?;
        self.write_command(command)
    }

    /// Checks the guard's fence for a run command; hold the permit until
    /// the command is written.
    pub(super) fn permit(&self, command: Command) -> Result<Option<RunPermit>> {
        if !command.runs() {
            return Ok(None);
        }
        match self.shared.run_permit() {
            Some(permit) => Ok(Some(permit)),
            None => Err(Error::GuardStopped {
                path: self.device.dir().to_path_buf(),
            }),
        }
    }

    /// Writes `command`, unchecked, keeping the remembered state true.
    pub(super) fn write_command(&self, command: Command) -> Result<()> {
        let code = encode(&Command::ALL, command);
        if self.sole_owner && command == Command::RunDirect && self.shared.command.is(code) {
            return Ok(());
        }
        let write = self.shared.command.begin();
        // A reset also sets the stop action (to coast): forget it.
        let action_write = (command == Command::Reset).then(|| self.shared.stop_action.begin());
        let result = self.command.write_str(command.as_str());
        if let Some(w) = action_write {
            self.shared.stop_action.finish(w, UNKNOWN);
        }
        let done = if result.is_ok() && command != Command::Reset {
            code
        } else {
            UNKNOWN
        };
        self.shared.command.finish(write, done);
        result
    }

    /// Checks, without writing, that `command` is offered and that the
    /// guard's fence allows it.
    pub(super) fn check_send(&self, command: Command) -> Result<()> {
        check_command(self.commands, command)?;
        self.permit(command).map(drop)
    }

    /// Checks `command` and the fence, writes the setpoints, then the
    /// command. The setpoints must have been checked already.
    fn run_with(&self, command: Command, setpoints: impl FnOnce() -> Result<()>) -> Result<()> {
        check_command(self.commands, command)?;
        let _permit = self.permit(command)?;
        setpoints()?;
        self.write_command(command)
    }

    #[inline(always)]
    pub(super) fn check_speed(&self, speed: i32) -> Result<()> {
        let max = i64::from(self.max_speed);
        check_range("speed_sp", i64::from(speed), -max, max)
    }

    /// Runs at `speed` counts/s until stopped.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] when |speed| > `max_speed`, [`Error::NotOffered`]
    /// and [`Error::GuardStopped`], all without writing; write errors.
    pub fn run_forever(&self, speed: i32) -> Result<()> {
        self.check_speed(speed)?;
        self.run_with(Command::RunForever, || self.write_speed_sp(speed))
    }

    /// Runs at `speed` for `millis` ms, then stops with the stop action.
    ///
    /// # Errors
    /// As [`TachoMotor::run_forever`]; [`Error::OutOfRange`] for a negative
    /// time. Every value is checked before the first write.
    pub fn run_timed(&self, speed: i32, millis: i32) -> Result<()> {
        check_time(millis)?;
        self.check_speed(speed)?;
        self.run_with(Command::RunTimed, || {
            self.write_time_sp(millis)?;
            self.write_speed_sp(speed)
        })
    }

    /// Runs to absolute position `counts` at `speed` (its sign is ignored:
    /// the driver picks the direction), then applies the stop action.
    ///
    /// # Errors
    /// As [`TachoMotor::run_forever`]; every value is checked before the
    /// first write.
    pub fn run_to_abs_pos(&self, counts: i32, speed: i32) -> Result<()> {
        self.check_speed(speed)?;
        self.run_with(Command::RunToAbsPos, || {
            self.set_position_sp(counts)?;
            self.write_speed_sp(speed)
        })
    }

    /// Runs `counts` further than the last relative target (or the current
    /// position), at `speed`. Sending it twice moves twice.
    ///
    /// # Errors
    /// As [`TachoMotor::run_to_abs_pos`].
    pub fn run_to_rel_pos(&self, counts: i32, speed: i32) -> Result<()> {
        self.check_speed(speed)?;
        self.run_with(Command::RunToRelPos, || {
            self.set_position_sp(counts)?;
            self.write_speed_sp(speed)
        })
    }

    /// Runs open-loop at `duty` percent (-100..=100): writes
    /// `duty_cycle_sp`, then the `run-direct` command (always: another
    /// program may have stopped the motor since the last call).
    ///
    /// # Errors
    /// As [`TachoMotor::run_forever`].
    pub fn run_direct(&self, duty: i32) -> Result<()> {
        check_duty(duty)?;
        self.run_with(Command::RunDirect, || {
            self.duty_cycle_sp.write_int(i64::from(duty))
        })
    }

    /// Stops with the current stop action.
    ///
    /// # Errors
    /// Write errors.
    pub fn stop(&self) -> Result<()> {
        self.send(Command::Stop)
    }

    /// Writes the stop action, then stops.
    ///
    /// # Errors
    /// [`Error::NotOffered`]; write errors.
    pub fn stop_with(&self, action: StopAction) -> Result<()> {
        self.set_stop_action(action)?;
        self.send(Command::Stop)
    }

    /// Resets the motor: coast, position 0, every setpoint and PID constant
    /// back to its default. Forgets the remembered state.
    ///
    /// # Errors
    /// Write errors.
    pub fn reset(&self) -> Result<()> {
        self.send(Command::Reset)
    }

    // ----- measurements ------------------------------------------------------

    /// `position` in tacho counts.
    ///
    /// # Errors
    /// Read errors ([`Error::Disconnected`] after an unplug).
    #[inline(always)]
    pub fn position(&self) -> Result<i32> {
        self.position.read_int()
    }
    /// Sets the current `position` to `counts` (the motor does not move).
    ///
    /// # Errors
    /// Write errors.
    #[inline(always)]
    pub fn set_position(&self, counts: i32) -> Result<()> {
        self.position.write_int(i64::from(counts))
    }
    /// `speed` in counts/s.
    ///
    /// # Errors
    /// Read errors.
    #[inline(always)]
    pub fn speed(&self) -> Result<i32> {
        self.speed.read_int()
    }
    /// `duty_cycle` in percent.
    ///
    /// # Errors
    /// Read errors.
    #[inline(always)]
    pub fn duty_cycle(&self) -> Result<i32> {
        self.duty_cycle.read_int()
    }
    /// `state` as flags.
    ///
    /// # Errors
    /// Read errors; [`Error::Parse`] on an unknown flag.
    pub fn state(&self) -> Result<State> {
        self.state.read_flags(&State::NAMES).map(State::from_bits)
    }
}

pub(super) fn check_time(millis: i32) -> Result<()> {
    check_range("time_sp", i64::from(millis), 0, i64::from(i32::MAX))
}

#[inline(always)]
pub(super) fn check_duty(duty: i32) -> Result<()> {
    check_range("duty_cycle_sp", i64::from(duty), -100, 100)
}
