//! A simulated brick dropped just after its files were closed serves their
//! `RELEASE`s before it unmounts. Closing a file sends the kernel's
//! `RELEASE` in the background; a brick unmounted before serving it answered
//! into a connection already gone, and fuser logged "Failed to send FUSE
//! reply: No such file or directory" at error level (seen at the end of about
//! one `ev3-probe` run in twenty). This test counts fuser's error records
//! over many bricks, each dropped right after its files were closed, and
//! the same for the simulated brick's device files (buttons, beeper).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../tests/common/mod.rs"]
mod common;

use std::io::Read;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use ev3sysfs::screen::Geometry;
use ev3sysfs_sim::{SimulatedIo, TachoDriver};

/// Counts the error records of fuser (every other record is dropped).
struct CountErrors;

impl log::Log for CountErrors {
    fn enabled(&self, metadata: &log::Metadata) -> bool {
        metadata.level() == log::Level::Error
    }
    fn log(&self, record: &log::Record) {
        if record.level() == log::Level::Error && record.target().starts_with("fuser") {
            ERRORS.fetch_add(1, Ordering::Relaxed);
            eprintln!("{}: {}", record.target(), record.args());
        }
    }
    fn flush(&self) {}
}

static ERRORS: AtomicUsize = AtomicUsize::new(0);
static LOGGER: CountErrors = CountErrors;

/// The tests share the counter: one at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Installs the counting logger (once) and zeroes the count.
fn count_errors() -> std::sync::MutexGuard<'static, ()> {
    let turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if log::set_logger(&LOGGER).is_ok() {
        log::set_max_level(log::LevelFilter::Error);
    }
    ERRORS.store(0, Ordering::Relaxed);
    turn
}

/// Fails when fuser logged an error since [`count_errors`].
fn assert_no_failed_replies() {
    assert_eq!(
        ERRORS.load(Ordering::Relaxed),
        0,
        "fuser failed to send replies (see above): files' RELEASEs answered after the unmount"
    );
}

/// How many bricks each test drops: `EV3SYSFS_RELEASE_RUNS`, else 200.
fn bricks() -> usize {
    common::repetitions("EV3SYSFS_RELEASE_RUNS", 200)
}

#[test]
fn files_closed_just_before_the_drop_are_released_before_the_unmount() {
    let _turn = count_errors();
    for _ in 0..bricks() {
        let Some(tree) = common::brick() else {
            return;
        };
        let motor = tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
        // Like the probe's last moments: a few attribute files read, then
        // closed, then the brick dropped at once.
        for attr in ["position", "speed", "state", "duty_cycle", "count_per_rot"] {
            let mut file = std::fs::File::open(motor.path().join(attr)).unwrap();
            let mut text = String::new();
            file.read_to_string(&mut text).unwrap();
        }
        drop(tree);
    }
    assert_no_failed_replies();
}

#[test]
fn device_files_closed_just_before_the_drop_are_released_before_the_unmount() {
    let _turn = count_errors();
    for _ in 0..bricks() {
        let tmp = common::TempDir::new("release-dev");
        let io = match SimulatedIo::mount(tmp.path().join("dev"), Geometry::EV3_MONO) {
            Ok(io) => io,
            Err(e) => return common::skip(&format!("no simulated devices: {e}")),
        };
        drop(std::fs::File::open(io.buttons_path()).unwrap());
        drop(
            std::fs::OpenOptions::new()
                .write(true)
                .open(io.beeper_path())
                .unwrap(),
        );
        drop(io);
    }
    assert_no_failed_replies();
}
