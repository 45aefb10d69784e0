//! Real kernfs attributes as root: new network and mount namespaces and a
//! sysfs mounted in them. Shared by the tests (`tests/common`) and the
//! benches (`benches/common/kernfs.rs`).

use std::path::Path;

/// Moves the calling thread into new network and mount namespaces
/// (namespaces are per thread: no other thread moves) and makes every
/// mount private there, so nothing mounted later shows outside. Needs root.
pub fn enter_private_namespaces() -> Result<(), String> {
    use nix::mount::{mount, MsFlags};
    use nix::sched::{unshare, CloneFlags};
    unshare(CloneFlags::CLONE_NEWNET | CloneFlags::CLONE_NEWNS)
        .map_err(|e| format!("unshare(CLONE_NEWNET | CLONE_NEWNS): {e}"))?;
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_PRIVATE,
        None::<&str>,
    )
    .map_err(|e| format!("make / private in the new mount namespace: {e}"))
}

/// Mounts a sysfs on `dir`: mounted in a new network namespace, it shows
/// that namespace's network devices.
pub fn mount_sysfs(dir: &Path) -> Result<(), String> {
    use nix::mount::{mount, MsFlags};
    mount(
        Some("sysfs"),
        dir,
        Some("sysfs"),
        MsFlags::empty(),
        None::<&str>,
    )
    .map_err(|e| format!("mount sysfs on {}: {e}", dir.display()))
}
