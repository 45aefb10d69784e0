//! The control channel of `ev3-sim`: a FIFO (`$EV3SIM_CONTROL`, fire and
//! forget, errors on ev3-sim's stderr) and a Unix stream socket
//! (`$EV3SIM_SOCKET`, one reply line per command line) serving the line
//! protocol of [`ev3sysfs_sim::control`].
//!
//! Why both: a FIFO is what a shell can write without any tool (`echo
//! 'click enter' > "$EV3SIM_CONTROL"`), but it cannot answer the writer (a
//! FIFO has no per-writer return path, and a reply FIFO would be shared by
//! every client). The socket answers each client on its own connection, in
//! order, one line per command: python's `socket` module, `socat -
//! UNIX-CONNECT:$EV3SIM_SOCKET` or `nc -U` in a shell.

use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use ev3sysfs_sim::control::{Command, Extension, LineBuffer};
use ev3sysfs_sim::{MockDevice, MockTree, SimulatedIo};

/// Socket clients served at once (a thread each); more are refused with
/// an error line.
const MAX_CLIENTS: usize = 64;

/// What the control lines act on.
pub(crate) struct Served {
    pub(crate) tree: Weak<MockTree>,
    pub(crate) io: Weak<SimulatedIo>,
    /// The devices plugged into ports, by port name (`outA`, `in1`).
    pub(crate) plugged: Vec<(String, MockDevice)>,
    pub(crate) battery: Option<MockDevice>,
    /// Handlers of the lines the brick does not know (a world's `pose`).
    pub(crate) extensions: Vec<Box<dyn Extension>>,
}

fn is_output(port: &str) -> bool {
    matches!(port, "outA" | "outB" | "outC" | "outD")
}

fn is_input(port: &str) -> bool {
    matches!(port, "in1" | "in2" | "in3" | "in4")
}

impl Served {
    fn tree(&self) -> Result<Arc<MockTree>, String> {
        self.tree
            .upgrade()
            .ok_or_else(|| "the brick is gone".into())
    }

    fn io(&self) -> Result<Arc<SimulatedIo>, String> {
        self.io
            .upgrade()
            .ok_or_else(|| "this brick has no buttons, beeper or screen (FUSE for /dev)".into())
    }

    fn device(&self, port: &str) -> Result<&MockDevice, String> {
        if port == "battery" {
            return self.battery.as_ref().ok_or_else(|| "no battery".into());
        }
        self.plugged
            .iter()
            .find(|(p, d)| p == port && d.is_plugged())
            .map(|(_, d)| d)
            .ok_or_else(|| format!("nothing is plugged into {port}"))
    }

    /// Carries out one command (a click's hold is the caller's).
    fn execute(&mut self, command: Command) -> Result<String, String> {
        let ok = |_| String::new();
        match command {
            Command::Set { port, attr, value } => self
                .device(&port)?
                .set(&attr, &value)
                .map(ok)
                .map_err(|e| e.to_string()),
            Command::Get { port, attr } => self
                .device(&port)?
                .read(&attr)
                .map(|v| v.trim_end().to_owned())
                .map_err(|e| e.to_string()),
            Command::Press(b) | Command::Click(b, _) => {
                self.io()?.press(b);
                Ok(String::new())
            }
            Command::Release(b) => {
                self.io()?.release(b);
                Ok(String::new())
            }
            Command::Block { port, blocked } => {
                let device = self.device(&port)?;
                if device.class() != "tacho-motor" {
                    return Err(format!("{port}: not a tacho motor"));
                }
                device
                    .set("blocked", if blocked { "1" } else { "0" })
                    .map(ok)
                    .map_err(|e| e.to_string())
            }
            Command::Battery(microvolts) => self
                .device("battery")?
                .set_int("voltage_now", microvolts)
                .map(ok)
                .map_err(|e| e.to_string()),
            Command::Unplug(port) => {
                let tree = self.tree()?;
                let i = self
                    .plugged
                    .iter()
                    .position(|(p, d)| *p == port && d.is_plugged())
                    .ok_or_else(|| format!("nothing is plugged into {port}"))?;
                let (_, device) = self.plugged.remove(i);
                tree.unplug(&device).map(ok).map_err(|e| e.to_string())
            }
            Command::Plug { port, driver } => self.plug(&port, &driver).map(ok),
            Command::Tones => {
                let tones: Vec<String> = self
                    .io()?
                    .tones()
                    .iter()
                    .map(|t| t.hz.to_string())
                    .collect();
                Ok(tones.join(" "))
            }
            Command::Screen => {
                let bytes = self.io()?.framebuffer();
                Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
            }
            Command::Ping => Ok("pong".into()),
            Command::Other(words) => {
                for extension in &mut self.extensions {
                    if let Some(reply) = extension.handle(&words) {
                        return reply;
                    }
                }
                let verb = words.first().map_or("", String::as_str);
                Err(match verb {
                    "pose" | "move" => format!("{verb}: this brick has no world (ev3-sim --world)"),
                    _ => format!("unknown command {verb:?} (see ev3-sim --help)"),
                })
            }
        }
    }

    /// `plug PORT DRIVER`, refused on a busy port and on the wrong kind of
    /// port (a motor on an input port, a sensor on an output port).
    pub(crate) fn plug(&mut self, port: &str, driver: &str) -> Result<(), String> {
        use ev3sysfs_sim::{SensorDriver, TachoDriver};
        if !is_output(port) && !is_input(port) {
            return Err(format!("no port {port:?}: in1..in4, outA..outD"));
        }
        let motor = TachoDriver::from_driver_name(driver).is_some() || driver == "rcx-motor";
        if motor && !is_output(port) {
            return Err(format!("{driver} is a motor: plug it into outA..outD"));
        }
        if SensorDriver::from_driver_name(driver).is_some() && !is_input(port) {
            return Err(format!("{driver} is a sensor: plug it into in1..in4"));
        }
        if self
            .plugged
            .iter()
            .any(|(p, d)| p == port && d.is_plugged())
        {
            return Err(format!("{port} is busy: unplug it first"));
        }
        let device = self.tree()?.plug(port, driver).map_err(|e| e.to_string())?;
        self.plugged.push((port.to_owned(), device));
        Ok(())
    }
}

/// Serves one line: `None` for an empty or comment line, else the reply.
pub(crate) fn serve_line(served: &Mutex<Served>, line: Result<&str, String>) -> Option<String> {
    let lock = || served.lock().unwrap_or_else(|e| e.into_inner());
    let result = match line.and_then(Command::parse) {
        Ok(None) => return None,
        Err(e) => Err(e),
        Ok(Some(Command::Click(button, ms))) => {
            // The hold happens without the lock: other clients go on.
            let pressed = lock().execute(Command::Press(button));
            pressed.and_then(|_| {
                std::thread::sleep(Duration::from_millis(ms));
                lock().execute(Command::Release(button))
            })
        }
        Ok(Some(command)) => lock().execute(command),
    };
    Some(match result {
        Ok(text) if text.is_empty() => "ok".to_owned(),
        Ok(text) => format!("ok {text}"),
        Err(e) => format!("error {}", e.replace('\n', " ")),
    })
}

/// The control FIFO and socket with their threads; removed on drop.
pub(crate) struct Control {
    pub(crate) dir: PathBuf,
    pub(crate) fifo: PathBuf,
    pub(crate) socket: PathBuf,
}

impl Control {
    /// Creates the FIFO and the socket in a new private directory and
    /// starts their readers.
    pub(crate) fn start(served: Served) -> Result<Control, String> {
        use nix::sys::stat::Mode;
        use std::os::unix::fs::PermissionsExt;
        let dir = nix::unistd::mkdtemp(&std::env::temp_dir().join("ev3-sim-XXXXXX"))
            .map_err(|e| format!("control directory: {e}"))?;
        // Programs run as another user (the brick's `robot`) may use them.
        let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o711));
        let fifo = dir.join("control");
        nix::unistd::mkfifo(&fifo, Mode::from_bits_truncate(0o622))
            .map_err(|e| format!("control FIFO: {e}"))?;
        let _ = std::fs::set_permissions(&fifo, std::fs::Permissions::from_mode(0o622));
        let socket = dir.join("socket");
        let listener = UnixListener::bind(&socket).map_err(|e| format!("control socket: {e}"))?;
        let _ = std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o666));
        let served = Arc::new(Mutex::new(served));
        let (path, shared) = (fifo.clone(), Arc::clone(&served));
        std::thread::spawn(move || fifo_loop(&path, &shared));
        std::thread::spawn(move || {
            let clients = Arc::new(AtomicUsize::new(0));
            for mut stream in listener.incoming().map_while(Result::ok) {
                if clients.load(Ordering::Relaxed) >= MAX_CLIENTS {
                    let _ = writeln!(stream, "error more than {MAX_CLIENTS} clients at once");
                    continue;
                }
                clients.fetch_add(1, Ordering::Relaxed);
                let (served, clients) = (Arc::clone(&served), Arc::clone(&clients));
                std::thread::spawn(move || {
                    socket_client(stream, &served);
                    clients.fetch_sub(1, Ordering::Relaxed);
                });
            }
        });
        Ok(Control { dir, fifo, socket })
    }
}

impl Drop for Control {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.fifo);
        let _ = std::fs::remove_file(&self.socket);
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Reads control lines, writer after writer, until the FIFO is removed.
fn fifo_loop(fifo: &Path, served: &Mutex<Served>) {
    let mut buf = [0u8; 4096];
    // Opening blocks until a writer comes; each writer's lines, then EOF.
    while let Ok(mut file) = std::fs::File::open(fifo) {
        let mut lines = LineBuffer::new();
        let mut serve = |line: Result<&str, String>| {
            let shown = line
                .as_ref()
                .map_or_else(|_| "?".to_owned(), |l| (*l).to_owned());
            match serve_line(served, line) {
                Some(reply) if reply.starts_with("error") => {
                    eprintln!("ev3-sim: control: {shown:?}: {reply}");
                }
                Some(_) => log::info!("control: {shown}"),
                None => {}
            }
        };
        loop {
            match file.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => lines.push(&buf[..n], &mut serve),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        lines.end(&mut serve);
    }
}

/// Answers one socket client, line by line, until it hangs up.
fn socket_client(mut stream: UnixStream, served: &Mutex<Served>) {
    let mut buf = [0u8; 4096];
    let mut lines = LineBuffer::new();
    let Ok(mut out) = stream.try_clone() else {
        return;
    };
    let mut serve = |line: Result<&str, String>| {
        if let Some(reply) = serve_line(served, line) {
            // A client that hung up: its remaining lines still act.
            let _ = writeln!(out, "{reply}");
        }
    };
    loop {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => lines.push(&buf[..n], &mut serve),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    lines.end(&mut serve);
}
