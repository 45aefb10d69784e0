//! Sound: tones from the brick's beeper, WAV files and speech through the
//! system's players.
//!
//! The EV3's sound driver (`snd-legoev3`) exposes its beeper as an input
//! device, `/dev/input/by-path/platform-sound-event` on ev3dev-stretch
//! ([`Beeper::open_default`] looks under [`crate::input::default_dev_root`],
//! also for the jessie name). A tone is one `EV_SND`/`SND_TONE` event
//! (frequency in Hz, 0 stops); [`Beeper::tone`] writes it, sleeps for the
//! duration and writes the stop: one `write` each, no allocation. The driver
//! plays 100 to 10 000 Hz (it clamps), so other frequencies are refused
//! before anything is written. A beeper dropped while a tone plays stops it.
//!
//! WAV playback and speech use `aplay` (alsa-utils) and `espeak-ng` or
//! `espeak`, found on `PATH` ([`Players`]); a missing player gives
//! [`Error::NotFound`] naming the package to install.
//!
//! ```
//! use std::time::Duration;
//! use ev3sysfs::sound::{Beeper, Note, Players, BEEPER_DEVICE};
//!
//! fn main() -> ev3sysfs::Result<()> {
//!     # // Not a brick (nor $EV3SYSFS_DEV): no beeper to play on.
//!     # if !ev3sysfs::input::default_dev_root().join(BEEPER_DEVICE).exists() { return Ok(()); }
//!     let beeper = Beeper::open_default()?;
//!     beeper.beep()?;
//!     beeper.tone(880, Duration::from_millis(150))?;
//!     let ms = Duration::from_millis;
//!     beeper.play(&[Note::new(523, ms(120)), Note::rest(ms(60)), Note::new(659, ms(240))])?;
//!     // Without espeak-ng or aplay, this says which package to install.
//!     if let Err(e) = Players::from_env().speak("Hello") {
//!         println!("{e}");
//!     }
//!     Ok(())
//! }
//! ```

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::error::{Error, Operation, Result};
use crate::input::{InputEvent, EV_SND, SND_TONE};

/// The beeper's input device on ev3dev-stretch, relative to `/dev`.
pub const BEEPER_DEVICE: &str = "input/by-path/platform-sound-event";
/// The beeper's input device on ev3dev-jessie, relative to `/dev`.
pub const BEEPER_DEVICE_JESSIE: &str = "input/by-path/platform-snd-legoev3-event";

/// Lowest tone the EV3's driver plays (Hz).
pub const MIN_TONE_HZ: u32 = 100;
/// Highest tone the EV3's driver plays (Hz).
pub const MAX_TONE_HZ: u32 = 10_000;

/// One note of a tune: a frequency (0: a rest) and how long it lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Note {
    /// Frequency in Hz; 0 is silence.
    pub hz: u32,
    /// Length.
    pub duration: Duration,
}

impl Note {
    /// A tone of `hz` for `duration`.
    pub const fn new(hz: u32, duration: Duration) -> Note {
        Note { hz, duration }
    }

    /// Silence for `duration`.
    pub const fn rest(duration: Duration) -> Note {
        Note { hz: 0, duration }
    }
}

/// The brick's beeper: one open input device.
#[derive(Debug)]
pub struct Beeper {
    file: File,
    path: PathBuf,
    sounding: AtomicBool,
    players: Players,
}

impl Beeper {
    /// Opens the beeper's input device at `path` (write-only).
    ///
    /// # Errors
    /// [`Error::Disconnected`] when it does not exist, other open errors
    /// ([`Error::PermissionDenied`]: on a brick, the `input` group).
    pub fn open(path: impl Into<PathBuf>) -> Result<Beeper> {
        let path = path.into();
        let file = OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_CLOEXEC)
            .open(&path)
            .map_err(|e| Error::from_io(&path, Operation::Open, None, e))?;
        Ok(Beeper {
            file,
            path,
            sounding: AtomicBool::new(false),
            players: Players::from_env(),
        })
    }

    /// Opens [`BEEPER_DEVICE`] (or, when missing, [`BEEPER_DEVICE_JESSIE`])
    /// under [`crate::input::default_dev_root`].
    ///
    /// # Errors
    /// As [`Beeper::open`], for the stretch path.
    pub fn open_default() -> Result<Beeper> {
        let dev = crate::input::default_dev_root();
        match Beeper::open(dev.join(BEEPER_DEVICE)) {
            Err(e) if e.is_disconnected() && dev.join(BEEPER_DEVICE_JESSIE).exists() => {
                Beeper::open(dev.join(BEEPER_DEVICE_JESSIE))
            }
            other => other,
        }
    }

    /// The device's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Uses `players` for [`Beeper::play_wav`] and [`Beeper::speak`].
    pub fn with_players(mut self, players: Players) -> Beeper {
        self.players = players;
        self
    }

    /// Starts a tone of `hz` and returns; it plays until [`Beeper::stop`]
    /// (or another tone). `hz` 0 stops. One `write`.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] outside 100..=10 000 Hz (nothing written), or
    /// the write's error.
    pub fn start_tone(&self, hz: u32) -> Result<()> {
        if hz != 0 && !(MIN_TONE_HZ..=MAX_TONE_HZ).contains(&hz) {
            return Err(Error::OutOfRange {
                attribute: "tone frequency (Hz)",
                value: i64::from(hz),
                min: i64::from(MIN_TONE_HZ),
                max: i64::from(MAX_TONE_HZ),
            });
        }
        let value = i32::try_from(hz).unwrap_or(i32::MAX);
        self.send(InputEvent::new(EV_SND, SND_TONE, value))?;
        self.sounding.store(hz != 0, Ordering::Relaxed);
        Ok(())
    }

    /// Stops the tone. One `write`.
    ///
    /// # Errors
    /// The write's error.
    pub fn stop(&self) -> Result<()> {
        self.start_tone(0)
    }

    /// Plays `hz` for `duration` (a sleep, not a spin), then stops.
    ///
    /// # Errors
    /// As [`Beeper::start_tone`].
    pub fn tone(&self, hz: u32, duration: Duration) -> Result<()> {
        self.start_tone(hz)?;
        std::thread::sleep(duration);
        self.stop()
    }

    /// A short beep: 440 Hz for 200 ms, like the `beep` program.
    ///
    /// # Errors
    /// As [`Beeper::tone`].
    pub fn beep(&self) -> Result<()> {
        self.tone(440, Duration::from_millis(200))
    }

    /// Plays the notes one after the other (rests are silences). Every
    /// frequency is checked before the first is played.
    ///
    /// # Errors
    /// As [`Beeper::tone`]; [`Error::OutOfRange`] before anything plays.
    pub fn play(&self, notes: &[Note]) -> Result<()> {
        if let Some(bad) = notes
            .iter()
            .find(|n| n.hz != 0 && !(MIN_TONE_HZ..=MAX_TONE_HZ).contains(&n.hz))
        {
            return self.start_tone(bad.hz);
        }
        for note in notes {
            self.tone(note.hz, note.duration)?;
        }
        Ok(())
    }

    /// Plays a WAV file through the beeper's [`Players`].
    ///
    /// # Errors
    /// As [`Players::play_wav`].
    pub fn play_wav(&self, file: impl AsRef<Path>) -> Result<()> {
        self.players.play_wav(file)
    }

    /// Speaks `text` through the beeper's [`Players`].
    ///
    /// # Errors
    /// As [`Players::speak`].
    pub fn speak(&self, text: &str) -> Result<()> {
        self.players.speak(text)
    }

    fn send(&self, event: InputEvent) -> Result<()> {
        let bytes = event.to_bytes();
        match (&self.file).write(&bytes) {
            Ok(n) if n == bytes.len() => Ok(()),
            Ok(_) => Err(Error::from_io(
                &self.path,
                Operation::Write,
                Some(&bytes),
                io::Error::from(io::ErrorKind::WriteZero),
            )),
            Err(e) => Err(Error::from_io(
                &self.path,
                Operation::Write,
                Some(&bytes),
                e,
            )),
        }
    }
}

impl Drop for Beeper {
    fn drop(&mut self) {
        if self.sounding.load(Ordering::Relaxed) {
            let _ = self.stop();
        }
    }
}

/// The system's sound players: `aplay` for WAV files, `espeak-ng` or
/// `espeak` for speech, looked up in a list of directories.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Players {
    dirs: Vec<PathBuf>,
}

impl Players {
    /// Looks in the directories of `$PATH`.
    pub fn from_env() -> Players {
        let dirs = std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).collect())
            .unwrap_or_default();
        Players { dirs }
    }

    /// Looks only in `dirs` (e.g. players of a test).
    pub fn in_dirs(dirs: impl IntoIterator<Item = impl Into<PathBuf>>) -> Players {
        Players {
            dirs: dirs.into_iter().map(Into::into).collect(),
        }
    }

    /// The first of `names` found as a file in the directories.
    fn find(&self, names: &[&str], package: &str) -> Result<PathBuf> {
        for dir in &self.dirs {
            for name in names {
                let candidate = dir.join(name);
                if candidate.is_file() {
                    return Ok(candidate);
                }
            }
        }
        Err(Error::NotFound {
            what: format!("{} (install {package})", names.join(" or ")),
            seen: format!("looked in {}", self.dirs_text()),
        })
    }

    fn dirs_text(&self) -> String {
        let dirs: Vec<String> = self.dirs.iter().map(|d| d.display().to_string()).collect();
        if dirs.is_empty() {
            "no directory".into()
        } else {
            dirs.join(":")
        }
    }

    /// Plays a WAV file with `aplay -q` and waits until it ends. The file
    /// must start with a RIFF/WAVE header. A relative name that starts with
    /// `-` is passed as `./-name`, never as an option.
    ///
    /// # Errors
    /// [`Error::Parse`] for a file that is not WAV, [`Error::NotFound`]
    /// without `aplay`, [`Error::Io`] when it fails (with its message).
    pub fn play_wav(&self, file: impl AsRef<Path>) -> Result<()> {
        let file = file.as_ref();
        let mut header = [0u8; 12];
        File::open(file)
            .and_then(|mut f| f.read_exact(&mut header))
            .map_err(|e| Error::from_io(file, Operation::Read, None, e))?;
        if &header[..4] != b"RIFF" || &header[8..12] != b"WAVE" {
            return Err(Error::parse(file, &header, "a WAV file (RIFF/WAVE header)"));
        }
        let aplay = self.find(&["aplay"], "alsa-utils")?;
        let out = Command::new(&aplay)
            .arg("-q")
            .arg(not_an_option(file).as_os_str())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .map_err(|e| Error::from_io(&aplay, Operation::Open, None, e))?;
        check_exit(&aplay, out.status, &out.stderr)
    }

    /// Speaks `text`: `espeak-ng` (or `espeak`) `--stdout` piped into
    /// `aplay -q`, as ev3dev's own tools do; waits until it ends. The text
    /// is one argument, never seen by a shell.
    ///
    /// # Errors
    /// [`Error::NotFound`] without a speech program or `aplay`,
    /// [`Error::Io`] when one fails (with its message).
    pub fn speak(&self, text: &str) -> Result<()> {
        let espeak = self.find(&["espeak-ng", "espeak"], "espeak-ng")?;
        let aplay = self.find(&["aplay"], "alsa-utils")?;
        let mut speaker = Command::new(&espeak)
            .args(["-a", "200", "-s", "130", "--stdout", "--"])
            .arg(text)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| Error::from_io(&espeak, Operation::Open, None, e))?;
        let Some(sound) = speaker.stdout.take() else {
            let _ = speaker.kill();
            let _ = speaker.wait();
            return Err(Error::from_io(
                &espeak,
                Operation::Read,
                None,
                io::Error::other("no pipe from the speech program"),
            ));
        };
        let played = Command::new(&aplay)
            .arg("-q")
            .stdin(Stdio::from(sound))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output();
        let spoken = speaker.wait_with_output();
        let played = played.map_err(|e| Error::from_io(&aplay, Operation::Open, None, e))?;
        let spoken = spoken.map_err(|e| Error::from_io(&espeak, Operation::Read, None, e))?;
        check_exit(&espeak, spoken.status, &spoken.stderr)?;
        check_exit(&aplay, played.status, &played.stderr)
    }
}

/// `path` as an argument no option parser takes for an option: a relative
/// path starting with `-` gets `./` in front (`-Dnull` is the file
/// `./-Dnull`, not aplay's device option).
fn not_an_option(path: &Path) -> std::borrow::Cow<'_, Path> {
    use std::os::unix::ffi::OsStrExt;
    if path.as_os_str().as_bytes().starts_with(b"-") {
        std::borrow::Cow::Owned(Path::new(".").join(path))
    } else {
        std::borrow::Cow::Borrowed(path)
    }
}

fn check_exit(program: &Path, status: std::process::ExitStatus, stderr: &[u8]) -> Result<()> {
    if status.success() {
        return Ok(());
    }
    let message = String::from_utf8_lossy(stderr);
    Err(Error::Io {
        path: program.to_path_buf(),
        operation: Operation::Write,
        source: io::Error::other(format!("{status}: {}", message.trim())),
    })
}
