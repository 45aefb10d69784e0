//! Where the probe's threads run (`--cpu`).
//!
//! On the simulated brick every operation is a round trip to the brick's
//! server thread. When that thread sleeps on another core, the operation
//! also waits for that core to wake from idle: on a VM whose idle vCPUs
//! halt, about 55 µs against 3 µs for a switch on one core, and with the
//! two about equally likely, the medians of two strategies landed on
//! either side of it by chance (the verdict read x17 in one run, x0.06 in
//! the next). So with its own simulated brick every thread of the probe
//! runs on the CPU it started on while it measures, unless `--cpu` says
//! otherwise; on a device (one thread, the kernel answers) or a brick
//! served by another process (`ev3-sim`) it runs where the scheduler puts
//! it.
//!
//! The header says what the threads are allowed once placed, read back
//! from the kernel, not what was asked.

use std::collections::BTreeSet;

use nix::errno::Errno;
use nix::sched::{sched_getaffinity, sched_getcpu, sched_setaffinity, CpuSet};
use nix::unistd::Pid;

use crate::args::Cpu;

/// Where the threads ran before [`pin_all`] pinned them; dropped, it puts
/// every thread of the process back there. The pinning is for measuring:
/// the probe ends (restores the attribute, unmounts its brick, joins its
/// threads) as it always has, unpinned.
#[derive(Debug)]
pub struct Pinned {
    before: Option<CpuSet>,
}

impl Pinned {
    /// Nothing was pinned: nothing to put back.
    const NONE: Pinned = Pinned { before: None };
}

impl Drop for Pinned {
    fn drop(&mut self) {
        let Some(before) = &self.before else { return };
        for tid in threads().unwrap_or_default() {
            // A thread that ended meanwhile (ESRCH) needs nothing.
            let _ = sched_setaffinity(tid, before);
        }
    }
}

/// Applies `choice` to every thread of this process (its own simulated
/// brick's included, so call it once the brick is served; `own_brick`:
/// there is one) and says where they run, for the header; keep the
/// [`Pinned`] for as long as the measurement runs.
///
/// # Errors
/// `--cpu N` for a CPU this process may not run on, or `/proc/self/task`
/// unreadable.
pub fn place(choice: Cpu, own_brick: bool) -> Result<(String, Pinned), String> {
    let (why, pinned) = match choice {
        Cpu::Fixed(cpu) => (
            format!(" (--cpu {cpu})"),
            pin_all(cpu).map_err(|e| format!("--cpu {cpu}: {e}"))?,
        ),
        Cpu::Any => (" (--cpu any)".into(), Pinned::NONE),
        Cpu::Default if own_brick => match sched_getcpu() {
            Ok(cpu) if allowed(Pid::from_raw(0))?.len() > 1 => match pin_all(cpu) {
                Ok(pinned) => (
                    ", where the probe started: a round trip to the simulated brick's thread on \
                     another core would wait for that core to wake (--cpu any to measure that)"
                        .into(),
                    pinned,
                ),
                // Not asked for: measured unpinned, and said so.
                Err(e) => (format!(" (not pinned to CPU {cpu}: {e})"), Pinned::NONE),
            },
            _ => (", the only one this process may use".into(), Pinned::NONE),
        },
        Cpu::Default => (
            " (not pinned: no simulated brick of its own; --cpu N to pin)".into(),
            Pinned::NONE,
        ),
    };
    Ok((format!("{}{why}", where_threads_run()?), pinned))
}

/// Every thread of this process on `cpu`; again until no new thread
/// appears (one started meanwhile by a thread not yet pinned). On an
/// error the threads pinned so far go back.
fn pin_all(cpu: usize) -> Result<Pinned, String> {
    let mut set = CpuSet::new();
    set.set(cpu).map_err(|_| {
        format!(
            "CPU {cpu} is beyond the {} CPUs a set holds",
            CpuSet::count()
        )
    })?;
    let undo = Pinned {
        before: sched_getaffinity(Pid::from_raw(0)).ok(),
    };
    let mut pinned = BTreeSet::new();
    loop {
        let new: Vec<Pid> = threads()?
            .into_iter()
            .filter(|t| !pinned.contains(t))
            .collect();
        if new.is_empty() {
            return Ok(undo);
        }
        for tid in new {
            match sched_setaffinity(tid, &set) {
                // ESRCH: the thread ended meanwhile.
                Ok(()) | Err(Errno::ESRCH) => {}
                Err(e) => {
                    let may = allowed(Pid::from_raw(0))
                        .map(|s| cpu_list(&s))
                        .unwrap_or_default();
                    return Err(format!(
                        "{e}: not a CPU this process may run on (it may use {may})"
                    ));
                }
            }
            pinned.insert(tid);
        }
    }
}

/// "all 3 threads on CPU 1", or "3 threads on CPUs 0-1" (the CPUs any of
/// them may use); "its one thread on ..." for a single thread.
fn where_threads_run() -> Result<String, String> {
    let sets: Vec<BTreeSet<usize>> = threads()?
        .into_iter()
        .filter_map(|t| allowed(t).ok())
        .collect();
    let all: BTreeSet<usize> = sets.iter().flatten().copied().collect();
    let n = sets.len();
    Ok(match (n, all.first()) {
        (1, Some(&cpu)) if all.len() == 1 => format!("its one thread on CPU {cpu}"),
        (_, Some(&cpu)) if all.len() == 1 => format!("all {n} threads on CPU {cpu}"),
        (1, _) => format!("its one thread on CPUs {}", cpu_list(&all)),
        _ => format!("{n} threads on CPUs {}", cpu_list(&all)),
    })
}

/// The ids of this process's threads.
fn threads() -> Result<Vec<Pid>, String> {
    let task = "/proc/self/task";
    let entries = std::fs::read_dir(task).map_err(|e| format!("{task}: {e}"))?;
    Ok(entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .map(Pid::from_raw)
        .collect())
}

/// The CPUs thread `tid` may run on (0: the calling thread).
fn allowed(tid: Pid) -> Result<BTreeSet<usize>, String> {
    let set = sched_getaffinity(tid).map_err(|e| format!("sched_getaffinity: {e}"))?;
    Ok((0..CpuSet::count())
        .filter(|&c| set.is_set(c).unwrap_or(false))
        .collect())
}

/// `0-3,6`: CPU numbers with runs as ranges, as the kernel lists them.
fn cpu_list(cpus: &BTreeSet<usize>) -> String {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for &c in cpus {
        match runs.last_mut() {
            Some((_, end)) if *end + 1 == c => *end = c,
            _ => runs.push((c, c)),
        }
    }
    runs.iter()
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_read_as_the_kernels() {
        let list = |c: &[usize]| cpu_list(&c.iter().copied().collect());
        assert_eq!(list(&[]), "");
        assert_eq!(list(&[1]), "1");
        assert_eq!(list(&[0, 1, 2, 3, 6]), "0-3,6");
        assert_eq!(list(&[0, 2, 4, 5]), "0,2,4-5");
    }

    #[test]
    fn a_cpu_beyond_any_set_is_refused_with_a_reason() {
        let e = pin_all(CpuSet::count()).unwrap_err();
        assert!(e.contains("beyond"), "{e}");
    }
}
