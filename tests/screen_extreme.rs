//! The screen on hostile input (issues 18 and 22): drawing at extreme
//! coordinates neither overflows nor walks billions of off-screen pixels;
//! the geometry is bounded by the framebuffer's size and a sane maximum;
//! geometry files are opened without blocking (a FIFO) and read at most a
//! page (a huge regular file).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use common::TempDir;
use ev3sysfs::screen::{Color, Geometry, Screen};
use ev3sysfs::Error;

/// `graphics/fb0` attribute files for `g` and a framebuffer file of `fb_len`
/// bytes (sparse).
fn files(dir: &Path, g: Geometry, fb_len: u64) -> (PathBuf, PathBuf) {
    let sysfs = dir.join("fb0-sysfs");
    fs::create_dir_all(&sysfs).unwrap();
    fs::write(
        sysfs.join("virtual_size"),
        format!("{},{}\n", g.width, g.height),
    )
    .unwrap();
    fs::write(
        sysfs.join("bits_per_pixel"),
        format!("{}\n", g.bits_per_pixel),
    )
    .unwrap();
    fs::write(sysfs.join("stride"), format!("{}\n", g.stride)).unwrap();
    let fb = dir.join("fb0");
    fs::File::create(&fb).unwrap().set_len(fb_len).unwrap();
    (fb, sysfs)
}

/// The error of an open that must be refused (without printing a screen's
/// buffer, which can be huge, when it was not).
fn refused(opened: ev3sysfs::Result<Screen>) -> Error {
    match opened {
        Ok(screen) => panic!("opened with {:?}", screen.geometry()),
        Err(e) => e,
    }
}

/// Runs `f` in a thread; fails when it has not returned after `limit` (a
/// hang guard, not a benchmark).
fn within<R: Send + 'static>(
    limit: Duration,
    what: &str,
    f: impl FnOnce() -> R + Send + 'static,
) -> R {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(limit) {
        Ok(r) => r,
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{what}: still running after {limit:?}"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("{what}: panicked"),
    }
}

#[test]
fn drawing_at_extreme_coordinates_is_clipped_quickly() {
    for g in [Geometry::EV3_MONO, Geometry::EV3_XRGB] {
        let tmp = TempDir::new("fb-extreme");
        let (fb, _) = files(tmp.path(), g, g.size() as u64);
        let mut screen = Screen::with_geometry(&fb, g).unwrap();
        let screen = within(Duration::from_secs(20), "extreme drawing", move || {
            const MIN: i32 = i32::MIN;
            const MAX: i32 = i32::MAX;
            for (x0, y0, x1, y1) in [
                (MIN, MIN, MAX, MAX),
                (MAX, MIN, MIN, MAX),
                (MIN, 0, MAX, 0),
                (0, MIN, 0, MAX),
                (MAX, MAX, MAX, MAX),
                (MIN, 7, MIN, 7),
                (MIN, MAX, MAX, MIN),
                (-1_000_000_000, 1, 1_000_000_000, 3),
            ] {
                screen.line(x0, y0, x1, y1, Color::Black);
            }
            for (x, y, w, h) in [
                (MAX, MAX, MAX, MAX),
                (MIN, MIN, MAX, MAX),
                (MIN, MIN, MIN, MIN),
                (-5, -5, MAX, MAX),
                (MAX - 1, 0, 2, 2),
            ] {
                screen.rect(x, y, w, h, Color::White);
                screen.fill_rect(x, y, w, h, Color::White);
            }
            for (x, y) in [(MAX, MAX), (MIN, MIN), (MAX - 3, 0), (0, MAX - 3)] {
                screen.text(x, y, "Wide text\nand lines\n\n", Color::Black);
                screen.set_pixel(x, y, Color::Black);
                let _ = screen.pixel(x, y);
            }
            screen
        });
        // The last fill_rect from (-5, -5) covered the whole screen white;
        // nothing drawn after it was on screen.
        assert!(
            (0..screen.height())
                .all(|y| (0..screen.width()).all(|x| screen.pixel(x, y) == Some(Color::White))),
            "{}",
            screen.to_ascii()
        );
        // A horizontal line from far left to far right: exactly its row.
        let mut screen = screen;
        screen.line(-2_000_000_000, 5, 2_000_000_000, 5, Color::Black);
        for y in 0..screen.height() {
            for x in 0..screen.width() {
                let want = if y == 5 { Color::Black } else { Color::White };
                assert_eq!(screen.pixel(x, y), Some(want), "({x}, {y})");
            }
        }
    }
}

#[test]
fn geometry_is_bounded_by_the_framebuffer_and_a_sane_maximum() {
    let tmp = TempDir::new("fb-huge");
    let huge = Geometry {
        width: 4096,
        height: 4096,
        bits_per_pixel: 32,
        stride: 4096 * 4,
    };
    // sysfs claims 256 MiB on a framebuffer of the EV3's size.
    let (fb, sysfs) = files(tmp.path(), huge, Geometry::EV3_XRGB.size() as u64);
    let err = refused(Screen::open(&fb, &sysfs));
    assert!(matches!(err, Error::Unsupported { .. }), "{err}");
    let err = refused(Screen::with_geometry(&fb, huge));
    assert!(matches!(err, Error::Unsupported { .. }), "{err}");
    // Even a (sparse) framebuffer file that big: beyond the sane maximum.
    fs::File::options()
        .write(true)
        .open(&fb)
        .unwrap()
        .set_len(huge.size() as u64)
        .unwrap();
    let err = refused(Screen::open(&fb, &sysfs));
    assert!(matches!(err, Error::Unsupported { .. }), "{err}");
    // A framebuffer shorter than the image it claims.
    let (fb, sysfs) = files(tmp.path(), Geometry::EV3_MONO, 10);
    let err = refused(Screen::open(&fb, &sysfs));
    assert!(matches!(err, Error::Unsupported { .. }), "{err}");
    assert!(err.to_string().contains("framebuffer"), "{err}");
    // The EV3's own layouts still open.
    for g in [Geometry::EV3_MONO, Geometry::EV3_XRGB] {
        let (fb, sysfs) = files(tmp.path(), g, g.size() as u64);
        assert_eq!(Screen::open(&fb, &sysfs).unwrap().geometry(), g);
    }
}

#[test]
fn a_fifo_as_geometry_file_does_not_block() {
    let tmp = TempDir::new("fb-fifo");
    let g = Geometry::EV3_MONO;
    let (fb, sysfs) = files(tmp.path(), g, g.size() as u64);
    for name in ["virtual_size", "bits_per_pixel", "stride"] {
        let (fb, sysfs) = (fb.clone(), sysfs.clone());
        let saved = fs::read(sysfs.join(name)).unwrap();
        fs::remove_file(sysfs.join(name)).unwrap();
        nix::unistd::mkfifo(
            &sysfs.join(name),
            nix::sys::stat::Mode::from_bits_truncate(0o644),
        )
        .unwrap();
        let sysfs2 = sysfs.clone();
        let err = within(Duration::from_secs(10), name, move || {
            refused(Screen::open(&fb, &sysfs2))
        });
        assert!(err.to_string().contains(name), "{err}");
        fs::remove_file(sysfs.join(name)).unwrap();
        fs::write(sysfs.join(name), saved).unwrap();
    }
}

/// Bytes this process has read so far (`rchar` of /proc/self/io); `None`
/// on a kernel without I/O accounting (`CONFIG_TASK_IO_ACCOUNTING`).
fn bytes_read() -> Option<u64> {
    let io = fs::read_to_string("/proc/self/io").ok()?;
    io.lines()
        .find_map(|l| l.strip_prefix("rchar: "))
        .and_then(|n| n.parse().ok())
}

#[test]
fn a_huge_geometry_file_is_read_at_most_a_page() {
    let tmp = TempDir::new("fb-big-file");
    let g = Geometry::EV3_MONO;
    let (fb, sysfs) = files(tmp.path(), g, g.size() as u64);
    // 64 MiB (sparse): today's read_to_string read it whole (2.3 s).
    let size = sysfs.join("virtual_size");
    fs::write(&size, b"178,128").unwrap();
    fs::File::options()
        .write(true)
        .open(&size)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let before = bytes_read();
    let err = refused(Screen::open(&fb, &sysfs));
    let after = bytes_read();
    assert!(err.to_string().contains("virtual_size"), "{err}");
    let (Some(before), Some(after)) = (before, after) else {
        return common::skip("no /proc/self/io (a kernel without CONFIG_TASK_IO_ACCOUNTING): the bytes read are not counted");
    };
    let read = after - before;
    assert!(read < 1 << 20, "read {read} bytes of a 64 MiB file");
}
