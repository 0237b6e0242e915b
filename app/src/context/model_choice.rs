//! The model list and the person's choice of model and profile.

use flint_protocol::{ModelList, Profile};
use leptos::prelude::*;

use crate::interop::http::{FetchError, get_json};
use crate::models::preferred_choice;
use crate::profiles;

/// The model list and the user's choice.
#[derive(Clone, Copy)]
pub struct ModelChoice {
    /// `GET /api/models`, refetched when the gateway comes back.
    pub models: LocalResource<Result<ModelList, FetchError>>,
    /// What the user picked, if anything.
    pub picked: RwSignal<Option<String>>,
    /// The model a shared link asked for, preferred to the default when it is usable here.
    pub shared: RwSignal<Option<String>>,
    /// The model to use: the user's pick, else the shared link's model, else the list's default.
    pub selected: Signal<Option<String>>,
    /// The profile last chosen with the toggle (remembered with the session, carried in links).
    pub profile: RwSignal<Option<String>>,
    /// The profile in effect: the chosen one while its model is the selected one.
    pub active_profile: Memo<Option<Profile>>,
}

impl ModelChoice {
    /// Switches to `profile`: its model becomes the pick.
    pub fn use_profile(&self, profile: &Profile) {
        self.profile.set(Some(profile.name.clone()));
        self.picked.set(Some(profile.model.clone()));
    }
}

/// Fetches the model list, provides the [`ModelChoice`] derived from it and returns it.
pub fn provide_model_choice() -> ModelChoice {
    let models = LocalResource::new(|| get_json::<ModelList>("/api/models"));
    let picked = RwSignal::new(None::<String>);
    let shared = RwSignal::new(None::<String>);
    let profile = RwSignal::new(None::<String>);
    // With nothing picked, the model is the shared link's, else the profile's (the first one on a
    // fresh page), else the list's default.
    let selected = Signal::derive(move || {
        picked.get().or_else(|| {
            let list = models.get()?.ok()?;
            let linked = shared.get();
            let preferred = linked.or_else(|| profile.with(|p| profiles::model_of(&list, p.as_deref())));
            preferred_choice(&list, preferred.as_deref())
        })
    });
    let active_profile = Memo::new(move |_| {
        let list = models.get()?.ok()?;
        let fresh = picked.with(Option::is_none) && shared.with(Option::is_none);
        let chosen =
            profile.get().or_else(|| fresh.then(|| list.profiles.first().map(|p| p.name.clone())).flatten());
        selected.with(|model| profiles::active(&list, chosen.as_deref(), model.as_deref()).cloned())
    });
    let choice = ModelChoice { models, picked, shared, selected, profile, active_profile };
    provide_context(choice);
    choice
}

/// The [`ModelChoice`] provided by the app.
pub fn expect_model_choice() -> ModelChoice {
    expect_context::<ModelChoice>()
}
