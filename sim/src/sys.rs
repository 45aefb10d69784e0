//! The simulator's only `unsafe` code: seccomp user notification for the
//! simulated framebuffer's ioctls ([`crate::fb_ioctl`]), wrapped in safe
//! functions. ev3-sim answers the `FBIOGET_*SCREENINFO` ioctls that a regular
//! file cannot, for the programs it runs.
#![allow(unsafe_code)]

use std::io;

/// A seccomp filter, built before `fork` (no allocation in the child).
pub(crate) struct IoctlTrap {
    program: Vec<libc::sock_filter>,
}

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
#[derive(Debug, Clone, Copy)]
pub(crate) struct TrappedCall {
    pub(crate) id: u64,
    pub(crate) pid: u32,
    pub(crate) args: [u64; 6],
}

/// Waits for the next trapped call on `listener`; `Ok(None)` when no
/// process with the filter is left.
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
        // c_ulong: u64 on 64-bit targets, already u32 on the brick's.
        #[allow(clippy::unnecessary_cast)]
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
pub(crate) fn before_exec(
    command: &mut std::process::Command,
    hook: impl FnMut() -> io::Result<()> + Send + Sync + 'static,
) {
    use std::os::unix::process::CommandExt;
    // SAFETY: callers pass hooks that only make async-signal-safe calls
    // (IoctlTrap::install_and_send).
    unsafe { command.pre_exec(hook) };
}
