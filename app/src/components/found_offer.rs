//! While the embedded demo model is chosen: a plain word on what it is, and the best-sized model
//! of a server the gateway found on its machine, one click away.

use leptos::prelude::*;

use crate::context::ModelChoice;
use crate::models::{found_offer, is_demo};

/// A banner under the top bar, shown only while the demo model is the selected one.
#[component]
pub fn FoundOffer() -> impl IntoView {
    let choice = expect_context::<ModelChoice>();
    let demo = move || {
        let list = choice.models.get()?.ok()?;
        let selected = choice.selected.get();
        let current = list.models.iter().find(|m| Some(&m.id) == selected.as_ref())?;
        is_demo(current)
            .then(|| found_offer(&list, selected.as_deref()).map(|m| (m.id.clone(), m.label.clone())))
    };
    move || {
        demo().map(|offer| {
            let offer = offer.map(|(id, label)| {
                let text = format!("Use {label} instead");
                view! {
                    <button
                        type="button"
                        class="found-offer-use"
                        data-testid="use-found-model"
                        on:click=move |_| choice.picked.set(Some(id.clone()))
                    >
                        {text}
                    </button>
                }
            });
            view! {
                <div class="banner found-offer" data-testid="demo-model-note" role="note">
                    <span class="banner-text">
                        "The embedded model is a 135M demo model: it runs anywhere, but writes small pages, \
                         often with mistakes. A model server on this machine or a hosted provider does far better."
                    </span>
                    {offer}
                </div>
            }
        })
    }
}
