//! File names and text that look like options reach aplay and espeak-ng as
//! file names and text, never as options (issue 18): stand-in players on a
//! private PATH record their argv, one argument a line.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use common::TempDir;
use ev3sysfs::sound::Players;

/// An executable script `name` in `bin` that appends its arguments, one a
/// line, to `log` and swallows its stdin.
fn recorder(bin: &Path, name: &str, log: &Path) {
    let path = bin.join(name);
    fs::write(
        &path,
        format!(
            "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done >> {}\ncat > /dev/null\n",
            log.display()
        ),
    )
    .unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
}

/// A minimal WAV header (the players check RIFF/WAVE).
fn wav(path: &Path) {
    let mut header = b"RIFF\x24\0\0\0WAVEfmt ".to_vec();
    header.resize(44, 0);
    fs::write(path, header).unwrap();
}

const CHILD_ENV: &str = "EV3SYSFS_TEST_PLAYERS_BIN";

/// Run by `a_wav_named_like_an_option_is_a_file_for_aplay` in a child
/// process whose working directory holds `-Dnull` (a test must not change
/// the working directory of the test harness's other threads).
#[test]
#[ignore = "run by a_wav_named_like_an_option_is_a_file_for_aplay"]
fn play_relative_dash_file() {
    let Some(bin) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    Players::in_dirs([bin]).play_wav("-Dnull").unwrap();
}

#[test]
fn a_wav_named_like_an_option_is_a_file_for_aplay() {
    let tmp = TempDir::new("sound-args");
    let bin = tmp.path().join("bin");
    fs::create_dir(&bin).unwrap();
    let log = tmp.path().join("aplay.log");
    recorder(&bin, "aplay", &log);
    wav(&tmp.path().join("-Dnull"));
    let out = common::child_test(
        "play_relative_dash_file",
        CHILD_ENV,
        bin.to_str().unwrap(),
        tmp.path(),
    )
    .current_dir(tmp.path())
    .output()
    .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let args = common::contents(&log);
    let args: Vec<&str> = args.lines().collect();
    assert!(!args.contains(&"-Dnull"), "passed as an option: {args:?}");
    // The file, in a form no option parser takes for an option.
    let file = args.last().unwrap();
    assert!(!file.starts_with('-'), "{args:?}");
    assert_eq!(
        fs::canonicalize(tmp.path().join(file)).unwrap(),
        fs::canonicalize(tmp.path().join("-Dnull")).unwrap()
    );

    // An absolute path is passed as it is.
    fs::remove_file(&log).unwrap();
    let wav_path = tmp.path().join("a.wav");
    wav(&wav_path);
    Players::in_dirs([&bin]).play_wav(&wav_path).unwrap();
    assert_eq!(
        common::contents(&log).lines().last().unwrap(),
        wav_path.to_str().unwrap()
    );
}

#[test]
fn text_like_an_option_is_spoken_as_text() {
    let tmp = TempDir::new("speak-args");
    let bin = tmp.path().join("bin");
    fs::create_dir(&bin).unwrap();
    let log = tmp.path().join("espeak.log");
    recorder(&bin, "espeak-ng", &log);
    recorder(&bin, "aplay", &tmp.path().join("aplay.log"));
    let out = tmp.path().join("x.wav");
    let text = format!("-w {}", out.display());
    Players::in_dirs([&bin]).speak(&text).unwrap();
    let args = common::contents(&log);
    let args: Vec<&str> = args.lines().collect();
    // Options end ("--") before the text, which is one argument.
    let at = args.iter().position(|a| *a == "--").expect("no --");
    assert_eq!(&args[at + 1..], [text.as_str()], "{args:?}");
    assert!(!args[..at].contains(&"-w"), "{args:?}");
    for leading in ["-", "--", "---x"] {
        fs::remove_file(&log).unwrap();
        Players::in_dirs([&bin]).speak(leading).unwrap();
        assert_eq!(common::contents(&log).lines().last(), Some(leading));
    }
}
