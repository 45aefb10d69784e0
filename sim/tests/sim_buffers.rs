//! The simulated brick is a server: what clients write is not kept without
//! bound (issue 18). 400 refused 1 MiB writes grew `ev3-sim` from 3 MB to
//! 413 MB: every store's bytes were journaled whole. Skips (with a reason)
//! where no simulated brick can be mounted.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../../tests/common/mod.rs"]
mod common;

use std::fs::OpenOptions;
use std::os::unix::fs::FileExt;

use ev3sysfs_sim::TachoDriver;

/// This process's resident set, in KiB (`VmRSS` of /proc/self/status).
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn refused_big_writes_are_not_kept() {
    let Some(tree) = common::brick() else {
        return;
    };
    let motor = tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    let path = tree
        .root()
        .join("tacho-motor")
        .join(motor.name())
        .join("speed_sp");
    let file = OpenOptions::new().write(true).open(&path).unwrap();
    let big = vec![b'7'; 1 << 20];
    let before = rss_kib();
    let mut refused = 0;
    for _ in 0..400 {
        if file.write_at(&big, 0).is_err() {
            refused += 1;
        }
    }
    let grown_mib = rss_kib().saturating_sub(before) / 1024;
    let stores = tree.take_stores();
    let kept: usize = stores.iter().map(|(_, bytes)| bytes.len()).sum();
    println!(
        "400 writes of 1 MiB ({refused} refused): RSS grew {grown_mib} MiB; the store journal \
         keeps {} stores, {kept} bytes",
        stores.len()
    );
    assert_eq!(refused, 400, "a 1 MiB speed_sp is refused");
    // The journal keeps at most a page of each store, and a bounded total.
    assert!(
        stores.iter().all(|(_, bytes)| bytes.len() <= 4096),
        "a store kept whole"
    );
    assert!(kept <= 1 << 20, "journal holds {kept} bytes");
    assert!(grown_mib < 64, "RSS grew {grown_mib} MiB");
}

#[test]
fn a_beeper_client_writing_for_ever_is_bounded() {
    use ev3sysfs::input::{InputEvent, EV_SND, SND_TONE};
    use ev3sysfs::screen::Geometry;
    use ev3sysfs_sim::SimulatedIo;
    let tmp = common::TempDir::new("sim-tones");
    let sim = match SimulatedIo::mount(tmp.path().join("dev"), Geometry::EV3_MONO) {
        Ok(sim) => sim,
        Err(e) => return common::skip(&format!("the simulated devices need FUSE: {e}")),
    };
    let beeper = OpenOptions::new()
        .write(true)
        .open(sim.beeper_path())
        .unwrap();
    let chunk: Vec<u8> = (0..10_000)
        .flat_map(|i| InputEvent::new(EV_SND, SND_TONE, 100 + i % 1000).to_bytes())
        .collect();
    for _ in 0..20 {
        use std::io::Write;
        (&beeper).write_all(&chunk).unwrap();
    }
    let tones = sim.tones().len();
    println!("200,000 tone events written: {tones} kept");
    assert!(tones <= 65_536, "{tones} tones kept");
}
