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
//! Other programs unplug and plug devices through a control FIFO, whose path
//! CMD finds in `$EV3SIM_CONTROL` (and `--mount` prints): lines
//! `unplug PORT` and `plug PORT DRIVER`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::{Arc, Weak};

use ev3sysfs_sim::{MockDevice, MockTree, Simulator, WorldSpec};

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

CONTROL: a FIFO (its path in $EV3SIM_CONTROL for CMD; printed by --mount)
takes lines `unplug PORT` and `plug PORT DRIVER` from any program.
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

/// The simulator of `tree` with the devices of `o` plugged in (a world's
/// when `--world` is given), and the devices by port.
fn simulate(
    tree: &Arc<MockTree>,
    o: &Options,
) -> Result<(Simulator, Vec<(String, MockDevice)>), String> {
    let mut sim = Simulator::new(Arc::clone(tree)).map_err(|e| e.to_string())?;
    let plugged = match &o.world {
        Some(world) => {
            let spec = WorldSpec::load(world).map_err(|e| e.to_string())?;
            log::info!("world {}: {}", spec.name(), spec.about());
            sim.add_world(&spec).map_err(|e| e.to_string())?
        }
        None => build(tree, o)?,
    };
    Ok((sim, plugged))
}

/// Plugs the devices of `o`; returns them by port.
fn build(tree: &MockTree, o: &Options) -> Result<Vec<(String, MockDevice)>, String> {
    let defaults: Vec<(String, String)> = DEFAULT_DEVICES
        .iter()
        .map(|(p, d)| ((*p).to_owned(), (*d).to_owned()))
        .collect();
    let devices = match (o.empty, o.devices.is_empty()) {
        (true, _) => &[][..],
        (false, true) => &defaults[..],
        (false, false) => &o.devices[..],
    };
    let mut plugged = Vec::new();
    for (port, driver) in devices {
        let device = tree
            .plug(port, driver)
            .map_err(|e| format!("{port}={driver}: {e}"))?;
        log::info!("{port}: {driver} as {}", device.path().display());
        plugged.push((port.clone(), device));
    }
    Ok(plugged)
}

/// The control FIFO and the thread that reads it; removed on drop.
struct Control {
    dir: PathBuf,
    path: PathBuf,
}

impl Control {
    /// Creates the FIFO in a new private directory and starts its reader.
    /// The reader holds the brick weakly: the brick still unmounts on drop.
    fn start(tree: &Arc<MockTree>, plugged: Vec<(String, MockDevice)>) -> Result<Control, String> {
        use nix::sys::stat::Mode;
        let dir = nix::unistd::mkdtemp(&std::env::temp_dir().join("ev3-sim-XXXXXX"))
            .map_err(|e| format!("control directory: {e}"))?;
        let path = dir.join("control");
        nix::unistd::mkfifo(&path, Mode::from_bits_truncate(0o620))
            .map_err(|e| format!("control FIFO: {e}"))?;
        let (fifo, tree) = (path.clone(), Arc::downgrade(tree));
        std::thread::spawn(move || control_loop(&fifo, &tree, plugged));
        Ok(Control { dir, path })
    }
}

impl Drop for Control {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Reads control lines, writer after writer, until the brick is gone.
fn control_loop(fifo: &Path, tree: &Weak<MockTree>, mut plugged: Vec<(String, MockDevice)>) {
    // Opening blocks until a writer comes; each writer's lines, then EOF.
    while let Ok(file) = std::fs::File::open(fifo) {
        for line in BufReader::new(file).lines().map_while(Result::ok) {
            let Some(tree) = tree.upgrade() else {
                return;
            };
            match control(&tree, &mut plugged, &line) {
                Ok(()) => log::info!("control: {line}"),
                Err(e) => eprintln!("ev3-sim: control: {line:?}: {e}"),
            }
        }
    }
}

/// One control line: `unplug PORT` or `plug PORT DRIVER`.
fn control(
    tree: &MockTree,
    plugged: &mut Vec<(String, MockDevice)>,
    line: &str,
) -> Result<(), String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    match words.as_slice() {
        ["unplug", port] => {
            let i = plugged
                .iter()
                .position(|(p, _)| p == port)
                .ok_or_else(|| format!("nothing is plugged into {port}"))?;
            let (_, device) = plugged.remove(i);
            tree.unplug(&device).map_err(|e| e.to_string())
        }
        ["plug", port, driver] => {
            let device = tree.plug(port, driver).map_err(|e| e.to_string())?;
            plugged.push(((*port).to_owned(), device));
            Ok(())
        }
        [] => Ok(()),
        _ => Err("expected `unplug PORT` or `plug PORT DRIVER`".into()),
    }
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
    let signals = block_signals()?;
    let tree = Arc::new(MockTree::ev3_at(&dir).map_err(|e| e.to_string())?);
    let (sim, plugged) = simulate(&tree, o)?;
    let control = Control::start(&tree, plugged)?;
    let sim = sim.run_realtime();
    println!("ev3-sim: serving a simulated brick at {}", dir.display());
    println!(
        "ev3-sim: EV3SYSFS_ROOT={} ; SIGINT/SIGTERM to stop",
        dir.display()
    );
    println!("ev3-sim: EV3SIM_CONTROL={}", control.path.display());
    let signal = signals.wait().map_err(|e| format!("sigwait: {e}"))?;
    log::info!("{signal:?}: unmounting");
    report(&sim);
    drop(control);
    drop(sim);
    drop(tree);
    Ok(0)
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
    let tree = Arc::new(MockTree::ev3().map_err(|e| e.to_string())?);
    let (sim, plugged) = simulate(&tree, o)?;
    let control = Control::start(&tree, plugged)?;
    let sim = sim.run_realtime();
    // util-linux: a private mount namespace, the brick bound over
    // /sys/class, then the command.
    let status = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "--", "sh", "-c"])
        .arg("mount --bind \"$1\" /sys/class || exit 125; shift; exec \"$@\"")
        .arg("ev3-sim")
        .arg(tree.root())
        .args(&o.command)
        .env("EV3SIM_CONTROL", &control.path)
        .status()
        .map_err(|e| format!("unshare (util-linux) could not run: {e}"))?;
    report(&sim);
    drop(control);
    drop(sim);
    drop(tree);
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
    }
}
