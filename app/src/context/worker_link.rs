//! The parser worker, for the components that ask it for a project's page (the exports).

use leptos::prelude::*;
use send_wrapper::SendWrapper;

use crate::gateway::WorkerLink;

/// The worker link, held on the page's thread (it is not `Send`; contexts must be).
#[derive(Clone)]
struct Provided(SendWrapper<WorkerLink>);

/// Provides the page's worker link to the components below.
pub fn provide_worker_link(link: WorkerLink) {
    provide_context(Provided(SendWrapper::new(link)));
}

/// The worker link provided by the app.
pub fn expect_worker_link() -> WorkerLink {
    (*expect_context::<Provided>().0).clone()
}
