//! Issue 19: `ev3-probe`'s timing loop reads the clock twice per measured
//! operation (`t0` before it, `t0.elapsed()` after it: "2 reads a sample"
//! in its `clock` header line), once per warm-up operation (its deadline
//! check), and a few more times only where a round's turn begins and ends
//! (wall time, the strategy's time spent). Each read is one syscall at most
//! (`ev3sysfs::clock`). Counted under strace on the host (with the preload
//! shim that makes every clock read a syscall where a vDSO would hide it),
//! under `qemu-arm-static -strace` for the brick build.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../../tests/common/mod.rs"]
mod common;

use std::collections::BTreeMap;

use common::strace::{has_vdso, say, ClockShim, Trace, Tracer};

const ITERATIONS: usize = 200;
const WARMUP: usize = 10;
/// What the probe writes, told from the restore of the file's bytes.
const VALUE: &str = "7";

#[test]
fn two_clock_syscalls_per_measured_operation_at_most() {
    let tmp = common::TempDir::new("probe-clock");
    let attr = tmp.path().join("speed_sp");
    std::fs::write(&attr, "0\n").unwrap();
    let shim = ClockShim::build();
    let Some(trace) = Trace::run(
        std::ffi::OsStr::new(env!("CARGO_BIN_EXE_ev3-probe")),
        &[
            "--path",
            attr.to_str().unwrap(),
            "--value",
            VALUE,
            "--only",
            "pwrite",
            "--flags",
            "none",
            "-n",
            &ITERATIONS.to_string(),
            "--warmup",
            &WARMUP.to_string(),
            "--max-time",
            "600",
        ],
        [(ev3sysfs::ROOT_ENV, "/nonexistent")],
        shim.as_ref(),
    ) else {
        return;
    };
    trace.assert_success();
    let stdout = String::from_utf8_lossy(&trace.output.stdout);
    // "... strategies taking turns in 20 rounds, ...": a turn's bookkeeping.
    let rounds: usize = stdout
        .split(" rounds")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no rounds in the plan line:\n{stdout}"));
    let calls = trace.calls();
    // The probe's measuring thread: the one writing the value.
    let is_op = |name: &str, line: &str| {
        name == "pwrite64"
            && (trace.tracer == Tracer::Qemu || line.contains(&format!("\"{VALUE}\"")))
    };
    let (tid, _, _) = *calls
        .iter()
        .find(|(_, name, line)| is_op(name, line))
        .unwrap_or_else(|| panic!("no pwrite64 of {VALUE:?} in the trace:\n{}", trace.text));
    let mine: Vec<(&str, &str)> = calls
        .iter()
        .filter(|(id, _, _)| *id == tid)
        .map(|(_, name, line)| (*name, *line))
        .collect();
    let ops: Vec<usize> = mine
        .iter()
        .enumerate()
        .filter(|(_, (name, line))| is_op(name, line))
        .map(|(i, _)| i)
        .take(WARMUP + ITERATIONS)
        .collect();
    assert_eq!(ops.len(), WARMUP + ITERATIONS, "{}", trace.text);
    // Clock syscalls between one operation and the next.
    let gaps: Vec<usize> = ops
        .windows(2)
        .map(|w| {
            mine[w[0] + 1..w[1]]
                .iter()
                .filter(|(name, _)| name.starts_with("clock_gettime"))
                .count()
        })
        .collect();
    let mut histogram = BTreeMap::new();
    for g in &gaps {
        *histogram.entry(*g).or_insert(0usize) += 1;
    }
    let total: usize = gaps.iter().sum();
    let visible = trace.tracer == Tracer::Qemu || shim.is_some() || !has_vdso();
    say(&format!(
        "ev3-probe -n {ITERATIONS} --warmup {WARMUP}: {total} clock syscalls between its \
         {} operations; clock syscalls per gap: {histogram:?} ({})",
        ops.len(),
        if visible {
            "every clock read a syscall"
        } else {
            "the vDSO answers clock_gettime here without a syscall: 0 counted"
        }
    ));
    // Warm-up: the deadline check. Measuring: `t0.elapsed()` and the next
    // `t0`. A turn's end and the next one's start (the warm-up's end, each
    // round's): at most 6 (elapsed, wall, time spent, the turn's and the
    // chunk's start, t0).
    let over_two: Vec<usize> = gaps.iter().copied().filter(|&g| g > 2).collect();
    assert!(over_two.len() <= rounds, "{histogram:?}");
    assert!(over_two.iter().all(|&g| g <= 6), "{histogram:?}");
    assert!(
        total <= 2 * ITERATIONS + WARMUP + 4 * (rounds + 1),
        "{histogram:?}"
    );
    if visible {
        // The measuring loop's reads are all seen.
        assert!(histogram.get(&2).copied().unwrap_or(0) >= ITERATIONS - rounds - 1);
    }
}
