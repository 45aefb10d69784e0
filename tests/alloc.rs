//! Reads and writes of open attributes allocate nothing: a counting global
//! allocator watches the test thread while it drives a device, on a mock tree
//! and (as root) on real kernfs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
// A global allocator is `unsafe` by definition; this file is test-only.
#![allow(unsafe_code)]

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use common::with_kernfs;
use ev3sysfs::{value, SysfsDevice};
use ev3sysfs_sim::TachoDriver;

struct Counting;

thread_local! {
    // Per thread: tests run in parallel, each counts its own thread only.
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn count() {
    // `try_with`: the thread-locals may be gone while a thread exits.
    if COUNTING.try_with(Cell::get).unwrap_or(false) {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
    }
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        System.alloc(layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        System.alloc_zeroed(layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        System.realloc(ptr, layout, new_size)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations made by `f` on this thread.
fn allocations_in(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.with(Cell::get);
    COUNTING.with(|c| c.set(true));
    f();
    COUNTING.with(|c| c.set(false));
    ALLOCATIONS.with(Cell::get) - before
}

const N: usize = 1000;

/// Drives every hot-path method of a device whose attributes are open.
fn hot_path(dev: &SysfsDevice, text_attr: &str, int_attr: &str) {
    let text = dev.attribute(text_attr).unwrap();
    let int = dev.attribute(int_attr).unwrap();
    for i in 0..N {
        // Through the device (cached lookup by name) ...
        dev.write_int(int_attr, 1280 + (i % 100) as i64).unwrap();
        assert_eq!(dev.read_int(int_attr).unwrap(), 1280 + (i % 100) as i32);
        dev.write_str(text_attr, if i % 2 == 0 { "run-forever" } else { "stop" })
            .unwrap();
        let len = dev.read_text(text_attr, |t| Ok(t.len())).unwrap();
        assert!(len == 11 || len == 4);
        // ... and through the attribute handles.
        int.write_int(1500).unwrap();
        assert_eq!(int.read_i64().unwrap(), 1500);
        text.write_str("running ramping").unwrap();
        assert_eq!(text.read_flags(&["running", "ramping"]).unwrap(), 0b11);
        assert!(text.list_contains("ramping").unwrap());
        let n = text
            .read_text(|t| Ok(value::words(t).filter(|w| w.starts_with('r')).count()))
            .unwrap();
        assert_eq!(n, 2);
    }
}

/// The hot path on a simulated brick's tacho motor, with values its
/// driver takes.
fn brick_hot_path(dev: &SysfsDevice) {
    let polarity = dev.attribute("polarity").unwrap();
    let speed_sp = dev.attribute("speed_sp").unwrap();
    let state = dev.attribute("state").unwrap();
    let commands = dev.attribute("commands").unwrap();
    for i in 0..N {
        // Through the device (cached lookup by name) ...
        dev.write_int("speed_sp", (i % 100) as i64).unwrap();
        assert_eq!(dev.read_int("speed_sp").unwrap(), (i % 100) as i32);
        dev.write_str("polarity", if i % 2 == 0 { "inversed" } else { "normal" })
            .unwrap();
        let len = dev.read_text("polarity", |t| Ok(t.len())).unwrap();
        assert!(len == 8 || len == 6);
        // ... and through the attribute handles.
        speed_sp.write_int(500).unwrap();
        assert_eq!(speed_sp.read_i64().unwrap(), 500);
        polarity.write_str("normal").unwrap();
        assert_eq!(state.read_flags(&["running", "ramping"]).unwrap(), 0);
        assert!(commands.list_contains("run-forever").unwrap());
        let n = commands
            .read_text(|t| Ok(value::words(t).filter(|w| w.starts_with("run")).count()))
            .unwrap();
        assert_eq!(n, 5);
    }
}

#[test]
fn simulated_brick_hot_path_allocates_nothing() {
    let Some(tree) = common::brick() else { return };
    let mock = tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    let dev = SysfsDevice::open(tree.root(), "tacho-motor", &mock.name()).unwrap();
    // Opening allocates (paths, cache slots): that happens once, up front.
    dev.preopen(&["speed_sp", "polarity", "state", "commands"])
        .unwrap();
    let allocations = allocations_in(|| brick_hot_path(&dev));
    assert_eq!(allocations, 0, "{allocations} allocations in {N} rounds");
    // Every write reached the brick as one store.
    assert_eq!(tree.take_stores().len(), 4 * N);
}

#[test]
fn typed_motor_and_sensor_hot_paths_allocate_nothing() {
    use ev3sysfs::motor::TachoMotor;
    use ev3sysfs::sensor::{ColorSensor, Sensor, TouchSensor};
    use ev3sysfs_sim::SensorDriver;
    let Some(tree) = common::brick() else { return };
    tree.add_tacho_motor("outA", TachoDriver::Ev3Large).unwrap();
    tree.add_sensor("in1", SensorDriver::Ev3Touch).unwrap();
    tree.add_sensor("in2", SensorDriver::Ev3Color).unwrap();
    tree.add_sensor("in3", SensorDriver::Ev3Color).unwrap();
    let motor = TachoMotor::find(tree.root(), "outA").unwrap();
    let touch = TouchSensor::find(tree.root(), "in1").unwrap();
    let color = Sensor::find(tree.root(), "in2", &[]).unwrap();
    let typed = ColorSensor::find(tree.root(), "in3").unwrap();
    motor.run_direct(5).unwrap();
    let mut values = [0; 8];
    let allocations = allocations_in(|| {
        for i in 0..N as i32 {
            motor.set_speed_sp(i % 1000).unwrap();
            motor.run_direct(i % 100).unwrap();
            assert!(motor.position().unwrap() >= 0);
            assert!(motor.state().unwrap().running());
            assert!(!touch.pressed().unwrap());
            assert_eq!(color.value(0).unwrap(), 0);
            color.set_mode("COL-REFLECT").unwrap(); // unchanged: one read, no write
            assert_eq!(color.values(&mut values).unwrap(), 1);
            assert_eq!(color.scaled(0).unwrap().raw, 0);
            // The typed reading checks the mode on the device, then reads.
            assert_eq!(typed.reflected().unwrap(), 0);
        }
    });
    assert_eq!(allocations, 0, "{allocations} allocations in {N} rounds");
}

#[test]
fn counting_allocator_sees_allocations() {
    // The counter works: opening an attribute allocates.
    let Some(tree) = common::brick() else { return };
    let mock = tree
        .add_tacho_motor("outB", TachoDriver::Ev3Medium)
        .unwrap();
    let dev = SysfsDevice::open(tree.root(), "tacho-motor", &mock.name()).unwrap();
    assert!(allocations_in(|| assert_eq!(dev.read_int("max_speed").unwrap(), 1560)) > 0);
    assert!(allocations_in(|| drop(dev.read_string("driver_name").unwrap())) > 0);
}

#[test]
fn real_kernfs_hot_path_allocates_nothing() {
    with_kernfs(|k| {
        let dev = SysfsDevice::open(&k.class_root, "net", &k.ifname).unwrap();
        dev.preopen(&["ifalias", "mtu"]).unwrap();
        // The namespace thread has its own thread-local flag: count here.
        let allocations = allocations_in(|| hot_path(&dev, "ifalias", "mtu"));
        assert_eq!(allocations, 0, "{allocations} allocations in {N} rounds");
    });
}

#[test]
fn datalog_rows_allocate_nothing_after_the_first() {
    use ev3sysfs::datalog::DataLog;
    let dir = common::TempDir::new("datalog");
    let path = dir.path().join("log.csv");
    let mut log = DataLog::create(&path, &["left", "right", "heading"]).unwrap();
    log.row(&[1, 2, 3]).unwrap();
    // 1000 rows at 100 Hz worth of data: several flushes of the buffer.
    let allocations = allocations_in(|| {
        for i in 0..1000i64 {
            log.row(&[i, -i * 1000, i64::MAX - i]).unwrap();
        }
        log.flush().unwrap();
    });
    assert_eq!(allocations, 0, "{allocations} allocations in 1000 rows");
    drop(log);
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1002);
    assert_eq!(lines[0], "time_ms,left,right,heading");
    let last: Vec<&str> = lines[1001].split(',').collect();
    assert_eq!(last[1..], ["999", "-999000", "9223372036854774808"]);
    assert!(last[0].parse::<u64>().is_ok(), "{}", lines[1001]);
}
