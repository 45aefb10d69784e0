//! The simulator of a simulated brick: time for its device models.
//!
//! # Model
//! * Every write reaches a device model's store at once (see
//!   [`crate::kobject`]): a command takes effect in the store, a
//!   sensor mode write returns when the new mode's values exist. The
//!   simulator only advances time.
//! * Time advances in 2 ms ticks (the tacho driver samples at 500 Hz):
//!   deterministically with [`Simulator::step`], or in real time with
//!   [`Simulator::run_realtime`]. Each tick calls every model's
//!   [`Model::tick`](crate::kobject::Model::tick) through
//!   [`MockTree::tick`].
//! * What motors do (speed regulation, ramps, positions, stop actions,
//!   stalls) is the tacho model's, `src/mock/tacho.rs`, with its limits.
//! * [`Simulator::block`] holds a motor still (a wall, a hand);
//!   [`Simulator::script_block`] holds it whenever a script of the
//!   simulated world says so (a wheel that drags in bursts);
//!   [`Simulator::end_stops`] limits its travel.
//! * Sensor values come from a world ([`Simulator::add_world`]: a robot
//!   in an arena, see [`crate::world`]) and from scripts
//!   ([`Simulator::script_sensor`]), evaluated every tick, the world
//!   first, and injected into the sensor's model.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::models::tacho::TachoMotor;
use super::tick_timing::{TickLateness, TickTiming};
use super::world::{LiveWorld, WorldSpec};
use super::{MockDevice, MockTree};
use crate::error::Result;

/// One simulation tick.
pub const TICK: Duration = Duration::from_millis(2);

/// The most ticks a real-time simulator runs at once to catch up (0.5 s:
/// a busy host's pauses are made up, an emulator's growing lag is not).
const MAX_CATCH_UP: u128 = 250;

/// How late a real-time simulator may run ticks that were due before a
/// client's write (with the write applied): the jitter of its 2 ms sleeps.
/// Ticks due earlier than this before the write are dropped.
const WRITE_LEEWAY: Duration = Duration::from_millis(10);

/// A scripted sensor value: a function of the simulated world.
type Script = Box<dyn FnMut(&World<'_>) -> i64 + Send>;

/// A scripted block of a motor: held still while it returns `true`.
type BlockScript = Box<dyn FnMut(&World<'_>) -> bool + Send>;

/// What a sensor script sees.
#[derive(Debug)]
pub struct World<'a> {
    /// Simulated time since the simulator started.
    pub time: Duration,
    tree: &'a MockTree,
}

impl World<'_> {
    /// The shown position (counts) of the motor `device`, 0 if unknown.
    pub fn position(&self, device: &MockDevice) -> i64 {
        self.tree
            .with_model(device, |model, _| {
                // (`*model`: the model, not the reference, as `Any`.)
                (*model)
                    .as_any()
                    .downcast_ref::<TachoMotor>()
                    .map_or(0, TachoMotor::position)
            })
            .unwrap_or(0)
    }
}

/// The simulator of one [`MockTree`]. See the [module docs](self).
pub struct Simulator {
    tree: Arc<MockTree>,
    scripts: Vec<(MockDevice, usize, Script)>,
    blocks: Vec<(MockDevice, BlockScript)>,
    time: Duration,
    world: Option<LiveWorld>,
}

impl std::fmt::Debug for Simulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulator")
            .field("root", &self.tree.root())
            .field("scripts", &self.scripts.len())
            .field("time", &self.time)
            .field("world", &self.world.as_ref().map(|w| w.spec().name()))
            .finish()
    }
}

impl Simulator {
    /// Simulates `tree`.
    ///
    /// # Errors
    /// None today (kept fallible for the API's sake).
    pub fn new(tree: Arc<MockTree>) -> Result<Simulator> {
        Ok(Simulator {
            tree,
            scripts: Vec::new(),
            blocks: Vec::new(),
            time: Duration::ZERO,
            world: None,
        })
    }

    /// Plugs the devices of world `spec` into the tree and runs the world
    /// from now on (see [`crate::world`]); returns the plugged
    /// devices by port. A world replaces the previous one (whose devices
    /// stay plugged).
    ///
    /// # Errors
    /// Errors plugging a device.
    pub fn add_world(&mut self, spec: &WorldSpec) -> Result<Vec<(String, MockDevice)>> {
        let world = LiveWorld::plug(&self.tree, spec)?;
        let devices = world.devices().to_vec();
        self.world = Some(world);
        Ok(devices)
    }

    /// The running world, if any.
    pub fn world(&self) -> Option<&LiveWorld> {
        self.world.as_ref()
    }

    /// The running world, to move the robot or trace it.
    pub fn world_mut(&mut self) -> Option<&mut LiveWorld> {
        self.world.as_mut()
    }

    /// The simulated tree.
    pub fn tree(&self) -> &Arc<MockTree> {
        &self.tree
    }

    /// Simulated time so far.
    pub fn time(&self) -> Duration {
        self.time
    }

    /// Holds motor `device` still (`true`) or lets it go (and ends its
    /// [`Simulator::script_block`]). Nothing happens for a device that is
    /// not a plugged-in tacho motor.
    pub fn block(&mut self, device: &MockDevice, blocked: bool) {
        self.blocks.retain(|(d, _)| d.path() != device.path());
        self.set_blocked(device, blocked);
    }

    /// Holds motor `device` still whenever `script` says so, evaluated
    /// every tick of simulated time (a wheel that drags in bursts, a hand
    /// that grabs it), until [`Simulator::block`] ends it.
    pub fn script_block(
        &mut self,
        device: &MockDevice,
        script: impl FnMut(&World<'_>) -> bool + Send + 'static,
    ) {
        self.blocks.retain(|(d, _)| d.path() != device.path());
        self.blocks.push((device.clone(), Box::new(script)));
    }

    fn set_blocked(&mut self, device: &MockDevice, blocked: bool) {
        let _ = self.tree.with_model(device, |model, _| {
            if let Some(motor) = model.as_any_mut().downcast_mut::<TachoMotor>() {
                motor.set_blocked(blocked);
            }
        });
    }

    /// Puts end stops on motor `device` at the shown positions `low` and
    /// `high` (counts): it turns freely between them and stalls against
    /// them (an arm's travel). `None` takes them away.
    pub fn end_stops(&mut self, device: &MockDevice, stops: Option<(i64, i64)>) {
        let _ = self.tree.with_model(device, |model, _| {
            if let Some(motor) = model.as_any_mut().downcast_mut::<TachoMotor>() {
                motor.set_end_stops(stops);
            }
        });
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

    /// Advances the simulation by `dt` (rounded up to whole 2 ms ticks):
    /// every model ticks, then the sensor scripts run, tick by tick.
    ///
    /// # Errors
    /// [`MockTree::check_models`]'s: once a device model panicked (logged
    /// too), every step says so; the other models go on.
    pub fn step(&mut self, dt: Duration) -> Result<()> {
        let ticks = dt.as_micros().div_ceil(TICK.as_micros()).max(1);
        self.step_ticks(ticks);
        self.tree.check_models()
    }

    fn step_ticks(&mut self, ticks: u128) {
        for _ in 0..ticks {
            self.tree.tick(TICK);
            self.time += TICK;
            if let Some(world) = &mut self.world {
                world.tick(TICK);
            }
            self.run_scripts();
        }
    }

    fn run_scripts(&mut self) {
        if self.scripts.is_empty() && self.blocks.is_empty() {
            return;
        }
        let tree = Arc::clone(&self.tree);
        let world = World {
            time: self.time,
            tree: &tree,
        };
        self.blocks.retain(|(device, _)| device.is_plugged());
        let blocks: Vec<(MockDevice, bool)> = self
            .blocks
            .iter_mut()
            .map(|(device, script)| (device.clone(), script(&world)))
            .collect();
        for (device, blocked) in &blocks {
            self.set_blocked(device, *blocked);
        }
        // Unplugged devices' scripts stop.
        self.scripts.retain(|(device, _, _)| device.is_plugged());
        for (device, index, script) in &mut self.scripts {
            let v = script(&world);
            let _ = device.set_int(&format!("value{index}"), v);
        }
    }

    /// Runs the simulation in real time on a background thread (a step
    /// every 2 ms of wall time) until the handle is dropped. Behind by
    /// more than 0.5 s (a machine too slow for the ticks), it drops the
    /// rest: simulated time then runs slower than the wall clock. Behind
    /// when a client writes an attribute (this thread did not run for a
    /// while), it drops the ticks due more than 10 ms before the write:
    /// a command's effects never start before it was written.
    pub fn run_realtime(self) -> RealtimeSim {
        let stop = Arc::new(AtomicBool::new(false));
        let sim = Arc::new(Mutex::new(self));
        let failed = Arc::new(Mutex::new(None));
        let timing = Arc::new(TickTiming::default());
        let thread = {
            let (stop, sim, failed) = (Arc::clone(&stop), Arc::clone(&sim), Arc::clone(&failed));
            let timing = Arc::clone(&timing);
            std::thread::spawn(move || {
                // A panic outside the models (a sensor script) ends the
                // thread: held for `check`, never silent.
                let run = std::panic::AssertUnwindSafe(|| realtime_loop(&stop, &sim, &timing));
                if let Err(panic) = std::panic::catch_unwind(run) {
                    let message = panic
                        .downcast_ref::<&str>()
                        .map(|s| (*s).to_owned())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_default();
                    let what = format!("the real-time simulation stopped: a panic: {message}");
                    log::error!("{what}");
                    *failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(what);
                }
            })
        };
        RealtimeSim {
            sim,
            stop,
            failed,
            timing,
            thread: Some(thread),
        }
    }
}

fn realtime_loop(stop: &AtomicBool, sim: &Mutex<Simulator>, timing: &TickTiming) {
    let start = Instant::now();
    let mut done: u128 = 0;
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(TICK);
        let mut sim = sim.lock().unwrap_or_else(|p| p.into_inner());
        // Whole ticks due since the start: simulated time keeps to the
        // wall clock however long each sleep (or the wait for the lock) was.
        let due = start.elapsed().as_micros() / TICK.as_micros();
        if due <= done {
            continue;
        }
        // A client's write during a pause (a busy machine did not run this
        // thread): the ticks due more than WRITE_LEEWAY before it are
        // dropped, not run with the write already applied, which would
        // move a motor before its command was written.
        let mut dropped = 0;
        if let Some(written) = sim.tree.last_write() {
            let before = written
                .saturating_duration_since(start)
                .saturating_sub(WRITE_LEEWAY)
                .as_micros()
                / TICK.as_micros();
            if before > done {
                dropped = before.min(due) - done;
                done += dropped;
            }
        }
        // At most MAX_CATCH_UP ticks at a time: on a machine too slow for
        // 2 ms ticks (an emulator, a world with much to compute) simulated
        // time falls behind instead of each catch-up taking longer than the
        // one before.
        let ticks = (due - done).min(MAX_CATCH_UP);
        dropped += due - done - ticks;
        sim.step_ticks(ticks);
        drop(sim);
        // Each tick's deadline is the start plus its number of ticks.
        let finished = start.elapsed();
        let first = done + 1;
        timing.record(
            (first..first + ticks).map(|k| {
                let us = TICK.as_micros().saturating_mul(k);
                let deadline = Duration::from_micros(u64::try_from(us).unwrap_or(u64::MAX));
                finished.saturating_sub(deadline)
            }),
            u64::try_from(dropped).unwrap_or(u64::MAX),
        );
        done = due;
    }
}

/// A simulator running in real time; stops when dropped.
pub struct RealtimeSim {
    sim: Arc<Mutex<Simulator>>,
    stop: Arc<AtomicBool>,
    /// Why the simulation thread stopped, if it did.
    failed: Arc<Mutex<Option<String>>>,
    timing: Arc<TickTiming>,
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

    /// Whether the simulation runs soundly: a device model that panicked
    /// (logged when it happens; the others keep running) or a panic that
    /// stopped the simulation thread is an error from then on.
    ///
    /// # Errors
    /// [`Error::Io`](crate::Error::Io) naming what failed.
    pub fn check(&self) -> Result<()> {
        if let Some(what) = self
            .failed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
        {
            return Err(crate::Error::Io {
                path: self.with(|s| s.tree.root().to_path_buf()),
                operation: crate::error::Operation::Read,
                source: std::io::Error::other(what),
            });
        }
        let tree = self.with(|s| Arc::clone(&s.tree));
        tree.check_models()
    }

    /// How late the ticks have been so far against their deadlines on
    /// the wall clock (see [`TickLateness`]): whether the motors' control
    /// loop runs on time.
    pub fn timing(&self) -> TickLateness {
        self.timing.now()
    }

    /// A handle to the simulator for another thread (a control server):
    /// it does not keep the simulator alive.
    pub fn handle(&self) -> SimHandle {
        SimHandle(Arc::downgrade(&self.sim))
    }
}

/// A weak handle to a [`RealtimeSim`]'s simulator (see
/// [`RealtimeSim::handle`]).
#[derive(Debug, Clone)]
pub struct SimHandle(std::sync::Weak<Mutex<Simulator>>);

impl SimHandle {
    /// Runs `f` on the simulator between two steps; `None` once the
    /// simulator is gone.
    pub fn with<R>(&self, f: impl FnOnce(&mut Simulator) -> R) -> Option<R> {
        let sim = self.0.upgrade()?;
        let mut s = sim.lock().unwrap_or_else(|p| p.into_inner());
        Some(f(&mut s))
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
