//! The versions of the code: v1…vN, the current one marked.

use leptos::prelude::*;

use crate::interop::local_time;
use crate::run::expect_runner;
use crate::versions::Version;

/// One button per kept version; selecting one shows it in the editor and the preview, and the next
/// change branches from it. Each says what made it (prompt, model, time) in its tooltip.
#[component]
pub fn VersionsBar() -> impl IntoView {
    let runner = expect_runner();
    let versions = runner.state().versions;
    let items = move || {
        versions.with(|v| {
            let current = v.current_index();
            v.list()
                .iter()
                .enumerate()
                .map(|(i, version)| {
                    let branch = v.branched_from(i).map(|p| format!(" ← v{}", p + 1)).unwrap_or_default();
                    view! {
                        <button
                            class="version"
                            class:current=current == Some(i)
                            data-testid="version"
                            aria-current=move || (current == Some(i)).then_some("true")
                            title=describe(i, version)
                            on:click=move |_| runner.select_version(i)
                        >
                            {format!("v{}", i + 1)}
                            <span class="version-branch">{branch}</span>
                        </button>
                    }
                })
                .collect_view()
        })
    };
    view! { <nav class="versions" data-testid="versions" aria-label="Versions">{items}</nav> }
}

/// `v2 · edited · “a bigger button” · scripted/counter · 10:42`.
fn describe(index: usize, version: &Version) -> String {
    let mut parts = vec![format!("v{}", index + 1), version.origin.label().to_owned()];
    if !version.prompt.is_empty() {
        parts.push(format!("“{}”", crate::session::saved::summary(&version.prompt, 60)));
    }
    if !version.model.is_empty() {
        parts.push(version.model.clone());
    }
    parts.push(local_time(version.at_ms));
    parts.join(" · ")
}
