//! What `Attribute::open` refuses (issue 10): a FIFO in an attribute's place
//! must not block the open, a symbolic link in its place is not followed,
//! and anything that is not a regular file is refused with a clear error.
//! The device directory itself may be reached through a symlink, as sysfs's
//! class directories are.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::TempDir;
use ev3sysfs::{Access, Attribute, Backing, Error};

#[test]
fn a_fifo_is_refused_without_blocking() {
    let tmp = TempDir::new("fifo");
    let fifo = tmp.path().join("value0");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o644)).unwrap();
    // Without O_NONBLOCK this open would wait for a writer forever.
    let err = Attribute::open(&fifo, Access::ReadOnly).unwrap_err();
    assert!(matches!(err, Error::Io { .. }), "{err:?}");
    assert!(err.to_string().contains("not a regular file"), "{err}");
}

#[test]
fn a_symlinked_attribute_is_not_followed_but_a_symlinked_device_is() {
    let tmp = TempDir::new("symlink");
    let real = tmp.path().join("devices/motor0");
    std::fs::create_dir_all(&real).unwrap();
    std::fs::write(real.join("position"), "42\n").unwrap();
    std::os::unix::fs::symlink(real.join("position"), real.join("elsewhere")).unwrap();
    let err = Attribute::open(real.join("elsewhere"), Access::ReadOnly).unwrap_err();
    assert_eq!(err.errno(), Some(libc::ELOOP), "{err:?}");
    // The class symlink to the device directory, as /sys/class has it.
    std::fs::create_dir_all(tmp.path().join("class")).unwrap();
    std::os::unix::fs::symlink(&real, tmp.path().join("class/motor0")).unwrap();
    let attr = Attribute::open(tmp.path().join("class/motor0/position"), Access::ReadOnly).unwrap();
    assert_eq!(attr.read_int().unwrap(), 42);
    assert_eq!(attr.backing(), Backing::Other);
}

#[test]
fn a_directory_is_refused() {
    let tmp = TempDir::new("dir-attr");
    let dir = tmp.path().join("address");
    std::fs::create_dir_all(&dir).unwrap();
    let err = Attribute::open(&dir, Access::ReadOnly).unwrap_err();
    assert!(err.to_string().contains("not a regular file"), "{err}");
}

#[test]
fn the_inferred_open_refuses_the_same_with_its_one_stat() {
    // `open_inferred` (what the typed devices and `SysfsDevice::attribute`
    // use) tells the file type from the `stat` that picks the access mode
    // and opens without an `fstat` after: the same refusals.
    let tmp = TempDir::new("inferred");
    let dev = tmp.path().join("motor0");
    std::fs::create_dir_all(dev.join("address")).unwrap();
    nix::unistd::mkfifo(
        &dev.join("value0"),
        nix::sys::stat::Mode::from_bits_truncate(0o644),
    )
    .unwrap();
    std::fs::write(dev.join("position"), "42\n").unwrap();
    std::os::unix::fs::symlink(dev.join("position"), dev.join("elsewhere")).unwrap();
    for name in ["address", "value0"] {
        let err = Attribute::open_inferred(dev.join(name)).unwrap_err();
        assert!(matches!(err, Error::Io { .. }), "{name}: {err:?}");
        assert!(err.to_string().contains("not a regular file"), "{err}");
    }
    let err = Attribute::open_inferred(dev.join("elsewhere")).unwrap_err();
    assert_eq!(err.errno(), Some(libc::ELOOP), "{err:?}");
    let device = ev3sysfs::SysfsDevice::from_dir(&dev).unwrap();
    for name in ["address", "value0"] {
        let err = device.attribute(name).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
    }
    let attr = device.attribute("position").unwrap();
    assert_eq!(
        (attr.read_int().unwrap(), attr.access()),
        (42, Access::ReadWrite)
    );
}
