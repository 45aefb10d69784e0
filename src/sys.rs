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

// ---- standin: seccomp user notification for the simulated framebuffer ------
// (feature `sim`): ev3-sim answers the `FBIOGET_*SCREENINFO` ioctls that a
// regular file cannot, for the programs it runs. Kept in one block at the end.

/// A seccomp filter, built before `fork` (no allocation in the child).
#[cfg(all(feature = "sim", target_os = "linux"))]
pub(crate) struct IoctlTrap {
    program: Vec<libc::sock_filter>,
}

#[cfg(all(feature = "sim", target_os = "linux"))]
impl IoctlTrap {
    /// A filter that hands every `ioctl(_, cmd, _)` with `cmd` in `cmds`
    /// to a supervisor and lets everything else through; `None` on an
    /// architecture it does not know.
    pub(crate) fn new(cmds: &[u32]) -> Option<IoctlTrap> {
        let arch: u32 = if cfg!(target_arch = "x86_64") {
            0xc000_003e
        } else if cfg!(target_arch = "aarch64") {
            0xc000_00b7
        } else {
            return None;
        };
        let stmt = |code: u32, k: u32| libc::sock_filter {
            code: code as u16,
            jt: 0,
            jf: 0,
            k,
        };
        let jeq = |k: u32, jt: u8, jf: u8| libc::sock_filter {
            code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
            jt,
            jf,
            k,
        };
        // The BPF constants' type differs between libc targets.
        #[allow(clippy::unnecessary_cast)]
        let (load, ret) = (
            (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u32,
            (libc::BPF_RET | libc::BPF_K) as u32,
        );
        let n = u8::try_from(cmds.len()).ok()?;
        let mut program = vec![
            stmt(load, 4), // seccomp_data.arch
            jeq(arch, 1, 0),
            stmt(ret, libc::SECCOMP_RET_ALLOW),
            stmt(load, 0), // seccomp_data.nr
            jeq(libc::SYS_ioctl as u32, 1, 0),
            stmt(ret, libc::SECCOMP_RET_ALLOW),
            stmt(load, 24), // args[1], its low 32 bits (little-endian)
        ];
        for (i, cmd) in cmds.iter().enumerate() {
            // Matched: jump over the other tests and the allow.
            let to_notify = n - 1 - i as u8 + 1;
            program.push(jeq(*cmd, to_notify, 0));
        }
        program.push(stmt(ret, libc::SECCOMP_RET_ALLOW));
        program.push(stmt(ret, libc::SECCOMP_RET_USER_NOTIF));
        Some(IoctlTrap { program })
    }

    /// Installs the filter on the calling thread (and what it execs and
    /// forks) and sends the listener over the Unix socket `socket`. Only
    /// async-signal-safe syscalls: meant for between `fork` and `exec`.
    pub(crate) fn install_and_send(&self, socket: i32) -> io::Result<()> {
        let prog = libc::sock_fprog {
            len: self.program.len() as u16,
            filter: self.program.as_ptr().cast_mut(),
        };
        // SAFETY: `prog` points into `self.program`, alive for the call.
        let listener = unsafe {
            libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                libc::SECCOMP_FILTER_FLAG_NEW_LISTENER,
                &prog as *const libc::sock_fprog,
            )
        };
        if listener < 0 {
            return Err(io::Error::last_os_error());
        }
        let listener = listener as i32;
        let sent = send_fd(socket, listener);
        // SAFETY: the listener is ours; the supervisor got its own copy.
        unsafe { libc::close(listener) };
        sent
    }
}

/// Sends `fd` over the Unix socket `socket` (`SCM_RIGHTS`), with a stack
/// buffer: async-signal-safe.
#[cfg(all(feature = "sim", target_os = "linux"))]
fn send_fd(socket: i32, fd: i32) -> io::Result<()> {
    #[repr(C, align(8))]
    struct Control([u8; 64]);
    let mut control = Control([0; 64]);
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    // SAFETY: msghdr is plain data; every pointer in it refers to a local
    // that outlives the sendmsg call; CMSG_* stay inside `control` (64 bytes
    // hold one cmsghdr with one int on every Linux target).
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.0.as_mut_ptr().cast();
        msg.msg_controllen = libc::CMSG_SPACE(std::mem::size_of::<i32>() as u32) as _;
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<i32>() as u32) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<i32>(), fd);
        if libc::sendmsg(socket, &msg, 0) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Receives one descriptor sent with `SCM_RIGHTS` on `socket`.
#[cfg(all(feature = "sim", target_os = "linux"))]
pub(crate) fn receive_fd(
    socket: &std::os::unix::net::UnixStream,
) -> io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    #[repr(C, align(8))]
    struct Control([u8; 64]);
    let mut control = Control([0; 64]);
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    // SAFETY: as in send_fd: every pointer refers to a local that outlives
    // the call, CMSG_* stay within `control`, and a received descriptor is
    // a new one of this process that nothing else owns.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.0.as_mut_ptr().cast();
        msg.msg_controllen = control.0.len() as _;
        if libc::recvmsg(socket.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC) < 0 {
            return Err(io::Error::last_os_error());
        }
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if cmsg.is_null()
            || (*cmsg).cmsg_level != libc::SOL_SOCKET
            || (*cmsg).cmsg_type != libc::SCM_RIGHTS
        {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                "no descriptor was sent",
            ));
        }
        let fd = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<i32>());
        Ok(OwnedFd::from_raw_fd(fd))
    }
}

/// A trapped system call, as the supervisor receives it.
#[cfg(all(feature = "sim", target_os = "linux"))]
#[derive(Debug, Clone, Copy)]
pub(crate) struct TrappedCall {
    pub(crate) id: u64,
    pub(crate) pid: u32,
    pub(crate) args: [u64; 6],
}

/// Waits for the next trapped call on `listener`; `Ok(None)` when no
/// process with the filter is left.
#[cfg(all(feature = "sim", target_os = "linux"))]
pub(crate) fn receive_trapped(listener: &std::os::fd::OwnedFd) -> io::Result<Option<TrappedCall>> {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    use std::os::fd::{AsFd, AsRawFd};
    loop {
        let mut fds = [PollFd::new(listener.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::NONE) {
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => return Err(e.into()),
            Ok(_) => {}
        }
        let revents = fds[0].revents().unwrap_or(PollFlags::empty());
        if !revents.contains(PollFlags::POLLIN) {
            return Ok(None);
        }
        // SAFETY: seccomp_notif is plain data, zeroed as the kernel wants;
        // the ioctl writes exactly one of it.
        let mut notif: libc::seccomp_notif = unsafe { std::mem::zeroed() };
        let r = unsafe {
            libc::ioctl(
                listener.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_RECV as _,
                &mut notif as *mut libc::seccomp_notif,
            )
        };
        if r < 0 {
            let e = io::Error::last_os_error();
            // The caller died meanwhile (ENOENT), or a signal: next one.
            if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::EINTR)) {
                continue;
            }
            return Err(e);
        }
        return Ok(Some(TrappedCall {
            id: notif.id,
            pid: notif.pid,
            args: notif.data.args,
        }));
    }
}

/// Answers trapped call `id`: 0, or the error `errno` when not 0, or
/// (with `proceed`) lets the kernel carry it out as if it had not been
/// trapped.
#[cfg(all(feature = "sim", target_os = "linux"))]
pub(crate) fn answer_trapped(
    listener: &std::os::fd::OwnedFd,
    id: u64,
    errno: i32,
    proceed: bool,
) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let mut resp = libc::seccomp_notif_resp {
        id,
        val: 0,
        error: if proceed { 0 } else { -errno },
        flags: if proceed {
            libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32
        } else {
            0
        },
    };
    // SAFETY: `resp` is a complete seccomp_notif_resp, alive for the call.
    let r = unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_SEND as _,
            &mut resp as *mut libc::seccomp_notif_resp,
        )
    };
    if r < 0 {
        let e = io::Error::last_os_error();
        // The caller is gone: nothing to answer.
        if e.raw_os_error() == Some(libc::ENOENT) {
            return Ok(());
        }
        return Err(e);
    }
    Ok(())
}

/// Runs `hook` in the child between `fork` and `exec` of `command`. The
/// hook must only make async-signal-safe calls (no allocation, no locks).
#[cfg(all(feature = "sim", target_os = "linux"))]
pub(crate) fn before_exec(
    command: &mut std::process::Command,
    hook: impl FnMut() -> io::Result<()> + Send + Sync + 'static,
) {
    use std::os::unix::process::CommandExt;
    // SAFETY: callers pass hooks that only make async-signal-safe calls
    // (IoctlTrap::install_and_send).
    unsafe { command.pre_exec(hook) };
}
// ---- end standin -----------------------------------------------------------
