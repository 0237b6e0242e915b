//! A throwaway PostgreSQL cluster for tests: `initdb` in a temporary folder, `pg_ctl start` on a
//! free loopback port, a fresh database per test, and `pg_ctl stop` plus the folder removed when
//! the last test using it lets go.
//!
//! The binaries come from `FLINT_PG_BIN`, else the folder of `initdb` on `PATH`, else the newest
//! `/usr/lib/postgresql/*/bin` (Debian's `postgresql`, which `cargo xtask setup` installs). As root
//! the cluster runs as the `postgres` user: PostgreSQL refuses to run as root.

#![allow(dead_code)]

pub mod backend;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, Weak};

/// A running cluster; stopped and deleted on drop.
pub struct Cluster {
    dir: PathBuf,
    bin: PathBuf,
    port: u16,
    /// Run the binaries as this user (when the tests run as root).
    user: Option<String>,
    next_db: AtomicU32,
}

/// The cluster tests running now share; a test starting after every other ended starts another.
static SHARED: Mutex<Weak<Cluster>> = Mutex::new(Weak::new());

impl Cluster {
    /// The running shared cluster, started if none is.
    pub fn shared() -> Arc<Self> {
        let mut shared = SHARED.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(cluster) = shared.upgrade() {
            return cluster;
        }
        let cluster = Arc::new(Self::start());
        *shared = Arc::downgrade(&cluster);
        cluster
    }

    /// Starts a new cluster.
    pub fn start() -> Self {
        let bin = binaries();
        let user = running_as_root().then(|| "postgres".to_owned());
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "flint-pg-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("the cluster's folder");
        if let Some(user) = &user {
            give_to(&dir, user);
        }
        let port = free_port();
        let cluster = Self { dir, bin, port, user, next_db: AtomicU32::new(0) };
        let data = cluster.dir.join("data");
        cluster.run(
            "initdb",
            &[
                "-D",
                path(&data),
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
                "--no-instructions",
            ],
        );
        let options = format!(
            "-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off",
            cluster.dir.display()
        );
        let log = cluster.dir.join("log");
        cluster
            .run("pg_ctl", &["-D", path(&data), "-l", path(&log), "-o", &options, "-w", "-t", "60", "start"]);
        cluster
    }

    /// A URL for the database `name`.
    pub fn url(&self, name: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{name}", self.port)
    }

    /// A new empty database; its URL.
    pub fn fresh_database(&self) -> String {
        let name = format!("t{}", self.next_db.fetch_add(1, Ordering::SeqCst));
        let port = self.port.to_string();
        self.run("createdb", &["-h", "127.0.0.1", "-p", &port, "-U", "postgres", &name]);
        self.url(&name)
    }

    fn command(&self, program: &str) -> Command {
        let program = self.bin.join(program);
        match &self.user {
            Some(user) => {
                let mut cmd = Command::new("runuser");
                cmd.args(["-u", user, "--"]).arg(program);
                cmd
            }
            None => Command::new(program),
        }
    }

    fn run(&self, program: &str, args: &[&str]) {
        let out = self.command(program).args(args).output().unwrap_or_else(|e| panic!("{program}: {e}"));
        assert!(
            out.status.success(),
            "{program} {args:?} failed ({}):\n{}{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(self.dir.join("log")).unwrap_or_default()
        );
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let data = self.dir.join("data");
        let _ = self.command("pg_ctl").args(["-D", path(&data), "-m", "immediate", "-w", "stop"]).output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn path(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 temp path")
}

/// Where `initdb`, `pg_ctl` and `createdb` are.
fn binaries() -> PathBuf {
    if let Some(dir) = std::env::var_os("FLINT_PG_BIN") {
        return dir.into();
    }
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|dir| dir.join("initdb"))
        .find(|initdb| initdb.is_file())
        .and_then(|initdb| std::fs::canonicalize(initdb).ok())
        .and_then(|initdb| initdb.parent().map(Path::to_path_buf))
        .filter(|dir| dir.join("pg_ctl").is_file());
    let debian = || {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| entry.path().join("bin"))
            .filter(|bin| bin.join("initdb").is_file())
            .collect();
        dirs.sort_by_key(|dir| dir.parent().and_then(|v| v.file_name()?.to_str()?.parse::<u32>().ok()));
        dirs.pop()
    };
    on_path.or_else(debian).unwrap_or_else(|| {
        panic!(
            "PostgreSQL is not installed, and these tests start a real one: run `cargo xtask setup` (it \
             installs Debian's postgresql), or set FLINT_PG_BIN to the folder holding initdb and pg_ctl"
        )
    })
}

fn running_as_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
}

/// Makes `dir` the user's, so the cluster (running as them) can write in it.
fn give_to(dir: &Path, user: &str) {
    let id = |flag: &str| {
        let out = Command::new("id").args([flag, user]).output().expect("id");
        String::from_utf8_lossy(&out.stdout).trim().parse::<u32>().unwrap_or_else(|_| {
            panic!("no user {user:?} to run PostgreSQL as (tests run as root; Debian's postgresql makes it)")
        })
    };
    std::os::unix::fs::chown(dir, Some(id("-u")), Some(id("-g"))).expect("chown the cluster's folder");
}

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("its address").port()
}
