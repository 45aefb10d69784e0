//! The brick's open file handles: opening an attribute in a direction it
//! allows, reads rendered afresh, stores of the whole buffer and polls.

use super::{Brick, Handle, NodeKind, PollState};
use super::{STORES_BYTES_KEPT, STORES_KEPT, STORE_BYTES_KEPT};
use crate::kobject::{AttrInfo, Effects, KResult};

impl<W: Clone> Brick<W> {
    /// Opens attribute `ino` for reading and/or writing: `EACCES` (even for
    /// root, as kernfs) when the attribute does not allow that direction.
    pub(crate) fn open(&mut self, ino: u64, read: bool, write: bool) -> KResult<u64> {
        let node = self.nodes.get(&ino).ok_or(libc::ENOENT)?;
        let NodeKind::Attr { info, event, .. } = &node.kind else {
            return Err(libc::EISDIR);
        };
        let bits = info.mode.bits();
        if (read && bits & 0o444 == 0) || (write && bits & 0o222 == 0) {
            return Err(libc::EACCES);
        }
        let fh = self.next_fh;
        self.next_fh += 1;
        self.handles.insert(
            fh,
            Handle {
                ino,
                read,
                write,
                seen: *event,
                poller: None,
                shown: Vec::new(),
                read_pos: 0,
            },
        );
        Ok(fh)
    }

    /// Closes handle `fh`.
    pub(crate) fn release(&mut self, fh: u64) {
        self.handles.remove(&fh);
    }

    /// How many handles are open: files some process holds, or closed ones
    /// whose `RELEASE` the kernel has queued but the brick not yet served.
    pub(crate) fn open_handles(&self) -> usize {
        self.handles.len()
    }

    /// The attribute behind handle `fh`: device id, name, info.
    fn attr_of(&self, fh: u64) -> KResult<(u64, String, AttrInfo, u64)> {
        let handle = self.handles.get(&fh).ok_or(libc::EBADF)?;
        match self.nodes.get(&handle.ino).map(|n| &n.kind) {
            Some(NodeKind::Attr {
                dev,
                name,
                info,
                event,
            }) => Ok((*dev, name.clone(), info.clone(), *event)),
            _ => Err(libc::ENODEV),
        }
    }

    /// Reads through handle `fh`: the value rendered afresh, from `offset`.
    pub(crate) fn read(&mut self, fh: u64, offset: u64, size: usize) -> KResult<Vec<u8>> {
        let (dev, name, _, event) = self.attr_of(fh)?;
        let handle = self.handles.get_mut(&fh).ok_or(libc::EBADF)?;
        if !handle.read {
            return Err(libc::EBADF);
        }
        handle.seen = event;
        let device = self.devices.get(&dev).ok_or(libc::ENODEV)?;
        if offset == 0 || offset != handle.read_pos {
            handle.shown.clear();
            device.model.show(&name, &mut handle.shown)?;
        }
        let out = &handle.shown;
        let start = usize::try_from(offset).unwrap_or(usize::MAX).min(out.len());
        let end = start.saturating_add(size).min(out.len());
        handle.read_pos = end as u64;
        Ok(out[start..end].to_vec())
    }

    /// Writes through handle `fh`: one store of the whole buffer (or a
    /// positional store). Returns the bytes consumed (or the store's errno)
    /// and the pollers to wake.
    pub(crate) fn write(&mut self, fh: u64, offset: u64, data: &[u8]) -> (KResult<usize>, Vec<W>) {
        let (dev, name, info) = match self.attr_of(fh) {
            Ok((dev, name, info, _)) => (dev, name, info),
            Err(e) => return (Err(e), Vec::new()),
        };
        let Some(handle) = self.handles.get(&fh).filter(|h| h.write) else {
            return (Err(libc::EBADF), Vec::new());
        };
        let path = self.path_of(handle.ino);
        self.last_write = Some(std::time::Instant::now());
        let kept = &data[..data.len().min(STORE_BYTES_KEPT)];
        while self.stores.len() >= STORES_KEPT || self.stores_bytes + kept.len() > STORES_BYTES_KEPT
        {
            let Some((_, old)) = self.stores.pop_front() else {
                break;
            };
            self.stores_bytes -= old.len();
        }
        self.stores_bytes += kept.len();
        self.stores.push_back((path, kept.to_vec()));
        let Some(device) = self.devices.get_mut(&dev) else {
            return (Err(libc::ENODEV), Vec::new());
        };
        let mut fx = Effects::default();
        let stored = if info.positional {
            device.model.store_at(&name, offset, data, &mut fx)
        } else {
            // kernfs hands a store at most a page.
            let len = data.len().min(4096);
            device.model.store(&name, &data[..len], &mut fx)
        };
        if stored.is_ok() {
            self.last_stored.insert((dev, name), kept.to_vec());
        }
        // Effects of a failed store still happen (a driver may have
        // changed something before refusing).
        (stored, self.apply(dev, fx))
    }

    /// What a poll of handle `fh` reports now; `poller` is kept to be woken
    /// on the next change when nothing is pending. Returns the poller that
    /// is not kept (this one, or the one it replaces), to be dropped
    /// without waking anybody: FUSE wakes every poll of a file with one
    /// notification, so waking a replaced poller would wake the poll that
    /// replaced it, which polls again, replaces again... (a notification
    /// storm that kept a poll from ever timing out on one CPU).
    pub(crate) fn poll(&mut self, fh: u64, poller: Option<W>) -> (PollState, Option<W>) {
        self.polls += 1;
        let state = match self.attr_of(fh) {
            Ok((_, _, _, event)) => {
                if self.handles.get(&fh).is_some_and(|h| h.seen != event) {
                    PollState::Changed
                } else {
                    PollState::Quiet
                }
            }
            Err(_) => PollState::Gone,
        };
        if state == PollState::Quiet && poller.is_some() {
            if let Some(handle) = self.handles.get_mut(&fh) {
                return (state, std::mem::replace(&mut handle.poller, poller));
            }
        }
        (state, poller)
    }
}
