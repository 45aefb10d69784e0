//! `--view [ADDR]` and `--trace FILE.svg`: the live view in a browser and
//! the picture of the run (`ev3sysfs_sim::view`).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use ev3sysfs::screen::Geometry;
use ev3sysfs_sim::view::{self, LiveView, Snapshot, Trace, ViewTarget};
use ev3sysfs_sim::{MockDevice, MockTree, RealtimeSim, SimulatedIo};

/// The default address of `--view`: a free port on the loopback.
pub const DEFAULT_ADDR: &str = "127.0.0.1:0";

/// How often `--trace` takes a sample (simulated time as the simulator
/// counts it).
const SAMPLE: Duration = Duration::from_millis(20);

/// The live view and the trace of one run; the trace is written on
/// [`Pictures::finish`].
pub struct Pictures {
    /// The live view and the simulator it watches (for the ticks'
    /// lateness on exit).
    view: Option<(LiveView, Arc<RealtimeSim>)>,
    trace: Option<(PathBuf, JoinHandle<Trace>)>,
    stop: Arc<AtomicBool>,
}

impl Pictures {
    /// Uses the brick's buttons, beeper and screen (`io`, else gives it
    /// some), then starts the live view at `view` and the trace for `trace`, as asked.
    pub fn start(
        tree: &Arc<MockTree>,
        sim: &Arc<RealtimeSim>,
        io: Option<Arc<SimulatedIo>>,
        devices: Vec<MockDevice>,
        view: Option<&str>,
        trace: Option<PathBuf>,
    ) -> Result<Pictures, String> {
        // The brick's own buttons, beeper and screen (ev3-sim's), else new ones.
        let io = match io {
            Some(io) => io,
            None => Arc::new(
                tree.add_brick_io(Geometry::EV3_MONO)
                    .map_err(|e| format!("buttons, beeper and screen: {e}"))?,
            ),
        };
        let stop = Arc::new(AtomicBool::new(false));
        let view = match view {
            Some(addr) => {
                let target = ViewTarget {
                    tree: Arc::clone(tree),
                    io: Some(Arc::clone(&io)),
                    sim: Some(Arc::clone(sim)),
                    devices,
                    scene: sim.with(|s| view::scene_of(s)),
                };
                let view = LiveView::start(addr, target).map_err(|e| e.to_string())?;
                println!("ev3-sim: live view at {}", view.url());
                Some((view, Arc::clone(sim)))
            }
            None => None,
        };
        let trace = trace.map(|path| {
            let (sim, io, stop) = (sim.clone(), io.clone(), stop.clone());
            let thread = std::thread::spawn(move || {
                let mut trace = Trace::new(sim.with(|s| view::scene_of(s)));
                let mut next = Duration::ZERO;
                loop {
                    let done = stop.load(Ordering::Relaxed);
                    if sim.with(|s| s.time()) >= next || done {
                        let snapshot = Snapshot::of_realtime(&sim, Some(&io), false);
                        next = snapshot.time + SAMPLE;
                        trace.push(snapshot);
                    }
                    if done {
                        return trace;
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
            });
            (path, thread)
        });
        std::io::Write::flush(&mut std::io::stdout()).ok();
        Ok(Pictures { view, trace, stop })
    }

    /// Stops the view and writes the trace (`FILE.svg` and `FILE.jsonl`).
    pub fn finish(mut self, title: &str) -> Result<(), String> {
        self.stop.store(true, Ordering::Relaxed);
        if let Some((view, sim)) = self.view.take() {
            let s = view.stats();
            println!(
                "ev3-sim: live view: {} frames; each held the simulator {:.0} us (at most {:.0} us), \
                 then the brick {:.0} us (at most {:.0} us)",
                s.frames,
                s.locked_mean.as_secs_f64() * 1e6,
                s.locked_max.as_secs_f64() * 1e6,
                s.brick_mean.as_secs_f64() * 1e6,
                s.brick_max.as_secs_f64() * 1e6
            );
            println!("ev3-sim: simulation ticks: {}", sim.timing());
        }
        if let Some((path, thread)) = self.trace.take() {
            let trace = thread.join().map_err(|_| "the trace's thread panicked")?;
            let lines = trace.save(&path, title).map_err(|e| e.to_string())?;
            println!(
                "ev3-sim: trace in {} and {} ({} events)",
                path.display(),
                lines.display(),
                trace.events().len()
            );
        }
        Ok(())
    }
}

/// The picture's title for a run of `command` (in `world`): the program's
/// file name and its arguments, at most 60 characters.
pub fn title(world: Option<&str>, command: &[String]) -> String {
    let mut words = command.iter().map(String::as_str);
    let program = words.next().unwrap_or("");
    let name = std::path::Path::new(program)
        .file_name()
        .map_or(program.into(), |n| n.to_string_lossy());
    let mut title = std::iter::once(name.as_ref())
        .chain(words)
        .collect::<Vec<_>>()
        .join(" ");
    if title.chars().count() > 60 {
        title = title.chars().take(59).collect::<String>() + "…";
    }
    match world {
        Some(world) => format!("ev3-sim --world {world}: {title}"),
        None => format!("ev3-sim: {title}"),
    }
}
