//! Pressing Run: the draft, the code and the versions made into a [`Job`], checked against the
//! context budget, and started once, as variations or as a compare.

use std::time::Duration;

use flint_protocol::prompt::Turn;
use leptos::prelude::*;

use crate::context::{FanOut, ModelChoice};
use crate::draft::Draft;
use crate::interop::{bench_seed, random};
use crate::judge::{Report, expect, fix_prompt};
use crate::pick::scope_prompt;
use crate::pictures::{JobPictures, Pictures, expect_pictures, refusal, run_models, sees};
use crate::prompt::{Ask, Job, compose, too_long_for_any};
use crate::run::Runner;
use crate::variations::{best_of_lanes, compare_lanes, variation_lanes};

/// Continuations asked for when "Continue cut-off answers" is on (the gateway caps them too).
pub const AUTO_CONTINUE: u8 = 2;

/// What the next request carries besides the draft's texts: the file it edits and the thread.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Context {
    /// The file to edit (`None`: ask for a new page).
    pub file: Option<String>,
    /// Earlier turns (empty unless the person continues the thread).
    pub thread: Vec<Turn>,
}

/// The [`Context`] the draft asks for now (untracked reads).
pub fn context_now(runner: &Runner, draft: Draft) -> Context {
    let file = if draft.edit.get_untracked() { runner.edit_base() } else { None };
    let thread = if draft.continue_thread.get_untracked() {
        runner.state().versions.with_untracked(|v| v.thread())
    } else {
        Vec::new()
    };
    Context { file, thread }
}

/// How Run treats the code in the editor.
#[derive(Clone, Copy)]
pub enum Launch {
    /// As the draft says (edit it, continue the thread), with the prompt's pictures.
    AsDrafted(Pictures),
    /// A new page from the prompt and the goal alone: a shared prompt run as it was shared.
    Fresh,
}

/// How long Run waits for the worker's count of the draft as it stands before it sends the request
/// unplanned (a worker that stopped answering must not make Run a dead button).
const COUNT_WAIT: Duration = Duration::from_secs(3);

/// Whether the last count (`report`, its revision) is of the draft as last sent to the worker
/// (`sent`); nothing sent yet (no model to count against) has nothing to wait for.
fn counted(report: Option<u32>, sent: u32) -> bool {
    sent == 0 || report == Some(sent)
}

/// What [`use_run`] gives the prompt box.
pub struct UseRunReturn<RunFn: Fn() + Copy> {
    /// Runs the draft (once it is counted).
    pub run: RunFn,
    /// Run was pressed and waits for the worker's count: the button says so, since the status still
    /// shows the last run's.
    pub counting: Signal<bool>,
}

/// Run for the prompt box: launches the draft once the worker has counted it as it stands, so a
/// request that does not fit is never sent because Run came a keystroke ahead of the count.
pub fn use_run(
    runner: Runner,
    choice: ModelChoice,
    fan_out: FanOut,
    draft: Draft,
) -> UseRunReturn<impl Fn() + Copy> {
    let state = runner.state();
    let waiting = RwSignal::new(false);
    // Read here, where the component's context is: `go` may run from a timer, which has none.
    let pictures = expect_pictures();
    let go = move || {
        waiting.set(false);
        launch(&runner, choice, fan_out, draft, Launch::AsDrafted(pictures));
    };
    Effect::new(move |_| {
        let counted = counted(state.budget.with(|b| b.as_ref().map(|b| b.revision)), state.budget_sent.get());
        if waiting.get() && counted {
            // Not in this effect: what a run creates (the tiles' signals) would belong to it and be
            // disposed when it next runs, at the next count.
            waiting.set(false);
            queue_microtask(go);
        }
    });
    let run = move || {
        if counted(
            state.budget.with_untracked(|b| b.as_ref().map(|b| b.revision)),
            state.budget_sent.get_untracked(),
        ) {
            go();
        } else if !waiting.get_untracked() {
            waiting.set(true);
            set_timeout(
                move || {
                    if waiting.get_untracked() {
                        go()
                    }
                },
                COUNT_WAIT,
            );
        }
    };
    UseRunReturn { run, counting: waiting.into() }
}

/// Runs the draft as the person set it up; a request that cannot be sent says why instead.
pub fn launch(runner: &Runner, choice: ModelChoice, fan_out: FanOut, draft: Draft, how: Launch) {
    let state = runner.state();
    if state.review.with_untracked(Option::is_some) {
        state.error.set(Some("Apply or discard the edit under review first (above the code).".into()));
        return;
    }
    let context = match how {
        Launch::AsDrafted(_) => context_now(runner, draft),
        Launch::Fresh => Context::default(),
    };
    let mut prompt = draft.prompt.get_untracked();
    let goal = draft.goal.get_untracked();
    // A count of other texts (a reply not yet in, or a fresh run's) cannot plan this request.
    let sent = state.budget_sent.get_untracked();
    let mut budget =
        state.budget.get_untracked().filter(|b| b.revision == sent && matches!(how, Launch::AsDrafted(_)));
    // An element picked in the preview holds the edit to it.
    let picked = context.file.as_deref().and_then(|file| runner.picked_now(file));
    if let (Some(file), Some(picked)) = (context.file.as_deref(), &picked) {
        prompt = scope_prompt(file, picked, &prompt);
        // The count was of the draft without the element's source.
        budget = None;
    }
    let ask = Ask {
        prompt: &prompt,
        goal: &goal,
        file: context.file.as_deref(),
        thread: &context.thread,
        budget: budget.as_ref(),
        kind: draft.kind_untracked(),
    };
    let mut job = match compose(ask) {
        Ok(job) => job,
        Err(why) => {
            state.error.set(Some(why));
            return;
        }
    };
    dress(&mut job, runner, choice, draft);
    if let Launch::AsDrafted(pictures) = how
        && let Err(why) = with_pictures(&mut job, pictures, choice, fan_out)
    {
        state.error.set(Some(why));
        return;
    }
    if let Some(picked) = picked {
        // The history and the versions keep what the person typed, not the scoping around it.
        job.prompt = draft.prompt.get_untracked().trim().to_owned();
        job.expect = expect(&job.prompt, &goal, true);
        job.scope = Some(picked.lines);
        runner.clear_pick();
    }
    let seed = bench_seed().unwrap_or_else(|| (random() * 1e9) as u64);
    if fan_out.compare.get_untracked() {
        let compared = fan_out.compared.get_untracked();
        if compared.len() < 2 {
            state.error.set(Some("Pick at least two models to compare (at most four).".into()));
            return;
        }
        let windows: Vec<(String, u32)> = choice
            .models
            .get_untracked()
            .and_then(Result::ok)
            .map(|list| {
                list.models
                    .into_iter()
                    .filter(|m| compared.contains(&m.id))
                    .map(|m| (m.id, m.context_window))
                    .collect()
            })
            .unwrap_or_default();
        if let Some(why) = budget.as_ref().and_then(|b| too_long_for_any(b.total, &windows)) {
            state.error.set(Some(why));
            return;
        }
        fan_out.show_tiles.set(true);
        runner.run_lanes(compare_lanes(&compared, seed), job);
        return;
    }
    let count = fan_out.count.get_untracked();
    match choice.selected.get_untracked() {
        Some(model) if count > 1 => {
            fan_out.show_tiles.set(true);
            let lanes = if fan_out.best_of.get_untracked() {
                best_of_lanes(&model, count, seed)
            } else {
                variation_lanes(&model, count, seed)
            };
            runner.run_lanes(lanes, job);
        }
        model => {
            fan_out.show_tiles.set(false);
            // The same run as best of N's tile 1 when a benchmark fixed the seed.
            job.seed = bench_seed();
            runner.run(model, job);
        }
    }
}

/// What every job carries besides its messages: the version it hangs off, the profile, prices and
/// continuations; the person's unsaved edits to its base are kept as a version first.
fn dress(job: &mut Job, runner: &Runner, choice: ModelChoice, draft: Draft) {
    let state = runner.state();
    if let Some(file) = &job.base {
        runner.keep_hand_edits(file);
    }
    job.parent = state.versions.with_untracked(|v| v.current_index());
    job.profile = choice.active_profile.get_untracked();
    job.prices = choice.models.with_untracked(|list| match list {
        Some(Ok(list)) => list.models.iter().filter_map(|m| Some((m.id.clone(), m.price?))).collect(),
        _ => Vec::new(),
    });
    job.auto_continue = draft.auto_continue.get_untracked().then_some(AUTO_CONTINUE);
}

/// Gives `job` the prompt's pictures, or says why the run cannot go with them: a model that does
/// not see and has no description yet (or no vision model to write one) is never sent a run that
/// silently lost its picture.
fn with_pictures(
    job: &mut Job,
    pictures: Pictures,
    choice: ModelChoice,
    fan_out: FanOut,
) -> Result<(), String> {
    let images: Vec<_> = pictures.images.get_untracked().into_iter().map(|a| a.image).collect();
    if images.is_empty() {
        return Ok(());
    }
    if pictures.preparing.get_untracked() > 0 {
        return Err("A picture is still being read: run again in a moment.".into());
    }
    let models = untrack(|| run_models(choice, fan_out));
    let Some(Ok(list)) = choice.models.get_untracked() else {
        return Err("The model list has not loaded yet, so Flint cannot tell which models see images.".into());
    };
    // Run is the person asking: pictures a shared link brought are described now if need be (and
    // the refusal below says to wait for it).
    if pictures.held.get_untracked() {
        pictures.release();
    }
    let description = pictures.description.get_untracked();
    if let Some(why) = refusal(&list, &models, description.as_ref()) {
        return Err(why);
    }
    job.pictures = JobPictures {
        images,
        seeing: models.iter().filter(|m| sees(&list, m)).cloned().collect(),
        description: description.map(|d| (d.text, d.by)),
    };
    Ok(())
}

/// Fix: asks the selected model for edits of the current code that repair what `report` found
/// (one generation, in the editor, reviewed as any edit). `attempt` numbers it: 1 for the person's
/// click, then each automatic try. Says why when it cannot be sent.
pub fn launch_fix(
    runner: &Runner,
    choice: ModelChoice,
    fan_out: FanOut,
    draft: Draft,
    report: &Report,
    attempt: u8,
) -> Result<(), String> {
    let state = runner.state();
    // With a picture in the prompt, how the page differs from it is part of the request.
    let likeness = state.likeness.get_untracked();
    let prompt = fix_prompt(report, &likeness)
        .ok_or("Every check passes and the page looks like the picture: there is nothing to fix.")?;
    if state.review.with_untracked(Option::is_some) {
        return Err("Apply or discard the edit under review first (above the code).".into());
    }
    let file = runner.edit_base().ok_or("There is no code to fix yet.")?;
    let goal = draft.goal.get_untracked();
    let kind = draft.kind_untracked();
    let ask = Ask { prompt: &prompt, goal: &goal, file: Some(&file), thread: &[], budget: None, kind };
    let mut job = compose(ask)?;
    dress(&mut job, runner, choice, draft);
    // Checked for what the page was asked to have, not for the words of the fix request.
    job.expect = runner.expectations();
    job.fix_attempt = attempt;
    fan_out.show_tiles.set(false);
    runner.run(choice.selected.get_untracked(), job);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::counted;

    #[test]
    fn run_waits_only_for_a_count_still_out() {
        assert!(counted(Some(4), 4));
        assert!(!counted(Some(3), 4), "a count of the draft before the last keystroke plans nothing");
        assert!(!counted(None, 1));
        assert!(counted(None, 0), "with no model to count against, Run does not wait");
    }
}
