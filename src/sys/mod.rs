//! The crate's only `unsafe` code: what the stop guard needs to stop motors
//! from a signal handler (POSIX signal handling and raw, async-signal-safe
//! syscalls), and the few calls std does not make as the crate needs them
//! (`fgetxattr`, an `openat` without musl's extra `fcntl`). Everything here
//! is wrapped in safe functions. The signal handling is in `signals`.
#![allow(unsafe_code)]

use std::io;
use std::mem::MaybeUninit;

mod signals;

pub(crate) use signals::{
    at_exit, end_served_bricks, install_chained, install_job_control, pause_briefly,
    register_served, unregister_served,
};

/// Stores a value from any context, including a signal handler: one
/// `pwrite`, async-signal-safe. Errors are ignored: there is nobody to
/// report to.
pub(crate) fn store_raw(fd: i32, bytes: &[u8]) {
    if fd < 0 {
        return;
    }
    // SAFETY: a plain syscall on a descriptor number; `bytes` is a valid
    // buffer for the call. A descriptor closed meanwhile fails with EBADF.
    unsafe {
        libc::pwrite(fd, bytes.as_ptr().cast(), bytes.len(), 0);
    }
}

/// Opens `path` with `openat(AT_FDCWD, path, flags | O_CLOEXEC)`: one
/// syscall. std's `File::open` calls libc's `open`, and musl's `open` (the
/// brick's static build) follows every `O_CLOEXEC` open with an
/// `fcntl(F_SETFD, FD_CLOEXEC)` for kernels older than 2.6.23; its
/// `openat` does not (59 syscalls of the start-up benchmark's 404 on the
/// brick's build). glibc's `open` is this same `openat`.
pub(crate) fn open_cloexec(
    path: &std::path::Path,
    flags: libc::c_int,
) -> io::Result<std::fs::File> {
    use nix::fcntl::OFlag;
    use nix::sys::stat::Mode;
    use std::os::fd::FromRawFd;
    let flags = OFlag::from_bits_retain(flags | libc::O_CLOEXEC);
    let fd = nix::fcntl::openat(None, path, flags, Mode::empty()).map_err(io::Error::from)?;
    // SAFETY: `openat` just returned this descriptor and nothing else owns
    // it; the `File` closes it.
    Ok(unsafe { std::fs::File::from_raw_fd(fd) })
}

/// `true` when the open file carries the simulated brick's marker extended
/// attribute (`user.ev3sysfs`): one `fgetxattr`.
pub(crate) fn has_marker_xattr(file: &std::fs::File) -> bool {
    use std::os::fd::AsRawFd;
    let mut value = [0u8; 32];
    // SAFETY: the name is NUL-terminated, the buffer valid for its length;
    // a bad descriptor fails with EBADF.
    let n = unsafe {
        libc::fgetxattr(
            file.as_raw_fd(),
            c"user.ev3sysfs".as_ptr(),
            value.as_mut_ptr().cast(),
            value.len(),
        )
    };
    n > 0
}

// ---- brickio: evdev ioctls for the brick buttons (src/buttons.rs) ----------
// Kept in one block at the end of the file to ease merging.

/// Bytes of an `EVIOCGKEY` key bitmap: `(KEY_MAX + 7) / 8` with `KEY_MAX`
/// 0x2ff, as python-ev3dev2 and the kernel's `input.h` size it.
pub(crate) const KEY_BITMAP_LEN: usize = 0x2ff_usize.div_ceil(8);

nix::ioctl_read_buf!(eviocgkey, b'E', 0x18, u8);

/// `EVIOCGKEY(len)`: the global state of every key of an input device, one
/// bit per key code, into `bitmap`. One `ioctl` syscall, nothing allocated.
pub(crate) fn input_key_state(fd: i32, bitmap: &mut [u8; KEY_BITMAP_LEN]) -> io::Result<()> {
    // SAFETY: the ioctl number encodes `bitmap.len()` as its size and the
    // kernel writes at most that many bytes into the buffer, which stays
    // borrowed mutably for the whole call. A bad descriptor fails (EBADF).
    unsafe { eviocgkey(fd, &mut bitmap[..]) }
        .map(|_| ())
        .map_err(io::Error::from)
}
// ---- end brickio -----------------------------------------------------------

/// `pwrite(fd, bytes, 0)`: the libc call itself, inlined into the caller
/// (nix's wrapper stays an out-of-line function even under LTO, and
/// `opt-level = "s"` does not inline a plain `#[inline]` into a caller's
/// loop). The attribute write path's one syscall.
#[inline(always)]
pub(crate) fn pwrite_at_start(
    fd: std::os::fd::BorrowedFd<'_>,
    bytes: &[u8],
) -> Result<usize, nix::errno::Errno> {
    use std::os::fd::AsRawFd;
    // SAFETY: `fd` is borrowed, so open for the call; `bytes` is valid for
    // `bytes.len()` bytes, which the kernel only reads.
    let n = unsafe { libc::pwrite(fd.as_raw_fd(), bytes.as_ptr().cast(), bytes.len(), 0) };
    usize::try_from(n).map_err(|_| nix::errno::Errno::last())
}

/// `pread(fd, buf, 0)`: the libc call itself, inlined into the caller. The
/// attribute read path's one syscall.
#[inline(always)]
pub(crate) fn pread_at_start(
    fd: std::os::fd::BorrowedFd<'_>,
    buf: &mut [u8],
) -> Result<usize, nix::errno::Errno> {
    use std::os::fd::AsRawFd;
    // SAFETY: `fd` is borrowed, so open for the call; `buf` is valid and
    // writable for `buf.len()` bytes, and the kernel writes at most that.
    let n = unsafe { libc::pread(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
    usize::try_from(n).map_err(|_| nix::errno::Errno::last())
}

// ---- screen: a shared mapping of the framebuffer (src/screen.rs) -----------

/// A `MAP_SHARED`, read-write mapping of a whole file (a framebuffer): what
/// the process stores in it is the device's memory. Unmapped on drop.
#[derive(Debug)]
pub(crate) struct SharedMapping {
    ptr: std::ptr::NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is plain memory owned by this value; moving it to
// another thread moves that ownership. (Not `Sync`: stores through `&self`.)
unsafe impl Send for SharedMapping {}

impl SharedMapping {
    /// Maps the first `len` bytes of the device `file` shared and
    /// read-write: one `mmap`. Only character devices (a framebuffer, whose
    /// driver checks `len` against its memory) are mapped: any other file is
    /// refused (ENODEV), because a regular file that another process
    /// truncates would turn a copy into SIGBUS.
    pub(crate) fn new(file: &std::fs::File, len: usize) -> io::Result<SharedMapping> {
        use nix::sys::mman::{mmap, MapFlags, ProtFlags};
        use std::os::unix::fs::FileTypeExt;
        let device = file.metadata()?.file_type().is_char_device();
        let (Some(size), true) = (std::num::NonZeroUsize::new(len), device) else {
            return Err(io::Error::from_raw_os_error(libc::ENODEV));
        };
        // SAFETY: a fresh mapping chosen by the kernel (no address hint), so
        // it aliases no Rust object; it is only reached through raw-pointer
        // copies below, never through references, because other processes
        // and the device may change it at any time.
        let ptr = unsafe {
            mmap(
                None,
                size,
                ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
                MapFlags::MAP_SHARED,
                file,
                0,
            )
        }
        .map_err(io::Error::from)?;
        Ok(SharedMapping {
            ptr: ptr.cast(),
            len,
        })
    }

    /// Copies `bytes` to the start of the mapping (at most its length).
    pub(crate) fn store(&self, bytes: &[u8]) {
        let n = bytes.len().min(self.len);
        // SAFETY: both ranges are valid for `n` bytes (the mapping lives as
        // long as `self`), and a process's buffer never overlaps the mapping.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.ptr.as_ptr(), n) }
    }

    /// Copies the start of the mapping into `out` (at most its length).
    pub(crate) fn load(&self, out: &mut [u8]) {
        let n = out.len().min(self.len);
        // SAFETY: as in `store`, the other way round.
        unsafe { std::ptr::copy_nonoverlapping(self.ptr.as_ptr(), out.as_mut_ptr(), n) }
    }
}

impl Drop for SharedMapping {
    fn drop(&mut self) {
        // SAFETY: this value's own mapping, unmapped once; no references
        // into it exist (only raw copies).
        let _ = unsafe { nix::sys::mman::munmap(self.ptr.cast(), self.len) };
    }
}
// ---- end screen ------------------------------------------------------------

// ---- clock: one syscall per read on the brick (src/clock.rs) ---------------

/// `CLOCK_MONOTONIC` now. On 32-bit ARM Linux the first read asks the
/// kernel for `clock_gettime64`; if it answers ENOSYS (Linux before 5.1, the
/// brick's 4.14), every later read is the 32-bit `clock_gettime` syscall
/// alone instead of musl's two calls (64-bit first, ENOSYS, then 32-bit).
pub(crate) fn monotonic_now() -> std::time::Duration {
    #[cfg(all(target_arch = "arm", target_os = "linux"))]
    if let Some(now) = arm_legacy_clock::now() {
        return now;
    }
    let mut ts = MaybeUninit::<libc::timespec>::uninit();
    // SAFETY: `ts` is a valid out-pointer for one timespec; CLOCK_MONOTONIC
    // always exists on Linux, so the call cannot fail (checked anyway).
    let r = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, ts.as_mut_ptr()) };
    if r != 0 {
        return std::time::Duration::ZERO;
    }
    // SAFETY: initialised by the successful call.
    let ts = unsafe { ts.assume_init() };
    std::time::Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

#[cfg(all(target_arch = "arm", target_os = "linux"))]
mod arm_legacy_clock {
    use std::sync::atomic::{AtomicU8, Ordering};
    use std::time::Duration;

    /// ARM EABI syscall numbers (arch/arm/tools/syscall.tbl).
    const NR_CLOCK_GETTIME32: libc::c_long = 263;
    const NR_CLOCK_GETTIME64: libc::c_long = 403;
    const UNKNOWN: u8 = 0;
    const MODERN: u8 = 1;
    const LEGACY: u8 = 2;
    static KERNEL: AtomicU8 = AtomicU8::new(UNKNOWN);

    /// The kernel's 32-bit `struct timespec` (`old_timespec32`).
    #[repr(C)]
    struct Timespec32 {
        tv_sec: i32,
        tv_nsec: i32,
    }

    #[repr(C)]
    struct Timespec64 {
        tv_sec: i64,
        tv_nsec: i64,
    }

    /// `Some(now)` read with the 32-bit syscall on a kernel without
    /// `clock_gettime64`, `None` where the C library's call is right.
    pub(super) fn now() -> Option<Duration> {
        match KERNEL.load(Ordering::Relaxed) {
            MODERN => None,
            LEGACY => legacy(),
            _ => {
                let mut ts = Timespec64 {
                    tv_sec: 0,
                    tv_nsec: 0,
                };
                // SAFETY: a raw syscall with a valid out-pointer of the
                // layout clock_gettime64 writes (struct __kernel_timespec).
                let r = unsafe {
                    libc::syscall(
                        NR_CLOCK_GETTIME64,
                        libc::CLOCK_MONOTONIC,
                        &mut ts as *mut Timespec64,
                    )
                };
                if r == 0 {
                    KERNEL.store(MODERN, Ordering::Relaxed);
                    return Some(Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32));
                }
                if std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOSYS) {
                    KERNEL.store(LEGACY, Ordering::Relaxed);
                    return legacy();
                }
                None
            }
        }
    }

    fn legacy() -> Option<Duration> {
        let mut ts = Timespec32 {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: a raw syscall with a valid out-pointer of the layout the
        // 32-bit clock_gettime writes (struct old_timespec32).
        let r = unsafe {
            libc::syscall(
                NR_CLOCK_GETTIME32,
                libc::CLOCK_MONOTONIC,
                &mut ts as *mut Timespec32,
            )
        };
        (r == 0).then(|| Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32))
    }
}
// ---- end clock -------------------------------------------------------------

// ---- tasks: the async reactor's one poll (src/tasks/reactor.rs) ------------

/// `poll(fds, timeout_ms)`: the reactor's wait on descriptor numbers that
/// the futures registering them keep open (a closed or reused number gives
/// `POLLNVAL` or a spurious wake-up, never memory unsafety). Returns how
/// many entries have events.
#[cfg(feature = "async")]
pub(crate) fn poll_raw(
    fds: &mut [libc::pollfd],
    timeout_ms: i32,
) -> Result<usize, nix::errno::Errno> {
    let n = libc::nfds_t::try_from(fds.len()).map_err(|_| nix::errno::Errno::EINVAL)?;
    // SAFETY: `fds` is a valid, writable array of `n` pollfd structs; the
    // kernel only reads `fd`/`events` and writes `revents`.
    let r = unsafe { libc::poll(fds.as_mut_ptr(), n, timeout_ms) };
    usize::try_from(r).map_err(|_| nix::errno::Errno::last())
}
