//! Helpers of the brick I/O tests (tests/brick_io.rs, tests/brick_io_sim.rs):
//! a counting allocator, framebuffer files, and one picture drawn on any
//! screen with the pixels it must have.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::fs;
use std::path::{Path, PathBuf};

use ev3sysfs::screen::{font, Color, Geometry, Screen};

struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn count() {
    if COUNTING.try_with(Cell::get).unwrap_or(false) {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
    }
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        System.alloc(layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        System.alloc_zeroed(layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        System.realloc(ptr, layout, new_size)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations made by `f` on this thread.
pub fn allocations_in(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.with(Cell::get);
    COUNTING.with(|c| c.set(true));
    f();
    COUNTING.with(|c| c.set(false));
    ALLOCATIONS.with(Cell::get) - before
}

/// A framebuffer file and its sysfs attributes, as the kernel shows them.
pub fn framebuffer_files(dir: &Path, geometry: Geometry) -> (PathBuf, PathBuf) {
    let sysfs = dir.join("class/graphics/fb0");
    fs::create_dir_all(&sysfs).unwrap();
    let g = geometry;
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
    fs::write(&fb, vec![0x5a; g.size()]).unwrap();
    (fb, sysfs)
}

/// The pixels of `text` drawn by the font at (x, y), as the test expects
/// them from the glyph rows (not from the screen code).
pub fn expected_text_pixels(x: i32, y: i32, text: &str) -> Vec<(i32, i32)> {
    let mut out = Vec::new();
    for (i, c) in text.chars().enumerate() {
        let rows = font::glyph(c);
        for (gy, row) in rows.iter().enumerate() {
            for gx in 0..5 {
                if row & (0b10000 >> gx) != 0 {
                    out.push((x + 6 * i as i32 + gx, y + gy as i32));
                }
            }
        }
    }
    out
}

pub fn black_pixels(screen: &Screen) -> Vec<(i32, i32)> {
    let mut out = Vec::new();
    for y in 0..screen.height() {
        for x in 0..screen.width() {
            if screen.pixel(x, y) == Some(Color::Black) {
                out.push((x, y));
            }
        }
    }
    out
}

/// Draws the same picture on any screen; returns the black pixels the
/// picture must have.
pub fn draw_picture(screen: &mut Screen) -> Vec<(i32, i32)> {
    screen.clear(Color::White);
    screen.text(10, 20, "Hi", Color::Black);
    screen.fill_rect(100, 100, 3, 2, Color::Black);
    screen.rect(150, 10, 4, 3, Color::Black);
    screen.line(0, 127, 3, 124, Color::Black);
    let mut want = expected_text_pixels(10, 20, "Hi");
    for y in 100..102 {
        for x in 100..103 {
            want.push((x, y));
        }
    }
    for (x, y) in [
        (150, 10),
        (151, 10),
        (152, 10),
        (153, 10),
        (150, 11),
        (153, 11),
    ] {
        want.push((x, y));
    }
    for (x, y) in [(150, 12), (151, 12), (152, 12), (153, 12)] {
        want.push((x, y));
    }
    for i in 0..4 {
        want.push((i, 127 - i));
    }
    want.sort_by_key(|&(x, y)| (y, x));
    want.dedup();
    want
}
