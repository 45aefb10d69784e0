//! What the live view costs a real-time simulation (issue 16), shared by
//! `tests/view_cost.rs` (the same path with and without the page) and
//! `benches/view_cost.rs` (tick lateness and the view's CPU use): the
//! `empty` world in real time, a program driving its tank through the
//! sysfs files along five legs, with or without a client fetching the
//! view's state 25 times a second as the page does.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ev3sysfs::screen::Geometry;
use ev3sysfs::SysfsDevice;
use ev3sysfs_sim::view::{self, FrameStats, LiveView, ViewTarget};
use ev3sysfs_sim::{MockTree, Simulator, TickLateness, WorldSpec};

/// The legs: degrees of the left and right wheels (straight, turns).
pub const LEGS: [(i64, i64); 5] = [(720, 720), (-300, 300), (540, 540), (200, -200), (360, 360)];

/// The name of the client's thread (not the view's).
const CLIENT: &str = "view-client";

/// What the page's client and the view did.
#[derive(Debug, Clone, Copy)]
pub struct ViewCost {
    /// The view's snapshots and how long they held the locks.
    pub frames: FrameStats,
    /// States the client fetched per second.
    pub fps: f64,
    /// CPU time of the view's threads (its own and tiny_http's) over the
    /// program's run, as a share of one core.
    pub cpu_share: f64,
}

/// One run.
#[derive(Debug, Clone)]
pub struct Run {
    /// The robot's pose (x, y mm, heading degrees) after each leg.
    pub waypoints: Vec<(f64, f64, f64)>,
    /// The ticks' lateness over the run.
    pub lateness: TickLateness,
    /// With the page: what the view cost.
    pub view: Option<ViewCost>,
}

/// Each thread of this process: id, name and CPU time (ns).
fn threads() -> Vec<(u64, String, u64)> {
    crate::threads::of("self")
}

/// GETs `path` from `addr` (`Connection: close`); whether it answered 200.
fn get(addr: &str, path: &str) -> bool {
    let Ok(mut stream) = std::net::TcpStream::connect(addr) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut reply = Vec::new();
    let _ = stream.read_to_end(&mut reply);
    reply.starts_with(b"HTTP/1.1 200")
}

/// Runs the program in the `empty` world in real time, with a client
/// polling the live view 25 times a second when `page`.
///
/// # Errors
/// The simulated brick's (no FUSE here) and the program's.
pub fn run(page: bool) -> ev3sysfs::Result<Run> {
    let tree = Arc::new(MockTree::ev3()?);
    let io = Arc::new(tree.add_brick_io(Geometry::EV3_MONO)?);
    let mut sim = Simulator::new(Arc::clone(&tree))?;
    let devices = sim.add_world(&WorldSpec::load("empty")?)?;
    let scene = view::scene_of(&sim);
    let sim = Arc::new(sim.run_realtime());
    let motor = |port: &str| -> ev3sysfs::Result<SysfsDevice> {
        let (_, mock) = devices
            .iter()
            .find(|(p, _)| p == port)
            .expect("the empty world has this motor");
        SysfsDevice::open(tree.root(), "tacho-motor", &mock.name())
    };
    let wheels = [motor("outB")?, motor("outC")?];

    let before: Vec<u64> = threads().into_iter().map(|(tid, _, _)| tid).collect();
    let stop = Arc::new(AtomicBool::new(false));
    let fetched = Arc::new(AtomicU32::new(0));
    let mut client = None;
    let live = if page {
        let live = LiveView::start(
            "127.0.0.1:0",
            ViewTarget {
                tree: Arc::clone(&tree),
                io: Some(Arc::clone(&io)),
                sim: Some(Arc::clone(&sim)),
                devices: devices.iter().map(|(_, d)| d.clone()).collect(),
                scene,
            },
        )?;
        let addr = live
            .url()
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .to_owned();
        let (stop, fetched) = (Arc::clone(&stop), Arc::clone(&fetched));
        client = Some(
            std::thread::Builder::new()
                .name(CLIENT.into())
                .spawn(move || {
                    // The page: its files once, then the state 25 times a
                    // second.
                    get(&addr, "/");
                    get(&addr, "/arena");
                    let mut next = Instant::now();
                    while !stop.load(Ordering::Relaxed) {
                        if get(&addr, "/state") {
                            fetched.fetch_add(1, Ordering::Relaxed);
                        }
                        next += Duration::from_millis(40);
                        std::thread::sleep(next.saturating_duration_since(Instant::now()));
                    }
                })
                .expect("a thread"),
        );
        // The first frames and tiny_http's threads up.
        std::thread::sleep(Duration::from_millis(200));
        Some(live)
    } else {
        None
    };

    let (start_cpu, fetched_before, t0) =
        (threads(), fetched.load(Ordering::Relaxed), Instant::now());
    let mut waypoints = Vec::new();
    for (left, right) in LEGS {
        // Both wheels start between the same two ticks (under the
        // simulator's lock), so the path is the ticks' alone, whenever
        // they run on the wall clock.
        sim.with(|_| {
            for (wheel, degrees) in wheels.iter().zip([left, right]) {
                wheel.write_int("speed_sp", 500)?;
                wheel.write_str("stop_action", "hold")?;
                wheel.write_int("position_sp", degrees)?;
                wheel.write_str("command", "run-to-rel-pos")?;
            }
            Ok::<_, ev3sysfs::Error>(())
        })?;
        let deadline = Instant::now() + Duration::from_secs(20);
        while wheels
            .iter()
            .map(|w| w.read_string("state"))
            .collect::<ev3sysfs::Result<Vec<String>>>()?
            .iter()
            .any(|s| s.contains("running"))
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(10));
        }
        let pose = sim.with(|s| s.world().map(|w| w.pose()));
        let pose = pose.expect("the empty world has a robot");
        waypoints.push((pose.x, pose.y, pose.heading.to_degrees()));
    }
    let wall = t0.elapsed().as_secs_f64();
    let end_cpu = threads();
    let lateness = sim.timing();
    stop.store(true, Ordering::Relaxed);
    if let Some(client) = client {
        let _ = client.join();
    }
    let view = live.map(|live| {
        let start: HashMap<u64, u64> = start_cpu.iter().map(|(t, _, ns)| (*t, *ns)).collect();
        let ns: u64 = end_cpu
            .iter()
            .filter(|(tid, name, _)| !before.contains(tid) && name != CLIENT)
            .map(|(tid, _, ns)| ns.saturating_sub(start.get(tid).copied().unwrap_or(0)))
            .sum();
        ViewCost {
            frames: live.stats(),
            fps: (fetched.load(Ordering::Relaxed) - fetched_before) as f64 / wall,
            cpu_share: ns as f64 / 1e9 / wall,
        }
    });
    sim.check()?;
    Ok(Run {
        waypoints,
        lateness,
        view,
    })
}

/// The largest distance (mm) and heading difference (degrees) between
/// two runs' waypoints.
pub fn apart(a: &Run, b: &Run) -> (f64, f64) {
    a.waypoints
        .iter()
        .zip(&b.waypoints)
        .fold((0.0, 0.0), |(d, h), (p, q)| {
            (
                f64::max(d, (p.0 - q.0).hypot(p.1 - q.1)),
                f64::max(h, (p.2 - q.2).abs()),
            )
        })
}
