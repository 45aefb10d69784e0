//! Finding devices by port address and driver name, never by `motorN`
//! number: the kernel gives a device a new number on every re-plug (and a
//! sensor on every port mode change).

use crate::clock::Instant;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::device::{validate_name, SysfsDevice};
use crate::error::{Error, Result};

mod names;

pub(crate) use names::no_brick;
pub use names::{canonical_port, INPUT_PORTS, OUTPUT_PORTS};

/// What a scan saw of one device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfo {
    /// The device directory, e.g. `/sys/class/tacho-motor/motor3`.
    pub path: PathBuf,
    /// The device name, e.g. `motor3`.
    pub name: String,
    /// The `address` attribute, e.g. `ev3-ports:outA` (empty when the class
    /// has none, like LEDs).
    pub address: String,
    /// The `driver_name` attribute, e.g. `lego-ev3-l-motor` (empty when the
    /// class has none).
    pub driver_name: String,
}

/// `true` when a device `address` is on `port`.
///
/// `port` may be short (`outA`, `in1`) or full (`ev3-ports:outA`), and
/// addresses may be new-style (`ev3-ports:outA`) or old-style (`outA`, as on
/// ev3dev-jessie): the `ev3-ports:` prefix is ignored on both sides. Then
/// the port must be the address itself or a prefix of it up to a `:`, so
/// `in1` matches the I2C sensor address `ev3-ports:in1:i2c1` but not
/// `ev3-ports:in10`.
pub fn address_matches(address: &str, port: &str) -> bool {
    const PREFIX: &str = "ev3-ports:";
    let port = port.strip_prefix(PREFIX).unwrap_or(port);
    let address = address.strip_prefix(PREFIX).unwrap_or(address);
    !port.is_empty()
        && address
            .strip_prefix(port)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(':'))
}

/// Lists the devices of sysfs class `class` under `root`, sorted by name.
/// An entry that cannot be read (unplugged mid-scan, permissions) is logged
/// and skipped; it never aborts the scan.
///
/// # Errors
/// [`Error::InvalidName`] for a bad class name. A missing class directory
/// is an empty list (no such device plugged in).
pub fn list(root: impl AsRef<Path>, class: &str) -> Result<Vec<DeviceInfo>> {
    scan(root.as_ref(), class, |_| true)
}

/// [`list`], reading `driver_name` only of the devices whose `address`
/// `wanted` accepts (the others keep an empty one): finding a device by
/// port reads one attribute of each device on another port, not two. Per
/// device one or two small reads (`openat`, `pread`, `close`); a directory
/// entry that is no directory fails its read (`ENOTDIR`) and is skipped.
fn scan(root: &Path, class: &str, wanted: impl Fn(&str) -> bool) -> Result<Vec<DeviceInfo>> {
    validate_name(class)?;
    let dir = root.join(class);
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::from_io(&dir, crate::error::Operation::Open, None, e)),
    };
    let mut found = Vec::new();
    for entry in entries {
        let Ok(entry) = entry else { continue };
        let path = entry.path();
        let read = |attr: &str| match read_small(&path.join(attr)) {
            Ok(bytes) => Some(String::from_utf8_lossy(crate::value::trim(&bytes)).into_owned()),
            // A class without the attribute (LEDs have no `address`), or a
            // device gone since the directory was read.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => path.is_dir().then(String::new),
            Err(e) => {
                log::debug!("skipping {}: {attr}: {e}", path.display());
                None
            }
        };
        let Some(address) = read("address") else {
            continue;
        };
        let driver_name = if wanted(&address) {
            let Some(driver_name) = read("driver_name") else {
                continue;
            };
            driver_name
        } else {
            String::new()
        };
        found.push(DeviceInfo {
            name: entry.file_name().to_string_lossy().into_owned(),
            path,
            address,
            driver_name,
        });
    }
    found.sort_by_key(|d| natural_key(&d.name));
    Ok(found)
}

/// The most a sysfs attribute shows: one page.
const PAGE: usize = 4096;

/// Reads a small attribute file for discovery without ever blocking or
/// reading much: opened with `O_NONBLOCK` (a FIFO opens at once), then one
/// `pread` of up to a page and a byte (sysfs renders a value whole in one
/// read; a FIFO fails it with `ESPIPE`, a directory with `EISDIR`). More
/// than a page is an error: sysfs never shows that.
pub(crate) fn read_small(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    let file = crate::sys::open_cloexec(path, libc::O_RDONLY | libc::O_NONBLOCK)?;
    // One byte more than a page tells an overlong file from a full page.
    // On the stack: with musl's malloc (the brick's build) a heap buffer
    // of a page is an mmap and a munmap for every read.
    let mut buf = [0; PAGE + 1];
    let n = file.read_at(&mut buf, 0)?;
    if n > PAGE {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "more than a page: no sysfs attribute",
        ));
    }
    Ok(buf[..n].to_vec())
}

fn describe_device(d: &DeviceInfo) -> String {
    format!("{} ({} at {})", d.name, d.driver_name, d.address)
}

/// `motor10` after `motor9`.
fn natural_key(name: &str) -> (String, u64) {
    let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let (stem, number) = name.split_at(name.len() - digits);
    (stem.to_owned(), number.parse().unwrap_or(0))
}

/// A search for one device: class, and optionally port and driver names.
#[derive(Debug, Clone)]
pub struct Query<'a> {
    /// Sysfs class, e.g. `tacho-motor`.
    pub class: &'a str,
    /// Port (`outA`, `ev3-ports:outA`, `in1`...), or `None` for any port.
    pub port: Option<&'a str>,
    /// Accepted driver names; empty accepts any driver.
    pub drivers: &'a [&'a str],
}

impl Query<'_> {
    fn describe(&self) -> String {
        let mut what = self.class.to_owned();
        if let Some(port) = self.port {
            what.push_str(&format!(" on port {port}"));
        }
        if !self.drivers.is_empty() {
            what.push_str(&format!(" with driver {}", self.drivers.join(" or ")));
        }
        what
    }
}

/// Finds exactly one device matching `query` under `root` and opens it.
///
/// # Errors
/// [`Error::NotFound`] naming what was searched and what was seen (devices
/// on that port with other drivers, or all devices of the class);
/// [`Error::Ambiguous`] when several devices match; [`Error::UnknownPort`]
/// for a port no EV3 has (`outE`: the error lists the ports; `OutA` and `A`
/// are taken as `outA`, see [`canonical_port`]); [`Error::NoBrick`] when
/// `root` has none of ev3dev's classes (the message says how to run under
/// the simulated brick).
pub fn find(root: impl AsRef<Path>, query: &Query<'_>) -> Result<SysfsDevice> {
    find_found(root.as_ref(), query).map(|(device, _)| device)
}

/// Finds exactly one device for each of `queries`, listing each class once
/// for the whole batch (two motors of one class: one scan of the class, not
/// two). The devices come in the order of the queries.
///
/// # Errors
/// As [`find`], for the first query that fails.
pub fn find_many(root: impl AsRef<Path>, queries: &[Query<'_>]) -> Result<Vec<SysfsDevice>> {
    Ok(find_many_found(root.as_ref(), queries)?
        .into_iter()
        .map(|(device, _)| device)
        .collect())
}

/// [`find`], with what the scan saw of the device (its `address` and
/// `driver_name`, which the typed devices then need not read again).
pub(crate) fn find_found(root: &Path, query: &Query<'_>) -> Result<(SysfsDevice, DeviceInfo)> {
    find_many_found(root, std::slice::from_ref(query))?
        .pop()
        .ok_or_else(|| Error::NotFound {
            what: query.describe(),
            seen: String::new(),
        })
}

/// A found device's `driver_name` and `address`: what the scan saw
/// (`seen`), or read from the device when it was not found by a scan.
///
/// # Errors
/// Read errors.
pub(crate) fn identity(device: &SysfsDevice, seen: Option<DeviceInfo>) -> Result<(String, String)> {
    Ok(match seen {
        Some(seen) => (seen.driver_name, seen.address),
        None => (
            device.read_string("driver_name")?,
            device.read_string("address")?,
        ),
    })
}

/// [`find_many`], with what the scan saw of each device.
pub(crate) fn find_many_found(
    root: &Path,
    queries: &[Query<'_>],
) -> Result<Vec<(SysfsDevice, DeviceInfo)>> {
    let mut scans: Vec<(&str, Vec<DeviceInfo>)> = Vec::new();
    let mut found = Vec::with_capacity(queries.len());
    for query in queries {
        // An impossible port is refused before any scan.
        let port = query.port.map(canonical_port).transpose()?;
        if !scans.iter().any(|(class, _)| *class == query.class) {
            // `driver_name` matters only on the ports this class is asked
            // on (on all, when one query of it names no port).
            let wanted = |address: &str| {
                queries.iter().filter(|q| q.class == query.class).any(|q| {
                    q.port.is_none_or(|p| {
                        canonical_port(p).is_ok_and(|p| address_matches(address, &p))
                    })
                })
            };
            scans.push((query.class, scan(root, query.class, wanted)?));
        }
        let all = scans
            .iter()
            .find(|(class, _)| *class == query.class)
            .map_or(&[][..], |(_, all)| all.as_slice());
        found.push(select(root, query, port.as_deref(), all)?);
    }
    Ok(found)
}

/// The one device of `all` (a scan of the query's class) that `query`
/// matches, on `port` (canonical) if given.
fn select(
    root: &Path,
    query: &Query<'_>,
    port: Option<&str>,
    all: &[DeviceInfo],
) -> Result<(SysfsDevice, DeviceInfo)> {
    let on_port: Vec<&DeviceInfo> = all
        .iter()
        .filter(|d| port.is_none_or(|p| address_matches(&d.address, p)))
        .collect();
    let matching: Vec<&DeviceInfo> = on_port
        .iter()
        .copied()
        .filter(|d| query.drivers.is_empty() || query.drivers.contains(&d.driver_name.as_str()))
        .collect();
    match matching.as_slice() {
        [one] => Ok((SysfsDevice::scanned(&one.path), (*one).clone())),
        [] => {
            if let Some(no_brick) = all.is_empty().then(|| no_brick(root)).flatten() {
                return Err(no_brick);
            }
            // What is on that port (other drivers), else all of the class
            // (listed again: the scan read no driver on other ports; if
            // that fails, the error is still this one).
            let seen: Vec<String> = if on_port.is_empty() {
                list(root, query.class)
                    .unwrap_or_default()
                    .iter()
                    .map(describe_device)
                    .collect()
            } else {
                on_port.iter().map(|d| describe_device(d)).collect()
            };
            Err(Error::NotFound {
                what: format!("{} under {}", query.describe(), root.display()),
                seen: seen.join(", "),
            })
        }
        many => Err(Error::Ambiguous {
            what: query.describe(),
            matches: many.iter().map(|d| d.path.clone()).collect(),
        }),
    }
}

/// Waits up to `timeout` for a device matching `query` to appear (after a
/// re-plug it comes back with a new number), checking every 50 ms.
///
/// # Errors
/// [`Error::Timeout`] when none appears in time; [`Error::Ambiguous`] at
/// once when several match.
pub fn wait_for(
    root: impl AsRef<Path>,
    query: &Query<'_>,
    timeout: Duration,
) -> Result<SysfsDevice> {
    let start = Instant::now();
    loop {
        match find(root.as_ref(), query) {
            Err(Error::NotFound { .. } | Error::NoBrick { .. }) if start.elapsed() < timeout => {
                std::thread::sleep(Duration::from_millis(50).min(timeout));
            }
            Err(Error::NotFound { .. } | Error::NoBrick { .. }) => {
                return Err(Error::Timeout {
                    what: query.describe(),
                    waited: start.elapsed(),
                })
            }
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_matching() {
        assert!(address_matches("ev3-ports:outA", "outA"));
        assert!(address_matches("outA", "outA"));
        assert!(address_matches("ev3-ports:outA", "ev3-ports:outA"));
        assert!(address_matches("ev3-ports:in1:i2c1", "in1"));
        assert!(address_matches("ev3-ports:in1:i2c1", "ev3-ports:in1"));
        assert!(!address_matches("ev3-ports:outB", "outA"));
        assert!(!address_matches("ev3-ports:in10", "in1"));
        assert!(!address_matches("ev3-ports:in1x", "ev3-ports:in1"));
        assert!(!address_matches("ev3-ports:outA", ""));
        assert!(address_matches("outA", "ev3-ports:outA"));
        assert!(address_matches("ev3-ports:in1:i2c88:sv3", "in1"));
        assert!(address_matches(
            "ev3-ports:in1:i2c88:sv3",
            "ev3-ports:in1:i2c88"
        ));
    }

    /// A class directory in an unpredictable temp directory (mkdtemp),
    /// removed on drop.
    struct Tree(PathBuf);
    impl Tree {
        fn new() -> Tree {
            let base = std::env::temp_dir().join("ev3sysfs-discover-XXXXXX");
            Tree(nix::unistd::mkdtemp(&base).unwrap())
        }
        fn device(&self, name: &str, address: &str, driver: &str) -> PathBuf {
            let dir = self.0.join("tacho-motor").join(name);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("address"), address).unwrap();
            std::fs::write(dir.join("driver_name"), driver).unwrap();
            dir
        }
    }
    impl Drop for Tree {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn find_many_answers_in_query_order_from_one_scan() {
        let tree = Tree::new();
        let a = tree.device("motor0", "ev3-ports:outA\n", "lego-ev3-l-motor\n");
        let b = tree.device("motor1", "ev3-ports:outB\n", "lego-ev3-l-motor\n");
        let query = |port| Query {
            class: "tacho-motor",
            port: Some(port),
            drivers: &["lego-ev3-l-motor"],
        };
        let found = find_many(&tree.0, &[query("outB"), query("outA")]).unwrap();
        let dirs: Vec<&Path> = found.iter().map(SysfsDevice::dir).collect();
        assert_eq!(dirs, [b.as_path(), a.as_path()]);
        // What the scan saw comes along (the typed devices do not read it
        // again).
        let seen = find_many_found(&tree.0, &[query("outA")]).unwrap();
        assert_eq!(seen[0].1.driver_name, "lego-ev3-l-motor");
        assert_eq!(seen[0].1.address, "ev3-ports:outA");
        // One query fails: the batch fails with its error, which names
        // what is there with its driver (read again for it: the scan read
        // no driver on other ports).
        tree.device("motor2", "ev3-ports:outD\n", "lego-ev3-m-motor\n");
        let Err(Error::NotFound { seen, .. }) = find_many(&tree.0, &[query("outA"), query("outC")])
        else {
            panic!("outC found");
        };
        assert_eq!(
            seen,
            "motor0 (lego-ev3-l-motor at ev3-ports:outA), motor1 (lego-ev3-l-motor at \
             ev3-ports:outB), motor2 (lego-ev3-m-motor at ev3-ports:outD)"
        );
        let Err(Error::NotFound { seen, .. }) = find_many(&tree.0, &[query("outD")]) else {
            panic!("a medium motor found as a large one");
        };
        assert_eq!(seen, "motor2 (lego-ev3-m-motor at ev3-ports:outD)");
        assert!(matches!(
            find_many(&tree.0, &[query("outA"), query("outE")]),
            Err(Error::UnknownPort { .. })
        ));
        assert!(find_many(&tree.0, &[]).unwrap().is_empty());
    }

    /// `list` in a thread, so that a hang fails the test instead of
    /// blocking the suite (a hang guard, not a timing measurement).
    fn list_or_hang(root: &Path) -> Vec<DeviceInfo> {
        let (tx, rx) = std::sync::mpsc::channel();
        let root = root.to_path_buf();
        std::thread::spawn(move || tx.send(list(root, "tacho-motor").unwrap()));
        rx.recv_timeout(Duration::from_secs(30))
            .expect("discovery hangs")
    }

    #[test]
    fn a_fifo_in_the_tree_never_blocks_discovery() {
        let tree = Tree::new();
        tree.device("motor0", "ev3-ports:outA\n", "lego-ev3-l-motor\n");
        let odd = tree.device("motor1", "", "");
        for attr in ["address", "driver_name"] {
            std::fs::remove_file(odd.join(attr)).unwrap();
            nix::unistd::mkfifo(&odd.join(attr), nix::sys::stat::Mode::S_IRWXU).unwrap();
        }
        let found = list_or_hang(&tree.0);
        let names: Vec<&str> = found.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["motor0"]);
        assert_eq!(found[0].address, "ev3-ports:outA");
        // A FIFO as a whole device entry is not a device.
        nix::unistd::mkfifo(
            &tree.0.join("tacho-motor/motor2"),
            nix::sys::stat::Mode::S_IRWXU,
        )
        .unwrap();
        assert_eq!(list_or_hang(&tree.0).len(), 1);
    }

    #[test]
    fn discovery_reads_at_most_a_page() {
        let tree = Tree::new();
        tree.device("motor0", "ev3-ports:outA\n", "lego-ev3-l-motor\n");
        // 64 GiB (sparse): reading it whole would exhaust memory.
        let huge = tree.device("motor1", "", "lego-ev3-l-motor\n");
        std::fs::File::create(huge.join("address"))
            .unwrap()
            .set_len(64 << 30)
            .unwrap();
        // Exactly a page is what sysfs can show: still read.
        let page = tree.device("motor2", "", "lego-ev3-m-motor\n");
        let mut address = "x".repeat(4095);
        address.push('\n');
        std::fs::write(page.join("address"), &address).unwrap();
        // More than a page is no sysfs value: that device is skipped too.
        let long = tree.device("motor3", "", "lego-ev3-m-motor\n");
        std::fs::write(long.join("address"), "y".repeat(1 << 20)).unwrap();
        let found = list_or_hang(&tree.0);
        let names: Vec<&str> = found.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["motor0", "motor2"]);
        assert_eq!(found[1].address, address.trim_end());
    }

    #[test]
    fn natural_order() {
        let mut names = vec!["motor10", "motor9", "motor1"];
        names.sort_by_key(|n| natural_key(n));
        assert_eq!(names, ["motor1", "motor9", "motor10"]);
    }
}
