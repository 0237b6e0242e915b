//! The banner for a shared link the page was opened with: an offer to run it, or why it cannot open.

use leptos::prelude::*;

use crate::context::{FanOut, ModelChoice, SharedLink};
use crate::draft::expect_draft;
use crate::launch::{Launch, launch};
use crate::run::expect_runner;
use crate::share::shared_model_problem;

/// "Opened a shared prompt — Run it?" with a Run button (never runs by itself: running can cost
/// money), noting when the link's model is not available here; or the link's error.
#[component]
pub fn SharedLinkBanner() -> impl IntoView {
    let link = expect_context::<SharedLink>();
    let choice = expect_context::<ModelChoice>();
    let draft = expect_draft();
    let runner = expect_runner();
    let fan_out = expect_context::<FanOut>();

    let model_problem = move || {
        let model = choice.shared.get()?;
        let list = choice.models.get()?.ok()?;
        shared_model_problem(&list, &model)
    };
    let run = move || {
        link.opened.set(false);
        launch(&runner, choice, fan_out, draft, Launch::Fresh);
    };

    let opened = move || {
        link.opened.get().then(|| {
            view! {
                <div class="banner shared" data-testid="shared-link-banner" role="status">
                    <strong>"Opened a shared prompt — Run it?"</strong>
                    <span class="banner-text" data-testid="shared-model-problem">{model_problem}</span>
                    <button class="btn primary" data-testid="shared-run" on:click=move |_| run()>"Run"</button>
                    <button class="banner-close" title="Dismiss" on:click=move |_| link.opened.set(false)>"×"</button>
                </div>
            }
        })
    };
    let failed = move || {
        link.error.get().map(|text| {
            view! {
                <div class="banner error" data-testid="shared-link-error" role="alert">
                    <strong>"Cannot open this shared link"</strong>
                    <span class="banner-text">{text}</span>
                    <button class="banner-close" title="Dismiss" on:click=move |_| link.error.set(None)>"×"</button>
                </div>
            }
        })
    };
    view! { {opened} {failed} }
}
