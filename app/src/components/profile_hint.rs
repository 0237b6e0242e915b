//! A one-line suggestion under the prompt: while the first profile (Spark) is active and the prompt
//! looks multi-step, multi-file or security-critical, name the second (Deep) and its shortcut. It
//! never switches on its own: the person decides what to spend.

use leptos::prelude::*;

use crate::context::ModelChoice;
use crate::draft::expect_draft;
use crate::profiles;

/// The hint, or nothing.
#[component]
pub fn ProfileHint() -> impl IntoView {
    let choice = expect_context::<ModelChoice>();
    let draft = expect_draft();
    let hint = Memo::new(move |_| {
        let list = choice.models.get()?.ok()?;
        let (first, deep) = (list.profiles.first()?, list.profiles.get(1)?);
        let active = choice.active_profile.with(|p| p.as_ref().map(|p| p.name == first.name))?;
        active.then_some(())?;
        let why = draft.prompt.with(|p| profiles::deep_hint(p))?;
        Some(format!("This looks like work for {} ({why}): Ctrl+Shift+L switches to it.", deep.label))
    });
    move || hint.get().map(|text| view! { <div class="profile-hint" data-testid="profile-hint">{text}</div> })
}
