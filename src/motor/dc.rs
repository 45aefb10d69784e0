//! [`DcMotor`]: motors without a tachometer on an output port in `dc-motor`
//! mode (RCX and Power Functions motors, `rcx-motor`).

use std::path::Path;
use std::sync::Arc;

use super::memory::{Shared, UNKNOWN};
use super::{check_range, check_stop_action, stop_action_names, NameSet, Polarity, StopAction};
use crate::attr::Attribute;
use crate::device::SysfsDevice;
use crate::discover::{self, Query};
use crate::error::{Error, Result};

/// DC motor commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DcCommand {
    /// Run at `duty_cycle_sp` until stopped.
    RunForever,
    /// Run at `duty_cycle_sp` for `time_sp` ms.
    RunTimed,
    /// Run at `duty_cycle_sp`; later duty writes apply at once.
    RunDirect,
    /// Stop with the stop action.
    Stop,
}

impl DcCommand {
    const ALL: [DcCommand; 4] = [
        DcCommand::RunForever,
        DcCommand::RunTimed,
        DcCommand::RunDirect,
        DcCommand::Stop,
    ];

    /// The text the kernel takes.
    pub fn as_str(self) -> &'static str {
        match self {
            DcCommand::RunForever => "run-forever",
            DcCommand::RunTimed => "run-timed",
            DcCommand::RunDirect => "run-direct",
            DcCommand::Stop => "stop",
        }
    }
}

/// A DC motor (`/sys/class/dc-motor/motorN`). Setters check ranges before
/// writing. `stop_action` is write-only in this class (the kernel has no
/// show function), so it cannot be read back.
#[derive(Debug)]
pub struct DcMotor {
    device: SysfsDevice,
    address: String,
    commands: NameSet,
    stop_actions: NameSet,
    command: Attribute,
    duty_cycle_sp: Attribute,
    duty_cycle: Attribute,
    shared: Arc<Shared>,
}

impl DcMotor {
    /// Opens the DC motor on `port` (`outA`...).
    ///
    /// # Errors
    /// [`Error::NotFound`], [`Error::Ambiguous`], read errors.
    pub fn find(root: impl AsRef<Path>, port: &str) -> Result<DcMotor> {
        let query = Query {
            class: "dc-motor",
            port: Some(port),
            drivers: &[],
        };
        DcMotor::from_device(discover::find(root, &query)?)
    }

    /// Opens an already located dc-motor device.
    ///
    /// # Errors
    /// Errors reading the invariant attributes.
    pub fn from_device(device: SysfsDevice) -> Result<DcMotor> {
        let names = DcCommand::ALL.map(DcCommand::as_str);
        let commands = device.read_text("commands", |t| Ok(NameSet::parse(t, &names)))?;
        let stop_actions = device.read_text("stop_actions", |t| {
            Ok(NameSet::parse(t, &stop_action_names()))
        })?;
        let open = |name: &str| device.open_inferred(name);
        let command = open("command")?;
        let key = crate::guard::DeviceKey::of(command.as_fd())
            .map_err(|e| Error::from_io(command.path(), crate::error::Operation::Open, None, e))?;
        Ok(DcMotor {
            address: device.read_string("address")?,
            command,
            duty_cycle_sp: open("duty_cycle_sp")?,
            duty_cycle: open("duty_cycle")?,
            commands,
            stop_actions,
            device,
            shared: Arc::new(Shared::new(UNKNOWN, key)),
        })
    }

    /// The open `command` attribute (for the stop guard).
    pub(crate) fn command_attribute(&self) -> &Attribute {
        &self.command
    }

    /// The device.
    pub fn device(&self) -> &SysfsDevice {
        &self.device
    }
    /// `address`, e.g. `ev3-ports:outA`.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// Sends `command`.
    ///
    /// # Errors
    /// [`Error::NotOffered`] without writing; [`Error::GuardStopped`] for a
    /// run command once a stop guard protecting the motor has fired; write
    /// errors.
    pub fn send(&self, command: DcCommand) -> Result<()> {
        self.check_send(command)?;
        let _permit = match command {
            DcCommand::Stop => None,
            _ => Some(
                self.shared
                    .run_permit()
                    .ok_or_else(|| Error::GuardStopped {
                        path: self.device.dir().to_path_buf(),
                    })?,
            ),
        };
        self.command.write_str(command.as_str())
    }

    fn check_send(&self, command: DcCommand) -> Result<()> {
        let index = DcCommand::ALL
            .iter()
            .position(|c| *c == command)
            .unwrap_or(0);
        if !self.commands.contains(index) {
            return Err(Error::NotOffered {
                attribute: "command",
                value: command.as_str().into(),
                offered: self.device.read_string("commands")?,
            });
        }
        if command != DcCommand::Stop && self.shared.run_permit().is_none() {
            return Err(Error::GuardStopped {
                path: self.device.dir().to_path_buf(),
            });
        }
        Ok(())
    }
    /// `duty_cycle_sp` in percent, -100..=100 (applied at once in run-direct).
    ///
    /// # Errors
    /// [`Error::OutOfRange`] without writing; write errors.
    #[inline(always)]
    pub fn set_duty_cycle_sp(&self, duty: i32) -> Result<()> {
        check_range("duty_cycle_sp", i64::from(duty), -100, 100)?;
        self.duty_cycle_sp.write_int(i64::from(duty))
    }
    /// Reads `duty_cycle_sp`.
    ///
    /// # Errors
    /// Read errors.
    #[inline(always)]
    pub fn duty_cycle_sp(&self) -> Result<i32> {
        self.duty_cycle_sp.read_int()
    }
    /// Reads the current `duty_cycle`.
    ///
    /// # Errors
    /// Read errors.
    #[inline(always)]
    pub fn duty_cycle(&self) -> Result<i32> {
        self.duty_cycle.read_int()
    }
    /// Runs open-loop at `duty` percent.
    ///
    /// # Errors
    /// As [`DcMotor::set_duty_cycle_sp`] and [`DcMotor::send`].
    pub fn run_direct(&self, duty: i32) -> Result<()> {
        check_range("duty_cycle_sp", i64::from(duty), -100, 100)?;
        self.check_send(DcCommand::RunDirect)?;
        self.set_duty_cycle_sp(duty)?;
        self.send(DcCommand::RunDirect)
    }
    /// Stops.
    ///
    /// # Errors
    /// Write errors.
    pub fn stop(&self) -> Result<()> {
        self.send(DcCommand::Stop)
    }
    /// `time_sp` in ms, 0..=60000.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] without writing; write errors.
    pub fn set_time_sp(&self, millis: i32) -> Result<()> {
        check_range("time_sp", i64::from(millis), 0, 60_000)?;
        self.device.write_int("time_sp", i64::from(millis))
    }
    /// `ramp_up_sp` in ms for 0 to 100 %, 0..=10000.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] without writing; write errors.
    pub fn set_ramp_up_sp(&self, millis: i32) -> Result<()> {
        check_range("ramp_up_sp", i64::from(millis), 0, 10_000)?;
        self.device.write_int("ramp_up_sp", i64::from(millis))
    }
    /// `ramp_down_sp` in ms for 100 to 0 %, 0..=10000.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] without writing; write errors.
    pub fn set_ramp_down_sp(&self, millis: i32) -> Result<()> {
        check_range("ramp_down_sp", i64::from(millis), 0, 10_000)?;
        self.device.write_int("ramp_down_sp", i64::from(millis))
    }
    /// Sets the stop action (`coast` or `brake`).
    ///
    /// # Errors
    /// [`Error::NotOffered`] without writing; write errors.
    pub fn set_stop_action(&self, action: StopAction) -> Result<()> {
        check_stop_action(self.stop_actions, action)?;
        self.device.write_str("stop_action", action.as_str())
    }
    /// Sets `polarity`.
    ///
    /// # Errors
    /// Write errors.
    pub fn set_polarity(&self, polarity: Polarity) -> Result<()> {
        self.device.write_str("polarity", polarity.as_str())
    }
    /// `true` while the H-bridge drives the motor.
    ///
    /// # Errors
    /// Read errors.
    pub fn running(&self) -> Result<bool> {
        self.device.attribute("state")?.list_contains("running")
    }
}
