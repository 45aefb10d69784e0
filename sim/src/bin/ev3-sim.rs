//! `ev3-sim`: a simulated EV3 brick for any program.
//!
//! ```text
//! ev3-sim --mount DIR [DEVICES]             serve a brick at DIR until killed
//! ev3-sim [DEVICES] --over-sys-class -- CMD [ARGS...]
//!                                           run CMD with the brick over /sys/class
//! ```
//!
//! The brick is `ev3sysfs_sim::MockTree::ev3()` (eight lego-ports, four
//! LEDs, the battery, board-info) plus its devices, simulated in real time.
//! `--over-sys-class` runs CMD in a private mount namespace (util-linux
//! `unshare -m` and `mount --bind`, as root) where the brick is bound over
//! `/sys/class`, so python-ev3dev2 or any other ev3dev library runs
//! unchanged; ev3-sim exits with CMD's status.
//!
//! In the namespace the program also finds the brick's buttons and beeper
//! at `/dev/input/by-path/platform-gpio_keys-event` and
//! `platform-sound-event` (and jessie's `platform-snd-legoev3-event`), its
//! framebuffer at `/dev/fb0` (a regular file that can be mapped) with
//! `/sys/class/graphics/fb0`, and a `beep` in `/usr/bin` that plays on the
//! simulated beeper (python-ev3dev2's `Sound.beep` and `Sound.tone` run it).
//!
//! Other programs act on the brick through the control line protocol
//! ([`ev3sysfs_sim::control`]): lines written to the FIFO
//! `$EV3SIM_CONTROL` (fire and forget), or sent to the Unix socket
//! `$EV3SIM_SOCKET`, which answers each line with `ok [TEXT]` or
//! `error MESSAGE` (both printed by `--mount`).
//!
//! `--view [ADDR]` serves a live view of the brick in the browser and
//! `--trace FILE.svg` writes the run's picture and data (see `view.rs`).

#[path = "ev3-sim/view.rs"]
mod view;

use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::sync::Arc;

use ev3sysfs::screen::Geometry;
use ev3sysfs_sim::fb_ioctl::FramebufferIoctls;
use ev3sysfs_sim::world::WorldControl;
use ev3sysfs_sim::{MockDevice, MockTree, RealtimeSim, SimulatedIo, Simulator, WorldSpec};

#[path = "ev3-sim/control.rs"]
mod control;
#[path = "ev3-sim/stand_in.rs"]
mod stand_in;

use control::{Control, Served};

const USAGE: &str = "\
ev3-sim: a simulated EV3 brick (FUSE) for any program

USAGE:
  ev3-sim --mount DIR [DEVICES]
      serve the brick at DIR (an existing directory) until SIGINT/SIGTERM
  ev3-sim [DEVICES] --over-sys-class -- CMD [ARGS...]
      run CMD in a private mount namespace with the brick bound over
      /sys/class (root); exit with CMD's status

DEVICES (default: large motors on outA and outB, a medium motor on outC,
touch on in1, gyro on in2, color on in3, infrared on in4):
  --device PORT=DRIVER    plug DRIVER into PORT, e.g. outA=lego-ev3-l-motor,
                          in3=lego-ev3-color, outD=rcx-motor (repeatable;
                          given any, only those are plugged)
  --motor PORT:DRIVER     the same, as --device
  --sensor PORT:DRIVER    the same, as --device
  --empty                 plug nothing
  --world NAME|FILE       a simulated world: a robot in an arena whose
                          sensors see what its motors do; plugs the world's
                          devices. Built in: bumper, line, sorter, arm,
                          empty; or a world file (TOML, see the README)

Every brick has the eight lego-ports, the four brick LEDs, the battery and
board-info. Needs /dev/fuse and root (or fuse3's fusermount3 for --mount).
With --over-sys-class the command also finds the buttons and beeper under
/dev/input/by-path, /dev/fb0 (mappable; its FBIOGET_*SCREENINFO ioctls are
answered by ev3-sim) and a `beep` that plays on the simulated beeper.
Files are root:ev3dev (or $EV3SIM_GROUP, else ev3-sim's group), 0664/0444/0220,
enforced: a user outside the group gets EACCES, as on a brick.

PICTURES:
  --view [ADDR]           serve a live view at ADDR (default 127.0.0.1 and a
                          free port, printed on start): arena, robot, sensors,
                          motors, LEDs, screen, tones; its buttons press the
                          brick's buttons
  --trace FILE.svg        write the run's picture to FILE.svg and its data
                          as JSON lines to FILE.jsonl

CONTROL: lines to the FIFO $EV3SIM_CONTROL (fire and forget) or to the
Unix socket $EV3SIM_SOCKET (one reply line each: `ok [TEXT]` or
`error MESSAGE`), from any program (--mount prints both paths):
  set PORT ATTR VALUE     what a device reports: set in1 value0 1
  get PORT ATTR           what a device shows: get outA position
  press|release BUTTON    up down left right enter backspace
  click BUTTON [MS]       press, hold MS ms (default 100), release
  block PORT | free PORT  a motor that cannot turn (it stalls) / can again
  battery VOLTS           the battery's voltage: battery 7.1
  unplug PORT | plug PORT DRIVER
  tones | screen | ping   tones played (Hz), framebuffer (hex), liveness
  pose | move X Y HEADING with --world: where the robot is / put it there
";

/// The default brick: what most EV3 robots have.
const DEFAULT_DEVICES: [(&str, &str); 7] = [
    ("outA", "lego-ev3-l-motor"),
    ("outB", "lego-ev3-l-motor"),
    ("outC", "lego-ev3-m-motor"),
    ("in1", "lego-ev3-touch"),
    ("in2", "lego-ev3-gyro"),
    ("in3", "lego-ev3-color"),
    ("in4", "lego-ev3-ir"),
];

#[derive(Debug, Default)]
struct Options {
    mount: Option<PathBuf>,
    over_sys_class: bool,
    devices: Vec<(String, String)>,
    empty: bool,
    world: Option<String>,
    command: Vec<String>,
    view: Option<String>,
    trace: Option<PathBuf>,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = Options::default();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match arg.as_str() {
            "-h" | "--help" => return Err(String::new()),
            "--mount" => o.mount = Some(PathBuf::from(value("--mount")?)),
            "--over-sys-class" => o.over_sys_class = true,
            "--empty" => o.empty = true,
            "--view" => {
                let addr = it.as_slice().first().filter(|a| !a.starts_with('-'));
                o.view = Some(addr.map_or(view::DEFAULT_ADDR.into(), Clone::clone));
                if addr.is_some() {
                    it.next();
                }
            }
            "--trace" => o.trace = Some(PathBuf::from(value("--trace")?)),
            "--world" => o.world = Some(value("--world")?),
            "--device" | "--motor" | "--sensor" => {
                let spec = value(arg)?;
                let (port, driver) = spec
                    .split_once('=')
                    .or_else(|| spec.rsplit_once(':'))
                    .ok_or_else(|| format!("{arg} {spec}: expected PORT=DRIVER"))?;
                o.devices.push((port.to_owned(), driver.to_owned()));
            }
            "--" => {
                o.command = it.by_ref().cloned().collect();
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    match (&o.mount, o.over_sys_class) {
        (Some(_), true) => Err("--mount and --over-sys-class exclude each other".into()),
        (None, false) => Err("give --mount DIR or --over-sys-class -- CMD".into()),
        (None, true) if o.command.is_empty() => {
            Err("--over-sys-class needs a command after --".into())
        }
        _ => Ok(o),
    }
}

/// The devices of `o` (the defaults when none are given).
fn devices(o: &Options) -> Vec<(String, String)> {
    match (o.empty, o.devices.is_empty()) {
        (true, _) => Vec::new(),
        (false, true) => DEFAULT_DEVICES
            .iter()
            .map(|(p, d)| ((*p).to_owned(), (*d).to_owned()))
            .collect(),
        (false, false) => o.devices.clone(),
    }
}

/// A brick as [`MockTree::ev3`] makes it, keeping the battery's handle.
fn brick(dir: Option<&PathBuf>) -> Result<(Arc<MockTree>, MockDevice), String> {
    let tree = match dir {
        Some(dir) => MockTree::mount_at(dir),
        None => MockTree::new(),
    }
    .map_err(|e| e.to_string())?;
    let fail = |e: ev3sysfs::Error| e.to_string();
    for port in ["in1", "in2", "in3", "in4", "outA", "outB", "outC", "outD"] {
        tree.add_port(port).map_err(fail)?;
    }
    for led in [
        "led0:red:brick-status",
        "led0:green:brick-status",
        "led1:red:brick-status",
        "led1:green:brick-status",
    ] {
        tree.add_led(led, 255).map_err(fail)?;
    }
    let battery = tree.add_battery(true).map_err(fail)?;
    tree.add_board_info().map_err(fail)?;
    Ok((Arc::new(tree), battery))
}

/// The brick with its devices plugged (a world's when `--world` is
/// given), simulated in real time, its buttons, beeper and screen, and the
/// control channel (which serves the world's lines too). Dropped in this
/// order.
struct Stand {
    /// The live view and the run's picture (`--view`, `--trace`).
    pictures: Option<view::Pictures>,
    control: Control,
    sim: Arc<RealtimeSim>,
    io: Option<Arc<SimulatedIo>>,
    tree: Arc<MockTree>,
}

fn stand(dir: Option<&PathBuf>, o: &Options) -> Result<Stand, String> {
    let (tree, battery) = brick(dir)?;
    let io = match tree.add_brick_io(Geometry::EV3_XRGB) {
        Ok(io) => Some(Arc::new(io)),
        Err(e) => {
            eprintln!("ev3-sim: no buttons, beeper or screen: {e}");
            None
        }
    };
    let mut served = Served {
        tree: Arc::downgrade(&tree),
        io: io
            .as_ref()
            .map_or_else(std::sync::Weak::new, Arc::downgrade),
        plugged: Vec::new(),
        battery: Some(battery),
        extensions: Vec::new(),
    };
    let mut sim = Simulator::new(Arc::clone(&tree)).map_err(|e| e.to_string())?;
    match &o.world {
        Some(world) => {
            let spec = WorldSpec::load(world).map_err(|e| e.to_string())?;
            log::info!("world {}: {}", spec.name(), spec.about());
            served.plugged = sim.add_world(&spec).map_err(|e| e.to_string())?;
        }
        None => {
            for (port, driver) in devices(o) {
                served
                    .plug(&port, &driver)
                    .map_err(|e| format!("{port}={driver}: {e}"))?;
            }
        }
    }
    let sim = Arc::new(sim.run_realtime());
    // `pose` and `move`: the world's lines.
    served.extensions.push(Box::new(WorldControl(sim.handle())));
    let devices = served.plugged.iter().map(|(_, d)| d.clone()).collect();
    let pictures = pictures(&tree, &sim, io.clone(), devices, o)?;
    let control = Control::start(served)?;
    Ok(Stand {
        pictures,
        control,
        sim,
        io,
        tree,
    })
}

/// Blocks SIGINT and SIGTERM in this thread (and the threads it starts
/// later), so that `SigSet::wait` receives them.
fn block_signals() -> Result<nix::sys::signal::SigSet, String> {
    use nix::sys::signal::{SigSet, SigmaskHow, Signal};
    let mut set = SigSet::empty();
    set.add(Signal::SIGINT);
    set.add(Signal::SIGTERM);
    set.add(Signal::SIGHUP);
    nix::sys::signal::sigprocmask(SigmaskHow::SIG_BLOCK, Some(&set), None)
        .map_err(|e| format!("sigprocmask: {e}"))?;
    Ok(set)
}

fn serve(dir: PathBuf, o: &Options) -> Result<u8, String> {
    stand_in::check_mount_dir(&dir)?;
    // The devices' mount of a killed ev3-sim, beside the directory.
    let mut devices = dir.as_os_str().to_owned();
    devices.push(".dev/input");
    if let Err(e) = stand_in::check_mount_dir(std::path::Path::new(&devices)) {
        log::debug!("{e}");
    }
    let signals = block_signals()?;
    let mut stand = stand(Some(&dir), o)?;
    println!("ev3-sim: serving a simulated brick at {}", dir.display());
    println!(
        "ev3-sim: EV3SYSFS_ROOT={} ; SIGINT/SIGTERM to stop",
        dir.display()
    );
    if let Some(io) = &stand.io {
        println!("ev3-sim: EV3SYSFS_DEV={}", io.dev_root().display());
    }
    println!("ev3-sim: EV3SIM_CONTROL={}", stand.control.fifo.display());
    println!("ev3-sim: EV3SIM_SOCKET={}", stand.control.socket.display());
    let signal = signals.wait().map_err(|e| format!("sigwait: {e}"))?;
    log::info!("{signal:?}: unmounting");
    report(&stand.sim);
    if let Some(p) = stand.pictures.take() {
        p.finish("ev3-sim --mount")?;
    }
    drop(stand);
    Ok(0)
}

/// The live view and the trace, when asked for.
fn pictures(
    tree: &Arc<MockTree>,
    sim: &Arc<ev3sysfs_sim::RealtimeSim>,
    io: Option<Arc<SimulatedIo>>,
    devices: Vec<MockDevice>,
    o: &Options,
) -> Result<Option<view::Pictures>, String> {
    if o.view.is_none() && o.trace.is_none() {
        return Ok(None);
    }
    view::Pictures::start(tree, sim, io, devices, o.view.as_deref(), o.trace.clone()).map(Some)
}

/// Says what happened in the world, if there is one.
fn report(sim: &ev3sysfs_sim::RealtimeSim) {
    if let Some(report) = sim.with(|s| s.world().map(|w| w.report())) {
        eprintln!("ev3-sim: {report}");
    }
}

fn over_sys_class(o: &Options) -> Result<u8, String> {
    if !nix::unistd::geteuid().is_root() {
        return Err("--over-sys-class needs root (a mount namespace and a bind mount)".into());
    }
    let mut stand = stand(None, o)?;
    // Where the namespace's /dev is staged, and the `beep` for /usr/bin.
    let stage = stand.control.dir.join("host-dev");
    let bin = stand.control.dir.join("bin");
    let exe = std::env::current_exe().map_err(|e| format!("ev3-sim's own path: {e}"))?;
    std::fs::create_dir(&stage)
        .and_then(|()| std::fs::create_dir(&bin))
        .and_then(|()| std::os::unix::fs::symlink(&exe, bin.join("beep")))
        .map_err(|e| format!("{}: {e}", stand.control.dir.display()))?;
    let dev_root = stand
        .io
        .as_ref()
        .map_or_else(|| stage.join("none"), |io| io.dev_root().to_owned());
    // util-linux: a private mount namespace, the brick bound over
    // /sys/class and /dev, then the command.
    let mut command = Command::new("unshare");
    command
        .args(["--mount", "--propagation", "private", "--", "sh", "-c"])
        .arg(stand_in::NAMESPACE_SCRIPT)
        .arg("ev3-sim")
        .arg(stand.tree.root())
        .arg(&dev_root)
        .arg(&stage)
        .arg(&bin)
        .args(&o.command)
        .env("EV3SIM_CONTROL", &stand.control.fifo)
        .env("EV3SIM_SOCKET", &stand.control.socket)
        .env_remove(ev3sysfs::input::DEV_ENV);
    // The framebuffer's FBIOGET_*SCREENINFO, which a regular file cannot
    // answer (python-ev3dev2's Display asks them), answered by this process.
    let ioctls = stand.io.as_ref().and_then(|io| {
        FramebufferIoctls::attach(&mut command, io.framebuffer_path(), io.geometry())
            .map_err(|e| eprintln!("ev3-sim: no framebuffer ioctls: {e}"))
            .ok()
    });
    let mut child = command
        .spawn()
        .map_err(|e| format!("unshare (util-linux) could not run: {e}"))?;
    if let Some(ioctls) = ioctls {
        if let Err(e) = ioctls.serve() {
            eprintln!("ev3-sim: no framebuffer ioctls: {e}");
        }
    }
    let status = child
        .wait()
        .map_err(|e| format!("waiting for the command: {e}"))?;
    let _ = std::fs::remove_file(bin.join("beep"));
    let _ = std::fs::remove_dir(&bin);
    let _ = std::fs::remove_dir(&stage);
    report(&stand.sim);
    if let Some(p) = stand.pictures.take() {
        p.finish(&view::title(o.world.as_deref(), &o.command))?;
    }
    drop(stand);
    match status.code() {
        Some(125) => Err("could not bind the brick over /sys/class".into()),
        Some(code) => Ok(u8::try_from(code).unwrap_or(1)),
        // Killed by a signal: as a shell reports it.
        None => {
            use std::os::unix::process::ExitStatusExt;
            let signal = status.signal().unwrap_or(0);
            Ok(u8::try_from(128 + signal).unwrap_or(1))
        }
    }
}

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let args: Vec<String> = std::env::args().skip(1).collect();
    // Run as `beep` (in /usr/bin of the namespace): play on the beeper.
    let name = std::env::args_os().next().unwrap_or_default();
    if std::path::Path::new(&name).file_name() == Some(std::ffi::OsStr::new("beep")) {
        return ExitCode::from(stand_in::beep(&args));
    }
    let options = match parse(&args) {
        Ok(o) => o,
        Err(e) if e.is_empty() => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("ev3-sim: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let result = match &options.mount {
        Some(dir) => serve(dir.clone(), &options),
        None => over_sys_class(&options),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("ev3-sim: {e}");
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn parses_devices_in_both_spellings() {
        let o = parse(&args(&[
            "--device",
            "outA=lego-ev3-l-motor",
            "--sensor",
            "in3:lego-ev3-color",
            "--over-sys-class",
            "--",
            "python3",
            "x.py",
        ]))
        .unwrap();
        assert_eq!(o.devices[0], ("outA".into(), "lego-ev3-l-motor".into()));
        assert_eq!(o.devices[1], ("in3".into(), "lego-ev3-color".into()));
        assert_eq!(o.command, ["python3", "x.py"]);
        assert!(parse(&args(&["--over-sys-class"])).is_err());
        assert!(parse(&args(&["--mount", "/x", "--over-sys-class", "--", "a"])).is_err());
        assert!(parse(&args(&["--device", "outA"])).is_err());
        assert_eq!(parse(&args(&["--help"])).unwrap_err(), "");
        let o = parse(&args(&["--view", "--trace", "r.svg", "--mount", "/x"])).unwrap();
        assert_eq!(o.view.as_deref(), Some(view::DEFAULT_ADDR));
        assert_eq!(o.trace, Some(PathBuf::from("r.svg")));
        let o = parse(&args(&["--view", "0.0.0.0:8080", "--mount", "/x"])).unwrap();
        assert_eq!(o.view.as_deref(), Some("0.0.0.0:8080"));
        assert_eq!(
            view::title(Some("line"), &args(&["/a/b/prog", "-x"])),
            "ev3-sim --world line: prog -x"
        );
    }
}
