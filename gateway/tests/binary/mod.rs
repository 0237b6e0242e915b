//! The real `flint-gateway` binary, started with a `flint.toml` of the test's and a shell line run
//! before it (`ulimit -n 1024`), its whole output kept for the test to read.

#![allow(dead_code, missing_docs)]

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub struct Binary {
    child: Child,
    pub addr: SocketAddr,
    output: Arc<Mutex<String>>,
    lines: Receiver<String>,
    dir: PathBuf,
}

impl Drop for Binary {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A fresh folder for one test's files.
pub fn temp_dir(tag: &str) -> PathBuf {
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let dir = std::env::temp_dir().join(format!("flint-bin-{tag}-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn keep(
    stream: impl Read + Send + 'static,
    output: Arc<Mutex<String>>,
    lines: std::sync::mpsc::Sender<String>,
) {
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            if let Ok(mut all) = output.lock() {
                all.push_str(&line);
                all.push('\n');
            }
            let _ = lines.send(line);
        }
    });
}

impl Binary {
    /// Starts the binary on `127.0.0.1:0` with `config` (a `flint.toml`'s text), `envs`, `RUST_LOG`
    /// = `log`, after `shell` (e.g. `ulimit -n 1024`); waits until it says it is serving.
    pub fn start(tag: &str, config: &str, shell: &str, log: &str, envs: &[(&str, &str)]) -> Self {
        let dir = temp_dir(tag);
        let file = dir.join("flint.toml");
        std::fs::write(&file, format!("[share]\nenabled = false\n{config}")).expect("config file");
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(format!("set -e\n{shell}\nexec \"$0\" --config \"$1\" --listen 127.0.0.1:0"))
            .arg(env!("CARGO_BIN_EXE_flint-gateway"))
            .arg(&file)
            .env_remove("FLINT_OPENAI_BASE_URL")
            .env_remove("FLINT_LOG_FORMAT")
            // The mark of a gateway that re-started itself (`allocator::restart_tuned`): inherited
            // from a shell, it would keep this one from doing so.
            .env_remove(flint_gateway::allocator::RESTARTED)
            // Every database of the gateway's in this folder, never the person's own; no embedded
            // model found there either, so a gateway without providers starts at once.
            .env("XDG_DATA_HOME", &dir)
            .env("FLINT_CACHE_DIR", &dir)
            .env_remove("FLINT_MODEL_PATH")
            .env("RUST_LOG", log)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (name, value) in envs {
            command.env(name, value);
        }
        let mut child = command.spawn().expect("the gateway binary runs");
        let output = Arc::new(Mutex::new(String::new()));
        let (send, lines) = channel();
        keep(child.stdout.take().expect("stdout"), Arc::clone(&output), send.clone());
        keep(child.stderr.take().expect("stderr"), Arc::clone(&output), send);
        let mut binary = Self { child, addr: SocketAddr::from(([127, 0, 0, 1], 0)), output, lines, dir };
        let serving = binary.wait_for("Flint is serving on http://", Duration::from_secs(60));
        let addr = serving.split("http://").nth(1).and_then(|rest| rest.split('/').next());
        binary.addr = addr.and_then(|a| a.parse().ok()).unwrap_or_else(|| panic!("no address in {serving}"));
        binary
    }

    /// The first line (from now on) containing `text`; panics with the output after `patience`.
    pub fn wait_for(&self, text: &str, patience: Duration) -> String {
        let deadline = Instant::now() + patience;
        loop {
            match self.lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(line) if line.contains(text) => return line,
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {
                    panic!("the gateway never logged {text:?}:\n{}", self.output())
                }
            }
        }
    }

    /// Everything it printed so far.
    pub fn output(&self) -> String {
        self.output.lock().map(|o| o.clone()).unwrap_or_default()
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}
