//! Export: take the code out as text, a file, a tab or a zip; a React project also as a Vite
//! project or as one page that runs offline.

use std::time::Duration;

use flint_protocol::project::unbundle;
use flint_protocol::worker::{AnswerFile, PreviewPackages};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::context::expect_worker_link;
use crate::draft::expect_draft;
use crate::export::offline::OfflinePackages;
use crate::export::vite::vite_zip;
use crate::export::{answer_zip, file_stem, tab_page};
use crate::interop::clipboard::copy_text;
use crate::interop::download::{download, open_in_tab};
use crate::interop::http::get_text;
use crate::project::{is_project, project_of};
use crate::run::expect_runner;
use crate::workspace::expect_workspace;

/// How long "Copied" and the like stay up.
const NOTE_MS: u64 = 2_500;

const NOTHING_YET: &str = "Nothing to export yet: run a prompt first.";

/// Small buttons in the code pane's title bar: Copy, Download .html, Open in a new tab (still
/// sandboxed), when the answer has several files Download .zip, and for a React project a Vite
/// project (.zip) and one .html that runs offline.
#[component]
pub fn ExportMenu() -> impl IntoView {
    let runner = expect_runner();
    let draft = expect_draft();
    let workspace = expect_workspace();
    let worker = StoredValue::new_local(expect_worker_link());
    let note = RwSignal::new(None::<String>);
    let files = runner.state().files;
    // A project keeps all its files in its code (a restored or shared one has no answer's files).
    let several_files = Memo::new(move |_| {
        workspace.track();
        files.with(|f| f.len() > 1) || workspace.with_code(|code| unbundle(code).is_some())
    });
    let react = Memo::new(move |_| {
        workspace.track();
        files.with(|files| workspace.with_code(|code| is_project(code, files)))
    });

    let say = move |text: String| {
        note.set(Some(text.clone()));
        set_timeout(
            move || {
                if note.try_get_untracked().flatten().as_deref() == Some(text.as_str()) {
                    note.try_set(None);
                }
            },
            Duration::from_millis(NOTE_MS),
        );
    };

    let copy = {
        move |_| {
            let Some(code) = runner.code().filter(|c| !c.trim().is_empty()) else {
                say(NOTHING_YET.into());
                return;
            };
            spawn_local(async move {
                if copy_text(&code).await {
                    say("Code copied".into());
                } else {
                    say("The browser would not copy: select the code and press Ctrl+C.".into());
                }
            });
        }
    };
    let save_page = {
        move |_| match runner.page() {
            Some(page) => {
                let name = format!("{}.html", file_stem(&draft.prompt.get_untracked()));
                match download(&name, "text/html;charset=utf-8", page.as_bytes()) {
                    Ok(()) => say(format!("Saved {name}")),
                    Err(err) => say(format!("The browser would not save the file: {err}")),
                }
            }
            None => say(NOTHING_YET.into()),
        }
    };
    let open_tab = {
        move |_| match runner.page() {
            Some(page) => {
                let title = draft.prompt.get_untracked();
                if let Err(err) = open_in_tab(&tab_page(&page, title.trim())) {
                    say(format!("The browser would not open a tab: {err}"));
                }
            }
            None => say(NOTHING_YET.into()),
        }
    };
    let save_zip = move |_| {
        let code = runner.code();
        let zip = match code.as_deref().and_then(unbundle) {
            Some(own) => answer_zip(&own, None),
            None => files.with_untracked(|files| answer_zip(files, code.as_deref())),
        };
        let name = format!("{}.zip", file_stem(&draft.prompt.get_untracked()));
        match download(&name, "application/zip", &zip) {
            Ok(()) => say(format!("Saved {name}")),
            Err(err) => say(format!("The browser would not save the file: {err}")),
        }
    };

    // The project as the editor holds it, and the gateway's packages, or why it cannot go out.
    let project = move || -> Result<(Vec<AnswerFile>, PreviewPackages), String> {
        let code = runner.code().ok_or(NOTHING_YET)?;
        let project = files.with_untracked(|files| project_of(&code, files)).ok_or(NOT_A_PROJECT)?;
        let packages = worker.with_value(|w| w.packages()).ok_or(NO_PACKAGES)?;
        Ok((project, packages))
    };
    let save_vite = move |_| {
        let (files, packages) = match project() {
            Ok(ready) => ready,
            Err(why) => return say(why),
        };
        let stem = file_stem(&draft.prompt.get_untracked());
        say("Preparing the Vite project…".into());
        let sent = files.clone();
        worker.get_value().page_with(sent, None, move |built| {
            let zip = built.map_err(|problems| does_not_build(&problems)).and_then(|(_, shape)| {
                vite_zip(&files, &shape, &packages.packages, &stem).map_err(|e| e.to_string())
            });
            match zip {
                Ok(zip) => save(say, &format!("{stem}-vite.zip"), "application/zip", &zip),
                Err(why) => say(why),
            }
        });
    };
    let save_offline = move |_| {
        let (files, packages) = match project() {
            Ok(ready) => ready,
            Err(why) => return say(why),
        };
        let name = format!("{}-offline.html", file_stem(&draft.prompt.get_untracked()));
        say("Preparing the offline page…".into());
        let link = worker.get_value();
        link.clone().page_with(files.clone(), None, move |built| {
            let shape = match built {
                Ok((_, shape)) => shape,
                Err(problems) => {
                    return say(does_not_build(&problems));
                }
            };
            spawn_local(async move {
                let inlined = match fetch_vendored(OfflinePackages::new(&packages, &shape)).await {
                    Ok(inlined) => inlined,
                    Err(why) => {
                        return say(why);
                    }
                };
                link.page_with(files, Some(inlined), move |built| match built {
                    Ok((page, _)) => save(say, &name, "text/html;charset=utf-8", page.as_bytes()),
                    Err(problems) => say(does_not_build(&problems)),
                });
            });
        });
    };

    view! {
        <div class="export">
            <span class="export-note" data-testid="export-note" role="status">{move || note.get()}</span>
            <button class="link-btn" data-testid="export-copy" title="Copy the code" on:click=copy>
                "Copy"
            </button>
            <button
                class="link-btn"
                data-testid="export-download"
                title="Download the page as one .html file"
                on:click=save_page
            >
                "Download"
            </button>
            <Show when=move || several_files.get()>
                <button
                    class="link-btn"
                    data-testid="export-zip"
                    title="Download every file of the answer as a .zip"
                    on:click=save_zip
                >
                    "Zip"
                </button>
            </Show>
            <Show when=move || react.get()>
                <button
                    class="link-btn"
                    data-testid="export-vite"
                    title="Download the React app as a Vite project (.zip): npm install && npm run dev"
                    on:click=save_vite
                >
                    "Vite .zip"
                </button>
                <button
                    class="link-btn"
                    data-testid="export-offline"
                    title="Download the React app as one .html file that runs from disk, with no server or network"
                    on:click=save_offline
                >
                    "Offline .html"
                </button>
            </Show>
            <button
                class="link-btn"
                data-testid="export-open"
                title="Open the page in a new tab (still sandboxed)"
                on:click=open_tab
            >
                "Open ↗"
            </button>
        </div>
    }
}

const NOT_A_PROJECT: &str = "This code is not a React project: download it as a page instead.";

const NO_PACKAGES: &str = "This gateway has no preview packages yet: run `cargo xtask setup preview-packages`, restart \
                           it and reload Flint.";

/// The sentence for a project that does not build: its first problem, and what to do.
fn does_not_build(problems: &[String]) -> String {
    let first = problems.first().map_or("it has no files", String::as_str);
    format!("The project does not build yet ({first}): fix it, then export again.")
}

/// Saves `bytes` as `name` and says so, with the size.
fn save(say: impl Fn(String), name: &str, mime: &str, bytes: &[u8]) {
    match download(name, mime, bytes) {
        Ok(()) => say(format!("Saved {name} ({})", size(bytes.len()))),
        Err(err) => say(format!("The browser would not save the file: {err}")),
    }
}

fn size(bytes: usize) -> String {
    if bytes >= 1 << 20 {
        format!("{:.1} MB", bytes as f64 / f64::from(1 << 20))
    } else {
        format!("{} KB", bytes.div_ceil(1024))
    }
}

/// Fetches, from the gateway that served Flint, every vendored file `offline` names, and gives the
/// packages that carry them; else the sentence saying which file failed.
async fn fetch_vendored(mut offline: OfflinePackages) -> Result<PreviewPackages, String> {
    while let Some(url) = offline.next_fetch() {
        match get_text(&url).await {
            Ok(text) => offline.add(&url, text),
            Err(err) => {
                return Err(format!(
                    "Could not fetch {url} for the offline page ({err}): check that Flint's gateway is running and \
                     export again."
                ));
            }
        }
    }
    offline.packages().ok_or_else(|| "The offline page is missing a vendored file: export again.".to_owned())
}
