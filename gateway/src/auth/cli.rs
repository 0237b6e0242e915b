//! `flint-gateway token create NAME | list | revoke NAME [--config PATH]`: the operator's access
//! tokens, in the database `auth.database` of the configuration (read as the gateway reads it).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, UNIX_EPOCH};

use super::store::AuthStore;
use super::unix_now;
use crate::config::{AuthMode, Config};

/// How the verb is used.
pub const USAGE: &str = "usage: flint-gateway token create NAME | list | revoke NAME [--config PATH]
  create  makes an access token for NAME (a person's name or address) and prints it once
  list    lists the tokens, when each was made and its open sign-ins
  revoke  deletes NAME's token and ends every sign-in made with it
The tokens live in auth.database of flint.toml (default ~/.local/share/flint/auth.sqlite3), or in
the PostgreSQL database of store.url when set; the gateway asks for them with auth.mode = \"tokens\".";

/// Runs `token …` (the arguments after `token`), printing to stdout and stderr.
pub fn run(args: &[String]) -> ExitCode {
    // On a thread of its own: `execute` runs the store on its own runtime, which cannot start
    // inside the gateway's `#[tokio::main]`.
    std::thread::scope(|scope| scope.spawn(|| run_here(args)).join().unwrap_or(ExitCode::FAILURE))
}

fn run_here(args: &[String]) -> ExitCode {
    let mut out = std::io::stdout().lock();
    let mut err = std::io::stderr().lock();
    match execute(args, &mut out, &mut err) {
        Ok(()) => ExitCode::SUCCESS,
        Err(CliError::Usage(problem)) => {
            if !problem.is_empty() {
                let _ = writeln!(err, "{problem}");
            }
            let _ = writeln!(err, "{USAGE}");
            ExitCode::from(2)
        }
        Err(CliError::Failed(problem)) => {
            let _ = writeln!(err, "{problem}");
            ExitCode::FAILURE
        }
    }
}

/// Why the verb did nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CliError {
    /// The arguments are wrong: the usage follows.
    #[error("{0}")]
    Usage(String),
    /// The configuration or the database refused.
    #[error("{0}")]
    Failed(String),
}

/// The verb's work: results on `out` (the token alone, for scripts), notes on `note`.
pub fn execute(args: &[String], out: &mut dyn Write, note: &mut dyn Write) -> Result<(), CliError> {
    let failed = |e: &dyn std::fmt::Display| CliError::Failed(e.to_string());
    let mut config_path: Option<PathBuf> = None;
    let mut words = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--config" => {
                config_path =
                    Some(args.next().ok_or(CliError::Usage("--config needs a value".into()))?.into());
            }
            "-h" | "--help" => return Err(CliError::Usage(String::new())),
            flag if flag.starts_with("--") => {
                return Err(CliError::Usage(format!("unknown argument {flag}")));
            }
            word => words.push(word),
        }
    }
    let config = Config::discover(config_path.as_deref()).map_err(|e| failed(&e))?;
    // The gateway's store is async (PostgreSQL); the CLI runs it on a runtime of its own.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| failed(&format!("cannot start the store's runtime: {e}")))?;
    let open = || runtime.block_on(AuthStore::open_configured(&config)).map_err(|e| failed(&e));
    let write = |out: &mut dyn Write, text: String| writeln!(out, "{text}").map_err(|e| failed(&e));
    let mode_note = |note: &mut dyn Write| {
        if config.auth.mode != AuthMode::Tokens {
            let _ = writeln!(
                note,
                "note: auth.mode is not \"tokens\" in this configuration, so the gateway does not ask for tokens yet"
            );
        }
    };
    match words.as_slice() {
        ["create", name] => {
            let store = open()?;
            let token = runtime.block_on(store.create_token(name, unix_now())).map_err(|e| failed(&e))?;
            let _ = writeln!(
                note,
                "Access token for {name} (shown this once; only its hash is kept). They sign in at /signin:"
            );
            mode_note(note);
            write(out, token)
        }
        ["list"] => {
            let store = open()?;
            let tokens = runtime.block_on(store.list_tokens(unix_now())).map_err(|e| failed(&e))?;
            if tokens.is_empty() {
                let _ = writeln!(note, "no tokens yet; make one with `flint-gateway token create NAME`");
            }
            for token in tokens {
                let made = UNIX_EPOCH + Duration::from_secs(u64::try_from(token.created_at).unwrap_or(0));
                let made = httpdate::fmt_http_date(made);
                write(out, format!("{}\tmade {made}\t{} signed in", token.name, token.sessions))?;
            }
            mode_note(note);
            Ok(())
        }
        ["revoke", name] => {
            let store = open()?;
            let ended = runtime.block_on(store.revoke_token(name)).map_err(|e| failed(&e))?;
            write(out, format!("revoked {name}'s token; {ended} sign-in(s) ended"))
        }
        [] => Err(CliError::Usage("token needs a verb".to_owned())),
        [verb, ..] if matches!(*verb, "create" | "revoke" | "list") => Err(CliError::Usage(format!(
            "token {verb} needs {}",
            if *verb == "list" { "no NAME" } else { "one NAME" }
        ))),
        [verb, ..] => Err(CliError::Usage(format!("unknown verb {verb}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_in(config: &std::path::Path, args: &[&str]) -> Result<(String, String), String> {
        let mut args: Vec<String> = args.iter().map(|s| (*s).to_owned()).collect();
        args.extend(["--config".to_owned(), config.display().to_string()]);
        let (mut out, mut note) = (Vec::new(), Vec::new());
        execute(&args, &mut out, &mut note).map_err(|e| e.to_string())?;
        Ok((String::from_utf8_lossy(&out).into_owned(), String::from_utf8_lossy(&note).into_owned()))
    }

    #[test]
    fn tokens_are_created_listed_and_revoked() {
        let dir = std::env::temp_dir().join(format!("flint-token-cli-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("dir");
        let db = dir.join("auth.sqlite3");
        let config = dir.join("flint.toml");
        std::fs::write(
            &config,
            format!("[auth]\nmode = \"tokens\"\ndatabase = {:?}\n", db.display().to_string()),
        )
        .expect("config");
        let (token, note) = run_in(&config, &["create", "ada"]).expect("create");
        assert!(token.trim().starts_with("flint_") && note.contains("shown this once"), "{token} {note}");
        assert!(run_in(&config, &["create", "ada"]).expect_err("taken").contains("exists"));
        let (list, _) = run_in(&config, &["list"]).expect("list");
        assert!(list.starts_with("ada\tmade ") && list.contains("0 signed in"), "{list}");
        let (revoked, _) = run_in(&config, &["revoke", "ada"]).expect("revoke");
        assert!(revoked.contains("revoked ada's token"), "{revoked}");
        assert!(run_in(&config, &["revoke", "ada"]).expect_err("gone").contains("no token is named"));
        assert!(run_in(&config, &["create"]).expect_err("no name").contains("needs one NAME"));
        assert!(run_in(&config, &["rotate"]).expect_err("verb").contains("unknown verb"));
    }
}
