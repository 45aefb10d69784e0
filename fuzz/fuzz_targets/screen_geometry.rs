//! The framebuffer geometry from sysfs: any bytes in `virtual_size`,
//! `bits_per_pixel` and `stride` either give a geometry the screen can
//! draw (within MAX_IMAGE_BYTES) or an error; never a panic.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use ev3sysfs::screen::{Geometry, MAX_IMAGE_BYTES};
use libfuzzer_sys::fuzz_target;

fn dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir =
            std::env::temp_dir().join(format!("ev3sysfs-fuzz-geometry-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    })
}

fuzz_target!(|files: (Vec<u8>, Vec<u8>, Vec<u8>)| {
    let dir = dir();
    let (size, bpp, stride) = files;
    for (name, bytes) in [
        ("virtual_size", &size),
        ("bits_per_pixel", &bpp),
        ("stride", &stride),
    ] {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    if let Ok(g) = Geometry::from_sysfs(dir) {
        assert!(matches!(g.bits_per_pixel, 1 | 32), "{g:?}");
        assert!(g.width >= 1 && g.height >= 1, "{g:?}");
        assert!(u64::from(g.stride) * 8 >= u64::from(g.width) * u64::from(g.bits_per_pixel));
        assert!(g.size() <= MAX_IMAGE_BYTES, "{g:?}");
    }
});
