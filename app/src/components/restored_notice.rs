//! The notice after start-up put the last session back.

use leptos::prelude::*;

use crate::session::SessionStatus;
use crate::session::saved::RestoredNotice as Notice;

/// "Restored your last session", saying so louder when the reload cut an answer off; dismissible.
#[component]
pub fn RestoredNotice() -> impl IntoView {
    let restored = expect_context::<SessionStatus>().restored;
    move || {
        restored.get().map(|notice| {
            let class = match notice {
                Notice::CutOff => "banner notice",
                Notice::Restored => "banner quiet",
            };
            view! {
                <div class=class data-testid="restored-notice" role="status">
                    <span class="banner-message">{notice.text()}</span>
                    <button class="banner-close" title="Dismiss" on:click=move |_| restored.set(None)>"×"</button>
                </div>
            }
        })
    }
}
