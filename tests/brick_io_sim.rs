//! The simulated brick's buttons, beeper and screen (feature `sim`): device
//! nodes served over FUSE by this process ([`ev3sysfs_sim::SimulatedIo`]),
//! driven with the same code as a brick's. Without FUSE every test says why
//! and returns.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
// The counting global allocator is `unsafe` by definition; test-only.
#![allow(unsafe_code)]

mod brick_io_common;
mod common;

use std::fs;
use std::path::Path;
use std::time::Duration;

use brick_io_common::{allocations_in, black_pixels, draw_picture};
use common::TempDir;
use ev3sysfs::buttons::{Action, Button, ButtonSet, Buttons};
use ev3sysfs::screen::{Geometry, Screen};
use ev3sysfs::sound::{Beeper, Note};
use ev3sysfs::Error;
use ev3sysfs_sim::SimulatedIo;

/// Mounts the simulated devices, or says why it cannot and returns None.
fn mount(tmp: &TempDir, geometry: Geometry) -> Option<SimulatedIo> {
    match SimulatedIo::mount(tmp.path().join("dev"), geometry) {
        Ok(sim) if !evdev_ioctl_works(&sim) => {
            common::skip(
                "EVIOCGKEY does not reach the file system here (qemu-user answers ENOSYS)",
            );
            None
        }
        Ok(sim) => Some(sim),
        Err(e) => {
            common::skip(&format!("the simulated brick's devices need FUSE: {e}"));
            None
        }
    }
}

/// Whether an EVIOCGKEY ioctl reaches the simulated buttons: qemu-user
/// does not pass it through (ENOSYS).
fn evdev_ioctl_works(sim: &SimulatedIo) -> bool {
    Buttons::open(sim.buttons_path())
        .and_then(|b| b.pressed())
        .map_or_else(|e| e.errno() != Some(libc::ENOSYS), |_| true)
}

#[test]
fn simulated_buttons_answer_eviocgkey_and_queue_events() {
    let tmp = TempDir::new("sim-buttons");
    let Some(sim) = mount(&tmp, Geometry::EV3_MONO) else {
        return;
    };
    let buttons = Buttons::open(sim.buttons_path()).unwrap();
    assert_eq!(buttons.pressed().unwrap(), ButtonSet::EMPTY);
    assert_eq!(buttons.next_event(Some(Duration::ZERO)).unwrap(), None);

    sim.press(Button::Enter);
    sim.press(Button::Up);
    let mut set = ButtonSet::EMPTY;
    assert_eq!(allocations_in(|| set = buttons.pressed().unwrap()), 0);
    assert_eq!(set, [Button::Enter, Button::Up].into_iter().collect());
    // As evdev since Linux 3.12: EVIOCGKEY discarded the two queued
    // presses; only what came after it is read.
    sim.release(Button::Up);
    sim.press(Button::Up);
    let seen: Vec<_> = (0..2)
        .map(|_| {
            let e = buttons.next_event(Some(Duration::from_secs(5))).unwrap();
            let e = e.expect("an event");
            (e.button, e.action)
        })
        .collect();
    assert_eq!(
        seen,
        [
            (Button::Up, Action::Released),
            (Button::Up, Action::Pressed)
        ]
    );
    sim.release(Button::Up);
    buttons.pressed().unwrap();
    assert_eq!(buttons.next_event(Some(Duration::ZERO)).unwrap(), None);

    // Already in the wanted state: immediate; otherwise a timeout.
    buttons
        .wait_for_press(Button::Enter, Duration::from_secs(5))
        .unwrap();
    let err = buttons
        .wait_for_release(Button::Enter, Duration::from_millis(20))
        .unwrap_err();
    assert!(matches!(err, Error::Timeout { .. }), "{err}");
    assert!(err.to_string().contains("enter released"), "{err}");

    // A press from another thread wakes a waiter sleeping in poll.
    std::thread::scope(|s| {
        let waiter = s.spawn(|| buttons.wait_for_press(Button::Left, Duration::from_secs(30)));
        sim.press(Button::Left);
        waiter.join().unwrap().unwrap();
    });
    let pressed = buttons.wait_for_any_press(Duration::from_secs(1)).unwrap();
    assert!(pressed.contains(Button::Left));

    // A wait that started before a 0 ms click (press and release before
    // the waiter looks again) sees it in the queue.
    sim.release(Button::Left);
    std::thread::scope(|s| {
        let waiter = s.spawn(|| buttons.wait_for_press(Button::Down, Duration::from_secs(30)));
        std::thread::sleep(Duration::from_millis(200));
        sim.click(Button::Down);
        waiter.join().unwrap().unwrap();
    });
    assert!(!buttons.is_pressed(Button::Down).unwrap());

    // Every open file has its own queue, as with evdev.
    let second = Buttons::open(sim.buttons_path()).unwrap();
    sim.click(Button::Right);
    for b in [&buttons, &second] {
        let mut actions = Vec::new();
        while let Some(e) = b.next_event(Some(Duration::ZERO)).unwrap() {
            if e.button == Button::Right {
                actions.push(e.action);
            }
        }
        assert_eq!(actions, [Action::Pressed, Action::Released]);
    }
    assert_eq!(sim.pressed(), second.pressed().unwrap());
}

#[test]
fn simulated_buttons_block_a_blocking_reader_until_an_event() {
    use std::io::Read;
    let tmp = TempDir::new("sim-blocking");
    let Some(sim) = mount(&tmp, Geometry::EV3_MONO) else {
        return;
    };
    // Like evdev: read-only, whole events, and a plain read waits.
    let err = fs::OpenOptions::new()
        .write(true)
        .open(sim.buttons_path())
        .unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EACCES));
    let mut file = fs::File::open(sim.buttons_path()).unwrap();
    let mut small = [0u8; 4];
    assert_eq!(
        file.read(&mut small).unwrap_err().raw_os_error(),
        Some(libc::EINVAL)
    );
    std::thread::scope(|s| {
        let reader = s.spawn(move || {
            let mut buf = [0u8; 2 * ev3sysfs::input::EVENT_SIZE];
            let n = file.read(&mut buf).unwrap();
            (n, ev3sysfs::input::InputEvent::from_bytes(&buf).unwrap())
        });
        sim.press(Button::Down);
        let (n, first) = reader.join().unwrap();
        assert_eq!(
            n,
            2 * ev3sysfs::input::EVENT_SIZE,
            "the key event and its EV_SYN"
        );
        assert_eq!(
            (first.kind, first.code, first.value),
            (1, Button::Down.code(), 1)
        );
    });
}

#[test]
fn simulated_beeper_records_tones_as_the_driver_plays_them() {
    let tmp = TempDir::new("sim-beeper");
    let Some(sim) = mount(&tmp, Geometry::EV3_MONO) else {
        return;
    };
    let beeper = Beeper::open(sim.beeper_path()).unwrap();
    let ms = Duration::from_millis;
    beeper
        .play(&[
            Note::new(440, ms(1)),
            Note::rest(ms(1)),
            Note::new(880, ms(1)),
        ])
        .unwrap();
    beeper.start_tone(1000).unwrap();
    drop(beeper); // stops the tone
    let hz: Vec<u32> = sim.tones().iter().map(|t| t.hz).collect();
    assert_eq!(hz, [440, 0, 0, 0, 880, 0, 1000, 0]);
    let tones = sim.tones();
    assert!(tones.windows(2).all(|w| w[0].at <= w[1].at));
    // Reading the beeper is refused, as on the brick (write-only use).
    assert!(Buttons::open(sim.beeper_path()).is_err());
}

#[test]
fn simulated_framebuffer_reads_back_what_was_drawn() {
    for geometry in [Geometry::EV3_MONO, Geometry::EV3_XRGB] {
        let tmp = TempDir::new("sim-screen");
        let Some(sim) = mount(&tmp, geometry) else {
            return;
        };
        let sysfs = sim.write_sysfs(tmp.path().join("class")).unwrap();
        let mut screen = Screen::open(sim.framebuffer_path(), &sysfs).unwrap();
        assert_eq!(screen.geometry(), geometry);
        let want = draw_picture(&mut screen);
        assert_eq!(allocations_in(|| screen.show().unwrap()), 0);
        assert_eq!(sim.framebuffer(), screen.buffer());

        let mut reader = Screen::open(sim.framebuffer_path(), &sysfs).unwrap();
        reader.load().unwrap();
        assert_eq!(black_pixels(&reader), want, "\n{}", reader.to_ascii());
    }
}

#[test]
fn a_mock_tree_with_brick_io_has_graphics_fb0_and_the_devices_beside_it() {
    let tree = match ev3sysfs_sim::MockTree::ev3() {
        Ok(tree) => tree,
        Err(e) => return common::skip(&format!("the simulated brick needs FUSE: {e}")),
    };
    let sim = tree.add_brick_io(Geometry::EV3_XRGB).unwrap();
    let sysfs = tree.root().join("graphics/fb0");
    assert_eq!(sim.sysfs_dir(), Some(sysfs.as_path()));
    assert_eq!(common::contents(&sysfs.join("virtual_size")), "178,128\n");
    assert_eq!(common::contents(&sysfs.join("stride")), "712\n");
    // The LCD has one mode: another is refused at the writer's write.
    let err = fs::write(sysfs.join("bits_per_pixel"), "1\n").unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EINVAL));
    fs::write(sysfs.join("bits_per_pixel"), "32\n").unwrap();
    let mut dev = tree.root().as_os_str().to_owned();
    dev.push(".dev");
    assert_eq!(sim.dev_root(), Path::new(&dev));

    let mut screen = sim.open_screen().unwrap();
    assert_eq!(screen.geometry(), Geometry::EV3_XRGB);
    let want = draw_picture(&mut screen);
    screen.show().unwrap();
    let mut reader = Screen::open(sim.framebuffer_path(), &sysfs).unwrap();
    reader.load().unwrap();
    assert_eq!(black_pixels(&reader), want);
    if !evdev_ioctl_works(&sim) {
        return common::skip(
            "EVIOCGKEY does not reach the file system here (qemu-user answers ENOSYS)",
        );
    }
    let buttons = Buttons::open(sim.buttons_path()).unwrap();
    sim.press(Button::Backspace);
    assert!(buttons.is_pressed(Button::Backspace).unwrap());
}

const N: usize = 50;
const CHILD_ENV: &str = "EV3SYSFS_BRICK_IO_STRACE_CHILD";
const BEGIN: &str = "/ev3sysfs-brick-io-window-begin";
const END: &str = "/ev3sysfs-brick-io-window-end";

/// Started under strace by the test below: the hot paths, between two
/// marker `stat`s, on the simulated devices.
#[test]
#[ignore = "started under strace by simulated_hot_paths_are_one_syscall_each"]
fn strace_child() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    let tmp = TempDir::new("strace-child");
    let sim = SimulatedIo::mount(tmp.path().join("dev"), Geometry::EV3_MONO).unwrap();
    let buttons = Buttons::open(sim.buttons_path()).unwrap();
    let beeper = Beeper::open(sim.beeper_path()).unwrap();
    let screen = sim.open_screen().unwrap();
    sim.press(Button::Up);
    let _ = fs::metadata(BEGIN);
    for _ in 0..N {
        assert!(buttons.pressed().unwrap().contains(Button::Up));
        beeper.start_tone(440).unwrap();
        beeper.stop().unwrap();
        screen.show().unwrap();
    }
    // A wait that cannot succeed: it sleeps in one poll, never spins.
    let err = buttons
        .wait_for_release(Button::Up, Duration::from_millis(50))
        .unwrap_err();
    assert!(matches!(err, Error::Timeout { .. }));
    let _ = fs::metadata(END);
}

/// `1234  ioctl(3, ...) = 96` -> (1234, "ioctl"); `None` for the second
/// half of a call another thread interrupted (`<... ioctl resumed>`).
fn pid_and_call(line: &str) -> Option<(&str, &str)> {
    let (pid, rest) = line.trim_start().split_once(char::is_whitespace)?;
    let rest = rest.trim_start();
    if rest.starts_with("<... ") {
        return None;
    }
    Some((pid, rest.split(['(', ' ']).next()?))
}

#[test]
fn simulated_hot_paths_are_one_syscall_each() {
    if common::under_qemu_user() {
        return common::skip("strace would trace qemu-user, not the program");
    }
    if !common::has_command("strace") {
        return common::skip("strace is not installed (apt-get install strace)");
    }
    if let Err(e) = SimulatedIo::mount(
        TempDir::new("strace-probe").path().join("dev"),
        Geometry::EV3_MONO,
    ) {
        return common::skip(&format!("the simulated brick's devices need FUSE: {e}"));
    }
    let tmp = TempDir::new("strace-out");
    let log = tmp.path().join("trace");
    let out = std::process::Command::new("strace")
        .args(["-f", "-qq", "-o"])
        .arg(&log)
        .arg(std::env::current_exe().unwrap())
        .args([
            "strace_child",
            "--exact",
            "--include-ignored",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let trace = fs::read_to_string(&log).unwrap();
    // Only the thread that marked the window: the FUSE server is another.
    let begin = trace
        .lines()
        .find(|l| l.contains(BEGIN))
        .expect("begin marker");
    let (pid, _) = pid_and_call(begin).unwrap();
    let calls: Vec<&str> = trace
        .lines()
        .skip_while(|l| !l.contains(BEGIN))
        .skip(1)
        .take_while(|l| !l.contains(END))
        .filter_map(pid_and_call)
        .filter(|(p, _)| *p == pid)
        .map(|(_, call)| call)
        .collect();
    let count = |name: &str| calls.iter().filter(|c| **c == name).count();
    // N pressed(), then the wait's single look at the state.
    assert_eq!(
        count("ioctl"),
        N + 1,
        "one EVIOCGKEY per pressed(): {calls:?}"
    );
    assert_eq!(count("write"), 2 * N, "one write per tone event");
    assert_eq!(count("pwrite64"), N, "one pwrite per show()");
    // The wait: one look at the state, one read of the queue (EAGAIN),
    // one poll.
    assert_eq!(count("read"), 1, "{calls:?}");
    assert_eq!(count("poll") + count("ppoll"), 1, "{calls:?}");
    // The wait reads the clock twice (its deadline, then the time left):
    // no syscall behind a vDSO, one each on ARMv5, which has none (and on
    // Linux 4.14 the first also tries `clock_gettime64` once, refused).
    let clock = count("clock_gettime") + count("clock_gettime64");
    assert!(clock <= 3, "{calls:?}");
    assert_eq!(calls.len() - clock, 4 * N + 3, "nothing else: {calls:?}");
}

/// Another language reads the simulated buttons as python-ev3dev2's
/// `Button` does: `fcntl.ioctl(file, EVIOCGKEY, 96-byte buffer)`.
#[test]
fn python_reads_the_simulated_buttons_with_ev3dev2s_ioctl() {
    let tmp = TempDir::new("sim-python");
    let Some(sim) = mount(&tmp, Geometry::EV3_MONO) else {
        return;
    };
    let program = r#"
import array, fcntl, sys
KEY_BUF_LEN = 96
EVIOCGKEY = (2 << (14 + 8 + 8) | KEY_BUF_LEN << (8 + 8) | ord('E') << 8 | 0x18)
buf = array.array('B', [0] * KEY_BUF_LEN)
with open(sys.argv[1], 'rb', 0) as f:
    fcntl.ioctl(f, EVIOCGKEY, buf)
print(sorted(c for c in range(KEY_BUF_LEN * 8) if buf[c // 8] & (1 << (c % 8))))
"#;
    sim.press(Button::Enter);
    sim.press(Button::Right);
    let out = match std::process::Command::new("python3")
        .arg("-c")
        .arg(program)
        .arg(sim.buttons_path())
        .output()
    {
        Ok(out) => out,
        Err(e) => return common::skip(&format!("python3 is not available: {e}")),
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "[28, 106]\n");
}
