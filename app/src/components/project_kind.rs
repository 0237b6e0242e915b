//! What a new answer is made of: Auto (the prompt's words decide), an HTML page or a React app.

use flint_protocol::prompt::ProjectKind;
use leptos::prelude::*;

use crate::draft::expect_draft;

/// The project kind picker beside the prompt. Auto names the kind it stands for, so a prompt that
/// says "React" visibly switches it.
#[component]
pub fn ProjectKindControl() -> impl IntoView {
    let draft = expect_draft();
    let suggested =
        Memo::new(move |_| draft.prompt.with(|p| ProjectKind::suggested_by(p)).unwrap_or_default());
    let auto_label = move || format!("Auto: {}", suggested.get().label());
    let options = ProjectKind::ALL
        .into_iter()
        .map(|kind| view! { <option value=kind.key()>{kind.label()}</option> })
        .collect_view();
    view! {
        <label
            class="field"
            title="What the model is asked to write: one HTML page, or a React app in TSX files (Auto follows your prompt's words)"
        >
            <span class="field-label">"Project"</span>
            <select
                data-testid="project-kind"
                prop:value=move || draft.kind.get().map_or("", ProjectKind::key)
                on:change=move |ev| draft.kind.set(ProjectKind::from_key(&event_target_value(&ev)))
            >
                <option value="">{auto_label}</option>
                {options}
            </select>
        </label>
    }
}
