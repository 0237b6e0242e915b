//! Export and import of the whole history, so work survives a cleared browser or moves to another.

use leptos::prelude::*;
use leptos::task::spawn_local;
use web_sys::HtmlInputElement;

use crate::backup::{
    BackupError, MAX_BACKUP_BYTES, capped_import, export_file, file_name, import_file, import_summary, to_add,
};
use crate::interop::download::download;
use crate::interop::epoch_ms;
use crate::interop::store::{Persistence, SessionStore, StoreError, chosen_file_text};
use crate::session::saved::{HISTORY_PICTURE_BYTES, history_entries, pictures_let_go};

/// "Export" and "Import…" for the history, what the last import did, and, when the browser refused
/// to keep Flint's storage, a line saying so. `changed` is bumped after an import so the list reloads.
#[component]
pub fn HistoryBackup(persistence: ReadSignal<Option<Persistence>>, changed: RwSignal<u32>) -> impl IntoView {
    let result = RwSignal::new(None::<Result<String, String>>);
    let input = NodeRef::<leptos::html::Input>::new();

    let export = move |_| {
        spawn_local(async move {
            let outcome = async {
                let store = SessionStore::open().await.map_err(|e| e.to_string())?;
                let entries = history_entries(&store.history().await.map_err(|e| e.to_string())?);
                let now = epoch_ms();
                download(&file_name(now), "application/json", export_file(&entries, now).as_bytes())
                    .map_err(|e| e.to_string())?;
                Ok::<usize, String>(entries.len())
            }
            .await;
            result.set(Some(match outcome {
                Ok(n) => Ok(format!("Exported {n} generation{}.", if n == 1 { "" } else { "s" })),
                Err(err) => Err(format!("Could not export the history: {err}.")),
            }));
        });
    };

    let import = move |_| {
        let Some(element) = input.get_untracked() else { return };
        let element: HtmlInputElement = element;
        spawn_local(async move {
            let outcome = import_chosen(&element).await;
            element.set_value("");
            if outcome.is_ok() {
                changed.update(|n| *n += 1);
            }
            result.set(Some(outcome));
        });
    };

    view! {
        <div class="history-backup">
            <button class="btn" data-testid="history-export" on:click=export
                title="Save every generation in this browser's history as one file">
                "Export"
            </button>
            <label class="btn" title="Add the generations of an exported history file">
                "Import…"
                <input node_ref=input type="file" accept="application/json,.json" class="visually-hidden"
                    data-testid="history-import-file" on:change=import />
            </label>
            {move || result.get().map(|r| match r {
                Ok(text) => view! { <span class="history-note" data-testid="history-backup-result">{text}</span> }.into_any(),
                Err(text) => view! {
                    <span class="history-note error" role="alert" data-testid="history-backup-result">{text}</span>
                }.into_any(),
            })}
            <Show when=move || persistence.get() == Some(Persistence::Refused)>
                <p class="history-note" data-testid="history-persist-refused">
                    "This browser may clear Flint's history when space runs low (it refused to keep it): \
                     export it to keep a copy."
                </p>
            </Show>
        </div>
    }
}

/// Reads the chosen file and adds the generations that are not here yet: the sentence to show.
async fn import_chosen(element: &HtmlInputElement) -> Result<String, String> {
    let text = match chosen_file_text(element, MAX_BACKUP_BYTES).await {
        Ok(Some(text)) => text,
        Ok(None) => return Err("Choose a history file to import.".into()),
        Err(err) => {
            let size = err.to_string().strip_prefix("too large: ").and_then(|n| n.parse::<u64>().ok());
            return Err(match size {
                Some(bytes) => BackupError::TooLarge(bytes >> 20).to_string(),
                None => format!("Could not read the file: {err}."),
            });
        }
    };
    let imported = import_file(&text).map_err(|e| e.to_string())?;
    let unreadable = imported.unreadable;
    let failed = |err: StoreError| format!("Could not save the imported history in this browser: {err}.");
    let store = SessionStore::open().await.map_err(failed)?;
    let entries = history_entries(&store.history().await.map_err(failed)?);
    let existing: Vec<u64> = entries.iter().filter_map(|g| g.id).collect();
    let (new, already) = to_add(imported, &existing);
    let added = new.len();
    let (write, let_go) = capped_import(&entries, new, HISTORY_PICTURE_BYTES);
    let records = write.iter().filter_map(|g| Some((g.id?, g.to_json()))).collect::<Vec<_>>();
    store.put_history(records).await.map_err(failed)?;
    let summary = import_summary(added, already, unreadable);
    Ok(if let_go == 0 { summary } else { format!("{summary} {}", pictures_let_go(let_go)) })
}
