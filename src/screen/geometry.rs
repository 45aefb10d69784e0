//! The framebuffer's layout ([`Geometry`]): size, bits per pixel and
//! stride, read from sysfs and checked against what a
//! [`Screen`](super::Screen) draws.

use std::io;
use std::path::{Path, PathBuf};

use super::MAX_IMAGE_BYTES;
use crate::error::{Error, Operation, Result};

/// The framebuffer's layout, as sysfs reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Geometry {
    /// Pixels per row (`virtual_size`, first number).
    pub width: u32,
    /// Rows (`virtual_size`, second number).
    pub height: u32,
    /// 1 or 32.
    pub bits_per_pixel: u32,
    /// Bytes per row (`stride`).
    pub stride: u32,
}

impl Geometry {
    /// The EV3's screen with 1 bit per pixel.
    pub const EV3_MONO: Geometry = Geometry {
        width: 178,
        height: 128,
        bits_per_pixel: 1,
        stride: 24,
    };
    /// The EV3's screen with 32 bits per pixel (`XRGB8888`).
    pub const EV3_XRGB: Geometry = Geometry {
        width: 178,
        height: 128,
        bits_per_pixel: 32,
        stride: 178 * 4,
    };

    /// Reads `virtual_size`, `bits_per_pixel` and `stride` in a sysfs
    /// framebuffer directory (e.g. `/sys/class/graphics/fb0`). Each is
    /// opened without blocking and read only when it is a regular file of
    /// at most a page (as sysfs shows): a FIFO or a huge file is an error.
    ///
    /// # Errors
    /// Open and read errors, [`Error::Parse`] for unexpected contents,
    /// [`Error::Unsupported`] for layouts other than 1 and 32 bits per pixel
    /// or a stride too short for the width.
    pub fn from_sysfs(dir: impl AsRef<Path>) -> Result<Geometry> {
        let dir = dir.as_ref();
        let read = |name: &str| -> Result<(PathBuf, String)> {
            let path = dir.join(name);
            let bytes = crate::discover::read_small(&path)
                .map_err(|e| Error::from_io(&path, Operation::Read, None, e))?;
            match String::from_utf8(bytes) {
                Ok(text) => Ok((path, text)),
                Err(e) => Err(Error::parse(&path, e.as_bytes(), "text")),
            }
        };
        let number = |path: &Path, text: &str| -> Result<u32> {
            text.trim()
                .parse()
                .map_err(|_| Error::parse(path, text.as_bytes(), "a decimal number"))
        };
        let (size_path, size) = read("virtual_size")?;
        let (w, h) = size
            .trim()
            .split_once(',')
            .ok_or_else(|| Error::parse(&size_path, size.as_bytes(), "WIDTH,HEIGHT"))?;
        let (bpp_path, bpp) = read("bits_per_pixel")?;
        let (stride_path, stride) = read("stride")?;
        let geometry = Geometry {
            width: number(&size_path, w)?,
            height: number(&size_path, h)?,
            bits_per_pixel: number(&bpp_path, &bpp)?,
            stride: number(&stride_path, &stride)?,
        };
        geometry.check(dir)?;
        Ok(geometry)
    }

    #[doc(hidden)] // used by the simulated brick (ev3sysfs-sim)
    pub fn check(&self, dir: &Path) -> Result<()> {
        let row_bits = u64::from(self.width) * u64::from(self.bits_per_pixel);
        let fits = matches!(self.bits_per_pixel, 1 | 32)
            && (1..=4096).contains(&self.width)
            && (1..=4096).contains(&self.height)
            && u64::from(self.stride) * 8 >= row_bits
            && self.stride <= 65_536
            && self.size() <= MAX_IMAGE_BYTES;
        if fits {
            return Ok(());
        }
        Err(Error::Unsupported {
            path: dir.to_path_buf(),
            operation: Operation::Open,
            source: io::Error::other(format!(
                "framebuffer layout {}x{} at {} bits per pixel, stride {} (1 or 32 bits per pixel, \
                 a stride that holds a row, at most {MAX_IMAGE_BYTES} bytes)",
                self.width, self.height, self.bits_per_pixel, self.stride
            )),
        })
    }

    /// Bytes of the whole image (`stride * height`).
    pub fn size(&self) -> usize {
        self.stride as usize * self.height as usize
    }
}
