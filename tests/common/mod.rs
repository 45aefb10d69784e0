//! Helpers shared by the integration tests: temporary trees built from the
//! attribute files captured on a real brick, and a real kernfs (sysfs)
//! attribute set in a private network + mount namespace.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

/// A directory deleted on drop. Prefers tmpfs (/dev/shm).
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let base = if Path::new("/dev/shm").is_dir() {
            PathBuf::from("/dev/shm")
        } else {
            std::env::temp_dir()
        };
        let dir = base.join(format!(
            "ev3sysfs-test-{tag}-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        fs::create_dir_all(&dir).unwrap();
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

/// The captured brick files (`../shared/fake-sys/devices`), if present.
pub fn captured_devices() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fake-sys/devices");
    dir.is_dir().then_some(dir)
}

/// Like `captured_devices`, but a test that needs them fails with a clear
/// message in CI (where shared/ is always beside the clone) and is skipped
/// with a printed reason elsewhere.
pub fn require_captured() -> Option<PathBuf> {
    match captured_devices() {
        Some(dir) => Some(dir),
        None if std::env::var_os("CI").is_some() => {
            panic!("../shared/fake-sys/devices is missing in CI")
        }
        None => {
            skip("../shared/fake-sys/devices (captured brick files) not found");
            None
        }
    }
}

/// Access of tacho-motor and lego-sensor attributes on a brick (kernel facts
/// §1.1, §4.2, §7.1), in the group bits as a mock tree carries it: the
/// captured files are all r--r--r--.
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
    if WRITE_ONLY.contains(&name) {
        0o620
    } else if READ_WRITE.contains(&name) {
        0o664
    } else {
        0o644
    }
}

/// Copies captured device `captured` (e.g. "large_motor") to
/// `<root>/<class>/<name>` with ev3dev permission bits and returns the
/// device directory.
pub fn install_captured(
    captured: &Path,
    device: &str,
    root: &Path,
    class: &str,
    name: &str,
) -> PathBuf {
    let src = captured.join(device);
    let dst = root.join(class).join(name);
    copy_tree(&src, &dst);
    // A write-only `command` file may be missing from a capture.
    let command = dst.join("command");
    if !command.exists() {
        fs::write(&command, b"").unwrap();
        fs::set_permissions(&command, fs::Permissions::from_mode(0o620)).unwrap();
    }
    dst
}

fn copy_tree(src: &Path, dst: &Path) {
    fs::create_dir_all(dst).unwrap();
    for entry in fs::read_dir(src).unwrap() {
        let entry = entry.unwrap();
        let target = dst.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).unwrap();
            let name = entry.file_name().into_string().unwrap();
            fs::set_permissions(&target, fs::Permissions::from_mode(ev3dev_mode(&name))).unwrap();
        }
    }
}

/// Contents of a mock attribute file, as stored.
pub fn contents(path: &Path) -> String {
    fs::read_to_string(path).unwrap()
}

/// Says why a test is skipped, visibly: libtest captures `eprintln!`, but
/// not direct writes to the stderr handle.
pub fn skip(reason: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "SKIPPED: {reason}");
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
    let out = Command::new("ip")
        .args(args)
        .output()
        .expect("run ip (iproute2)");
    assert!(
        out.status.success(),
        "ip {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs `test` in a new thread that has its own network and mount namespaces
/// with a real sysfs mounted at a temporary directory and a veth pair in it.
/// Returns `false` (after printing why) when not root: the namespaces need
/// CAP_SYS_ADMIN. As root any failure fails the test.
pub fn with_kernfs(test: impl FnOnce(&Kernfs) + Send) -> bool {
    if !is_root() {
        skip("real kernfs tests need root (unshare -nm, mount sysfs, ip link add)");
        return false;
    }
    std::thread::scope(|s| {
        s.spawn(|| {
            use nix::mount::{mount, MsFlags};
            use nix::sched::{unshare, CloneFlags};
            // Namespaces are per thread: only this thread moves.
            unshare(CloneFlags::CLONE_NEWNET | CloneFlags::CLONE_NEWNS)
                .expect("unshare(CLONE_NEWNET | CLONE_NEWNS)");
            mount(
                None::<&str>,
                "/",
                None::<&str>,
                MsFlags::MS_REC | MsFlags::MS_PRIVATE,
                None::<&str>,
            )
            .expect("make / private in the new mount namespace");
            let dir = TempDir::new("kernfs");
            // A sysfs mounted in the new network namespace shows its devices.
            mount(
                Some("sysfs"),
                dir.path(),
                Some("sysfs"),
                MsFlags::empty(),
                None::<&str>,
            )
            .expect("mount sysfs");
            let ifname = "ev3t0".to_string();
            run_ip(&[
                "link", "add", &ifname, "type", "veth", "peer", "name", "ev3t1",
            ]);
            let kernfs = Kernfs {
                class_root: dir.path().join("class"),
                mount: dir,
                ifname,
            };
            test(&kernfs);
        })
        .join()
        .map_err(std::panic::resume_unwind)
        .ok();
    });
    true
}

/// A fresh simulated brick (a FUSE mount), or `None` with a printed reason
/// when this machine cannot mount one (no /dev/fuse, not permitted).
pub fn brick() -> Option<ev3sysfs::mock::MockTree> {
    match ev3sysfs::mock::MockTree::new() {
        Ok(tree) => Some(tree),
        Err(e) => {
            skip(&format!("no simulated brick here: {e}"));
            None
        }
    }
}

/// [`brick`] with the brick's ports, LEDs, battery and board-info.
pub fn ev3_brick() -> Option<ev3sysfs::mock::MockTree> {
    match ev3sysfs::mock::MockTree::ev3() {
        Ok(tree) => Some(tree),
        Err(e) => {
            skip(&format!("no simulated brick here: {e}"));
            None
        }
    }
}
