//! [`TachoMotor`]: EV3 large and medium motors, NXT motors (and the linear
//! actuators of the same class).

use std::path::Path;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{
    check_command, check_range, check_stop_action, command_names, stop_action_names, Command,
    NameSet, Polarity, StopAction,
};
use crate::attr::{Attribute, Backing};
use crate::device::SysfsDevice;
use crate::discover::{self, Query};
use crate::error::{Error, Result};

pub use super::state::{Pid, State};

const UNKNOWN: u8 = 0;

/// A handle's memory of the command it sent last, shared with the stop
/// guard: a stop sent by the guard makes the handle forget, so that the
/// next `run_direct` is written again.
#[derive(Debug, Clone)]
pub(crate) struct CommandMemory(Arc<AtomicU8>);

impl CommandMemory {
    pub(crate) fn forget(&self) {
        self.0.store(UNKNOWN, Ordering::Relaxed);
    }
}

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
/// # Remembered state
/// A handle remembers, to skip writes that would change nothing:
/// * the stop action last written (or read at open): [`TachoMotor::set_stop_action`]
///   with the same action writes nothing;
/// * whether `run-direct` is the active command it sent:
///   [`TachoMotor::run_direct`] then only writes `duty_cycle_sp`, which the
///   kernel applies at once.
///
/// `reset` forgets both, and any other command sent through the handle
/// updates the second. A change made by another program is not seen: use one
/// handle per motor.
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
    remembered_stop_action: AtomicU8,
    last_command: Arc<AtomicU8>,
}

impl TachoMotor {
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
        TachoMotor::from_device(discover::find(root, &query)?)
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
        let driver_name = device.read_string("driver_name")?;
        let address = device.read_string("address")?;
        let max_speed = device.read_int("max_speed")?;
        let optional = |name: &str| match device.read_int(name) {
            Ok(v) => Ok(Some(v)),
            Err(Error::Unsupported { .. }) => Ok(None),
            Err(e) => Err(e),
        };
        let count_per_rot = optional("count_per_rot")?;
        let count_per_m = optional("count_per_m")?;
        let full_travel_count = optional("full_travel_count")?;
        let commands = device.read_text("commands", |t| Ok(NameSet::parse(t, &command_names())))?;
        let stop_actions = device.read_text("stop_actions", |t| {
            Ok(NameSet::parse(t, &stop_action_names()))
        })?;
        let open = |name: &str| Attribute::open_inferred(device.dir().join(name));
        let stop_action = open("stop_action")?;
        let current = stop_action.read_text(|t| Ok(StopAction::parse(t)))?;
        Ok(TachoMotor {
            command: open("command")?,
            speed_sp: open("speed_sp")?,
            duty_cycle_sp: open("duty_cycle_sp")?,
            position_sp: open("position_sp")?,
            time_sp: open("time_sp")?,
            position: open("position")?,
            speed: open("speed")?,
            duty_cycle: open("duty_cycle")?,
            state: open("state")?,
            remembered_stop_action: AtomicU8::new(
                current.map_or(UNKNOWN, |a| encode(&StopAction::ALL, a)),
            ),
            stop_action,
            last_command: Arc::new(AtomicU8::new(UNKNOWN)),
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
    /// new number) and opens it.
    ///
    /// # Errors
    /// [`Error::Timeout`] when it does not come back in time.
    pub fn reconnect(&self, root: impl AsRef<Path>, timeout: Duration) -> Result<TachoMotor> {
        let drivers = [self.driver_name.as_str()];
        let query = Query {
            class: "tacho-motor",
            port: Some(&self.address),
            drivers: &drivers,
        };
        let start = Instant::now();
        loop {
            let device = discover::wait_for(
                root.as_ref(),
                &query,
                timeout.saturating_sub(start.elapsed()),
            )?;
            // The old directory may still be listed for a moment.
            if device.dir() != self.device.dir() {
                return TachoMotor::from_device(device);
            }
            if start.elapsed() >= timeout {
                return Err(Error::Timeout {
                    what: format!("{} to come back on {}", self.driver_name, self.address),
                    waited: start.elapsed(),
                });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
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

    /// The memory of the last command sent (for the stop guard).
    pub(crate) fn command_memory(&self) -> CommandMemory {
        CommandMemory(Arc::clone(&self.last_command))
    }

    /// The open `state` attribute (for waits).
    pub(super) fn state_attribute(&self) -> &Attribute {
        &self.state
    }

    /// `true` when this is real sysfs, `false` elsewhere (the simulated brick).
    pub fn is_sysfs(&self) -> bool {
        self.command.backing() == Backing::Sysfs
    }

    // ----- commands --------------------------------------------------------

    /// Sends `command` (one `pwrite`), after checking that the driver offers
    /// it. `run-direct` while run-direct is already active is skipped.
    ///
    /// # Errors
    /// [`Error::NotOffered`] without writing; the write's errors.
    pub fn send(&self, command: Command) -> Result<()> {
        check_command(self.commands, command)?;
        let code = encode(&Command::ALL, command);
        if command == Command::RunDirect && self.last_command.load(Ordering::Relaxed) == code {
            return Ok(());
        }
        // Forget first: if the write fails, nothing stale is remembered.
        self.last_command.store(UNKNOWN, Ordering::Relaxed);
        self.command.write_str(command.as_str())?;
        if command == Command::Reset {
            self.remembered_stop_action
                .store(UNKNOWN, Ordering::Relaxed);
        } else {
            self.last_command.store(code, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Runs at `speed` counts/s until stopped.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] when |speed| > `max_speed`; write errors.
    pub fn run_forever(&self, speed: i32) -> Result<()> {
        self.set_speed_sp(speed)?;
        self.send(Command::RunForever)
    }

    /// Runs at `speed` for `millis` ms, then stops with the stop action.
    ///
    /// # Errors
    /// As [`TachoMotor::run_forever`]; [`Error::OutOfRange`] for a negative
    /// time.
    pub fn run_timed(&self, speed: i32, millis: i32) -> Result<()> {
        self.set_time_sp(millis)?;
        self.set_speed_sp(speed)?;
        self.send(Command::RunTimed)
    }

    /// Runs to absolute position `counts` at `speed` (its sign is ignored:
    /// the driver picks the direction), then applies the stop action.
    ///
    /// # Errors
    /// As [`TachoMotor::run_forever`].
    pub fn run_to_abs_pos(&self, counts: i32, speed: i32) -> Result<()> {
        self.set_position_sp(counts)?;
        self.set_speed_sp(speed)?;
        self.send(Command::RunToAbsPos)
    }

    /// Runs `counts` further than the last relative target (or the current
    /// position), at `speed`. Sending it twice moves twice.
    ///
    /// # Errors
    /// As [`TachoMotor::run_forever`].
    pub fn run_to_rel_pos(&self, counts: i32, speed: i32) -> Result<()> {
        self.set_position_sp(counts)?;
        self.set_speed_sp(speed)?;
        self.send(Command::RunToRelPos)
    }

    /// Runs open-loop at `duty` percent (-100..=100). While run-direct is
    /// active, a new duty is one `pwrite` and applies at once.
    ///
    /// # Errors
    /// [`Error::OutOfRange`]; write errors.
    pub fn run_direct(&self, duty: i32) -> Result<()> {
        self.set_duty_cycle_sp(duty)?;
        self.send(Command::RunDirect)
    }

    /// Stops with the current stop action.
    ///
    /// # Errors
    /// Write errors.
    pub fn stop(&self) -> Result<()> {
        self.send(Command::Stop)
    }

    /// Sets the stop action (skipped if unchanged), then stops.
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

    // ----- setpoints ---------------------------------------------------------

    /// `speed_sp` in counts/s, within ±`max_speed`.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] without writing; write errors.
    pub fn set_speed_sp(&self, speed: i32) -> Result<()> {
        let max = i64::from(self.max_speed);
        check_range("speed_sp", i64::from(speed), -max, max)?;
        self.speed_sp.write_int(i64::from(speed))
    }
    /// Reads `speed_sp`.
    ///
    /// # Errors
    /// Read errors.
    pub fn speed_sp(&self) -> Result<i32> {
        self.speed_sp.read_int()
    }

    /// `duty_cycle_sp` in percent, -100..=100.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] without writing; write errors.
    pub fn set_duty_cycle_sp(&self, duty: i32) -> Result<()> {
        check_range("duty_cycle_sp", i64::from(duty), -100, 100)?;
        self.duty_cycle_sp.write_int(i64::from(duty))
    }
    /// Reads `duty_cycle_sp`.
    ///
    /// # Errors
    /// Read errors.
    pub fn duty_cycle_sp(&self) -> Result<i32> {
        self.duty_cycle_sp.read_int()
    }

    /// `position_sp` in counts (any 32-bit value).
    ///
    /// # Errors
    /// Write errors.
    pub fn set_position_sp(&self, counts: i32) -> Result<()> {
        self.position_sp.write_int(i64::from(counts))
    }
    /// Reads `position_sp`.
    ///
    /// # Errors
    /// Read errors.
    pub fn position_sp(&self) -> Result<i32> {
        self.position_sp.read_int()
    }

    /// `time_sp` in ms, at least 0.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] without writing; write errors.
    pub fn set_time_sp(&self, millis: i32) -> Result<()> {
        check_range("time_sp", i64::from(millis), 0, i64::from(i32::MAX))?;
        self.time_sp.write_int(i64::from(millis))
    }
    /// Reads `time_sp`.
    ///
    /// # Errors
    /// Read errors.
    pub fn time_sp(&self) -> Result<i32> {
        self.time_sp.read_int()
    }

    /// `ramp_up_sp`: ms from 0 to `max_speed`, 0..=60000.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] without writing; write errors.
    pub fn set_ramp_up_sp(&self, millis: i32) -> Result<()> {
        check_range("ramp_up_sp", i64::from(millis), 0, 60_000)?;
        self.device.write_int("ramp_up_sp", i64::from(millis))
    }
    /// Reads `ramp_up_sp`.
    ///
    /// # Errors
    /// Read errors.
    pub fn ramp_up_sp(&self) -> Result<i32> {
        self.device.read_int("ramp_up_sp")
    }
    /// `ramp_down_sp`: ms from `max_speed` to 0, 0..=60000.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] without writing; write errors.
    pub fn set_ramp_down_sp(&self, millis: i32) -> Result<()> {
        check_range("ramp_down_sp", i64::from(millis), 0, 60_000)?;
        self.device.write_int("ramp_down_sp", i64::from(millis))
    }
    /// Reads `ramp_down_sp`.
    ///
    /// # Errors
    /// Read errors.
    pub fn ramp_down_sp(&self) -> Result<i32> {
        self.device.read_int("ramp_down_sp")
    }

    /// Sets the stop action; writes nothing when it is the remembered one.
    ///
    /// # Errors
    /// [`Error::NotOffered`] without writing; write errors.
    pub fn set_stop_action(&self, action: StopAction) -> Result<()> {
        check_stop_action(self.stop_actions, action)?;
        let code = encode(&StopAction::ALL, action);
        if self.remembered_stop_action.load(Ordering::Relaxed) == code {
            return Ok(());
        }
        self.remembered_stop_action
            .store(UNKNOWN, Ordering::Relaxed);
        self.stop_action.write_str(action.as_str())?;
        self.remembered_stop_action.store(code, Ordering::Relaxed);
        Ok(())
    }
    /// Reads `stop_action`.
    ///
    /// # Errors
    /// Read errors; [`Error::Parse`] for an unknown action.
    pub fn stop_action(&self) -> Result<StopAction> {
        self.stop_action.read_text(|t| {
            StopAction::parse(t)
                .ok_or_else(|| Error::parse(self.stop_action.path(), t.as_bytes(), "a stop action"))
        })
    }

    /// Sets `polarity`.
    ///
    /// # Errors
    /// Write errors.
    pub fn set_polarity(&self, polarity: Polarity) -> Result<()> {
        self.device.write_str("polarity", polarity.as_str())
    }
    /// Reads `polarity`.
    ///
    /// # Errors
    /// Read errors; [`Error::Parse`] for an unknown value.
    pub fn polarity(&self) -> Result<Polarity> {
        let attr = self.device.attribute("polarity")?;
        attr.read_text(|t| {
            Polarity::parse(t)
                .ok_or_else(|| Error::parse(attr.path(), t.as_bytes(), "normal or inversed"))
        })
    }

    /// Reads the `speed_pid` constants.
    ///
    /// # Errors
    /// Read errors; [`Error::Unsupported`] when the driver has none.
    pub fn speed_pid(&self) -> Result<Pid> {
        read_pid(&self.device.child("speed_pid")?)
    }
    /// Writes the `speed_pid` constants (each at least 0).
    ///
    /// # Errors
    /// [`Error::OutOfRange`] without writing; write errors.
    pub fn set_speed_pid(&self, pid: Pid) -> Result<()> {
        write_pid(&self.device.child("speed_pid")?, pid)
    }
    /// Reads the `hold_pid` constants.
    ///
    /// # Errors
    /// As [`TachoMotor::speed_pid`].
    pub fn hold_pid(&self) -> Result<Pid> {
        read_pid(&self.device.child("hold_pid")?)
    }
    /// Writes the `hold_pid` constants (each at least 0).
    ///
    /// # Errors
    /// As [`TachoMotor::set_speed_pid`].
    pub fn set_hold_pid(&self, pid: Pid) -> Result<()> {
        write_pid(&self.device.child("hold_pid")?, pid)
    }

    // ----- measurements ------------------------------------------------------

    /// `position` in tacho counts.
    ///
    /// # Errors
    /// Read errors ([`Error::Disconnected`] after an unplug).
    pub fn position(&self) -> Result<i32> {
        self.position.read_int()
    }
    /// Sets the current `position` to `counts` (the motor does not move).
    ///
    /// # Errors
    /// Write errors.
    pub fn set_position(&self, counts: i32) -> Result<()> {
        self.position.write_int(i64::from(counts))
    }
    /// `speed` in counts/s.
    ///
    /// # Errors
    /// Read errors.
    pub fn speed(&self) -> Result<i32> {
        self.speed.read_int()
    }
    /// `duty_cycle` in percent.
    ///
    /// # Errors
    /// Read errors.
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

fn read_pid(dev: &SysfsDevice) -> Result<Pid> {
    Ok(Pid {
        kp: dev.read_int("Kp")?,
        ki: dev.read_int("Ki")?,
        kd: dev.read_int("Kd")?,
    })
}

fn write_pid(dev: &SysfsDevice, pid: Pid) -> Result<()> {
    // Check all three before writing any.
    for (name, value) in [("Kp", pid.kp), ("Ki", pid.ki), ("Kd", pid.kd)] {
        check_range(name, i64::from(value), 0, i64::from(i32::MAX))?;
    }
    dev.write_int("Kp", i64::from(pid.kp))?;
    dev.write_int("Ki", i64::from(pid.ki))?;
    dev.write_int("Kd", i64::from(pid.kd))
}
