//! The deploy scripts against fake `ssh` and `scp` that act on a local
//! directory standing in for the brick: the copy, the quoting of arguments,
//! the brickrun fallback, and the error when the brick cannot be reached.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use common::TempDir;

fn script(path: &Path, text: &str) {
    fs::write(path, text).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

/// A PATH with fake ssh/scp: the "brick" is `home`.
fn fake_tools(dir: &Path, home: &Path) {
    script(
        &dir.join("ssh"),
        &format!(
            "#!/bin/sh\n# fake ssh: skip options, then HOST, then the command\n\
             while [ $# -gt 0 ]; do case \"$1\" in -o) shift 2;; -*) shift;; *) break;; esac; done\n\
             host=$1; shift\n\
             case \"$host\" in *unreachable*) echo \"ssh: connect to host $host: No route to host\" >&2; exit 255;; esac\n\
             cd {home:?} && exec sh -c \"$*\"\n",
            home = home
        ),
    );
    script(
        &dir.join("scp"),
        &format!(
            "#!/bin/sh\n# fake scp: FILES... HOST:DIR/\n\
             while [ $# -gt 0 ]; do case \"$1\" in -o) shift 2;; -*) shift;; *) break;; esac; done\n\
             for last; do :; done\n\
             dest={home:?}/${{last#*:}}\n\
             while [ $# -gt 1 ]; do cp \"$1\" \"$dest\"; shift; done\n",
            home = home
        ),
    );
}

fn run(args: &[&str], path_dir: &Path, host: &str) -> std::process::Output {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = format!("{}:{}", path_dir.display(), std::env::var("PATH").unwrap());
    Command::new(repo.join(args[0]))
        .args(&args[1..])
        .env("PATH", path)
        .env("EV3_HOST", host)
        .output()
        .unwrap()
}

#[test]
fn cargo_runner_copies_and_runs_with_arguments_intact() {
    let tmp = TempDir::new("deploy");
    let (bin, home) = (tmp.path().join("bin"), tmp.path().join("home"));
    fs::create_dir_all(&bin).unwrap();
    fs::create_dir_all(&home).unwrap();
    fake_tools(&bin, &home);
    let program = tmp.path().join("robot-program");
    script(&program, "#!/bin/sh\nfor a; do echo \"arg:$a\"; done\n");

    let out = run(
        &[
            "deploy/cargo-runner",
            program.to_str().unwrap(),
            "--port",
            "out A",
            "it's",
        ],
        &bin,
        "robot@fake-brick",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        home.join("ev3sysfs/robot-program").is_file(),
        "copied to $EV3_DIR"
    );
    assert_eq!(stdout, "arg:--port\narg:out A\narg:it's\n");

    // deploy/run: the program is already there.
    let out = run(
        &["deploy/run", "robot-program", "x y"],
        &bin,
        "robot@fake-brick",
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "arg:x y\n");
    let out = run(&["deploy/run", "missing-program"], &bin, "robot@fake-brick");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("deploy/push"));

    // With brickrun on the brick, the program goes through it.
    script(&bin.join("brickrun"), "#!/bin/sh\necho brickrun \"$@\"\n");
    let out = run(&["deploy/run", "robot-program"], &bin, "robot@fake-brick");
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("brickrun -r -- ./robot-program"));
}

#[test]
fn unreachable_brick_is_a_clear_error() {
    let tmp = TempDir::new("deploy-unreachable");
    let (bin, home) = (tmp.path().join("bin"), tmp.path().join("home"));
    fs::create_dir_all(&bin).unwrap();
    fs::create_dir_all(&home).unwrap();
    fake_tools(&bin, &home);
    for args in [
        &["deploy/cargo-runner", "/bin/true"][..],
        &["deploy/push", "/bin/true"],
        &["deploy/run", "x"],
    ] {
        let out = run(args, &bin, "robot@unreachable-brick");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("cannot reach the brick at robot@unreachable-brick"),
            "{stderr}"
        );
        assert!(
            stderr.contains("No route to host") && stderr.contains("EV3_HOST"),
            "{stderr}"
        );
    }
    let out = run(
        &["deploy/cargo-runner", "/nonexistent/binary"],
        &bin,
        "robot@fake-brick",
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("no such file"));
}
