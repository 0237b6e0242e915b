//! One gateway process under test: the release binary, started with a bench configuration file.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

pub struct Gateway {
    child: Child,
    pub addr: std::net::SocketAddr,
    _dir: TempDir,
}

/// A folder removed when dropped (the config file and the gateway's SQLite files live there).
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Limits off: thousands of tabs from one loopback address are the point of the bench, and the
/// connection cap per address and the person-level limits (`[limits.signed_in]`, which loopback gets) would refuse them otherwise.
fn config(port: u16, upstream: &str, model: &str, dir: &Path) -> String {
    format!(
        r#"
default_model = "scripted/{model}"

[server]
listen = "127.0.0.1:{port}"
max_tokens = 100000
max_connections_per_address = 0

[share]
database = "{db}"

[limits.signed_in]
sockets = 0
streams = 0
starts_per_minute = 0

[[providers]]
kind = "openai"
name = "scripted"
base_url = "{upstream}"
api_key = "sk-bench-0123456789abcdefghijklmnopqrstuv"
max_concurrent = 100000
models = [{{ id = "{model}" }}]
"#,
        db = dir.join("shares.sqlite3").display(),
    )
}

impl Gateway {
    /// Starts `bin` against `upstream` and waits until it accepts connections.
    pub async fn start(bin: &Path, upstream: &str, model: &str) -> anyhow::Result<Self> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let dir = std::env::temp_dir().join(format!("flint-scale-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let dir = TempDir(dir);
        let file = dir.0.join("flint.toml");
        std::fs::write(&file, config(port, upstream, model, &dir.0))?;
        let log = std::fs::File::create(dir.0.join("gateway.log"))?;
        let child = Command::new(bin)
            .arg("--config")
            .arg(&file)
            // The level a gateway runs at unless told otherwise: `warn` once hid 14 MB that
            // `info`'s spans kept after a burst.
            .env_remove("RUST_LOG")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .with_context(|| format!("starting {}", bin.display()))?;
        let mut gateway = Self { child, addr: ([127, 0, 0, 1], port).into(), _dir: dir };
        let deadline = Instant::now() + Duration::from_secs(30);
        while tokio::net::TcpStream::connect(gateway.addr).await.is_err() {
            if let Some(status) = gateway.child.try_wait()? {
                let log = std::fs::read_to_string(gateway._dir.0.join("gateway.log")).unwrap_or_default();
                bail!("the gateway exited ({status}) before listening:\n{log}");
            }
            if Instant::now() > deadline {
                bail!("the gateway did not listen on {} within 30 s", gateway.addr);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(gateway)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
