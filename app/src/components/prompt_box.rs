//! The prompt: what to build (in words, and in pictures pasted, dropped or added), with Run and
//! Cancel.

use leptos::ev::KeyboardEvent;
use leptos::prelude::*;

use crate::components::{
    ContextMeter, ImageAttach, ImageDescription, PinnedGoal, ProjectKindControl, RequestOptions,
    VariationsControl,
};
use crate::context::{FanOut, ModelChoice};
use crate::draft::expect_draft;
use crate::interop::images::{files_of_event, is_file_drag};
use crate::launch::{UseRunReturn, use_run};
use crate::pictures::expect_pictures;
use crate::run::{StreamStatus, expect_runner};

/// A textarea; Ctrl/Cmd+Enter runs, Esc (anywhere on the page) cancels.
#[component]
pub fn PromptBox() -> impl IntoView {
    let runner = expect_runner();
    let choice = expect_context::<ModelChoice>();
    let status = runner.state().status;
    let draft = expect_draft();
    let text = draft.prompt;
    let streaming = move || status.get() == StreamStatus::Streaming;

    let fan_out = expect_context::<FanOut>();
    let UseRunReturn { run, counting } = use_run(runner, choice, fan_out, draft);
    let cancel = move || runner.cancel();

    let on_keydown = {
        move |ev: KeyboardEvent| {
            if ev.key() == "Enter" && (ev.ctrl_key() || ev.meta_key()) {
                ev.prevent_default();
                run();
            }
        }
    };
    let escape = {
        window_event_listener(leptos::ev::keydown, move |ev| {
            if ev.key() == "Escape" {
                cancel();
            }
        })
    };
    on_cleanup(move || escape.remove());

    // A picture pasted into the prompt is attached (text pastes as text).
    let pictures = expect_pictures();
    let on_paste = move |ev: leptos::ev::ClipboardEvent| {
        let files = files_of_event(&ev);
        if !files.is_empty() {
            ev.prevent_default();
            pictures.add(files);
        }
    };
    // Files dropped anywhere on the page are attached: a drop left to the browser would open the
    // file in place of Flint, and the work with it.
    let drag_over = window_event_listener(leptos::ev::dragover, move |ev| {
        if is_file_drag(&ev) {
            ev.prevent_default();
        }
    });
    let drop = window_event_listener(leptos::ev::drop, move |ev| {
        if is_file_drag(&ev) {
            ev.prevent_default();
            pictures.add(files_of_event(&ev));
        }
    });
    on_cleanup(move || {
        drag_over.remove();
        drop.remove();
    });

    let run_click = run;
    view! {
        <section class="prompt">
            <ImageDescription />
            <textarea
                class="prompt-input"
                data-testid="prompt-input"
                rows="2"
                spellcheck="false"
                placeholder="Describe a page to build… (Ctrl+Enter to run, Esc to cancel)"
                prop:value=move || text.get()
                on:input=move |ev| text.set(event_target_value(&ev))
                on:keydown=on_keydown
                on:paste=on_paste
            ></textarea>
            <ImageAttach />
            <ProjectKindControl />
            <VariationsControl />
            <div class="prompt-actions">
                <button
                    class="btn primary"
                    data-testid="run-button"
                    title="Run (Ctrl+Enter)"
                    aria-busy=move || counting.get().to_string()
                    on:click=move |_| run_click()
                >
                    {move || match (counting.get(), streaming()) {
                        (true, _) => "Counting…",
                        (false, true) => "Restart",
                        (false, false) => "Run",
                    }}
                    <kbd>"⌃↵"</kbd>
                </button>
                <button class="btn" data-testid="cancel-button" title="Cancel (Esc)" disabled=move || !streaming() on:click=move |_| cancel()>
                    "Cancel"
                    <kbd>"Esc"</kbd>
                </button>
            </div>
            <div class="prompt-context">
                <RequestOptions />
                <ContextMeter />
                <PinnedGoal />
            </div>
        </section>
    }
}
