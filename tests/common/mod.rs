//! Helpers shared by the integration tests: temporary trees built from the
//! repository's own fixtures (tests/fixtures/, attribute files as captured
//! on a real brick), and a real kernfs (sysfs) attribute set in a private
//! network + mount namespace.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

mod netns;
pub mod strace;

/// A directory with an unpredictable name (mkdtemp, mode 0700), deleted on
/// drop.
pub struct TempDir(PathBuf);

impl TempDir {
    /// Under `std::env::temp_dir()` ($TMPDIR or /tmp): executables may live
    /// here (/dev/shm is often mounted noexec, in containers in particular).
    pub fn new(tag: &str) -> TempDir {
        TempDir::under(&std::env::temp_dir(), tag)
    }

    /// On tmpfs (/dev/shm) when there is one, for tests that need a memory
    /// file system; never for executables.
    pub fn tmpfs(tag: &str) -> TempDir {
        let shm = Path::new("/dev/shm");
        if shm.is_dir() {
            TempDir::under(shm, tag)
        } else {
            TempDir::new(tag)
        }
    }

    fn under(base: &Path, tag: &str) -> TempDir {
        let template = base.join(format!("ev3sysfs-test-{tag}-XXXXXX"));
        let dir = nix::unistd::mkdtemp(&template)
            .unwrap_or_else(|e| panic!("mkdtemp {}: {e}", template.display()));
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// The fixture of `device` (`large_motor`, `medium_motor`,
/// `infrared_sensor`, `touch_sensor`): tests/fixtures/<device>.attrs.
pub fn fixture(device: &str) -> PathBuf {
    // The repository's tests/ (this file's crate may be the workspace's
    // `sim` member, whose manifest dir is sim/).
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/"))
        .ancestors()
        .map(|dir| dir.join("tests/fixtures"))
        .find(|dir| dir.is_dir())
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures"))
        .join(format!("{device}.attrs"))
}

/// Parses a fixture: `(path, exact contents)` per attribute file. A line is
/// `<path> "<contents>"` with `\n`, `\t`, `\\`, `\"` and `\xNN` escapes;
/// `#` starts a comment line.
pub fn read_fixture(device: &str) -> Vec<(String, Vec<u8>)> {
    let path = fixture(device);
    let text =
        fs::read_to_string(&path).unwrap_or_else(|e| panic!("fixture {}: {e}", path.display()));
    let mut files = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = || panic!("{}:{}: bad line {line:?}", path.display(), number + 1);
        let Some((name, quoted)) = line.split_once(' ') else {
            bad()
        };
        let Some(inner) = quoted.strip_prefix('"').and_then(|q| q.strip_suffix('"')) else {
            bad()
        };
        files.push((name.to_owned(), unescape(inner).unwrap_or_else(|| bad())));
    }
    files
}

fn unescape(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut bytes = text.bytes();
    while let Some(b) = bytes.next() {
        if b != b'\\' {
            out.push(b);
            continue;
        }
        out.push(match bytes.next()? {
            b'n' => b'\n',
            b't' => b'\t',
            b'\\' => b'\\',
            b'"' => b'"',
            b'x' => {
                let hex = [bytes.next()?, bytes.next()?];
                u8::from_str_radix(std::str::from_utf8(&hex).ok()?, 16).ok()?
            }
            _ => return None,
        });
    }
    Some(out)
}

/// Access of tacho-motor and lego-sensor attributes on a brick (kernel facts
/// §1.1, §4.2, §7.1), in the group bits as a mock tree carries it.
fn ev3dev_mode(name: &str) -> u32 {
    const WRITE_ONLY: &[&str] = &["command"];
    const READ_WRITE: &[&str] = &[
        "duty_cycle_sp",
        "polarity",
        "position",
        "position_sp",
        "speed_sp",
        "ramp_up_sp",
        "ramp_down_sp",
        "stop_action",
        "time_sp",
        "mode",
        "poll_ms",
        "direct",
        "Kp",
        "Ki",
        "Kd",
    ];
    // As sysfs shows them after ev3dev's udev rules: the I/O core infers
    // the access from these bits.
    if WRITE_ONLY.contains(&name) {
        0o220
    } else if READ_WRITE.contains(&name) {
        0o664
    } else {
        0o444
    }
}

/// Writes fixture `device` (e.g. "large_motor") to `<root>/<class>/<name>`
/// with ev3dev permission bits and returns the device directory.
pub fn install_fixture(device: &str, root: &Path, class: &str, name: &str) -> PathBuf {
    let dst = root.join(class).join(name);
    for (path, contents) in read_fixture(device) {
        let target = dst.join(&path);
        fs::create_dir_all(target.parent().unwrap()).unwrap();
        fs::write(&target, contents).unwrap();
        let file_name = target.file_name().unwrap().to_str().unwrap();
        fs::set_permissions(&target, fs::Permissions::from_mode(ev3dev_mode(file_name))).unwrap();
    }
    // A write-only `command` file may be missing from a capture.
    let command = dst.join("command");
    if !command.exists() {
        fs::write(&command, b"").unwrap();
        fs::set_permissions(&command, fs::Permissions::from_mode(0o220)).unwrap();
    }
    dst
}

/// Contents of a mock attribute file, as stored.
pub fn contents(path: &Path) -> String {
    fs::read_to_string(path).unwrap()
}

/// Says why a test is skipped, visibly: libtest captures `eprintln!`, but
/// not direct writes to the stderr handle. The line ends with the test's
/// name in brackets (libtest names each test's thread after the test):
/// `scripts/test-all` counts one skip per test from these marker lines,
/// since libtest itself reports a skipped test as passed.
pub fn skip(reason: &str) {
    use std::io::Write;
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("?");
    // One write: stderr is unbuffered, and a line written in pieces would
    // interleave with libtest's own lines.
    let line = format!("SKIPPED: {reason} [{test}]\n");
    let _ = std::io::stderr().write_all(line.as_bytes());
}

/// A command that runs `exe`, one of this crate's own binaries or test
/// binaries: directly, or through `$EV3SYSFS_TEST_RUNNER` (qemu-arm-static
/// for the cross-built suite, where the host cannot exec an ARM binary).
pub fn own_binary(exe: impl AsRef<std::ffi::OsStr>) -> Command {
    match std::env::var_os("EV3SYSFS_TEST_RUNNER") {
        Some(runner) if !runner.is_empty() => {
            let mut c = Command::new(runner);
            c.arg(exe);
            c
        }
        _ => Command::new(exe),
    }
}

/// This test binary again (through the cross runner when set), running only
/// the ignored test `name` with `env` set to `mode` and the sysfs root set
/// to `root`; stdout and stderr piped.
pub fn child_test(name: &str, env: &str, mode: &str, root: &Path) -> Command {
    let mut command = own_binary(std::env::current_exe().unwrap());
    command
        .args([
            name,
            "--exact",
            "--include-ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(env, mode)
        .env(ev3sysfs::ROOT_ENV, root)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    command
}

/// The marker line a child test printed, from the marker on: `marker`'s
/// first line in `output`, wherever it starts in that line. libtest prints
/// `test NAME ... ` without a newline before the test body runs, and with one
/// test thread (a one-CPU machine: the EV3, the ARM guest,
/// `RUST_TEST_THREADS=1`) the child's first line shares that line, so a
/// marker is never matched at the start of a line.
pub fn marker_line<'a>(output: &'a str, marker: &str) -> Option<&'a str> {
    output
        .lines()
        .find_map(|line| line.find(marker).map(|at| line[at..].trim_end()))
}

pub fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// A real sysfs mount that shows a veth pair, in a private network + mount
/// namespace of the calling thread. `class_root` is `<mount>/class`, the
/// device is `<class_root>/net/<ifname>`.
pub struct Kernfs {
    pub mount: TempDir,
    pub class_root: PathBuf,
    pub ifname: String,
}

impl Kernfs {
    /// Deletes the veth link: every attribute of it goes away (ENODEV on
    /// already-open files).
    pub fn delete_link(&self) {
        run_ip(&["link", "del", &self.ifname]);
    }
}

impl Drop for Kernfs {
    fn drop(&mut self) {
        let _ = nix::mount::umount2(self.mount.path(), nix::mount::MntFlags::MNT_DETACH);
    }
}

fn run_ip(args: &[&str]) {
    if let Err(e) = try_ip(args) {
        panic!("{e}");
    }
}

fn try_ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("cannot run ip (iproute2): {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {args:?}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Private network + mount namespaces for the calling thread, a sysfs
/// mounted in them, a veth pair. Any failure is a reason to skip: the
/// machine (a container under `cross test`: EPERM) cannot give us this.
fn set_up_kernfs() -> Result<Kernfs, String> {
    netns::enter_private_namespaces()?;
    let dir = TempDir::new("kernfs");
    netns::mount_sysfs(dir.path())?;
    let kernfs = Kernfs {
        class_root: dir.path().join("class"),
        mount: dir,
        ifname: "ev3t0".to_string(),
    };
    try_ip(&[
        "link",
        "add",
        &kernfs.ifname,
        "type",
        "veth",
        "peer",
        "name",
        "ev3t1",
    ])?;
    Ok(kernfs)
}

/// Runs `test` in a new thread that has its own network and mount namespaces
/// with a real sysfs mounted at a temporary directory and a veth pair in it.
/// Returns `false` (after printing why) when that cannot be set up: not
/// root, or namespaces refused (EPERM in a container). Once set up, any
/// failure of `test` fails the test.
pub fn with_kernfs(test: impl FnOnce(&Kernfs) + Send) -> bool {
    if !is_root() {
        skip("real kernfs tests need root (unshare -nm, mount sysfs, ip link add)");
        return false;
    }
    std::thread::scope(|s| {
        s.spawn(|| match set_up_kernfs() {
            Ok(kernfs) => {
                test(&kernfs);
                true
            }
            Err(why) => {
                skip(&format!("real kernfs tests: cannot set up: {why}"));
                false
            }
        })
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// A fresh simulated brick (a FUSE mount), or `None` with a printed reason
/// when this machine cannot mount one (no /dev/fuse, not permitted).
pub fn brick() -> Option<ev3sysfs_sim::MockTree> {
    match ev3sysfs_sim::MockTree::new() {
        Ok(tree) => Some(tree),
        Err(e) => {
            skip(&format!("no simulated brick here: {e}"));
            None
        }
    }
}

/// [`brick`] with the brick's ports, LEDs, battery and board-info.
pub fn ev3_brick() -> Option<ev3sysfs_sim::MockTree> {
    match ev3sysfs_sim::MockTree::ev3() {
        Ok(tree) => Some(tree),
        Err(e) => {
            skip(&format!("no simulated brick here: {e}"));
            None
        }
    }
}

/// `ev3-sim`, when this test crate has it (the `sim` member's tests; the
/// library's own tests do not) and this machine can run `ev3-sim
/// --over-sys-class`: root for the mount namespace, `/dev/fuse`, the host's
/// architecture (not qemu-user). Otherwise a printed skip and `None`.
pub fn ev3_sim_over_sys_class() -> Option<PathBuf> {
    let Some(bin) = option_env!("CARGO_BIN_EXE_ev3-sim") else {
        skip("ev3-sim is not built for this test crate");
        return None;
    };
    if !nix::unistd::geteuid().is_root() {
        skip("not root: ev3-sim --over-sys-class needs a mount namespace");
        return None;
    }
    if !Path::new("/dev/fuse").exists() {
        skip("/dev/fuse is missing");
        return None;
    }
    if under_qemu_user() {
        skip("ev3-sim --over-sys-class does not run under qemu-user");
        return None;
    }
    Some(PathBuf::from(bin))
}

/// A repetition count: `var` when set, else `default` (a tenth under the
/// cross runner, where every child process starts under qemu). The ARM
/// guest sets the variables to a tenth or less too
/// (`scripts/arm-guest/run`).
pub fn repetitions(var: &str, default: usize) -> usize {
    let emulated = under_qemu_user();
    std::env::var(var)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(if emulated { default / 10 } else { default })
}

/// Whether a real-time simulation keeps to the wall clock here: not under
/// an emulator (qemu-user runs the brick build's tests), where the
/// library's wall-clock timeouts end moves that the slower simulated time
/// has not finished. A printed skip when it does not.
pub fn real_time_keeps_up() -> bool {
    let host = cfg!(any(target_arch = "x86_64", target_arch = "aarch64"));
    if !host {
        skip("a real-time simulation under an emulator falls behind the wall clock");
    }
    host
}

/// Runs the ignored child test `child` of this binary under `strace -f`
/// with `env` set; the child prints `WAITER <tid>` before it waits. Returns
/// the waiter thread's syscall lines (a call another thread interrupted,
/// which strace splits into "<unfinished ...>" and "<... resumed>", counted
/// once), or `None` after a printed skip (under qemu-user, no strace, the
/// child skipped).
pub fn traced_waiter(child: &str, env: &str) -> Option<Vec<String>> {
    if under_qemu_user() {
        skip("strace would trace qemu-user, not the program");
        return None;
    }
    if Command::new("strace").arg("-V").output().is_err() {
        skip("strace is not installed (apt-get install strace)");
        return None;
    }
    let tmp = TempDir::new("waiter-strace");
    let log = tmp.path().join("trace");
    let out = Command::new("strace")
        .args(["-f", "-qq", "-o"])
        .arg(&log)
        .arg(std::env::current_exe().unwrap())
        .args([
            child,
            "--exact",
            "--include-ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(env, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}{stderr}");
    let Some(tid) = marker_line(&stdout, "WAITER ").and_then(|l| l.split(' ').nth(1)) else {
        skip(&format!("the child skipped: {stdout}{stderr}"));
        return None;
    };
    let trace = fs::read_to_string(&log).unwrap();
    Some(
        trace
            .lines()
            .filter_map(|l| l.strip_prefix(tid))
            .map(str::trim_start)
            .filter(|l| !l.starts_with("<..."))
            .map(str::to_owned)
            .collect(),
    )
}

/// The syscalls of a waiter (from [`traced_waiter`]) from its first `poll`
/// asking for `POLLPRI` to its last, and those polls. Checks that there
/// are at most `wait_ms / period_ms + 3` (no busy loop), each on `fds`
/// descriptors with a timeout of at least 1 ms (a 0 ms poll spins).
pub fn wait_polls(
    lines: &[String],
    fds: usize,
    wait_ms: u64,
    period_ms: u64,
) -> (Vec<&str>, Vec<&str>) {
    let is_wait_poll = |l: &str| l.starts_with("poll(") && l.contains("POLLPRI");
    let first = lines.iter().position(|l| is_wait_poll(l)).unwrap();
    let last = lines.iter().rposition(|l| is_wait_poll(l)).unwrap();
    let window: Vec<&str> = lines[first..=last].iter().map(String::as_str).collect();
    let polls: Vec<&str> = window
        .iter()
        .copied()
        .filter(|l| l.starts_with("poll("))
        .collect();
    let most = usize::try_from(wait_ms / period_ms).unwrap() + 3;
    println!(
        "{} polls in {wait_ms} ms, {} syscalls in the window",
        polls.len(),
        window.len()
    );
    assert!(
        polls.len() <= most,
        "busy loop: {} polls: {polls:?}",
        polls.len()
    );
    let count = format!("], {fds}, ");
    let mut zero_before = false;
    for p in &polls {
        // poll([{fd=.., events=POLLPRI}, ...], 3, 10) = 0 (Timeout)
        assert!(p.contains(&count), "one poll on all {fds} descriptors: {p}");
        let timeout = poll_timeout_ms(p, fds).unwrap_or_else(|| panic!("{p}"));
        // A 0 ms poll only looks: right once, for a deadline that passed
        // while the program ran (the ARM926 guest's slow CPU); twice in a
        // row, it spins.
        assert!(
            timeout >= 1 || !zero_before,
            "zero timeouts in a row spin: {p}"
        );
        zero_before = timeout == 0;
    }
    (window, polls)
}

/// The timeout (ms) of a strace line of a `poll(2)` on `fds` descriptors:
/// `poll([{fd=.., events=POLLPRI}, ...], 3, 10) = 0 (Timeout)` gives 10.
pub fn poll_timeout_ms(line: &str, fds: usize) -> Option<i64> {
    line.split(&format!("], {fds}, "))
        .nth(1)?
        .split([')', ' '])
        .next()?
        .trim()
        .parse()
        .ok()
}

/// A drive base on the simulated brick's large motors outB (left) and outC
/// (right): 56 mm wheels, 112 mm apart (the built-in worlds' robot).
pub fn drive_base(tree: &ev3sysfs_sim::MockTree) -> ev3sysfs::drive::DriveBase {
    use ev3sysfs::motor::TachoMotor;
    use ev3sysfs::units::Millimetres;
    ev3sysfs::drive::DriveBase::new(
        TachoMotor::large(tree.root(), "outB").unwrap(),
        TachoMotor::large(tree.root(), "outC").unwrap(),
        Millimetres(56),
        Millimetres(112),
    )
    .unwrap()
}

/// Whether this test binary runs under qemu-user (`qemu-arm-static`: the
/// brick build's tests on the host, `scripts/cargo-armv5te test`), not
/// natively (the host, the ARM guest of `scripts/arm-guest`, a brick).
/// There strace would trace the emulator, and ioctls qemu does not pass
/// through answer `ENOSYS`. Told by the cross runner
/// (`$EV3SYSFS_TEST_RUNNER`, set by `scripts/cargo-armv5te`) or, when
/// started otherwise (binfmt_misc), by the machine of the system's own
/// executables (`/proc/1/exe`, else `/bin/sh`: qemu-user hides only this
/// process's own `/proc/self/exe`) differing from this binary's.
pub fn under_qemu_user() -> bool {
    if std::env::var_os("EV3SYSFS_TEST_RUNNER").is_some_and(|r| !r.is_empty()) {
        return true;
    }
    // ELF e_machine of the architectures the tests are built for.
    let own: u16 = if cfg!(target_arch = "x86_64") {
        62
    } else if cfg!(target_arch = "aarch64") {
        183
    } else if cfg!(target_arch = "arm") {
        40
    } else if cfg!(target_arch = "x86") {
        3
    } else {
        return false;
    };
    ["/proc/1/exe", "/bin/sh"]
        .iter()
        .find_map(|exe| elf_machine(Path::new(exe)))
        .is_some_and(|machine| machine != own)
}

/// `e_machine` of a little-endian ELF file, `None` if it cannot be read.
fn elf_machine(path: &Path) -> Option<u16> {
    use std::io::Read;
    let mut header = [0u8; 20];
    fs::File::open(path).ok()?.read_exact(&mut header).ok()?;
    // "\x7fELF", EI_DATA 1: little-endian.
    if header[..4] != *b"\x7fELF" || header[5] != 1 {
        return None;
    }
    Some(u16::from_le_bytes([header[18], header[19]]))
}

/// Whether `name` is an executable file in a directory of `$PATH` (a tool
/// a test starts: strace, flock, qemu-arm-static).
pub fn has_command(name: &str) -> bool {
    command_path(name).is_some()
}

/// The first executable file `name` in a directory of `$PATH`. A script
/// that must run that very program names it by this path: busybox's `sh`
/// runs its own applet of the same name first (the ARM926 guest's
/// `setpriv`, which has no `--reuid`).
pub fn command_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|file| {
            fs::metadata(file).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}
