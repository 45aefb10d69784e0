//! The crate's only `unsafe` code: what the stop guard needs to stop motors
//! from a signal handler (POSIX signal handling and raw, async-signal-safe
//! syscalls), and the few calls std does not make as the crate needs them
//! (`fgetxattr`, an `openat` without musl's extra `fcntl`). Everything here
//! is wrapped in safe functions.
#![allow(unsafe_code)]

use std::cell::UnsafeCell;
use std::io;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicUsize, Ordering};
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

/// The most signals [`install_chained`] keeps previous actions for.
const MAX_SIGNALS: usize = 12;

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

/// What the handler runs before chaining (async-signal-safe), in the order
/// they were installed: `fn()`s as addresses, 0 for none.
static CALLBACKS: [AtomicUsize; 4] = [const { AtomicUsize::new(0) }; 4];

fn add_callback(callback: fn()) -> io::Result<()> {
    let address = callback as usize;
    if CALLBACKS
        .iter()
        .any(|c| c.load(Ordering::Acquire) == address)
    {
        return Ok(());
    }
    CALLBACKS
        .iter()
        .find(|c| {
            c.compare_exchange(0, address, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        })
        .map(|_| ())
        .ok_or_else(|| io::Error::other("too many signal callbacks"))
}

fn run_callbacks() {
    for c in &CALLBACKS {
        let address = c.load(Ordering::Acquire);
        if address != 0 {
            // SAFETY: only `fn()` addresses are stored (add_callback).
            let f: fn() = unsafe { std::mem::transmute::<usize, fn()>(address) };
            f();
        }
    }
}

type InfoHandler = extern "C" fn(i32, *mut libc::siginfo_t, *mut libc::c_void);
type PlainHandler = extern "C" fn(i32);

extern "C" fn chained_handler(sig: i32, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
    run_callbacks();
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
    add_callback(callback)?;
    ensure_alternate_stack();
    install_handler(signals, chained_handler)
}

/// Remembers the current action of each of `signals` and installs
/// `handler` (signals already handled by it, or ignored, are skipped).
fn install_handler(signals: &[i32], handler: InfoHandler) -> io::Result<()> {
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
        if old.sa_sigaction == libc::SIG_IGN || old.sa_sigaction == handler as *const () as usize {
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
        set_handler(sig, handler)?;
    }
    Ok(())
}

fn set_handler(sig: i32, handler: InfoHandler) -> io::Result<()> {
    // SAFETY: `action` is fully initialised (zeroed, then the handler,
    // flags and an empty mask); sigaction only reads it.
    let r = unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = handler as *const () as usize;
        action.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART | libc::SA_ONSTACK;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(sig, &action, std::ptr::null_mut())
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// What the job-control handler runs before and after the stop.
static JOB_STOP: OnceLock<fn()> = OnceLock::new();
static JOB_CONTINUE: OnceLock<fn()> = OnceLock::new();

extern "C" fn job_handler(sig: i32, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
    if let Some(f) = JOB_STOP.get() {
        f();
    }
    let previous = PREVIOUS
        .iter()
        .find(|p| p.ready.load(Ordering::Acquire) && p.sig.load(Ordering::Relaxed) == sig);
    // SAFETY: `ready` was seen, so `action` is initialised and no longer
    // written.
    let handler = previous.map(|p| unsafe { (*p.action.get()).assume_init_ref() });
    match handler {
        Some(action) if action.sa_sigaction != libc::SIG_DFL => {
            // SAFETY: as in chained_handler: the program's own handler,
            // called as the kernel would have.
            unsafe {
                if action.sa_flags & libc::SA_SIGINFO != 0 {
                    let f: InfoHandler =
                        std::mem::transmute::<usize, InfoHandler>(action.sa_sigaction);
                    f(sig, info, context);
                } else {
                    let f: PlainHandler =
                        std::mem::transmute::<usize, PlainHandler>(action.sa_sigaction);
                    f(sig);
                }
            }
        }
        _ => {
            // The default action, stop, now: with the default restored and
            // the signal unblocked, raise() returns once the process
            // continues (SIGCONT); then the handler is ours again.
            // SAFETY: signal(), sigprocmask() and raise() are
            // async-signal-safe; the set is initialised by sigemptyset.
            unsafe {
                libc::signal(sig, libc::SIG_DFL);
                let mut set: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut set);
                libc::sigaddset(&mut set, sig);
                libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
                libc::raise(sig);
            }
            let _ = set_handler(sig, job_handler);
        }
    }
    if let Some(f) = JOB_CONTINUE.get() {
        f();
    }
}

/// Installs a handler for the job-control `signals` (SIGTSTP...) that runs
/// `stop`, then the program's own handler or the default action (the
/// process stops until SIGCONT), then `resume`. Both must be
/// async-signal-safe. Ignored signals stay ignored.
pub(crate) fn install_job_control(signals: &[i32], stop: fn(), resume: fn()) -> io::Result<()> {
    static LOCK: Mutex<()> = Mutex::new(());
    let _lock = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let _ = JOB_STOP.set(stop);
    let _ = JOB_CONTINUE.set(resume);
    install_handler(signals, job_handler)
}

/// The most simulated bricks one process serves at once, for
/// [`end_served_bricks`].
const MAX_SERVED: usize = 16;

/// A simulated brick this process serves (a FUSE mount).
struct Served {
    /// The serving process, 0 while the slot is free.
    owner: AtomicI32,
    /// The mount point, NUL-terminated (leaked: a signal handler may read it).
    path: AtomicPtr<libc::c_char>,
    /// `/sys/fs/fuse/connections/N/abort` opened for writing, or -1.
    abort: AtomicI32,
}

static SERVED: [Served; MAX_SERVED] = [const {
    Served {
        owner: AtomicI32::new(0),
        path: AtomicPtr::new(std::ptr::null_mut()),
        abort: AtomicI32::new(-1),
    }
}; MAX_SERVED];

/// Registers a simulated brick this process serves at `mount`, ended by
/// [`end_served_bricks`]; `abort` is its connection's fusectl `abort` file
/// when there is one (kept open until unregistered). Returns the entry, or
/// `None` when the table is full.
pub(crate) fn register_served(
    mount: &std::path::Path,
    abort: Option<std::os::fd::OwnedFd>,
) -> Option<usize> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(mount.as_os_str().as_bytes()).ok()?;
    let me = std::process::id() as i32;
    let i = SERVED.iter().position(|s| {
        s.owner
            .compare_exchange(0, -1, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
    })?;
    let s = &SERVED[i];
    s.path.store(path.into_raw(), Ordering::Release);
    s.abort.store(
        abort.map_or(-1, std::os::fd::IntoRawFd::into_raw_fd),
        Ordering::Release,
    );
    s.owner.store(me, Ordering::Release);
    Some(i)
}

/// Forgets entry `i` (the brick was unmounted); closes its abort file.
pub(crate) fn unregister_served(i: usize) {
    let s = &SERVED[i];
    s.owner.store(-1, Ordering::SeqCst);
    let abort = s.abort.swap(-1, Ordering::SeqCst);
    if abort >= 0 {
        // SAFETY: the descriptor was handed over by register_served and is
        // closed only here, once (swapped out).
        drop(unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(abort) });
    }
    // The path stays leaked: a signal handler may still be reading it.
    s.path.store(std::ptr::null_mut(), Ordering::SeqCst);
    s.owner.store(0, Ordering::SeqCst);
}

/// Ends the service of every simulated brick this process serves, so that
/// no thread of it waits on a file system that nobody will serve: aborts the
/// FUSE connection (fusectl's `abort`, or a forced unmount as root), and
/// detaches the mount. Only in the process that registered them (not in a
/// forked child). Async-signal-safe: `getpid`, `write`, `umount2`.
pub(crate) fn end_served_bricks() {
    // SAFETY: getpid has no preconditions.
    let me = unsafe { libc::getpid() };
    for s in &SERVED {
        if s.owner.load(Ordering::Acquire) != me {
            continue;
        }
        let abort = s.abort.load(Ordering::Acquire);
        if abort >= 0 {
            // SAFETY: a write of a valid 1-byte buffer on a descriptor number.
            unsafe { libc::write(abort, b"1".as_ptr().cast(), 1) };
        }
        let path = s.path.load(Ordering::Acquire);
        if !path.is_null() {
            // SAFETY: `path` is a leaked, NUL-terminated CString that is
            // never freed.
            unsafe { libc::umount2(path, libc::MNT_FORCE | libc::MNT_DETACH) };
        }
    }
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

/// `pread(fd, buf, 0)` into a buffer that need not be initialised (the
/// integer read path's stack buffer: nothing to clear before each read).
/// Returns the part the kernel wrote.
#[inline(always)]
pub(crate) fn pread_uninit<'b>(
    fd: std::os::fd::BorrowedFd<'_>,
    buf: &'b mut [MaybeUninit<u8>],
) -> Result<&'b [u8], nix::errno::Errno> {
    use std::os::fd::AsRawFd;
    // SAFETY: `fd` is borrowed, so open for the call; `buf` is valid and
    // writable for `buf.len()` bytes, and the kernel writes at most that.
    let n = unsafe { libc::pread(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
    match usize::try_from(n) {
        // SAFETY: the kernel wrote the first `n` bytes (`n <= buf.len()`:
        // pread never returns more than it was asked for), so they are
        // initialised; `u8` has no invalid bit patterns.
        Ok(n) if n <= buf.len() => {
            Ok(unsafe { std::slice::from_raw_parts(buf.as_ptr().cast(), n) })
        }
        Ok(_) => Err(nix::errno::Errno::EIO),
        Err(_) => Err(nix::errno::Errno::last()),
    }
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
