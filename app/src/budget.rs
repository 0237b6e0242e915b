//! [`use_budget`]: keeps the worker counting what the next request would send, so the context meter
//! (`crate::meter`) and Run (`crate::launch`) know whether it fits before it is sent.

use std::cell::RefCell;
use std::rc::Rc;

use flint_protocol::picture::with_description;
use flint_protocol::prompt::{RequestParts, file_text, goal_text, turn_text};
use flint_protocol::worker::BudgetRequest;
use flint_protocol::{ModelInfo, Tokenizer};
use leptos::prelude::*;

use crate::context::ModelChoice;
use crate::draft::Draft;
use crate::launch::context_now;
use crate::prompt::reserved_output;
use crate::run::Runner;

/// What was last sent to the worker, so that only changed parts travel.
#[derive(Default)]
struct Sent {
    revision: u32,
    model: Option<(u32, Tokenizer)>,
    system: Option<String>,
    goal: Option<String>,
    file: Option<String>,
    history: Option<Vec<String>>,
    prompt: Option<String>,
}

/// `Some(new)` when it differs from what was sent (and records it).
fn changed<T: PartialEq + Clone>(sent: &mut Option<T>, new: T) -> Option<T> {
    (sent.as_ref() != Some(&new)).then(|| {
        *sent = Some(new.clone());
        new
    })
}

/// Keeps the worker counting the next request as the person types, pins a goal, switches model
/// or options, and as the code changes; its reports land in [`RunState::budget`](crate::run::RunState::budget).
pub fn use_budget(runner: &Runner, draft: Draft, choice: ModelChoice) {
    let sent = Rc::new(RefCell::new(Sent::default()));
    let model = Memo::new(move |_| {
        let id = choice.selected.get()?;
        let list = choice.models.get()?.ok()?;
        list.models.into_iter().find(|m: &ModelInfo| m.id == id).map(|m| (m.context_window, m.tokenizer))
    });
    let state = runner.state();
    // Sends the parts `fill` sets (those it leaves `None` are unchanged), when any changed.
    let send = {
        let runner = *runner;
        move |fill: &dyn Fn(&mut Sent, &mut BudgetRequest)| {
            let Some((window, tokenizer)) = model.get_untracked() else { return };
            let mut sent = sent.borrow_mut();
            let model_changed = changed(&mut sent.model, (window, tokenizer)).is_some();
            let mut request = BudgetRequest {
                revision: sent.revision + 1,
                window,
                reserved_output: reserved_output(window),
                tokenizer,
                ..Default::default()
            };
            fill(&mut sent, &mut request);
            let any = request.system.is_some()
                || request.goal.is_some()
                || request.file.is_some()
                || request.history.is_some()
                || request.prompt.is_some();
            if any || model_changed {
                sent.revision = request.revision;
                runner.state().budget_sent.set(request.revision);
                runner.measure(request);
            }
        }
    };
    // The code and the thread: read only when something that can change them did (the editor's
    // code is read from the workspace, whose version says when it changed).
    let runner = *runner;
    let send_context = send.clone();
    // The kind follows the prompt's words: a memo, so typing wakes this only when the kind changes.
    let kind = Memo::new(move |_| draft.kind());
    Effect::new(move |_| {
        model.track();
        draft.edit.track();
        draft.continue_thread.track();
        let kind = kind.get();
        runner.workspace().track();
        state.versions.track();
        let context = context_now(&runner, draft);
        send_context(&|sent, request| {
            let parts =
                RequestParts { goal: "", file: context.file.as_deref(), history: &[], prompt: "", kind };
            request.system = changed(&mut sent.system, parts.system().to_owned());
            request.file =
                changed(&mut sent.file, context.file.as_deref().map(file_text).unwrap_or_default());
            let file = context.file.as_deref();
            request.history =
                changed(&mut sent.history, context.thread.iter().map(|t| turn_text(t, file)).collect());
        });
    });
    // What the person types: cheap, sent as they type. A model that does not see is sent the
    // pictures' description with the prompt, so it counts with it.
    let pictures = crate::pictures::expect_pictures();
    Effect::new(move |_| {
        model.track();
        let prompt = draft.prompt.get();
        let goal = draft.goal.get();
        let prompt = match (pictures.needed.get(), pictures.description.get()) {
            (Some(by), Some(d)) if d.by == by => with_description(prompt.trim(), &d.text, &by),
            _ => prompt.trim().to_owned(),
        };
        send(&|sent, request| {
            request.goal = changed(&mut sent.goal, goal_text(&goal));
            request.prompt = changed(&mut sent.prompt, prompt.clone());
        });
    });
}
