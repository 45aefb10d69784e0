//! What makes `ev3-sim` a stand-in for a whole brick beyond `/sys/class`:
//! the `/dev` a program sees in the private mount namespace, the `beep`
//! program python-ev3dev2's `Sound` runs, and the checks of a mount
//! directory (a stale mount of a killed ev3-sim, one already served).

use std::path::Path;
use std::time::Duration;

use ev3sysfs::sound::Beeper;

/// The shell run by `unshare` in the new mount namespace. Arguments: the
/// brick's class root, the simulated devices' root (`input/`, `fb0`), a
/// staging directory, a directory holding `beep`, then the command.
///
/// `/dev` becomes a tmpfs that holds every entry of the host's `/dev`
/// (bound one by one, symlinks copied) plus the brick's `input/` and `fb0`
/// where ev3dev has them; the host's `/dev` is untouched. `/usr/bin` gets
/// the simulator's `beep` (an overlay: nothing is written to the host).
pub(crate) const NAMESPACE_SCRIPT: &str = r#"
set -e
mount --bind "$1" /sys/class || exit 125
stage="$3"
mount --rbind /dev "$stage"
mount -t tmpfs -o mode=755,nosuid ev3-sim-dev /dev
for e in "$stage"/* "$stage"/.[!.]*; do
    [ -e "$e" ] || [ -L "$e" ] || continue
    n=${e##*/}
    case "$n" in input|fb0) continue ;; esac
    if [ -L "$e" ]; then cp -P "$e" "/dev/$n"
    elif [ -d "$e" ]; then mkdir "/dev/$n"; mount --rbind "$e" "/dev/$n"
    else : > "/dev/$n"; mount --bind "$e" "/dev/$n"; fi
done
if [ -d "$2/input" ]; then
    mkdir /dev/input; mount --bind "$2/input" /dev/input
    : > /dev/fb0; mount --bind "$2/fb0" /dev/fb0
fi
umount -l "$stage"
mount -t overlay ev3-sim-bin -o lowerdir="$4":/usr/bin /usr/bin || echo "ev3-sim: no beep for this program (overlayfs: $?)" >&2
shift 4
set +e
exec "$@"
"#;

/// `beep` as ev3dev's (`-f HZ -l MS -r REPS -d MS -D MS -n ...`), playing
/// on the simulated beeper (`$EV3SYSFS_DEV` or `/dev`). Returns the exit
/// status.
pub(crate) fn beep(args: &[String]) -> u8 {
    #[derive(Clone, Copy)]
    struct Note {
        hz: f64,
        ms: u64,
        reps: u32,
        delay: u64,
        delay_after_last: bool,
    }
    const DEFAULT: Note = Note {
        hz: 440.0,
        ms: 200,
        reps: 1,
        delay: 100,
        delay_after_last: false,
    };
    let mut notes = vec![DEFAULT];
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let Some(note) = notes.last_mut() else { break };
        let mut value = || it.next().and_then(|v| v.parse::<f64>().ok());
        let ok = match arg.as_str() {
            "-f" => value().map(|v| note.hz = v),
            "-l" => value().map(|v| note.ms = v.clamp(0.0, 60_000.0) as u64),
            "-r" => value().map(|v| note.reps = v.clamp(1.0, 1000.0) as u32),
            "-d" => value().map(|v| {
                note.delay = v.clamp(0.0, 60_000.0) as u64;
                note.delay_after_last = false;
            }),
            "-D" => value().map(|v| {
                note.delay = v.clamp(0.0, 60_000.0) as u64;
                note.delay_after_last = true;
            }),
            "-n" | "--new" => {
                notes.push(DEFAULT);
                Some(())
            }
            _ => None,
        };
        if ok.is_none() {
            eprintln!("beep (ev3-sim): bad argument {arg:?}");
            return 1;
        }
    }
    let beeper = match Beeper::open_default() {
        Ok(b) => b,
        Err(e) => {
            eprintln!("beep (ev3-sim): {e}");
            return 1;
        }
    };
    for note in notes {
        let hz = note.hz.round().clamp(0.0, 20_000.0) as u32;
        // The driver clamps to 100..=10 000 Hz, as the simulated one does.
        let hz = if hz == 0 { 0 } else { hz.clamp(100, 10_000) };
        for rep in 0..note.reps {
            if let Err(e) = beeper.tone(hz, Duration::from_millis(note.ms)) {
                eprintln!("beep (ev3-sim): {e}");
                return 1;
            }
            if rep + 1 < note.reps || note.delay_after_last {
                std::thread::sleep(Duration::from_millis(note.delay));
            }
        }
    }
    0
}

/// What is mounted at `dir` now, from `/proc/self/mountinfo`: the file
/// system type and source, or `None`.
fn mount_at(dir: &Path) -> Option<(String, String)> {
    let info = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let dir = dir.to_string_lossy();
    info.lines().rev().find_map(|line| {
        let fields: Vec<&str> = line.split(' ').collect();
        if fields.get(4) != Some(&dir.as_ref()) {
            return None;
        }
        let dash = fields.iter().position(|f| *f == "-")?;
        Some((
            (*fields.get(dash + 1)?).to_owned(),
            (*fields.get(dash + 2)?).to_owned(),
        ))
    })
}

/// Checks the directory `--mount` is to serve: a stale mount left by a
/// killed ev3-sim (`ENOTCONN`) is unmounted (said on stderr); a directory
/// another ev3-sim serves is refused; a missing one too.
pub(crate) fn check_mount_dir(dir: &Path) -> Result<(), String> {
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_owned());
    match std::fs::metadata(&dir) {
        Err(e) if e.raw_os_error() == Some(libc::ENOTCONN) => {
            eprintln!(
                "ev3-sim: {} is a stale mount (its ev3-sim was killed): unmounting it",
                dir.display()
            );
            let detached = nix::mount::umount2(&dir, nix::mount::MntFlags::MNT_DETACH).is_ok()
                || std::process::Command::new("fusermount3")
                    .args(["-u", "-z"])
                    .arg(&dir)
                    .status()
                    .is_ok_and(|s| s.success());
            if !detached {
                return Err(format!(
                    "{} is a stale mount and could not be unmounted: run `fusermount3 -u -z {0}` \
                     (or `umount -l {0}` as root)",
                    dir.display()
                ));
            }
            Ok(())
        }
        Err(e) => Err(format!("{}: {e}", dir.display())),
        Ok(meta) if !meta.is_dir() => Err(format!("{} is not a directory", dir.display())),
        Ok(_) => match mount_at(&dir) {
            Some((kind, source)) if kind.starts_with("fuse") && source == "ev3sysfs" => {
                Err(format!(
                    "{} is already served by another ev3-sim: stop that one first (SIGTERM), \
                 or serve another directory",
                    dir.display()
                ))
            }
            _ => Ok(()),
        },
    }
}
