//! A motor simulator for mock trees: tacho motors react to what is written
//! like the ev3dev tacho-motor driver does, sensors switch modes and can be
//! scripted.
//!
//! # Model
//! * Every write through this crate is one event, read from the tree's write
//!   journal in order: writing `run-to-rel-pos` twice moves twice, and a
//!   command is never seen half-written. Setpoints (`*_sp`) take effect on
//!   the next command, except `duty_cycle_sp` while run-direct is active.
//! * Time advances in 2 ms ticks (the driver samples at 500 Hz):
//!   deterministically with [`Simulator::step`], or in real time with
//!   [`Simulator::run_realtime`].
//! * Speed regulation: the speed reaches its target at 20 × `max_speed`
//!   per second (0 to full speed in 50 ms) unless a ramp is set:
//!   `ramp_up_sp`/`ramp_down_sp` are the ms for 0 ↔ `max_speed`, and
//!   `ramping` shows while one is active. `speed_sp` beyond `max_speed` is
//!   clipped (the kernel would refuse it with EINVAL; a mock file cannot).
//! * run-to-abs-pos / run-to-rel-pos run at |`speed_sp`| toward the target
//!   (a relative target follows the previous relative target), slowing down
//!   so as to stop on it, then apply the stop action; `hold` holds the
//!   target. run-timed stops after `time_sp`. run-direct turns `duty_cycle_sp`
//!   into speed linearly (no load: 100 % = `max_speed`).
//! * Stop: `running` is cleared at once; `coast` slows down at 3.3 ×
//!   `max_speed`/s, `brake` at 20 ×, `hold` stops and shows `holding`.
//!   `reset` also zeroes the position and restores every setpoint.
//! * [`Simulator::block`] holds a motor still (a wall, a hand): running at
//!   speed 0 for more than 100 ms shows `stalled` (and `overloaded` when
//!   speed-regulated).
//! * Polarity `inversed` flips the sign of speeds and positions, as shown.
//!
//! # Limits
//! No inertia beyond the acceleration limit, no load or battery model, no
//! PID constants in the loop, no `count_per_m` actuators, no DC or servo
//! motor physics (their files only record writes). Sensor values come from
//! scripts only. Writes by other programs (not through this crate) are not
//! journaled and so not seen.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::{MockDevice, MockKind, MockTree, SensorDriver, TachoDriver};
use crate::error::Result;

/// One simulation tick.
pub const TICK: Duration = Duration::from_millis(2);
const TICK_S: f64 = 0.002;
const STALL_AFTER: Duration = Duration::from_millis(100);

#[derive(Debug, Clone, Copy, PartialEq)]
enum Active {
    Idle,
    Forever,
    Timed { left: f64 },
    ToPos { target: f64 },
    Direct,
}

#[derive(Debug, Clone)]
struct Params {
    speed_sp: f64,
    position_sp: f64,
    time_sp: f64,
    duty_cycle_sp: f64,
    ramp_up_sp: f64,
    ramp_down_sp: f64,
    stop_action: String,
    inversed: bool,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            speed_sp: 0.0,
            position_sp: 0.0,
            time_sp: 0.0,
            duty_cycle_sp: 0.0,
            ramp_up_sp: 0.0,
            ramp_down_sp: 0.0,
            stop_action: "coast".into(),
            inversed: false,
        }
    }
}

/// The simulated state of one tacho motor (internal frame: polarity normal).
#[derive(Debug)]
struct Motor {
    device: MockDevice,
    max_speed: f64,
    params: Params,
    active: Active,
    last_rel_target: Option<f64>,
    position: f64,
    speed: f64,
    holding: Option<f64>,
    decel: f64,
    blocked: bool,
    still_for: Duration,
    shown: (i64, i64, i64, String),
}

impl Motor {
    fn new(device: MockDevice, driver: TachoDriver) -> Motor {
        Motor {
            device,
            max_speed: f64::from(driver.max_speed()),
            params: Params::default(),
            active: Active::Idle,
            last_rel_target: None,
            position: 0.0,
            speed: 0.0,
            holding: None,
            decel: 0.0,
            blocked: false,
            still_for: Duration::ZERO,
            shown: (i64::MIN, i64::MIN, i64::MIN, String::from("?")),
        }
    }

    fn sign(&self) -> f64 {
        if self.params.inversed {
            -1.0
        } else {
            1.0
        }
    }

    fn on_write(&mut self, attr: &str, value: &str) {
        let num = || value.trim().parse::<f64>().unwrap_or(0.0);
        let s = self.sign();
        match attr {
            "speed_sp" => self.params.speed_sp = (num() * s).clamp(-self.max_speed, self.max_speed),
            "position_sp" => self.params.position_sp = num() * s,
            "time_sp" => self.params.time_sp = num().max(0.0),
            "ramp_up_sp" => self.params.ramp_up_sp = num().max(0.0),
            "ramp_down_sp" => self.params.ramp_down_sp = num().max(0.0),
            "stop_action" => self.params.stop_action = value.trim().to_owned(),
            "polarity" => self.params.inversed = value.trim() == "inversed",
            "position" => self.position = num() * s,
            "duty_cycle_sp" => self.params.duty_cycle_sp = (num() * s).clamp(-100.0, 100.0),
            "command" => self.command(value.trim()),
            _ => {}
        }
    }

    fn command(&mut self, command: &str) {
        self.holding = None;
        let previous = self.active;
        self.active = match command {
            "run-forever" => Active::Forever,
            "run-timed" => Active::Timed {
                left: self.params.time_sp / 1000.0,
            },
            "run-direct" => Active::Direct,
            "run-to-abs-pos" => Active::ToPos {
                target: self.params.position_sp,
            },
            "run-to-rel-pos" => {
                if self.params.position_sp == 0.0 {
                    return self.stop();
                }
                let base = self.last_rel_target.unwrap_or(self.position);
                let target = base + self.params.position_sp;
                self.last_rel_target = Some(target);
                Active::ToPos { target }
            }
            "stop" => return self.stop(),
            "reset" => {
                self.params = Params::default();
                self.position = 0.0;
                self.last_rel_target = None;
                self.active = Active::Idle;
                self.decel = self.max_speed / 0.3;
                for (attr, v) in [
                    ("speed_sp", "0"),
                    ("position_sp", "0"),
                    ("time_sp", "0"),
                    ("duty_cycle_sp", "0"),
                    ("ramp_up_sp", "0"),
                    ("ramp_down_sp", "0"),
                    ("stop_action", "coast"),
                    ("polarity", "normal"),
                ] {
                    let _ = self.device.set(attr, v);
                }
                return;
            }
            _ => previous,
        };
        if command != "run-to-rel-pos" {
            self.last_rel_target = None;
        }
    }

    fn stop(&mut self) {
        self.active = Active::Idle;
        self.last_rel_target = None;
        match self.params.stop_action.as_str() {
            "hold" => {
                self.holding = Some(self.position);
                self.speed = 0.0;
            }
            "brake" => self.decel = self.max_speed / 0.05,
            _ => self.decel = self.max_speed / 0.3,
        }
    }

    /// Acceleration limit toward `target` speed, and whether a ramp is on.
    fn accel(&self, target: f64) -> (f64, bool) {
        let growing = target.abs() > self.speed.abs();
        let ramp_ms = if growing {
            self.params.ramp_up_sp
        } else {
            self.params.ramp_down_sp
        };
        if ramp_ms > 0.0 {
            (self.max_speed / (ramp_ms / 1000.0), true)
        } else {
            (self.max_speed * 20.0, false)
        }
    }

    /// Advances one tick; returns whether a ramp is active.
    fn tick(&mut self) -> bool {
        let mut ramping = false;
        let target = match self.active {
            Active::Idle => {
                if let Some(h) = self.holding {
                    self.position = h;
                    self.speed = 0.0;
                    return false;
                }
                let v = self.speed.abs() - self.decel * TICK_S;
                self.speed = if v <= 0.0 {
                    0.0
                } else {
                    v * self.speed.signum()
                };
                self.position += self.speed * TICK_S;
                return false;
            }
            Active::Forever => self.params.speed_sp,
            Active::Timed { left } => {
                if left <= 0.0 {
                    self.stop();
                    return self.tick();
                }
                self.active = Active::Timed {
                    left: left - TICK_S,
                };
                self.params.speed_sp
            }
            Active::Direct => self.params.duty_cycle_sp / 100.0 * self.max_speed,
            Active::ToPos { target } => {
                let distance = target - self.position;
                let cruise = self.params.speed_sp.abs();
                // Slow down so as to stop on the target.
                let (decel, ramped) = if self.params.ramp_down_sp > 0.0 {
                    (self.max_speed / (self.params.ramp_down_sp / 1000.0), true)
                } else {
                    (self.max_speed * 20.0, false)
                };
                let braking = (2.0 * decel * distance.abs()).sqrt();
                if ramped && braking < cruise {
                    ramping = true;
                }
                cruise.min(braking).max(1.0) * distance.signum()
            }
        };
        let (accel, ramped) = self.accel(target);
        let dv = target - self.speed;
        let max_dv = accel * TICK_S;
        if dv.abs() > max_dv {
            self.speed += max_dv * dv.signum();
            ramping |= ramped;
        } else {
            self.speed = target;
        }
        if self.blocked {
            self.speed = 0.0;
        }
        let before = self.position;
        self.position += self.speed * TICK_S;
        if let Active::ToPos { target } = self.active {
            // Reached or crossed the target in this tick: stop on it.
            if (target - self.position).abs() < 0.5
                || (target - before).signum() != (target - self.position).signum()
            {
                self.position = target;
                self.speed = 0.0;
                self.stop();
                return false;
            }
        }
        ramping
    }

    fn running(&self) -> bool {
        self.active != Active::Idle
    }

    /// Writes position, speed, duty cycle and state when they changed.
    fn publish(&mut self, ramping: bool) -> Result<()> {
        let s = self.sign();
        let position = (self.position * s).round() as i64;
        let speed = (self.speed * s).round() as i64;
        let duty = if !self.running() {
            0
        } else if self.active == Active::Direct {
            (self.params.duty_cycle_sp * s).round() as i64
        } else {
            (self.speed / self.max_speed * 100.0 * s).round() as i64
        };
        let stalled = self.running() && self.still_for > STALL_AFTER;
        let mut flags = Vec::new();
        if self.running() {
            flags.push("running");
        }
        if ramping && self.running() {
            flags.push("ramping");
        }
        if self.holding.is_some() {
            flags.push("holding");
        }
        if stalled && self.active != Active::Direct {
            flags.push("overloaded");
        }
        if stalled {
            flags.push("stalled");
        }
        let state = flags.join(" ");
        if self.shown.0 != position {
            self.device.set_int("position", position)?;
        }
        if self.shown.1 != speed {
            self.device.set_int("speed", speed)?;
        }
        if self.shown.2 != duty {
            self.device.set_int("duty_cycle", duty)?;
        }
        if self.shown.3 != state {
            self.device.set("state", &state)?;
        }
        self.shown = (position, speed, duty, state);
        Ok(())
    }
}

/// A scripted sensor value: a function of the simulated world.
type Script = Box<dyn FnMut(&World<'_>) -> i64 + Send>;

/// What a sensor script sees.
#[derive(Debug)]
pub struct World<'a> {
    /// Simulated time since the simulator started.
    pub time: Duration,
    positions: &'a HashMap<PathBuf, i64>,
}

impl World<'_> {
    /// The shown position (counts) of the motor `device`, 0 if unknown.
    pub fn position(&self, device: &MockDevice) -> i64 {
        self.positions.get(device.path()).copied().unwrap_or(0)
    }
}

/// The simulator of one [`MockTree`]. See the [module docs](self).
pub struct Simulator {
    tree: Arc<MockTree>,
    motors: Vec<Motor>,
    scripts: Vec<(MockDevice, usize, Script)>,
    time: Duration,
}

impl std::fmt::Debug for Simulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulator")
            .field("root", &self.tree.root())
            .field("motors", &self.motors.len())
            .field("time", &self.time)
            .finish()
    }
}

impl Simulator {
    /// Simulates `tree`. Starts its write journal: create the simulator
    /// before the code under test opens its devices (attributes opened
    /// earlier are not journaled).
    ///
    /// # Errors
    /// [`crate::Error::Io`] when the journal cannot be created.
    pub fn new(tree: Arc<MockTree>) -> Result<Simulator> {
        tree.enable_journal()?;
        let mut sim = Simulator {
            tree,
            motors: Vec::new(),
            scripts: Vec::new(),
            time: Duration::ZERO,
        };
        sim.rescan();
        Ok(sim)
    }

    /// The simulated tree.
    pub fn tree(&self) -> &Arc<MockTree> {
        &self.tree
    }

    /// Simulated time so far.
    pub fn time(&self) -> Duration {
        self.time
    }

    fn rescan(&mut self) {
        let Ok(list) = crate::discover::list(self.tree.root(), "tacho-motor") else {
            return;
        };
        for info in list {
            if self.motors.iter().any(|m| m.device.path() == info.path) {
                continue;
            }
            let driver = match info.driver_name.as_str() {
                "lego-ev3-m-motor" => TachoDriver::Ev3Medium,
                "lego-nxt-motor" => TachoDriver::Nxt,
                _ => TachoDriver::Ev3Large,
            };
            let device = MockDevice {
                dir: info.path.clone(),
                class: "tacho-motor",
                name: info.name.clone(),
                address: info.address.clone(),
                kind: MockKind::TachoMotor(driver),
            };
            self.motors.push(Motor::new(device, driver));
        }
    }

    /// Holds motor `device` still (`true`) or lets it go.
    pub fn block(&mut self, device: &MockDevice, blocked: bool) {
        if let Some(m) = self
            .motors
            .iter_mut()
            .find(|m| m.device.path() == device.path())
        {
            m.blocked = blocked;
        }
    }

    /// Drives `value<index>` of sensor `device` from `script`, evaluated
    /// every tick.
    pub fn script_sensor(
        &mut self,
        device: &MockDevice,
        index: usize,
        script: impl FnMut(&World<'_>) -> i64 + Send + 'static,
    ) {
        self.scripts.push((device.clone(), index, Box::new(script)));
    }

    /// Applies every write journaled since the last call.
    fn apply_writes(&mut self) -> Result<()> {
        for (key, value) in self.tree.take_journal()? {
            let value = String::from_utf8_lossy(&value).into_owned();
            let path = self.tree.root().join(&key);
            let (Some(attr), Some(dir)) = (path.file_name(), path.parent()) else {
                continue;
            };
            let attr = attr.to_string_lossy().into_owned();
            if key.starts_with("lego-sensor/") && attr == "mode" {
                apply_sensor_mode(dir, &value);
                continue;
            }
            if !key.starts_with("tacho-motor/") {
                continue;
            }
            if !self.motors.iter().any(|m| m.device.path() == dir) {
                self.rescan();
            }
            if let Some(m) = self.motors.iter_mut().find(|m| m.device.path() == dir) {
                m.on_write(&attr, &value);
            }
        }
        Ok(())
    }

    /// Advances the simulation by `dt` (rounded up to whole 2 ms ticks):
    /// applies the writes made since the last step, moves the motors,
    /// runs the sensor scripts and writes what the driver would show.
    /// Unplugged devices are dropped from the simulation.
    ///
    /// # Errors
    /// Journal errors.
    pub fn step(&mut self, dt: Duration) -> Result<()> {
        let ticks = dt.as_micros().div_ceil(TICK.as_micros()).max(1);
        self.step_ticks(ticks)
    }

    fn step_ticks(&mut self, ticks: u128) -> Result<()> {
        self.apply_writes()?;
        let mut ramping = vec![false; self.motors.len()];
        for _ in 0..ticks {
            for (m, r) in self.motors.iter_mut().zip(ramping.iter_mut()) {
                *r = m.tick();
                if m.running() && m.speed == 0.0 {
                    m.still_for += TICK;
                } else {
                    m.still_for = Duration::ZERO;
                }
            }
            self.time += TICK;
        }
        let mut positions = HashMap::new();
        self.motors.retain_mut(|m| m.device.path().is_dir());
        for (m, r) in self.motors.iter_mut().zip(ramping) {
            if m.publish(r).is_err() {
                continue;
            }
            positions.insert(m.device.path().to_path_buf(), m.shown.0);
        }
        let world = World {
            time: self.time,
            positions: &positions,
        };
        for (device, index, script) in &mut self.scripts {
            let v = script(&world);
            let _ = device.set_int(&format!("value{index}"), v);
        }
        Ok(())
    }

    /// Runs the simulation in real time on a background thread (a step
    /// every 2 ms of wall time) until the handle is dropped.
    pub fn run_realtime(self) -> RealtimeSim {
        let stop = Arc::new(AtomicBool::new(false));
        let sim = Arc::new(Mutex::new(self));
        let thread = {
            let (stop, sim) = (Arc::clone(&stop), Arc::clone(&sim));
            std::thread::spawn(move || {
                let start = Instant::now();
                let mut done: u128 = 0;
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(TICK);
                    // Whole ticks due since the start: simulated time keeps
                    // to the wall clock however long each sleep was.
                    let due = start.elapsed().as_micros() / TICK.as_micros();
                    if due <= done {
                        continue;
                    }
                    let mut s = sim.lock().unwrap_or_else(|p| p.into_inner());
                    if let Err(e) = s.step_ticks(due - done) {
                        log::warn!("simulator step failed: {e}");
                    }
                    done = due;
                }
            })
        };
        RealtimeSim {
            sim,
            stop,
            thread: Some(thread),
        }
    }
}

/// Switches a mock sensor's files to `mode`, as the driver would.
fn apply_sensor_mode(dir: &Path, mode: &str) {
    let driver = std::fs::read_to_string(dir.join("driver_name")).unwrap_or_default();
    let Some(driver) = SensorDriver::from_driver_name(driver.trim()) else {
        return;
    };
    let device = MockDevice {
        dir: dir.to_path_buf(),
        class: "lego-sensor",
        name: dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        address: String::new(),
        kind: MockKind::Sensor(driver),
    };
    if let Err(e) = device.apply_sensor_mode(mode.trim()) {
        log::debug!("simulator: {}: mode {mode}: {e}", dir.display());
    }
}

/// A simulator running in real time; stops when dropped.
pub struct RealtimeSim {
    sim: Arc<Mutex<Simulator>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for RealtimeSim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RealtimeSim").finish_non_exhaustive()
    }
}

impl RealtimeSim {
    /// Runs `f` on the simulator between two steps (to block a motor,
    /// script a sensor...).
    pub fn with<R>(&self, f: impl FnOnce(&mut Simulator) -> R) -> R {
        let mut s = self.sim.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut s)
    }
}

impl Drop for RealtimeSim {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Where a program's devices are: the brick's sysfs, or a simulated brick.
/// Keep it alive as long as the devices are used.
#[derive(Debug)]
pub struct Playground {
    root: PathBuf,
    simulated: Option<(Arc<MockTree>, RealtimeSim)>,
}

impl Playground {
    /// Uses the real tree ([`crate::default_root`]) when it has a device of
    /// class `needs` (e.g. `tacho-motor`); otherwise builds a simulated
    /// brick: [`MockTree::ev3`], then `build` adds devices, and a real-time
    /// [`Simulator`] runs it. Examples use this to run anywhere.
    ///
    /// # Errors
    /// Errors creating the tree, from `build`, or starting the simulator.
    pub fn brick_or_simulated(
        needs: &str,
        build: impl FnOnce(&MockTree) -> Result<()>,
    ) -> Result<Playground> {
        Playground::at_or_simulated(crate::default_root(), needs, build)
    }

    /// As [`Playground::brick_or_simulated`], looking under `root`.
    ///
    /// # Errors
    /// As [`Playground::brick_or_simulated`].
    pub fn at_or_simulated(
        root: impl Into<PathBuf>,
        needs: &str,
        build: impl FnOnce(&MockTree) -> Result<()>,
    ) -> Result<Playground> {
        let root = root.into();
        if !crate::discover::list(&root, needs)?.is_empty() {
            return Ok(Playground {
                root,
                simulated: None,
            });
        }
        log::info!("no {needs} under {}: simulating a brick", root.display());
        Playground::simulated(build)
    }

    /// A simulated brick, whatever is plugged in here.
    ///
    /// # Errors
    /// Errors creating the tree, from `build`, or starting the simulator.
    pub fn simulated(build: impl FnOnce(&MockTree) -> Result<()>) -> Result<Playground> {
        let tree = Arc::new(MockTree::ev3()?);
        build(&tree)?;
        let sim = Simulator::new(Arc::clone(&tree))?.run_realtime();
        Ok(Playground {
            root: tree.root().to_path_buf(),
            simulated: Some((tree, sim)),
        })
    }

    /// The class root to find devices under.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `true` when the devices are simulated.
    pub fn is_simulated(&self) -> bool {
        self.simulated.is_some()
    }

    /// The simulator, when simulated (to script sensors, block motors).
    pub fn simulator(&self) -> Option<&RealtimeSim> {
        self.simulated.as_ref().map(|(_, sim)| sim)
    }

    /// The mock tree, when simulated.
    pub fn tree(&self) -> Option<&Arc<MockTree>> {
        self.simulated.as_ref().map(|(tree, _)| tree)
    }
}
