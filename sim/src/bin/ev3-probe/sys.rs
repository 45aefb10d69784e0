//! The probe's only `unsafe` code, behind safe wrappers: process priority
//! (`setpriority`, `sched_setscheduler` are not in nix) and a read-only
//! memory mapping for the mmap read strategy.
#![allow(unsafe_code)]

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::ptr::NonNull;

/// Sets the nice value of this process (`setpriority`). Negative values need
/// CAP_SYS_NICE; ev3dev starts user programs at -10.
pub fn set_nice(nice: i32) -> io::Result<()> {
    // SAFETY: plain syscall on this process; no memory is passed.
    let r = unsafe { libc::setpriority(libc::PRIO_PROCESS as _, 0, nice) };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Runs this process under SCHED_FIFO with `priority` (1..99; needs
/// CAP_SYS_NICE).
pub fn set_fifo(priority: i32) -> io::Result<()> {
    // SAFETY: sched_param is plain old data; zeroed is a valid value on
    // every libc (musl has reserved fields besides the priority).
    let mut param: libc::sched_param = unsafe { std::mem::zeroed() };
    param.sched_priority = priority;
    // SAFETY: `param` outlives the call, which only reads it.
    let r = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// A shared read-only mapping of the first page of a file.
pub struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
}

impl Mapping {
    /// Maps the first `len` bytes of `file`. sysfs refuses this for text
    /// attributes (ENODEV or EIO); an empty file is refused here, since
    /// touching a page past the end of a file raises SIGBUS.
    pub fn map(file: &File, len: usize) -> io::Result<Mapping> {
        let size = file.metadata()?.len();
        if size == 0 || len == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "empty file: nothing to map",
            ));
        }
        // SAFETY: a fresh mapping chosen by the kernel (addr NULL), checked
        // for failure below; the fd stays valid for the call.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let ptr = NonNull::new(ptr.cast::<u8>()).ok_or_else(io::Error::last_os_error)?;
        Ok(Mapping { ptr, len })
    }

    /// Reads the mapped value up to its first newline (or NUL) with
    /// volatile loads, so every call really touches the page; returns its
    /// length and a checksum of its bytes.
    pub fn read_value(&self) -> (usize, u32) {
        let mut sum = 0u32;
        for i in 0..self.len {
            // SAFETY: `i < len`, inside the mapping that lives as long as
            // `self`; the file was not empty, so the first page is backed.
            // The probe's mock file is not truncated while mapped.
            let b = unsafe { self.ptr.as_ptr().add(i).read_volatile() };
            if b == b'\n' || b == 0 {
                return (i, sum);
            }
            sum = sum.wrapping_mul(31).wrapping_add(u32::from(b));
        }
        (self.len, sum)
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `map`, once.
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.len);
        }
    }
}
