//! The Monaco editor the answer's main file streams into.

use leptos::html::Div;
use leptos::prelude::*;

use crate::interop::editor::Editor;
use crate::run::expect_runner;

/// The editor pane; Monaco is created once the container is in the page.
#[component]
pub fn CodeEditor() -> impl IntoView {
    let runner = expect_runner();
    let container = NodeRef::<Div>::new();
    let attach = runner;
    container.on_load(move |el| attach.attach_editor(Some(Editor::new(&el))));
    on_cleanup(move || runner.attach_editor(None));
    view! { <div class="editor" data-testid="editor" node_ref=container></div> }
}
