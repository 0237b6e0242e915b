//! The prompt: what to build, with Run and Cancel.

use leptos::ev::KeyboardEvent;
use leptos::prelude::*;

use crate::app::{FanOut, ModelChoice};
use crate::components::VariationsControl;
use crate::draft::expect_draft;
use crate::interop::random;
use crate::run::{Runner, StreamStatus, expect_runner};
use crate::variations::{compare_lanes, variation_lanes};

/// A textarea; Ctrl/Cmd+Enter runs, Esc (anywhere on the page) cancels.
#[component]
pub fn PromptBox() -> impl IntoView {
    let runner = expect_runner();
    let choice = expect_context::<ModelChoice>();
    let status = runner.state().status;
    let text = expect_draft().prompt;
    let streaming = move || status.get() == StreamStatus::Streaming;

    let fan_out = expect_context::<FanOut>();
    let run = {
        let runner = runner.clone();
        move || start(&runner, choice, fan_out, &text.get_untracked())
    };
    let cancel = {
        let runner = runner.clone();
        move || runner.cancel()
    };

    let on_keydown = {
        let run = run.clone();
        move |ev: KeyboardEvent| {
            if ev.key() == "Enter" && (ev.ctrl_key() || ev.meta_key()) {
                ev.prevent_default();
                run();
            }
        }
    };
    let escape = {
        let cancel = cancel.clone();
        window_event_listener(leptos::ev::keydown, move |ev| {
            if ev.key() == "Escape" {
                cancel();
            }
        })
    };
    on_cleanup(move || escape.remove());

    let run_click = run.clone();
    view! {
        <section class="prompt">
            <textarea
                class="prompt-input"
                data-testid="prompt-input"
                rows="2"
                spellcheck="false"
                placeholder="Describe a page to build… (Ctrl+Enter to run, Esc to cancel)"
                prop:value=move || text.get()
                on:input=move |ev| text.set(event_target_value(&ev))
                on:keydown=on_keydown
            ></textarea>
            <VariationsControl />
            <div class="prompt-actions">
                <button class="btn primary" data-testid="run-button" title="Run (Ctrl+Enter)" on:click=move |_| run_click()>
                    {move || if streaming() { "Restart" } else { "Run" }}
                    <kbd>"⌃↵"</kbd>
                </button>
                <button class="btn" data-testid="cancel-button" title="Cancel (Esc)" disabled=move || !streaming() on:click=move |_| cancel()>
                    "Cancel"
                    <kbd>"Esc"</kbd>
                </button>
            </div>
        </section>
    }
}

/// Runs `prompt` once, as variations, or as a compare, as the person set it up.
fn start(runner: &Runner, choice: ModelChoice, fan_out: FanOut, prompt: &str) {
    let seed = (random() * 1e9) as u64;
    let compared = fan_out.compared.get_untracked();
    if fan_out.compare.get_untracked() {
        if compared.len() < 2 {
            runner.state().error.set(Some("Pick at least two models to compare (at most four).".into()));
            return;
        }
        fan_out.show_tiles.set(true);
        runner.run_lanes(compare_lanes(&compared, seed), prompt);
        return;
    }
    let count = fan_out.count.get_untracked();
    match choice.selected.get_untracked() {
        Some(model) if count > 1 => {
            fan_out.show_tiles.set(true);
            runner.run_lanes(variation_lanes(&model, count, seed), prompt);
        }
        model => {
            fan_out.show_tiles.set(false);
            runner.run(model, prompt);
        }
    }
}
