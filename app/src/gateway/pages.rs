//! What the page asked the worker that comes back to one asker, matched by number: built pages
//! ([`WorkerRequest::Page`](flint_protocol::worker::WorkerRequest::Page)) and likeness reports
//! ([`WorkerRequest::Likeness`](flint_protocol::worker::WorkerRequest::Likeness)). A worker that
//! fails takes every question with it: each asker still hears once, with a sentence.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;

use flint_protocol::project::ProjectShape;
use flint_protocol::worker::{LikenessReport, WorkerRequest};

/// Receives a page the worker built: the page, or why the files do not build.
pub(super) type PageHandler = Box<dyn FnOnce(Result<(String, ProjectShape), Vec<String>>)>;

/// Receives the worker's likeness report.
pub(super) type LikenessHandler = Box<dyn FnOnce(LikenessReport)>;

/// What a page asked of a worker that then failed says (the preview, an export): it is never built.
const PAGE_LOST: &str = "Flint's page worker stopped while building this page: edit the code or press Run.";
/// What a likeness asked of a worker that then failed says.
const LIKENESS_LOST: &str = "Flint's page worker stopped while comparing this page with the picture: press Run \
                             to compare again.";

/// The questions not answered yet.
#[derive(Default)]
pub(super) struct Asked {
    pages: RefCell<BTreeMap<u32, PageHandler>>,
    next_page: Cell<u32>,
    likeness: RefCell<BTreeMap<u32, LikenessHandler>>,
    next_job: Cell<u32>,
    /// Whether the gateway's packages manifest is in (or known missing): a project's page built
    /// before would say its packages are not built, so page requests wait in `held` until then.
    packages_in: Cell<bool>,
    held: RefCell<Vec<WorkerRequest>>,
}

impl Asked {
    /// Sends the page request `request` with `send` now, or once the packages are in.
    pub(super) fn send_page(&self, request: WorkerRequest, send: impl FnOnce(&WorkerRequest)) {
        if self.packages_in.get() {
            send(&request);
        } else {
            self.held.borrow_mut().push(request);
        }
    }

    /// The packages manifest is in (or known missing): the page requests held, to send now.
    pub(super) fn packages_in(&self) -> Vec<WorkerRequest> {
        self.packages_in.set(true);
        self.held.take()
    }

    /// Numbers a page request whose answer goes to `f`.
    pub(super) fn page(&self, f: PageHandler) -> u32 {
        let id = self.next_page.get();
        self.next_page.set(id.wrapping_add(1));
        self.pages.borrow_mut().insert(id, f);
        id
    }

    /// Numbers a likeness request whose report goes to `f`.
    pub(super) fn likeness(&self, f: LikenessHandler) -> u32 {
        let job = self.next_job.get();
        self.next_job.set(job.wrapping_add(1));
        self.likeness.borrow_mut().insert(job, f);
        job
    }

    /// The worker built page `id` (or could not); an answer nobody waits for is dropped.
    pub(super) fn page_built(&self, id: u32, built: Result<(String, ProjectShape), Vec<String>>) {
        // Taken out before the call: the handler may ask again.
        let handler = self.pages.borrow_mut().remove(&id);
        if let Some(handler) = handler {
            handler(built);
        }
    }

    /// The worker compared; a report nobody waits for (or one the worker made up) is dropped.
    pub(super) fn likeness_done(&self, report: LikenessReport) {
        let handler = self.likeness.borrow_mut().remove(&report.job);
        if let Some(handler) = handler {
            handler(report);
        }
    }

    /// The worker failed: every question still out is answered with why.
    pub(super) fn worker_lost(&self) {
        for page in std::mem::take(&mut *self.pages.borrow_mut()).into_values() {
            page(Err(vec![PAGE_LOST.to_owned()]));
        }
        for (job, likeness) in std::mem::take(&mut *self.likeness.borrow_mut()) {
            likeness(LikenessReport {
                job,
                score: None,
                findings: Vec::new(),
                problem: Some(LIKENESS_LOST.to_owned()),
                ms: 0.0,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use std::rc::Rc;

    use super::*;

    fn report(job: u32, score: f32) -> LikenessReport {
        LikenessReport { job, score: Some(score), findings: Vec::new(), problem: None, ms: 1.0 }
    }

    #[test]
    fn each_likeness_report_goes_to_its_asker_once() {
        let asked = Asked::default();
        let heard = Rc::new(RefCell::new(Vec::new()));
        let (h1, h2) = (Rc::clone(&heard), Rc::clone(&heard));
        let first = asked.likeness(Box::new(move |r| h1.borrow_mut().push((1, r.score))));
        let second = asked.likeness(Box::new(move |r| h2.borrow_mut().push((2, r.score))));
        asked.likeness_done(report(second, 0.5));
        asked.likeness_done(report(second, 0.9));
        asked.likeness_done(report(99, 0.1));
        asked.likeness_done(report(first, 0.7));
        assert_eq!(*heard.borrow(), [(2, Some(0.5)), (1, Some(0.7))]);
    }

    #[test]
    fn a_lost_worker_answers_every_question_still_out() {
        let asked = Asked::default();
        let heard = Rc::new(RefCell::new(Vec::new()));
        let (h1, h2) = (Rc::clone(&heard), Rc::clone(&heard));
        asked.likeness(Box::new(move |r| h1.borrow_mut().push(r.problem.is_some())));
        asked.page(Box::new(move |b| h2.borrow_mut().push(b.is_err())));
        asked.worker_lost();
        assert_eq!(*heard.borrow(), [true, true]);
        asked.worker_lost();
        assert_eq!(heard.borrow().len(), 2, "each asker hears once");
    }

    #[test]
    fn page_requests_wait_for_the_packages_then_go_at_once() {
        let asked = Asked::default();
        let sent = RefCell::new(Vec::new());
        let send = |r: &WorkerRequest| sent.borrow_mut().push(r.clone());
        asked.send_page(WorkerRequest::WarmPage { id: 1 }, send);
        asked.send_page(WorkerRequest::WarmPage { id: 2 }, send);
        assert!(sent.borrow().is_empty(), "sent before the packages were in");
        assert_eq!(
            asked.packages_in(),
            [WorkerRequest::WarmPage { id: 1 }, WorkerRequest::WarmPage { id: 2 }]
        );
        asked.send_page(WorkerRequest::WarmPage { id: 3 }, send);
        assert_eq!(*sent.borrow(), [WorkerRequest::WarmPage { id: 3 }]);
        assert!(asked.packages_in().is_empty(), "each held request goes once");
    }
}
