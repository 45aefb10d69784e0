//! Brick buttons, beeper and screen against plain files: a framebuffer file,
//! a file capturing the beeper's events, a recorded event stream, and
//! stand-in players. The simulated brick's devices: tests/brick_io_sim.rs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
// The counting global allocator is `unsafe` by definition; test-only.
#![allow(unsafe_code)]

mod brick_io_common;
mod common;

use std::fs;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;
use std::time::Duration;

use brick_io_common::{allocations_in, black_pixels, draw_picture, framebuffer_files};
use common::TempDir;
use ev3sysfs::buttons::{Action, Button, ButtonSet, Buttons};
use ev3sysfs::input::{InputEvent, EVENT_SIZE, EV_KEY, EV_SND, EV_SYN, SND_TONE};
use ev3sysfs::screen::{font, Color, Geometry, Screen};
use ev3sysfs::sound::{Beeper, Note, Players};
use ev3sysfs::Error;

#[test]
fn font_has_printable_ascii_and_a_box_for_the_rest() {
    // 'A' as drawn in the font, row by row.
    let a = [
        ".###.", "#...#", "#...#", "#####", "#...#", "#...#", "#...#",
    ];
    for (y, row) in a.iter().enumerate() {
        for (x, c) in row.chars().enumerate() {
            assert_eq!(
                font::glyph_pixel('A', x as i32, y as i32),
                c == '#',
                "A at {x},{y}"
            );
        }
    }
    assert!((' '..='~')
        .filter(|&c| c != ' ')
        .all(|c| font::glyph(c) != [0; 7]));
    assert_eq!(font::glyph(' '), [0; 7]);
    assert_eq!(font::glyph('é'), font::glyph('\u{1}'));
    assert_ne!(font::glyph('é'), [0; 7]);
}

#[test]
fn mono_screen_on_a_plain_file_round_trips_through_one_write() {
    let tmp = TempDir::new("fb-mono");
    let (fb, sysfs) = framebuffer_files(tmp.path(), Geometry::EV3_MONO);
    let mut screen = Screen::open(&fb, &sysfs).unwrap();
    assert_eq!(screen.geometry(), Geometry::EV3_MONO);
    assert_eq!((screen.width(), screen.height()), (178, 128));
    let want = draw_picture(&mut screen);
    assert_eq!(allocations_in(|| screen.show().unwrap()), 0);

    // The layout of ev3dev's 1 bpp framebuffer: bit set = black, leftmost
    // pixel in the lowest bit, 24 bytes a row.
    let bytes = fs::read(&fb).unwrap();
    assert_eq!(bytes.len(), 24 * 128);
    assert_eq!(bytes[100 * 24 + 100 / 8] & (1 << (100 % 8)), 1 << (100 % 8));
    assert_eq!(bytes[0], 0, "white is 0 bits");

    let mut reader = Screen::open(&fb, &sysfs).unwrap();
    assert!(
        black_pixels(&reader).is_empty(),
        "a new screen starts white"
    );
    reader.load().unwrap();
    assert_eq!(black_pixels(&reader), want, "\n{}", reader.to_ascii());
    let pbm = reader.to_pbm();
    assert!(pbm.starts_with(b"P4\n178 128\n"));
    assert_eq!(pbm.len(), "P4\n178 128\n".len() + 23 * 128);
}

#[test]
fn xrgb_screen_on_a_plain_file_round_trips() {
    let tmp = TempDir::new("fb-xrgb");
    let (fb, sysfs) = framebuffer_files(tmp.path(), Geometry::EV3_XRGB);
    let mut screen = Screen::open(&fb, &sysfs).unwrap();
    assert_eq!(screen.geometry().stride, 712);
    let want = draw_picture(&mut screen);
    screen.show().unwrap();
    let bytes = fs::read(&fb).unwrap();
    assert_eq!(bytes.len(), 712 * 128);
    assert_eq!(&bytes[..4], &[0xff; 4], "white");
    let at = 100 * 712 + 100 * 4;
    assert_eq!(&bytes[at..at + 4], &[0; 4], "black");
    let mut reader = Screen::open(&fb, &sysfs).unwrap();
    reader.load().unwrap();
    assert_eq!(black_pixels(&reader), want);
}

#[test]
fn drawing_clips_at_the_edges() {
    let tmp = TempDir::new("fb-clip");
    let (fb, sysfs) = framebuffer_files(tmp.path(), Geometry::EV3_MONO);
    let mut screen = Screen::open(&fb, &sysfs).unwrap();
    screen.fill_rect(-5, -5, 7, 7, Color::Black);
    screen.line(170, 120, 190, 140, Color::Black);
    screen.set_pixel(178, 0, Color::Black);
    screen.text(175, 0, "W", Color::Black);
    assert_eq!(screen.pixel(1, 1), Some(Color::Black));
    assert_eq!(screen.pixel(2, 2), Some(Color::White));
    assert_eq!(screen.pixel(177, 127), Some(Color::Black));
    assert_eq!(screen.pixel(178, 0), None);
    // Bits 178..191 of a row are padding: never set.
    assert_eq!(screen.buffer()[22] & 0b1111_1100, 0);
    assert_eq!(screen.buffer()[23], 0);
}

#[test]
fn screen_geometry_errors() {
    let tmp = TempDir::new("fb-bad");
    let (fb, sysfs) = framebuffer_files(tmp.path(), Geometry::EV3_MONO);
    fs::write(sysfs.join("bits_per_pixel"), "16\n").unwrap();
    let err = Screen::open(&fb, &sysfs).unwrap_err();
    assert!(matches!(err, Error::Unsupported { .. }), "{err}");
    assert!(err.to_string().contains("16 bits per pixel"), "{err}");
    fs::write(sysfs.join("bits_per_pixel"), "1\n").unwrap();
    fs::write(sysfs.join("stride"), "20\n").unwrap();
    assert!(matches!(
        Screen::open(&fb, &sysfs),
        Err(Error::Unsupported { .. })
    ));
    fs::write(sysfs.join("virtual_size"), "178x128\n").unwrap();
    assert!(matches!(
        Screen::open(&fb, &sysfs),
        Err(Error::Parse { .. })
    ));
    let err = Screen::open(tmp.path().join("fb9"), Path::new("/nonexistent")).unwrap_err();
    assert!(err.is_disconnected(), "{err}");
    // A framebuffer file shorter than the image is refused at open; one
    // that shrinks later gives a short read, an error.
    let (fb, sysfs) = framebuffer_files(tmp.path(), Geometry::EV3_MONO);
    fs::write(&fb, [0u8; 10]).unwrap();
    assert!(matches!(
        Screen::open(&fb, &sysfs),
        Err(Error::Unsupported { .. })
    ));
    let (fb, sysfs) = framebuffer_files(tmp.path(), Geometry::EV3_MONO);
    let mut screen = Screen::open(&fb, &sysfs).unwrap();
    fs::write(&fb, [0u8; 10]).unwrap();
    assert!(matches!(screen.load(), Err(Error::Io { .. })));
}

fn recorded(path: &Path) -> Vec<InputEvent> {
    let bytes = fs::read(path).unwrap();
    assert_eq!(bytes.len() % EVENT_SIZE, 0);
    bytes
        .chunks(EVENT_SIZE)
        .map(|c| InputEvent::from_bytes(c).unwrap())
        .collect()
}

fn tones(events: &[InputEvent]) -> Vec<i32> {
    events
        .iter()
        .inspect(|e| assert_eq!((e.kind, e.code), (EV_SND, SND_TONE)))
        .map(|e| e.value)
        .collect()
}

#[test]
fn beeper_writes_tone_events_to_its_device() {
    let tmp = TempDir::new("beeper");
    let path = tmp.path().join("platform-sound-event");
    fs::write(&path, b"").unwrap();
    let beeper = Beeper::open(&path).unwrap();
    assert_eq!(allocations_in(|| beeper.start_tone(440).unwrap()), 0);
    assert_eq!(allocations_in(|| beeper.stop().unwrap()), 0);
    let ms = Duration::from_millis;
    beeper
        .play(&[
            Note::new(523, ms(1)),
            Note::rest(ms(1)),
            Note::new(10_000, ms(1)),
        ])
        .unwrap();
    beeper.tone(100, ms(1)).unwrap();
    assert_eq!(
        tones(&recorded(&path)),
        [440, 0, 523, 0, 0, 0, 10_000, 0, 100, 0]
    );

    // Out of the driver's range: refused before anything is written.
    let before = recorded(&path).len();
    for hz in [99, 10_001] {
        let err = beeper.start_tone(hz).unwrap_err();
        assert!(
            matches!(
                err,
                Error::OutOfRange {
                    min: 100,
                    max: 10_000,
                    ..
                }
            ),
            "{err}"
        );
    }
    assert!(beeper
        .play(&[Note::new(440, ms(1)), Note::new(50, ms(1))])
        .is_err());
    assert_eq!(recorded(&path).len(), before);

    // Dropped while sounding: the tone stops.
    beeper.start_tone(880).unwrap();
    drop(beeper);
    let all = tones(&recorded(&path));
    assert_eq!(&all[all.len() - 2..], [880, 0]);
    assert!(Beeper::open(tmp.path().join("missing"))
        .unwrap_err()
        .is_disconnected());
}

/// Writes an executable shell script.
fn script(dir: &Path, name: &str, body: &str) {
    let path = dir.join(name);
    fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn players_run_aplay_and_espeak_or_say_what_is_missing() {
    let tmp = TempDir::new("players");
    let bin = tmp.path().join("bin");
    fs::create_dir(&bin).unwrap();
    let log = tmp.path().join("log");
    let wav = tmp.path().join("a.wav");
    let mut header = b"RIFF\x24\0\0\0WAVEfmt ".to_vec();
    header.resize(44, 0);
    fs::write(&wav, &header).unwrap();

    let players = Players::in_dirs([&bin]);
    let err = players.play_wav(&wav).unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err}");
    assert!(
        err.to_string().contains("aplay (install alsa-utils)"),
        "{err}"
    );
    let err = players.speak("hi").unwrap_err();
    assert!(err.to_string().contains("espeak-ng or espeak"), "{err}");

    // aplay records its arguments and what it was given on stdin.
    script(
        &bin,
        "aplay",
        &format!("echo \"aplay $*\" >> {0}; cat >> {0}.stdin", log.display()),
    );
    players.play_wav(&wav).unwrap();
    assert_eq!(
        common::contents(&log),
        format!("aplay -q {}\n", wav.display())
    );

    let not_wav = tmp.path().join("b.wav");
    fs::write(&not_wav, b"plain text, not a wav").unwrap();
    assert!(matches!(
        players.play_wav(&not_wav),
        Err(Error::Parse { .. })
    ));

    // espeak writes "sound" to stdout, which aplay must receive.
    script(&bin, "espeak", "echo \"spoken: $6 $7\"");
    players.speak("hello; rm -rf /").unwrap();
    let stdin = common::contents(&tmp.path().join("log.stdin"));
    assert_eq!(stdin, "spoken: -- hello; rm -rf /\n");

    script(&bin, "aplay", "echo 'no sound card' >&2; exit 3");
    let err = players.play_wav(&wav).unwrap_err();
    assert!(matches!(err, Error::Io { .. }), "{err}");
    assert!(err.to_string().contains("no sound card"), "{err}");
}

fn event_bytes(events: &[(u16, u16, i32)]) -> Vec<u8> {
    events
        .iter()
        .flat_map(|&(kind, code, value)| InputEvent::new(kind, code, value).to_bytes())
        .collect()
}

#[test]
fn button_events_from_a_recorded_stream() {
    let tmp = TempDir::new("buttons");
    let path = tmp.path().join("platform-gpio_keys-event");
    fs::write(
        &path,
        event_bytes(&[
            (EV_KEY, Button::Enter.code(), 1),
            (EV_SYN, 0, 0),
            (EV_KEY, 30, 1), // KEY_A: not a brick button, skipped
            (EV_KEY, Button::Enter.code(), 0),
            (EV_SYN, 0, 0),
            (EV_KEY, Button::Left.code(), 2),
        ]),
    )
    .unwrap();
    let buttons = Buttons::open(&path).unwrap();
    let events: Vec<_> = buttons.events().map(|e| e.unwrap()).collect();
    let seen: Vec<_> = events.iter().map(|e| (e.button, e.action)).collect();
    assert_eq!(
        seen,
        [
            (Button::Enter, Action::Pressed),
            (Button::Enter, Action::Released),
            (Button::Left, Action::Repeated)
        ]
    );
    // A regular file answers no EVIOCGKEY.
    let err = buttons.pressed().unwrap_err();
    assert!(matches!(err, Error::Unsupported { .. }), "{err}");
    // (qemu-user answers ENOSYS for an ioctl it does not pass through.)
    let qemu = common::under_qemu_user();
    assert!(
        err.errno() == Some(libc::ENOTTY) || (qemu && err.errno() == Some(libc::ENOSYS)),
        "{err}"
    );
    assert!(matches!(
        buttons.wait_for_press(Button::Up, Duration::from_millis(1)),
        Err(Error::Unsupported { .. })
    ));
    assert!(Buttons::open(tmp.path().join("missing"))
        .unwrap_err()
        .is_disconnected());
    assert_eq!(ButtonSet::EMPTY.len(), 0);
}

/// issue 18: a character device that reads zeros for ever (`EV_SYN`
/// events to the button code) must not hold a wait past its timeout, and a
/// FIFO as the beeper must not block `Beeper::open`.
#[test]
fn buttons_on_dev_zero_and_a_beeper_on_a_fifo_honour_every_timeout() {
    use std::time::Instant;
    if Path::new("/dev/zero").exists() {
        let buttons = Buttons::open("/dev/zero").unwrap();
        let start = Instant::now();
        assert_eq!(
            buttons.next_event(Some(Duration::from_millis(50))).unwrap(),
            None
        );
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
        // Not an input device: the wait says so at once.
        let err = buttons
            .wait_for_press(Button::Enter, Duration::from_millis(50))
            .unwrap_err();
        assert!(matches!(err, Error::Unsupported { .. }), "{err}");
    }
    let tmp = TempDir::new("beeper-fifo");
    let fifo = tmp.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let path = fifo.clone();
    std::thread::spawn(move || tx.send(Beeper::open(path).map(|_| ())));
    let opened = rx
        .recv_timeout(Duration::from_secs(5))
        .expect("Beeper::open blocked on a FIFO");
    assert!(opened.is_err(), "a FIFO is no beeper");
    // With a reader on it, open succeeds at the file level: still refused.
    let _reader = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo)
        .unwrap();
    let err = Beeper::open(&fifo).unwrap_err();
    assert!(matches!(err, Error::Unsupported { .. }), "{err}");
}
