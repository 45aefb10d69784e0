//! The crate's write path, read path and a control-loop iteration against
//! raw `pwrite`/`pread` on the attribute's own descriptor, in the same
//! process (raw writes send preformatted bytes, raw reads do not parse: the
//! crate's formatting, parsing and checks count as its overhead), paired:
//! both loops take turns in many short rounds (raw first in even rounds,
//! the crate first in odd ones), so drift of the machine's speed hits both;
//! each figure is the median of the per-round ratios.
//!
//! - real kernfs, as root: a veth pair's `mtu` attributes in a private
//!   network + mount namespace (`Attribute::write_int`, `read_int`; the loop
//!   reads both `mtu`s and writes one), in a single-threaded process (a
//!   fresh one after the simulated brick's pairs), then
//!   again with a second, parked thread in the process: a second thread
//!   makes each syscall on a descriptor take a reference on the file, which
//!   costs more than the crate adds;
//! - the simulated brick (FUSE, served by a thread of this process): a large
//!   motor's `duty_cycle_sp`, `position` and `speed` through the typed API
//!   (`TachoMotor::set_duty_cycle_sp`, `position`, `speed`), against raw
//!   syscalls on descriptors of the same files opened the same way; and a
//!   color sensor's `value0` (`Sensor::value(0)`), a touch sensor's
//!   (`TouchSensor::pressed`) and a typed reading in its mode
//!   (`ColorSensor::reflected`: `mode`, then `value0`) against raw `pread`s
//!   of the same files.
//!
//! `cargo bench --bench paired` (`-- kernfs` or `-- sim` for one backing;
//! `PAIRED_ROUNDS=N` for another number of rounds than 201). `-- diag`
//! (only when named) pairs the raw loops against themselves on kernfs (an
//! A/A run: how far from 1.000x two identical loops land is the noise floor
//! of the machine at the time); then the crate against raw syscalls that
//! format and parse as the crate does (its own `value` functions on the raw
//! buffers: the crate's machinery alone, apart from the arithmetic any
//! program pays to turn numbers into text and back); then a raw read whose
//! bytes are weighed by the least a parser can do (the floor of any
//! integer read); then, below any conversion, a raw read that loads one
//! byte of the answer and a raw write of four bytes stored on the stack
//! just before the syscall (what touching the bytes alone costs); with
//! `kernfs` too, all of these again with the second thread. Without root or
//! FUSE a backing says why it is skipped.

use std::hint::black_box;
use std::os::fd::{AsFd, AsRawFd};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use ev3sysfs::{Access, Attribute};

#[path = "../common/kernfs.rs"]
mod kernfs;
mod sim;

/// Many short rounds: on a shared machine a round is either disturbed or
/// not, and the median of the per-round ratios skips the disturbed ones.
/// `PAIRED_ROUNDS` overrides it.
const ROUNDS: usize = 201;

/// The number of paired rounds: `PAIRED_ROUNDS`, or [`ROUNDS`].
fn rounds() -> usize {
    std::env::var("PAIRED_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(ROUNDS)
}

fn main() {
    let only: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let named = |name: &str| only.iter().any(|o| o == name);
    let wants = |name: &str| only.is_empty() || named(name);
    // The simulated brick first: the kernfs bench enters namespaces.
    if wants("sim") {
        if let Err(e) = sim::bench() {
            println!("paired bench, simulated brick: skipped: {e}");
        }
    }
    let (kernfs, diag) = (wants("kernfs"), named("diag"));
    if kernfs || diag {
        if wants("sim") || threads() > 1 {
            // In the process that ran the simulated brick's pairs, kernfs
            // syscalls stayed slower after its threads had ended (raw
            // 305-320 ns against 286-291 in a fresh process, ratios
            // 1.005-1.007x against 1.02x, as with the second thread
            // below): the kernfs pairs run in a fresh process of their
            // own.
            let args = [("kernfs", kernfs), ("diag", diag)];
            let status = std::env::current_exe().and_then(|exe| {
                Command::new(exe)
                    .args(args.iter().filter(|(_, on)| *on).map(|(name, _)| name))
                    .status()
            });
            if let Err(e) = status {
                println!("paired bench, kernfs: skipped, cannot run a fresh process: {e}");
            }
        } else if !nix::unistd::geteuid().is_root() {
            println!(
                "paired bench, kernfs: skipped, needs root (unshare -nm, mount sysfs, ip link add)"
            );
        } else if let Err(e) = kernfs_bench(kernfs, diag) {
            println!("paired bench, kernfs: skipped, no real kernfs here: {e}");
        }
    }
}

/// The number of threads of this process.
fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").map_or(1, Iterator::count)
}

/// Runs `raw` and `krate` (each doing `per_round` operations) in paired
/// rounds and prints ns per operation and the ratios. Each round is timed
/// twice: wall clock, and this thread's CPU time (user + kernel,
/// `CLOCK_THREAD_CPUTIME_ID`), which leaves out the time other processes
/// had the CPU (on a shared machine most of the noise); the CPU-time ratio
/// is the headline figure.
fn paired(name: &str, per_round: u32, raw: impl FnMut(), krate: impl FnMut()) {
    paired_as(name, "crate", per_round, raw, krate);
}

/// [`paired`], the second loop printed as `second`.
fn paired_as(
    name: &str,
    second: &str,
    per_round: u32,
    mut raw: impl FnMut(),
    mut krate: impl FnMut(),
) {
    // Warm-up: caches, branch predictors, the page of the stack.
    time(&mut raw, per_round);
    time(&mut krate, per_round);
    let rounds = rounds();
    let mut wall = (Vec::new(), Vec::new(), Vec::new());
    let mut cpu = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        let (r, c) = if round % 2 == 0 {
            let r = time(&mut raw, per_round);
            (r, time(&mut krate, per_round))
        } else {
            let c = time(&mut krate, per_round);
            (time(&mut raw, per_round), c)
        };
        let per_op = |d: Duration| d.as_nanos() as f64 / f64::from(per_round);
        for (v, r, c) in [(&mut wall, r.0, c.0), (&mut cpu, r.1, c.1)] {
            v.0.push(per_op(r));
            v.1.push(per_op(c));
            v.2.push(c.as_secs_f64() / r.as_secs_f64().max(1e-12));
        }
    }
    for v in [&mut wall, &mut cpu] {
        for w in [&mut v.0, &mut v.1, &mut v.2] {
            w.sort_by(f64::total_cmp);
        }
    }
    let mid = rounds / 2;
    println!(
        "  {name:<13} cpu: raw {:8.1} ns, {second} {:8.1} ns, ratio median {:.3}x \
         (quartiles {:.3}x..{:.3}x) | wall: raw {:8.1} ns, {second} {:8.1} ns, ratio median {:.3}x",
        cpu.0[mid],
        cpu.1[mid],
        cpu.2[mid],
        cpu.2[rounds / 4],
        cpu.2[3 * rounds / 4],
        wall.0[mid],
        wall.1[mid],
        wall.2[mid],
    );
}

/// This thread's CPU time (user + kernel).
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(
        u64::try_from(ts.tv_sec).unwrap_or(0),
        u32::try_from(ts.tv_nsec).unwrap_or(0),
    )
}

/// `n` calls of `f` (monomorphised: no indirect call in the loop): wall
/// time and thread CPU time.
#[inline(never)]
fn time<F: FnMut()>(f: &mut F, n: u32) -> (Duration, Duration) {
    let (start, cpu) = (Instant::now(), thread_cpu());
    for _ in 0..n {
        f();
    }
    (start.elapsed(), thread_cpu().saturating_sub(cpu))
}

/// One raw `pwrite` of `bytes` at offset 0: libc itself.
#[inline(always)]
fn raw_write(fd: impl AsFd, bytes: &[u8]) {
    let bytes = black_box(bytes);
    // SAFETY: a live descriptor; `bytes` is valid for its length.
    let n = unsafe {
        libc::pwrite(
            fd.as_fd().as_raw_fd(),
            bytes.as_ptr().cast(),
            bytes.len(),
            0,
        )
    };
    black_box(n);
}

/// One raw `pread` at offset 0 into a stack buffer, not parsed: the floor
/// (the crate's parsing and checks count as its overhead).
#[inline(always)]
fn raw_read_int(fd: impl AsFd) -> i64 {
    let mut buf = [0u8; 32];
    // SAFETY: a live descriptor; `buf` is writable for its length.
    let n = unsafe {
        libc::pread(
            fd.as_fd().as_raw_fd(),
            buf.as_mut_ptr().cast(),
            buf.len(),
            0,
        )
    };
    black_box(&buf);
    n as i64
}

/// The raw control-loop iteration: read two integer attributes, write one.
#[inline(always)]
fn raw_control(a: &Attribute, b: &Attribute, text: &str) {
    let x = raw_read_int(a.as_fd());
    let y = raw_read_int(b.as_fd());
    black_box(x + y);
    raw_write(a.as_fd(), text.as_bytes());
}

/// Real kernfs in a private network and mount namespace: the crate against
/// raw syscalls (`krate`) and the raw loops against themselves (`diag`).
fn kernfs_bench(krate: bool, diag: bool) -> Result<(), String> {
    kernfs::with_veth(|net| {
        let open =
            |p: &str| Attribute::open(net.join(p), Access::ReadWrite).map_err(|e| e.to_string());
        let a = open("ev3b0/mtu")?;
        let b = open("ev3b1/mtu")?;
        let mtu = a.read_i64().map_err(|e| e.to_string())?;
        if krate {
            kernfs_measure(net, &a, &b, mtu);
        }
        if diag {
            kernfs_diag(&a, &b, mtu, "this thread alone in the process");
        }
        if krate {
            kernfs_threaded(&a, &b, mtu, diag);
        }
        Ok(())
    })
}

/// The crate against raw syscalls on `a` and `b` (the veth pair's `mtu`s,
/// in `net`), this thread alone in the process.
fn kernfs_measure(net: &Path, a: &Attribute, b: &Attribute, mtu: i64) {
    println!(
        "real kernfs (veth mtu, {}), {} paired rounds, this thread alone in the process",
        net.display(),
        rounds()
    );
    kernfs_pairs(a, b, mtu);
}

/// The crate's pairs again with a second (parked) thread in the process,
/// after everything single-threaded (and with `diag`, the diagnostic pairs
/// there too).
fn kernfs_threaded(a: &Attribute, b: &Attribute, mtu: i64, diag: bool) {
    // A second thread changes what every syscall on a descriptor costs:
    // the kernel then takes a reference on the file for the call (fdget in
    // a process whose descriptor table is shared), some 30-40 ns on this
    // kind of machine. A robot program with helper threads is in this case.
    println!("real kernfs again, the crate against raw syscalls with a second (parked) thread in the process");
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        let idle = scope.spawn(|| {
            while !done.load(std::sync::atomic::Ordering::Acquire) {
                std::thread::park();
            }
        });
        kernfs_pairs(a, b, mtu);
        if diag {
            kernfs_diag(a, b, mtu, "with the second thread");
        }
        done.store(true, std::sync::atomic::Ordering::Release);
        idle.thread().unpark();
    });
}

/// The crate's write, read and control loop against raw syscalls on `a`
/// (and `b`): the pairs of [`kernfs_measure`].
fn kernfs_pairs(a: &Attribute, b: &Attribute, mtu: i64) {
    let text = mtu.to_string();
    let n = 1_000;
    paired(
        "write",
        n,
        || raw_write(a.as_fd(), text.as_bytes()),
        || {
            black_box(a.write_int(black_box(mtu)).ok());
        },
    );
    paired(
        "read",
        n,
        || {
            black_box(raw_read_int(a.as_fd()));
        },
        || {
            black_box(a.read_int().ok());
        },
    );
    paired(
        "control loop",
        n / 2,
        || raw_control(a, b, &text),
        || {
            let x = a.read_int().unwrap_or(0);
            let y = b.read_int().unwrap_or(0);
            black_box(x + y);
            black_box(a.write_int(black_box(mtu)).ok());
        },
    );
}

/// The A/A run: each raw loop paired against an identical copy of itself,
/// the same way the crate is paired against it (same rounds, same turns),
/// then [`kernfs_same_work`]; `context` says which process it runs in.
fn kernfs_diag(a: &Attribute, b: &Attribute, mtu: i64, context: &str) {
    let text = mtu.to_string();
    println!(
        "diagnostic (A/A): raw against raw on real kernfs, {} paired rounds, {context}",
        rounds()
    );
    let n = 1_000;
    // Two closures with the same body are two types: each side of a pair
    // is code of its own, at an address of its own, as the crate's loop
    // is (one closure twice would time the very same machine code).
    paired_as(
        "write",
        "raw",
        n,
        || raw_write(a.as_fd(), text.as_bytes()),
        || raw_write(a.as_fd(), text.as_bytes()),
    );
    paired_as(
        "read",
        "raw",
        n,
        || {
            black_box(raw_read_int(a.as_fd()));
        },
        || {
            black_box(raw_read_int(a.as_fd()));
        },
    );
    paired_as(
        "control loop",
        "raw",
        n / 2,
        || raw_control(a, b, &text),
        || raw_control(a, b, &text),
    );
    kernfs_same_work(a, b, mtu);
}

/// The crate against raw syscalls doing the same arithmetic (the crate's own
/// formatting and parsing, called on raw `pwrite`/`pread` buffers): what is
/// left is the crate's machinery (access check, result, error paths out of
/// line), apart from the cost of turning numbers into text and back.
fn kernfs_same_work(a: &Attribute, b: &Attribute, mtu: i64) {
    use ev3sysfs::value::{format_i32, parse_read_int, I32_BUF_LEN, INT_READ_BUF};
    // Functions, not closures: a closure called from two loops was compiled
    // out of line, a call the crate's inlined paths do not make.
    #[inline(always)]
    fn raw_parsed(fd: std::os::fd::BorrowedFd<'_>) -> i32 {
        let mut buf = INT_READ_BUF;
        let rest = &mut buf[ev3sysfs::value::INT_READ_PAD..];
        // SAFETY: a live descriptor; `rest` is writable for its length.
        let n = unsafe { libc::pread(fd.as_raw_fd(), rest.as_mut_ptr().cast(), rest.len(), 0) };
        parse_read_int(&buf, n as usize).unwrap_or(0)
    }
    #[inline(always)]
    fn raw_formatted(fd: std::os::fd::BorrowedFd<'_>, value: i64) {
        let mut buf = [0u8; I32_BUF_LEN];
        raw_write(fd, format_i32(black_box(value as i32), &mut buf));
    }
    println!("same work: raw syscalls formatting and parsing as the crate does");
    let n = 1_000;
    paired(
        "write",
        n,
        || raw_formatted(a.as_fd(), mtu),
        || {
            black_box(a.write_int(black_box(mtu)).ok());
        },
    );
    paired(
        "read",
        n,
        || {
            black_box(raw_parsed(a.as_fd()));
        },
        || {
            black_box(a.read_int().ok());
        },
    );
    paired(
        "control loop",
        n / 2,
        || {
            let x = raw_parsed(a.as_fd());
            let y = raw_parsed(b.as_fd());
            black_box(x + y);
            raw_formatted(a.as_fd(), mtu);
        },
        || {
            let x = a.read_int().unwrap_or(0);
            let y = b.read_int().unwrap_or(0);
            black_box(x + y);
            black_box(a.write_int(black_box(mtu)).ok());
        },
    );
    // The least any parser does: the bytes the kernel wrote weighed in
    // three multiplies (no check, no sign, no length). Entering the next
    // syscall waits for the value, so its latency is what a parse costs.
    paired_as(
        "read floor",
        "weighed",
        n,
        || {
            black_box(raw_read_int(a.as_fd()));
        },
        || {
            let mut buf = [b'0'; 24];
            // SAFETY: a live descriptor; `buf` is writable for its length.
            let n = unsafe { libc::pread(a.as_fd().as_raw_fd(), buf.as_mut_ptr().cast(), 24, 0) };
            let mut v = u64::from_le_bytes(buf[..8].try_into().unwrap_or_default());
            v = (v & 0x0F0F_0F0F_0F0F_0F0F).wrapping_mul(2561) >> 8;
            v = (v & 0x00FF_00FF_00FF_00FF).wrapping_mul(6_553_601) >> 16;
            v = (v & 0x0000_FFFF_0000_FFFF).wrapping_mul(42_949_672_960_001) >> 32;
            black_box((v, n));
        },
    );
    // Below any parser: one byte the kernel wrote, loaded and not weighed.
    paired_as(
        "read 1 byte",
        "loaded",
        n,
        || {
            black_box(raw_read_int(a.as_fd()));
        },
        || {
            let mut buf = [0u8; 16];
            // SAFETY: a live descriptor; `buf` is writable for its length.
            let n = unsafe { libc::pread(a.as_fd().as_raw_fd(), buf.as_mut_ptr().cast(), 16, 0) };
            black_box((buf[0], n));
        },
    );
    // Below any formatting: the bytes stored on the stack just before the
    // syscall (one word store of preformatted text).
    let text = mtu.to_string();
    let Ok(word) = <[u8; 4]>::try_from(text.as_bytes()) else {
        return;
    };
    let word = u32::from_le_bytes(word);
    paired_as(
        "write 1 store",
        "stored",
        n,
        || raw_write(a.as_fd(), text.as_bytes()),
        || {
            let buf = black_box(word).to_le_bytes();
            raw_write(a.as_fd(), &buf);
        },
    );
}
