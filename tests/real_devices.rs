//! The brick's buttons, beeper and screen against the kernel's own drivers:
//! an evdev device made through uinput with the EV3's six keys and a tone
//! beeper, and vfb (the virtual framebuffer) set to the EV3's 178x128 at 1
//! and 32 bits per pixel. They run in the ARM926 guest of
//! `scripts/arm-guest/run` (its kernel has uinput and vfb) and on any Linux
//! where root has `/dev/uinput` and vfb; elsewhere they skip with the reason.
//!
//! The evdev test asserts what the kernel does and the simulated buttons
//! must do too: `EVIOCGKEY` (`Buttons::pressed`) drops the key events queued
//! on *that* descriptor (`evdev_handle_get_val` -> `__evdev_flush_queue`,
//! mainline since 3.12, so on the brick's 4.14), another descriptor keeps
//! them.
#![allow(unsafe_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use ev3sysfs::buttons::{Action, Button, Buttons};
use ev3sysfs::input::{InputEvent, EVENT_SIZE, EV_KEY, EV_SND, EV_SYN, SND_TONE};
use ev3sysfs::screen::{Color, Geometry, Screen};
use ev3sysfs::sound::Beeper;

// ---- uinput -------------------------------------------------------------

nix::ioctl_write_int!(ui_set_evbit, b'U', 100);
nix::ioctl_write_int!(ui_set_keybit, b'U', 101);
nix::ioctl_write_int!(ui_set_sndbit, b'U', 106);
nix::ioctl_none!(ui_dev_create, b'U', 1);
nix::ioctl_read_buf!(ui_get_sysname, b'U', 44, u8);

/// A uinput device: the EV3's six keys and a tone beeper. Destroyed when
/// its descriptor closes (on drop).
struct Uinput {
    file: File,
    /// `/dev/input/eventN` of the new device.
    event: PathBuf,
}

impl Uinput {
    fn new() -> Result<Uinput, String> {
        if !common::is_root() {
            return Err("needs root for /dev/uinput".into());
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open("/dev/uinput")
            .map_err(|e| format!("/dev/uinput: {e}"))?;
        let fd = file.as_raw_fd();
        // SAFETY: uinput set-up ioctls taking an int by value, on our fd.
        unsafe {
            ui_set_evbit(fd, libc::c_ulong::from(EV_KEY)).map_err(|e| e.to_string())?;
            ui_set_evbit(fd, libc::c_ulong::from(EV_SND)).map_err(|e| e.to_string())?;
            for b in Button::ALL {
                ui_set_keybit(fd, libc::c_ulong::from(b.code())).map_err(|e| e.to_string())?;
            }
            ui_set_sndbit(fd, libc::c_ulong::from(SND_TONE)).map_err(|e| e.to_string())?;
        }
        // struct uinput_user_dev: name[80], input_id (4 x u16),
        // ff_effects_max (u32), absmax/absmin/absfuzz/absflat (4 x 64 x i32).
        let mut dev = vec![0u8; 80 + 8 + 4 + 4 * 64 * 4];
        dev[..12].copy_from_slice(b"EV3 buttons\0");
        dev[80..82].copy_from_slice(&0x06u16.to_ne_bytes()); // BUS_VIRTUAL
        (&file)
            .write_all(&dev)
            .map_err(|e| format!("uinput_user_dev: {e}"))?;
        // SAFETY: no argument.
        unsafe { ui_dev_create(fd) }.map_err(|e| format!("UI_DEV_CREATE: {e}"))?;
        let mut name = [0u8; 64];
        // SAFETY: the kernel writes at most name.len() bytes.
        unsafe { ui_get_sysname(fd, &mut name) }.map_err(|e| format!("UI_GET_SYSNAME: {e}"))?;
        let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
        let input = Path::new("/sys/devices/virtual/input")
            .join(std::str::from_utf8(&name[..end]).unwrap());
        let event = fs::read_dir(&input)
            .map_err(|e| format!("{}: {e}", input.display()))?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .find(|n| n.starts_with("event"))
            .ok_or("no event device")?;
        let event = Path::new("/dev/input").join(event);
        // devtmpfs creates the node shortly after the device.
        for _ in 0..100 {
            if event.exists() {
                return Ok(Uinput { file, event });
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Err(format!("{} never appeared", event.display()))
    }

    /// Sends `events` and a sync, as a driver reports key changes.
    fn send(&self, events: &[(u16, u16, i32)]) {
        for &(kind, code, value) in events.iter().chain([&(EV_SYN, 0, 0)]) {
            (&self.file)
                .write_all(&InputEvent::new(kind, code, value).to_bytes())
                .unwrap();
        }
    }

    /// The next event the device's users sent to it (the beeper's tones),
    /// waiting up to a second.
    fn next_output(&self) -> Option<InputEvent> {
        let mut buf = [0u8; EVENT_SIZE];
        for _ in 0..100 {
            match (&self.file).read(&mut buf) {
                Ok(n) if n == EVENT_SIZE => return InputEvent::from_bytes(&buf),
                _ => std::thread::sleep(Duration::from_millis(10)),
            }
        }
        None
    }
}

fn uinput() -> Option<Uinput> {
    Uinput::new()
        .map_err(|why| common::skip(&format!("no uinput device: {why}")))
        .ok()
}

#[test]
fn six_buttons_through_real_evdev() {
    let Some(dev) = uinput() else { return };
    let buttons = Buttons::open(&dev.event).unwrap();
    assert!(buttons.pressed().unwrap().is_empty());
    for b in Button::ALL {
        dev.send(&[(EV_KEY, b.code(), 1)]);
        let ev = buttons
            .next_event(Some(Duration::from_secs(2)))
            .unwrap()
            .unwrap();
        assert_eq!((ev.button, ev.action), (b, Action::Pressed));
        assert!(buttons.is_pressed(b).unwrap(), "{b:?}");
        dev.send(&[(EV_KEY, b.code(), 0)]);
        buttons.wait_for_release(b, Duration::from_secs(2)).unwrap();
    }
}

#[test]
fn eviocgkey_drops_that_descriptors_queued_key_events_only() {
    let Some(dev) = uinput() else { return };
    let asks = Buttons::open(&dev.event).unwrap();
    let other = Buttons::open(&dev.event).unwrap();
    dev.send(&[(EV_KEY, Button::Enter.code(), 1)]);
    dev.send(&[(EV_KEY, Button::Enter.code(), 0)]);
    dev.send(&[(EV_KEY, Button::Up.code(), 1)]);
    // Both descriptors have the five events queued; EVIOCGKEY on one.
    std::thread::sleep(Duration::from_millis(50));
    assert!(asks.pressed().unwrap().contains(Button::Up));
    assert_eq!(
        asks.next_event(Some(Duration::from_millis(200))).unwrap(),
        None,
        "EVIOCGKEY flushed this descriptor's queued key events"
    );
    let kept: Vec<(Button, Action)> = std::iter::from_fn(|| {
        other
            .next_event(Some(Duration::from_millis(200)))
            .unwrap()
            .map(|e| (e.button, e.action))
    })
    .collect();
    assert_eq!(
        kept,
        [
            (Button::Enter, Action::Pressed),
            (Button::Enter, Action::Released),
            (Button::Up, Action::Pressed)
        ],
        "another descriptor keeps its events"
    );
}

#[test]
fn beeper_tones_reach_the_input_device() {
    let Some(dev) = uinput() else { return };
    let beeper = Beeper::open(&dev.event).unwrap();
    beeper.start_tone(440).unwrap();
    let tone = dev.next_output().expect("a tone event");
    assert_eq!((tone.kind, tone.code, tone.value), (EV_SND, SND_TONE, 440));
    beeper.stop().unwrap();
    let stop = std::iter::from_fn(|| dev.next_output())
        .find(|e| e.kind == EV_SND)
        .expect("a stop event");
    assert_eq!((stop.code, stop.value), (SND_TONE, 0));
}

// ---- vfb ------------------------------------------------------------------

// struct fb_var_screeninfo: 40 u32 words; xres, yres, xres_virtual,
// yres_virtual, xoffset, yoffset, bits_per_pixel first.
nix::ioctl_read_bad!(fbioget_vscreeninfo, 0x4600, [u32; 40]);
nix::ioctl_write_ptr_bad!(fbioput_vscreeninfo, 0x4601, [u32; 40]);

/// vfb's `/dev/fbN` and `/sys/class/graphics/fbN`, set to the EV3's screen
/// at `bits_per_pixel`.
fn ev3_vfb(bits_per_pixel: u32) -> Option<(PathBuf, PathBuf)> {
    if !common::is_root() {
        common::skip("vfb tests need root (FBIOPUT_VSCREENINFO)");
        return None;
    }
    let Some(sysfs) = fs::read_dir("/sys/class/graphics").ok().and_then(|dir| {
        dir.filter_map(|e| e.ok())
            .map(|e| e.path())
            .find(|p| fs::read_to_string(p.join("name")).is_ok_and(|n| n.trim() == "Virtual FB"))
    }) else {
        common::skip("no vfb framebuffer (kernel option video=vfb: and FB_VIRTUAL)");
        return None;
    };
    let dev = Path::new("/dev").join(sysfs.file_name().unwrap());
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(&dev)
        .unwrap();
    let mut var = [0u32; 40];
    // SAFETY: the kernel fills one fb_var_screeninfo (160 bytes).
    unsafe { fbioget_vscreeninfo(file.as_raw_fd(), &mut var) }.unwrap();
    var[..7].copy_from_slice(&[178, 128, 178, 128, 0, 0, bits_per_pixel]);
    // SAFETY: the kernel reads one fb_var_screeninfo.
    unsafe { fbioput_vscreeninfo(file.as_raw_fd(), &var) }.unwrap();
    Some((dev, sysfs))
}

/// `false` when skipped.
fn drawn_by_show_is_in_the_mapped_framebuffer(bits_per_pixel: u32, want: Geometry) -> bool {
    let Some((dev, sysfs)) = ev3_vfb(bits_per_pixel) else {
        return false;
    };
    let mut screen = Screen::open(&dev, &sysfs).unwrap();
    assert_eq!(screen.geometry(), want, "geometry from the driver's sysfs");
    assert!(screen.is_mapped(), "a framebuffer device maps");
    screen.clear(Color::White);
    screen.rect(0, 0, 178, 128, Color::Black);
    screen.line(0, 0, 177, 127, Color::Black);
    screen.text(4, 4, "Hello, EV3!", Color::Black);
    screen.show().unwrap();
    // What the device holds, through a mapping of our own (another Screen)
    // and through read().
    let mut reader = Screen::open(&dev, &sysfs).unwrap();
    reader.load().unwrap();
    assert_eq!(reader.buffer(), screen.buffer());
    assert_eq!(reader.pixel(1, 1), Some(Color::Black));
    assert_eq!(reader.pixel(0, 60), Some(Color::Black));
    assert_eq!(reader.pixel(1, 60), Some(Color::White));
    let mut read_back = vec![0u8; want.size()];
    File::open(&dev)
        .unwrap()
        .read_exact_at(&mut read_back, 0)
        .unwrap();
    assert_eq!(read_back, screen.buffer());
    true
}

/// One test for both depths: they set the same device.
#[test]
fn vfb_at_1_and_32_bits_per_pixel_shows_what_show_drew() {
    if drawn_by_show_is_in_the_mapped_framebuffer(1, Geometry::EV3_MONO) {
        drawn_by_show_is_in_the_mapped_framebuffer(32, Geometry::EV3_XRGB);
    }
}
