//! The crate's only `unsafe` code: what the stop guard needs to stop motors
//! from a signal handler (POSIX signal handling and raw, async-signal-safe
//! syscalls). Everything here is wrapped in safe functions.
#![allow(unsafe_code)]

use std::cell::UnsafeCell;
use std::io;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Mutex, OnceLock};

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

/// The most signals [`install_chained`] keeps previous actions for.
const MAX_SIGNALS: usize = 8;

/// A signal's action before ours, called after the callback.
struct Previous {
    /// The signal number, 0 while the slot is unused.
    sig: AtomicI32,
    /// Set (Release) once `action` is written; it is never written again.
    ready: AtomicBool,
    action: UnsafeCell<MaybeUninit<libc::sigaction>>,
}

// SAFETY: `action` is written once, before `ready` is set (Release), and
// only read after `ready` is seen (Acquire); install_chained runs under a
// lock.
unsafe impl Sync for Previous {}

static PREVIOUS: [Previous; MAX_SIGNALS] = [const {
    Previous {
        sig: AtomicI32::new(0),
        ready: AtomicBool::new(false),
        action: UnsafeCell::new(MaybeUninit::uninit()),
    }
}; MAX_SIGNALS];

/// What the handler runs before chaining (async-signal-safe).
static CALLBACK: OnceLock<fn()> = OnceLock::new();

type InfoHandler = extern "C" fn(i32, *mut libc::siginfo_t, *mut libc::c_void);
type PlainHandler = extern "C" fn(i32);

extern "C" fn chained_handler(sig: i32, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
    if let Some(callback) = CALLBACK.get() {
        callback();
    }
    let previous = PREVIOUS
        .iter()
        .find(|p| p.ready.load(Ordering::Acquire) && p.sig.load(Ordering::Relaxed) == sig);
    let Some(previous) = previous else {
        return reraise_default(sig);
    };
    // SAFETY: `ready` was seen, so `action` is initialised and no longer
    // written.
    let action = unsafe { (*previous.action.get()).assume_init_ref() };
    let handler = action.sa_sigaction;
    if handler == libc::SIG_DFL || handler == libc::SIG_IGN {
        // (SIG_IGN is never installed over; kept for completeness.)
        return reraise_default(sig);
    }
    // SAFETY: `handler` is the function the program installed with
    // sigaction, with the signature its SA_SIGINFO flag says; it is called
    // as the kernel would have called it, with the same arguments.
    unsafe {
        if action.sa_flags & libc::SA_SIGINFO != 0 {
            let f: InfoHandler = std::mem::transmute::<usize, InfoHandler>(handler);
            f(sig, info, context);
        } else {
            let f: PlainHandler = std::mem::transmute::<usize, PlainHandler>(handler);
            f(sig);
        }
    }
}

/// Installs a handler for `signals` that runs `callback` (which must be
/// async-signal-safe), then chains to the action the signal had before:
/// the previous handler is called with the same arguments, and a default
/// action is taken by restoring it and raising the signal again. A signal
/// that is ignored (`SIG_IGN`, e.g. SIGHUP under `nohup`) is left ignored.
/// The handler runs on the thread's alternate signal stack if it has one
/// (`SA_ONSTACK`, for stack overflows); the calling thread gets one if it
/// has none (threads spawned by `std` have one). Installing twice is a
/// no-op for signals already handled.
pub(crate) fn install_chained(signals: &[i32], callback: fn()) -> io::Result<()> {
    static LOCK: Mutex<()> = Mutex::new(());
    let _lock = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let _ = CALLBACK.set(callback);
    ensure_alternate_stack();
    for &sig in signals {
        // SAFETY: sigaction with a null new action only reads the current
        // one into `old`, which is a valid, writable sigaction.
        let old = unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut old) != 0 {
                return Err(io::Error::last_os_error());
            }
            old
        };
        if old.sa_sigaction == libc::SIG_IGN
            || old.sa_sigaction == chained_handler as *const () as usize
        {
            continue;
        }
        let Some(slot) = PREVIOUS.iter().find(|p| p.sig.load(Ordering::Relaxed) == 0) else {
            return Err(io::Error::other("too many signals to chain"));
        };
        slot.sig.store(sig, Ordering::Relaxed);
        // SAFETY: the slot was unused (sig 0, ready false): nobody reads
        // `action` yet, and we hold the lock.
        unsafe { (*slot.action.get()).write(old) };
        slot.ready.store(true, Ordering::Release);
        // SAFETY: `action` is fully initialised (zeroed, then the handler,
        // flags and an empty mask); sigaction only reads it.
        let r = unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = chained_handler as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART | libc::SA_ONSTACK;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(sig, &action, std::ptr::null_mut())
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Gives the calling thread an alternate signal stack if it has none, so
/// that a stack overflow can still run the handler.
fn ensure_alternate_stack() {
    const SIZE: usize = 64 * 1024;
    // SAFETY: sigaltstack reads/writes valid stack_t values; the new stack
    // is leaked, so it stays valid for the thread's lifetime.
    unsafe {
        let mut current: libc::stack_t = std::mem::zeroed();
        if libc::sigaltstack(std::ptr::null(), &mut current) != 0
            || current.ss_flags & libc::SS_DISABLE == 0
        {
            return;
        }
        let memory: &'static mut [u8] = Box::leak(vec![0u8; SIZE].into_boxed_slice());
        let stack = libc::stack_t {
            ss_sp: memory.as_mut_ptr().cast(),
            ss_flags: 0,
            ss_size: SIZE,
        };
        libc::sigaltstack(&stack, std::ptr::null_mut());
    }
}

/// Sleeps about 250 µs (async-signal-safe).
pub(crate) fn pause_briefly() {
    let pause = libc::timespec {
        tv_sec: 0,
        tv_nsec: 250_000,
    };
    // SAFETY: nanosleep reads a valid timespec; no remainder is wanted.
    unsafe {
        libc::nanosleep(&pause, std::ptr::null_mut());
    }
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

/// `pwrite(fd, bytes, 0)`: the libc call itself, inlined into the caller
/// (nix's wrapper stays an out-of-line function even under LTO). The
/// attribute write path's one syscall.
#[inline]
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
#[inline]
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
