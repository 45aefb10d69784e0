//! The group that owns the simulated brick's files, as udev makes
//! `ev3dev` own a brick's.

/// The group of the simulated files: `$EV3SIM_GROUP` (a name or a number),
/// else the host's `ev3dev` group as on a brick, else the process's own
/// group (root's group 0 under `ev3-sim` as root).
pub(crate) fn brick_group() -> u32 {
    use nix::unistd::getegid;
    let by_name = |name: &str| {
        std::fs::read_to_string("/etc/group")
            .ok()
            .and_then(|file| gid_in(&file, name))
    };
    if let Ok(wanted) = std::env::var("EV3SIM_GROUP") {
        if let Some(gid) = wanted.parse().ok().or_else(|| by_name(&wanted)) {
            return gid;
        }
        log::warn!("EV3SIM_GROUP={wanted}: no such group");
    }
    by_name("ev3dev").unwrap_or_else(|| getegid().as_raw())
}

/// The id of group `name` in `group_file` (the text of `/etc/group`). Read
/// directly rather than by `getgrnam_r`: in a static glibc build (the
/// brick's glibc `ev3-probe`) NSS would load the build machine's modules at
/// run time; a brick's groups are all in `/etc/group`.
fn gid_in(group_file: &str, name: &str) -> Option<u32> {
    group_file.lines().find_map(|line| {
        let mut fields = line.split(':');
        if fields.next()? != name {
            return None;
        }
        fields.nth(1)?.parse().ok()
    })
}

#[cfg(test)]
mod tests {
    use super::gid_in;

    #[test]
    fn finds_a_group_by_name_only() {
        let file = "root:x:0:\nev3:x:7:\nev3dev:x:101:robot,pi\nbad:x:\n";
        assert_eq!(gid_in(file, "ev3dev"), Some(101));
        assert_eq!(gid_in(file, "root"), Some(0));
        assert_eq!(gid_in(file, "ev3d"), None);
        assert_eq!(gid_in(file, "bad"), None);
        assert_eq!(gid_in(file, "robot"), None);
        assert_eq!(gid_in("", "ev3dev"), None);
    }
}
