//! The model picker, filled from `GET /api/models`.

use leptos::prelude::*;

use crate::context::ModelChoice;
use crate::models::{any_usable, option_label, option_title};

/// A `<select>` of the gateway's models; unusable ones are shown disabled with their problem.
#[component]
pub fn ModelPicker() -> impl IntoView {
    let choice = expect_context::<ModelChoice>();
    let options = move || {
        let list = choice.models.get().and_then(|r| r.ok()).map(|l| l.models).unwrap_or_default();
        list.into_iter()
            .map(|m| {
                let label = option_label(&m);
                let id = m.id.clone();
                let title = m.problem.clone().unwrap_or_else(|| option_title(&m));
                view! { <option value=id disabled=!m.available title=title>{label}</option> }
            })
            .collect_view()
    };
    let placeholder = move || match choice.models.get() {
        None => Some(view! { <option value="" disabled=true>"Loading models…"</option> }),
        Some(Err(_)) => Some(view! { <option value="" disabled=true>"Models unavailable"</option> }),
        Some(Ok(list)) if !any_usable(&list) && !list.models.is_empty() => {
            Some(view! { <option value="" disabled=true>"No usable model"</option> })
        }
        Some(Ok(list)) if list.models.is_empty() => {
            Some(view! { <option value="" disabled=true>"No models configured"</option> })
        }
        Some(Ok(_)) => None,
    };
    view! {
        <label class="model-picker">
            <span class="field-label">"Model"</span>
            <select
                data-testid="model-picker"
                prop:value=move || choice.selected.get().unwrap_or_default()
                on:change=move |ev| {
                    let value = event_target_value(&ev);
                    choice.picked.set((!value.is_empty()).then_some(value));
                }
            >
                {placeholder}
                {options}
            </select>
        </label>
    }
}
