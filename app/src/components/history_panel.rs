//! History: earlier generations, to reopen or delete.

use leptos::prelude::*;

use crate::components::{HistoryBackup, SyncIndicator};
use crate::interop::local_time;
use crate::interop::store::persist_storage_now;
use crate::session::SessionStatus;
use crate::session::saved::{SavedGeneration, SavedStatus, summary};

/// A "History" button in the top bar and the list it opens: newest first, each with Open and
/// Delete; "Delete all" asks once more. Nothing is deleted without a click.
#[component]
pub fn HistoryPanel() -> impl IntoView {
    let history = expect_context::<SessionStatus>().history;
    let open = RwSignal::new(false);
    let confirm_clear = RwSignal::new(false);
    let changed = history.changed;
    // Asked once per page: a browser that refuses may evict the history under storage pressure,
    // and the panel says so next to Export.
    let (persistence, set_persistence) = signal(None);
    leptos::task::spawn_local(async move { set_persistence.set(Some(persist_storage_now().await)) });
    let entries = {
        let history = history.clone();
        LocalResource::new(move || {
            changed.track();
            let shown = open.get();
            let history = history.clone();
            async move { if shown { history.entries().await } else { Vec::new() } }
        })
    };

    let row = {
        let history = history.clone();
        move |entry: SavedGeneration| {
            let id = entry.id.unwrap_or_default();
            let when = local_time(id);
            let title = summary(&entry.prompt, 80);
            let detail =
                format!("{} · {} · {} chars", entry.model, status_word(entry.status), entry.code.len());
            let (for_open, for_delete) = (history.clone(), history.clone());
            view! {
                <li class="history-entry" data-testid="history-entry">
                    <div class="history-text">
                        <span class="history-prompt">{title}</span>
                        <span class="history-detail">{when}" · "{detail}</span>
                    </div>
                    <button
                        class="btn"
                        data-testid="history-open"
                        on:click=move |_| {
                            for_open.open(entry.clone());
                            open.set(false);
                        }
                    >
                        "Open"
                    </button>
                    <button class="btn" data-testid="history-delete" on:click=move |_| for_delete.delete(id)>
                        "Delete"
                    </button>
                </li>
            }
        }
    };

    let panel = move || {
        let row = row.clone();
        let history = history.clone();
        open.get().then(|| {
            let list = move || {
                let row = row.clone();
                entries.get().map(|list| {
                    if list.is_empty() {
                        return view! { <p class="history-empty">"Nothing here yet: every generation is kept until you delete it."</p> }
                            .into_any();
                    }
                    let count = list.len();
                    let history = history.clone();
                    let clear = move || {
                        let history = history.clone();
                        if confirm_clear.get() {
                            view! {
                                <span class="history-confirm">{format!("Delete all {count}?")}</span>
                                <button
                                    class="btn danger"
                                    data-testid="history-clear-confirm"
                                    on:click=move |_| {
                                        history.clear();
                                        confirm_clear.set(false);
                                    }
                                >
                                    "Yes, delete"
                                </button>
                                <button class="btn" on:click=move |_| confirm_clear.set(false)>"Keep"</button>
                            }
                            .into_any()
                        } else {
                            view! {
                                <button class="btn" data-testid="history-clear" on:click=move |_| confirm_clear.set(true)>
                                    "Delete all"
                                </button>
                            }
                            .into_any()
                        }
                    };
                    view! {
                        <ul class="history-list">{list.into_iter().map(row).collect_view()}</ul>
                        <div class="history-actions">{clear}</div>
                    }
                    .into_any()
                })
            };
            view! {
                <div class="history-panel" data-testid="history-panel">
                    <div class="history-head">
                        <span>"History"</span>
                        <SyncIndicator />
                        <button class="banner-close" title="Close" on:click=move |_| open.set(false)>"×"</button>
                    </div>
                    <HistoryBackup persistence changed />
                    {list}
                </div>
            }
        })
    };

    view! {
        <div class="history">
            <button
                class="btn history-button"
                data-testid="history-button"
                title="Earlier generations, kept in this browser"
                on:click=move |_| {
                    confirm_clear.set(false);
                    open.update(|o| *o = !*o);
                }
            >
                "History"
            </button>
            {panel}
        </div>
    }
}

fn status_word(status: SavedStatus) -> &'static str {
    match status {
        SavedStatus::Streaming => "cut off",
        SavedStatus::Done => "done",
        SavedStatus::Cancelled => "cancelled",
        SavedStatus::Error => "failed",
    }
}
