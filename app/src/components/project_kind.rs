//! What a new answer is made of: Auto (the active profile's kind, else the prompt's words), an HTML
//! page or a React app.

use flint_protocol::prompt::ProjectKind;
use leptos::prelude::*;

use crate::draft::expect_draft;

/// The project kind picker beside the prompt. Auto names the kind it stands for, so a prompt that
/// says "React" visibly switches it.
#[component]
pub fn ProjectKindControl() -> impl IntoView {
    let draft = expect_draft();
    let auto = Memo::new(move |_| draft.auto_kind());
    let auto_label = move || format!("Auto: {}", auto.get().label());
    let options = ProjectKind::ALL
        .into_iter()
        .map(|kind| view! { <option value=kind.key()>{kind.label()}</option> })
        .collect_view();
    view! {
        <label
            class="field"
            title="What the model is asked to write: one HTML page, or a React app in TSX files (Auto follows the profile, else your prompt's words)"
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
