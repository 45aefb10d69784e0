//! The screen's drawing at any coordinates, on both layouts: no panic, no
//! overflow, no walk of off-screen pixels (each call is bounded by the
//! screen's size), padding bits never set, and lines exactly the pixels of
//! Bresenham's error-term loop wherever their ends are.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use ev3sysfs::screen::{Color, Geometry, Screen};
use libfuzzer_sys::fuzz_target;

/// One framebuffer file per layout, made once per process.
fn framebuffer(g: Geometry) -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    let dir = DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("ev3sysfs-fuzz-screen-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    });
    let path = dir.join(format!("fb-{}", g.bits_per_pixel));
    if !path.exists() {
        std::fs::write(&path, vec![0u8; g.size()]).unwrap();
    }
    path
}

/// The error-term loop over every step, for ends near the screen.
fn reference_line(screen: &mut Screen, x0: i32, y0: i32, x1: i32, y1: i32, color: Color) {
    let (mut x, mut y) = (x0, y0);
    let dx = (x1 - x0).abs();
    let dy = -(y1 - y0).abs();
    let sx = if x0 < x1 { 1 } else { -1 };
    let sy = if y0 < y1 { 1 } else { -1 };
    let mut err = dx + dy;
    loop {
        screen.set_pixel(x, y, color);
        if x == x1 && y == y1 {
            return;
        }
        let e2 = 2 * err;
        if e2 >= dy {
            err += dy;
            x += sx;
        }
        if e2 <= dx {
            err += dx;
            y += sy;
        }
    }
}

fuzz_target!(|input: (bool, Vec<(u8, i32, i32, i32, i32)>, String)| {
    let (xrgb, ops, text) = input;
    let g = if xrgb {
        Geometry::EV3_XRGB
    } else {
        Geometry::EV3_MONO
    };
    let fb = framebuffer(g);
    let blank = || Screen::with_geometry(&fb, g).unwrap();
    let mut screen = blank();
    let mut padding_filled = false;
    for (op, a, b, c, d) in ops.into_iter().take(64) {
        let color = if op & 0x80 == 0 {
            Color::Black
        } else {
            Color::White
        };
        match op & 0x7f {
            0 => screen.set_pixel(a, b, color),
            1 | 2 => {
                screen.line(a, b, c, d, color);
                // Near the screen: the same pixels as the loop.
                let near = |v: i32| v.clamp(-300, 500);
                let (a, b, c, d) = (near(a), near(b), near(c), near(d));
                let (mut fast, mut slow) = (blank(), blank());
                fast.line(a, b, c, d, Color::Black);
                reference_line(&mut slow, a, b, c, d, Color::Black);
                assert_eq!(fast.buffer(), slow.buffer(), "({a}, {b}) to ({c}, {d})");
            }
            3 => screen.rect(a, b, c, d, color),
            4 => screen.fill_rect(a, b, c, d, color),
            5 => {
                let _ = screen.text(a, b, &text, color);
            }
            6 => {
                screen.clear(color);
                // A black 1-bit clear fills whole bytes, padding included.
                padding_filled = color == Color::Black;
            }
            _ => {
                let _ = screen.pixel(a, b);
            }
        }
    }
    // Inside the frame every pixel has a colour; outside none.
    assert!(screen
        .pixel(g.width as i32 - 1, g.height as i32 - 1)
        .is_some());
    assert!(screen.pixel(g.width as i32, 0).is_none());
    assert!(screen.pixel(-1, 0).is_none());
    if !xrgb && !padding_filled {
        // Bits 178..191 of each 24-byte row are padding: never drawn.
        for row in screen.buffer().chunks(g.stride as usize) {
            assert_eq!(row[22] & 0b1111_1100, 0);
            assert_eq!(row[23], 0);
        }
    }
});
