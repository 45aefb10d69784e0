//! Counting a program's syscalls: under strace on the host (with clock
//! reads made visible by [`ClockShim`]), under `qemu-arm-static -strace`
//! for the brick build (qemu-user, where strace would trace the emulator).

use std::ffi::OsStr;
use std::fs;
use std::path::PathBuf;
use std::process::{Command, Output};

use super::{has_command, skip, under_qemu_user, TempDir};

/// A preload library whose `clock_gettime` is the syscall itself, so that
/// strace sees every clock read the C library would answer from the vDSO
/// (the brick's ARM926 has none: there every read is a syscall). Built
/// with the machine's C compiler; glibc hosts only.
pub struct ClockShim {
    _dir: TempDir,
    pub lib: PathBuf,
}

const SHIM: &str = r#"
#define _GNU_SOURCE
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
int clock_gettime(clockid_t clock, struct timespec *ts) {
    return (int)syscall(SYS_clock_gettime, clock, ts);
}
"#;

impl ClockShim {
    /// The shim where a vDSO would hide clock reads, or `None`: not needed
    /// (no vDSO, qemu-user), or (saying why: the count is then what the
    /// vDSO leaves, zero) where it cannot be built or preloaded.
    pub fn build() -> Option<ClockShim> {
        // Not needed where every clock read is a syscall already: no vDSO
        // (the brick, the ARM guest) or qemu-user (`-strace` sees the
        // guest's calls; qemu 7 gives an ARM guest no vDSO).
        if under_qemu_user() || !has_vdso() {
            return None;
        }
        if !cfg!(all(target_os = "linux", target_env = "gnu")) {
            say("no clock shim (not a glibc host): the vDSO may hide clock reads");
            return None;
        }
        if !has_command("cc") {
            say("no C compiler for the clock shim: the vDSO may hide clock reads");
            return None;
        }
        let dir = TempDir::new("clock-shim");
        let src = dir.path().join("shim.c");
        let lib = dir.path().join("libclockshim.so");
        fs::write(&src, SHIM).unwrap();
        let out = Command::new("cc")
            .args(["-shared", "-fPIC", "-O1", "-o"])
            .arg(&lib)
            .arg(&src)
            .output()
            .unwrap();
        if !out.status.success() {
            say(&format!(
                "the clock shim does not build: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
            return None;
        }
        Some(ClockShim { _dir: dir, lib })
    }
}

/// A `MEASURED:` line in the log even when the test passes (libtest
/// captures `eprintln!`, not the stderr handle).
pub fn say(text: &str) {
    use std::io::Write;
    let line = format!("MEASURED: {text}\n");
    let _ = std::io::stderr().write_all(line.as_bytes());
}

/// Whether this process has a vDSO (`[vdso]` in its mappings): then the C
/// library answers `clock_gettime` without a syscall.
pub fn has_vdso() -> bool {
    fs::read_to_string("/proc/self/maps").is_ok_and(|maps| maps.contains("[vdso]"))
}

/// How syscalls were traced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tracer {
    /// strace -f: lines start with the thread id.
    Strace,
    /// `qemu-arm-static -strace`: lines start with the process id (every
    /// thread alike).
    Qemu,
}

/// One traced run: the program's output and the trace's lines.
pub struct Trace {
    pub tracer: Tracer,
    pub output: Output,
    pub text: String,
}

impl Trace {
    /// Runs `program args` (with `envs`) under strace, or under the cross
    /// runner's `-strace` when this binary runs under qemu-user; the
    /// preload `shim` for the traced program when given. `None` with a
    /// printed skip where neither can trace.
    pub fn run<I, K, V>(
        program: &OsStr,
        args: &[&str],
        envs: I,
        shim: Option<&ClockShim>,
    ) -> Option<Trace>
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        if under_qemu_user() {
            let runner = std::env::var_os("EV3SYSFS_TEST_RUNNER").filter(|r| !r.is_empty());
            let Some(runner) = runner.filter(|r| r.to_string_lossy().contains("qemu-")) else {
                skip("under qemu-user without a qemu runner to ask for -strace (strace would trace the emulator)");
                return None;
            };
            let output = Command::new(runner)
                .arg("-strace")
                .arg(program)
                .args(args)
                .envs(envs)
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&output.stderr).into_owned();
            return Some(Trace {
                tracer: Tracer::Qemu,
                output,
                text,
            });
        }
        if !has_command("strace") {
            skip("strace is not installed (apt-get install strace)");
            return None;
        }
        let tmp = TempDir::new("strace");
        let log = tmp.path().join("trace");
        let mut command = Command::new("strace");
        command.args(["-f", "-qq", "-o"]).arg(&log);
        if let Some(shim) = shim {
            command
                .arg("-E")
                .arg(format!("LD_PRELOAD={}", shim.lib.display()));
        }
        let output = command.arg(program).args(args).envs(envs).output().unwrap();
        let text = fs::read_to_string(&log).unwrap_or_default();
        Some(Trace {
            tracer: Tracer::Strace,
            output,
            text,
        })
    }

    /// Panics with the program's output unless it succeeded.
    pub fn assert_success(&self) {
        assert!(
            self.output.status.success(),
            "traced program failed: {}\n{}\n{}",
            self.output.status,
            String::from_utf8_lossy(&self.output.stdout),
            String::from_utf8_lossy(&self.output.stderr)
        );
    }

    /// `(thread or process id, syscall name, the line)` of every call,
    /// a call split by another thread counted once (at its start).
    pub fn calls(&self) -> Vec<(&str, &str, &str)> {
        self.text
            .lines()
            .filter_map(|line| {
                let (id, rest) = line.split_once(' ')?;
                if id.parse::<u32>().is_err() {
                    return None;
                }
                let rest = rest.trim_start();
                if rest.starts_with("<... ") || rest.starts_with("--- ") || rest.starts_with("+++ ")
                {
                    return None;
                }
                let name = rest.split('(').next()?;
                (!name.is_empty() && !name.contains(' ')).then_some((id, name, line))
            })
            .collect()
    }

    /// The names of the calls of the thread that made the call whose line
    /// contains `begin`, after it and before its call whose line contains
    /// `end` (under qemu every thread's: it prints the process id).
    pub fn window(&self, begin: &str, end: &str) -> Vec<String> {
        let calls = self.calls();
        let Some(at) = calls.iter().position(|(_, _, l)| l.contains(begin)) else {
            panic!("no {begin:?} in the trace:\n{}", self.text);
        };
        let id = calls[at].0;
        calls[at + 1..]
            .iter()
            .filter(|(i, _, _)| *i == id)
            .take_while(|(_, _, l)| !l.contains(end))
            .map(|(_, name, _)| (*name).to_owned())
            .collect()
    }
}

/// The clock reads among `calls` (`clock_gettime`, `clock_gettime64`).
pub fn clock_calls(calls: &[String]) -> usize {
    calls
        .iter()
        .filter(|c| c.starts_with("clock_gettime"))
        .count()
}
