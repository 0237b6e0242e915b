//! The model picker, filled from `GET /api/models`, and its "Rescan" for model servers the gateway
//! finds on its machine (`POST /api/discovery/rescan`).

use flint_protocol::ModelList;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::context::ModelChoice;
use crate::interop::http::post_json;
use crate::models::{any_usable, found_summary, option_label, option_title};

/// A `<select>` of the gateway's models; unusable ones are shown disabled with their problem.
/// Where the gateway looks for local model servers, a "Rescan" button looks again and says what
/// it found.
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
    let scanning = RwSignal::new(false);
    let said = RwSignal::new(None::<String>);
    let rescan = move |_| {
        scanning.set(true);
        spawn_local(async move {
            let answer = post_json::<_, ModelList>("/api/discovery/rescan", &()).await;
            said.set(Some(match answer {
                Ok(list) => found_summary(&list.found, &list.models),
                Err(err) => err.to_string(),
            }));
            scanning.set(false);
            choice.models.refetch();
        });
    };
    let looks = move || choice.models.get().and_then(|r| r.ok()).is_some_and(|l| l.discovery);
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
        <Show when=looks>
            <button
                type="button"
                class="rescan"
                data-testid="rescan-models"
                title="Look again for Ollama, llama.cpp, LM Studio, vLLM, SGLang or LiteLLM on the gateway's machine"
                disabled=move || scanning.get()
                on:click=rescan
            >
                {move || if scanning.get() { "Looking…" } else { "Rescan" }}
            </button>
        </Show>
        <span class="rescan-status" data-testid="rescan-status" role="status">
            {move || said.get()}
        </span>
    }
}
