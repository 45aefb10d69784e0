//! The tacho-motor model: the `legoev3-motor` driver behind
//! `/sys/class/tacho-motor/motorN`, with its class attributes, commands,
//! ramps, state flags and a small physical motor.
//!
//! # Model
//! * Setpoints (`*_sp`) only take effect on the next `command` (except
//!   `duty_cycle_sp` under run-direct); a command takes effect in the store
//!   itself: `state` reads `running` as soon as the write returns.
//! * Values are kept in the internal (polarity normal) frame; `polarity`
//!   flips the sign at store and show time, as the class does.
//! * Time advances in 2 ms steps (the driver samples at 500 Hz). The
//!   regulated speed reaches its target at 20 × `max_speed` per second.
//!   Class ramps (`ramp_up_sp`/`ramp_down_sp`, the ms for 0 ↔ `max_speed`)
//!   step every 100 ms, starting half a period in, and cross zero by way of
//!   0; `ramping` shows while one is active, and while a run-to-pos
//!   decelerates with `ramp_down_sp`.
//! * run-to-pos runs at |`speed_sp`| toward the target, stops on it and
//!   applies the stop action (`hold` holds the target). A relative target
//!   follows the previous relative target when the previous command was
//!   also run-to-rel-pos.
//! * Stops: `running` is cleared at once; `coast` slows at 3.3 ×
//!   `max_speed`/s, `brake` at 20 ×, `hold` pins the position and shows
//!   only `holding`.
//! * A blocked motor ([`TachoMotor::set_blocked`]) does not turn. As in the
//!   kernel, running at a measured speed of exactly 0 for more than 100 ms
//!   shows `stalled`, also at speed setpoint 0 (and `overloaded` when
//!   speed-regulated toward a non-zero target).
//!
//! * A load (the world's `drag`) slows the shaft: see `tacho_load.rs`.
//!
//! No inertia, battery or full PID model; no linear actuators.

use std::time::Duration;

use crate::kobject::Effects;
use crate::TachoDriver;

/// One simulation step: the driver's 500 Hz sampling.
const STEP: Duration = Duration::from_millis(2);
const STEP_S: f64 = 0.002;
const STALL_AFTER: Duration = Duration::from_millis(100);

const COMMANDS: [&str; 7] = [
    "run-forever",
    "run-to-abs-pos",
    "run-to-rel-pos",
    "run-timed",
    "run-direct",
    "stop",
    "reset",
];
const STOP_ACTIONS: [&str; 3] = ["coast", "brake", "hold"];
const PID_NAMES: [&str; 6] = [
    "speed_pid/Kp",
    "speed_pid/Ki",
    "speed_pid/Kd",
    "hold_pid/Kp",
    "hold_pid/Ki",
    "hold_pid/Kd",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Command {
    RunForever,
    RunToAbsPos,
    RunToRelPos,
    RunTimed,
    RunDirect,
    Stop,
    Reset,
}

impl Command {
    fn from_index(i: usize) -> Command {
        [
            Command::RunForever,
            Command::RunToAbsPos,
            Command::RunToRelPos,
            Command::RunTimed,
            Command::RunDirect,
            Command::Stop,
            Command::Reset,
        ][i.min(6)]
    }
}

/// The class parameters, internal frame.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct Params {
    speed_sp: i32,
    position_sp: i32,
    time_sp: i32,
    duty_cycle_sp: i32,
    ramp_up_sp: i32,
    ramp_down_sp: i32,
    /// Index into [`STOP_ACTIONS`].
    stop_action: usize,
}

/// What the motor is doing.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Run {
    Idle,
    Forever,
    Timed {
        left: f64,
    },
    ToPos {
        target: f64,
    },
    Direct,
    /// A ramped stop: ramping down, then the stop action.
    Stopping,
}

/// One simulated tacho motor. See the [module docs](self).
#[derive(Debug)]
pub(crate) struct TachoMotor {
    driver: TachoDriver,
    address: String,
    max_speed: f64,
    params: Params,
    active: Params,
    inversed: bool,
    pids: [i32; 6],
    last_command: Option<Command>,
    run: Run,
    rel_target: Option<f64>,
    ramp: Option<Ramp>,
    position: f64,
    speed: f64,
    holding: Option<f64>,
    decel: f64,
    driver_ramping: bool,
    blocked: bool,
    /// Positions (internal, no polarity) the motor cannot turn beyond.
    end_stops: Option<(f64, f64)>,
    still_for: Duration,
    /// The last step's speed target was 0 (the speed PID gives duty 0:
    /// never `overloaded`).
    target_zero: bool,
    shown_state: String,
    /// The speed the driver asked for in the last step (internal frame):
    /// what a blocked motor pushes with.
    wanted: f64,
    /// The counter (`position`) minus the shaft's physical turn since
    /// plug-in: writing `position` or `reset` moves the counter, not the
    /// shaft or its end stops.
    counter_offset: f64,
    /// Friction on the shaft and the speed PID's answer to it.
    load: Load,
}

impl TachoMotor {
    /// A motor of `driver` on port `address`, as registered: at rest,
    /// position 0, every setpoint at its default.
    pub(crate) fn new(driver: TachoDriver, address: &str) -> TachoMotor {
        TachoMotor {
            driver,
            address: address.to_owned(),
            max_speed: f64::from(driver.max_speed()),
            params: Params::default(),
            active: Params::default(),
            inversed: false,
            pids: default_pids(driver),
            last_command: None,
            run: Run::Idle,
            rel_target: None,
            ramp: None,
            position: 0.0,
            speed: 0.0,
            holding: None,
            decel: f64::from(driver.max_speed()) / 0.3,
            driver_ramping: false,
            blocked: false,
            end_stops: None,
            still_for: Duration::ZERO,
            target_zero: false,
            shown_state: String::new(),
            wanted: 0.0,
            counter_offset: 0.0,
            load: Load::default(),
        }
    }

    fn sign(&self) -> i32 {
        if self.inversed {
            -1
        } else {
            1
        }
    }

    /// The position as `position` shows it (counts, polarity applied).
    pub(crate) fn position(&self) -> i64 {
        (self.position.round() as i64) * i64::from(self.sign())
    }

    /// The speed as `speed` shows it (counts/s, polarity applied).
    pub(crate) fn speed(&self) -> i64 {
        (self.speed.round() as i64) * i64::from(self.sign())
    }

    /// The shaft's position (counts, internal frame: how far it physically
    /// turned, whatever `polarity` says), for the simulated world.
    pub(crate) fn shaft_position(&self) -> f64 {
        self.position - self.counter_offset
    }

    /// Sets the counter to `counts` (internal frame): the shaft stays where
    /// it is, its end stops too (they move in counter terms).
    pub(crate) fn set_counter(&mut self, counts: f64) {
        let d = counts - self.position;
        self.position = counts;
        self.counter_offset += d;
        if let Some((low, high)) = self.end_stops {
            self.end_stops = Some((low + d, high + d));
        }
    }

    /// The speed the driver asked for in the last step (counts/s, internal
    /// frame), also while blocked.
    pub(crate) fn wanted_speed(&self) -> f64 {
        self.wanted
    }

    /// Puts a load of `drag` (a fraction of the stall torque, 0..=1) on the
    /// shaft: friction the speed PID makes up for up to its limit, and a
    /// duty cycle does not (see `tacho_load.rs`).
    pub(crate) fn set_drag(&mut self, drag: f64) {
        self.load.set_drag(drag);
    }

    /// Holds the motor still (a wall, a hand) or lets it go.
    pub(crate) fn set_blocked(&mut self, blocked: bool) {
        self.blocked = blocked;
    }

    /// Puts end stops at the shown positions `low` and `high` (counts): the
    /// motor cannot turn beyond them (`None`: no stops).
    pub(crate) fn set_end_stops(&mut self, stops: Option<(i64, i64)>) {
        let sign = f64::from(self.sign());
        self.end_stops = stops.map(|(a, b)| {
            let (a, b) = (a as f64 * sign, b as f64 * sign);
            (a.min(b), a.max(b))
        });
    }

    /// Whether a run command is active (`running` in `state`).
    pub(crate) fn running(&self) -> bool {
        self.run != Run::Idle
    }

    fn regulated(&self) -> bool {
        !matches!(self.run, Run::Idle | Run::Direct)
    }

    /// The `state` flags, in the class's order.
    fn state(&self) -> String {
        let running = self.running();
        let stalled = running && self.still_for > STALL_AFTER;
        let mut flags = Vec::new();
        if running {
            flags.push("running");
        }
        if self.ramp.is_some() || (running && self.driver_ramping) {
            flags.push("ramping");
        }
        if self.holding.is_some() {
            flags.push("holding");
        }
        if stalled && self.regulated() && !self.target_zero {
            flags.push("overloaded");
        }
        if stalled {
            flags.push("stalled");
        }
        flags.join(" ")
    }

    /// Notifies `state` when its flags changed since the last notification.
    fn notify_state(&mut self, fx: &mut Effects) {
        let state = self.state();
        if state != self.shown_state {
            self.shown_state = state;
            fx.notify("state");
        }
    }

    fn command(&mut self, command: Command) {
        // 1. cancel the timer and the class ramp.
        self.ramp = None;
        if command == Command::Reset {
            self.params = Params::default();
            self.inversed = false;
        }
        let mut command = command;
        if command == Command::RunToRelPos && self.params.position_sp == 0 {
            command = Command::Stop;
        }
        let previous = self.last_command;
        self.active = self.params;
        if matches!(command, Command::Stop | Command::Reset) {
            self.active.speed_sp = 0;
            self.active.duty_cycle_sp = 0;
        }
        self.last_command = Some(command);
        if command != Command::RunToRelPos {
            self.rel_target = None;
        }
        let speed_sp = f64::from(self.active.speed_sp);
        match command {
            Command::RunForever | Command::RunTimed => {
                self.start_run();
                self.run = if command == Command::RunTimed {
                    Run::Timed {
                        left: f64::from(self.active.time_sp) / 1000.0,
                    }
                } else {
                    Run::Forever
                };
                if self.ramp_configured() {
                    self.start_ramp(speed_sp);
                }
            }
            Command::RunToAbsPos | Command::RunToRelPos => {
                let target = if command == Command::RunToAbsPos {
                    f64::from(self.active.position_sp)
                } else {
                    let base = match (previous, self.rel_target) {
                        (Some(Command::RunToRelPos), Some(t)) => t,
                        _ => self.position,
                    };
                    base + f64::from(self.active.position_sp)
                };
                if command == Command::RunToRelPos {
                    self.rel_target = Some(target);
                }
                self.start_run();
                self.run = Run::ToPos { target };
                if self.ramp_configured() {
                    let to = speed_sp.abs() * (target - self.position).signum();
                    self.start_ramp(to);
                }
            }
            Command::RunDirect => {
                self.start_run();
                self.run = Run::Direct;
            }
            Command::Stop => {
                if self.ramp_configured() && self.running() {
                    self.run = Run::Stopping;
                    self.start_ramp(0.0);
                } else {
                    self.stop(None);
                }
            }
            Command::Reset => {
                self.stop(None);
                self.set_counter(0.0);
                self.holding = None;
                self.pids = default_pids(self.driver);
                self.still_for = Duration::ZERO;
            }
        }
    }

    fn start_run(&mut self) {
        if !self.running() {
            self.load.restart();
        }
        self.holding = None;
        self.driver_ramping = false;
        self.still_for = Duration::ZERO;
    }

    /// The driver's stop with the active stop action; `hold_at` is the
    /// run-to-pos target reached, if any.
    fn stop(&mut self, hold_at: Option<f64>) {
        self.run = Run::Idle;
        self.ramp = None;
        match STOP_ACTIONS[self.active.stop_action] {
            "hold" => {
                self.holding = Some(hold_at.unwrap_or(self.position));
                self.speed = 0.0;
            }
            "brake" => self.decel = self.max_speed / 0.05,
            _ => self.decel = self.max_speed / 0.3,
        }
    }

    /// One 2 ms step of the driver and the motor.
    fn step(&mut self) {
        self.wanted = 0.0;
        let ramp_ended = self.step_ramp();
        let ramp_speed = self.ramp.map(|r| r.setpoint);
        let target = match self.run {
            Run::Idle => {
                if let Some(h) = self.holding {
                    self.position = h;
                    self.speed = 0.0;
                    return;
                }
                let decel = self.load.coast_decel(self.decel, self.max_speed);
                let v = self.speed.abs() - decel * STEP_S;
                self.speed = if v <= 0.0 {
                    0.0
                } else {
                    v * self.speed.signum()
                };
                self.position += self.speed * STEP_S;
                return;
            }
            Run::Stopping => {
                if ramp_ended || self.ramp.is_none() {
                    return self.stop(None);
                }
                ramp_speed.unwrap_or(0.0)
            }
            Run::Forever => ramp_speed.unwrap_or(f64::from(self.active.speed_sp)),
            Run::Timed { left } => {
                if left <= 0.0 {
                    if self.active.ramp_down_sp != 0 {
                        self.run = Run::Stopping;
                        self.start_ramp(0.0);
                        return self.step();
                    }
                    return self.stop(None);
                }
                self.run = Run::Timed {
                    left: left - STEP_S,
                };
                ramp_speed.unwrap_or(f64::from(self.active.speed_sp))
            }
            Run::Direct => f64::from(self.active.duty_cycle_sp) / 100.0 * self.max_speed,
            Run::ToPos { target } => self.run_to_pos_speed(target, ramp_speed),
        };
        self.wanted = target;
        let reach = self
            .load
            .reachable(target, self.regulated(), self.max_speed, STEP_S);
        let dv = reach - self.speed;
        let max_dv = self.max_speed * 20.0 * STEP_S;
        self.speed = if dv.abs() > max_dv {
            self.speed + max_dv * dv.signum()
        } else {
            reach
        };
        if self.blocked {
            self.speed = 0.0;
        }
        if let Some((low, high)) = self.end_stops {
            let next = self.position + self.speed * STEP_S;
            if next < low || next > high {
                self.position = next.clamp(low, high);
                self.speed = 0.0;
            }
        }
        // The kernel's `stalled`: running and the measured speed exactly 0
        // for more than 100 ms, whatever the setpoint (0 included).
        self.target_zero = target == 0.0;
        if self.speed == 0.0 {
            self.still_for += STEP;
        } else {
            self.still_for = Duration::ZERO;
        }
        let before = self.position;
        self.position += self.speed * STEP_S;
        if let Run::ToPos { target } = self.run {
            // Reached or crossed the target in this step: stop on it.
            let crossed = (target - before).signum() != (target - self.position).signum();
            if (target - self.position).abs() < 0.5 || (crossed && self.speed != 0.0) {
                self.position = target;
                self.speed = 0.0;
                self.driver_ramping = false;
                self.stop(Some(target));
            }
        }
    }

    /// The driver's run-to-pos speed: toward the target at the cruise speed,
    /// decelerating with the active `ramp_down_sp`.
    fn run_to_pos_speed(&mut self, target: f64, ramp_speed: Option<f64>) -> f64 {
        let distance = target - self.position;
        let cruise = ramp_speed.map_or(f64::from(self.active.speed_sp).abs(), f64::abs);
        let ramp_down = f64::from(self.active.ramp_down_sp);
        let decel = if ramp_down > 0.0 {
            self.max_speed / (ramp_down / 1000.0)
        } else {
            self.max_speed * 20.0
        };
        let braking = (2.0 * decel * distance.abs()).sqrt();
        if ramp_down > 0.0 && braking < cruise {
            self.driver_ramping = true;
        }
        if cruise == 0.0 {
            return 0.0;
        }
        cruise.min(braking.max(1.0)) * distance.signum()
    }

    fn duty_cycle(&self) -> i32 {
        let duty = match self.run {
            Run::Idle => 0,
            Run::Direct => self.active.duty_cycle_sp,
            _ => (self.speed / self.max_speed * 100.0).round() as i32,
        };
        duty * self.sign()
    }
}

fn default_pids(driver: TachoDriver) -> [i32; 6] {
    let hold_kp = if driver == TachoDriver::Ev3Medium {
        160_000
    } else {
        80_000
    };
    [1000, 60, 0, hold_kp, 0, 0]
}

#[path = "tacho_load.rs"]
mod load;
use load::Load;

#[path = "tacho_ramp.rs"]
mod ramp;
use ramp::Ramp;

#[path = "tacho_sysfs.rs"]
mod sysfs;

#[cfg(test)]
#[path = "tacho_tests.rs"]
mod tests;
