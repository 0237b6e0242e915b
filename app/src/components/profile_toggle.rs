//! The profile toggle: one button per `[profiles.*]` of the gateway (Spark, Deep…), the active one
//! pressed; Ctrl/Cmd+Shift+L switches to the next. Warnings the gateway found in a profile (a key
//! its model ignores) are shown next to it.

use flint_protocol::Profile;
use leptos::prelude::*;
use send_wrapper::SendWrapper;

use crate::context::ModelChoice;
use crate::interop::keys::{is_profile_toggle, on_key_capture};
use crate::profiles;

/// The toggle, or nothing when the gateway has no profiles.
#[component]
pub fn ProfileToggle() -> impl IntoView {
    let choice = expect_context::<ModelChoice>();
    let list =
        Memo::new(move |_| choice.models.get().and_then(Result::ok).map(|l| l.profiles).unwrap_or_default());
    let active = Memo::new(move |_| choice.active_profile.with(|p| p.as_ref().map(|p| p.name.clone())));

    let switch = move || {
        let next = choice.models.with_untracked(|models| {
            let list = models.as_ref()?.as_ref().ok()?;
            active.with_untracked(|name| profiles::next(list, name.as_deref()).cloned())
        });
        if let Some(next) = next {
            choice.use_profile(&next);
        }
    };
    let keys = SendWrapper::new(on_key_capture(move |ev| {
        if is_profile_toggle(&ev) {
            ev.prevent_default();
            ev.stop_propagation();
            switch();
        }
    }));
    on_cleanup(move || drop(keys));

    let warnings = Memo::new(move |_| list.get().into_iter().flat_map(|p| p.warnings).collect::<Vec<_>>());

    let button = move |profile: Profile| {
        let name = profile.name.clone();
        let pressed = Memo::new(move |_| active.get().as_deref() == Some(name.as_str()));
        let title = format!("{} ({}) · Ctrl/Cmd+Shift+L switches profile", profile.label, profile.model);
        let testid = format!("profile-{}", profile.name);
        view! {
            <button
                class="profile-button"
                class:pressed=move || pressed.get()
                aria-pressed=move || pressed.get().to_string()
                data-testid=testid
                title=title
                on:click=move |_| choice.use_profile(&profile)
            >
                {profile.label.clone()}
            </button>
        }
    };
    view! {
        <Show when=move || !list.with(Vec::is_empty)>
            <div class="profile-toggle" data-testid="profile-toggle" role="group" aria-label="Profile">
                {move || list.get().into_iter().map(button).collect_view()}
                <Show when=move || !warnings.with(Vec::is_empty)>
                    <span
                        class="profile-warning"
                        data-testid="profile-warnings"
                        title=move || warnings.get().join("\n")
                    >
                        {move || format!("⚠ {}", warnings.with(Vec::len))}
                    </span>
                </Show>
            </div>
        </Show>
    }
}
