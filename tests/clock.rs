//! One syscall per clock read at most: `ev3sysfs::clock::Instant::now()` and
//! the crate's waits, syscalls counted. On the brick (ARMv5: no vDSO; Linux
//! 4.14: no `clock_gettime64`) `std::time::Instant::now()` is two syscalls,
//! the refused `clock_gettime64` and `clock_gettime`; the crate's clock is
//! one. The ARM guest of `scripts/arm-guest/run` runs this natively under
//! its 4.14 seccomp filter (strace); the brick build under qemu-user
//! (`scripts/cargo-armv5te test`) is traced by `qemu-arm-static -strace`
//! (no vDSO there either); on a host with a vDSO a preload shim makes each
//! clock read its syscall (tests/common/strace.rs), else the count is zero
//! and a `MEASURED:` line says so.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::fs;
use std::time::Duration;

use common::strace::{clock_calls, has_vdso, say, ClockShim, Trace, Tracer};
use ev3sysfs::clock::Instant;
use ev3sysfs::motor::TachoMotor;
use ev3sysfs_sim::TachoDriver;

const READS: usize = 100;
const WAITS: usize = 10;
const LOOKS: usize = 10;
/// A wait of three `poll` slices ([`ev3sysfs::attr::UNPLUG_CHECK`] each).
const LONG_WAIT: Duration = Duration::from_millis(250);
const MOTOR_WAIT_MS: u64 = 200;
const CHILD_ENV: &str = "EV3SYSFS_CLOCK_CHILD";
const BEGIN: &str = "/ev3sysfs-clock-window-begin";
const END: &str = "/ev3sysfs-clock-window-end";
const NO_BRICK: &str = "CLOCK-CHILD-NO-BRICK";

fn marker(prefix: &str) -> String {
    format!("{prefix}.{}", nix::unistd::gettid().as_raw())
}

fn plain_state_file(tmp: &common::TempDir) -> ev3sysfs::Attribute {
    let path = tmp.path().join("state");
    fs::write(&path, "running\n").unwrap();
    ev3sysfs::Attribute::open(&path, ev3sysfs::Access::ReadOnly).unwrap()
}

#[test]
#[ignore = "started under strace by the tests below"]
fn clock_child() {
    let (begin, end) = (marker(BEGIN), marker(END));
    match std::env::var(CHILD_ENV).as_deref() {
        Ok("reads") => {
            // The first read asks the kernel which call it has.
            let start = Instant::now();
            let _ = fs::metadata(&begin);
            for _ in 0..READS {
                std::hint::black_box(Instant::now());
            }
            let _ = fs::metadata(&end);
            assert!(start.elapsed() > Duration::ZERO);
        }
        Ok("std") => {
            let _ = std::time::Instant::now();
            let _ = fs::metadata(&begin);
            for _ in 0..READS {
                std::hint::black_box(std::time::Instant::now());
            }
            let _ = fs::metadata(&end);
        }
        Ok("waits") => {
            let tmp = common::TempDir::new("clock-wait");
            let attr = plain_state_file(&tmp);
            let _ = Instant::now();
            let _ = fs::metadata(&begin);
            for _ in 0..WAITS {
                // A plain file never notifies: each wait times out.
                attr.wait_for_change(Duration::from_millis(1)).unwrap();
            }
            let _ = fs::metadata(&end);
        }
        Ok("button-looks") => {
            // A FIFO held open for writing: reads say "nothing yet"
            // (EAGAIN), as an input device's empty queue does.
            let tmp = common::TempDir::new("clock-button-looks");
            let path = tmp.path().join("event");
            nix::unistd::mkfifo(&path, nix::sys::stat::Mode::S_IRWXU).unwrap();
            let _writer = fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(&path)
                .unwrap();
            let buttons = ev3sysfs::buttons::Buttons::open(&path).unwrap();
            let _ = Instant::now();
            let _ = fs::metadata(&begin);
            for _ in 0..LOOKS {
                assert!(buttons.next_event(Some(Duration::ZERO)).unwrap().is_none());
            }
            let _ = fs::metadata(&end);
        }
        Ok("long-wait") => {
            let tmp = common::TempDir::new("clock-long-wait");
            let attr = plain_state_file(&tmp);
            let _ = Instant::now();
            let _ = fs::metadata(&begin);
            assert!(!attr.wait_for_change(LONG_WAIT).unwrap());
            let _ = fs::metadata(&end);
        }
        #[cfg(feature = "async")]
        Ok("tasks-wait") => {
            use ev3sysfs::tasks;
            let Some(tree) = common::brick() else {
                println!("{NO_BRICK}");
                return;
            };
            tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
            let motor = TachoMotor::find(tree.root(), "outA").unwrap();
            motor.run_forever(100).unwrap();
            let _ = Instant::now();
            let _ = fs::metadata(&begin);
            let outcome = tasks::block_on(tasks::motor_until(
                &motor,
                |s| !s.running(),
                Duration::from_millis(MOTOR_WAIT_MS),
            ))
            .unwrap();
            let _ = fs::metadata(&end);
            assert!(
                matches!(outcome, Err(ev3sysfs::Error::Timeout { .. })),
                "{outcome:?}"
            );
            motor.stop().unwrap();
        }
        Ok("motor-wait") => {
            let Some(tree) = common::brick() else {
                println!("{NO_BRICK}");
                return;
            };
            tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
            let motor = TachoMotor::find(tree.root(), "outA").unwrap();
            // No simulator runs: the state stays "running", every wake-up
            // is a quiet poll's end.
            motor.run_forever(100).unwrap();
            let _ = Instant::now();
            let _ = fs::metadata(&begin);
            let err = motor
                .wait_until(|s| !s.running(), Duration::from_millis(MOTOR_WAIT_MS))
                .unwrap_err();
            let _ = fs::metadata(&end);
            assert!(matches!(err, ev3sysfs::Error::Timeout { .. }), "{err:?}");
            motor.stop().unwrap();
        }
        _ => {}
    }
}

/// The child's measuring thread between its markers: its syscall names
/// and what they count.
struct Window {
    tracer: Tracer,
    calls: Vec<String>,
    /// Every clock read is a syscall the trace shows (no vDSO, the shim,
    /// qemu-user).
    visible: bool,
    stdout: String,
    clock: usize,
    polls: usize,
}

impl Window {
    /// What the count means here.
    fn how(&self) -> &'static str {
        match (self.tracer, self.visible) {
            (Tracer::Qemu, _) => "qemu-user -strace, no vDSO: every read a syscall",
            (Tracer::Strace, true) => "strace; no vDSO or the preload shim: every read a syscall",
            (Tracer::Strace, false) => {
                "strace; the vDSO answers clock_gettime here without a syscall: 0 counted"
            }
        }
    }
}

/// The child in `mode`, traced, with the shim when one is needed and
/// builds; `None` (after saying why) where the child cannot be traced.
fn traced(mode: &str) -> Option<Window> {
    let shim = ClockShim::build();
    let exe = std::env::current_exe().unwrap();
    let trace = Trace::run(
        exe.as_os_str(),
        &[
            "clock_child",
            "--exact",
            "--include-ignored",
            "--nocapture",
            "--test-threads=1",
        ],
        [(CHILD_ENV, mode)],
        shim.as_ref(),
    )?;
    trace.assert_success();
    let stdout = String::from_utf8_lossy(&trace.output.stdout).into_owned();
    let calls = if stdout.contains(NO_BRICK) {
        Vec::new()
    } else {
        trace.window(BEGIN, END)
    };
    Some(Window {
        tracer: trace.tracer,
        visible: trace.tracer == Tracer::Qemu || shim.is_some() || !has_vdso(),
        clock: clock_calls(&calls),
        polls: calls.iter().filter(|c| c.contains("poll")).count(),
        calls,
        stdout,
    })
}

#[test]
fn one_syscall_per_clock_read_at_most() {
    let Some(w) = traced("reads") else { return };
    say(&format!(
        "{} clock syscalls for {READS} ev3sysfs::clock reads ({})",
        w.clock,
        w.how()
    ));
    assert!(w.clock <= READS, "{:?}", w.calls);
    if w.visible {
        // Every read is seen: the count measures something.
        assert_eq!(w.clock, READS, "{:?}", w.calls);
    }
    if w.tracer == Tracer::Strace {
        assert_eq!(w.calls.len(), w.clock, "nothing else: {:?}", w.calls);
    }
}

/// What std's clock costs here, for comparison (on the brick: two
/// syscalls a read); reported, not asserted.
#[test]
fn std_clock_reads_for_comparison() {
    let Some(w) = traced("std") else { return };
    say(&format!(
        "std::time::Instant::now(): {} clock syscalls for {READS} reads ({})",
        w.clock,
        w.how()
    ));
}

#[test]
fn a_wait_within_one_poll_slice_reads_no_clock() {
    let Some(w) = traced("waits") else { return };
    say(&format!(
        "{WAITS} waits of 1 ms: {} clock syscalls, {} polls ({})",
        w.clock,
        w.polls,
        w.how()
    ));
    assert_eq!(w.polls, WAITS, "{:?}", w.calls);
    assert_eq!(w.clock, 0, "{:?}", w.calls);
}

/// A look at the button queue (`next_event` with a zero timeout, what
/// `WaitAny` does at each wake-up) is one `read`, no clock (two clock
/// reads a look before: the ARM926 guest's strace of tests/wait_any.rs).
#[test]
fn a_look_at_the_button_queue_reads_no_clock() {
    let Some(w) = traced("button-looks") else {
        return;
    };
    say(&format!(
        "{LOOKS} looks at an empty button queue: {} clock syscalls ({})",
        w.clock,
        w.how()
    ));
    assert_eq!(w.clock, 0, "{:?}", w.calls);
    let reads = w
        .calls
        .iter()
        .filter(|c| c.split('(').next() == Some("read"))
        .count();
    assert_eq!(reads, LOOKS, "{:?}", w.calls);
}

/// Issue 19: nothing is read between a wait's quiet `poll` slices (a read
/// would rearm the notification and lose a change landing between the
/// slice's end and the read); one clock read per slice at most (and the
/// deadline's).
#[test]
fn a_wait_of_several_slices_polls_and_reads_the_clock_only() {
    let Some(w) = traced("long-wait") else { return };
    let (calls, polls, clock) = (&w.calls, w.polls, w.clock);
    say(&format!(
        "a {LONG_WAIT:?} wait: {polls} polls, {clock} clock syscalls ({}); calls {calls:?}",
        w.how()
    ));
    // Three slices, fewer when the machine is slow to wake the waiter.
    assert!((1..=3).contains(&polls), "{calls:?}");
    // The deadline, then one look at the time left per quiet slice.
    assert!(clock <= polls + 1, "{calls:?}");
    if w.tracer == Tracer::Strace {
        assert_eq!(
            calls.len(),
            polls + clock,
            "no read between slices: {calls:?}"
        );
    }
}

#[test]
fn a_motor_state_wait_reads_the_clock_once_per_wake_up() {
    if common::under_qemu_user() {
        return common::skip(
            "qemu-user -strace prints the process id only: the simulated brick's threads are not told from the waiter",
        );
    }
    let Some(w) = traced("motor-wait") else {
        return;
    };
    if w.stdout.contains(NO_BRICK) {
        return common::skip(&format!("the child had no simulated brick: {}", w.stdout));
    }
    let (calls, polls, clock) = (&w.calls, w.polls, w.clock);
    say(&format!(
        "a {MOTOR_WAIT_MS} ms motor state wait on the simulated brick: {polls} wake-ups (polls), \
         {clock} clock syscalls ({})",
        w.how()
    ));
    // 10 ms re-checks off sysfs: about 20 wake-ups, never a busy loop.
    let most = usize::try_from(MOTOR_WAIT_MS / 10).unwrap() + 3;
    assert!((1..=most).contains(&polls), "{calls:?}");
    // The start, one look at the time left per wake-up, the timeout's
    // report; none inside Attribute::wait_for_change.
    assert!(clock <= polls + 3, "{calls:?}");
    if w.visible {
        assert!(clock > polls, "every look at the clock is seen: {calls:?}");
    }
}

/// The `async` reactor: two clock reads a wake-up (after the `poll`, and
/// the next `poll`'s timeout), however often the woken future looks at the
/// time (it read the clock five times a wake-up before: each a syscall on
/// the brick, which the ARM926 guest's strace showed).
#[cfg(feature = "async")]
#[test]
fn a_tasks_wait_reads_the_clock_twice_per_wake_up() {
    if common::under_qemu_user() {
        return common::skip(
            "qemu-user -strace prints the process id only: the simulated brick's threads are not told from the waiter",
        );
    }
    let Some(w) = traced("tasks-wait") else {
        return;
    };
    if w.stdout.contains(NO_BRICK) {
        return common::skip(&format!("the child had no simulated brick: {}", w.stdout));
    }
    let (calls, polls, clock) = (&w.calls, w.polls, w.clock);
    say(&format!(
        "a {MOTOR_WAIT_MS} ms tasks::motor_until on the simulated brick: {polls} wake-ups (polls), \
         {clock} clock syscalls ({})",
        w.how()
    ));
    let most = usize::try_from(MOTOR_WAIT_MS / 10).unwrap() + 3;
    assert!((1..=most).contains(&polls), "{calls:?}");
    // Two a wake-up, and the start and the timeout's report.
    assert!(clock <= 2 * polls + 3, "{calls:?}");
    if w.visible {
        assert!(clock > polls, "every look at the clock is seen: {calls:?}");
    }
}
