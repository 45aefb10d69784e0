//! Serving a simulated brick from a thread of this process, so that the
//! process never waits on a file system it serves itself (see the module
//! docs of `fs`).

use std::io;
use std::path::Path;
use std::sync::{mpsc, Mutex};
use std::time::SystemTime;

use fuser::{Config, MountOption, Session, SessionACL};

use super::fs::{BrickFs, SharedBrick, ToServing};

/// The service of one mounted brick.
#[derive(Debug)]
pub(crate) struct Service {
    /// Entry in the process's table of served bricks.
    served: Option<usize>,
    /// The serving threads' notifier, which keeps the session's mount.
    serving: mpsc::Sender<ToServing>,
}

impl Service {
    /// Forgets the brick, then unmounts it at `dir`: at once when nothing
    /// is open, else lazily. The serving thread ends with the connection.
    pub(crate) fn end(&mut self, dir: &Path) {
        if let Some(i) = self.served.take() {
            ev3sysfs::guard::served::unregister(i);
        }
        // The session's own unmount, when the serving thread ends, would
        // find the brick gone and warn (fuser 0.18 takes a dead connection
        // for a live one): its mount is taken out first, by the notifier,
        // since the mount holds the `/dev/fuse` descriptor of the serving
        // threads' table (see `fs::Poller`).
        let (answer, answered) = mpsc::sync_channel(1);
        if self.serving.send(ToServing::Unmount(answer)).is_ok() {
            let done = answered
                .recv_timeout(std::time::Duration::from_secs(5))
                .map_err(io::Error::other)
                .and_then(|done| done);
            if let Err(e) = done {
                log::debug!("fuser's unmount of {}: {e}", dir.display());
            }
        }
        unmount(dir);
    }
}

/// Mounts `brick` at `dir` and serves it from a thread of this process
/// with a file descriptor table of its own (see the module docs); a
/// process that ends removes `dir` when it was `made_for_it`.
///
/// # Errors
/// The mount's error, with what the simulated brick needs.
pub(crate) fn mount(brick: SharedBrick, dir: &Path, made_for_it: bool) -> io::Result<Service> {
    install_process_hooks();
    let root = nix::unistd::geteuid().is_root();
    let mut config = Config::default();
    config.mount_options = vec![
        MountOption::FSName("ev3sysfs".into()),
        MountOption::Subtype("ev3sim".into()),
        MountOption::NoExec,
        MountOption::NoAtime,
        // The kernel checks the permission bits, owner and group as on a
        // brick's sysfs after udev: a user outside the group gets EACCES.
        MountOption::DefaultPermissions,
    ];
    // Other users (python-ev3dev2 run as another user by `ev3-sim`) may use
    // it when root mounts it.
    config.acl = if root {
        SessionACL::All
    } else {
        SessionACL::Owner
    };
    let (ready, mounted) = mpsc::sync_channel::<io::Result<mpsc::Sender<ToServing>>>(1);
    let path = dir.to_path_buf();
    std::thread::Builder::new()
        .name("ev3sim-fuse".into())
        .spawn(move || serve(brick, &path, &config, &ready))?;
    let serving = mounted
        .recv()
        .unwrap_or_else(|_| Err(io::Error::other("the serving thread ended")))?;
    let served = ev3sysfs::guard::served::register(dir, abort_file(dir), made_for_it);
    if served.is_none() {
        log::warn!(
            "too many simulated bricks: {} is not ended at exit",
            dir.display()
        );
    }
    Ok(Service { served, serving })
}

/// How long a file system being dropped waits for the `RELEASE`s of files
/// just closed (served within a millisecond or two) before it unmounts
/// anyway.
const RELEASE_WAIT: std::time::Duration = std::time::Duration::from_millis(50);

/// Waits, at most [`RELEASE_WAIT`], until `open_handles` is 0. Closing a
/// file sends the kernel's `RELEASE` in the background: unmounted before it
/// was answered, the connection is gone when the answer goes out (fuser then
/// logs "Failed to send FUSE reply: ENOENT", at the end of a probe run say).
/// The handlers answer a `RELEASE` before they forget the handle, so 0
/// means every answer is out. A file still held, by this process or
/// another, keeps the count up: the unmount is then lazy, after the wait.
pub(crate) fn wait_for_releases(open_handles: impl Fn() -> usize) {
    let deadline = std::time::Instant::now() + RELEASE_WAIT;
    while open_handles() > 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// Unmounts the brick at `dir`; lazily when files are still open (`EBUSY`).
fn unmount(dir: &Path) {
    use nix::mount::{umount2, MntFlags};
    match umount2(dir, MntFlags::empty()) {
        Ok(()) => {}
        Err(nix::errno::Errno::EBUSY) => {
            if let Err(e) = umount2(dir, MntFlags::MNT_DETACH) {
                log::warn!("could not unmount {}: {e}", dir.display());
            }
        }
        // Not root: through fuse3's setuid helper, lazily, unless fuser's
        // own unmount (the same helper) has done it.
        Err(nix::errno::Errno::EPERM) if still_mounted(dir) => {
            let done = std::process::Command::new("fusermount3")
                .arg("-uz")
                .arg(dir)
                .stdout(std::process::Stdio::null())
                .status();
            if !done.is_ok_and(|s| s.success()) {
                log::warn!("could not unmount {} (fusermount3 -uz)", dir.display());
            }
        }
        // EINVAL: not mounted (any more).
        Err(e) => log::debug!("umount {}: {e}", dir.display()),
    }
}

/// `true` unless `dir` is no longer a FUSE mount (a dead connection,
/// `ENOTCONN`, is still mounted).
fn still_mounted(dir: &Path) -> bool {
    use nix::sys::statfs::{statfs, FUSE_SUPER_MAGIC};
    statfs(dir).map_or(true, |fs| fs.filesystem_type() == FUSE_SUPER_MAGIC)
}

/// The serving thread: own descriptor table, guard signals blocked, mount,
/// then serve until unmounted.
fn serve(
    brick: SharedBrick,
    dir: &Path,
    config: &Config,
    ready: &mpsc::SyncSender<io::Result<mpsc::Sender<ToServing>>>,
) {
    use nix::sys::signal::{pthread_sigmask, SigSet, SigmaskHow, Signal};
    let mut blocked = SigSet::empty();
    for sig in ev3sysfs::guard::SIGNALS
        .iter()
        .chain(&ev3sysfs::guard::JOB_SIGNALS)
    {
        if let Ok(sig) = Signal::try_from(*sig) {
            blocked.add(sig);
        }
    }
    // Asynchronous ones only: SIGSEGV, SIGBUS, SIGABRT from this thread
    // itself are delivered anyway.
    let _ = pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&blocked), None);
    if let Err(e) = nix::sched::unshare(nix::sched::CloneFlags::CLONE_FILES) {
        let _ = ready.send(Err(io::Error::other(format!(
            "unshare(CLONE_FILES) for the serving thread: {e}"
        ))));
        return;
    }
    close_inherited_descriptors();
    let (notify, notifications) = mpsc::channel::<ToServing>();
    // Shares this thread's descriptor table: the only other place where
    // `/dev/fuse` is open.
    let notifier = std::thread::Builder::new()
        .name("ev3sim-notify".into())
        .spawn(move || notifier(&notifications));
    if let Err(e) = notifier {
        let _ = ready.send(Err(e));
        return;
    }
    let fs = BrickFs {
        brick,
        notify: notify.clone(),
        uid: nix::unistd::getuid().as_raw(),
        gid: if nix::unistd::geteuid().is_root() {
            super::group::brick_group()
        } else {
            nix::unistd::getgid().as_raw()
        },
        born: SystemTime::now(),
        owners: Mutex::default(),
        held: Mutex::default(),
    };
    let mut session = match Session::new(fs, dir, config) {
        Ok(session) => session,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let _ = notify.send(ToServing::Mount(session.unmount_callable()));
    let _ = ready.send(Ok(notify));
    if let Err(e) = session.run() {
        log::debug!("simulated brick {}: {e}", dir.display());
    }
}

/// The serving threads' notifier: wakes pollers, keeps the session's mount
/// and unmounts it on request; ends when nobody can send any more.
fn notifier(requests: &mpsc::Receiver<ToServing>) {
    let mut mount = None;
    for request in requests {
        match request {
            ToServing::Notify(poller) => {
                if let Err(e) = poller.notify() {
                    log::debug!("poll notification not delivered: {e}");
                }
            }
            ToServing::Mount(unmounter) => mount = Some(unmounter),
            ToServing::Unmount(answer) => {
                let done = mount.take().map_or(Ok(()), |mut m| m.unmount());
                let _ = answer.send(done);
            }
        }
    }
}

/// Closes the copies of the process's descriptors this thread's own table
/// got (a pipe's end kept open here would hide its end of file), except
/// standard input, output and error.
fn close_inherited_descriptors() {
    let Ok(entries) = std::fs::read_dir("/proc/thread-self/fd") else {
        return;
    };
    let fds: Vec<i32> = entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    for fd in fds.into_iter().filter(|fd| *fd > 2) {
        // The directory's own descriptor is closed already: EBADF.
        let _ = nix::unistd::close(fd);
    }
}

/// The connection's fusectl `abort` file, when fusectl is mounted.
fn abort_file(dir: &Path) -> Option<std::os::fd::OwnedFd> {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(dir).ok()?.dev();
    // The connection is named by the kernel's device number: major 0,
    // the minor.
    let minor = nix::sys::stat::minor(dev);
    let path = format!("/sys/fs/fuse/connections/{minor}/abort");
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .ok()
        .map(std::os::fd::OwnedFd::from)
}

/// Once per process: at exit and on the signals that end a process, the
/// bricks this process serves are ended first (for programs without a stop
/// guard; the guard does the same before it writes).
fn install_process_hooks() {
    if let Err(e) = ev3sysfs::guard::served::end_at_process_end() {
        log::warn!("simulated brick: not ended at exit or on signals: {e}");
    }
}
