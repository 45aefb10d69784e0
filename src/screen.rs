//! The brick's screen: the 178x128 monochrome LCD as framebuffer `/dev/fb0`.
//!
//! [`Screen`] draws into a buffer in memory (clear, pixels, lines,
//! rectangles, text in a built-in 5x7 font) and [`Screen::show`] copies the
//! whole buffer into the framebuffer, mapped `MAP_SHARED` when the screen
//! opens: ev3dev-stretch's display driver (DRM with fbdev emulation)
//! refreshes the LCD only from writes through such a mapping, and plain
//! `write`s leave the screen blank. Where the framebuffer is not a device
//! (the simulated brick's file, a test's file), `show` is **one** `pwrite`
//! ([`Screen::is_mapped`] says which). The geometry comes
//! from sysfs, `graphics/fb0/{virtual_size,bits_per_pixel,stride}`, so both
//! layouts work:
//!
//! * 1 bit per pixel (ev3dev-jessie's `st7586fb`): 24 bytes a row, bit set =
//!   black, the leftmost pixel in the lowest bit (what python-ev3dev writes
//!   with PIL's `"1;IR"`);
//! * 32 bits per pixel (the DRM `st7586` driver of newer kernels,
//!   `XRGB8888`): 712 bytes a row, white `0xffffffff`, black 0.
//!
//! Both paths are runtime values: [`Screen::open_default`] uses
//! [`crate::input::default_dev_root`] (`$EV3SYSFS_DEV`) for `fb0` and
//! [`crate::default_root`] (`$EV3SYSFS_ROOT`) for `graphics/fb0`.
//!
//! On a brick, brickman owns the screen while it shows its menu: run
//! programs from brickman (or stop it) to see them draw.
//!
//! ```
//! use ev3sysfs::screen::{Color, Screen, FRAMEBUFFER_DEVICE};
//!
//! fn main() -> ev3sysfs::Result<()> {
//!     # // Not a brick (nor $EV3SYSFS_DEV): no framebuffer to draw on.
//!     # if !ev3sysfs::input::default_dev_root().join(FRAMEBUFFER_DEVICE).exists() { return Ok(()); }
//!     let mut screen = Screen::open_default()?;
//!     screen.clear(Color::White);
//!     screen.rect(0, 0, screen.width(), screen.height(), Color::Black);
//!     screen.line(0, 0, 177, 127, Color::Black);
//!     screen.fill_rect(70, 50, 38, 28, Color::Black);
//!     screen.text(4, 4, "Hello, EV3!", Color::Black);
//!     screen.show()?; // the whole buffer into the mapped framebuffer
//!     Ok(())
//! }
//! ```

pub mod font;
mod geometry;

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::error::{Error, Operation, Result};
use font::{glyph_pixel, CELL_HEIGHT, CELL_WIDTH, GLYPH_HEIGHT, GLYPH_WIDTH};
pub use geometry::Geometry;

/// The framebuffer device, relative to `/dev`.
pub const FRAMEBUFFER_DEVICE: &str = "fb0";
/// The framebuffer's sysfs directory, relative to `/sys/class`.
pub const FRAMEBUFFER_SYSFS: &str = "graphics/fb0";
/// The largest image a [`Screen`] draws (`stride * height`): 1 MiB, more
/// than ten times the EV3's 91 KiB at 32 bits per pixel, and what a 64 MB
/// brick can spare. A geometry beyond it is refused, as is one larger than
/// the framebuffer itself.
pub const MAX_IMAGE_BYTES: usize = 1 << 20;

/// A pixel's colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Color {
    /// Background, pixel off.
    #[default]
    White,
    /// Pixel on.
    Black,
}

/// Checks that the framebuffer holds `size` bytes, before a buffer of that
/// size is allocated: a regular file by its length, a device by reading
/// its last byte (fbdev's read ends at the framebuffer's memory).
fn holds(file: &File, path: &Path, size: usize) -> Result<()> {
    let io_error = |e| Error::from_io(path, Operation::Open, None, e);
    let metadata = file.metadata().map_err(io_error)?;
    let enough = if metadata.is_file() {
        metadata.len() >= size as u64
    } else {
        let last = size.saturating_sub(1) as u64;
        file.read_at(&mut [0u8; 1], last).map_err(io_error)? == 1
    };
    if enough {
        return Ok(());
    }
    Err(Error::Unsupported {
        path: path.to_path_buf(),
        operation: Operation::Open,
        source: io::Error::other(format!(
            "the framebuffer is shorter than the {size} bytes of the image its geometry claims"
        )),
    })
}

/// The screen: an open framebuffer and the image being drawn.
#[derive(Debug)]
pub struct Screen {
    file: File,
    path: PathBuf,
    geometry: Geometry,
    buffer: Vec<u8>,
    /// The framebuffer mapped shared, when it can be.
    mapping: Option<crate::sys::SharedMapping>,
}

impl Screen {
    /// Opens the framebuffer device `framebuffer` (read-write) with the
    /// geometry in the sysfs directory `sysfs_dir`, and maps it shared
    /// (`stride * height` bytes). The image starts white; nothing is
    /// written until [`Screen::show`].
    ///
    /// # Errors
    /// As [`Geometry::from_sysfs`]; open errors of the device
    /// ([`Error::PermissionDenied`]: on a brick, the `video` group).
    pub fn open(framebuffer: impl Into<PathBuf>, sysfs_dir: impl AsRef<Path>) -> Result<Screen> {
        let geometry = Geometry::from_sysfs(sysfs_dir)?;
        Screen::with_geometry(framebuffer, geometry)
    }

    /// Opens [`FRAMEBUFFER_DEVICE`] under [`crate::input::default_dev_root`]
    /// with the geometry in [`FRAMEBUFFER_SYSFS`] under
    /// [`crate::default_root`].
    ///
    /// # Errors
    /// As [`Screen::open`].
    pub fn open_default() -> Result<Screen> {
        Screen::open(
            crate::input::default_dev_root().join(FRAMEBUFFER_DEVICE),
            crate::default_root().join(FRAMEBUFFER_SYSFS),
        )
    }

    /// Opens `framebuffer` with a known geometry (no sysfs).
    ///
    /// # Errors
    /// Open errors; [`Error::Unsupported`] for a geometry this module cannot
    /// draw or one larger than the framebuffer.
    pub fn with_geometry(framebuffer: impl Into<PathBuf>, geometry: Geometry) -> Result<Screen> {
        let path = framebuffer.into();
        geometry.check(&path)?;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_CLOEXEC)
            .open(&path)
            .map_err(|e| Error::from_io(&path, Operation::Open, None, e))?;
        holds(&file, &path, geometry.size())?;
        // A framebuffer device maps (fb_mmap); a regular file (the
        // simulated brick's, a test's) is not mapped: `show` writes.
        let mapping = match crate::sys::SharedMapping::new(&file, geometry.size()) {
            Ok(mapping) => Some(mapping),
            Err(e) => {
                log::debug!("{}: not mapped ({e}): show() writes", path.display());
                None
            }
        };
        let mut screen = Screen {
            file,
            path,
            geometry,
            buffer: vec![0; geometry.size()],
            mapping,
        };
        screen.clear(Color::White);
        Ok(screen)
    }

    /// The framebuffer's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The layout.
    pub fn geometry(&self) -> Geometry {
        self.geometry
    }

    /// Pixels per row.
    pub fn width(&self) -> i32 {
        self.geometry.width as i32
    }

    /// Rows.
    pub fn height(&self) -> i32 {
        self.geometry.height as i32
    }

    /// The image as the framebuffer stores it (`stride * height` bytes).
    pub fn buffer(&self) -> &[u8] {
        &self.buffer
    }

    /// `true` when the framebuffer is mapped: [`Screen::show`] copies into
    /// the mapping (no syscall) instead of writing.
    pub fn is_mapped(&self) -> bool {
        self.mapping.is_some()
    }

    /// Puts the whole image on the framebuffer, nothing allocated: a copy
    /// into the shared mapping (no syscall; the display driver sees the
    /// written pages), or, where the framebuffer is not mapped, one `pwrite`
    /// at offset 0.
    ///
    /// # Errors
    /// The write's error; a short write is [`Error::Io`]. A copy into the
    /// mapping cannot fail.
    pub fn show(&self) -> Result<()> {
        if let Some(mapping) = &self.mapping {
            mapping.store(&self.buffer);
            return Ok(());
        }
        match self.file.write_at(&self.buffer, 0) {
            Ok(n) if n == self.buffer.len() => Ok(()),
            Ok(n) => Err(self.io_error(
                Operation::Write,
                io::Error::other(format!("short write: {n} of {} bytes", self.buffer.len())),
            )),
            Err(e) => Err(self.io_error(Operation::Write, e)),
        }
    }

    /// Reads the framebuffer's current image into the buffer (a copy from
    /// the mapping, or one `pread`), e.g. to look at what another program
    /// drew.
    ///
    /// # Errors
    /// The read's error; a short read is [`Error::Io`].
    pub fn load(&mut self) -> Result<()> {
        if let Some(mapping) = &self.mapping {
            mapping.load(&mut self.buffer);
            return Ok(());
        }
        match self.file.read_at(&mut self.buffer, 0) {
            Ok(n) if n == self.buffer.len() => Ok(()),
            Ok(n) => Err(self.io_error(
                Operation::Read,
                io::Error::other(format!("short read: {n} of {} bytes", self.buffer.len())),
            )),
            Err(e) => Err(self.io_error(Operation::Read, e)),
        }
    }

    fn io_error(&self, operation: Operation, e: io::Error) -> Error {
        Error::from_io(&self.path, operation, None, e)
    }

    /// Fills the whole image with `color`.
    pub fn clear(&mut self, color: Color) {
        let byte = match (self.geometry.bits_per_pixel, color) {
            (1, Color::Black) => 0xff,
            (1, Color::White) => 0x00,
            (_, Color::White) => 0xff,
            (_, Color::Black) => 0x00,
        };
        self.buffer.fill(byte);
    }

    fn index(&self, x: i32, y: i32) -> Option<(usize, usize)> {
        if x < 0 || y < 0 || x >= self.width() || y >= self.height() {
            return None;
        }
        let row = y as usize * self.geometry.stride as usize;
        Some((row, x as usize))
    }

    /// Sets one pixel; pixels outside the screen are ignored.
    pub fn set_pixel(&mut self, x: i32, y: i32, color: Color) {
        let Some((row, x)) = self.index(x, y) else {
            return;
        };
        if self.geometry.bits_per_pixel == 1 {
            let (byte, bit) = (row + x / 8, 1u8 << (x % 8));
            match color {
                Color::Black => self.buffer[byte] |= bit,
                Color::White => self.buffer[byte] &= !bit,
            }
        } else {
            let at = row + x * 4;
            let value = match color {
                Color::White => 0xff,
                Color::Black => 0x00,
            };
            self.buffer[at..at + 4].fill(value);
        }
    }

    /// The colour of a pixel in the buffer; `None` outside the screen. On
    /// 32 bits per pixel, dark pixels (mean of R, G, B below 128) are black.
    pub fn pixel(&self, x: i32, y: i32) -> Option<Color> {
        let (row, x) = self.index(x, y)?;
        let black = if self.geometry.bits_per_pixel == 1 {
            self.buffer[row + x / 8] & (1 << (x % 8)) != 0
        } else {
            // XRGB8888, little endian: B, G, R, X.
            let at = row + x * 4;
            let sum: u32 = self.buffer[at..at + 3].iter().map(|&b| u32::from(b)).sum();
            sum < 3 * 128
        };
        Some(if black { Color::Black } else { Color::White })
    }

    /// A straight line from (x0, y0) to (x1, y1), both ends included
    /// (Bresenham, integers only). Only the part on the screen is walked,
    /// however far away the ends are.
    pub fn line(&mut self, x0: i32, y0: i32, x1: i32, y1: i32, color: Color) {
        self.wide_line(
            [i64::from(x0), i64::from(y0)],
            [i64::from(x1), i64::from(y1)],
            color,
        );
    }

    fn wide_line(&mut self, from: [i64; 2], to: [i64; 2], color: Color) {
        let size = [i64::from(self.width()), i64::from(self.height())];
        line_points(from, to, size, |x, y| {
            // On the screen (line_points clips): both fit in i32.
            self.set_pixel(x as i32, y as i32, color);
        });
    }

    /// The outline of the `width` x `height` rectangle whose top left pixel
    /// is (x, y). Nothing for an empty size.
    pub fn rect(&mut self, x: i32, y: i32, width: i32, height: i32, color: Color) {
        if width <= 0 || height <= 0 {
            return;
        }
        let (x, y) = (i64::from(x), i64::from(y));
        let (right, bottom) = (x + i64::from(width) - 1, y + i64::from(height) - 1);
        self.wide_line([x, y], [right, y], color);
        self.wide_line([x, bottom], [right, bottom], color);
        self.wide_line([x, y], [x, bottom], color);
        self.wide_line([right, y], [right, bottom], color);
    }

    /// The filled `width` x `height` rectangle whose top left pixel is
    /// (x, y), clipped to the screen.
    pub fn fill_rect(&mut self, x: i32, y: i32, width: i32, height: i32, color: Color) {
        let (x0, y0) = (x.max(0), y.max(0));
        let x1 = x.saturating_add(width).min(self.width());
        let y1 = y.saturating_add(height).min(self.height());
        for py in y0..y1 {
            for px in x0..x1 {
                self.set_pixel(px, py, color);
            }
        }
    }

    /// Draws `text` in the built-in 5x7 font ([`font`]), its first
    /// character's top left at (x, y), 6 pixels per character and 8 per
    /// line (`\n` starts a new line at `x`). Only the glyphs' pixels are
    /// drawn: the background stays. Returns the x after the last character.
    pub fn text(&mut self, x: i32, y: i32, text: &str, color: Color) -> i32 {
        let (mut cx, mut cy) = (x, y);
        for c in text.chars() {
            if c == '\n' {
                cx = x;
                cy = cy.saturating_add(CELL_HEIGHT);
                continue;
            }
            // Only glyphs that reach the screen are drawn (so cx + gx and
            // cy + gy cannot overflow).
            let visible = (-GLYPH_WIDTH + 1..self.width()).contains(&cx)
                && (-GLYPH_HEIGHT + 1..self.height()).contains(&cy);
            if visible {
                for gy in 0..GLYPH_HEIGHT {
                    for gx in 0..GLYPH_WIDTH {
                        if glyph_pixel(c, gx, gy) {
                            self.set_pixel(cx + gx, cy + gy, color);
                        }
                    }
                }
            }
            cx = cx.saturating_add(CELL_WIDTH);
        }
        cx
    }

    /// The image as a binary PBM (`P4`) file: view it, or compare it in a
    /// test. Allocates; not for the hot path.
    pub fn to_pbm(&self) -> Vec<u8> {
        let (w, h) = (self.width(), self.height());
        let mut out = format!("P4\n{w} {h}\n").into_bytes();
        for y in 0..h {
            let mut byte = 0u8;
            for x in 0..w {
                if self.pixel(x, y) == Some(Color::Black) {
                    byte |= 0x80 >> (x % 8);
                }
                if x % 8 == 7 || x == w - 1 {
                    out.push(byte);
                    byte = 0;
                }
            }
        }
        out
    }

    /// The image as text, one line per row, `#` for black and `.` for
    /// white: for test failures and terminals.
    pub fn to_ascii(&self) -> String {
        let mut out = String::with_capacity((self.width() as usize + 1) * self.height() as usize);
        for y in 0..self.height() {
            for x in 0..self.width() {
                out.push(if self.pixel(x, y) == Some(Color::Black) {
                    '#'
                } else {
                    '.'
                });
            }
            out.push('\n');
        }
        out
    }
}

/// Calls `plot` for each pixel of the line from `from` to `to` (both ends
/// included) inside a `size[0]` x `size[1]` screen: the pixels of
/// Bresenham's error-term loop, in closed form so that only the steps on
/// the screen are visited (at most `max(size)` of them, wherever the ends
/// are).
///
/// With `n` = the longer axis's extent and `d` the shorter's, step `k`
/// (0..=n) is at `a0 + sa * k` on the longer axis and at `b0 + sb *
/// floor((2kd + n) / 2n)` on the shorter one: the error term of the loop
/// stays in a window `n` wide, so this count of minor steps is the only one
/// it allows (checked against the loop in the tests).
pub(crate) fn line_points(
    from: [i64; 2],
    to: [i64; 2],
    size: [i64; 2],
    mut plot: impl FnMut(i64, i64),
) {
    let on_screen = |x: i64, y: i64| (0..size[0]).contains(&x) && (0..size[1]).contains(&y);
    let (dx, dy) = ((to[0] - from[0]).abs(), (to[1] - from[1]).abs());
    // The longer axis: 0 (x) or 1 (y).
    let major = usize::from(dy > dx);
    let minor = 1 - major;
    let n = (to[major] - from[major]).abs();
    let d = (to[minor] - from[minor]).abs();
    if n == 0 {
        if on_screen(from[0], from[1]) {
            plot(from[0], from[1]);
        }
        return;
    }
    let sa = if from[major] < to[major] { 1 } else { -1 };
    let sb = if from[minor] < to[minor] { 1 } else { -1 };
    // The steps whose major coordinate is on the screen.
    let a0 = from[major];
    let last = size[major] - 1;
    let (first_k, last_k) = if sa > 0 {
        (-a0, last - a0)
    } else {
        (a0 - last, a0)
    };
    let (first_k, last_k) = (first_k.max(0), last_k.min(n));
    let (n128, d128) = (i128::from(n), i128::from(d));
    for k in first_k..=last_k {
        let steps = (2 * i128::from(k) * d128 + n128) / (2 * n128);
        // steps <= d: fits in i64.
        let b = from[minor] + sb * steps as i64;
        let a = a0 + sa * k;
        let (x, y) = if major == 0 { (a, b) } else { (b, a) };
        if on_screen(x, y) {
            plot(x, y);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The error-term loop, walking every step.
    fn reference(x0: i64, y0: i64, x1: i64, y1: i64) -> Vec<(i64, i64)> {
        let (mut x, mut y) = (x0, y0);
        let dx = (x1 - x0).abs();
        let dy = -(y1 - y0).abs();
        let sx = if x0 < x1 { 1 } else { -1 };
        let sy = if y0 < y1 { 1 } else { -1 };
        let mut err = dx + dy;
        let mut out = Vec::new();
        loop {
            out.push((x, y));
            if x == x1 && y == y1 {
                return out;
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

    #[test]
    fn closed_form_lines_are_the_error_term_loops_pixels() {
        let size = [40, 30];
        // A small linear congruential generator: no dependency, the same
        // lines every run.
        let mut seed = 0x2545_f491_u64;
        let mut next = |range: i64| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            ((seed >> 33) as i64).rem_euclid(range) - range / 3
        };
        let runs = if cfg!(miri) { 50 } else { 5_000 };
        for _ in 0..runs {
            let (x0, y0, x1, y1) = (next(90), next(70), next(90), next(70));
            let want: Vec<(i64, i64)> = reference(x0, y0, x1, y1)
                .into_iter()
                .filter(|&(x, y)| (0..size[0]).contains(&x) && (0..size[1]).contains(&y))
                .collect();
            let mut got = Vec::new();
            line_points([x0, y0], [x1, y1], size, |x, y| got.push((x, y)));
            assert_eq!(got, want, "({x0}, {y0}) to ({x1}, {y1})");
        }
    }

    #[test]
    fn far_away_lines_visit_only_the_screen() {
        let mut count = 0;
        let (min, max) = (i64::from(i32::MIN), i64::from(i32::MAX));
        line_points([min, 5], [max, 5], [178, 128], |_, y| {
            assert_eq!(y, 5);
            count += 1;
        });
        assert_eq!(count, 178);
        line_points([min, min], [max, max], [178, 128], |x, y| {
            assert_eq!(x, y);
        });
    }
}
