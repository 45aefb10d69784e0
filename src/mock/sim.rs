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

use super::model::Motor;
use super::{MockDevice, MockKind, MockTree, SensorDriver, TachoDriver};
use crate::error::Result;

/// One simulation tick.
pub const TICK: Duration = Duration::from_millis(2);

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
            // Unknown drivers (linear actuators) are modelled as large motors.
            let driver =
                TachoDriver::from_driver_name(&info.driver_name).unwrap_or(TachoDriver::Ev3Large);
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

    /// Drives `value<index>` of sensor `device` from a sequence of
    /// `(from, value)` steps: each value holds from its simulated time on
    /// (before the first step, the first value).
    pub fn script_sequence(
        &mut self,
        device: &MockDevice,
        index: usize,
        steps: Vec<(Duration, i64)>,
    ) {
        self.script_sensor(device, index, move |world| {
            steps
                .iter()
                .take_while(|(from, _)| *from <= world.time)
                .last()
                .or(steps.first())
                .map_or(0, |(_, v)| *v)
        });
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
        // Unplugged first: the per-motor flags below follow this list.
        self.motors.retain_mut(|m| m.device.path().is_dir());
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
