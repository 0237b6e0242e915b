//! What the next prompt carries: the current code to edit, and the thread so far.

use leptos::prelude::*;

use crate::draft::expect_draft;
use crate::fix::AUTO_FIX_MAX;
use crate::run::expect_runner;

/// "Edit current code" (ask for targeted edits of the editor's code rather than a new page) and
/// "Continue thread" (carry the earlier prompts and answers; off: a fresh context per task).
#[component]
pub fn RequestOptions() -> impl IntoView {
    let draft = expect_draft();
    let versions = expect_runner().state().versions;
    let has_thread = Memo::new(move |_| versions.with(|v| v.current().is_some()));
    view! {
        <div class="request-options">
            <label
                class="field"
                title="Ask for search/replace edits of the code in the editor, reviewed as a diff. Untick to ask for a new page."
            >
                <input
                    type="checkbox"
                    data-testid="edit-mode"
                    prop:checked=move || draft.edit.get()
                    on:change=move |ev| draft.edit.set(event_target_checked(&ev))
                />
                "Edit current code"
            </label>
            <label
                class="field"
                title="Send the earlier prompts and answers of this version's thread too. Off: each prompt gets a fresh context (the goal, the code and the prompt)."
            >
                <input
                    type="checkbox"
                    data-testid="continue-thread"
                    disabled=move || !has_thread.get()
                    prop:checked=move || draft.continue_thread.get()
                    on:change=move |ev| draft.continue_thread.set(event_target_checked(&ev))
                />
                "Continue thread"
            </label>
            <label
                class="field"
                title="When an answer stops at its length limit, ask the model to go on (up to twice), joined into the same answer. Each continuation sends the whole request again, so it costs its prompt tokens again. Off: a profile may still ask for it."
            >
                <input
                    type="checkbox"
                    data-testid="auto-continue"
                    prop:checked=move || draft.auto_continue.get()
                    on:change=move |ev| draft.auto_continue.set(event_target_checked(&ev))
                />
                "Continue cut-off answers"
            </label>
            <label
                class="field"
                title="When a finished page fails its checks, send what failed to the model as an edit request on its own, up to this many times per run. Each attempt streams like any answer; Esc stops it, and no attempt follows a cancel or an error."
            >
                "Auto-fix"
                <select
                    data-testid="auto-fix"
                    prop:value=move || draft.auto_fix.get().to_string()
                    on:change=move |ev| draft.auto_fix.set(event_target_value(&ev).parse().unwrap_or(0))
                >
                    <option value="0">"off"</option>
                    {(1..=AUTO_FIX_MAX)
                        .map(|n| {
                            let text = if n == 1 { "1 try".to_owned() } else { format!("{n} tries") };
                            view! { <option value=n.to_string()>{text}</option> }
                        })
                        .collect_view()}
                </select>
            </label>
        </div>
    }
}
