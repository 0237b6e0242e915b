//! Whether the history has reached the gateway: "Synced", "N changes waiting to sync", or why not.

use leptos::prelude::*;

use crate::sync::SyncStatus;

/// One line beside History's title, shown only while the history syncs (signed in to a Flint that
/// keeps it): a person about to clear their browser can see whether their work is safe.
#[component]
pub fn SyncIndicator() -> impl IntoView {
    let status = expect_context::<SyncStatus>();
    let text = Memo::new(move |_| {
        let (on, syncing, waiting) = (status.on.get(), status.syncing.get(), status.waiting.get());
        status.problem.with(|problem| sync_words(on, syncing, waiting, problem.as_deref()))
    });
    let troubled = move || status.problem.with(Option::is_some);
    move || {
        text.get().map(|text| {
            view! {
                <span
                    class="sync-status"
                    class:sync-trouble=troubled
                    data-testid="sync-status"
                    title="Your history also lives on this Flint, for your other browsers"
                >
                    {text}
                </span>
            }
        })
    }
}

/// What the indicator says; `None` while the history is not synced at all. "Synced" only once a
/// round has ended with nothing waiting: a change made a moment ago may not be counted yet.
pub fn sync_words(on: bool, syncing: bool, waiting: usize, problem: Option<&str>) -> Option<String> {
    if !on {
        return None;
    }
    let waiting = match waiting {
        0 => None,
        1 => Some("1 change waiting to sync".to_owned()),
        n => Some(format!("{n} changes waiting to sync")),
    };
    Some(match (waiting, problem) {
        (None, None) if syncing => "Syncing…".to_owned(),
        (None, None) => "Synced".to_owned(),
        (Some(waiting), None) => waiting,
        (None, Some(problem)) => format!("Not synced just now: {problem}"),
        (Some(waiting), Some(problem)) => format!("{waiting}: {problem}"),
    })
}

#[cfg(test)]
mod tests {
    use super::sync_words;

    #[test]
    fn says_nothing_unless_syncing() {
        assert_eq!(sync_words(false, false, 3, Some("offline")), None);
    }

    #[test]
    fn counts_what_waits_and_says_why() {
        assert_eq!(sync_words(true, false, 0, None).as_deref(), Some("Synced"));
        assert_eq!(sync_words(true, true, 0, None).as_deref(), Some("Syncing…"), "not counted yet");
        assert_eq!(sync_words(true, true, 1, None).as_deref(), Some("1 change waiting to sync"));
        assert_eq!(sync_words(true, false, 4, None).as_deref(), Some("4 changes waiting to sync"));
        assert_eq!(
            sync_words(true, false, 2, Some("cannot reach /api/history/push: offline")).as_deref(),
            Some("2 changes waiting to sync: cannot reach /api/history/push: offline")
        );
        assert_eq!(
            sync_words(true, false, 0, Some("answered HTTP 503")).as_deref(),
            Some("Not synced just now: answered HTTP 503")
        );
    }
}
