//! The page layout: the root component provides the contexts (`crate::context`) and lays out the
//! components.

use flint_protocol::share::decode;
use leptos::prelude::*;

use crate::budget::use_budget;
use crate::components::{
    CodeEditor, CodePane, ConnectionStatus, ConsolePanel, DiffReview, ErrorMessage, ExportMenu, FailedEdits,
    FileTabs, FoundOffer, GatewayProblem, HistoryPanel, MetricsBar, ModelNotice, ModelPicker, OwnKeys,
    OwnKeysButton, Preview, PreviewTabs, ProfileHint, ProfileToggle, PromptBox, RestoredNotice, ShareButton,
    SharedLinkBanner, StorageWarning, ThinkingPanel, VariationsGrid, VersionsBar, provide_preview_width,
};
use crate::context::{
    FanOut, GatewayStatus, ModelChoice, SharedLink, provide_fan_out, provide_gateway_status,
    provide_model_choice, provide_shared_link, provide_worker_link,
};
use crate::draft::Draft;
use crate::gateway::{ConnectionState, use_gateway};
use crate::interop::http::{FetchError, get_json};
use crate::interop::{forget_page_hash, page_hash};
use crate::pictures::{Pictures, SavedPictures};
use crate::run::Runner;
use crate::session::use_session;
use crate::share::link_in_hash;
use crate::share::stored_pictures::{fetch_problem, pictures_url, received, stored_in_hash};

/// The whole app.
#[component]
pub fn App() -> impl IntoView {
    let gateway = use_gateway();
    crate::interop::warm_local_time();
    provide_worker_link(gateway.worker.clone());
    // The pictures' describing stream goes through the same connection as every generation.
    let (describe_start, describe_cancel, describe_worker) =
        (gateway.start.clone(), gateway.cancel.clone(), gateway.worker.clone());
    let runner = Runner::new(gateway.start, gateway.cancel, gateway.worker);
    provide_context(OwnKeys(gateway.use_key));
    provide_context(runner);
    provide_context(runner.workspace());
    provide_gateway_status(GatewayStatus {
        state: gateway.state,
        retry_in_ms: gateway.retry_in_ms,
        problem: gateway.problem,
        quota: gateway.quota,
    });

    let choice = provide_model_choice();
    let models = choice.models;

    let profile_kind =
        Signal::derive(move || choice.active_profile.with(|p| p.as_ref().and_then(|p| p.kind)));
    let draft = Draft::new().following(profile_kind);
    provide_context(draft);
    let fan_out = provide_fan_out();
    let pictures =
        crate::pictures::provide_pictures(describe_start, describe_cancel, describe_worker, choice, fan_out);
    let link = provide_shared_link();
    provide_preview_width();
    let code_pane = CodePane::provide();
    open_shared_link(&page_hash(), draft, choice, fan_out, &runner, link, pictures);
    let session = use_session(draft, choice, fan_out, &runner, link.opened.get_untracked());
    // Signed in, the history also follows the person to their other browsers.
    provide_context(crate::sync::use_history_sync(session.history.clone(), gateway.history_sync));
    provide_context(session);
    use_budget(&runner, draft, choice);
    // A link pasted into this tab's address bar changes only the fragment: no reload, so read it here.
    let hash_change = {
        window_event_listener(leptos::ev::hashchange, move |_| {
            open_shared_link(&page_hash(), draft, choice, fan_out, &runner, link, pictures)
        })
    };
    on_cleanup(move || hash_change.remove());

    // The list may have failed while the gateway was down: ask again once it is back.
    let state = gateway.state;
    Effect::new(move |was_connected: Option<bool>| {
        let connected = state.get() == ConnectionState::Connected;
        let failed = models.with_untracked(|m| matches!(m, Some(Err(_))));
        if connected && was_connected == Some(false) && failed {
            models.refetch();
        }
        connected
    });

    // The tiles are shown while there are some and the person has not switched to the preview.
    let tiles = runner.state().tiles;
    let has_tiles = Memo::new(move |_| tiles.with(|t| !t.is_empty()));
    let showing_tiles = Memo::new(move |_| fan_out.show_tiles.get() && has_tiles.get());
    // While the grid is shown the code pane is closed unless the person opened it; each new set of
    // variations closes it again (the grid is what they are for), a retried tile does not.
    let first_tile = Memo::new(move |_| tiles.with(|t| t.first().map(|t| t.key)));
    Effect::new(move |_| {
        if first_tile.get().is_some() {
            code_pane.open.set(false);
        }
    });
    let grid_wide = Memo::new(move |_| showing_tiles.get() && !code_pane.open.get());
    let review = runner.state().review;
    let reviewing = Memo::new(move |_| review.with(Option::is_some));

    view! {
        <div class="app">
            <header class="topbar">
                <div class="brand">
                    <span class="brand-mark">"◆"</span>
                    <span class="brand-name">"Flint"</span>
                </div>
                <ModelPicker />
                <ProfileToggle />
                <div class="spacer"></div>
                <OwnKeysButton />
                <HistoryPanel />
                <ShareButton />
                <ConnectionStatus />
            </header>
            <GatewayProblem />
            <ModelNotice />
            <FoundOffer />
            <SharedLinkBanner />
            <RestoredNotice />
            <StorageWarning />
            <PromptBox />
            <ProfileHint />
            <ErrorMessage />
            <MetricsBar />
            <ThinkingPanel />
            <main class="workspace" class:grid-wide=move || grid_wide.get()>
                <section class="pane code-pane">
                    <div class="pane-title">
                        "Code"
                        <VersionsBar />
                        <ExportMenu />
                    </div>
                    <FileTabs />
                    // Hidden, not unmounted, during a review: Monaco keeps its state.
                    <div class="editor-body" class:hidden=move || reviewing.get()>
                        <CodeEditor />
                    </div>
                    <Show when=move || reviewing.get()>
                        <DiffReview />
                    </Show>
                    <FailedEdits />
                </section>
                <section class="pane preview-pane">
                    <PreviewTabs />
                    <div class="preview-body" class:hidden=move || showing_tiles.get()>
                        <Preview />
                    </div>
                    // Hidden, not unmounted: a tile's finished page must keep loading (it is done
                    // once shown) while the person looks at the preview.
                    <div class="variations-body" class:hidden=move || !showing_tiles.get()>
                        <Show when=move || has_tiles.get()>
                            <VariationsGrid />
                        </Show>
                    </div>
                    <ConsolePanel />
                </section>
            </main>
        </div>
    }
}

/// Opens the shared link in `hash` (`#p=…`), if there is one: fills the prompt, prefers the link's
/// model and shows its code, or says why the link cannot be opened; a stored link's pictures
/// (`&s=<id>`) are fetched and attached. Nothing runs until the person asks: running (describing
/// the pictures included) can cost money on a paid provider.
fn open_shared_link(
    hash: &str,
    draft: Draft,
    choice: ModelChoice,
    fan_out: FanOut,
    runner: &Runner,
    link: SharedLink,
    pictures: Pictures,
) {
    let Some(encoded) = link_in_hash(hash) else { return };
    let decoded = decode(encoded);
    let stored = stored_in_hash(hash).map(str::to_owned);
    forget_page_hash();
    match decoded {
        Ok(shared) => {
            draft.prompt.set(shared.prompt);
            if let Some(goal) = shared.system.filter(|g| !g.trim().is_empty()) {
                draft.goal.set(goal);
            }
            choice.picked.set(None);
            choice.shared.set(shared.model);
            choice.profile.set(shared.profile);
            draft.kind.set(shared.kind);
            fan_out.count.set(shared.variations);
            fan_out.compare.set(false);
            if let Some(code) = shared.code {
                runner.show_code(code);
            }
            if let Some(id) = stored {
                attach_from(&id, pictures);
            }
            link.error.set(None);
            link.opened.set(true);
        }
        Err(err) => {
            link.opened.set(false);
            link.error.set(Some(err.to_string()));
        }
    }
}

/// Fetches the pictures of the stored link `id` and attaches them, held (nothing describes them
/// until the person asks); or says why not where a refused picture is shown.
fn attach_from(id: &str, pictures: Pictures) {
    let url = pictures_url(id);
    leptos::task::spawn_local(async move {
        let fetched = get_json::<flint_protocol::stored_link::StoredPictures>(&url).await.map_err(|err| {
            let status = match &err {
                FetchError::Status { status, .. } | FetchError::Refused { status, .. } => Some(*status),
                _ => None,
            };
            fetch_problem(status, &err.to_string())
        });
        match fetched.and_then(received) {
            Ok(images) => pictures.attach_shared(SavedPictures { images, ..SavedPictures::default() }),
            Err(why) => pictures.problem.set(Some(why)),
        }
    });
}
