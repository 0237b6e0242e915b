//! The set-up notice shown when no model can be used (or the list cannot be loaded).

use leptos::prelude::*;

use crate::context::ModelChoice;
use crate::models::any_usable;

/// A banner with the gateway's advice (`ModelList.notice`), or why the list failed to load.
#[component]
pub fn ModelNotice() -> impl IntoView {
    let choice = expect_context::<ModelChoice>();
    let notice = move || match choice.models.get()? {
        Ok(list) => match list.notice {
            Some(notice) => Some(notice),
            None if !any_usable(&list) => Some(
                "No model is usable: configure a provider in flint.toml and restart the gateway.".to_owned(),
            ),
            None => None,
        },
        Err(err) => Some(format!("Cannot load the model list: {err}.")),
    };
    move || {
        notice().map(|text| {
            view! {
                <div class="banner notice" data-testid="model-notice" role="status">
                    <strong>"Set-up needed"</strong>
                    <span class="banner-text">{text}</span>
                </div>
            }
        })
    }
}
