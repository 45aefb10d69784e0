//! `graphics/fb0`: the framebuffer's class device, for the simulated brick's
//! tree (what `fbsysfs.c` registers): the geometry [`crate::screen`] reads.

use crate::kobject::{AttrInfo, Effects, KResult, Mode, Model};
use crate::models::kernel::{power_attrs, ro, show_int, show_power, show_str, store_power};
use crate::screen::Geometry;

/// The simulated framebuffer's sysfs attributes.
#[derive(Debug)]
pub(super) struct Framebuffer {
    pub(super) geometry: Geometry,
}

impl Model for Framebuffer {
    fn class(&self) -> &'static str {
        "graphics"
    }

    fn attributes(&self) -> Vec<AttrInfo> {
        // fbsysfs.c: these two are 0644 (a store re-programs the mode),
        // the rest read-only.
        let rw = ["bits_per_pixel", "virtual_size"]
            .into_iter()
            .map(|n| AttrInfo::text(n, Mode::ReadWrite));
        ro(&["name", "stride", "dev", "uevent"])
            .chain(rw)
            .chain(power_attrs())
            .collect()
    }

    fn show(&self, attr: &str, out: &mut Vec<u8>) -> KResult<()> {
        let g = self.geometry;
        match attr {
            "name" => show_str(out, "st7586"),
            "stride" => show_int(out, g.stride),
            "bits_per_pixel" => show_int(out, g.bits_per_pixel),
            "virtual_size" => show_str(out, &format!("{},{}", g.width, g.height)),
            "dev" => show_str(out, "29:0"),
            "uevent" => out.extend_from_slice(b"MAJOR=29\nMINOR=0\nDEVNAME=fb0\n"),
            _ => return show_power(attr, out).unwrap_or(Err(libc::EACCES)),
        }
        Ok(())
    }

    fn store(&mut self, attr: &str, value: &[u8], _fx: &mut Effects) -> KResult<usize> {
        // The LCD has one mode: storing it again is accepted, any other
        // value is refused as fb_set_var() refuses it.
        let mut current = Vec::new();
        match attr {
            "bits_per_pixel" | "virtual_size" => {
                self.show(attr, &mut current)?;
                if value.trim_ascii() == current.trim_ascii() {
                    Ok(value.len())
                } else {
                    Err(libc::EINVAL)
                }
            }
            _ => store_power(attr, value).unwrap_or(Err(libc::EACCES)),
        }
    }
}
