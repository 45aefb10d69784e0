//! The I/O strategies and the measurement loop.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ev3sysfs::SysfsDevice;
use nix::sys::resource::{getrusage, UsageWho};

use crate::stats::Summary;
use crate::sys::Mapping;

/// Whether a strategy writes (commands) or reads (sensor values).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Write,
    Read,
}

/// What is measured: the attribute files and the value to write.
pub struct Target {
    pub device: SysfsDevice,
    /// The typed motor, when the target is a tacho motor: the `driver`
    /// strategies then use its `speed_sp` setter and `position` getter.
    pub motor: Option<ev3sysfs::motor::TachoMotor>,
    pub write_attr: String,
    pub read_attr: Option<String>,
    pub value: String,
}

impl Target {
    fn write_path(&self) -> PathBuf {
        self.device.dir().join(&self.write_attr)
    }
    fn read_path(&self) -> Option<PathBuf> {
        self.read_attr.as_ref().map(|a| self.device.dir().join(a))
    }
}

/// How long and how often.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    pub iterations: usize,
    pub warmup: usize,
    pub max_time: Duration,
}

/// One strategy's measurements.
#[derive(Debug, Clone)]
pub struct Measurement {
    pub summary: Summary,
    /// Sorted per-operation latencies in nanoseconds.
    pub samples: Vec<u64>,
    pub user: Duration,
    pub system: Duration,
    pub wall: Duration,
    pub voluntary_switches: libc::c_long,
    pub involuntary_switches: libc::c_long,
}

/// One row of the report.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub kind: Kind,
    pub strategy: &'static str,
    pub flags: &'static str,
    /// The measurements, or why the strategy could not run here.
    pub result: Result<Measurement, String>,
}

impl Outcome {
    /// `pwrite/O_SYNC`, `pread`, `driver`...
    pub fn label(&self) -> String {
        if self.flags == "none" || self.strategy == "driver" {
            self.strategy.to_string()
        } else {
            format!("{}/{}", self.strategy, self.flags)
        }
    }
}

type Op<'a> = Box<dyn FnMut() -> Result<(), String> + 'a>;

fn io_err(e: std::io::Error) -> String {
    match e.raw_os_error() {
        Some(code) => {
            let errno = nix::errno::Errno::from_raw(code);
            format!("{errno:?} ({})", errno.desc())
        }
        None => e.to_string(),
    }
}

fn flag_bits(flags: &str) -> i32 {
    match flags {
        "O_SYNC" => libc::O_SYNC,
        "O_DSYNC" => libc::O_DSYNC,
        "O_DIRECT" => libc::O_DIRECT,
        _ => 0,
    }
}

fn open(path: &Path, kind: Kind, flags: &str) -> Result<File, String> {
    OpenOptions::new()
        .read(kind == Kind::Read)
        .write(kind == Kind::Write)
        .custom_flags(flag_bits(flags))
        .open(path)
        .map_err(|e| format!("open: {}", io_err(e)))
}

fn check_written(n: usize, len: usize) -> Result<(), String> {
    if n == len {
        Ok(())
    } else {
        Err(format!("short write: {n} of {len} bytes"))
    }
}

fn check_read(n: usize) -> Result<(), String> {
    if n > 0 {
        Ok(())
    } else {
        Err("read returned no data (EOF)".into())
    }
}

/// Builds the operation of a write strategy.
fn write_op<'a>(target: &'a Target, strategy: &str, flags: &'static str) -> Result<Op<'a>, String> {
    let path = target.write_path();
    let value = target.value.as_bytes();
    Ok(match strategy {
        "reopen" => {
            // One open first, so that an unsupported flag is reported once.
            drop(open(&path, Kind::Write, flags)?);
            Box::new(move || {
                let mut f = open(&path, Kind::Write, flags)?;
                check_written(f.write(value).map_err(io_err)?, value.len())
            })
        }
        "seek-write" => {
            let mut f = open(&path, Kind::Write, flags)?;
            Box::new(move || {
                f.seek(SeekFrom::Start(0)).map_err(io_err)?;
                check_written(f.write(value).map_err(io_err)?, value.len())
            })
        }
        "pwrite" => {
            let f = open(&path, Kind::Write, flags)?;
            Box::new(move || check_written(f.write_at(value, 0).map_err(io_err)?, value.len()))
        }
        "stdio" => {
            let mut w = BufWriter::with_capacity(4096, open(&path, Kind::Write, flags)?);
            Box::new(move || {
                w.seek(SeekFrom::Start(0)).map_err(io_err)?;
                w.write_all(value).map_err(io_err)?;
                w.flush().map_err(io_err)
            })
        }
        _ => {
            let (device, attr, text) = (&target.device, &target.write_attr, &target.value);
            match (&target.motor, attr.as_str(), text.parse::<i32>()) {
                (Some(motor), "speed_sp", Ok(speed)) => {
                    Box::new(move || motor.set_speed_sp(speed).map_err(|e| e.to_string()))
                }
                _ => {
                    device.attribute(attr).map_err(|e| e.to_string())?;
                    Box::new(move || device.write_str(attr, text).map_err(|e| e.to_string()))
                }
            }
        }
    })
}

/// Builds the operation of a read strategy.
fn read_op<'a>(target: &'a Target, strategy: &str) -> Result<Op<'a>, String> {
    let Some(path) = target.read_path() else {
        return Err("no readable attribute".into());
    };
    let mut buf = [0u8; 4096];
    Ok(match strategy {
        "reopen" => Box::new(move || {
            let mut f = open(&path, Kind::Read, "none")?;
            check_read(f.read(&mut buf).map_err(io_err)?)
        }),
        "seek-read" => {
            let mut f = open(&path, Kind::Read, "none")?;
            Box::new(move || {
                f.seek(SeekFrom::Start(0)).map_err(io_err)?;
                check_read(f.read(&mut buf).map_err(io_err)?)
            })
        }
        "pread" => {
            let f = open(&path, Kind::Read, "none")?;
            Box::new(move || check_read(f.read_at(&mut buf, 0).map_err(io_err)?))
        }
        "mmap" => {
            let f = open(&path, Kind::Read, "none")?;
            let map = Mapping::map(&f, 4096).map_err(|e| format!("mmap: {}", io_err(e)))?;
            Box::new(move || {
                let (len, _sum) = map.read_value();
                check_read(len)
            })
        }
        _ if target.motor.is_some() && target.read_attr.as_deref() == Some("position") => {
            let motor = target.motor.as_ref().ok_or("no motor")?;
            Box::new(move || motor.position().map(drop).map_err(|e| e.to_string()))
        }
        _ => {
            let device = &target.device;
            let attr = target.read_attr.as_deref().unwrap_or_default();
            device.attribute(attr).map_err(|e| e.to_string())?;
            Box::new(move || {
                device
                    .read_text(attr, |t| Ok(t.len()))
                    .map(drop)
                    .map_err(|e| e.to_string())
            })
        }
    })
}

fn rusage() -> Result<nix::sys::resource::Usage, String> {
    getrusage(UsageWho::RUSAGE_THREAD).map_err(|e| format!("getrusage: {e}"))
}

fn duration(tv: nix::sys::time::TimeVal) -> Duration {
    use nix::sys::time::TimeValLike;
    Duration::from_micros(u64::try_from(tv.num_microseconds()).unwrap_or(0))
}

/// How many rounds the strategies take turns in: each round runs every
/// strategy for its share of the operations, so that a machine that speeds
/// up or slows down during the run (frequency scaling, a noisy neighbour,
/// another vCPU's load) affects every strategy alike.
pub const ROUNDS: usize = 20;

/// One strategy's measurements so far.
#[derive(Default)]
struct Tally {
    samples: Vec<u64>,
    user: Duration,
    system: Duration,
    wall: Duration,
    voluntary_switches: libc::c_long,
    involuntary_switches: libc::c_long,
}

impl Tally {
    /// Runs `op` `count` times, timing each operation.
    fn chunk(&mut self, op: &mut Op<'_>, count: usize) -> Result<(), String> {
        let before = rusage()?;
        let start = Instant::now();
        for _ in 0..count {
            let t0 = Instant::now();
            op()?;
            self.samples.push(t0.elapsed().as_nanos() as u64);
        }
        self.wall += start.elapsed();
        let after = rusage()?;
        self.user += duration(after.user_time()).saturating_sub(duration(before.user_time()));
        self.system += duration(after.system_time()).saturating_sub(duration(before.system_time()));
        self.voluntary_switches +=
            after.voluntary_context_switches() - before.voluntary_context_switches();
        self.involuntary_switches +=
            after.involuntary_context_switches() - before.involuntary_context_switches();
        Ok(())
    }

    fn finish(mut self) -> Result<Measurement, String> {
        let summary = Summary::of(&mut self.samples).ok_or("no operations")?;
        Ok(Measurement {
            summary,
            samples: self.samples,
            user: self.user,
            system: self.system,
            wall: self.wall,
            voluntary_switches: self.voluntary_switches,
            involuntary_switches: self.involuntary_switches,
        })
    }
}

/// Builds the operation of one combination.
fn op_for<'a>(
    target: &'a Target,
    kind: Kind,
    strategy: &str,
    flags: &'static str,
) -> Result<Op<'a>, String> {
    match kind {
        Kind::Write => write_op(target, strategy, flags),
        Kind::Read => read_op(target, strategy),
    }
}

/// Measures every combination: warm-up, then [`ROUNDS`] rounds in which the
/// strategies take turns (starting with a different one each round), until
/// each has done `plan.iterations` operations or the time limit (the plan's
/// limit per strategy, for all of them together) is reached. A strategy
/// that fails drops out with the error as its row's reason.
pub fn run_all(
    target: &Target,
    plan: &Plan,
    rows: &[(Kind, &'static str, &'static str)],
) -> Vec<Outcome> {
    let mut ops: Vec<Result<Op<'_>, String>> = rows
        .iter()
        .map(|&(kind, s, f)| {
            let mut op = op_for(target, kind, s, f)?;
            for _ in 0..plan.warmup {
                op()?;
            }
            Ok(op)
        })
        .collect();
    let mut tallies: Vec<Tally> = rows.iter().map(|_| Tally::default()).collect();
    let limit = plan
        .max_time
        .saturating_mul(u32::try_from(rows.len()).unwrap_or(u32::MAX));
    let start = Instant::now();
    for round in 0..ROUNDS {
        // The first rounds take the remainder: the counts add up exactly.
        let count = plan.iterations / ROUNDS + usize::from(round < plan.iterations % ROUNDS);
        for turn in 0..rows.len() {
            let i = (turn + round) % rows.len();
            if let Ok(op) = &mut ops[i] {
                if let Err(e) = tallies[i].chunk(op, count) {
                    ops[i] = Err(e);
                }
            }
        }
        if start.elapsed() > limit {
            break;
        }
    }
    rows.iter()
        .zip(ops)
        .zip(tallies)
        .map(|((&(kind, strategy, flags), op), tally)| Outcome {
            kind,
            strategy,
            flags,
            result: op.and_then(|_| tally.finish()),
        })
        .collect()
}

pub const WRITE_STRATEGIES: [&str; 4] = ["reopen", "seek-write", "pwrite", "stdio"];
pub const READ_STRATEGIES: [&str; 5] = ["reopen", "seek-read", "pread", "mmap", "driver"];

/// Every (kind, strategy, flags) combination, in report order.
pub fn matrix(flags: &[String], readable: bool) -> Vec<(Kind, &'static str, &'static str)> {
    let mut rows = Vec::new();
    for f in super::args::ALL_FLAGS {
        if flags.iter().any(|g| g == f) {
            for s in WRITE_STRATEGIES {
                rows.push((Kind::Write, s, f));
            }
        }
    }
    rows.push((Kind::Write, "driver", "O_SYNC"));
    if readable {
        for s in READ_STRATEGIES {
            rows.push((Kind::Read, s, "none"));
        }
    }
    rows
}
