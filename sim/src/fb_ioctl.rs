//! [`FramebufferIoctls`]: the simulated framebuffer's `FBIOGET_VSCREENINFO`
//! and `FBIOGET_FSCREENINFO`, answered for programs that `ev3-sim` runs.
//!
//! The simulated `/dev/fb0` is a regular file (so that it maps with
//! `MAP_SHARED`, as python-ev3dev2's `Display` and this crate's screen map
//! it), and a regular file answers every ioctl with `ENOTTY`; FUSE cannot
//! pass ioctls whose number does not encode a size either. So the program
//! runs under a seccomp filter that hands exactly these two ioctls to a
//! supervisor thread of the simulator (seccomp user notification, Linux
//! 5.0+): when the descriptor is the simulated framebuffer (same device and
//! inode) it writes `fb_var_screeninfo`/`fb_fix_screeninfo` into the
//! caller's buffer and returns 0; on any other file the kernel carries the
//! call out as usual. Needs root (or `CAP_SYS_ADMIN`) for the filter and
//! for writing the caller's memory.

use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::process::Command;

use crate::screen::Geometry;
use crate::sys::{answer_trapped, before_exec, receive_fd, receive_trapped, IoctlTrap};

/// `FBIOGET_VSCREENINFO`.
pub const FBIOGET_VSCREENINFO: u32 = 0x4600;
/// `FBIOGET_FSCREENINFO`.
pub const FBIOGET_FSCREENINFO: u32 = 0x4602;

/// `struct fb_var_screeninfo` for `geometry` (40 `u32`s).
pub fn var_screeninfo(geometry: Geometry) -> Vec<u8> {
    let mut words = [0u32; 40];
    let (w, h) = (geometry.width, geometry.height);
    words[..8].copy_from_slice(&[w, h, w, h, 0, 0, geometry.bits_per_pixel, 0]);
    if geometry.bits_per_pixel == 32 {
        // red, green, blue, transp: offset, length, msb_right (XRGB8888).
        words[8..20].copy_from_slice(&[16, 8, 0, 8, 8, 0, 0, 8, 0, 0, 0, 0]);
    } else {
        words[8..20].copy_from_slice(&[0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0]);
    }
    // height and width in mm (the EV3's LCD is about 39 x 28 mm).
    words[22] = 28;
    words[23] = 39;
    words.iter().flat_map(|w| w.to_ne_bytes()).collect()
}

/// `struct fb_fix_screeninfo` for `geometry`, in this target's layout
/// (`unsigned long` for the two addresses).
pub fn fix_screeninfo(geometry: Geometry) -> Vec<u8> {
    let ulong = std::mem::size_of::<libc::c_ulong>();
    let mut out = Vec::with_capacity(80);
    let mut id = [0u8; 16];
    id[..6].copy_from_slice(b"st7586");
    out.extend_from_slice(&id);
    out.extend_from_slice(&vec![0u8; ulong]); // smem_start
    let visual: u32 = if geometry.bits_per_pixel == 1 { 0 } else { 2 };
    for word in [geometry.size() as u32, 0, 0, visual] {
        out.extend_from_slice(&word.to_ne_bytes()); // smem_len type type_aux visual
    }
    out.extend_from_slice(&[0u8; 6]); // xpanstep ypanstep ywrapstep
    out.resize(out.len().next_multiple_of(4), 0);
    out.extend_from_slice(&geometry.stride.to_ne_bytes()); // line_length
    out.resize(out.len().next_multiple_of(ulong), 0);
    out.extend_from_slice(&vec![0u8; ulong]); // mmio_start
    out.extend_from_slice(&[0u8; 8]); // mmio_len accel
    out.extend_from_slice(&[0u8; 6]); // capabilities reserved[2]
    out.resize(out.len().next_multiple_of(ulong), 0);
    out
}

/// Answers the framebuffer ioctls for a command and what it starts (see
/// the module docs). Made before the command is spawned; the answering
/// starts with [`FramebufferIoctls::serve`] after the spawn.
#[derive(Debug)]
pub struct FramebufferIoctls {
    receiver: UnixStream,
    /// The child's end, closed here after the spawn.
    sender: std::os::fd::RawFd,
    framebuffer: PathBuf,
    geometry: Geometry,
}

impl FramebufferIoctls {
    /// Prepares `command` to run under the filter, for the framebuffer file
    /// `framebuffer` of `geometry`.
    ///
    /// # Errors
    /// When this architecture has no filter here (not x86_64 or aarch64)
    /// or the socket pair cannot be made.
    pub fn attach(
        command: &mut Command,
        framebuffer: impl Into<PathBuf>,
        geometry: Geometry,
    ) -> io::Result<FramebufferIoctls> {
        use std::os::fd::IntoRawFd;
        let trap =
            IoctlTrap::new(&[FBIOGET_VSCREENINFO, FBIOGET_FSCREENINFO]).ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::Unsupported,
                    "no filter for this architecture",
                )
            })?;
        let (receiver, sender) = UnixStream::pair()?;
        receiver.set_nonblocking(false)?;
        // The child's end stays open in the parent until serve(): the
        // hook's copy lives in the child only.
        let sender_fd = sender.into_raw_fd();
        // A kernel without seccomp user notification (or a sandbox that
        // refuses filters) must not stop the command: it then runs without
        // the ioctls, and serve() says so (no listener came).
        before_exec(command, move || {
            let _ = trap.install_and_send(sender_fd);
            Ok(())
        });
        Ok(FramebufferIoctls {
            receiver,
            sender: sender_fd,
            framebuffer: framebuffer.into(),
            geometry,
        })
    }

    /// After the spawn: takes the filter's listener from the child and
    /// answers on a thread until the last process under the filter ends.
    ///
    /// # Errors
    /// When the child sent no listener (the filter could not be installed:
    /// not root, no seccomp user notification).
    pub fn serve(self) -> io::Result<()> {
        let _ = nix::unistd::close(self.sender);
        self.receiver
            .set_read_timeout(Some(std::time::Duration::from_secs(5)))?;
        let listener = receive_fd(&self.receiver)?;
        let meta = std::fs::metadata(&self.framebuffer)?;
        let (dev, ino) = (meta.dev(), meta.ino());
        let (var, fix) = (var_screeninfo(self.geometry), fix_screeninfo(self.geometry));
        std::thread::spawn(move || supervise(&listener, (dev, ino), &var, &fix));
        Ok(())
    }
}

fn supervise(listener: &OwnedFd, framebuffer: (u64, u64), var: &[u8], fix: &[u8]) {
    loop {
        let call = match receive_trapped(listener) {
            Ok(Some(call)) => call,
            Ok(None) => return,
            Err(e) => {
                log::warn!("framebuffer ioctls: {e}");
                return;
            }
        };
        let fd = call.args[0] as i32;
        let same = std::fs::metadata(format!("/proc/{}/fd/{fd}", call.pid))
            .is_ok_and(|m| (m.dev(), m.ino()) == framebuffer);
        let answer = match (same, call.args[1] as u32) {
            (true, FBIOGET_VSCREENINFO) => Some(var),
            (true, FBIOGET_FSCREENINFO) => Some(fix),
            _ => None,
        };
        let result = match answer {
            Some(bytes) => {
                let written = std::fs::OpenOptions::new()
                    .write(true)
                    .open(format!("/proc/{}/mem", call.pid))
                    .and_then(|mem| mem.write_all_at(bytes, call.args[2]));
                match written {
                    Ok(()) => answer_trapped(listener, call.id, 0, false),
                    // A bad buffer: EFAULT, as the kernel would say.
                    Err(_) => answer_trapped(listener, call.id, libc::EFAULT, false),
                }
            }
            None => answer_trapped(listener, call.id, 0, true),
        };
        if let Err(e) = result {
            log::warn!("framebuffer ioctls: {e}");
        }
    }
}
