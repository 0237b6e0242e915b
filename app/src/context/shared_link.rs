//! The shared link (`#p=…`) this page was opened with.

use leptos::prelude::*;

/// The shared link this page was opened with (`#p=…`), until the person dismisses its banner.
#[derive(Debug, Clone, Copy)]
pub struct SharedLink {
    /// A shared prompt was opened and is waiting to be run.
    pub opened: RwSignal<bool>,
    /// The link could not be opened: why, for the person.
    pub error: RwSignal<Option<String>>,
}

/// Provides a [`SharedLink`] with nothing opened yet and returns it.
pub fn provide_shared_link() -> SharedLink {
    let link = SharedLink { opened: RwSignal::new(false), error: RwSignal::new(None) };
    provide_context(link);
    link
}

/// The [`SharedLink`] provided by the app.
pub fn expect_shared_link() -> SharedLink {
    expect_context::<SharedLink>()
}
