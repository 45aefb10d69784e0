//! [`LiveView`]: the simulated brick live in a browser.
//!
//! Two threads of its own: one takes a [`Snapshot`] 25 times a second
//! (holding the simulator's lock only to copy simulated time and the
//! robot's pose, then the brick's only to copy what the models show) and
//! renders it to JSON once, outside both locks; the other serves HTTP with `tiny_http` (a maintained,
//! synchronous server: no async runtime, no HTTP parsing here). The page
//! asks for `/state` in a loop over a kept-alive connection; each answer is
//! the latest rendered frame, an `Arc` cloned under a lock that is released
//! before anything is written to a socket. So the simulation never waits
//! for a browser.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tiny_http::{Header, Method, Request, Response, Server};

use super::json::{key, number, string};
use super::{Arena, Scene, Shape, Snapshot};
use crate::buttons::Button;
use crate::error::{Error, Operation, Result};
use crate::{MockDevice, MockTree, RealtimeSim, SimulatedIo};

/// The page: one self-contained file (no CDN, no build step).
const PAGE: &str = include_str!("page.html");

/// How often the page's state is rendered.
pub const FRAME: Duration = Duration::from_millis(40);

/// What a [`LiveView`] shows and drives.
pub struct ViewTarget {
    /// The simulated brick.
    pub tree: Arc<MockTree>,
    /// Its buttons, beeper and screen, when it has them.
    pub io: Option<Arc<SimulatedIo>>,
    /// Its simulator, for simulated time and to block motors.
    pub sim: Option<Arc<RealtimeSim>>,
    /// The devices the page can press (touch sensors) or block (motors).
    pub devices: Vec<MockDevice>,
    /// The world around the brick.
    pub scene: Box<dyn Scene>,
}

impl std::fmt::Debug for ViewTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ViewTarget")
            .field("root", &self.tree.root())
            .finish_non_exhaustive()
    }
}

/// What the frames thread counts (see [`LiveView::stats`]). Behind a
/// mutex, not in atomics: the brick's armv5te has no 64-bit atomics.
#[derive(Debug, Default)]
struct Stats(Mutex<Counts>);

#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    frames: u64,
    locked_ns: u64,
    locked_max_ns: u64,
    brick_ns: u64,
    brick_max_ns: u64,
}

impl Counts {
    /// One snapshot held the simulator for `sim` and the brick for `brick`.
    fn held(&mut self, sim: Duration, brick: Duration) {
        let ns = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        self.locked_ns = self.locked_ns.saturating_add(ns(sim));
        self.locked_max_ns = self.locked_max_ns.max(ns(sim));
        self.brick_ns = self.brick_ns.saturating_add(ns(brick));
        self.brick_max_ns = self.brick_max_ns.max(ns(brick));
    }
}

impl Stats {
    fn update(&self, f: impl FnOnce(&mut Counts)) {
        f(&mut self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner));
    }

    fn now(&self) -> Counts {
        *self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// How often the view took the brick's state, and how long it held the
/// simulator's lock and then the brick's for it (each keeps a tick
/// waiting).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct FrameStats {
    /// Snapshots taken.
    pub frames: u64,
    /// Mean time a snapshot held the simulator's lock (simulated time and
    /// the robot's pose copied).
    pub locked_mean: Duration,
    /// The longest.
    pub locked_max: Duration,
    /// Mean time a snapshot then held the brick's lock (what the models
    /// show, copied).
    pub brick_mean: Duration,
    /// The longest.
    pub brick_max: Duration,
}

/// The latest frame, shared between the two threads.
#[derive(Default)]
struct Latest {
    state: Arc<String>,
    screen: Arc<Vec<u8>>,
}

/// A live view of a simulated brick in the browser: serves a page at
/// [`LiveView::url`] until dropped.
pub struct LiveView {
    url: String,
    stats: Arc<Stats>,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    server: Arc<Server>,
}

impl std::fmt::Debug for LiveView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveView").field("url", &self.url).finish()
    }
}

impl LiveView {
    /// Serves the live view of `target` at `addr` (`127.0.0.1:0`: a free
    /// port on the loopback).
    ///
    /// # Errors
    /// [`Error::Io`] when the address cannot be bound.
    pub fn start(addr: &str, target: ViewTarget) -> Result<LiveView> {
        let server = Server::http(addr).map_err(|e| Error::Io {
            path: addr.into(),
            operation: Operation::Open,
            source: std::io::Error::new(std::io::ErrorKind::AddrNotAvailable, e.to_string()),
        })?;
        let url = match server.server_addr().to_ip() {
            Some(a) => format!("http://{a}/"),
            None => format!("http://{addr}/"),
        };
        let server = Arc::new(server);
        let stop = Arc::new(AtomicBool::new(false));
        let latest = Arc::new(Mutex::new(Latest::default()));
        let static_json = Arc::new(arena_json(&target));
        let target = Arc::new(Mutex::new(target));
        let stats = Arc::new(Stats::default());
        let snapshots = {
            let (stop, latest, target) = (stop.clone(), latest.clone(), target.clone());
            let stats = Arc::clone(&stats);
            std::thread::Builder::new()
                .name("ev3-view-frames".into())
                .spawn(move || frames(&stop, &latest, &target, &stats))
                .map_err(|e| {
                    Error::from_io(std::path::Path::new("thread"), Operation::Open, None, e)
                })?
        };
        let http = {
            let (stop, server) = (stop.clone(), server.clone());
            let controls = Controls::of(&target);
            std::thread::Builder::new()
                .name("ev3-view-http".into())
                .spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        match server.recv_timeout(Duration::from_millis(100)) {
                            Ok(Some(request)) => serve(request, &latest, &static_json, &controls),
                            Ok(None) => {}
                            Err(e) => log::debug!("view: {e}"),
                        }
                    }
                })
                .map_err(|e| {
                    Error::from_io(std::path::Path::new("thread"), Operation::Open, None, e)
                })?
        };
        Ok(LiveView {
            url,
            stats,
            stop,
            threads: vec![snapshots, http],
            server,
        })
    }

    /// The page's address, `http://127.0.0.1:PORT/`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Snapshots taken so far and how long they held the simulator: what
    /// the view costs the simulation.
    pub fn stats(&self) -> FrameStats {
        let counts = self.stats.now();
        let mean = |ns: u64| Duration::from_nanos(ns.checked_div(counts.frames).unwrap_or(0));
        FrameStats {
            frames: counts.frames,
            locked_mean: mean(counts.locked_ns),
            locked_max: Duration::from_nanos(counts.locked_max_ns),
            brick_mean: mean(counts.brick_ns),
            brick_max: Duration::from_nanos(counts.brick_max_ns),
        }
    }
}

impl Drop for LiveView {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.server.unblock();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// The frames thread: a snapshot every [`FRAME`], rendered once.
fn frames(stop: &AtomicBool, latest: &Mutex<Latest>, target: &Mutex<ViewTarget>, stats: &Stats) {
    let start = Instant::now();
    let mut next = Instant::now();
    let mut screen: Arc<Vec<u8>> = Arc::default();
    let mut screens = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let frame = {
            let mut t = target.lock().unwrap_or_else(|p| p.into_inner());
            let io = t.io.as_deref();
            // The simulator waits only to copy its time and the robot's
            // pose, the brick only to copy what its models show: the rest
            // (parsing, the scene, JSON) is done after, as are the
            // buttons, tones and screen.
            let (mut snap, sim_held, brick_held) = match &t.sim {
                Some(sim) => Snapshot::of_realtime_held(sim),
                None => {
                    let (snap, held) = Snapshot::take_held(&t.tree, start.elapsed());
                    (snap, Duration::ZERO, held)
                }
            };
            if let Some(io) = io {
                snap.read_io(io, true);
            }
            stats.update(|c| {
                c.frames += 1;
                c.held(sim_held, brick_held);
            });
            snap.look = t.scene.look(&snap);
            snap
        };
        if let Some(bytes) = &frame.screen {
            if **bytes != *screen {
                screen = Arc::new(bytes.clone());
                screens += 1;
            }
        }
        let mut json = frame.to_json();
        json.pop();
        json.push_str(&format!(",\"screen\":{screens}}}"));
        {
            let mut l = latest.lock().unwrap_or_else(|p| p.into_inner());
            l.state = Arc::new(json);
            l.screen = Arc::clone(&screen);
        }
        next += FRAME;
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        } else {
            next = now;
        }
    }
}

/// What the page's buttons reach.
struct Controls {
    io: Option<Arc<SimulatedIo>>,
    sim: Option<Arc<RealtimeSim>>,
    devices: Vec<MockDevice>,
}

impl Controls {
    fn of(target: &Mutex<ViewTarget>) -> Controls {
        let t = target.lock().unwrap_or_else(|p| p.into_inner());
        Controls {
            io: t.io.clone(),
            sim: t.sim.clone(),
            devices: t.devices.clone(),
        }
    }

    fn device(&self, port: &str) -> Option<&MockDevice> {
        let address = crate::port_address(port);
        self.devices
            .iter()
            .find(|d| d.address() == address && d.is_plugged())
    }

    /// `press/enter`, `release/enter`, `click/enter`, `touch/in1/1`,
    /// `block/outB/1`: `Ok` or what was wrong.
    fn act(&self, path: &str) -> std::result::Result<(), String> {
        let words: Vec<&str> = path.split('/').collect();
        match words.as_slice() {
            [verb @ ("press" | "release" | "click"), name] => {
                let button = Button::ALL
                    .into_iter()
                    .find(|b| b.to_string() == *name)
                    .ok_or("no such button")?;
                let io = self.io.as_ref().ok_or("this brick has no buttons")?;
                match *verb {
                    "press" => io.press(button),
                    "release" => io.release(button),
                    _ => io.click(button),
                }
                Ok(())
            }
            ["touch", port, on] => {
                let device = self.device(port).ok_or("nothing plugged there")?;
                device
                    .set_int("value0", i64::from(*on == "1"))
                    .map_err(|e| e.to_string())
            }
            ["block", port, on] => {
                let device = self.device(port).ok_or("nothing plugged there")?;
                let sim = self.sim.as_ref().ok_or("no simulator")?;
                sim.with(|s| s.block(device, *on == "1"));
                Ok(())
            }
            _ => Err("unknown action".into()),
        }
    }
}

/// `response` with the header `name: value` (left out if it were not a
/// valid header: the names and values here are constants).
fn with<R: std::io::Read>(response: Response<R>, name: &str, value: &str) -> Response<R> {
    match Header::from_bytes(name.as_bytes(), value.as_bytes()) {
        Ok(header) => response.with_header(header),
        Err(()) => response,
    }
}

fn serve(request: Request, latest: &Mutex<Latest>, arena: &str, controls: &Controls) {
    let url = request.url().to_owned();
    let path = url.split('?').next().unwrap_or("");
    let response = match (request.method(), path) {
        (Method::Get, "/") => with(
            Response::from_string(PAGE),
            "Content-Type",
            "text/html; charset=utf-8",
        ),
        (Method::Get, "/arena") => with(
            Response::from_string(arena),
            "Content-Type",
            "application/json",
        ),
        (Method::Get, "/state") => {
            let state = Arc::clone(&latest.lock().unwrap_or_else(|p| p.into_inner()).state);
            let response = with(
                Response::from_string(state.as_str()),
                "Content-Type",
                "application/json",
            );
            with(response, "Cache-Control", "no-store")
        }
        (Method::Get, "/screen") => {
            let screen = Arc::clone(&latest.lock().unwrap_or_else(|p| p.into_inner()).screen);
            let response = with(
                Response::from_data(screen.as_slice()),
                "Content-Type",
                "application/octet-stream",
            );
            with(response, "Cache-Control", "no-store")
        }
        (Method::Post, action) => match controls.act(action.trim_start_matches('/')) {
            Ok(()) => Response::from_string("ok"),
            Err(e) => Response::from_string(e).with_status_code(400),
        },
        _ => Response::from_string("not found").with_status_code(404),
    };
    if let Err(e) = request.respond(response) {
        log::debug!("view: answering {url}: {e}");
    }
}

/// What does not change: the arena, the devices and the screen's layout.
fn arena_json(target: &ViewTarget) -> String {
    let arena: Arena = target.scene.arena();
    let mut o = String::from("{");
    key(&mut o, "width", true);
    number(&mut o, arena.width);
    key(&mut o, "height", false);
    number(&mut o, arena.height);
    key(&mut o, "floor", false);
    string(&mut o, &arena.floor.to_string());
    key(&mut o, "shapes", false);
    o.push('[');
    for (i, shape) in arena.shapes.iter().enumerate() {
        if i > 0 {
            o.push(',');
        }
        shape_json(&mut o, shape);
    }
    o.push(']');
    key(&mut o, "screen", false);
    match &target.io {
        Some(io) => {
            let g = io.geometry();
            o.push_str(&format!(
                "{{\"width\":{},\"height\":{},\"bpp\":{},\"stride\":{}}}",
                g.width, g.height, g.bits_per_pixel, g.stride
            ));
        }
        None => o.push_str("null"),
    }
    o.push('}');
    o
}

fn points(o: &mut String, list: &[(f64, f64)]) {
    o.push('[');
    for (i, (x, y)) in list.iter().enumerate() {
        if i > 0 {
            o.push(',');
        }
        o.push('[');
        number(o, *x);
        o.push(',');
        number(o, *y);
        o.push(']');
    }
    o.push(']');
}

fn shape_json(o: &mut String, shape: &Shape) {
    o.push('{');
    key(o, "kind", true);
    match shape {
        Shape::Area { from, to, colour } => {
            string(o, "area");
            key(o, "points", false);
            points(o, &[*from, *to]);
            key(o, "colour", false);
            string(o, &colour.to_string());
        }
        Shape::Disc {
            centre,
            radius,
            colour,
        } => {
            string(o, "disc");
            key(o, "points", false);
            points(o, &[*centre]);
            key(o, "radius", false);
            number(o, *radius);
            key(o, "colour", false);
            string(o, &colour.to_string());
        }
        Shape::Line {
            points: list,
            width,
            colour,
        } => {
            string(o, "line");
            key(o, "points", false);
            points(o, list);
            key(o, "width", false);
            number(o, *width);
            key(o, "colour", false);
            string(o, &colour.to_string());
        }
        Shape::Block { from, to } => {
            string(o, "block");
            key(o, "points", false);
            points(o, &[*from, *to]);
        }
        Shape::Wall { from, to } => {
            string(o, "wall");
            key(o, "points", false);
            points(o, &[*from, *to]);
        }
    }
    o.push('}');
}
