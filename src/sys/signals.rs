//! Signal handling for the stop guard: handlers that chain to the
//! program's own, job control, the table of simulated bricks this process
//! serves (ended from a handler or at exit), and the async-signal-safe
//! calls the handlers make.

use std::cell::UnsafeCell;
use std::io;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

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
    /// The mount point is a directory made for the brick: removed with it.
    remove: AtomicBool,
}

static SERVED: [Served; MAX_SERVED] = [const {
    Served {
        owner: AtomicI32::new(0),
        path: AtomicPtr::new(std::ptr::null_mut()),
        abort: AtomicI32::new(-1),
        remove: AtomicBool::new(false),
    }
}; MAX_SERVED];

/// Registers a simulated brick this process serves at `mount`, ended by
/// [`end_served_bricks`]; `abort` is its connection's fusectl `abort` file
/// when there is one (kept open until unregistered); `remove` says that
/// the mount point was made for the brick and goes with it. Returns the
/// entry, or `None` when the table is full.
pub(crate) fn register_served(
    mount: &std::path::Path,
    abort: Option<std::os::fd::OwnedFd>,
    remove: bool,
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
    s.remove.store(remove, Ordering::Release);
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
/// detaches the mount, then removes a mount point made for the brick (a
/// process that ends leaves no directory behind). Only in the process that
/// registered them (not in a forked child). Async-signal-safe: `getpid`,
/// `write`, `umount2`, `rmdir`.
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
            if s.remove.load(Ordering::Acquire) {
                // SAFETY: as above; an error (still mounted, not root: EBUSY)
                // leaves the directory.
                unsafe { libc::rmdir(path) };
            }
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
fn reraise_default(sig: i32) {
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
