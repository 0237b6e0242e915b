//! The pinned goal: what we are building and its acceptance criteria.

use leptos::prelude::*;

use crate::draft::expect_draft;

/// A "Goal" toggle that opens a textarea. The goal heads every request (never trimmed), is saved
/// with the session and travels in shared links.
#[component]
pub fn PinnedGoal() -> impl IntoView {
    let goal = expect_draft().goal;
    let open = RwSignal::new(false);
    let pinned = Memo::new(move |_| goal.with(|g| !g.trim().is_empty()));
    view! {
        <div class="pinned-goal">
            <button
                class="btn small"
                class:active=move || pinned.get()
                data-testid="goal-toggle"
                title="Pin a goal: what you are building and its acceptance criteria. It heads every request."
                on:click=move |_| open.update(|o| *o = !*o)
            >
                {move || if pinned.get() { "Goal pinned" } else { "Pin a goal" }}
            </button>
            <Show when=move || open.get()>
                <textarea
                    class="goal-input"
                    data-testid="goal-input"
                    rows="3"
                    spellcheck="false"
                    placeholder="What we are building, and how we know it is done (sent at the top of every request)"
                    prop:value=move || goal.get()
                    on:input=move |ev| goal.set(event_target_value(&ev))
                ></textarea>
            </Show>
        </div>
    }
}
