//! Real kernfs for the benches, as root: a private network and mount
//! namespace, sysfs mounted on a temporary directory, a veth pair
//! `ev3b0`/`ev3b1` whose `mtu` attributes are real sysfs attributes.

use std::path::Path;
use std::process::Command;

/// Enters a private network and mount namespace (this process, for good),
/// mounts sysfs, adds the veth pair and runs `f` with the `class/net`
/// directory; unmounts afterwards. Needs root; the error says which step
/// failed.
pub fn with_veth<T>(f: impl FnOnce(&Path) -> Result<T, String>) -> Result<T, String> {
    use nix::mount::{mount, umount2, MntFlags, MsFlags};
    use nix::sched::{unshare, CloneFlags};
    unshare(CloneFlags::CLONE_NEWNET | CloneFlags::CLONE_NEWNS)
        .map_err(|e| format!("unshare: {e}"))?;
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_PRIVATE,
        None::<&str>,
    )
    .map_err(|e| format!("make / private: {e}"))?;
    let dir = nix::unistd::mkdtemp(&std::env::temp_dir().join("ev3sysfs-bench-XXXXXX"))
        .map_err(|e| format!("mkdtemp: {e}"))?;
    let result = mount(
        Some("sysfs"),
        &dir,
        Some("sysfs"),
        MsFlags::empty(),
        None::<&str>,
    )
    .map_err(|e| format!("mount sysfs: {e}"))
    .and_then(|()| {
        let status = Command::new("ip")
            .args([
                "link", "add", "ev3b0", "type", "veth", "peer", "name", "ev3b1",
            ])
            .status()
            .map_err(|e| format!("ip: {e}"))?;
        if !status.success() {
            return Err("ip link add failed".into());
        }
        f(&dir.join("class/net"))
    });
    let _ = umount2(&dir, MntFlags::MNT_DETACH);
    let _ = std::fs::remove_dir(&dir);
    result
}
