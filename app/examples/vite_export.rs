//! Writes the Vite project export of a React answer, as the app makes it, for `cargo xtask test`
//! to build with Vite against the npm registry:
//!
//! ```sh
//! FLINT_PREVIEW_VENDOR=target/preview-vendor \
//!   cargo run -p flint-app --example vite_export -- tests/fixtures/react-files.md OUT_DIR "a React todo app"
//! ```
//!
//! The answer is parsed by the worker's parser, built by the worker's session (the request the
//! app sends it) with the gateway's manifest, and zipped by the app's export; the zip is written
//! to `OUT_DIR/<stem>-vite.zip` and its path printed.

use std::path::PathBuf;

use flint_app::export::file_stem;
use flint_app::export::vite::vite_zip;
use flint_app::project::project_of;
use flint_protocol::worker::{AnswerFile, PreviewPackages, WorkerRequest};
use flint_worker::parser::StreamParser;
use flint_worker::session::{Next, Session};

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [answer, out, prompt] = args.as_slice() else {
        return Err("usage: vite_export ANSWER.md OUT_DIR PROMPT".into());
    };
    let vendor = std::env::var_os("FLINT_PREVIEW_VENDOR")
        .map(PathBuf::from)
        .ok_or("FLINT_PREVIEW_VENDOR must name the vendored preview packages (target/preview-vendor)")?;
    let manifest = std::fs::read_to_string(vendor.join("manifest.json"))
        .map_err(|e| format!("{}: {e}: run `cargo xtask setup preview-packages`", vendor.display()))?;
    let packages: PreviewPackages =
        serde_json::from_str(&manifest).map_err(|e| format!("manifest.json: {e}"))?;

    let text = std::fs::read_to_string(answer).map_err(|e| format!("{answer}: {e}"))?;
    let mut parser = StreamParser::new();
    parser.push(&text);
    parser.finish();
    let main = parser.main_file();
    let files: Vec<AnswerFile> = (parser.files().iter().enumerate())
        .map(|(i, f)| AnswerFile {
            name: f.name.clone(),
            language: f.language.clone(),
            content: f.content.clone(),
            main: main == Some(i),
        })
        .collect();
    let code = files.iter().find(|f| f.main).map(|f| f.content.clone()).unwrap_or_default();
    let project = project_of(&code, &files).ok_or(format!("{answer}: not a React project"))?;

    let mut session = Session::new();
    session.handle(WorkerRequest::Packages(packages.clone()), 0.0);
    let shape =
        match session.handle(WorkerRequest::Page { id: 1, files: project.clone(), packages: None }, 0.0) {
            Next::Page(_, Ok((_, shape))) => shape,
            Next::Page(_, Err(problems)) => {
                return Err(format!("{answer} does not build: {}", problems.join("; ")));
            }
            other => return Err(format!("unexpected answer from the worker: {other:?}")),
        };
    let stem = file_stem(prompt);
    let zip = vite_zip(&project, &shape, &packages.packages, &stem).map_err(|e| e.to_string())?;
    let path = PathBuf::from(out).join(format!("{stem}-vite.zip"));
    std::fs::write(&path, zip).map_err(|e| format!("{}: {e}", path.display()))?;
    println!("{}", path.display());
    Ok(())
}
