//! `ev3-probe`: the built-in latency probe. See `ev3-probe --help`.

mod args;
mod cpu;
mod plot;
mod report;
mod response;
mod stats;
mod strategy;
mod sys;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use ev3sysfs::{Access, Backing, SysfsDevice};
use ev3sysfs_sim::{MockTree, TachoDriver};

use args::{Format, Options};
use strategy::{Plan, Target};

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let options = match args::parse(std::env::args().skip(1)) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("ev3-probe: {e}");
            return ExitCode::from(2);
        }
    };
    if options.help {
        print!("{}", args::HELP);
        return ExitCode::SUCCESS;
    }
    let result = match options.response {
        Some(trials) => run_response(&options, trials),
        None => run(&options),
    };
    if let Some(signal) = sys::interrupted() {
        eprintln!(
            "ev3-probe: stopped by signal {signal}: the attribute is restored{}",
            if result.is_ok() { ", no report" } else { "" }
        );
        return ExitCode::from(u8::try_from(128 + signal).unwrap_or(1));
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ev3-probe: {e}");
            ExitCode::from(1)
        }
    }
}

/// Where the measured device comes from; the simulated brick lives as long as
/// the measurement.
struct Chosen {
    device: SysfsDevice,
    write_attr: String,
    read_attr: Option<String>,
    description: String,
    mock: Option<MockTree>,
}

fn choose(o: &Options) -> Result<Chosen, String> {
    if let Some(path) = &o.path {
        let (dir, name) = split_attr_path(path)?;
        let device = SysfsDevice::from_dir(dir).map_err(|e| e.to_string())?;
        let readable = Access::of_file(path).map_err(|e| e.to_string())?.can_read();
        return Ok(Chosen {
            device,
            write_attr: name.clone(),
            read_attr: readable.then_some(name),
            description: path.display().to_string(),
            mock: None,
        });
    }
    let root = o.root.clone().unwrap_or_else(ev3sysfs::default_root);
    let motors = ev3sysfs::list(&root, "tacho-motor").map_err(|e| e.to_string())?;
    let (device, description, mock) = if o.force_mock || (motors.is_empty() && o.port.is_none()) {
        private_mounts();
        let tree = MockTree::new().map_err(|e| e.to_string())?;
        let mock = tree
            .add_tacho_motor("outA", TachoDriver::Ev3Large)
            .map_err(|e| e.to_string())?;
        let device = SysfsDevice::open(tree.root(), "tacho-motor", &mock.name())
            .map_err(|e| e.to_string())?;
        let why = if o.force_mock {
            "--mock"
        } else {
            "no tacho motor found"
        };
        let description = format!(
            "SIMULATED brick ({why} under {}): host figures, not a brick",
            root.display()
        );
        (device, description, Some(tree))
    } else {
        let query = ev3sysfs::Query {
            class: "tacho-motor",
            port: o.port.as_deref(),
            drivers: &[],
        };
        let device = match &o.port {
            Some(_) => ev3sysfs::find(&root, &query).map_err(|e| e.to_string())?,
            None => SysfsDevice::from_dir(&motors[0].path).map_err(|e| e.to_string())?,
        };
        let description = device.dir().display().to_string();
        (device, description, None)
    };
    Ok(Chosen {
        device,
        write_attr: o.attr.clone(),
        read_attr: Some(o.read_attr.clone()),
        description,
        mock,
    })
}

/// As root, the probe's own simulated brick is mounted in a mount namespace
/// of the probe's own, so that it goes with the probe however the probe
/// ends (even SIGKILL leaves no mount behind). Needs a single-threaded
/// process (it is, before the brick is served); without root, the brick is
/// mounted where everyone sees it, as before.
fn private_mounts() {
    use nix::mount::{mount, MsFlags};
    use nix::sched::{unshare, CloneFlags};
    if !nix::unistd::geteuid().is_root() || unshare(CloneFlags::CLONE_NEWNS).is_err() {
        return;
    }
    let _ = mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_PRIVATE,
        None::<&str>,
    );
}

/// `true` for a regular file that is not a sysfs attribute (a mock tree's).
fn is_regular_non_sysfs(chosen: &Chosen, path: &Path) -> bool {
    let sysfs = chosen
        .device
        .attribute(&chosen.write_attr)
        .is_ok_and(|a| a.backing() == Backing::Sysfs);
    !sysfs && std::fs::metadata(path).is_ok_and(|m| m.is_file())
}

fn split_attr_path(path: &Path) -> Result<(PathBuf, String), String> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| format!("{}: not an attribute file path", path.display()))?;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    Ok((dir.to_path_buf(), name.to_owned()))
}

/// The value to write: given, or the current one (read back), refusing run
/// commands without --allow-motion.
fn value_to_write(o: &Options, c: &Chosen) -> Result<(String, Option<String>), String> {
    let attr = c
        .device
        .attribute(&c.write_attr)
        .map_err(|e| e.to_string())?;
    if !attr.access().can_write() {
        return Err(format!(
            "{}: is read-only; choose a writable attribute with --attr",
            attr.path().display()
        ));
    }
    let original = if attr.access().can_read() {
        Some(attr.read_string().map_err(|e| e.to_string())?)
    } else {
        None
    };
    let value = match (&o.value, &original) {
        (Some(v), _) => v.clone(),
        (None, Some(current)) if !current.is_empty() => current.clone(),
        _ => {
            return Err(format!(
                "{}: write-only or empty; give the value to write with --value",
                attr.path().display()
            ))
        }
    };
    if c.write_attr == "command" && value != "stop" && value != "reset" && !o.allow_motion {
        return Err(format!(
            "writing {value:?} to `command` would move the motor: add --allow-motion if that is what you want"
        ));
    }
    Ok((value, original))
}

fn apply_realtime(o: &Options, header: &mut report::Header) -> Result<(), String> {
    if let Some(n) = o.nice {
        sys::set_nice(n).map_err(|e| format!("--nice {n}: {e}"))?;
    }
    if let Some(p) = o.fifo {
        sys::set_fifo(p).map_err(|e| format!("--fifo {p}: {e} (needs root or CAP_SYS_NICE)"))?;
    }
    if o.mlockall {
        use nix::sys::mman::{mlockall, MlockAllFlags};
        mlockall(MlockAllFlags::MCL_CURRENT | MlockAllFlags::MCL_FUTURE)
            .map_err(|e| format!("--mlockall: {e}"))?;
    }
    header.push((
        "real-time",
        format!(
            "nice {}, scheduler {}, mlockall {}",
            o.nice.map_or("unchanged".into(), |n| n.to_string()),
            o.fifo
                .map_or("unchanged".into(), |p| format!("SCHED_FIFO {p}")),
            if o.mlockall { "on" } else { "off" }
        ),
    ));
    Ok(())
}

fn machine() -> String {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let kernel = read("/proc/sys/kernel/osrelease");
    let cpuinfo = read("/proc/cpuinfo");
    let cpu = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name") || l.starts_with("Processor"))
        .and_then(|l| l.split_once(':'))
        .map_or("unknown CPU", |(_, v)| v.trim());
    format!(
        "{} {}, {cpu}, Linux {}",
        std::env::consts::ARCH,
        if cfg!(target_env = "musl") {
            "musl"
        } else {
            "glibc"
        },
        kernel.trim()
    )
}

/// `--response`: a tacho motor on a brick (with --allow-motion), or a
/// simulated one.
fn run_response(o: &Options, trials: usize) -> Result<(), String> {
    use ev3sysfs::motor::TachoMotor;
    use ev3sysfs_sim::Playground;
    if o.path.is_some() {
        return Err("--response needs a tacho motor: use --port, not --path".into());
    }
    let root = o.root.clone().unwrap_or_else(ev3sysfs::default_root);
    let place = if o.force_mock {
        private_mounts();
        Playground::simulated(add_simulated_motor)
    } else {
        Playground::at_or_simulated(root, "tacho-motor", add_simulated_motor)
    }
    .map_err(|e| e.to_string())?;
    if !place.is_simulated() && !o.allow_motion {
        return Err("--response moves the motor: add --allow-motion (and make room for it)".into());
    }
    let port = o.port.as_deref().unwrap_or("outA");
    let motor = if o.port.is_none() && !place.is_simulated() {
        let first = ev3sysfs::list(place.root(), "tacho-motor").map_err(|e| e.to_string())?;
        let info = first.first().ok_or("no tacho motor found")?;
        TachoMotor::from_device(
            ev3sysfs::SysfsDevice::from_dir(&info.path).map_err(|e| e.to_string())?,
        )
    } else {
        TachoMotor::find(place.root(), port)
    }
    .map_err(|e| e.to_string())?;
    let guard = ev3sysfs::StopGuard::install_with(ev3sysfs::motor::StopAction::Brake)
        .map_err(|e| e.to_string())?;
    guard.protect(&motor).map_err(|e| e.to_string())?;
    let mut header: report::Header = vec![
        (
            "target",
            if place.is_simulated() {
                format!(
                    "SIMULATED {} (motor simulator, 2 ms ticks): not a brick",
                    motor.driver_name()
                )
            } else {
                format!("{} {}", motor.driver_name(), motor.device().dir().display())
            },
        ),
        ("machine", machine()),
    ];
    apply_realtime(o, &mut header)?;
    let (cpu, pinned) = cpu::place(o.cpu, place.is_simulated())?;
    header.push(("cpu", cpu));
    for (k, v) in &header {
        println!("{k:>12}: {v}");
    }
    let measured = response::measure(&motor, trials);
    drop(pinned);
    let mut r = measured?;
    print!("{}", response::report(&mut r));
    Ok(())
}

fn add_simulated_motor(tree: &MockTree) -> ev3sysfs::Result<()> {
    tree.add_tacho_motor("outA", TachoDriver::Ev3Large)
        .map(drop)
}

fn run(o: &Options) -> Result<(), String> {
    // From here a signal ends the run as a normal end does: restored bytes,
    // a stopped motor.
    sys::catch_interrupts().map_err(|e| format!("signal handlers: {e}"))?;
    let chosen = choose(o)?;
    let (value, original) = value_to_write(o, &chosen)?;
    // A regular file given with --path gets its exact bytes back (white
    // space and all); sysfs gets the value, as the kernel re-renders it.
    let original_file = match &o.path {
        Some(path) if is_regular_non_sysfs(&chosen, path) => {
            Some(std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?)
        }
        _ => None,
    };
    let mut read_attr = chosen.read_attr.clone();
    if let Some(r) = &read_attr {
        match chosen.device.attribute(r) {
            Ok(a) if a.access().can_read() => {}
            _ => {
                eprintln!("ev3-probe: {r}: not readable here, read strategies skipped");
                read_attr = None;
            }
        }
    }
    let backing = match chosen
        .device
        .attribute(&chosen.write_attr)
        .map(|a| a.backing())
    {
        Ok(Backing::Sysfs) => "sysfs (kernfs)",
        Ok(Backing::SimulatedBrick) => {
            "simulated brick (FUSE, served by a thread of this process): \
             every read and write is a round trip to it"
        }
        _ => "another file system (not sysfs: stores are not whole-value)",
    };
    let simulated = backing.starts_with("simulated");
    let mut header: report::Header = vec![
        ("target", chosen.description.clone()),
        ("backing", backing.into()),
        (
            "figures",
            if simulated {
                "what a read or write costs through FUSE to the simulated brick \
                 (a thread of this process): NOT this machine's kernel sysfs, NOT a brick. \
                 This machine's real kernfs: scripts/probe-kernfs (as root); \
                 a brick: run ev3-probe on it"
                    .into()
            } else {
                format!("latency of {} on this machine", chosen.description)
            },
        ),
        ("write", format!("{} <- {value:?}", chosen.write_attr)),
        ("read", read_attr.clone().unwrap_or_else(|| "(none)".into())),
        ("machine", machine()),
        (
            "plan",
            format!(
                "{} ops per strategy after {} warm-up, strategies taking turns in {} rounds, \
                 at most {:.1} s each",
                o.iterations,
                o.warmup,
                strategy::ROUNDS,
                o.max_time.as_secs_f64()
            ),
        ),
    ];
    apply_realtime(o, &mut header)?;
    // The probe's own brick: its server is a thread of this process (a
    // brick of `ev3-sim` is another process's, wherever that one runs).
    let (cpu, pinned) = cpu::place(o.cpu, chosen.mock.is_some())?;
    header.push(("cpu", cpu));
    header.push(("clock", strategy::clock_overhead()));

    // A tacho motor (not a bare --path): measure the typed API as `driver`.
    let motor = if o.path.is_none() {
        ev3sysfs::SysfsDevice::from_dir(chosen.device.dir())
            .and_then(ev3sysfs::motor::TachoMotor::from_device)
            .ok()
    } else {
        None
    };
    let driver_api = if motor.is_some() {
        "TachoMotor::set_speed_sp / TachoMotor::position"
    } else {
        "SysfsDevice::write_str / read_text"
    };
    header.push(("driver", driver_api.into()));
    let target = Target {
        motor,
        device: chosen.device,
        write_attr: chosen.write_attr,
        read_attr,
        value,
    };
    let plan = Plan {
        iterations: o.iterations,
        warmup: o.warmup,
        max_time: o.max_time,
    };
    let rows: Vec<_> = strategy::matrix(&o.flags, target.read_attr.is_some())
        .into_iter()
        .filter(|(kind, s, f)| {
            o.only.is_empty() || {
                let row = strategy::Outcome {
                    kind: *kind,
                    strategy: s,
                    flags: f,
                    result: Err(String::new()),
                };
                o.only.iter().any(|w| w == s || *w == row.label())
            }
        })
        .collect();
    let outcomes = strategy::run_all(&target, &plan, &rows);
    // Measured: the rest (restoring, unmounting) runs where it always did.
    drop(pinned);

    // A command written with --allow-motion: the motor stops, whatever
    // the command was, before anything else (also after a signal).
    let moved = target.write_attr == "command"
        && original_file.is_none()
        && !matches!(target.value.as_str(), "stop" | "reset");
    if moved {
        if let Err(e) = target.device.write_str("command", "stop") {
            eprintln!("ev3-probe: could not stop the motor: {e}");
        }
    }

    // Put the original back: a regular file byte for byte, a sysfs value
    // through the crate (whole-value store).
    if let (Some(bytes), Some(path)) = (&original_file, &o.path) {
        if let Err(e) = std::fs::write(path, bytes) {
            eprintln!("ev3-probe: could not restore {}: {e}", path.display());
        }
    } else if let Some(orig) = original.filter(|v| !v.is_empty()) {
        if let Err(e) = target.device.write_str(&target.write_attr, &orig) {
            eprintln!("ev3-probe: could not restore {}: {e}", target.write_attr);
        }
    }

    if sys::interrupted().is_some() {
        return Ok(());
    }
    let text = match o.format {
        Format::Table => report::table(&header, &outcomes),
        Format::Csv => report::csv(&outcomes),
        Format::Json => report::json(&header, &outcomes),
    };
    print!("{text}");
    if let Some(label) = &o.histogram {
        let found = outcomes.iter().find(|x| x.label() == *label);
        match found.map(|x| &x.result) {
            Some(Ok(m)) => {
                println!("\nhistogram of {label} ({} operations)", m.samples.len());
                for line in stats::histogram(&m.samples, 50) {
                    println!("{line}");
                }
            }
            Some(Err(e)) => eprintln!("ev3-probe: no histogram for {label}: {e}"),
            None => {
                let labels: Vec<String> = outcomes.iter().map(strategy::Outcome::label).collect();
                eprintln!(
                    "ev3-probe: --histogram {label}: no such strategy (have: {})",
                    labels.join(", ")
                );
            }
        }
    }
    if o.format == Format::Table {
        if let Some(line) = report::verdict(&outcomes) {
            println!("\n{line}");
        }
    }
    if let Some(file) = &o.plot {
        let title = format!("ev3-probe: {}", header[0].1);
        std::fs::write(file, plot::svg(&title, &outcomes))
            .map_err(|e| format!("--plot {}: {e}", file.display()))?;
    }
    if outcomes.iter().all(|x| x.result.is_err()) {
        return Err("no strategy could be measured".into());
    }
    Ok(())
}
