//! The current generation's error, kept until the next run.

use leptos::prelude::*;

use crate::run::expect_runner;

/// A banner with the error text, shown only when there is one.
#[component]
pub fn ErrorMessage() -> impl IntoView {
    let error = expect_runner().state().error;
    move || {
        error.get().map(|text| {
            view! {
                <div class="banner error" role="alert">
                    <span class="banner-text" data-testid="error-message">{text}</span>
                    <button class="banner-close" title="Dismiss" on:click=move |_| error.set(None)>"×"</button>
                </div>
            }
        })
    }
}
