//! Pictures of the simulated brick: the live view in a real browser
//! (headless Chromium over the DevTools protocol, `sim/tests/view/cdp.rs`) and
//! the trace of a run (SVG + JSON lines), byte-identical in simulated time.
//! Artefacts (screenshot, pictures) are kept under `target/tmp/view/`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "view/cdp.rs"]
mod cdp;
#[path = "../../tests/common/mod.rs"]
mod common;
#[path = "view/threads.rs"]
mod threads;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ev3sysfs::SysfsDevice;
use ev3sysfs_sim::view::{Arena, Odometry, Pose, Shape, Trace};
use ev3sysfs_sim::{SensorDriver, Simulator, TachoDriver};

/// Set for the program that runs under `ev3-sim` ([`view_child`]).
const CHILD: &str = "EV3SYSFS_VIEW_CHILD";

fn artefacts() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("view");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The robot program of [`live_view_in_chromium`], run under `ev3-sim
/// --world empty`: drives forward until ENTER is pressed, then stops, beeps 880 Hz and
/// says so on the screen.
#[test]
#[ignore = "the program live_view_in_chromium runs under ev3-sim"]
fn view_child() {
    use ev3sysfs::buttons::{Button, Buttons};
    use ev3sysfs::prelude::*;
    use ev3sysfs::screen::{Color, Screen};
    use ev3sysfs::sound::Beeper;
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let tank = Tank::large(default_root(), "outB", "outC").unwrap();
    let _guard = StopGuard::protecting(&tank).unwrap();
    let buttons = Buttons::open_default().unwrap();
    let mut screen = Screen::open_default().unwrap();
    screen.clear(Color::White);
    screen.text(4, 4, "driving: press ENTER", Color::Black);
    screen.show().unwrap();
    tank.on(Percent(10), Percent(10)).unwrap(); // ~50 mm/s: 20 s to a wall
    buttons
        .wait_for_press(Button::Enter, Duration::from_secs(60))
        .unwrap();
    tank.stop().unwrap();
    screen.clear(Color::White);
    screen.text(4, 4, "ENTER: stopped", Color::Black);
    screen.show().unwrap();
    Beeper::open_default()
        .unwrap()
        .tone(880, Duration::from_millis(400))
        .unwrap();
    println!("child: ENTER reached the program");
}

fn cpu_total(pid: u32, thread: Option<&str>) -> u64 {
    threads::of(&pid.to_string())
        .into_iter()
        .filter(|(_, name, _)| thread.is_none_or(|t| name == t))
        .map(|(_, _, ns)| ns)
        .sum()
}

/// A child process killed if the test fails before waiting for it.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// Waits (up to 10 s) until `expression`'s text in the page passes `ok`.
fn wait_for(browser: &mut cdp::Browser, page: &str, expression: &str, ok: impl Fn(&str) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let value = browser.eval(page, expression);
        if ok(value.as_str().unwrap_or("")) {
            return;
        }
        assert!(Instant::now() < deadline, "{expression}: {value}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn live_view_in_chromium() {
    let Some(bin) = option_env!("CARGO_BIN_EXE_ev3-sim") else {
        return common::skip("ev3-sim is not built");
    };
    if !common::is_root() {
        return common::skip("ev3-sim --over-sys-class needs root");
    }
    if common::under_qemu_user() {
        return common::skip("the live view runs on the host only (not under qemu-user)");
    }
    let Some(chromium) = cdp::chromium() else {
        return common::skip("no chromium here (scripts/install-test-deps installs Debian's)");
    };
    let dir = artefacts();
    let trace = dir.join("live-run.svg");
    let mut sim = KillOnDrop(
        Command::new(bin)
            .args(["--world", "empty", "--view", "--trace"])
            .arg(&trace)
            .args(["--over-sys-class", "--"])
            .arg(std::env::current_exe().unwrap())
            .args([
                "view_child",
                "--exact",
                "--include-ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD, "1")
            .env_remove(ev3sysfs::ROOT_ENV)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let pid = sim.0.id();
    let (lines_tx, lines) = std::sync::mpsc::channel();
    let stdout = sim.0.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            eprintln!("ev3-sim: {line}");
            let _ = lines_tx.send(line);
        }
    });
    let url = loop {
        let line = lines
            .recv_timeout(Duration::from_secs(20))
            .expect("ev3-sim prints the live view's address");
        if let Some(url) = line.strip_prefix("ev3-sim: live view at ") {
            break url.to_owned();
        }
    };
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");

    // Without the page: what ev3-sim uses (simulation, snapshots).
    let (before, t0) = (cpu_total(pid, None), Instant::now());
    std::thread::sleep(Duration::from_secs(2));
    let idle_share = (cpu_total(pid, None) - before) as f64 / t0.elapsed().as_nanos() as f64;

    let profile = common::TempDir::new("chromium-profile");
    let mut browser = cdp::Browser::start(chromium, profile.path()).unwrap();
    let page = browser.open(&url);
    let pose_x = |b: &mut cdp::Browser| {
        b.eval(
            &page,
            "parseFloat(document.getElementById('pose').dataset.x)",
        )
        .as_f64()
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    let first_x = loop {
        if let Some(x) = pose_x(&mut browser) {
            break x;
        }
        assert!(Instant::now() < deadline, "the page never showed the robot");
        std::thread::sleep(Duration::from_millis(100));
    };

    // With the page open: the whole process, the frames thread and the
    // HTTP threads, over 3 s (a figure, not a timed assertion).
    let (before, frames_before, t0) = (
        cpu_total(pid, None),
        browser.eval(&page, "frames").as_u64().unwrap(),
        Instant::now(),
    );
    let view_before =
        cpu_total(pid, Some("ev3-view-frames")) + cpu_total(pid, Some("ev3-view-http"));
    std::thread::sleep(Duration::from_secs(3));
    let wall = t0.elapsed().as_nanos() as f64;
    let open_share = (cpu_total(pid, None) - before) as f64 / wall;
    let view_after =
        cpu_total(pid, Some("ev3-view-frames")) + cpu_total(pid, Some("ev3-view-http"));
    let fps = (browser.eval(&page, "frames").as_u64().unwrap() - frames_before) as f64 * 1e9 / wall;
    eprintln!(
        "live view: {fps:.1} frames/s in the page; ev3-sim {:.2} % of a core without the page, \
         {:.2} % with it; the view's own threads {:.2} %",
        idle_share * 100.0,
        open_share * 100.0,
        (view_after - view_before) as f64 / wall * 100.0
    );
    // 25 frames/s by design (24-25 measured on an idle machine, 14 at a
    // load average of 14 on 2 cores); a floor that only a broken loop
    // misses (the figure above is the measurement).
    assert!(fps >= 5.0, "the page shows {fps:.1} frames/s");

    let moved_x = pose_x(&mut browser).unwrap();
    assert!(
        moved_x > first_x + 20.0,
        "the robot moved on the page: x {first_x} -> {moved_x}"
    );
    assert_eq!(
        browser.eval(
            &page,
            "document.querySelector('#motors-outB td:nth-child(4)').textContent"
        ),
        "running"
    );

    // The world on the page: the robot's footprint, the sensors' sights.
    let sights = browser.eval(
        &page,
        "lastState.sights.map((s) => s.kind + ':' + s.port).join(',') + (lastState.outline ? ',outline' : '')",
    );
    assert_eq!(sights, "bumper:in1,spot:in3,ray:in4,outline");

    // A hand on the wheel: the page blocks outB, the motor stalls.
    let state_b = "document.querySelector('#motors-outB td:nth-child(4)').textContent";
    browser.click(&page, "block-outB");
    wait_for(&mut browser, &page, state_b, |s| s.contains("stalled"));
    browser.click(&page, "block-outB");
    wait_for(&mut browser, &page, state_b, |s| !s.contains("stalled"));

    // A hand on the bumper in a world that has it free: pressed until
    // released from the page, whatever the world says tick after tick.
    let touch = "document.querySelector('#sensors-in1 td:nth-child(3)').textContent";
    assert_eq!(browser.eval(&page, touch), "0");
    browser.click(&page, "touch-in1");
    wait_for(&mut browser, &page, touch, |v| v == "1");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(browser.eval(&page, touch), "1", "held over many ticks");
    browser.click(&page, "touch-in1");
    wait_for(&mut browser, &page, touch, |v| v == "0");

    browser.click(&page, "btn-enter");
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let hz = browser.eval(&page, "document.getElementById('tone').dataset.hz || ''");
        if hz == "880" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the program never answered ENTER (tone {hz})"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(200));
    let png = browser.screenshot(&page);
    let shot = dir.join("live-view.png");
    std::fs::write(&shot, &png).unwrap();
    eprintln!("screenshot: {}", shot.display());
    assert!(png.starts_with(b"\x89PNG"));
    let stopped = pose_x(&mut browser).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        (pose_x(&mut browser).unwrap() - stopped).abs() < 1.0,
        "the robot stopped after ENTER"
    );
    drop(browser);

    let status = sim.0.wait().unwrap();
    reader.join().unwrap();
    let said: Vec<String> = lines.try_iter().collect();
    assert!(status.success(), "ev3-sim: {status}; {said:?}");
    assert!(
        said.iter().any(|l| l.contains("ENTER reached the program")),
        "{said:?}"
    );
    let svg = std::fs::read_to_string(&trace).unwrap();
    assert!(svg.contains("tone 880 Hz"), "the trace shows the tone");
    assert!(svg.contains("outB stalled"), "the trace shows the stall");
}

/// A bumper run in simulated time: a tank drives at a wall 400 mm ahead;
/// the program (here, between steps) stops when the touch sensor is
/// pressed. Returns the trace's picture and lines.
fn bumper_run() -> Option<(String, String)> {
    let tree = Arc::new(common::ev3_brick()?);
    let left = tree.add_tacho_motor("outB", TachoDriver::Ev3Large).unwrap();
    let right = tree.add_tacho_motor("outC", TachoDriver::Ev3Large).unwrap();
    let touch = tree.add_sensor("in1", SensorDriver::Ev3Touch).unwrap();
    let mut sim = Simulator::new(Arc::clone(&tree)).unwrap();
    let (l, r) = (left.clone(), right.clone());
    sim.script_sensor(&touch, 0, move |w| {
        let mm =
            (w.position(&l) + w.position(&r)) as f64 / 2.0 / 360.0 * 56.0 * std::f64::consts::PI;
        i64::from(mm >= 400.0)
    });
    let mut arena = Arena::table(1000.0, 600.0);
    arena.shapes.push(Shape::Wall {
        from: (720.0, 100.0),
        to: (720.0, 500.0),
    });
    let start = Pose {
        x: 200.0,
        y: 300.0,
        heading: 0.0,
    };
    let mut trace = Trace::new(Odometry::new(arena, "outB", "outC", 56.0, 112.0, start));
    let motors: Vec<SysfsDevice> = [&left, &right]
        .iter()
        .map(|m| SysfsDevice::open(tree.root(), "tacho-motor", &m.name()).unwrap())
        .collect();
    for m in &motors {
        m.write_int("speed_sp", 500).unwrap();
        m.write_str("command", "run-forever").unwrap();
    }
    let bumper = SysfsDevice::open(tree.root(), "lego-sensor", &touch.name()).unwrap();
    let mut stopped = false;
    trace.record(&tree, None, sim.time());
    while sim.time() < Duration::from_secs(3) {
        sim.step(Duration::from_millis(20)).unwrap();
        trace.record(&tree, None, sim.time());
        if !stopped && bumper.read_int("value0").unwrap() == 1 {
            for m in &motors {
                m.write_str("command", "stop").unwrap();
            }
            stopped = true;
        }
    }
    assert!(stopped, "the bumper was pressed");
    Some((
        trace.svg("bumper: tank to the wall"),
        trace.json_lines().to_owned(),
    ))
}

#[test]
fn a_trace_is_byte_identical_in_simulated_time() {
    let Some((svg, lines)) = bumper_run() else {
        return;
    };
    let (svg2, lines2) = bumper_run().unwrap();
    assert!(lines == lines2, "the same run gives the same JSON lines");
    assert!(svg == svg2, "the same run gives the same picture");
    assert!(svg.contains("bumper in1 pressed"), "{svg}");
    let first = lines.lines().next().unwrap();
    assert!(
        first.starts_with(r#"{"t":0,"pose":{"x":200.0,"y":300.0"#),
        "{first}"
    );
    let last = lines.lines().last().unwrap();
    assert!(last.contains(r#""state":"""#), "motors stopped: {last}");
    std::fs::write(artefacts().join("bumper-run.svg"), &svg).unwrap();
}

#[test]
fn the_probe_plots_its_histograms() {
    let Some(bin) = option_env!("CARGO_BIN_EXE_ev3-probe") else {
        return common::skip("ev3-probe is not built");
    };
    if common::ev3_brick().is_none() {
        return; // said why
    }
    let file = artefacts().join("probe.svg");
    let _ = std::fs::remove_file(&file);
    let out = common::own_binary(bin)
        .args([
            "--mock",
            "-n",
            "50",
            "--warmup",
            "5",
            "--only",
            "pwrite,pread",
            "--plot",
        ])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let svg = std::fs::read_to_string(&file).unwrap();
    assert!(svg.starts_with("<svg"), "{svg}");
    for row in [">pwrite</text>", ">pread</text>", "(50 ops)"] {
        assert!(svg.contains(row), "{row} in {svg}");
    }
}

/// One HTTP/1.1 request to `url`'s server (`Connection: close`): the
/// status code and the body.
fn http(url: &str, method: &str, path: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let host = url.trim_start_matches("http://").trim_end_matches('/');
    let mut stream = std::net::TcpStream::connect(host).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).unwrap();
    let status = reply[9..12].parse().unwrap();
    let body = reply.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    (status, body.to_owned())
}

#[test]
fn the_view_serves_the_page_the_state_and_the_buttons() {
    use ev3sysfs::buttons::Button;
    use ev3sysfs::screen::Geometry;
    use ev3sysfs_sim::view::{LiveView, Table, ViewTarget};
    let Some(tree) = common::ev3_brick() else {
        return;
    };
    let tree = Arc::new(tree);
    let touch = tree.add_sensor("in1", SensorDriver::Ev3Touch).unwrap();
    let io = Arc::new(tree.add_brick_io(Geometry::EV3_MONO).unwrap());
    let view = LiveView::start(
        "127.0.0.1:0",
        ViewTarget {
            tree: Arc::clone(&tree),
            io: Some(Arc::clone(&io)),
            sim: None,
            devices: vec![touch.clone()],
            scene: Box::new(Table(Arena::table(1000.0, 800.0))),
        },
    )
    .unwrap();
    let url = view.url().to_owned();
    let (status, page) = http(&url, "GET", "/");
    assert_eq!(status, 200);
    assert!(
        page.contains("<canvas id=\"arena\"") && !page.contains("http://"),
        "self-contained"
    );
    let (_, arena) = http(&url, "GET", "/arena");
    assert!(
        arena.starts_with(r#"{"width":1000.0,"height":800.0"#),
        "{arena}"
    );
    assert!(arena.contains(r#""screen":{"width":178,"height":128,"bpp":1,"stride":24}"#));
    std::thread::sleep(Duration::from_millis(100));
    let (_, state) = http(&url, "GET", "/state");
    assert!(
        state.contains(r#""port":"in1","driver":"lego-ev3-touch""#),
        "{state}"
    );
    let (_, screen) = http(&url, "GET", "/screen");
    assert_eq!(screen.len(), 24 * 128, "the framebuffer's bytes");

    assert_eq!(http(&url, "POST", "/press/enter").0, 200);
    assert!(io.pressed().contains(Button::Enter));
    std::thread::sleep(Duration::from_millis(100));
    assert!(http(&url, "GET", "/state")
        .1
        .contains(r#""buttons":["enter"]"#));
    assert_eq!(http(&url, "POST", "/release/enter").0, 200);
    assert!(!io.pressed().contains(Button::Enter));
    assert_eq!(http(&url, "POST", "/touch/in1/1").0, 200);
    assert_eq!(touch.read_int("value0").unwrap(), 1);
    assert_eq!(http(&url, "POST", "/press/nosuch").0, 400);
    assert_eq!(http(&url, "POST", "/block/outA/1").0, 400, "nothing there");
    assert_eq!(http(&url, "GET", "/nothing").0, 404);
    drop(view);
    // tiny_http's accept thread ends just after the drop.
    let addr = url.trim_start_matches("http://").trim_end_matches('/');
    let deadline = Instant::now() + Duration::from_secs(5);
    while std::net::TcpStream::connect(addr).is_ok() {
        assert!(
            Instant::now() < deadline,
            "the server is gone with the view"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The bumper world in simulated time: the program (between steps) drives
/// until the bumper is pressed. The trace's picture and lines.
fn bumper_world_run() -> Option<(String, String)> {
    use ev3sysfs_sim::view::scene_of;
    use ev3sysfs_sim::world::WorldSpec;
    let tree = Arc::new(common::ev3_brick()?);
    let mut sim = Simulator::new(Arc::clone(&tree)).unwrap();
    sim.add_world(&WorldSpec::load("bumper").unwrap()).unwrap();
    let mut trace = Trace::new(scene_of(&sim));
    let open = |class: &str, port: &str| {
        let query = ev3sysfs::discover::Query {
            class,
            port: Some(port),
            drivers: &[],
        };
        ev3sysfs::discover::find(tree.root(), &query).unwrap()
    };
    let motors = [open("tacho-motor", "outB"), open("tacho-motor", "outC")];
    let bumper = open("lego-sensor", "in1");
    for m in &motors {
        m.write_int("speed_sp", 400).unwrap();
        m.write_str("command", "run-forever").unwrap();
    }
    let mut pressed = false;
    while sim.time() < Duration::from_secs(4) && !pressed {
        trace
            .run(
                &mut sim,
                None,
                Duration::from_millis(20),
                Duration::from_millis(20),
            )
            .unwrap();
        pressed = bumper.read_int("value0").unwrap() == 1;
    }
    for m in &motors {
        m.write_str("command", "stop").unwrap();
    }
    trace
        .run(
            &mut sim,
            None,
            Duration::from_millis(200),
            Duration::from_millis(20),
        )
        .unwrap();
    assert!(pressed, "the bumper met the wall");
    Some((trace.svg("bumper world"), trace.json_lines().to_owned()))
}

#[test]
fn a_world_run_gives_the_same_trace_twice() {
    let Some((svg, lines)) = bumper_world_run() else {
        return;
    };
    let (svg2, lines2) = bumper_world_run().unwrap();
    assert!(lines == lines2 && svg == svg2, "byte-identical");
    assert!(svg.contains("bumper in1 pressed"), "{svg}");
    assert!(lines.contains(r#""outline":[["#), "the world's footprint");
    assert!(
        lines.contains(r#"{"kind":"bumper","port":"in1""#),
        "{lines}"
    );
    std::fs::write(artefacts().join("bumper-world.svg"), &svg).unwrap();
}
