//! `SysfsDevice` against real kernel sysfs (kernfs) attributes: a veth pair's
//! `ifalias` (stores any string) and `mtu` (an integer that rejects junk with
//! EINVAL), in a private network + mount namespace. Needs root; skipped with a
//! printed reason otherwise.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::with_kernfs;
use ev3sysfs::{Backing, Error, SysfsDevice};

#[test]
fn real_kernfs_store_and_show() {
    with_kernfs(|k| {
        let dev = SysfsDevice::open(&k.class_root, "net", &k.ifname).unwrap();
        let alias = dev.attribute("ifalias").unwrap();
        assert_eq!(
            alias.backing(),
            Backing::Sysfs,
            "fstatfs must see SYSFS_MAGIC"
        );

        // Whole-value stores: a short value after a long one leaves no tail,
        // although the file offset is never touched.
        alias.write_str("run-forever").unwrap();
        assert_eq!(alias.read_string().unwrap(), "run-forever");
        alias.write_str("stop").unwrap();
        assert_eq!(alias.read_string().unwrap(), "stop");
        // Fresh value on every read at offset 0, also on the same fd.
        for i in 0..50 {
            alias.write_str(&format!("value-{i}")).unwrap();
            assert_eq!(alias.read_string().unwrap(), format!("value-{i}"));
        }

        // Integers, and EINVAL mapped to an invalid-value error.
        let mtu = dev.attribute("mtu").unwrap();
        mtu.write_int(1400).unwrap();
        assert_eq!(mtu.read_int().unwrap(), 1400);
        match mtu.write_str("abc") {
            Err(Error::InvalidValue {
                value,
                path,
                source,
            }) => {
                assert_eq!(value, "abc");
                assert!(path.ends_with("mtu"));
                assert_eq!(source.raw_os_error(), Some(libc::EINVAL));
            }
            other => panic!("expected InvalidValue, got {other:?}"),
        }
        // The rejected write changed nothing.
        assert_eq!(mtu.read_int().unwrap(), 1400);
        let err = mtu.write_int(1 << 40).unwrap_err();
        assert!(matches!(err, Error::InvalidValue { .. }), "{err:?}");
        // net's store parses with kstrtoul and then refuses the range with
        // EINVAL; ev3dev's kstrtoint stores answer ERANGE. Both are invalid
        // values (the mapping of each is unit-tested in error.rs).
        assert!(matches!(
            err.errno(),
            Some(libc::EINVAL) | Some(libc::ERANGE)
        ));

        // A read-only attribute opened read-only; writing is refused.
        assert!(matches!(
            dev.write_int("ifindex", 3),
            Err(Error::PermissionDenied { .. })
        ));
        // Sysfs itself refuses to open a read-only attribute for writing,
        // even for root.
        let err = dev
            .open_attribute("ifindex", ev3sysfs::Access::ReadWrite)
            .unwrap_err();
        assert!(matches!(err, Error::PermissionDenied { .. }), "{err:?}");
        assert_eq!(err.errno(), Some(libc::EACCES));

        // No change notified: a bounded wait returns false, not an error.
        let carrier = dev.attribute("carrier_changes").unwrap();
        assert!(carrier.read_int().is_ok());
        assert!(!alias
            .wait_for_change(std::time::Duration::from_millis(30))
            .unwrap());

        // Unplug: the link goes away while its files are open.
        k.delete_link();
        // kernfs reports POLLERR|POLLPRI for a removed node at once; the
        // wait tells it from a change and says "disconnected".
        let err = alias
            .wait_for_change(std::time::Duration::from_secs(5))
            .unwrap_err();
        assert!(err.is_disconnected(), "{err:?}");
        let err = alias.read_string().unwrap_err();
        assert!(err.is_disconnected(), "{err:?}");
        assert_eq!(err.errno(), Some(libc::ENODEV));
        let err = alias.write_str("x").unwrap_err();
        assert!(err.is_disconnected(), "{err:?}");
        assert!(mtu.read_int().unwrap_err().is_disconnected());
        assert!(carrier.read_int().unwrap_err().is_disconnected());
        // Not opened before the unplug: the directory is gone.
        assert!(dev.read_int("tx_queue_len").unwrap_err().is_disconnected());
        assert!(!dev.is_present());
    });
}

#[test]
fn real_kernfs_long_value() {
    with_kernfs(|k| {
        let dev = SysfsDevice::open(&k.class_root, "net", &k.ifname).unwrap();
        let alias = dev.attribute("ifalias").unwrap();
        // ifalias keeps up to IFALIASZ - 1 = 255 bytes: longer than the first
        // read buffer with the newline.
        let long = "a".repeat(255);
        alias.write_str(&long).unwrap();
        assert_eq!(alias.read_string().unwrap(), long);
    });
}
