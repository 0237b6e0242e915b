//! The prompt's pictures: Add image (or paste, or drop on the prompt), each shown small with its
//! size and a Remove button; a refused file says why.

use leptos::prelude::*;

use crate::components::SketchPad;
use crate::interop::images::files_of_input;
use crate::pictures::expect_pictures;

/// The attached pictures and the button that adds one.
#[component]
pub fn ImageAttach() -> impl IntoView {
    let pictures = expect_pictures();
    let input = NodeRef::<leptos::html::Input>::new();
    let on_change = move |_| {
        if let Some(el) = input.get() {
            pictures.add(files_of_input(&el));
        }
    };
    view! {
        <div class="pictures" data-testid="pictures">
            <input
                type="file"
                class="visually-hidden"
                node_ref=input
                accept="image/png,image/jpeg,image/webp,image/gif"
                multiple
                tabindex="-1"
                aria-hidden="true"
                data-testid="image-input"
                on:change=on_change
            />
            <button
                class="btn"
                data-testid="add-image"
                title="Add a screenshot, mockup or sketch (or paste one into the prompt, or drop it there)"
                on:click=move |_| {
                    if let Some(el) = input.get() {
                        el.click();
                    }
                }
            >
                "Add image"
            </button>
            <SketchPad />
            <ul class="picture-chips" aria-label="Attached pictures">
                <For each=move || pictures.images.get() key=|a| a.id let:attached>
                    {
                        let id = attached.id;
                        let size = format!("{} × {} px", attached.image.width, attached.image.height);
                        let alt = format!("{}, {size}", attached.name);
                        let remove = format!("Remove {}", attached.name);
                        view! {
                            <li class="picture-chip" data-testid="picture-chip">
                                <img src=attached.image.data_url() alt=alt />
                                <span class="picture-name">{attached.name.clone()}</span>
                                <span class="picture-size">{size}</span>
                                <button
                                    class="btn small"
                                    data-testid="remove-picture"
                                    aria-label=remove
                                    title="Remove"
                                    on:click=move |_| pictures.remove(id)
                                >
                                    "×"
                                </button>
                            </li>
                        }
                    }
                </For>
            </ul>
            <Show when=move || { pictures.preparing.get() > 0 }>
                <span class="picture-reading" role="status">"Reading the picture…"</span>
            </Show>
            <Show when=move || pictures.problem.with(Option::is_some)>
                <p class="picture-problem" role="alert" data-testid="picture-problem">
                    {move || pictures.problem.get()}
                </p>
            </Show>
        </div>
    }
}
