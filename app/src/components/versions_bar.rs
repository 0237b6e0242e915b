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
    // The current version's picture description, readable (a tooltip is not): what the code
    // model was told the picture shows, as the person left it.
    let described = Memo::new(move |_| {
        versions.with(|v| {
            let (i, version) = (v.current_index()?, v.current()?);
            let pictures = version.pictures.as_ref()?;
            let text = pictures.description.as_ref()?.text.clone();
            Some((format!("v{} was made {}", i + 1, pictures.label()), text))
        })
    });
    view! {
        <nav class="versions" data-testid="versions" aria-label="Versions">{items}</nav>
        {move || {
            described
                .get()
                .map(|(summary, text)| {
                    view! {
                        <details class="version-pictures" data-testid="version-description">
                            <summary>{summary}</summary>
                            <p class="version-description-text">{text}</p>
                        </details>
                    }
                })
        }}
    }
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
    if let Some(pictures) = &version.pictures {
        parts.push(pictures.label());
    }
    parts.push(local_time(version.at_ms));
    parts.join(" · ")
}
