//! The edits of an answer that could not be applied: never dropped in silence.

use leptos::prelude::*;

use crate::run::expect_runner;

/// "Edit 3 did not apply: its SEARCH lines are not in the file" for each such block, with the start
/// of its SEARCH text; shown while the answer streams and after.
#[component]
pub fn FailedEdits() -> impl IntoView {
    let edit = expect_runner().state().edit;
    let failed = Memo::new(move |_| edit.with(|e| e.as_ref().map(|e| e.failed.clone()).unwrap_or_default()));
    move || {
        let failed = failed.get();
        (!failed.is_empty()).then(|| {
            let items = failed
                .into_iter()
                .map(|f| {
                    view! {
                        <li data-testid="failed-edit">
                            {format!("Edit {} did not apply: {}.", f.block, f.reason)}
                            <code>{f.search}</code>
                        </li>
                    }
                })
                .collect_view();
            view! { <ul class="failed-edits" role="status">{items}</ul> }
        })
    }
}
