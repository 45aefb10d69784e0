//! The crate's only `unsafe` code: what the stop guard needs to stop motors
//! from a signal handler (POSIX signal handling and raw, async-signal-safe
//! syscalls). Everything here is wrapped in safe functions.
#![allow(unsafe_code)]

use std::io;

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

/// Installs `handler` for `signals` (with SA_RESTART), keeping it for
/// later raises. The handler must be async-signal-safe.
pub(crate) fn install_handler(signals: &[i32], handler: extern "C" fn(i32)) -> io::Result<()> {
    for &sig in signals {
        // SAFETY: `action` is fully initialised (zeroed, then the handler
        // and an empty mask); sigaction only reads it.
        let r = unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = handler as usize;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(sig, &action, std::ptr::null_mut())
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Restores the default action of `sig` and raises it again, so that the
/// process ends the way it would have without the handler.
pub(crate) fn reraise_default(sig: i32) {
    // SAFETY: signal() and raise() are async-signal-safe.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

/// Registers `f` to run at normal process exit (`exit()`, also
/// `std::process::exit`).
pub(crate) fn at_exit(f: extern "C" fn()) -> io::Result<()> {
    // SAFETY: `f` is a plain function without captured state.
    if unsafe { libc::atexit(f) } == 0 {
        Ok(())
    } else {
        Err(io::Error::other("atexit failed"))
    }
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
