//! The model thinking: "Thinking · 12 s · 3,400 tokens", its summary text in a panel the person
//! can open, and the notice of a provider gone quiet. Apart from the code and the preview, which
//! never hold any of it.

use leptos::prelude::*;

use crate::generation::thinking::Thought;
use crate::run::expect_runner;

/// A lane's thinking line (with its text, when the provider gave some) and silence notice; shown
/// only while there is something to show. Without signals, the single run's. `compact`: in a
/// tile, the text panel starts closed.
#[component]
pub fn ThinkingPanel(
    #[prop(optional, into)] thinking: Option<Signal<Option<Thought>>>,
    #[prop(optional, into)] stalled: Option<Signal<Option<String>>>,
    #[prop(optional)] compact: bool,
) -> impl IntoView {
    let state = expect_runner().state();
    let thinking = thinking.unwrap_or_else(|| state.thinking.into());
    let stalled = stalled.unwrap_or_else(|| state.stalled.into());
    let line = move || thinking.with(|t| t.as_ref().map(Thought::line));
    let text = move || thinking.with(|t| t.as_ref().map(|t| t.text.clone()).filter(|t| !t.is_empty()));
    let has_text = Memo::new(move |_| text().is_some());
    let over = move || thinking.with(|t| t.as_ref().is_some_and(|t| t.over));
    view! {
        <Show when=move || line().is_some()>
            <div class="thinking" class:over=over data-testid="thinking">
                // Built again only when text first shows, so a panel the person closed stays closed.
                {move || if has_text.get() {
                    view! {
                        <details class="thinking-details" open=!compact>
                            <summary class="thinking-line" data-testid="thinking-line">{line}</summary>
                            <pre class="thinking-text" data-testid="thinking-text">{text}</pre>
                        </details>
                    }
                    .into_any()
                } else {
                    view! { <span class="thinking-line" data-testid="thinking-line">{line}</span> }.into_any()
                }}
            </div>
        </Show>
        {move || stalled.get().map(|notice| view! {
            <p class="stall-notice" role="status" data-testid="stall-notice">{notice}</p>
        })}
    }
}
