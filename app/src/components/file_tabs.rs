//! The project's files above the editor, one tab each (shown only when the code is a project of
//! several files). A tab shows its file in the editor; the arrow keys, Home and End move between
//! tabs as in any tab list (one tab stop, the selected one).

use flint_protocol::project::unbundle;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::run::expect_runner;

/// The file tab list; empty for a page or a single file.
#[component]
pub fn FileTabs() -> impl IntoView {
    let runner = expect_runner();
    let workspace = runner.workspace();
    let open = runner.state().open_file;
    // Read when the code settles, never per streamed frame (the workspace wakes readers then).
    let paths = Memo::new(move |_| {
        workspace.track();
        workspace.with_code(|code| {
            unbundle(code).map(|files| files.into_iter().filter_map(|f| f.name).collect::<Vec<_>>())
        })
    });
    // The main file is first: it is the one shown when no tab was chosen.
    let selected = Memo::new(move |_| {
        let first = paths.with(|p| p.as_ref().and_then(|p| p.first().cloned()));
        open.get().filter(|o| paths.with(|p| p.as_ref().is_some_and(|p| p.contains(o)))).or(first)
    });

    let keys = move |ev: web_sys::KeyboardEvent| {
        let Some(list) = paths.get_untracked() else { return };
        let now = selected.get_untracked().and_then(|s| list.iter().position(|p| *p == s)).unwrap_or(0);
        let next = match ev.key().as_str() {
            "ArrowRight" | "ArrowDown" => (now + 1) % list.len(),
            "ArrowLeft" | "ArrowUp" => (now + list.len() - 1) % list.len(),
            "Home" => 0,
            "End" => list.len() - 1,
            _ => return,
        };
        ev.prevent_default();
        runner.open_file(list[next].clone());
        focus_tab(&ev, next);
    };

    view! {
        <Show when=move || paths.with(Option::is_some)>
            <div class="file-tabs" role="tablist" aria-label="Project files" data-testid="file-tabs" on:keydown=keys>
                <For
                    each=move || paths.get().unwrap_or_default()
                    key=|path| path.clone()
                    children=move |path| {
                        let here = path.clone();
                        let is_on = Memo::new(move |_| selected.get().as_deref() == Some(here.as_str()));
                        let chosen = path.clone();
                        view! {
                            <button
                                class="file-tab"
                                role="tab"
                                data-testid="file-tab"
                                aria-selected=move || is_on.get().to_string()
                                tabindex=move || if is_on.get() { "0" } else { "-1" }
                                title=path.clone()
                                on:click=move |_| runner.open_file(chosen.clone())
                            >
                                {file_label(&path)}
                            </button>
                        }
                    }
                />
            </div>
        </Show>
    }
}

/// A tab's label: the file's name, its folder after it when it has one, so that ten tabs stay
/// readable and two `index.ts` stay apart.
fn file_label(path: &str) -> String {
    match path.rsplit_once('/') {
        Some((dir, name)) => format!("{name} · {dir}"),
        None => path.to_owned(),
    }
}

/// Moves the focus to tab `index` in the list the key event came from.
fn focus_tab(ev: &web_sys::KeyboardEvent, index: usize) {
    let list = ev.current_target().and_then(|t| t.dyn_into::<web_sys::Element>().ok());
    let tab = list.and_then(|l| l.children().item(index as u32));
    if let Some(tab) = tab.and_then(|t| t.dyn_into::<web_sys::HtmlElement>().ok()) {
        // Not fatal: the selection moved, the focus stays where it was.
        let _ = tab.focus();
    }
}

#[cfg(test)]
mod tests {
    use super::file_label;

    #[test]
    fn a_tab_names_its_file_then_its_folder() {
        assert_eq!(file_label("App.tsx"), "App.tsx");
        assert_eq!(file_label("components/ui/Button.tsx"), "Button.tsx · components/ui");
    }
}
