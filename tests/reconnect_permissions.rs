//! `reconnect()` during udev's permission window: the new motor's files
//! refuse access for a moment (PermissionDenied), and reconnect retries
//! instead of failing. A child process running as `nobody` against a mock
//! tree whose new files are made accessible a moment after the replug.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use ev3sysfs::motor::TachoMotor;
use ev3sysfs_sim::{MockTree, TachoDriver};

const CHILD_ENV: &str = "EV3SYSFS_RECONNECT_CHILD";
const NOBODY: u32 = 65534;

#[test]
#[ignore = "run as a child process by the test below"]
fn reconnect_child() {
    if std::env::var(CHILD_ENV).is_err() {
        return;
    }
    let root = ev3sysfs::default_root();
    let motor = TachoMotor::find(&root, "outA").unwrap();
    println!("ready");
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).unwrap();
    match motor.reconnect(&root, Duration::from_secs(10)) {
        Ok(_) => println!("reconnected"),
        Err(e) => println!("failed: {e}"),
    }
}

fn open_up(dir: &Path) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            open_up(&path);
        } else {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        }
    }
}

#[test]
fn reconnect_retries_while_udev_sets_permissions() {
    if !common::is_root() {
        common::skip("needs root to run a child as nobody");
        return;
    }
    let tree = MockTree::new().unwrap();
    let mock = tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    open_up(tree.root());
    let mut child = common::own_binary(std::env::current_exe().unwrap())
        .args([
            "reconnect_child",
            "--exact",
            "--include-ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, "1")
        .env(ev3sysfs::ROOT_ENV, tree.root())
        .uid(NOBODY)
        .gid(NOBODY)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let ready = lines
        .by_ref()
        .any(|l| l.unwrap().trim_end().ends_with("ready"));
    if !ready {
        let out = child.wait_with_output().unwrap();
        panic!(
            "child never got ready: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    tree.unplug(&mock).unwrap();
    tree.replug(&mock).unwrap();
    // The new files are root's, not yet readable/writable by nobody.
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "go").unwrap();
    std::thread::sleep(Duration::from_millis(300));
    open_up(tree.root());
    let rest: Vec<String> = lines.map(|l| l.unwrap()).collect();
    let out = child.wait_with_output().unwrap();
    let text = rest.join("\n");
    assert!(
        text.contains("reconnected"),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
