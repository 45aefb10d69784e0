//! The `ev3-probe` binary end to end: against mock trees, and against real
//! kernfs as root.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../../tests/common/mod.rs"]
mod common;

use std::process::{Command, Output};

use common::{skip, with_kernfs};
use ev3sysfs_sim::TachoDriver;

fn probe(args: &[&str]) -> Output {
    let mut command = common::own_binary(env!("CARGO_BIN_EXE_ev3-probe"));
    command
        .args(args)
        .env_remove(ev3sysfs::ROOT_ENV)
        .output()
        .unwrap()
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const WRITE_ROWS: [&str; 4] = ["reopen", "seek-write", "pwrite", "stdio"];
const READ_ROWS: [&str; 5] = ["reopen", "seek-read", "pread", "mmap", "driver"];

/// Parses the probe's JSON with Python's json module when available; the
/// structural checks below run either way.
fn validate_json(json: &str) {
    let Ok(mut child) = Command::new("python3")
        .args([
            "-c",
            "import json,sys; d=json.load(sys.stdin); assert d['results']",
        ])
        .stdin(std::process::Stdio::piped())
        .spawn()
    else {
        skip("python3 not available: JSON not parsed, only checked structurally");
        return;
    };
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(json.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success(), "invalid JSON:\n{json}");
}

#[test]
fn json_against_a_mock_motor_found_by_port() {
    let Some(tree) = common::brick() else { return };
    tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    let motor = tree
        .add_tacho_motor("outB", TachoDriver::Ev3Medium)
        .unwrap();
    ev3sysfs::SysfsDevice::open(tree.root(), "tacho-motor", &motor.name())
        .unwrap()
        .write_int("speed_sp", 123)
        .unwrap();
    let root = tree.root().to_str().unwrap();
    let out = probe(&[
        "--root", root, "--port", "outB", "-n", "30", "--warmup", "3", "--format", "json",
        "--value", "77",
    ]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    validate_json(&stdout);
    assert!(
        stdout.contains("motor1"),
        "target is the motor on outB:\n{stdout}"
    );
    // Every strategy measured (or said why not), with every statistic.
    let rows: Vec<&str> = stdout.lines().filter(|l| l.contains("\"kind\"")).collect();
    assert_eq!(rows.len(), 4 * 4 + 1 + 5, "{stdout}");
    for field in [
        "min_us",
        "p50_us",
        "p90_us",
        "p99_us",
        "max_us",
        "mean_us",
        "user_s",
        "sys_s",
        "wall_s",
        "vcsw",
        "ivcsw",
        "x_fastest",
    ] {
        let with = rows
            .iter()
            .filter(|r| r.contains(&format!("\"{field}\"")))
            .count();
        let errors = rows.iter().filter(|r| r.contains("\"error\"")).count();
        assert_eq!(with + errors, rows.len(), "{field}");
    }
    for s in WRITE_ROWS {
        assert!(
            rows.iter().any(|r| r.contains(&format!("\"strategy\": \"{s}\"")) && r.contains("\"ops\": 30")),
            "{s} not measured:\n{stdout}"
        );
    }
    for s in ["reopen", "seek-read", "pread", "driver"] {
        assert!(
            rows.iter().any(|r| r.contains("\"kind\": \"read\"")
                && r.contains(&format!("\"strategy\": \"{s}\""))
                && r.contains("\"ops\": 30")),
            "read {s} not measured:\n{stdout}"
        );
    }
    // The original value is back afterwards.
    assert_eq!(motor.read_int("speed_sp").unwrap(), 123);
}

#[test]
fn table_csv_histogram_and_embedded_mock() {
    // An empty root: the probe builds its own mock tree and says so.
    let Some(tree) = common::brick() else { return };
    let root = tree.root().to_str().unwrap();
    let out = probe(&[
        "--root",
        root,
        "-n",
        "20",
        "--warmup",
        "0",
        "--histogram",
        "pwrite/O_SYNC",
    ]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("SIMULATED brick"), "{stdout}");
    assert!(stdout.contains("no tacho motor found"), "{stdout}");
    for title in [
        "strategy",
        "flags",
        "p50",
        "p99",
        "user s",
        "sys s",
        "wall s",
        "vcsw",
        "x fastest",
    ] {
        assert!(stdout.contains(title), "{title} missing:\n{stdout}");
    }
    assert!(
        stdout.contains("histogram of pwrite/O_SYNC (20 operations)"),
        "{stdout}"
    );
    for s in READ_ROWS {
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with("read") && l.contains(s)),
            "{s}:\n{stdout}"
        );
    }

    let out = probe(&[
        "--mock",
        "-n",
        "5",
        "--warmup",
        "0",
        "--format",
        "csv",
        "--only",
        "pwrite,pread",
    ]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    // Its own simulated brick ends quietly (fuser 0.18 warned once that
    // it could not unmount what was unmounted already).
    assert!(!stderr.contains("WARN"), "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines[0].starts_with("kind,strategy,flags,ops,min_us,p50_us"),
        "{stdout}"
    );
    // pwrite with 4 flag sets, and pread.
    assert_eq!(lines.len(), 1 + 4 + 1, "{stdout}");
    assert!(
        lines.iter().skip(1).all(|l| l.split(',').count() == 17),
        "{stdout}"
    );
}

#[test]
fn refuses_motion_and_bad_usage() {
    let Some(tree) = common::brick() else { return };
    let motor = tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    let root = tree.root().to_str().unwrap();
    let out = probe(&[
        "--root",
        root,
        "--attr",
        "command",
        "--value",
        "run-forever",
        "-n",
        "5",
    ]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr.contains("--allow-motion"), "{stderr}");
    assert_eq!(
        motor.last_written("command").unwrap(),
        "",
        "nothing was written"
    );
    // Write-only without a value.
    let out = probe(&["--root", root, "--attr", "command", "-n", "5"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).1.contains("--value"));
    // Read-only attribute.
    let out = probe(&["--root", root, "--attr", "max_speed", "-n", "5"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).1.contains("read-only"));
    // Usage errors exit 2; a bad path is a clear error, never a panic.
    let out = probe(&["--iterations", "lots"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).1.contains("not a valid number"));
    let out = probe(&["--path", "/nonexistent/ev3/speed_sp"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!text(&out).1.contains("panicked"));
    let out = probe(&["--root", root, "--port", "outD"]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr.contains("outD") && stderr.contains("motor0"),
        "{stderr}"
    );
    let out = probe(&["--help"]);
    assert!(out.status.success());
    assert!(text(&out).0.contains("--allow-motion"));
}

#[test]
fn path_on_a_regular_file_restores_its_exact_bytes() {
    let dir = common::TempDir::new("probe-path");
    let file = dir.path().join("speed_sp");
    // Trailing white space, a second line, no final newline: all kept.
    for original in [&b"123  \n\n"[..], b"  42\n\tx", b"7", b"run-forever\n"] {
        std::fs::write(&file, original).unwrap();
        std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o664))
            .unwrap();
        let out = probe(&[
            "--path",
            file.to_str().unwrap(),
            "--value",
            "77",
            "-n",
            "5",
            "--warmup",
            "1",
            "--format",
            "csv",
        ]);
        assert!(out.status.success(), "{}", text(&out).1);
        assert_eq!(
            std::fs::read(&file).unwrap(),
            original,
            "{:?}",
            String::from_utf8_lossy(original)
        );
    }
}

#[test]
fn real_kernfs_attribute() {
    with_kernfs(|k| {
        let mtu = k.class_root.join("net").join(&k.ifname).join("mtu");
        let out = probe(&[
            "--path",
            mtu.to_str().unwrap(),
            "-n",
            "50",
            "--warmup",
            "5",
            "--format",
            "csv",
        ]);
        let (stdout, stderr) = text(&out);
        assert!(out.status.success(), "{stderr}");
        // sysfs refuses mmap and O_DIRECT: reported, not fatal.
        let mmap = stdout.lines().find(|l| l.starts_with("read,mmap")).unwrap();
        assert!(mmap.contains("ENODEV") || mmap.contains("EIO"), "{mmap}");
        let direct = stdout
            .lines()
            .find(|l| l.starts_with("write,pwrite,O_DIRECT"))
            .unwrap();
        assert!(direct.contains("EINVAL"), "{direct}");
        let pwrite = stdout
            .lines()
            .find(|l| l.starts_with("write,pwrite,O_SYNC"))
            .unwrap();
        assert!(pwrite.contains(",50,"), "{pwrite}");
        let driver = stdout
            .lines()
            .find(|l| l.starts_with("write,driver"))
            .unwrap();
        assert!(driver.contains(",50,"), "{driver}");
        assert_eq!(std::fs::read_to_string(&mtu).unwrap(), "1500\n");
    });
}

#[test]
fn response_mode_on_the_simulator_and_refused_on_a_brick_without_permission() {
    let out = probe(&["--response", "3", "--mock"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("SIMULATED"), "{stdout}");
    assert_eq!(stdout.matches("(3 trials)").count(), 2, "{stdout}");
    assert!(stdout.contains("state shows running") && stdout.contains("position changes"));

    // A tree with a motor looks like a brick: motion needs --allow-motion.
    let Some(tree) = common::brick() else { return };
    let motor = tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    let out = probe(&["--root", tree.root().to_str().unwrap(), "--response", "1"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).1.contains("--allow-motion"));
    assert_eq!(
        motor.last_written("command").unwrap(),
        "",
        "nothing was sent"
    );
    let out = probe(&["--path", "/x/speed_sp", "--response", "1"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).1.contains("--port"));
}

/// The probe started in the background (through the cross runner when set).
fn spawn_probe(args: &[&str]) -> std::process::Child {
    common::own_binary(env!("CARGO_BIN_EXE_ev3-probe"))
        .args(args)
        .env_remove(ev3sysfs::ROOT_ENV)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// [`spawn_probe`] on `target` writing with `pwrite` (no open flags) until
/// stopped by a signal (or a minute).
fn spawn_endless_probe(target: &[&str]) -> std::process::Child {
    let endless = [
        "-n",
        "100000000",
        "--max-time",
        "60",
        "--only",
        "pwrite",
        "--flags",
        "none",
    ];
    spawn_probe(&[target, &endless[..]].concat())
}

/// Waits (at most 30 s) until `done()`.
fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !done() {
        assert!(std::time::Instant::now() < deadline, "timed out: {what}");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Sends `signal` to the probe and returns its exit code and stderr.
fn interrupt(mut child: std::process::Child, signal: nix::sys::signal::Signal) -> (i32, String) {
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
    nix::sys::signal::kill(pid, signal).unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    let status = child.wait().unwrap();
    (status.code().unwrap_or(-1), stderr)
}

#[test]
fn signals_restore_the_exact_bytes_of_a_file_as_a_normal_end_does() {
    use nix::sys::signal::Signal;
    let dir = common::TempDir::new("probe-signal");
    let file = dir.path().join("speed_sp");
    for (original, signal) in [
        (&b"  42\n\n"[..], Signal::SIGINT),
        (b"500", Signal::SIGTERM),
        (b"123  \n\tx", Signal::SIGINT),
    ] {
        std::fs::write(&file, original).unwrap();
        let child = spawn_endless_probe(&["--path", file.to_str().unwrap(), "--value", "7"]);
        // Until the probe's first writes show in the file.
        wait_until("the probe writes", || {
            std::fs::read(&file).unwrap() != original
        });
        let (code, stderr) = interrupt(child, signal);
        assert_eq!(code, 128 + signal as i32, "{stderr}");
        assert!(stderr.contains("restored"), "{stderr}");
        assert_eq!(
            std::fs::read(&file).unwrap(),
            original,
            "{signal:?} left other bytes: {stderr}"
        );
    }
}

#[test]
fn signals_restore_a_simulated_motors_attribute() {
    use nix::sys::signal::Signal;
    let Some(tree) = common::brick() else { return };
    let motor = tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    std::fs::write(motor.path().join("speed_sp"), "500").unwrap();
    let root = tree.root().to_str().unwrap().to_owned();
    let child = spawn_endless_probe(&["--root", &root, "--port", "outA", "--value", "7"]);
    wait_until("speed_sp 7", || motor.read("speed_sp").unwrap() == "7");
    let (code, stderr) = interrupt(child, Signal::SIGINT);
    assert_eq!(code, 130, "{stderr}");
    assert_eq!(motor.read("speed_sp").unwrap(), "500", "{stderr}");
}

/// The CPUs this test may run on.
fn cpus_allowed() -> usize {
    let set = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)).unwrap();
    (0..nix::sched::CpuSet::count())
        .filter(|&c| set.is_set(c).unwrap_or(false))
        .count()
}

/// The `Cpus_allowed_list` of every thread of process `pid`.
fn threads_cpus(pid: u32) -> Vec<String> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .filter_map(Result::ok)
        .filter_map(|t| std::fs::read_to_string(t.path().join("status")).ok())
        .filter_map(|status| {
            let line = status
                .lines()
                .find(|l| l.starts_with("Cpus_allowed_list:"))?;
            Some(line.split_once(':')?.1.trim().to_owned())
        })
        .collect()
}

/// With its own simulated brick every thread of the probe, the brick's
/// server among them, runs on one CPU (seen from outside in `/proc`, and in
/// the header); `--cpu any` leaves them where the scheduler puts them,
/// `--cpu N` picks the CPU, a CPU the process may not use is refused, and
/// on a brick served by another process the probe is not pinned.
#[test]
fn with_its_own_simulated_brick_every_thread_runs_on_one_cpu() {
    use nix::sys::signal::Signal;
    if cpus_allowed() < 2 {
        skip("one CPU here: nothing to pin");
        return;
    }
    let Some(tree) = common::brick() else { return };
    let quick = [
        "--mock", "-n", "5", "--warmup", "0", "--only", "pwrite", "--format", "json",
    ];
    let header = |extra: &[&str]| {
        let out = probe(&[&quick[..], extra].concat());
        let (stdout, stderr) = text(&out);
        assert!(out.status.success(), "{stderr}");
        validate_json(&stdout);
        stdout
    };
    let pinned = header(&[]);
    assert!(
        pinned.contains("\"cpu\": \"all ") && pinned.contains(", where the probe started:"),
        "{pinned}"
    );
    assert!(
        !pinned.contains("\"cpu\": \"all 1 thread "),
        "the brick's server: {pinned}"
    );
    assert!(header(&["--cpu", "any"]).contains("threads on CPUs "));
    // A brick served by another process (here the test's): not pinned.
    tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    let root = tree.root().to_str().unwrap();
    let out = probe(&[
        "--root", root, "-n", "5", "--warmup", "0", "--only", "pwrite",
    ]);
    let (stdout, stderr) = text(&out);
    assert!(
        stdout.contains("thread on CPUs ")
            && stdout.contains("(not pinned: no simulated brick of its own"),
        "{stdout}{stderr}"
    );
    assert!(header(&["--cpu", "0"]).contains("threads on CPU 0 (--cpu 0)"));
    let out = probe(&[&quick[..], &["--cpu", "1023"]].concat());
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out).1.contains("not a CPU this process may run on"),
        "{:?}",
        text(&out)
    );

    // From outside: every thread of a running probe allowed one and the
    // same CPU.
    let child = spawn_endless_probe(&["--mock"]);
    let pid = child.id();
    wait_until("every thread of the probe on one CPU", || {
        let cpus = threads_cpus(pid);
        cpus.len() > 1
            && cpus
                .iter()
                .all(|c| *c == cpus[0] && !c.contains([',', '-']))
    });
    let (code, stderr) = interrupt(child, Signal::SIGINT);
    assert_eq!(code, 130, "{stderr}");
}

/// A `command` write with --allow-motion: 100 runs to a normal end and 100
/// interrupted by SIGINT while the motor runs (`EV3SYSFS_RACE_RUNS` of
/// each); 0 left running.
#[test]
fn allow_motion_never_leaves_the_motor_running() {
    use nix::sys::signal::Signal;
    let Some(tree) = common::brick() else { return };
    let motor = tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    let root = tree.root().to_str().unwrap().to_owned();
    let args = |n: &'static str| {
        vec![
            "--root".to_owned(),
            root.clone(),
            "--port".into(),
            "outA".into(),
            "--attr".into(),
            "command".into(),
            "--value".into(),
            "run-forever".into(),
            "--allow-motion".into(),
            "--warmup".into(),
            "0".into(),
            "-n".into(),
            n.into(),
            "--max-time".into(),
            "60".into(),
            "--only".into(),
            "pwrite,driver".into(),
            "--flags".into(),
            "none".into(),
        ]
    };
    std::fs::write(motor.path().join("speed_sp"), "300").unwrap();
    let running = || motor.read("state").unwrap().contains("running");
    let (mut left_running, mut interrupted_left_running) = (0, 0);
    for _ in 0..common::repetitions("EV3SYSFS_RACE_RUNS", 100) {
        let a = args("20");
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let out = probe(&a);
        assert!(out.status.success(), "{}", text(&out).1);
        left_running += usize::from(running());

        let a = args("100000000");
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let child = spawn_probe(&a);
        wait_until("the motor runs", running);
        let (code, stderr) = interrupt(child, Signal::SIGINT);
        assert_eq!(code, 130, "{stderr}");
        interrupted_left_running += usize::from(running());
    }
    assert_eq!((left_running, interrupted_left_running), (0, 0));
}

#[test]
fn max_time_bounds_every_phase_and_absurd_values_are_refused() {
    let dir = common::TempDir::new("probe-time");
    let file = dir.path().join("speed_sp");
    std::fs::write(&file, "5").unwrap();
    let path = file.to_str().unwrap();
    let start = std::time::Instant::now();
    let warmup = usize::MAX.to_string();
    let out = probe(&[
        "--path",
        path,
        "-n",
        "100000000",
        "--warmup",
        &warmup,
        "--max-time",
        "1",
        "--only",
        "pwrite,pread",
        "--flags",
        "none",
    ]);
    let took = start.elapsed();
    assert!(out.status.success(), "{}", text(&out).1);
    // Two strategies of at most 1 s each (warm-up included), and start-up.
    assert!(took < std::time::Duration::from_secs(20), "took {took:?}");
    assert!(text(&out).0.contains("verdict") || text(&out).0.contains("pwrite"));
    for (args, says) in [
        (&["-n", "1000000000000", "--max-time", "1"][..], "at most"),
        (&["--max-time", "1e300"], "absurd"),
        (&["--max-time", "NaN"], "not a number"),
        (&["--max-time", "-3"], "more than 0"),
    ] {
        let mut all = vec!["--path", path];
        all.extend_from_slice(args);
        let out = probe(&all);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(text(&out).1.contains(says), "{args:?}: {}", text(&out).1);
    }
    assert_eq!(std::fs::read(&file).unwrap(), b"5");
}
