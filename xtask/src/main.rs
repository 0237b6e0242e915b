//! `cargo xtask`: the two commands of the README and the chores around them.
//!
//! Every command first installs what is missing (and says so), so a fresh machine needs nothing else.

mod app_build;
mod bench_browser;
mod bench_scale;
mod compress;
mod layers;
mod model;
mod real_servers;
mod scratch;
mod setup;
mod tasks;
mod vite_export;

use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask <command>

  serve   set up, build the app and the gateway (release) and serve Flint on http://127.0.0.1:8787
  build   set up, then build the app (dist/, with its compressed copies) and the gateway, as serve
          does, without serving; `build app`: only the app, with the tools already installed (for
          a container's build, which installs them itself)
  test    set up, then run every test: unit, gateway, worker and end-to-end in headless Chromium;
          `test vite-export`: only the build of a React answer's Vite export (needs the npm registry)
  bench   run the benchmarks and write their results to bench/ (--quality: also the embedded
          model's complete-page rate on 20 prompts and the judge benchmark; judge: only the share
          of answers passing every check, single run vs best of 4 and 8; worker-text: only the
          worker's wasm text benchmark; load: only the page's first-visit and reload costs;
          browser [--baseline REV]: only the browser benchmark, with REV's build beside this one;
          relay: where a stream's main-thread time goes, by stage, from a name-keeping build;
          scale [--baseline REV]: the gateway at 10,000 sockets and 2,000 streams, per allocator,
          or this build and REV's side by side, in bench/scale.md)
  lint    cargo fmt --check and clippy (native and wasm) with warnings as errors
  setup   only install what is missing (toolchain, npm packages, the embedded model, Chromium);
          `setup trunk`: Trunk, for `trunk serve` (the commands above do not need it);
          `setup real-servers`: only the Python environment of the tests against real servers;
          `setup preview-packages`: only the npm modules previews import (target/preview-vendor/)
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("serve") => tasks::serve(&args[1..]),
        Some("build") if args.get(1).is_some_and(|a| a == "app") => tasks::build_app(),
        Some("build") => tasks::build(),
        Some("test") if args.get(1).is_some_and(|a| a == "vite-export") => vite_export::check(),
        Some("test") => tasks::test(&args[1..]),
        Some("bench") => tasks::bench(&args[1..]),
        Some("lint") => tasks::lint(),
        Some("setup") if args.get(1).is_some_and(|a| a == "trunk") => setup::trunk(),
        Some("setup") if args.get(1).is_some_and(|a| a == "real-servers") => real_servers::ensure().map(drop),
        Some("setup") if args.get(1).is_some_and(|a| a == "preview-packages") => {
            setup::preview_packages::ensure().map(drop)
        }
        Some("setup") => setup::all(setup::Needs::everything()),
        _ => {
            eprint!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("\nxtask: {err:#}");
            ExitCode::FAILURE
        }
    }
}
