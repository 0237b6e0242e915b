//! The warning that this browser will not keep the person's work.

use leptos::prelude::*;

use crate::session::SessionStatus;

/// Why the session cannot be saved; Flint keeps working, so this only informs (dismissible).
#[component]
pub fn StorageWarning() -> impl IntoView {
    let problem = expect_context::<SessionStatus>().problem;
    move || {
        problem.get().map(|text| {
            view! {
                <div class="banner notice" data-testid="storage-error" role="alert">
                    <span class="banner-message">{text}</span>
                    <button class="banner-close" title="Dismiss" on:click=move |_| problem.set(None)>"×"</button>
                </div>
            }
        })
    }
}
