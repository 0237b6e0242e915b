//! One stream as the worker follows it: its parser, what of it the page has been sent, its token
//! count, and for an edit the base with the answer's blocks applied. [`crate::session`] holds one
//! per stream and decides when each sends.

use flint_protocol::StreamId;
use flint_protocol::worker::{AnswerFile, EditKind, EditReport, LineEdit, ParsedUpdate, PreviewPackages};

use crate::diff::review_hunks;
use crate::document::preview_document;
use crate::edit_stream::EditStream;
use crate::parser::StreamParser;
use crate::project_page::{edited_files, files_document, is_project, project_document};
use crate::project_warm::warm_page;
use crate::tokens::{IncrementalCount, TokenCounter};

/// Shortest wait between two previews of a project streaming: each is built and run anew (a
/// fresh frame loads its modules), where a page's snapshot is only morphed.
const PROJECT_PREVIEW_MS: f64 = 250.0;

/// Per-stream progress: what the page has already been sent.
#[derive(Debug)]
pub(crate) struct StreamState {
    parser: StreamParser,
    /// Which file the editor shows (`None`: prose), once an update has been sent.
    shown: Option<Option<usize>>,
    /// Bytes of the shown text already sent.
    sent_len: usize,
    /// Parser revision the last preview was built from.
    preview_revision: Option<u64>,
    preview: PreviewPacing,
    /// Text arrived since the last update.
    pub(crate) dirty: bool,
    /// Send previews only, and the code whole at the end.
    preview_only: bool,
    /// Tokens of the answer so far (and the answer itself).
    tokens: IncrementalCount,
    /// The count in the last update sent.
    tokens_sent: Option<usize>,
    /// For a stream with a base: the edits, and what of them the page has.
    edit: Option<EditView>,
}

/// An edit stream and what of it the page has been sent.
#[derive(Debug)]
struct EditView {
    stream: EditStream,
    /// Revision of the edited text the editor shows.
    shown: Option<u64>,
    /// Revision of the edited text the last preview was built from.
    preview_revision: Option<u64>,
    /// Revision of the last report sent.
    report_sent: Option<u64>,
}

/// When the last preview left, and what it was.
#[derive(Debug, Default)]
struct PreviewPacing {
    sent_ms: Option<f64>,
    last: Option<String>,
}

impl PreviewPacing {
    fn due(&self, now_ms: f64, every_ms: f64) -> bool {
        self.sent_ms.is_none_or(|t| now_ms - t >= every_ms)
    }

    /// `doc` if it differs from the last preview sent (or `done`: the last update always has it).
    fn offer(&mut self, doc: Option<String>, now_ms: f64, done: bool) -> Option<String> {
        if doc == self.last && !done {
            return None;
        }
        self.last.clone_from(&doc);
        self.sent_ms = Some(now_ms);
        doc
    }
}

/// The editor's and the preview's part of an update.
#[derive(Debug, Default)]
struct Shown {
    code_reset: bool,
    code_edits: Vec<LineEdit>,
    code_append: String,
    language: String,
    preview: Option<String>,
    /// The preview is a project's page, run as it streams.
    live: bool,
    /// A project's build problems, on the last update.
    problems: Option<Vec<String>>,
    /// Whether any of it is news to the page.
    news: bool,
}

impl StreamState {
    pub(crate) fn new(counter: TokenCounter, preview_only: bool, base: Option<String>) -> Self {
        Self {
            parser: StreamParser::new(),
            shown: None,
            sent_len: 0,
            preview_revision: None,
            preview: PreviewPacing::default(),
            dirty: false,
            preview_only,
            tokens: IncrementalCount::new(counter),
            tokens_sent: None,
            edit: base.map(|base| EditView {
                stream: EditStream::new(base),
                shown: None,
                preview_revision: None,
                report_sent: None,
            }),
        }
    }

    pub(crate) fn push(&mut self, text: &str) {
        self.parser.push(text);
        self.tokens.push(text);
        if let Some(edit) = &mut self.edit {
            edit.stream.push(text, self.tokens.text(), &self.parser);
        }
        self.dirty = true;
    }

    /// Ends the answer (its tokens are recounted in full by the last update).
    pub(crate) fn finish(&mut self) {
        self.parser.finish();
        if let Some(edit) = &mut self.edit {
            edit.stream.finish(self.tokens.text(), &self.parser);
        }
    }

    /// Counts the answer so far with `counter` from now on.
    pub(crate) fn set_counter(&mut self, counter: TokenCounter) {
        let mut tokens = IncrementalCount::new(counter);
        tokens.push(self.tokens.text());
        self.tokens = tokens;
    }

    /// The update owed to the page at `now_ms`, or `None` when nothing changed; the preview only
    /// when `preview_every_ms` has passed since the last one (always on the last update).
    pub(crate) fn take_update(
        &mut self,
        stream: StreamId,
        done: bool,
        now_ms: f64,
        preview_every_ms: f64,
        packages: &PreviewPackages,
    ) -> Option<ParsedUpdate> {
        let shown = match &mut self.edit {
            Some(edit) if edit.stream.kind() != EditKind::WholeFile => {
                // The parser's view is not on screen: showing it later starts afresh.
                (self.shown, self.preview_revision) = (None, None);
                let shown = edit.take_shown(
                    &mut self.preview,
                    self.preview_only,
                    done,
                    now_ms,
                    preview_every_ms,
                    packages,
                );
                self.dirty = edit.preview_revision != Some(edit.stream.revision());
                shown
            }
            edit => {
                if let Some(edit) = edit {
                    (edit.shown, edit.preview_revision) = (None, None);
                }
                self.take_parsed(done, now_ms, preview_every_ms, packages)
            }
        };

        let answer_tokens = if done { self.tokens.recount() } else { self.tokens.tokens() };
        let mut edits = None;
        let mut files = Vec::new();
        if let Some(edit) = &mut self.edit {
            let revision = edit.stream.report_revision();
            if done || edit.report_sent != Some(revision) {
                edit.report_sent = Some(revision);
                edits = Some(edit.stream.report());
            }
        }
        if done {
            files = self.final_files(&mut edits);
        }
        // An edit stream shows nothing of the answer while its blocks stream: the count is the sign
        // of progress, so it is news of its own there.
        let tokens_news = self.edit.is_some() && self.tokens_sent != Some(answer_tokens);
        if !done && !shown.news && edits.is_none() && !tokens_news {
            return None;
        }
        self.tokens_sent = Some(answer_tokens);
        Some(ParsedUpdate {
            stream,
            code_edits: shown.code_edits,
            code_append: shown.code_append,
            code_reset: shown.code_reset,
            language: shown.language,
            preview: shown.preview,
            live: shown.live,
            problems: shown.problems,
            done,
            files,
            answer_tokens: u32::try_from(answer_tokens).unwrap_or(u32::MAX),
            edits,
        })
    }

    /// The editor's and the preview's news from the parser: the answer's main file, appended.
    fn take_parsed(
        &mut self,
        done: bool,
        now_ms: f64,
        preview_every_ms: f64,
        packages: &PreviewPackages,
    ) -> Shown {
        let main = self.parser.main_file();
        if self.preview_only && done {
            // The code was held back: send it whole.
            self.shown = None;
        }
        let code_reset = self.shown != Some(main);
        if code_reset {
            self.sent_len = 0;
        }
        let (committed, tail) = self.parser.visible(main);
        let mut code_append = String::new();
        if self.preview_only && !done {
            // Nothing of the code is sent until the end.
        } else if self.sent_len < committed.len() {
            code_append.push_str(&committed[self.sent_len..]);
            code_append.push_str(tail);
        } else if let Some(rest) = tail.get(self.sent_len - committed.len()..) {
            code_append.push_str(rest);
        }
        self.sent_len += code_append.len();
        if !self.preview_only || done {
            self.shown = Some(main);
        }

        let mut preview = None;
        let mut problems = None;
        let revision = self.parser.revision();
        let project = is_project(&self.parser);
        // A project's page is built and run, not morphed: a few a second at most.
        let every = if project { preview_every_ms.max(PROJECT_PREVIEW_MS) } else { preview_every_ms };
        if (self.preview_revision != Some(revision) && self.preview.due(now_ms, every)) || done {
            self.preview_revision = Some(revision);
            let doc = if project {
                match project_document(&self.parser, packages, !done) {
                    Ok(doc) => Some(doc),
                    // The last good page stays: a file cut mid-line does not build, so why is
                    // only news once the answer is whole.
                    Err(why) => {
                        problems = done.then_some(why);
                        // Before the first build, a page that only loads React warms a frame for
                        // it to be swapped into.
                        let last = self.preview.last.clone().or_else(|| warm_page(&self.parser, packages));
                        last.filter(|_| !done)
                    }
                }
            } else {
                preview_document(&self.parser)
            };
            preview = self.preview.offer(doc, now_ms, done);
            if done && project && problems.is_none() {
                problems = Some(Vec::new());
            }
        }

        // A preview held back keeps the stream dirty, so a later flush sends it.
        self.dirty = self.preview_revision != Some(revision);
        let code_news = !self.preview_only && (code_reset || !code_append.is_empty());
        let language = match main {
            Some(i) => self.parser.files()[i].language.clone(),
            None => "markdown".to_owned(),
        };
        Shown {
            code_reset: code_reset && (!self.preview_only || done),
            code_edits: Vec::new(),
            code_append,
            language,
            news: code_news || preview.is_some(),
            live: project && preview.is_some(),
            preview,
            problems,
        }
    }

    /// The answer's files for the last update; for an edit stream, also the hunks from the base to
    /// the final text in its report.
    fn final_files(&self, report: &mut Option<EditReport>) -> Vec<AnswerFile> {
        let Some(edit) = &self.edit else { return answer_files(&self.parser, None) };
        let text = edit.stream.final_text(&self.parser);
        if let Some(report) = report {
            report.hunks = review_hunks(edit.stream.base(), &text);
        }
        match edit.stream.kind() {
            EditKind::WholeFile => answer_files(&self.parser, Some(text)),
            EditKind::Edits | EditKind::Prose => vec![edit.stream.answer_file()],
        }
    }
}

impl EditView {
    /// The editor's and the preview's news: the edited text, whole, each time it changes.
    fn take_shown(
        &mut self,
        pacing: &mut PreviewPacing,
        preview_only: bool,
        done: bool,
        now_ms: f64,
        preview_every_ms: f64,
        packages: &PreviewPackages,
    ) -> Shown {
        let revision = self.stream.revision();
        let held_back = preview_only && !done;
        let changed = !held_back && (self.shown != Some(revision) || preview_only);
        // The editor already shows an earlier revision: send the blocks' line edits rather than
        // the whole file again (Monaco re-tokenises a replaced model; an edit touches a few lines).
        let line_edits = match self.shown {
            Some(shown) if changed && !preview_only => self.stream.take_line_edits(shown),
            _ => {
                self.stream.take_line_edits(revision);
                None
            }
        };
        let code_reset = changed && line_edits.is_none();
        if !held_back {
            self.shown = Some(revision);
        }
        let mut preview = None;
        // An edited project (or lone component) is built like an answer, a few times a second,
        // the last good page kept.
        let project = edited_files(self.stream.language(), self.stream.text());
        let every =
            if project.is_some() { preview_every_ms.max(PROJECT_PREVIEW_MS) } else { preview_every_ms };
        if (self.preview_revision != Some(revision) && pacing.due(now_ms, every)) || done {
            self.preview_revision = Some(revision);
            let doc = match &project {
                Some(files) => files_document(files, packages).ok().or_else(|| pacing.last.clone()),
                None => self.stream.preview(),
            };
            preview = pacing.offer(doc, now_ms, done);
        }
        let code_edits = line_edits.unwrap_or_default();
        Shown {
            code_reset,
            code_append: if code_reset { self.stream.text().to_owned() } else { String::new() },
            language: self.stream.language().to_owned(),
            news: code_reset || !code_edits.is_empty() || preview.is_some(),
            code_edits,
            live: project.is_some() && preview.is_some(),
            preview,
            problems: None,
        }
    }
}

/// The answer's files, for export; `main_text` replaces the main file's text.
fn answer_files(parser: &StreamParser, mut main_text: Option<String>) -> Vec<AnswerFile> {
    let main = parser.main_file();
    parser
        .files()
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let is_main = main == Some(i);
            let content = match main_text.take_if(|_| is_main) {
                Some(text) => text,
                None => f.content.clone(),
            };
            AnswerFile { name: f.name.clone(), language: f.language.clone(), content, main: is_main }
        })
        .collect()
}
