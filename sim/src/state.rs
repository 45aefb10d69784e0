//! The simulated brick's state behind its file system: the inode tree (class
//! directories as in `/sys/class`, one directory per device, its attribute
//! files and sub-directories), the registry of devices (each a
//! [`Model`]), the open handles and their pollers.
//!
//! Everything is in one [`Brick`] behind one mutex: the file system thread,
//! the simulator and test code take turns. Nothing here touches the file
//! system; wake-ups of pollers are returned to the caller, to be sent after
//! the lock is released.

use std::collections::{BTreeMap, HashMap, VecDeque};

use super::kobject::{AttrInfo, Effects, Errno, KResult, Model};

mod handles;

/// The root directory's inode (FUSE's root id).
pub(crate) const ROOT_INO: u64 = 1;

/// Creates a model for a driver name on an address (what a lego-port
/// registers after a `mode` or `set_device` store).
pub(crate) type Factory = fn(&str, &str) -> Option<Box<dyn Model>>;

/// One registered device.
struct Device {
    class: &'static str,
    dir: u64,
    model: Box<dyn Model>,
    /// Attribute name (`speed_sp`, `power/control`) -> inode.
    attrs: HashMap<String, u64>,
}

/// What an inode is.
#[derive(Debug)]
pub(crate) enum NodeKind {
    /// A directory and its entries, sorted by name.
    Dir(BTreeMap<String, u64>),
    /// An attribute file of device `dev`.
    Attr {
        /// The device id.
        dev: u64,
        /// The attribute's name relative to the device directory.
        name: String,
        /// Its access, size and kind.
        info: AttrInfo,
        /// Counts `sysfs_notify` calls; a handle that has not read since
        /// the last one polls `POLLPRI`.
        event: u64,
    },
}

/// One inode.
#[derive(Debug)]
pub(crate) struct Node {
    /// The parent directory's inode.
    pub(crate) parent: u64,
    /// What it is.
    pub(crate) kind: NodeKind,
}

/// An open attribute file.
struct Handle<W> {
    ino: u64,
    read: bool,
    write: bool,
    /// The attribute's event count at the last read at offset 0 (or open).
    seen: u64,
    /// The pending poll's waker, if a poller waits.
    poller: Option<W>,
    /// What the last read rendered, and where the next sequential read
    /// starts: as kernfs's seq_file, a read that continues where the last
    /// one ended takes the rest of that rendering (`cat`, python's
    /// `read()`), any other offset renders afresh.
    shown: Vec<u8>,
    read_pos: u64,
}

/// What `poll` reports for a handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PollState {
    /// Nothing new since the last read.
    Quiet,
    /// A `sysfs_notify` since the last read: `POLLPRI | POLLERR`.
    Changed,
    /// The attribute or its device is gone: `POLLPRI | POLLERR`, reads
    /// fail with `ENODEV`.
    Gone,
}

/// The simulated brick. `W` wakes a waiting poller (the FUSE poll handle).
pub(crate) struct Brick<W> {
    nodes: HashMap<u64, Node>,
    next_ino: u64,
    devices: BTreeMap<u64, Device>,
    next_dev: u64,
    /// Per name prefix (`motor` per class, `sensor`, `port`): the next number.
    counters: HashMap<(&'static str, &'static str), u32>,
    handles: HashMap<u64, Handle<W>>,
    next_fh: u64,
    factory: Factory,
    /// The last stores received: path relative to the root, bytes (at
    /// most [`STORE_BYTES_KEPT`] of each).
    stores: VecDeque<(String, Vec<u8>)>,
    /// The bytes in `stores`, at most [`STORES_BYTES_KEPT`].
    stores_bytes: usize,
    /// The last accepted store per (device, attribute).
    last_stored: HashMap<(u64, String), Vec<u8>>,
    /// Models that panicked (device id, what failed), oldest first; a
    /// failed model no longer ticks (see [`Brick::failed`]).
    failures: Vec<(u64, String)>,
    /// Polls answered (see [`Brick::polls_answered`]).
    polls: u64,
    /// When a client last wrote an attribute (see [`Brick::last_write`]).
    last_write: Option<std::time::Instant>,
}

/// How many stores [`Brick::take_stores`] keeps.
const STORES_KEPT: usize = 4096;
/// How much of each store the journal and `last_stored` keep: a page, all
/// kernfs hands a text attribute's store.
const STORE_BYTES_KEPT: usize = 4096;
/// How many bytes the journal keeps in all (its oldest stores go first):
/// clients' writes never grow the simulator without bound.
const STORES_BYTES_KEPT: usize = 1 << 20;

impl<W> std::fmt::Debug for Brick<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Brick")
            .field("devices", &self.devices.len())
            .field("handles", &self.handles.len())
            .finish_non_exhaustive()
    }
}

/// The name prefix of a class's numbered devices; `None` for classes whose
/// devices are named by their driver (`leds`, `power_supply`).
fn prefix(class: &str) -> Option<&'static str> {
    Some(match class {
        "tacho-motor" | "dc-motor" | "servo-motor" => "motor",
        "lego-sensor" => "sensor",
        "lego-port" => "port",
        "board-info" => "board",
        _ => return None,
    })
}

/// `true` when `address` is on port `port` (`ev3-ports:in1` and
/// `ev3-ports:in1:i2c1` are both on `ev3-ports:in1`).
fn on_port(address: &str, port: &str) -> bool {
    address == port
        || address
            .strip_prefix(port)
            .is_some_and(|rest| rest.starts_with(':'))
}

impl<W: Clone> Brick<W> {
    /// An empty brick (only the root directory).
    pub(crate) fn new(factory: Factory) -> Brick<W> {
        let mut nodes = HashMap::new();
        nodes.insert(
            ROOT_INO,
            Node {
                parent: ROOT_INO,
                kind: NodeKind::Dir(BTreeMap::new()),
            },
        );
        Brick {
            nodes,
            next_ino: ROOT_INO + 1,
            devices: BTreeMap::new(),
            next_dev: 1,
            counters: HashMap::new(),
            handles: HashMap::new(),
            next_fh: 1,
            factory,
            stores: VecDeque::new(),
            stores_bytes: 0,
            last_stored: HashMap::new(),
            failures: Vec::new(),
            polls: 0,
            last_write: None,
        }
    }

    /// The inode `ino`.
    pub(crate) fn node(&self, ino: u64) -> Option<&Node> {
        self.nodes.get(&ino)
    }

    /// The path of `ino` relative to the root (`tacho-motor/motor0/command`).
    fn path_of(&self, mut ino: u64) -> String {
        let mut parts = Vec::new();
        while ino != ROOT_INO {
            let Some(node) = self.nodes.get(&ino) else {
                break;
            };
            let parent = node.parent;
            if let Some(Node {
                kind: NodeKind::Dir(children),
                ..
            }) = self.nodes.get(&parent)
            {
                if let Some((name, _)) = children.iter().find(|(_, c)| **c == ino) {
                    parts.push(name.as_str());
                }
            }
            ino = parent;
        }
        parts.reverse();
        parts.join("/")
    }

    /// Polls of attributes answered so far: the kernel asks once a
    /// `poll(2)` and again after every wake-up of the poll.
    pub(crate) fn polls_answered(&self) -> u64 {
        self.polls
    }

    /// When a client last wrote an attribute through the file system
    /// (accepted or refused; injections are not writes).
    pub(crate) fn last_write(&self) -> Option<std::time::Instant> {
        self.last_write
    }

    /// The stores received since the last call, oldest first.
    pub(crate) fn take_stores(&mut self) -> VecDeque<(String, Vec<u8>)> {
        self.stores_bytes = 0;
        std::mem::take(&mut self.stores)
    }

    /// The last value device `id` accepted in a store to `attr`.
    pub(crate) fn last_stored(&self, id: u64, attr: &str) -> Option<&[u8]> {
        self.last_stored
            .get(&(id, attr.to_owned()))
            .map(Vec::as_slice)
    }

    /// The entry `name` of directory `dir`.
    pub(crate) fn lookup(&self, dir: u64, name: &str) -> Option<u64> {
        match &self.nodes.get(&dir)?.kind {
            NodeKind::Dir(children) => children.get(name).copied(),
            NodeKind::Attr { .. } => None,
        }
    }

    fn insert(&mut self, parent: u64, name: &str, kind: NodeKind) -> u64 {
        let ino = self.next_ino;
        self.next_ino += 1;
        self.nodes.insert(ino, Node { parent, kind });
        if let Some(Node {
            kind: NodeKind::Dir(children),
            ..
        }) = self.nodes.get_mut(&parent)
        {
            children.insert(name.to_owned(), ino);
        }
        ino
    }

    /// The directory `name` in `parent`, created if missing.
    fn dir(&mut self, parent: u64, name: &str) -> u64 {
        match self.lookup(parent, name) {
            Some(ino) => ino,
            None => self.insert(parent, name, NodeKind::Dir(BTreeMap::new())),
        }
    }

    /// Removes `ino` and everything below it; returns the removed inodes.
    fn remove_tree(&mut self, ino: u64, removed: &mut Vec<u64>) {
        let Some(node) = self.nodes.remove(&ino) else {
            return;
        };
        removed.push(ino);
        if let NodeKind::Dir(children) = node.kind {
            for child in children.into_values() {
                self.remove_tree(child, removed);
            }
        }
        if let Some(Node {
            kind: NodeKind::Dir(children),
            ..
        }) = self.nodes.get_mut(&node.parent)
        {
            children.retain(|_, c| *c != ino);
        }
    }

    /// Registers `model` as a new device: named `name`, or numbered per
    /// class like the kernel (never reused). Returns the device id and its
    /// directory name.
    pub(crate) fn add(&mut self, model: Box<dyn Model>, name: Option<&str>) -> (u64, String) {
        let class = model.class();
        let name = match (name, prefix(class)) {
            (Some(name), _) => name.to_owned(),
            (None, Some(prefix)) => {
                let counter = self.counters.entry((class, prefix)).or_insert(0);
                let name = format!("{prefix}{counter}");
                *counter += 1;
                name
            }
            (None, None) => class.to_owned(),
        };
        let class_dir = self.dir(ROOT_INO, class);
        let dir = self.dir(class_dir, &name);
        let id = self.next_dev;
        self.next_dev += 1;
        self.devices.insert(
            id,
            Device {
                class,
                dir,
                model,
                attrs: HashMap::new(),
            },
        );
        let _ = self.sync_attributes(id);
        (id, name)
    }

    /// Makes the device's files match [`Model::attributes`]: new ones are
    /// created, missing ones removed (their holders get `ENODEV`), the others
    /// keep their inode. Returns the pollers to wake.
    fn sync_attributes(&mut self, id: u64) -> Vec<W> {
        let Some(device) = self.devices.get(&id) else {
            return Vec::new();
        };
        let wanted = device.model.attributes();
        let dir = device.dir;
        let mut stale: Vec<(String, u64)> = device
            .attrs
            .iter()
            .filter(|(name, _)| !wanted.iter().any(|a| &a.name == *name))
            .map(|(n, i)| (n.clone(), *i))
            .collect();
        stale.sort();
        let mut removed = Vec::new();
        for (name, ino) in &stale {
            self.remove_tree(*ino, &mut removed);
            if let Some(device) = self.devices.get_mut(&id) {
                device.attrs.remove(name);
            }
        }
        for info in wanted {
            let existing = self
                .devices
                .get(&id)
                .and_then(|d| d.attrs.get(&info.name).copied());
            if let Some(ino) = existing {
                if let Some(Node {
                    kind: NodeKind::Attr { info: old, .. },
                    ..
                }) = self.nodes.get_mut(&ino)
                {
                    *old = info;
                }
                continue;
            }
            // `power/control`: sub-directories as sysfs has them.
            let mut parent = dir;
            let mut parts: Vec<&str> = info.name.split('/').collect();
            let Some(leaf) = parts.pop() else { continue };
            for part in parts {
                parent = self.dir(parent, part);
            }
            let kind = NodeKind::Attr {
                dev: id,
                name: info.name.clone(),
                info: info.clone(),
                event: 0,
            };
            let leaf = leaf.to_owned();
            let ino = self.insert(parent, &leaf, kind);
            if let Some(device) = self.devices.get_mut(&id) {
                device.attrs.insert(info.name, ino);
            }
        }
        self.take_pollers(&removed)
    }

    /// Unregisters device `id`: its directory goes away, held handles get
    /// `ENODEV`. Returns the pollers to wake.
    pub(crate) fn remove(&mut self, id: u64) -> Vec<W> {
        let Some(device) = self.devices.remove(&id) else {
            return Vec::new();
        };
        let mut removed = Vec::new();
        self.remove_tree(device.dir, &mut removed);
        self.last_stored.retain(|(dev, _), _| *dev != id);
        self.take_pollers(&removed)
    }

    /// Tells the lego-port that `address` is on what is plugged in now
    /// (the driver name; `None` when unplugged), so that its `status`
    /// follows.
    pub(crate) fn tell_port(&mut self, address: &str, driver: Option<&str>) {
        let port = self.devices.iter_mut().find(|(_, d)| {
            let mut out = Vec::new();
            d.class == "lego-port"
                && d.model.show("address", &mut out).is_ok()
                && on_port(address, String::from_utf8_lossy(&out).trim())
        });
        if let Some((_, device)) = port {
            let mut fx = Effects::default();
            let _ = device
                .model
                .inject("plugged", driver.unwrap_or(""), &mut fx);
        }
    }

    /// `true` while device `id` is registered.
    pub(crate) fn contains(&self, id: u64) -> bool {
        self.devices.contains_key(&id)
    }

    fn take_pollers(&mut self, inos: &[u64]) -> Vec<W> {
        self.handles
            .values_mut()
            .filter(|h| inos.contains(&h.ino))
            .filter_map(|h| h.poller.take())
            .collect()
    }

    /// Runs `f` on device `id`'s model, then carries out its effects.
    /// Returns `f`'s result and the pollers to wake.
    pub(crate) fn with_model<R>(
        &mut self,
        id: u64,
        f: impl FnOnce(&mut dyn Model, &mut Effects) -> R,
    ) -> Option<(R, Vec<W>)> {
        let device = self.devices.get_mut(&id)?;
        let mut fx = Effects::default();
        let result = f(device.model.as_mut(), &mut fx);
        let wake = self.apply(id, fx);
        Some((result, wake))
    }

    /// Every device's class, directory name and model, in the order they
    /// were added (for pictures of the brick: `mock::view`).
    pub(crate) fn each_device(&self, mut f: impl FnMut(&'static str, &str, &dyn Model)) {
        for device in self.devices.values() {
            let name = self.nodes.get(&device.dir).and_then(|node| {
                match &self.nodes.get(&node.parent)?.kind {
                    NodeKind::Dir(entries) => entries
                        .iter()
                        .find(|(_, ino)| **ino == device.dir)
                        .map(|(name, _)| name.as_str()),
                    NodeKind::Attr { .. } => None,
                }
            });
            f(device.class, name.unwrap_or(""), device.model.as_ref());
        }
    }

    /// Renders attribute `attr` of device `id`.
    pub(crate) fn show(&self, id: u64, attr: &str, out: &mut Vec<u8>) -> KResult<()> {
        let device = self.devices.get(&id).ok_or(libc::ENODEV)?;
        if !device.attrs.contains_key(attr) {
            return Err(libc::ENOENT);
        }
        device.model.show(attr, out)
    }

    /// Advances every model by `dt` and carries out their effects. Returns
    /// the pollers to wake.
    pub(crate) fn tick(&mut self, dt: std::time::Duration) -> Vec<W> {
        use std::panic::{catch_unwind, AssertUnwindSafe};
        let ids: Vec<u64> = self.devices.keys().copied().collect();
        let mut wake = Vec::new();
        for id in ids {
            if self.failures.iter().any(|(failed, _)| *failed == id) {
                continue;
            }
            let ticked = catch_unwind(AssertUnwindSafe(|| {
                self.with_model(id, |model, fx| model.tick(dt, fx))
            }));
            match ticked {
                Ok(Some((_, w))) => wake.extend(w),
                Ok(None) => {}
                Err(panic) => self.failed(Some(id), "tick", panic.as_ref()),
            }
        }
        wake
    }

    /// Records that device `id`'s model panicked in `callback` (loudly:
    /// logged, and reported by [`Brick::failures`]).
    pub(crate) fn failed(
        &mut self,
        id: Option<u64>,
        callback: &str,
        panic: &(dyn std::any::Any + Send),
    ) {
        let message = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".to_owned());
        let name = id
            .and_then(|id| self.devices.get(&id))
            .map_or_else(|| "a device".to_owned(), |d| self.path_of(d.dir));
        let what =
            format!("simulated brick: the model of {name} panicked in {callback}: {message}");
        log::error!("{what}");
        self.failures.push((id.unwrap_or(u64::MAX), what));
    }

    /// What failed so far (see [`Brick::failed`]), oldest first.
    pub(crate) fn failures(&self) -> impl Iterator<Item = &str> {
        self.failures.iter().map(|(_, what)| what.as_str())
    }

    /// Carries out what a store, an injection or a tick of device `id`
    /// asked for.
    fn apply(&mut self, id: u64, fx: Effects) -> Vec<W> {
        let mut wake = Vec::new();
        if fx.attributes_changed {
            wake.extend(self.sync_attributes(id));
        }
        for attr in &fx.notify {
            let ino = self
                .devices
                .get(&id)
                .and_then(|d| d.attrs.get(attr.as_str()).copied());
            let Some(ino) = ino else { continue };
            if let Some(Node {
                kind: NodeKind::Attr { event, .. },
                ..
            }) = self.nodes.get_mut(&ino)
            {
                *event += 1;
            }
            wake.extend(self.take_pollers(&[ino]));
        }
        if let Some(request) = fx.port {
            let on_it: Vec<u64> = self
                .devices
                .iter()
                .filter(|(_, d)| d.class != "lego-port")
                .filter(|(_, d)| {
                    let mut out = Vec::new();
                    d.model.show("address", &mut out).is_ok()
                        && on_port(String::from_utf8_lossy(&out).trim(), &request.address)
                })
                .map(|(id, _)| *id)
                .collect();
            for dev in on_it {
                wake.extend(self.remove(dev));
            }
            if let Some(driver) = &request.driver {
                match (self.factory)(driver, &request.address) {
                    Some(model) => {
                        self.add(model, None);
                    }
                    None => log::debug!("no model for driver {driver}"),
                }
            }
        }
        wake
    }
}

/// An errno from a model, checked to be one (models return positive errnos).
pub(crate) fn errno(e: Errno) -> Errno {
    if e > 0 {
        e
    } else {
        libc::EIO
    }
}
