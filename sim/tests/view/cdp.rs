//! Headless Chromium driven over the Chrome DevTools Protocol: Debian's
//! `chromium` started with `--remote-debugging-port=0` (it writes the port
//! it chose into `DevToolsActivePort` in its profile directory), one
//! WebSocket to the browser (`tungstenite`), pages attached as flat
//! sessions. Enough to open a page, evaluate JavaScript, click with the
//! mouse and take a screenshot.

use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

/// The browser's flags: headless, no sandbox (root in a container), no
/// network beyond the page (no QUIC, component updates, sync, first-run).
pub const FLAGS: [&str; 9] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,900",
];

/// A running headless Chromium; killed on drop.
pub struct Browser {
    child: Child,
    ws: WebSocket<MaybeTlsStream<TcpStream>>,
    next_id: u64,
}

/// Debian's chromium, when installed.
pub fn chromium() -> Option<&'static str> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .find(|p| Path::new(p).exists())
}

impl Browser {
    /// Starts `exe` with a new profile in `profile` and connects to it.
    pub fn start(exe: &str, profile: &Path) -> Result<Browser, String> {
        let mut child = Command::new(exe)
            .args(FLAGS)
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("--remote-debugging-port=0")
            .arg("about:blank")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("{exe}: {e}"))?;
        let active = profile.join("DevToolsActivePort");
        let deadline = Instant::now() + Duration::from_secs(30);
        let (port, path) = loop {
            if let Ok(text) = std::fs::read_to_string(&active) {
                let mut lines = text.lines();
                if let (Some(port), Some(path)) = (lines.next(), lines.next()) {
                    break (port.to_owned(), path.to_owned());
                }
            }
            if Instant::now() > deadline || child.try_wait().ok().flatten().is_some() {
                let _ = child.kill();
                let _ = child.wait();
                return Err("chromium did not open its DevTools port".into());
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let url = format!("ws://127.0.0.1:{port}{path}");
        let (ws, _) = tungstenite::connect(&url).map_err(|e| format!("{url}: {e}"))?;
        if let MaybeTlsStream::Plain(stream) = ws.get_ref() {
            stream
                .set_read_timeout(Some(Duration::from_secs(20)))
                .map_err(|e| e.to_string())?;
        }
        Ok(Browser {
            child,
            ws,
            next_id: 1,
        })
    }

    /// Calls `method` (in page session `session`, or on the browser) and
    /// returns its result; events in between are skipped.
    pub fn call(&mut self, session: Option<&str>, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let mut message = json!({ "id": id, "method": method, "params": params });
        if let Some(s) = session {
            message["sessionId"] = json!(s);
        }
        self.ws
            .send(Message::text(message.to_string()))
            .unwrap_or_else(|e| panic!("CDP {method}: {e}"));
        loop {
            let reply = self
                .ws
                .read()
                .unwrap_or_else(|e| panic!("CDP {method}: {e}"));
            let Message::Text(text) = reply else {
                continue;
            };
            let value: Value = serde_json::from_str(&text).expect("CDP sends JSON");
            if value["id"] == json!(id) {
                assert!(value["error"].is_null(), "CDP {method}: {}", value["error"]);
                return value["result"].clone();
            }
        }
    }

    /// Opens `url` in a new tab; returns the tab's session.
    pub fn open(&mut self, url: &str) -> String {
        let target = self.call(None, "Target.createTarget", json!({ "url": url }));
        let attached = self.call(
            None,
            "Target.attachToTarget",
            json!({ "targetId": target["targetId"], "flatten": true }),
        );
        attached["sessionId"]
            .as_str()
            .expect("a session")
            .to_owned()
    }

    /// The value of JavaScript `expression` in the page.
    pub fn eval(&mut self, session: &str, expression: &str) -> Value {
        let result = self.call(
            Some(session),
            "Runtime.evaluate",
            json!({ "expression": expression, "returnByValue": true, "awaitPromise": true }),
        );
        result["result"]["value"].clone()
    }

    /// Clicks with the mouse (pressed, then released) in the middle of the
    /// element with id `id`.
    pub fn click(&mut self, session: &str, id: &str) {
        let rect = self.eval(
            session,
            &format!(
                "(() => {{ const e = document.getElementById('{id}'); \
                 e.scrollIntoView({{ block: 'center' }}); const r = e.getBoundingClientRect(); \
                 return [r.x + r.width / 2, r.y + r.height / 2]; }})()"
            ),
        );
        let (x, y) = (rect[0].as_f64().unwrap(), rect[1].as_f64().unwrap());
        for kind in ["mouseMoved", "mousePressed", "mouseReleased"] {
            self.call(
                Some(session),
                "Input.dispatchMouseEvent",
                json!({ "type": kind, "x": x, "y": y, "button": "left", "clickCount": 1 }),
            );
            std::thread::sleep(Duration::from_millis(60));
        }
    }

    /// A PNG of the page.
    pub fn screenshot(&mut self, session: &str) -> Vec<u8> {
        use base64::Engine as _;
        let shot = self.call(
            Some(session),
            "Page.captureScreenshot",
            json!({ "format": "png" }),
        );
        base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().expect("PNG data"))
            .expect("base64")
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
