//! The `async` feature's reactor: one `poll(2)` per wake-up on this thread,
//! no helper thread, no epoll, no allocation per wake-up once warm.
//!
//! A waiting future registers a descriptor (a motor's `state` with
//! `POLLPRI`, which ev3dev notifies; an input device with `POLLIN`) and a
//! deadline ([`WakeUp`]). [`block_on`] polls its future; when it is pending
//! and nothing woke it, it makes one `poll(2)` on every registered
//! descriptor with the earliest deadline as its timeout, marks the
//! registrations whose descriptor has events or whose deadline passed, and
//! polls the future again: only the futures marked look at their device
//! (one `pread` each), the others stay pending without a syscall.

use crate::clock::Instant;
use crate::error::{Error, Operation, Result};
use std::cell::RefCell;
use std::future::Future;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

/// One registered wait.
#[derive(Debug, Clone, Copy)]
struct Entry {
    token: u64,
    /// -1: a deadline alone.
    fd: i32,
    events: i16,
    deadline: Instant,
}

#[derive(Debug, Default)]
struct Reactor {
    next: u64,
    /// Registered, not yet fired.
    waiting: Vec<Entry>,
    /// Tokens that fired and were not yet seen by their future.
    fired: Vec<u64>,
    /// Reused between wake-ups: the `poll` array and its entries' tokens.
    fds: Vec<libc::pollfd>,
    fd_tokens: Vec<u64>,
    /// Inside [`block_on`] on this thread.
    running: bool,
    /// The clock for the futures being polled ([`now`]): read right after
    /// the `poll(2)` that woke them or at their first look; `None` between
    /// two polls of them.
    now: Option<Instant>,
    /// The last `poll(2)`'s deadline had already passed when it started.
    behind: bool,
}

thread_local! {
    static REACTOR: RefCell<Reactor> = RefCell::new(Reactor::default());
}

fn poll_error(errno: nix::errno::Errno) -> Error {
    reactor_error(std::io::Error::from(errno))
}

fn reactor_error(source: std::io::Error) -> Error {
    Error::Io {
        path: std::path::PathBuf::from("(tasks::block_on)"),
        operation: Operation::Poll,
        source,
    }
}

/// Milliseconds from now to `deadline`, rounded up (a 0 ms poll would spin
/// through the last millisecond), at least 0.
fn millis_until(deadline: Instant) -> i32 {
    let left = deadline.saturating_duration_since(Instant::now());
    i32::try_from(left.as_micros().div_ceil(1000)).unwrap_or(i32::MAX)
}

impl Reactor {
    /// See [`now`]: `None` outside `block_on`.
    fn now(&mut self) -> Option<Instant> {
        self.running
            .then(|| *self.now.get_or_insert_with(Instant::now))
    }

    /// One `poll(2)` on every registered descriptor until the earliest
    /// deadline; marks what fired.
    fn wait(&mut self) -> Result<()> {
        let Some(earliest) = self.waiting.iter().map(|e| e.deadline).min() else {
            return Err(reactor_error(std::io::Error::other(
                "the future waits on nothing this reactor knows (no ev3sysfs::tasks wait is \
                 pending), so it would never wake",
            )));
        };
        self.fds.clear();
        self.fd_tokens.clear();
        for e in self.waiting.iter().filter(|e| e.fd >= 0) {
            self.fds.push(libc::pollfd {
                fd: e.fd,
                events: e.events,
                revents: 0,
            });
            self.fd_tokens.push(e.token);
        }
        // A deadline that passed while the futures ran is looked at once
        // (a 0 ms poll); passed again at the next wake-up, the futures
        // cannot keep up with their period (a look that takes longer than
        // it: an overloaded or emulated CPU), and a 0 ms poll again would
        // spin: the thread sleeps at least 1 ms a wake-up until it catches
        // up.
        let millis = millis_until(earliest);
        let timeout = if millis == 0 && self.behind {
            1
        } else {
            millis
        };
        self.behind = millis == 0;
        match crate::sys::poll_raw(&mut self.fds, timeout) {
            Ok(_) | Err(nix::errno::Errno::EINTR) => {}
            Err(errno) => return Err(poll_error(errno)),
        }
        let now = Instant::now();
        self.now = Some(now);
        let (fds, tokens, fired) = (&self.fds, &self.fd_tokens, &mut self.fired);
        self.waiting.retain(|e| {
            let ready = e.deadline <= now
                || tokens
                    .iter()
                    .zip(fds)
                    .any(|(t, p)| *t == e.token && p.revents != 0);
            if ready {
                fired.push(e.token);
            }
            !ready
        });
        Ok(())
    }
}

/// The time for what a wake-up re-checks (the time waited, the next
/// period, a passed deadline) in the futures [`block_on`] is polling: the
/// clock is read once a poll of them (right after the `poll(2)` that woke
/// them, or at their first look), so a wake-up costs two clock reads
/// however often its futures look (each read a syscall on the brick, which
/// has no vDSO); outside `block_on`, the clock. It is late by what the
/// futures ran since, which is long when one of them blocked the thread:
/// so the start of a timeout or a sleep reads the clock itself, and the
/// next `poll(2)`'s timeout reads it afresh.
pub(crate) fn now() -> Instant {
    REACTOR
        .try_with(|r| r.try_borrow_mut().ok().and_then(|mut r| r.now()))
        .ok()
        .flatten()
        .unwrap_or_else(Instant::now)
}

/// Waits for `events` on `fd` (or nothing, for `None`) or `deadline`,
/// whichever comes first, in [`block_on`]'s reactor. Outside `block_on`
/// it blocks the thread in a `poll(2)` of its own instead.
#[derive(Debug)]
pub(crate) struct WakeUp<'a> {
    fd: Option<BorrowedFd<'a>>,
    events: i16,
    deadline: Instant,
    token: Option<u64>,
}

impl<'a> WakeUp<'a> {
    /// Until `events` (`libc::POLLPRI`, `libc::POLLIN`) on `fd`, or
    /// `deadline`.
    pub(crate) fn new(fd: Option<BorrowedFd<'a>>, events: i16, deadline: Instant) -> WakeUp<'a> {
        WakeUp {
            fd,
            events,
            deadline,
            token: None,
        }
    }
}

impl Future for WakeUp<'_> {
    type Output = Result<()>;

    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Result<()>> {
        let fd = self.fd.map_or(-1, |f| f.as_raw_fd());
        let (events, deadline, token) = (self.events, self.deadline, self.token);
        let outcome = REACTOR.with_borrow_mut(|r| {
            if let Some(t) = token {
                return match r.fired.iter().position(|f| *f == t) {
                    Some(i) => {
                        r.fired.swap_remove(i);
                        Ok(None)
                    }
                    None => Ok(Some(t)),
                };
            }
            if !r.running {
                // Not in block_on: wait here, blocking this thread.
                let mut fds = [libc::pollfd {
                    fd,
                    events,
                    revents: 0,
                }];
                let n = usize::from(fd >= 0);
                return match crate::sys::poll_raw(&mut fds[..n], millis_until(deadline)) {
                    Ok(_) | Err(nix::errno::Errno::EINTR) => Ok(None),
                    Err(errno) => Err(poll_error(errno)),
                };
            }
            if r.now().is_some_and(|now| deadline <= now) {
                return Ok(None);
            }
            r.next = r.next.wrapping_add(1);
            let token = r.next;
            r.waiting.push(Entry {
                token,
                fd,
                events,
                deadline,
            });
            Ok(Some(token))
        });
        match outcome {
            Err(e) => Poll::Ready(Err(e)),
            Ok(None) => {
                self.token = None;
                Poll::Ready(Ok(()))
            }
            Ok(Some(t)) => {
                self.token = Some(t);
                Poll::Pending
            }
        }
    }
}

impl Drop for WakeUp<'_> {
    fn drop(&mut self) {
        if let Some(t) = self.token {
            // try_with: nothing to clean up while the thread exits.
            let _ = REACTOR.try_with(|r| {
                if let Ok(mut r) = r.try_borrow_mut() {
                    r.waiting.retain(|e| e.token != t);
                    r.fired.retain(|f| *f != t);
                }
            });
        }
    }
}

/// Set when a waker is woken (a future that yields, or a waker handed to
/// another thread): the future is polled again before the next `poll(2)`.
struct Flag(AtomicBool);

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::Release);
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.store(true, Ordering::Release);
    }
}

/// Marks this thread as running [`block_on`] while alive.
struct Running;

impl Running {
    fn enter() -> Result<Running> {
        REACTOR.with_borrow_mut(|r| {
            if r.running {
                return Err(reactor_error(std::io::Error::other(
                    "block_on inside block_on on the same thread: await the future instead",
                )));
            }
            r.running = true;
            Ok(Running)
        })
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = REACTOR.try_with(|r| {
            if let Ok(mut r) = r.try_borrow_mut() {
                r.running = false;
                r.now = None;
                r.behind = false;
                r.waiting.clear();
                r.fired.clear();
            }
        });
    }
}

/// Runs `future` to completion on this thread: polls it, and while it is
/// pending makes one `poll(2)` per wake-up on the descriptors and deadlines
/// its waits registered (see the [`tasks`](super) docs). No thread is
/// started, nothing panics.
///
/// # Errors
/// [`Error::Io`]: a `poll(2)` error; inside another `block_on` on the
/// same thread; when the future is pending but waits on nothing this
/// reactor knows (a future from another runtime), which would never wake.
pub fn block_on<T>(future: impl Future<Output = T>) -> Result<T> {
    let _running = Running::enter()?;
    let flag = Arc::new(Flag(AtomicBool::new(false)));
    let waker = Waker::from(Arc::clone(&flag));
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        let polled = future.as_mut().poll(&mut cx);
        // The next poll of the future (after a `poll(2)`, or again at once
        // when it yielded) has a clock read of its own.
        REACTOR.with_borrow_mut(|r| r.now = None);
        if let Poll::Ready(value) = polled {
            return Ok(value);
        }
        if flag.0.swap(false, Ordering::Acquire) {
            continue;
        }
        REACTOR.with_borrow_mut(Reactor::wait)?;
    }
}
