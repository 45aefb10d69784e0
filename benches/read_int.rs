//! `Attribute::read_int` against a raw `pread` loop on a real kernel sysfs
//! attribute (a veth interface's `mtu` in a private network + mount
//! namespace, as root). Run with `cargo bench --bench read_int`.
//!
//! Both loops take turns in paired rounds (raw first in even rounds, the
//! crate first in odd ones), so drift of the machine's speed hits both; the
//! figure is the median of the per-round ratios. Without root it says why and
//! measures nothing.

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use ev3sysfs::{Access, Attribute};

#[path = "common/kernfs.rs"]
mod kernfs;

const ROUNDS: usize = 21;
const PER_ROUND: u32 = 20_000;

fn main() {
    if !nix::unistd::geteuid().is_root() {
        println!("read_int bench: skipped, needs root (unshare -nm, mount sysfs, ip link add)");
        return;
    }
    if let Err(e) = kernfs_bench() {
        println!("read_int bench: skipped, no real kernfs here: {e}");
    }
}

fn kernfs_bench() -> Result<(), String> {
    kernfs::with_veth(|net| measure(&net.join("ev3b0/mtu")))
}

fn measure(path: &Path) -> Result<(), String> {
    let attr = Attribute::open(path, Access::ReadWrite).map_err(|e| e.to_string())?;
    let mut ratios = Vec::with_capacity(ROUNDS);
    let (mut raw_ns, mut crate_ns) = (Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        let (r, c) = if round % 2 == 0 {
            let r = raw_loop(&attr);
            (r, crate_loop(&attr))
        } else {
            let c = crate_loop(&attr);
            (raw_loop(&attr), c)
        };
        raw_ns.push(per_op(r));
        crate_ns.push(per_op(c));
        ratios.push(c.as_secs_f64() / r.as_secs_f64());
    }
    for v in [&mut ratios, &mut raw_ns, &mut crate_ns] {
        v.sort_by(f64::total_cmp);
    }
    let mid = ROUNDS / 2;
    println!(
        "real kernfs ({}), {ROUNDS} paired rounds of {PER_ROUND} reads",
        path.display()
    );
    println!("  raw pread loop        median {:7.1} ns/read", raw_ns[mid]);
    println!(
        "  Attribute::read_int   median {:7.1} ns/read",
        crate_ns[mid]
    );
    println!(
        "  read_int / raw pread  median {:.3}x (rounds: min {:.3}x, max {:.3}x)",
        ratios[mid],
        ratios[0],
        ratios[ROUNDS - 1]
    );
    Ok(())
}

fn per_op(d: Duration) -> f64 {
    d.as_nanos() as f64 / f64::from(PER_ROUND)
}

/// `pread` on the attribute's own descriptor (same open flags), so that the
/// difference is the crate's code around the syscall.
fn raw_loop(attr: &Attribute) -> Duration {
    let mut buf = [0u8; 256];
    let start = Instant::now();
    for _ in 0..PER_ROUND {
        let n = nix::sys::uio::pread(attr.as_fd(), &mut buf, 0).unwrap_or(0);
        black_box(&buf[..n]);
    }
    start.elapsed()
}

fn crate_loop(attr: &Attribute) -> Duration {
    let start = Instant::now();
    for _ in 0..PER_ROUND {
        black_box(attr.read_int().ok());
    }
    start.elapsed()
}
