//! Command-line options of `ev3-probe`.

use std::path::PathBuf;
use std::time::Duration;

pub const HELP: &str = "\
ev3-probe: what a motor command and a sensor read cost on this machine

Measures writing and reading one ev3dev attribute with several I/O strategies
side by side, the way the classic I/O studies do (per-operation latency
percentiles, user/system CPU, wall time, context switches):

  writes  reopen      open + write + close per command (ev3dev-c, Go, Java)
          seek-write  lseek + write on a kept fd (classic C, ev3dev2, ev3dev-lang-rust)
          pwrite      one pwrite(fd, value, 0) on a kept fd
          stdio       buffered writer: seek + write + flush per command
          driver      this crate: TachoMotor::set_speed_sp on a motor (checks the
                      range, then one pwrite), SysfsDevice::write_str on a --path
          each of the first four with open flags none, O_SYNC, O_DSYNC, O_DIRECT
  reads   reopen, seek-read, pread, mmap, driver (TachoMotor::position, or
          SysfsDevice::read_text on a --path)

USAGE:
  ev3-probe [OPTIONS]

TARGET (default: the first tacho motor; with no ev3dev devices present, a
simulated brick the probe mounts (FUSE), and it says so):
  --root DIR          sysfs class root [default: $EV3SYSFS_ROOT or /sys/class]
  --port PORT         tacho motor on PORT (outA, ev3-ports:outB, ...)
  --attr NAME         attribute to write [default: speed_sp]
  --read-attr NAME    attribute to read [default: position]
  --path FILE         write and read this attribute file instead
  --value TEXT        value to write [default: the attribute's current value]
  --allow-motion      allow writing a run command to `command` (the motor moves!)
  --mock              measure the simulated brick even if a brick is present

MEASUREMENT:
  -n, --iterations N  operations per strategy (at most 100000000) [default: 2000]
  --warmup N          unmeasured operations first [default: 200]
  --max-time SECS     stop a strategy after this long, warm-up included (at most
                      86400) [default: 10]
  --only LIST         comma-separated strategies or labels (e.g. pwrite,pread,
                      seek-write/O_SYNC)
  --flags LIST        open flags for write strategies [default: none,O_SYNC,O_DSYNC,O_DIRECT]

REAL-TIME SETTINGS (reported in the header; negative nice and FIFO need root):
  --nice N            setpriority (ev3dev runs programs at -10)
  --fifo PRIO         SCHED_FIFO with priority PRIO (1-99)
  --mlockall          lock current and future memory (no page faults)
  --cpu N|any         while measuring, run every thread of the probe on CPU
                      N, or leave them where the scheduler puts them
                      [default: with its own simulated brick, the CPU the
                      probe starts on (a round trip to the brick's thread on
                      another core waits for that core to wake); otherwise
                      any]

RESPONSE (moves the motor):
  --response TRIALS   time from writing run-forever until `state` shows running
                      and until `position` changes, over TRIALS start/stop
                      cycles at half speed. On a brick it needs --allow-motion;
                      with no motor present it runs the simulator.

OUTPUT:
  --format FMT        table, csv or json [default: table]
  --histogram LABEL   ASCII latency histogram of one strategy (e.g. pwrite/O_SYNC)
  --plot FILE.svg     every strategy's latency histogram as an SVG picture
  -h, --help          this text

The probe never sends a run command unless --allow-motion: by default it writes
the attribute's current value back, and it restores the original value at the
end. Exit status: 0 on success, 1 on a measurement error, 2 on a usage error.
";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    Csv,
    Json,
}

/// Where the probe's threads run (`--cpu`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cpu {
    /// With the probe's own simulated brick, the CPU it starts on;
    /// otherwise any.
    Default,
    /// Wherever the scheduler puts them.
    Any,
    /// Every thread on this CPU.
    Fixed(usize),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    pub root: Option<PathBuf>,
    pub port: Option<String>,
    pub attr: String,
    pub read_attr: String,
    pub path: Option<PathBuf>,
    pub value: Option<String>,
    pub allow_motion: bool,
    pub force_mock: bool,
    pub iterations: usize,
    pub warmup: usize,
    pub max_time: Duration,
    pub only: Vec<String>,
    pub flags: Vec<String>,
    pub nice: Option<i32>,
    pub fifo: Option<i32>,
    pub mlockall: bool,
    pub cpu: Cpu,
    pub format: Format,
    pub histogram: Option<String>,
    pub plot: Option<PathBuf>,
    pub response: Option<usize>,
    pub help: bool,
}

pub const ALL_FLAGS: [&str; 4] = ["none", "O_SYNC", "O_DSYNC", "O_DIRECT"];

impl Default for Options {
    fn default() -> Options {
        Options {
            root: None,
            port: None,
            attr: "speed_sp".into(),
            read_attr: "position".into(),
            path: None,
            value: None,
            allow_motion: false,
            force_mock: false,
            iterations: 2000,
            warmup: 200,
            max_time: Duration::from_secs(10),
            only: Vec::new(),
            flags: ALL_FLAGS.iter().map(|s| s.to_string()).collect(),
            nice: None,
            fifo: None,
            mlockall: false,
            cpu: Cpu::Default,
            format: Format::Table,
            histogram: None,
            plot: None,
            response: None,
            help: false,
        }
    }
}

fn number<T: std::str::FromStr>(option: &str, value: &str) -> Result<T, String> {
    value
        .parse()
        .map_err(|_| format!("{option}: {value:?} is not a valid number"))
}

/// The most operations per strategy: 100 million samples are 800 MB.
pub const MAX_ITERATIONS: usize = 100_000_000;

/// The longest --max-time: one day per strategy.
pub const MAX_SECONDS: f64 = 86_400.0;

/// `--max-time SECS`: a positive, finite number of seconds up to a day
/// (`1e300`, `NaN`, `inf`, `-1` and `0` are refused with a reason).
fn max_time(option: &str, value: &str) -> Result<Duration, String> {
    let secs: f64 = number(option, value)?;
    if secs.is_nan() {
        return Err(format!("{option}: {value:?} is not a number of seconds"));
    }
    if secs <= 0.0 {
        return Err(format!("{option}: {value:?}: must be more than 0 seconds"));
    }
    if secs > MAX_SECONDS {
        return Err(format!(
            "{option}: {value:?} seconds is absurd: at most {MAX_SECONDS} (one day) per strategy"
        ));
    }
    Ok(Duration::from_secs_f64(secs))
}

fn list(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Parses the arguments after the program name.
pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Options, String> {
    let mut o = Options::default();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_owned(), Some(v.to_owned())),
            _ => (arg.clone(), None),
        };
        let mut value = || -> Result<String, String> {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| format!("{name} needs a value (see --help)"))
        };
        match name.as_str() {
            "-h" | "--help" => o.help = true,
            "--root" => o.root = Some(value()?.into()),
            "--port" => o.port = Some(value()?),
            "--attr" => o.attr = value()?,
            "--read-attr" => o.read_attr = value()?,
            "--path" => o.path = Some(value()?.into()),
            "--value" => o.value = Some(value()?),
            "--allow-motion" => o.allow_motion = true,
            "--mock" => o.force_mock = true,
            "-n" | "--iterations" => {
                // As a u64: on the brick's 32-bit usize, 10^12 is a valid
                // number that is too large (refused below), not a bad one.
                let n: u64 = number(&name, &value()?)?;
                o.iterations = usize::try_from(n).unwrap_or(usize::MAX);
            }
            "--warmup" => o.warmup = number(&name, &value()?)?,
            "--max-time" => {
                o.max_time = max_time(&name, &value()?)?;
            }
            "--only" => o.only = list(&value()?),
            "--flags" => {
                let flags = list(&value()?);
                if let Some(bad) = flags.iter().find(|f| !ALL_FLAGS.contains(&f.as_str())) {
                    return Err(format!(
                        "--flags: unknown flag {bad:?} (choose from {})",
                        ALL_FLAGS.join(",")
                    ));
                }
                o.flags = flags;
            }
            "--nice" => o.nice = Some(number(&name, &value()?)?),
            "--fifo" => {
                let prio: i32 = number(&name, &value()?)?;
                if !(1..=99).contains(&prio) {
                    return Err(format!("--fifo: priority {prio} is outside 1..=99"));
                }
                o.fifo = Some(prio);
            }
            "--mlockall" => o.mlockall = true,
            "--cpu" => {
                o.cpu = match value()?.as_str() {
                    "any" => Cpu::Any,
                    n => Cpu::Fixed(
                        n.parse()
                            .map_err(|_| format!("--cpu: {n:?} is not a CPU number or \"any\""))?,
                    ),
                }
            }
            "--format" => {
                o.format = match value()?.as_str() {
                    "table" => Format::Table,
                    "csv" => Format::Csv,
                    "json" => Format::Json,
                    other => return Err(format!("--format: {other:?} is not table, csv or json")),
                }
            }
            "--histogram" => o.histogram = Some(value()?),
            "--plot" => o.plot = Some(value()?.into()),
            "--response" => {
                let trials: usize = number(&name, &value()?)?;
                if trials == 0 {
                    return Err("--response needs at least 1 trial".into());
                }
                o.response = Some(trials);
            }
            other => return Err(format!("unknown option {other:?} (see --help)")),
        }
    }
    if o.iterations == 0 {
        return Err("--iterations must be at least 1".into());
    }
    if o.iterations > MAX_ITERATIONS {
        return Err(format!(
            "--iterations {}: at most {MAX_ITERATIONS} per strategy (every operation's time is \
             kept for the percentiles, 8 bytes each); --max-time bounds a run's length",
            o.iterations
        ));
    }
    if o.path.is_some() && o.port.is_some() {
        return Err("--path and --port choose the target in two ways: give one".into());
    }
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Options, String> {
        parse(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn defaults() {
        let o = p(&[]).unwrap();
        assert_eq!(o, Options::default());
        assert_eq!(o.iterations, 2000);
        assert_eq!(o.flags.len(), 4);
    }

    #[test]
    fn options_and_values() {
        let o = p(&[
            "--port",
            "outB",
            "-n",
            "50",
            "--warmup=5",
            "--format",
            "json",
            "--only",
            "pwrite,pread",
            "--flags",
            "none,O_SYNC",
            "--nice",
            "-10",
            "--fifo",
            "20",
            "--mlockall",
            "--histogram",
            "pwrite/O_SYNC",
            "--max-time",
            "0.5",
            "--response",
            "3",
            "--cpu",
            "1",
        ])
        .unwrap();
        assert_eq!(o.port.as_deref(), Some("outB"));
        assert_eq!((o.iterations, o.warmup), (50, 5));
        assert_eq!(o.format, Format::Json);
        assert_eq!(o.only, ["pwrite", "pread"]);
        assert_eq!(o.flags, ["none", "O_SYNC"]);
        assert_eq!((o.nice, o.fifo, o.mlockall), (Some(-10), Some(20), true));
        assert_eq!(o.histogram.as_deref(), Some("pwrite/O_SYNC"));
        assert_eq!(o.max_time, Duration::from_millis(500));
        assert_eq!(o.response, Some(3));
        assert_eq!(o.cpu, Cpu::Fixed(1));
        assert_eq!(p(&["--cpu", "any"]).unwrap().cpu, Cpu::Any);
    }

    #[test]
    fn usage_errors_are_clear() {
        assert!(p(&["--bogus"]).unwrap_err().contains("--bogus"));
        assert!(p(&["-n"]).unwrap_err().contains("needs a value"));
        assert!(p(&["-n", "many"])
            .unwrap_err()
            .contains("not a valid number"));
        assert!(p(&["-n", "0"]).is_err());
        assert!(p(&["--format", "xml"]).unwrap_err().contains("xml"));
        assert!(p(&["--flags", "O_FAST"]).unwrap_err().contains("O_FAST"));
        assert!(p(&["--fifo", "100"]).is_err());
        assert!(p(&["--max-time", "-1"]).is_err());
        assert!(p(&["--path", "/x", "--port", "outA"]).is_err());
        assert!(p(&["--response", "0"]).is_err());
        assert!(p(&["--cpu", "first"]).unwrap_err().contains("\"first\""));
        assert!(p(&["--cpu", "-1"]).is_err());
        assert!(p(&["--help"]).unwrap().help);
    }

    #[test]
    fn absurd_times_and_counts_are_refused_with_a_reason() {
        for (value, says) in [
            ("1e300", "absurd"),
            ("inf", "absurd"),
            ("NaN", "not a number"),
            ("-1", "more than 0"),
            ("0", "more than 0"),
        ] {
            let e = p(&["--max-time", value]).unwrap_err();
            assert!(e.contains(says), "{value}: {e}");
        }
        assert!(p(&["--max-time", "86400"]).is_ok());
        let e = p(&["-n", "1000000000000"]).unwrap_err();
        assert!(e.contains("at most 100000000"), "{e}");
        // Any warm-up count: --max-time bounds it.
        let o = p(&["--warmup", &usize::MAX.to_string()]).unwrap();
        assert_eq!(o.warmup, usize::MAX);
    }
}
