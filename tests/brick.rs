//! The simulated brick's file system behaves like sysfs: whole-value stores,
//! errno at the writer's `pwrite`, `EACCES` against the grain even for root,
//! `ENODEV` and woken pollers after an unplug, `POLLPRI` on a state change,
//! no mount left behind, a clear error when mounting is not permitted.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::fs::{File, OpenOptions};
use std::os::fd::AsFd;
use std::os::unix::fs::FileExt;
use std::time::Duration;

use common::brick;
use ev3sysfs::{Backing, SysfsDevice};
use ev3sysfs_sim::{MockTree, SensorDriver, TachoDriver};
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};

fn open_rw(path: &std::path::Path) -> File {
    OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap()
}

fn read_text(file: &File) -> String {
    let mut buf = [0u8; 4096];
    let n = file.read_at(&mut buf, 0).unwrap();
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

#[test]
fn a_shorter_store_leaves_no_stale_tail() {
    let Some(tree) = brick() else { return };
    let motor = tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    let speed_sp = open_rw(&motor.path().join("speed_sp"));
    assert_eq!(speed_sp.write_at(b"1000", 0).unwrap(), 4);
    assert_eq!(speed_sp.write_at(b"20", 0).unwrap(), 2);
    assert_eq!(read_text(&speed_sp), "20\n");
    // The offset is ignored, as kernfs does for text attributes.
    assert_eq!(speed_sp.write_at(b"30", 7).unwrap(), 2);
    assert_eq!(read_text(&speed_sp), "30\n");
    let polarity = open_rw(&motor.path().join("polarity"));
    polarity.write_at(b"inversed", 0).unwrap();
    polarity.write_at(b"normal", 0).unwrap();
    assert_eq!(read_text(&polarity), "normal\n");
    // Reads at an offset get a slice of a fresh rendering.
    let mut tail = [0u8; 8];
    let n = polarity.read_at(&mut tail, 3).unwrap();
    assert_eq!(&tail[..n], b"mal\n");
}

#[test]
fn a_bad_value_is_einval_at_the_writers_pwrite() {
    let Some(tree) = brick() else { return };
    let motor = tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    let speed_sp = open_rw(&motor.path().join("speed_sp"));
    let err = speed_sp.write_at(b"5000", 0).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EINVAL), "{err}");
    let command = OpenOptions::new()
        .write(true)
        .open(motor.path().join("command"))
        .unwrap();
    let err = command.write_at(b"fly", 0).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EINVAL), "{err}");
    // Through the crate: Error::InvalidValue with the value.
    let dev = SysfsDevice::open(tree.root(), "tacho-motor", &motor.name()).unwrap();
    let err = dev.write_int("speed_sp", 5000).unwrap_err();
    assert_eq!(err.errno(), Some(libc::EINVAL), "{err:?}");
}

#[test]
fn opening_against_the_grain_is_eacces_even_for_root() {
    let Some(tree) = brick() else { return };
    let motor = tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    let write_ro = OpenOptions::new()
        .write(true)
        .open(motor.path().join("max_speed"))
        .unwrap_err();
    assert_eq!(write_ro.raw_os_error(), Some(libc::EACCES));
    let read_wo = File::open(motor.path().join("command")).unwrap_err();
    assert_eq!(read_wo.raw_os_error(), Some(libc::EACCES));
    assert!(File::open(motor.path().join("max_speed")).is_ok());
}

#[test]
fn unplug_gives_enodev_on_held_files_and_wakes_pollers() {
    let Some(tree) = brick() else { return };
    let motor = tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    let state = File::open(motor.path().join("state")).unwrap();
    read_text(&state);
    let speed_sp = open_rw(&motor.path().join("speed_sp"));
    let waiter = std::thread::spawn(move || {
        let mut fds = [PollFd::new(state.as_fd(), PollFlags::POLLPRI)];
        let ready = poll(&mut fds, PollTimeout::from(10_000u16)).unwrap();
        (ready, fds[0].revents().unwrap(), state)
    });
    std::thread::sleep(Duration::from_millis(100));
    tree.unplug(&motor).unwrap();
    let (ready, revents, state) = waiter.join().unwrap();
    assert_eq!(ready, 1);
    assert!(
        revents.contains(PollFlags::POLLPRI | PollFlags::POLLERR),
        "{revents:?}"
    );
    let err = state.read_at(&mut [0u8; 16], 0).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::ENODEV));
    let err = speed_sp.write_at(b"10", 0).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::ENODEV));
    assert!(!motor.path().exists());
}

#[test]
fn a_state_change_notifies_pollers() {
    let Some(tree) = brick() else { return };
    let motor = tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    let state = File::open(motor.path().join("state")).unwrap();
    assert_eq!(read_text(&state), "\n");
    let mut fds = [PollFd::new(state.as_fd(), PollFlags::POLLPRI)];
    assert_eq!(poll(&mut fds, PollTimeout::ZERO).unwrap(), 0, "nothing yet");
    let dev = SysfsDevice::open(tree.root(), "tacho-motor", &motor.name()).unwrap();
    dev.write_int("speed_sp", 300).unwrap();
    dev.write_str("command", "run-forever").unwrap();
    let mut fds = [PollFd::new(state.as_fd(), PollFlags::POLLPRI)];
    assert_eq!(poll(&mut fds, PollTimeout::from(5_000u16)).unwrap(), 1);
    assert!(fds[0].revents().unwrap().contains(PollFlags::POLLPRI));
    // The command took effect in the store; the read clears the event.
    assert_eq!(read_text(&state), "running\n");
    let mut fds = [PollFd::new(state.as_fd(), PollFlags::POLLPRI)];
    assert_eq!(poll(&mut fds, PollTimeout::ZERO).unwrap(), 0);
    // The crate's wait hears it too.
    let attr = dev.attribute("state").unwrap();
    assert_eq!(attr.backing(), Backing::SimulatedBrick);
    // The change comes once the waiter has read the state (on one slow
    // CPU, the ARM guest's, the waiter may take longer than any fixed
    // sleep to get there): pending or landing during the wait, it is heard.
    let (read, was_read) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn({
        let root = tree.root().to_path_buf();
        let name = motor.name();
        move || {
            let dev = SysfsDevice::open(root, "tacho-motor", &name).unwrap();
            let state = dev.attribute("state").unwrap();
            state.read_string().unwrap();
            read.send(()).unwrap();
            state.wait_for_change(Duration::from_secs(10)).unwrap()
        }
    });
    was_read.recv().unwrap();
    // Most often while the waiter sleeps in poll, through a slice's end.
    std::thread::sleep(ev3sysfs::attr::UNPLUG_CHECK);
    dev.write_str("command", "stop").unwrap();
    assert!(waiter.join().unwrap());
}

#[test]
fn a_quiet_attribute_is_polled_once_a_poll_call_however_often_polled() {
    let Some(tree) = brick() else { return };
    let motor = tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    let state = File::open(motor.path().join("state")).unwrap();
    read_text(&state);
    let before = tree.polls_answered();
    // Each poll(2) leaves a poller in place of the last one, as the slices
    // of a wait do: the one replaced must not wake the poll that replaced
    // it (a notification storm: on one CPU such a poll never timed out).
    for _ in 0..3 {
        let mut fds = [PollFd::new(state.as_fd(), PollFlags::POLLPRI)];
        assert_eq!(poll(&mut fds, PollTimeout::from(100u16)).unwrap(), 0);
    }
    // The kernel asks once before sleeping and once more at the timeout.
    let answered = tree.polls_answered() - before;
    assert!(
        answered <= 6,
        "{answered} polls answered for 3 quiet poll(2) calls"
    );
}

#[test]
fn a_waiting_wait_for_change_hears_of_an_unplug() {
    let Some(tree) = brick() else { return };
    let touch = tree.add_sensor("in1", SensorDriver::Ev3Touch).unwrap();
    let dev = SysfsDevice::open(tree.root(), "lego-sensor", &touch.name()).unwrap();
    let value0 = dev.attribute("value0").unwrap();
    value0.read_int().unwrap();
    std::thread::scope(|s| {
        let waiter = s.spawn(|| value0.wait_for_change(Duration::from_secs(30)));
        std::thread::sleep(Duration::from_millis(100));
        tree.unplug(&touch).unwrap();
        let err = waiter.join().unwrap().unwrap_err();
        assert!(err.is_disconnected(), "{err:?}");
    });
}

fn mounted(root: &std::path::Path) -> bool {
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let root = root.to_string_lossy();
    info.lines()
        .any(|l| l.split(' ').nth(4) == Some(root.as_ref()))
}

#[test]
fn no_mount_is_left_after_drop() {
    let Some(tree) = brick() else { return };
    let root = tree.root().to_path_buf();
    assert!(mounted(&root));
    drop(tree);
    assert!(!mounted(&root));
    assert!(!root.exists());
    // With a file still open: unmounted lazily, the file gives an error.
    let tree = brick().unwrap();
    let motor = tree
        .add_tacho_motor("outB", TachoDriver::Ev3Medium)
        .unwrap();
    let held = File::open(motor.path().join("max_speed")).unwrap();
    let root = tree.root().to_path_buf();
    drop(tree);
    assert!(!mounted(&root));
    assert!(!root.exists());
    drop(held);
}

#[test]
fn mounting_without_permission_fails_clearly() {
    if std::env::var_os("EV3SYSFS_MOUNT_CHILD").is_some() {
        let err = MockTree::new().unwrap_err();
        println!("MOUNT-ERROR: {err}");
        return;
    }
    if !common::is_root() {
        return common::skip("needs root to run a child as nobody");
    }
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new("timeout")
        .args([
            "60",
            "setpriv",
            "--reuid=nobody",
            "--regid=nogroup",
            "--clear-groups",
            "--",
        ])
        // Through the cross runner (qemu-arm-static) when there is one.
        .args(std::env::var_os("EV3SYSFS_TEST_RUNNER").filter(|r| !r.is_empty()))
        .arg(&exe)
        .args([
            "--exact",
            "mounting_without_permission_fails_clearly",
            "--nocapture",
        ])
        .env("EV3SYSFS_MOUNT_CHILD", "1")
        .env("TMPDIR", "/tmp")
        .output();
    let Ok(out) = out else {
        return common::skip("setpriv or timeout not available");
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("setpriv:") {
        return common::skip(&format!("setpriv failed: {stderr}"));
    }
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let line = common::marker_line(&stdout, "MOUNT-ERROR: ")
        .unwrap_or_else(|| panic!("no error reported: {stdout}\n{stderr}"));
    assert!(line.contains("/dev/fuse"), "{line}");
    assert!(line.contains("fusermount3"), "{line}");
}

/// A model whose `show` panics for `boom` and whose `store` echoes.
struct Fragile(String);

impl ev3sysfs_sim::kobject::Model for Fragile {
    fn class(&self) -> &'static str {
        "fragile"
    }
    fn attributes(&self) -> Vec<ev3sysfs_sim::kobject::AttrInfo> {
        use ev3sysfs_sim::kobject::{AttrInfo, Mode};
        vec![
            AttrInfo::text("boom", Mode::ReadOnly),
            AttrInfo::text("value", Mode::ReadWrite),
        ]
    }
    fn show(&self, attr: &str, out: &mut Vec<u8>) -> Result<(), i32> {
        if attr == "boom" {
            panic!("a model's bug");
        }
        out.extend_from_slice(self.0.as_bytes());
        out.push(b'\n');
        Ok(())
    }
    fn store(
        &mut self,
        _attr: &str,
        value: &[u8],
        _fx: &mut ev3sysfs_sim::kobject::Effects,
    ) -> Result<usize, i32> {
        self.0 = String::from_utf8_lossy(value).trim_end().to_owned();
        Ok(value.len())
    }
}

#[test]
fn a_panicking_model_answers_eio_and_the_brick_keeps_serving() {
    let Some(tree) = brick() else { return };
    let dev = tree
        .add_model(Box::new(Fragile("calm".into())), None)
        .unwrap();
    assert_eq!(dev.path(), tree.root().join("fragile/fragile"));
    let boom = File::open(dev.path().join("boom")).unwrap();
    let err = boom.read_at(&mut [0u8; 16], 0).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EIO));
    let value = open_rw(&dev.path().join("value"));
    value.write_at(b"still here", 0).unwrap();
    assert_eq!(read_text(&value), "still here\n");
}

#[test]
fn looks_like_sysfs_sizes_power_directories_and_the_marker() {
    let Some(tree) = brick() else { return };
    let motor = tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    let meta = std::fs::metadata(motor.path().join("max_speed")).unwrap();
    assert_eq!(meta.len(), 4096, "text attributes show 4096 as sysfs");
    assert!(motor.path().join("power").is_dir());
    let names: Vec<String> = std::fs::read_dir(tree.root())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.contains(&"tacho-motor".to_owned()), "{names:?}");
    // The marker the I/O core recognises the brick by, on every file.
    let dev = SysfsDevice::open(tree.root(), "tacho-motor", &motor.name()).unwrap();
    assert_eq!(
        dev.attribute("max_speed").unwrap().backing(),
        Backing::SimulatedBrick
    );
    let statfs = nix::sys::statfs::statfs(tree.root()).unwrap();
    assert_eq!(statfs.filesystem_type(), nix::sys::statfs::FUSE_SUPER_MAGIC);
}
