//! One-call moves and the drive base at any values (speeds, angles,
//! distances, radii, positions, `count_per_rot`, `max_speed`, wheel and
//! axle): an error or a saturated command, never a panic, an overflow or a
//! wrap. The motors are attribute files of a captured large motor in a
//! temporary directory (a plain file system: commands are written, nothing
//! moves).
#![no_main]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use ev3sysfs::drive::DriveBase;
use ev3sysfs::motor::{TachoMotor, Then};
use ev3sysfs::units::{DegPerSec, Degrees, Millimetres, MmPerSec, Percent};
use libfuzzer_sys::fuzz_target;

const FIXTURE: &str = include_str!("../../tests/fixtures/large_motor.attrs");
const PORTS: [&str; 3] = ["outA", "outB", "outC"];

fn unescape(text: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let mut bytes = text.bytes();
    while let Some(b) = bytes.next() {
        if b != b'\\' {
            out.push(b);
            continue;
        }
        match bytes.next() {
            Some(b'n') => out.push(b'\n'),
            Some(b't') => out.push(b'\t'),
            Some(b'x') => {
                let hex = [bytes.next().unwrap(), bytes.next().unwrap()];
                out.push(u8::from_str_radix(std::str::from_utf8(&hex).unwrap(), 16).unwrap());
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

/// `tacho-motor/motor{0,1,2}` on outA..outC, made once per process.
fn root() -> &'static PathBuf {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        use std::os::unix::fs::PermissionsExt;
        let base = if Path::new("/dev/shm").is_dir() {
            PathBuf::from("/dev/shm")
        } else {
            std::env::temp_dir()
        };
        let root = base.join(format!("ev3sysfs-fuzz-moves-{}", std::process::id()));
        for (i, port) in PORTS.iter().enumerate() {
            let dir = root.join("tacho-motor").join(format!("motor{i}"));
            for line in FIXTURE.lines().map(str::trim) {
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                let (name, quoted) = line.split_once(' ').unwrap();
                let mut contents = unescape(&quoted[1..quoted.len() - 1]);
                if name == "address" {
                    contents = format!("{port}\n").into_bytes();
                }
                let path = dir.join(name);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, contents).unwrap();
                let writable = [
                    "command",
                    "speed_sp",
                    "position_sp",
                    "time_sp",
                    "duty_cycle_sp",
                    "position",
                    "stop_action",
                    "polarity",
                    "ramp_up_sp",
                    "ramp_down_sp",
                ];
                let mode = if name == "command" {
                    0o220
                } else if writable.contains(&name) {
                    0o664
                } else {
                    0o444
                };
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            }
        }
        root
    })
}

fn motor_dir(i: usize) -> PathBuf {
    root().join("tacho-motor").join(format!("motor{i}"))
}

/// Writes an attribute file whole (what the driver would show).
fn set(i: usize, name: &str, value: i32) {
    std::fs::write(motor_dir(i).join(name), format!("{value}\n")).unwrap();
}

fuzz_target!(|input: ((i32, i32, i32, i32), Vec<(u8, i32, i32)>)| {
    let ((cpr, max_speed, wheel, axle), ops) = input;
    for i in 0..3 {
        set(i, "count_per_rot", cpr);
        set(i, "max_speed", max_speed);
        set(i, "position", 0);
    }
    let root = root();
    let Ok(arm) = TachoMotor::find(root, "outA") else {
        return;
    };
    let (Ok(left), Ok(right)) = (
        TachoMotor::find(root, "outB"),
        TachoMotor::find(root, "outC"),
    ) else {
        return;
    };
    let mut base = DriveBase::new(left, right, Millimetres(wheel), Millimetres(axle)).ok();
    for (op, a, b) in ops.into_iter().take(32) {
        match op % 12 {
            0 => set(usize::from(op / 12 % 3), "position", a),
            1 => {
                let _ = arm.run_angle(DegPerSec(a), Degrees(b), Then::Coast, false);
            }
            2 => {
                let _ = arm.run_target(Percent(a), Degrees(b), Then::Brake, false);
            }
            3 => {
                let time = Duration::from_millis(u64::from(b.unsigned_abs()) << (op / 12 % 40));
                let _ = arm.run_time(DegPerSec(a), time, Then::Coast, false);
            }
            4 => {
                let _ = (arm.reset_angle(Degrees(a)), arm.angle());
            }
            _ => {
                let Some(base) = base.as_mut() else {
                    continue;
                };
                let _ = match op % 12 {
                    5 => base.start_straight(Millimetres(a)),
                    6 => base.start_turn(Degrees(a)),
                    7 => base.start_curve(Millimetres(a), Degrees(b)),
                    8 => base.drive(MmPerSec(a), DegPerSec(b)),
                    9 => base.state().map(drop),
                    10 => base.distance().map(drop),
                    _ => {
                        base.set_speeds(MmPerSec(a), DegPerSec(b));
                        Ok(())
                    }
                };
            }
        }
    }
});
