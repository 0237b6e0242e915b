//! Native tests of a generation: what the end-to-end suite checks of runs and tiles, here without a
//! browser. [`Screen`] plays the driver: it applies the commands as the page would.

use std::rc::Rc;

use flint_protocol::diff::DiffHunk;
use flint_protocol::worker::{
    AnswerFile, EditKind, EditReport, FailedEdit, LineEdit, ParsedUpdate, WorkerRequest,
};
use flint_protocol::{FinishReason, GenParams, StreamMetrics, Usage};

use super::*;
use crate::review::Review;
use crate::versions::Origin;

/// What the page would show after the commands so far.
#[derive(Default)]
struct Screen {
    code: String,
    status: StreamStatus,
    error: Option<String>,
    review: Option<Review>,
    kept: Vec<(String, Origin)>,
    ran: Vec<String>,
    notices: Vec<Notice>,
    worker: Vec<WorkerRequest>,
    cancelled: Vec<u32>,
    started: Vec<flint_protocol::StartRequest>,
    shown: Vec<String>,
}

impl Screen {
    fn apply(&mut self, commands: Vec<Command>) -> Vec<Command> {
        for command in commands.clone() {
            match command {
                Command::StartStream(request) => self.started.push(request),
                Command::CancelStream(id) => self.cancelled.push(id),
                Command::Worker(request) => self.worker.push(request),
                Command::Code(CodeChange::Reset(_)) => self.code.clear(),
                Command::Code(CodeChange::Append(text)) => self.code.push_str(&text),
                Command::Code(CodeChange::EditLines(edits)) => {
                    self.code = apply_line_edits(&self.code, &edits).expect("edits fit the code");
                }
                Command::Code(CodeChange::Replace(code) | CodeChange::Project(code)) => self.code = code,
                Command::Code(CodeChange::Begin | CodeChange::Finish) => {}
                Command::Preview(PreviewChange::Run(doc) | PreviewChange::RunApp(doc)) => self.ran.push(doc),
                Command::Preview(_) => {}
                Command::Show(Display::Status(status)) => self.status = status,
                Command::Show(Display::Error(error)) => self.error = error,
                Command::Show(_) => {}
                Command::KeepVersion { code, origin, .. } => self.kept.push((code, origin)),
                Command::Propose(review) => self.review = Some(review),
                Command::ShowVersion { code, .. } | Command::Restore(code) => {
                    self.shown.push(code.clone());
                    self.code = code;
                }
                Command::Notify(notice) => self.notices.push(notice),
                Command::Spent(_) => {}
            }
        }
        commands
    }
}

use flint_protocol::worker::apply_line_edits;

fn job(base: Option<&str>) -> Rc<Job> {
    Rc::new(Job {
        prompt: "a counter".into(),
        messages: Vec::new(),
        base: base.map(str::to_owned),
        parent: Some(0),
        profile: None,
        auto_continue: None,
        prices: Vec::new(),
        prompt_tokens: None,
        expect: Default::default(),
        fix_attempt: 0,
        scope: None,
        seed: None,
        pictures: Default::default(),
    })
}

/// A generation on `surface`, started with stream `id`.
fn started(surface: Surface, base: Option<&str>, id: u32, screen: &mut Screen) -> Generation {
    let mut generation = Generation::new(job(base), "m/one".into(), None, surface, true);
    generation.attach_preview(true);
    screen.apply(generation.start(0.0));
    screen.apply(generation.started(id));
    generation
}

fn update(id: u32) -> ParsedUpdate {
    ParsedUpdate { stream: id, language: "html".into(), ..Default::default() }
}

fn append(id: u32, text: &str, reset: bool) -> ParsedUpdate {
    ParsedUpdate { code_append: text.into(), code_reset: reset, ..update(id) }
}

fn done_event() -> StreamEvent {
    StreamEvent::Done {
        finish: FinishReason::Stop,
        usage: Usage::default(),
        metrics: StreamMetrics::default(),
    }
}

fn delta(text: &str) -> StreamEvent {
    StreamEvent::Text { bytes: text.len() }
}

#[test]
fn a_run_streams_into_the_editor_and_is_done_once_its_page_shows() {
    let mut screen = Screen::default();
    let mut run = started(Surface::Editor, None, 7, &mut screen);
    assert_eq!(screen.started[0].model, "m/one");
    assert_eq!(screen.worker, [WorkerRequest::Reset { stream: 7, preview_only: false, base: None }]);
    assert_eq!(screen.notices, [Notice::Started { model: "m/one".into(), prompt: "a counter".into() }]);
    assert_eq!(screen.status, StreamStatus::Streaming);

    screen.apply(run.on_stream_event(7, delta("<h1>"), 10.0));
    assert_eq!(screen.worker.len(), 1, "the text is the worker's already: nothing is sent to it");
    screen.apply(run.on_stream_event(7, StreamEvent::Parsed(Box::new(append(7, "<h1>", true))), 11.0));
    screen.apply(run.on_parsed(append(7, "hi</h1>", false), 12.0));
    assert_eq!(screen.code, "<h1>hi</h1>");
    assert!(screen.notices.contains(&Notice::Streamed));

    screen.apply(run.on_stream_event(7, done_event(), 20.0));
    assert_eq!(screen.worker.last(), Some(&WorkerRequest::Finish { stream: 7 }));
    assert_eq!(screen.status, StreamStatus::Streaming, "done only once the page is on screen");
    let last = ParsedUpdate { done: true, preview: Some("<doc>".into()), ..update(7) };
    screen.apply(run.on_parsed(last, 21.0));
    assert_eq!(screen.ran, ["<doc>"]);
    assert_eq!(screen.kept, [("<h1>hi</h1>".to_owned(), Origin::Generated)]);
    screen.apply(run.page_shown(7, 30.0));
    assert_eq!(screen.status, StreamStatus::Done);
    assert_eq!(screen.notices.last(), Some(&Notice::Ended(StreamStatus::Done)));
    assert_eq!(screen.code, run.code(), "the generation and the editor agree");
}

#[test]
fn events_and_updates_of_another_stream_are_ignored() {
    let mut screen = Screen::default();
    let mut run = started(Surface::Editor, None, 7, &mut screen);
    assert!(run.on_stream_event(6, delta("old"), 1.0).is_empty());
    assert!(run.on_stream_event(6, done_event(), 1.0).is_empty());
    assert!(run.on_parsed(append(6, "old", true), 1.0).is_empty());
    assert!(run.page_shown(6, 1.0).is_empty());
    assert_eq!(screen.status, StreamStatus::Streaming);
}

#[test]
fn a_cancelled_run_keeps_exactly_what_the_editor_shows() {
    let mut screen = Screen::default();
    let mut run = started(Surface::Editor, None, 7, &mut screen);
    screen.apply(run.on_parsed(append(7, "<p>so far", true), 1.0));
    let commands = screen.apply(run.cancel());
    assert!(commands.contains(&Command::CancelStream(7)));
    assert!(commands.contains(&Command::Code(CodeChange::Finish)), "the editor becomes editable");
    assert_eq!(screen.worker.last(), Some(&WorkerRequest::Finish { stream: 7 }));
    assert_eq!(screen.status, StreamStatus::Cancelled);
    assert_eq!(screen.notices.last(), Some(&Notice::Ended(StreamStatus::Cancelled)));

    // Text and updates still in flight change nothing.
    assert!(run.on_stream_event(7, delta(" more"), 2.0).is_empty());
    assert!(run.on_parsed(append(7, " more", false), 2.0).is_empty());
    let late = screen.apply(run.on_stream_event(7, done_event(), 3.0));
    assert!(late.iter().all(|c| matches!(c, Command::Show(Display::Metrics(_)) | Command::Spent(_))));
    assert!(run.page_shown(7, 4.0).is_empty());
    assert_eq!(screen.code, "<p>so far");
    assert_eq!(screen.status, StreamStatus::Cancelled);
    assert!(run.cancel().is_empty(), "cancelling twice does nothing");
    assert!(screen.kept.is_empty());
}

#[test]
fn a_stopped_edit_restores_the_code_it_started_from() {
    let base = "a\nb\n";
    let mut screen = Screen::default();
    let mut run = started(Surface::Editor, Some(base), 7, &mut screen);
    assert_eq!(screen.code, base, "an edit shows its base until its first change");
    let edits = vec![LineEdit { start: 1, end: 2, text: "B\n".into() }];
    screen.apply(run.on_parsed(ParsedUpdate { code_edits: edits, ..update(7) }, 1.0));
    assert_eq!(screen.code, "a\nB\n");
    assert_eq!(run.code(), "a\nB\n");
    let commands = screen.apply(run.cancel());
    assert!(commands.contains(&Command::Show(Display::Edit(None))));
    assert_eq!(screen.code, base, "a stopped edit is not half-applied");
}

/// An edit's last update: `report` on base "a\nb\n", the proposal "a\nB\n".
fn finished_edit(id: u32, report: EditReport) -> ParsedUpdate {
    let main = AnswerFile { name: None, language: "html".into(), content: "a\nB\n".into(), main: true };
    ParsedUpdate {
        done: true,
        edits: Some(report),
        files: vec![main],
        preview: Some("<doc>".into()),
        ..update(id)
    }
}

#[test]
fn a_finished_edit_goes_to_review_and_the_editor_keeps_its_base() {
    let base = "a\nb\n";
    let mut screen = Screen::default();
    let mut run = started(Surface::Editor, Some(base), 7, &mut screen);
    let edits = vec![LineEdit { start: 1, end: 2, text: "B\n".into() }];
    screen.apply(run.on_parsed(ParsedUpdate { code_edits: edits, ..update(7) }, 1.0));
    screen.apply(run.on_stream_event(7, done_event(), 2.0));
    let hunk = DiffHunk { old: 1..2, new: 1..2, old_bytes: 2..4, new_bytes: 2..4, ..Default::default() };
    let report = EditReport { kind: EditKind::Edits, applied: 1, hunks: vec![hunk], ..Default::default() };
    let commands = screen.apply(run.on_parsed(finished_edit(7, report), 3.0));
    let shown = commands.iter().find_map(|c| match c {
        Command::Show(Display::Edit(Some(report))) => Some(report),
        _ => None,
    });
    assert!(
        shown.is_some_and(|r| r.hunks.is_empty() && r.applied == 1),
        "the report is shown without its hunks"
    );
    let review = screen.review.clone().expect("a review");
    assert_eq!((review.base.as_str(), review.proposal.as_str()), (base, "a\nB\n"));
    assert_eq!(
        (review.prompt.as_str(), review.model.as_str(), review.parent),
        ("a counter", "m/one", Some(0))
    );
    assert_eq!(review.result(), "a\nB\n", "every hunk kept gives the proposal");
    assert_eq!(screen.code, base, "until applied, the proposal lives in the review");
    assert!(screen.kept.is_empty(), "nothing is a version before the review ends");
    screen.apply(run.page_shown(7, 4.0));
    assert_eq!(screen.status, StreamStatus::Done);
}

#[test]
fn an_edit_whose_blocks_did_not_apply_says_so_and_changes_nothing() {
    let base = "a\nb\n";
    let mut screen = Screen::default();
    let mut run = started(Surface::Editor, Some(base), 7, &mut screen);
    screen.apply(run.on_stream_event(7, done_event(), 2.0));
    let report =
        EditReport { kind: EditKind::Edits, failed: vec![FailedEdit::default()], ..Default::default() };
    screen.apply(run.on_parsed(finished_edit(7, report), 3.0));
    assert_eq!(screen.shown, [base]);
    assert!(screen.error.as_deref().is_some_and(|e| e.starts_with("The answer's only edit did not apply")));
    assert!(screen.review.is_none() && screen.kept.is_empty());
}

#[test]
fn a_failed_stream_says_why_and_keeps_its_partial_code_unkept() {
    let mut screen = Screen::default();
    let mut run = started(Surface::Editor, None, 7, &mut screen);
    screen.apply(run.on_parsed(append(7, "<p>part", true), 1.0));
    let failed = StreamEvent::Failed { code: None, message: "The connection was lost.".into() };
    screen.apply(run.on_stream_event(7, failed, 2.0));
    assert_eq!(screen.error.as_deref(), Some("The connection was lost."));
    assert_eq!(screen.status, StreamStatus::Error);
    assert_eq!(screen.notices.last(), Some(&Notice::Ended(StreamStatus::Error)));
    assert_eq!(screen.worker.last(), Some(&WorkerRequest::Finish { stream: 7 }));
    // The worker's last frame still reaches the editor, but the page neither runs nor is kept.
    let last = ParsedUpdate { done: true, preview: Some("<doc>".into()), ..append(7, "!", false) };
    screen.apply(run.on_parsed(last, 3.0));
    assert_eq!(screen.code, "<p>part!");
    assert!(screen.ran.is_empty() && screen.kept.is_empty());
    assert_eq!(screen.status, StreamStatus::Error);
}

#[test]
fn a_stream_the_gateway_cancelled_ends_cancelled() {
    let mut screen = Screen::default();
    let mut run = started(Surface::Editor, None, 7, &mut screen);
    let cancelled = StreamEvent::Done {
        finish: FinishReason::Cancelled,
        usage: Usage::default(),
        metrics: StreamMetrics::default(),
    };
    screen.apply(run.on_stream_event(7, cancelled, 1.0));
    assert_eq!(screen.status, StreamStatus::Cancelled);
    screen.apply(run.on_parsed(ParsedUpdate { done: true, preview: Some("<doc>".into()), ..update(7) }, 2.0));
    assert!(screen.ran.is_empty() && screen.kept.is_empty(), "a stopped answer does not run");
}

#[test]
fn without_a_parser_a_finished_stream_is_done_at_once() {
    let mut screen = Screen::default();
    let mut run = Generation::new(job(None), "m/one".into(), None, Surface::Editor, false);
    screen.apply(run.start(0.0));
    screen.apply(run.started(3));
    screen.apply(run.on_stream_event(3, done_event(), 1.0));
    assert_eq!(screen.status, StreamStatus::Done);
}

#[test]
fn a_tile_previews_its_answer_and_gets_its_code_whole_at_the_end() {
    let mut screen = Screen::default();
    let params = GenParams { temperature: Some(0.7), seed: Some(5), ..GenParams::default() };
    let mut tile = Generation::new(job(None), "m/two".into(), Some(params), Surface::Tile, true);
    screen.apply(tile.start(100.0));
    assert_eq!(screen.started[0].params.temperature, Some(0.7), "the lane's sampling is sent");
    screen.apply(tile.started(9));
    assert_eq!(screen.worker, [WorkerRequest::Reset { stream: 9, preview_only: true, base: None }]);
    assert!(screen.notices.is_empty(), "tiles are not the saved generation");

    // Mounted late: it catches up with the latest snapshot.
    let commands =
        screen.apply(tile.on_parsed(ParsedUpdate { preview: Some("<part>".into()), ..update(9) }, 150.0));
    assert!(commands.contains(&Command::Show(Display::Race(RaceTimes {
        first_preview_ms: Some(50.0),
        finished_ms: None
    }))));
    assert_eq!(tile.attach_preview(true), [Command::Preview(PreviewChange::Snapshot("<part>".into()))]);
    assert!(tile.promote().is_err(), "a streaming tile cannot be promoted");

    screen.apply(tile.on_stream_event(9, done_event(), 200.0));
    let last = ParsedUpdate { done: true, preview: Some("<doc>".into()), ..append(9, "<h1>two</h1>", true) };
    screen.apply(tile.on_parsed(last, 210.0));
    assert_eq!(screen.ran, ["<doc>"]);
    assert!(screen.code.is_empty(), "a tile leaves the editor alone");
    let commands = screen.apply(tile.page_shown(9, 250.0));
    assert_eq!(screen.status, StreamStatus::Done);
    assert!(commands.contains(&Command::Show(Display::Race(RaceTimes {
        first_preview_ms: Some(50.0),
        finished_ms: Some(150.0)
    }))));

    screen.apply(tile.promote().expect("promotable"));
    assert_eq!(screen.kept, [("<h1>two</h1>".to_owned(), Origin::Promoted)]);
    assert_eq!(screen.code, "<h1>two</h1>");
    assert_eq!(screen.notices.last(), Some(&Notice::Ended(StreamStatus::Done)));
}

#[test]
fn a_cancelled_tile_can_still_be_promoted_once_its_code_arrives() {
    let mut screen = Screen::default();
    let mut tile = started(Surface::Tile, None, 9, &mut screen);
    assert_eq!(tile.promote(), Err("still streaming: promote it once it is done, or cancel it first"));
    screen.apply(tile.cancel());
    assert_eq!(screen.cancelled, [9]);
    assert_eq!(screen.status, StreamStatus::Cancelled);
    assert_eq!(tile.promote(), Err("it has no code to promote"));
    screen.apply(tile.on_parsed(ParsedUpdate { done: true, ..append(9, "<p>kept", true) }, 1.0));
    assert!(screen.ran.is_empty(), "a stopped tile's page does not run");
    assert!(tile.promote().is_ok());
}

#[test]
fn a_retried_tile_starts_over_and_ignores_its_old_stream() {
    let mut screen = Screen::default();
    let mut tile = started(Surface::Tile, None, 9, &mut screen);
    let failed = StreamEvent::Failed { code: None, message: "busy".into() };
    screen.apply(tile.on_stream_event(9, failed, 1.0));
    assert_eq!(screen.status, StreamStatus::Error);
    screen.apply(tile.retry(50.0));
    assert!(screen.cancelled.is_empty(), "a failed stream has nothing to stop");
    assert_eq!(screen.error, None);
    assert_eq!(screen.status, StreamStatus::Streaming);
    assert_eq!(screen.started.len(), 2, "the same request goes out again");
    assert_eq!(screen.started[0], screen.started[1]);
    screen.apply(tile.started(10));
    assert!(
        tile.on_parsed(ParsedUpdate { done: true, preview: Some("old".into()), ..update(9) }, 60.0)
            .is_empty()
    );
    assert!(tile.page_shown(9, 60.0).is_empty());
    screen.apply(tile.on_stream_event(10, done_event(), 70.0));
    screen
        .apply(tile.on_parsed(ParsedUpdate { done: true, preview: Some("new".into()), ..update(10) }, 80.0));
    screen.apply(tile.page_shown(10, 90.0));
    assert_eq!(screen.ran, ["new"]);
    assert_eq!(screen.status, StreamStatus::Done);
}

#[test]
fn a_retired_generation_stops_its_stream_and_the_worker_forgets_it() {
    let mut screen = Screen::default();
    let mut run = started(Surface::Editor, None, 7, &mut screen);
    let commands = screen.apply(run.retire());
    assert_eq!(commands, [Command::CancelStream(7), Command::Worker(WorkerRequest::Finish { stream: 7 })]);
    assert!(run.on_parsed(append(7, "late", true), 1.0).is_empty());
    assert!(run.retire().is_empty(), "told once");
}

mod project;
