//! Above the prompt, when pictures are attached: who gets them how. A model that sees gets them
//! with the prompt; for one that does not, the vision model's description streams here, to read and
//! correct before Run; with no vision model, the run is refused and this says so.

use leptos::prelude::*;

use crate::context::{FanOut, ModelChoice};
use crate::pictures::{DescribeStatus, Route, expect_pictures, route, run_models};

/// The pictures' route to the run's models, and the description when one is needed.
#[component]
pub fn ImageDescription() -> impl IntoView {
    let pictures = expect_pictures();
    let choice = expect_context::<ModelChoice>();
    let fan_out = expect_context::<FanOut>();
    let routes = Memo::new(move |_| {
        let models = run_models(choice, fan_out);
        choice.models.with(|list| match list {
            Some(Ok(list)) => models.iter().map(|m| (m.clone(), route(list, m))).collect::<Vec<_>>(),
            _ => Vec::new(),
        })
    });
    let line = move || {
        let routes = routes.get();
        let seeing: Vec<_> =
            routes.iter().filter(|(_, r)| *r == Route::Sees).map(|(m, _)| m.clone()).collect();
        let blind: Vec<_> =
            routes.iter().filter(|(_, r)| *r == Route::Blind).map(|(m, _)| m.clone()).collect();
        let mut parts = Vec::new();
        if !seeing.is_empty() {
            parts.push(format!("{} sees the pictures: they go with the prompt.", seeing.join(", ")));
        }
        if !blind.is_empty() {
            parts.push(format!(
                "{} does not see images and this gateway has no vision model to describe them ([vision] \
                 model in flint.toml): pick a model marked “sees images”, or remove the pictures.",
                blind.join(", ")
            ));
        }
        parts.join(" ")
    };
    let status = move || {
        pictures.description.with(|d| match d {
            None => String::new(),
            Some(d) => match &d.status {
                DescribeStatus::Streaming => format!("{} is describing the pictures…", d.by),
                DescribeStatus::Done => format!(
                    "Described by {}: the models that do not see get this text instead of the pictures. \
                     Correct it if it is wrong.",
                    d.by
                ),
                DescribeStatus::Failed(why) => format!("{} could not describe the pictures: {why}", d.by),
            },
        })
    };
    let streaming = move || {
        pictures.description.with(|d| d.as_ref().is_some_and(|d| d.status == DescribeStatus::Streaming))
    };
    view! {
        <Show when=move || !pictures.images.with(Vec::is_empty)>
            <section class="picture-description" aria-label="How the pictures reach the models" data-testid="picture-route">
                <p class="picture-route" data-testid="picture-route-line">{line}</p>
                <Show when=move || pictures.held.get() && pictures.needed.with(Option::is_some)>
                    <p class="picture-status" role="status" data-testid="describe-held">
                        {move || held_line(pictures.needed.get().unwrap_or_default())}
                    </p>
                    <button class="btn small" data-testid="describe-shared" on:click=move |_| pictures.release()>
                        "Describe the pictures"
                    </button>
                </Show>
                <Show when=move || pictures.description.with(Option::is_some)>
                    <p class="picture-status" role="status" data-testid="description-status">{status}</p>
                    <textarea
                        class="description-input"
                        data-testid="description"
                        aria-label="The pictures' description, sent to the models that do not see"
                        rows="6"
                        readonly=streaming
                        aria-busy=move || streaming().to_string()
                        prop:value=move || pictures.description.with(|d| d.as_ref().map(|d| d.text.clone()).unwrap_or_default())
                        on:input=move |ev| pictures.edit_description(event_target_value(&ev))
                    ></textarea>
                    <button
                        class="btn small"
                        data-testid="describe-again"
                        disabled=streaming
                        on:click=move |_| pictures.describe(true)
                    >
                        "Describe again"
                    </button>
                </Show>
            </section>
        </Show>
    }
}

/// What is said of shared pictures nobody asked to describe yet: who would, and when.
fn held_line(by: String) -> String {
    format!(
        "These pictures came with a shared link: nothing is sent to {by} until you press Describe or Run \
         (describing them runs a model)."
    )
}
