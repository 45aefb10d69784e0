//! What a guard can protect: motors and groups of them.

use crate::attr::Attribute;
use crate::error::Result;
use crate::motor::{DcMotor, StopAction, TachoGroup, TachoMotor, Tank};

/// One motor as a guard sees it.
#[doc(hidden)]
#[derive(Debug)]
pub struct StopFiles<'a> {
    pub(super) command: &'a Attribute,
    /// `None` for a DC motor, whose `stop_action` is write-only and is
    /// opened only when an action is forced.
    pub(super) stop_action: Option<&'a Attribute>,
    /// The forced action this motor can do, given the one the guard wants.
    pub(super) forced: Option<StopAction>,
}

/// A motor, or motors, a guard can stop: [`TachoMotor`], [`DcMotor`],
/// [`TachoGroup`], [`Tank`], [`DriveBase`](crate::drive::DriveBase).
pub trait Stoppable: sealed::Sealed {
    /// Calls `each` with every motor's files, given the stop action the
    /// guard forces (`None`: the motor's own).
    #[doc(hidden)]
    fn each_motor(
        &self,
        forced: Option<StopAction>,
        each: &mut dyn FnMut(StopFiles<'_>) -> Result<()>,
    ) -> Result<()>;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for crate::motor::TachoMotor {}
    impl Sealed for crate::motor::DcMotor {}
    impl Sealed for crate::motor::TachoGroup<'_> {}
    impl Sealed for crate::motor::Tank {}
    impl Sealed for crate::drive::DriveBase {}
}

impl Stoppable for TachoMotor {
    fn each_motor(
        &self,
        forced: Option<StopAction>,
        each: &mut dyn FnMut(StopFiles<'_>) -> Result<()>,
    ) -> Result<()> {
        let forced = forced.map(|wanted| {
            if self.offers_stop_action(wanted) {
                wanted
            } else {
                StopAction::Coast
            }
        });
        let (command, stop_action) = self.stop_attributes();
        each(StopFiles {
            command,
            stop_action: Some(stop_action),
            forced,
        })
    }
}

impl Stoppable for DcMotor {
    fn each_motor(
        &self,
        forced: Option<StopAction>,
        each: &mut dyn FnMut(StopFiles<'_>) -> Result<()>,
    ) -> Result<()> {
        let forced = forced.map(|wanted| match wanted {
            StopAction::Brake => StopAction::Brake,
            _ => StopAction::Coast,
        });
        let stop_action = match forced {
            Some(_) => Some(self.device().attribute("stop_action")?),
            None => None,
        };
        each(StopFiles {
            command: self.command_attribute(),
            stop_action,
            forced,
        })
    }
}

impl Stoppable for TachoGroup<'_> {
    fn each_motor(
        &self,
        forced: Option<StopAction>,
        each: &mut dyn FnMut(StopFiles<'_>) -> Result<()>,
    ) -> Result<()> {
        self.motors()
            .iter()
            .try_for_each(|m| m.each_motor(forced, each))
    }
}

impl Stoppable for Tank {
    fn each_motor(
        &self,
        forced: Option<StopAction>,
        each: &mut dyn FnMut(StopFiles<'_>) -> Result<()>,
    ) -> Result<()> {
        self.left.each_motor(forced, each)?;
        self.right.each_motor(forced, each)
    }
}

impl Stoppable for crate::drive::DriveBase {
    fn each_motor(
        &self,
        forced: Option<StopAction>,
        each: &mut dyn FnMut(StopFiles<'_>) -> Result<()>,
    ) -> Result<()> {
        self.left().each_motor(forced, each)?;
        self.right().each_motor(forced, each)
    }
}
