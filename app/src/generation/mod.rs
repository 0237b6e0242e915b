//! One generation (a "lane"), sans-IO: its state from prompt to finished page, and what each event
//! asks the driver ([`crate::run`]) to do, as a list of [`Command`]s. Nothing here touches the
//! browser, so every path — stream, edit, cancel, failure, promote, retry, review, stale events — is
//! tested natively.
//!
//! ```text
//! start ─▶ [StartStream] ─▶ started(id) ─▶ [Worker Reset]
//! on_stream_event(Text) ─▶ [Show Metrics]            on_stream_event(Parsed) ─▶ [Code…, Preview…, Show…]
//! on_stream_event(Done) ─▶ [Worker Finish]           page_shown ─▶ [Show Status(Done)]
//! ```
//!
//! The text itself never reaches the page's lane: the worker holds the socket and parses it there;
//! a lane hears how much came (for its figures) and the parse.
//!
//! A single run is a generation on the [`Surface::Editor`]: its code streams into the editor and
//! the main preview. Variations and compare are several on [`Surface::Tile`]s: previews only, their
//! code kept whole until the person promotes one.

use std::rc::Rc;

use flint_protocol::worker::{AnswerFile, WorkerRequest};
use flint_protocol::{FinishReason, GenParams, StreamId};

use crate::gateway::StreamEvent;
use crate::metrics::LiveMetrics;
use crate::prompt::{Job, start_request};
use crate::share::code_language;
use crate::variations::RaceTimes;

mod command;
pub mod group;
mod parsed;
mod stop;
#[cfg(test)]
mod tests;
pub mod thinking;
mod versions;

pub use command::{CodeChange, Command, Display, Notice, PreviewChange, StreamStatus, Surface};
use group::ThrottledMetrics;
use thinking::Thinking;

/// How the stream ended, which decides whether its page runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Complete,
    Stopped,
}

/// One generation's state. Its methods return what the driver must do, in order.
#[derive(Debug)]
pub struct Generation {
    job: Rc<Job>,
    model: String,
    /// A lane's own sampling, over the job's.
    params: Option<GenParams>,
    surface: Surface,
    /// A parser worker answers with updates (without one, a finished stream is done at once).
    parser: bool,
    /// Its preview exists (a tile's is mounted later, and may go while it streams).
    has_preview: bool,
    stream: Option<StreamId>,
    status: StreamStatus,
    outcome: Option<Outcome>,
    /// Stopped by the person: what it shows is final.
    frozen: bool,
    /// The worker was told the stream is over.
    worker_finished: bool,
    queued: Option<u32>,
    /// The answer's main file so far, as the editor shows it (a tile's arrives whole at the end).
    code: String,
    answer_tokens: u32,
    files: Vec<AnswerFile>,
    /// The latest preview document.
    document: Option<String>,
    /// The finished page arrived (its scripts may run).
    page_complete: bool,
    metrics: ThrottledMetrics,
    started_ms: f64,
    /// The page clock at the latest event (race times are measured with it).
    now_ms: f64,
    race: RaceTimes,
    /// Its model's reasoning and silences, shown apart from the code.
    thinking: Thinking,
}

impl Generation {
    /// A generation of `job` on `model` (with a lane's `params`, if any), shown on `surface`;
    /// `parser`: a parser worker answers its text.
    pub fn new(
        job: Rc<Job>,
        model: String,
        params: Option<GenParams>,
        surface: Surface,
        parser: bool,
    ) -> Self {
        Self {
            job,
            model,
            params,
            surface,
            parser,
            has_preview: false,
            stream: None,
            status: StreamStatus::Idle,
            outcome: None,
            frozen: false,
            worker_finished: false,
            queued: None,
            code: String::new(),
            answer_tokens: 0,
            files: Vec::new(),
            document: None,
            page_complete: false,
            metrics: ThrottledMetrics::default(),
            started_ms: 0.0,
            now_ms: 0.0,
            race: RaceTimes::default(),
            thinking: Thinking::default(),
        }
    }

    /// Its stream, once started.
    pub fn stream(&self) -> Option<StreamId> {
        self.stream
    }

    /// Its status.
    pub fn status(&self) -> StreamStatus {
        self.status
    }

    /// The model it runs on.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The job it runs.
    pub fn job(&self) -> &Job {
        &self.job
    }

    /// The answer's main file so far.
    pub fn code(&self) -> &str {
        &self.code
    }

    /// Its metrics as they are now (a tile's are shown throttled).
    pub fn metrics(&self) -> &LiveMetrics {
        self.metrics.live()
    }

    /// Text may still arrive: not finished, failed or stopped (a finished answer waiting for its
    /// page to show is past stopping).
    pub fn streaming(&self) -> bool {
        self.status == StreamStatus::Streaming && !self.frozen && self.outcome.is_none()
    }

    /// Starts (or starts again) at `now_ms`: the request goes out, the editor (for a single run)
    /// shows the code an edit starts from, the preview starts over.
    pub fn start(&mut self, now_ms: f64) -> Vec<Command> {
        let job = Rc::clone(&self.job);
        self.stream = None;
        self.outcome = None;
        self.frozen = false;
        self.worker_finished = false;
        self.queued = None;
        self.answer_tokens = 0;
        self.files.clear();
        self.document = None;
        self.page_complete = false;
        self.started_ms = now_ms;
        self.now_ms = now_ms;
        self.race = RaceTimes::default();
        let started = LiveMetrics::started(now_ms).priced(job.price_of(&self.model), job.prompt_tokens);
        let mut out = Vec::new();
        if self.surface == Surface::Editor {
            // An edit keeps showing the code it edits until its first change arrives.
            self.code = job.base.clone().unwrap_or_default();
            match &job.base {
                Some(base) => {
                    out.push(Command::Code(CodeChange::Reset(code_language(base).to_owned())));
                    out.push(Command::Code(CodeChange::Append(base.clone())));
                }
                None => out.push(Command::Code(CodeChange::Reset("markdown".to_owned()))),
            }
            out.push(Command::Code(CodeChange::Begin));
            let cleared = [
                Display::Edit(None),
                Display::AnswerTokens(0),
                Display::Files(Vec::new()),
                Display::Document(None),
            ];
            out.extend(cleared.map(Command::Show));
        } else {
            self.code.clear();
            out.extend([Display::Error(None), Display::Race(RaceTimes::default())].map(Command::Show));
        }
        if self.has_preview {
            out.push(Command::Preview(PreviewChange::Begin));
        }
        out.push(Command::Show(Display::Queued(None)));
        thinking::show(self.thinking.reset(), &mut out);
        out.push(Command::Show(Display::Metrics(self.metrics.start(started))));
        self.set_status(StreamStatus::Streaming, &mut out);
        let mut request = start_request(&self.model, &job);
        if let Some(params) = &self.params {
            request.params = crate::profiles::merge(&request.params, params);
        }
        out.push(Command::StartStream(request));
        out
    }

    /// The gateway gave the stream `id`: the worker starts parsing it.
    pub fn started(&mut self, id: StreamId) -> Vec<Command> {
        self.stream = Some(id);
        let preview_only = self.surface == Surface::Tile;
        let mut out = vec![Command::Worker(WorkerRequest::Reset {
            stream: id,
            preview_only,
            base: self.job.base.clone(),
        })];
        if self.surface == Surface::Editor {
            out.push(Command::Notify(Notice::Started {
                model: self.model.clone(),
                prompt: self.job.prompt.clone(),
            }));
        }
        out
    }

    /// An event of stream `id` at `now_ms` (ignored unless it is this generation's stream).
    pub fn on_stream_event(&mut self, id: StreamId, event: StreamEvent, now_ms: f64) -> Vec<Command> {
        let mut out = Vec::new();
        if self.stream != Some(id) {
            return out;
        }
        let event = match event {
            StreamEvent::Parsed(update) => return self.on_parsed(*update, now_ms),
            event => event,
        };
        self.now_ms = now_ms;
        if self.queued.take().is_some() {
            out.push(Command::Show(Display::Queued(None)));
        }
        if self.thinking.on_event(&event, self.frozen, &mut self.metrics, now_ms, &mut out) {
            return out;
        }
        match event {
            StreamEvent::Thinking { .. } | StreamEvent::Stalled { .. } => {}
            StreamEvent::Queued { ahead } => {
                self.queued = Some(ahead);
                out.push(Command::Show(Display::Queued(Some(ahead))));
            }
            StreamEvent::Started { provider, model } => {
                if self.surface == Surface::Editor {
                    out.push(Command::Show(Display::ServedBy(format!("{provider}/{model}"))));
                }
            }
            StreamEvent::Text { bytes } => {
                if self.frozen {
                    return out;
                }
                let shown = self.metrics.on_text(now_ms, bytes);
                // A single run's numbers are the page's own; tiles' are throttled (see `group`).
                match shown {
                    Some(m) => out.push(Command::Show(Display::Metrics(m))),
                    None if self.surface == Surface::Editor => {
                        out.push(Command::Show(Display::Metrics(self.metrics.live().clone())));
                    }
                    None => {}
                }
            }
            StreamEvent::Done { finish, usage, metrics } => {
                out.push(Command::Show(Display::Metrics(self.metrics.on_done(usage, metrics))));
                out.push(Command::Spent(self.metrics.live().cost()));
                if self.frozen {
                    return out;
                }
                if finish == FinishReason::Cancelled {
                    self.outcome = Some(Outcome::Stopped);
                    self.set_status(StreamStatus::Cancelled, &mut out);
                } else {
                    // Done once the finished page is on screen (see `on_parsed`).
                    self.outcome = Some(Outcome::Complete);
                    if !self.parser {
                        self.set_status(StreamStatus::Done, &mut out);
                    }
                }
                self.finish_worker(&mut out);
            }
            // Handled above.
            StreamEvent::Parsed(_) => {}
            StreamEvent::Failed { message, .. } => {
                out.push(Command::Show(Display::Metrics(self.metrics.live().clone())));
                out.push(Command::Spent(self.metrics.live().cost()));
                if self.frozen {
                    return out;
                }
                self.outcome = Some(Outcome::Stopped);
                out.push(Command::Show(Display::Error(Some(message))));
                self.set_status(StreamStatus::Error, &mut out);
                self.finish_worker(&mut out);
            }
        }
        out
    }

    /// Its complete page is on screen (the preview's callback for stream `id`): it is done.
    pub fn page_shown(&mut self, id: StreamId, at_ms: f64) -> Vec<Command> {
        let mut out = Vec::new();
        if self.stream == Some(id) && !self.frozen && self.status == StreamStatus::Streaming {
            self.now_ms = at_ms;
            self.set_status(StreamStatus::Done, &mut out);
        }
        out
    }

    /// Its preview was mounted (or went away); one mounted late catches up with the latest page.
    pub fn attach_preview(&mut self, attached: bool) -> Vec<Command> {
        self.has_preview = attached;
        let mut out = Vec::new();
        if let (true, Some(doc)) = (attached && self.surface == Surface::Tile, self.document.clone()) {
            if self.page_complete && !self.frozen {
                // Its finished page may never have shown (the grid was hidden): it shows now.
                out.push(Command::Preview(PreviewChange::Run(doc)));
            } else {
                out.push(Command::Preview(PreviewChange::Snapshot(doc)));
            }
        }
        out
    }

    /// Tells the worker the stream is over (once); it answers with the final update.
    fn finish_worker(&mut self, out: &mut Vec<Command>) {
        if let Some(id) = self.stream
            && !std::mem::replace(&mut self.worker_finished, true)
        {
            out.push(Command::Worker(WorkerRequest::Finish { stream: id }));
        }
    }

    /// Sets the status; a single run tells the observer when it stops streaming.
    fn set_status(&mut self, status: StreamStatus, out: &mut Vec<Command>) {
        let was = std::mem::replace(&mut self.status, status);
        if status == StreamStatus::Done && self.surface == Surface::Tile {
            self.race.finished_ms = Some(self.now_ms - self.started_ms);
            out.push(Command::Show(Display::Race(self.race)));
        }
        out.push(Command::Show(Display::Status(status)));
        if self.surface == Surface::Editor
            && was == StreamStatus::Streaming
            && status != StreamStatus::Streaming
        {
            out.push(Command::Notify(Notice::Ended(status)));
        }
    }
}
