//! Real kernfs for the benches, as root: a private network and mount
//! namespace, sysfs mounted on a temporary directory, a veth pair
//! `ev3b0`/`ev3b1` whose `mtu` attributes are real sysfs attributes.

use std::path::Path;
use std::process::Command;

#[path = "../../tests/common/netns.rs"]
mod netns;

/// Enters a private network and mount namespace (this process, for good),
/// mounts sysfs, adds the veth pair and runs `f` with the `class/net`
/// directory; unmounts afterwards. Needs root; the error says which step
/// failed.
pub fn with_veth<T>(f: impl FnOnce(&Path) -> Result<T, String>) -> Result<T, String> {
    use nix::mount::{umount2, MntFlags};
    netns::enter_private_namespaces()?;
    let dir = nix::unistd::mkdtemp(&std::env::temp_dir().join("ev3sysfs-bench-XXXXXX"))
        .map_err(|e| format!("mkdtemp: {e}"))?;
    let result = netns::mount_sysfs(&dir).and_then(|()| {
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
