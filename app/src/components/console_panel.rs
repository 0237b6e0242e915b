//! The previewed page's console output and errors.

use leptos::html::Div;
use leptos::prelude::*;

use crate::run::expect_runner;

/// One row per console line, newest last.
#[component]
pub fn ConsolePanel() -> impl IntoView {
    let runner = expect_runner();
    let console = runner.state().console;
    let summary = move || {
        console.with(|c| match (c.len(), c.errors()) {
            (0, _) => String::new(),
            (n, 0) => format!("{n}"),
            (n, e) => format!("{n} · {e} error{}", if e == 1 { "" } else { "s" }),
        })
    };
    let entries = move || console.with(|c| c.entries().cloned().collect::<Vec<_>>());
    // Keep the newest line in view as lines arrive.
    let body = NodeRef::<Div>::new();
    Effect::new(move |_| {
        console.track();
        if let Some(el) = body.get() {
            el.set_scroll_top(el.scroll_height());
        }
    });
    view! {
        <div class="console" data-testid="console-panel">
            <div class="console-head">
                <span>"Console"</span>
                <span class="console-count">{summary}</span>
                <span class="spacer"></span>
                <button class="link" on:click=move |_| console.update(|c| c.clear())>"Clear"</button>
            </div>
            <div class="console-body" node_ref=body>
                <For each=entries key=|e| e.id let(entry)>
                    <div class=format!("console-entry {}", entry.level.as_str()) data-testid="console-entry" data-level=entry.level.as_str()>
                        {entry.text}
                    </div>
                </For>
            </div>
        </div>
    }
}
