//! One folder for everything a test run writes to the temporary directory.
//!
//! The tests make a folder per gateway, database, PostgreSQL cluster, browser profile and export
//! (over 400 a run), and most of them leave it: a machine that runs CI daily gathered thousands
//! under `/tmp`. `cargo xtask test` now gives every command it runs `TMPDIR` set to a folder of its
//! own (Rust's `temp_dir`, Node's `tmpdir`, Chromium and PostgreSQL all read it), removed when the
//! run passes. A failed run's folder is kept for reading and named; the next run removes the
//! folders of runs no longer running.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result};

/// What a run's folder is called in the temporary directory, before its process id.
const PREFIX: &str = "flint-tests-";

/// A test run's temporary folder.
pub struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    /// Makes this run's folder (in the temporary directory this process was given), after
    /// removing those of earlier runs that are no longer running.
    pub fn new() -> Result<Self> {
        let parent = std::env::temp_dir();
        remove_stale(&parent, |pid| Path::new("/proc").join(pid.to_string()).exists());
        let dir = parent.join(format!("{PREFIX}{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        // As open as /tmp itself: the PostgreSQL tests run its server as the `postgres` user when
        // they run as root, and it makes its socket here.
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o1777))
            .with_context(|| format!("opening {} to the test servers' users", dir.display()))?;
        Ok(Self { dir })
    }

    /// A command running `program` that writes its temporary files into this run's folder.
    pub fn command(&self, program: &str) -> Command {
        let mut cmd = Command::new(program);
        cmd.env("TMPDIR", &self.dir);
        cmd
    }

    /// Removes the folder when the run passed; names it when it failed.
    pub fn finish(self, result: Result<()>) -> Result<()> {
        match &result {
            Ok(()) => {
                if let Err(err) = std::fs::remove_dir_all(&self.dir) {
                    eprintln!("could not remove the tests' temporary folder {}: {err}", self.dir.display());
                }
            }
            Err(_) => eprintln!("the tests' temporary files are kept in {}", self.dir.display()),
        }
        result
    }
}

/// Removes the run folders in `parent` whose process `running` says has ended.
fn remove_stale(parent: &Path, running: impl Fn(u32) -> bool) {
    let Ok(entries) = std::fs::read_dir(parent) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let pid = name.to_str().and_then(|n| n.strip_prefix(PREFIX)).and_then(|p| p.parse::<u32>().ok());
        if pid.is_some_and(|pid| !running(pid)) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_folders_of_ended_runs_are_removed() {
        let parent = std::env::temp_dir().join(format!("xtask-scratch-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&parent);
        for name in ["flint-tests-11", "flint-tests-22", "flint-tests-x", "flint-e2e-33"] {
            std::fs::create_dir_all(parent.join(name)).unwrap();
        }
        remove_stale(&parent, |pid| pid == 22);
        let mut left: Vec<String> = std::fs::read_dir(&parent)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["flint-e2e-33", "flint-tests-22", "flint-tests-x"]);
        std::fs::remove_dir_all(&parent).unwrap();
    }
}
