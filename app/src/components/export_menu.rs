//! Export: take the code out as text, a file, a tab or a zip.

use std::time::Duration;

use flint_protocol::project::unbundle;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::draft::expect_draft;
use crate::export::{answer_zip, file_stem, tab_page};
use crate::interop::clipboard::copy_text;
use crate::interop::download::{download, open_in_tab};
use crate::run::expect_runner;

/// How long "Copied" and the like stay up.
const NOTE_MS: u64 = 2_500;

const NOTHING_YET: &str = "Nothing to export yet: run a prompt first.";

/// Small buttons in the code pane's title bar: Copy, Download .html, Open in a new tab (still
/// sandboxed) and, when the answer has several files, Download .zip.
#[component]
pub fn ExportMenu() -> impl IntoView {
    let runner = expect_runner();
    let draft = expect_draft();
    let note = RwSignal::new(None::<String>);
    let files = runner.state().files;
    let workspace = runner.workspace();
    // A project keeps all its files in its code (a restored or shared one has no answer's files).
    let several_files = Memo::new(move |_| {
        workspace.track();
        files.with(|f| f.len() > 1) || workspace.with_code(|code| unbundle(code).is_some())
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
