//! How full the model's context window will be with the next request.

use leptos::prelude::*;

use crate::meter::meter_view;
use crate::run::{StreamStatus, expect_runner};

/// A bar with the request's tokens against the window and its zone (sharp, some drift, drift
/// likely, about to overflow); the breakdown in its tooltip. While an answer streams, its tokens
/// count too. Says what would be left out, or that the request does not fit.
#[component]
pub fn ContextMeter() -> impl IntoView {
    let state = expect_runner().state();
    let view_of = Memo::new(move |_| {
        let answer =
            if state.status.get() == StreamStatus::Streaming { state.answer_tokens.get() } else { 0 };
        state.budget.with(|b| b.as_ref().map(|b| meter_view(b, answer)))
    });
    move || {
        view_of.get().map(|v| {
            let note = v.note.clone().map(|note| {
                view! { <span class="meter-note" data-testid="meter-note">{note}</span> }
            });
            view! {
                <div class=format!("context-meter {}", v.zone.1) data-testid="context-meter" title=v.detail.clone()>
                    <div class="meter-bar" role="meter" aria-label="Context window used" aria-valuemin="0" aria-valuemax="100" aria-valuenow=v.fill>
                        <div class="meter-fill" style=format!("width: {}%", v.fill)></div>
                    </div>
                    <span class="meter-tokens" data-testid="meter-tokens">{v.tokens.clone()}</span>
                    <span class="meter-zone" data-testid="meter-zone">{v.zone.0}</span>
                    {note}
                </div>
            }
        })
    }
}
