//! The simulated brick's pairs (see the crate root): a large motor's
//! attributes through the typed API, and sensor reads, against raw
//! syscalls on descriptors of the same files.

use std::fs::{File, OpenOptions};
use std::hint::black_box;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use crate::{paired, raw_read_int, raw_write, rounds};

/// A descriptor of `dir/name`, opened as the crate opens it (read-only,
/// or write-only when `write`).
fn open_raw(dir: &Path, name: &str, write: bool) -> Result<File, String> {
    OpenOptions::new()
        .read(!write)
        .write(write)
        .custom_flags(libc::O_SYNC | libc::O_CLOEXEC)
        .open(dir.join(name))
        .map_err(|e| format!("{name}: {e}"))
}

/// This thread, and the brick's threads it starts, on the CPU it runs on
/// until dropped, then back on the CPUs it had (the kernfs bench's fresh
/// process inherits them). A round trip to the brick's thread on another,
/// idle core also waits for that core to wake (on a VM about 55 µs against
/// 3 µs on one core); pinned, the per-round ratios' quartiles went from
/// about ±2 % to ±1 %.
struct OneCpu {
    before: Option<nix::sched::CpuSet>,
    cpu: Option<usize>,
}

impl OneCpu {
    fn pin() -> OneCpu {
        use nix::sched::{sched_getaffinity, sched_getcpu, sched_setaffinity, CpuSet};
        let this = nix::unistd::Pid::from_raw(0);
        let (Ok(before), Ok(cpu)) = (sched_getaffinity(this), sched_getcpu()) else {
            return OneCpu {
                before: None,
                cpu: None,
            };
        };
        let mut one = CpuSet::new();
        let pinned = one.set(cpu).is_ok() && sched_setaffinity(this, &one).is_ok();
        OneCpu {
            before: Some(before),
            cpu: pinned.then_some(cpu),
        }
    }
}

impl Drop for OneCpu {
    fn drop(&mut self) {
        if let Some(before) = &self.before {
            let _ = nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), before);
        }
    }
}

/// The typed API's motor calls on the simulated brick against raw syscalls
/// on the same files, then [`sim_sensor_bench`].
pub fn bench() -> Result<(), String> {
    use ev3sysfs::motor::TachoMotor;
    use ev3sysfs_sim::{MockTree, TachoDriver};
    let one_cpu = OneCpu::pin();
    let tree = MockTree::new().map_err(|e| e.to_string())?;
    tree.add_tacho_motor("outA", TachoDriver::Ev3Large)
        .map_err(|e| e.to_string())?;
    let motor = TachoMotor::find(tree.root(), "outA").map_err(|e| e.to_string())?;
    let dir = motor.device().dir().to_path_buf();
    let open = |name: &str, write: bool| open_raw(&dir, name, write);
    let (duty, position, speed) = (
        open("duty_cycle_sp", true)?,
        open("position", false)?,
        open("speed", false)?,
    );
    println!(
        "simulated brick (FUSE, {}), TachoMotor against raw syscalls, {} paired rounds, {}",
        dir.display(),
        rounds(),
        one_cpu
            .cpu
            .map_or("this thread and the brick's not pinned".into(), |c| {
                format!("this thread and the brick's on CPU {c}")
            })
    );
    let n = 40;
    paired(
        "write",
        n,
        || raw_write(&duty, b"30"),
        || {
            black_box(motor.set_duty_cycle_sp(black_box(30)).ok());
        },
    );
    paired(
        "read",
        n,
        || {
            black_box(raw_read_int(&position));
        },
        || {
            black_box(motor.position().ok());
        },
    );
    paired(
        "control loop",
        n / 2,
        || {
            let x = raw_read_int(&position);
            let y = raw_read_int(&speed);
            black_box(x + y);
            raw_write(&duty, b"30");
        },
        || {
            let x = motor.position().unwrap_or(0);
            let y = motor.speed().unwrap_or(0);
            black_box(x + y);
            black_box(motor.set_duty_cycle_sp(black_box(30)).ok());
        },
    );
    sim_sensor_bench(&tree, n)
}

/// The sensor reads on the simulated brick, `n` per round.
fn sim_sensor_bench(tree: &ev3sysfs_sim::MockTree, n: u32) -> Result<(), String> {
    use ev3sysfs::sensor::{ColorSensor, Sensor, TouchSensor};
    use ev3sysfs_sim::SensorDriver;
    let e = |e: ev3sysfs::Error| e.to_string();
    tree.add_sensor("in1", SensorDriver::Ev3Touch).map_err(e)?;
    tree.add_sensor("in2", SensorDriver::Ev3Color).map_err(e)?;
    let touch = TouchSensor::find(tree.root(), "in1").map_err(e)?;
    let sensor = Sensor::find(tree.root(), "in2", &[]).map_err(e)?;
    let color = ColorSensor::find(tree.root(), "in2").map_err(e)?;
    color.reflected().map_err(e)?;
    let open = |dir: &Path, name: &str| open_raw(dir, name, false);
    let (touch_dir, color_dir) = (touch.sensor().device().dir(), sensor.device().dir());
    let touch0 = open(touch_dir, "value0")?;
    let (value0, mode) = (open(color_dir, "value0")?, open(color_dir, "mode")?);
    println!("simulated brick, sensors against raw preads, same rounds");
    paired(
        "value(0)",
        n,
        || {
            black_box(raw_read_int(&value0));
        },
        || {
            black_box(sensor.value(black_box(0)).ok());
        },
    );
    paired(
        "pressed",
        n,
        || {
            black_box(raw_read_int(&touch0));
        },
        || {
            black_box(touch.pressed().ok());
        },
    );
    paired(
        "reflected",
        n / 2,
        || {
            black_box(raw_read_int(&mode));
            black_box(raw_read_int(&value0));
        },
        || {
            black_box(color.reflected().ok());
        },
    );
    Ok(())
}
