//! The page layout and the contexts its components share.

use flint_protocol::share::decode;
use flint_protocol::{ModelList, Profile};
use leptos::prelude::*;

use crate::components::{
    CodeEditor, ConnectionStatus, ConsolePanel, DiffReview, ErrorMessage, ExportMenu, FailedEdits,
    GatewayProblem, HistoryPanel, MetricsBar, ModelNotice, ModelPicker, OwnKeys, OwnKeysButton, Preview,
    PreviewTabs, ProfileHint, ProfileToggle, PromptBox, RestoredNotice, ShareButton, SharedLinkBanner,
    StorageWarning, VariationsGrid, VersionsBar,
};
use crate::draft::Draft;
use crate::gateway::{ConnectionState, use_gateway};
use crate::interop::http::{FetchError, get_json};
use crate::interop::{forget_page_hash, page_hash};
use crate::meter::use_budget;
use crate::models::preferred_choice;
use crate::profiles;
use crate::run::Runner;
use crate::session::use_session;
use crate::share::link_in_hash;

/// The gateway connection as components see it.
#[derive(Debug, Clone, Copy)]
pub struct GatewayStatus {
    /// Connection state.
    pub state: Signal<ConnectionState>,
    /// Delay before the next reconnect attempt, while waiting.
    pub retry_in_ms: Signal<Option<u32>>,
    /// A problem with the connection itself.
    pub problem: Signal<Option<crate::gateway::ConnectionProblem>>,
    /// The person's daily token quota, when the gateway keeps one (and when it said so).
    pub quota: Signal<Option<(crate::gateway::Quota, f64)>>,
}

/// The model list and the user's choice.
#[derive(Clone, Copy)]
pub struct ModelChoice {
    /// `GET /api/models`, refetched when the gateway comes back.
    pub models: LocalResource<Result<ModelList, FetchError>>,
    /// What the user picked, if anything.
    pub picked: RwSignal<Option<String>>,
    /// The model a shared link asked for, preferred to the default when it is usable here.
    pub shared: RwSignal<Option<String>>,
    /// The model to use: the user's pick, else the shared link's model, else the list's default.
    pub selected: Signal<Option<String>>,
    /// The profile last chosen with the toggle (remembered with the session, carried in links).
    pub profile: RwSignal<Option<String>>,
    /// The profile in effect: the chosen one while its model is the selected one.
    pub active_profile: Memo<Option<Profile>>,
}

impl ModelChoice {
    /// Switches to `profile`: its model becomes the pick.
    pub fn use_profile(&self, profile: &Profile) {
        self.profile.set(Some(profile.name.clone()));
        self.picked.set(Some(profile.model.clone()));
    }
}

/// How a prompt fans out: how many variations, or which models to race side by side.
#[derive(Debug, Clone, Copy)]
pub struct FanOut {
    /// Variations per prompt, `1..=MAX_VARIATIONS` (remembered with the session).
    pub count: RwSignal<u8>,
    /// Compare mode: race the models in `compared` instead of varying one.
    pub compare: RwSignal<bool>,
    /// The models to race (2–4 make a compare).
    pub compared: RwSignal<Vec<String>>,
    /// The preview pane shows the tiles rather than the current version.
    pub show_tiles: RwSignal<bool>,
}

impl FanOut {
    fn new() -> Self {
        Self {
            count: RwSignal::new(1),
            compare: RwSignal::new(false),
            compared: RwSignal::new(Vec::new()),
            show_tiles: RwSignal::new(false),
        }
    }
}

/// The shared link this page was opened with (`#p=…`), until the person dismisses its banner.
#[derive(Debug, Clone, Copy)]
pub struct SharedLink {
    /// A shared prompt was opened and is waiting to be run.
    pub opened: RwSignal<bool>,
    /// The link could not be opened: why, for the person.
    pub error: RwSignal<Option<String>>,
}

/// The whole app.
#[component]
pub fn App() -> impl IntoView {
    let gateway = use_gateway();
    let runner = Runner::new(gateway.start, gateway.cancel);
    provide_context(OwnKeys(gateway.use_key));
    provide_context(runner.clone());
    provide_context(GatewayStatus {
        state: gateway.state,
        retry_in_ms: gateway.retry_in_ms,
        problem: gateway.problem,
        quota: gateway.quota,
    });

    let models = LocalResource::new(|| get_json::<ModelList>("/api/models"));
    let picked = RwSignal::new(None::<String>);
    let shared = RwSignal::new(None::<String>);
    let profile = RwSignal::new(None::<String>);
    // With nothing picked, the model is the shared link's, else the profile's (the first one on a
    // fresh page), else the list's default.
    let selected = Signal::derive(move || {
        picked.get().or_else(|| {
            let list = models.get()?.ok()?;
            let linked = shared.get();
            let preferred = linked.or_else(|| profile.with(|p| profiles::model_of(&list, p.as_deref())));
            preferred_choice(&list, preferred.as_deref())
        })
    });
    let active_profile = Memo::new(move |_| {
        let list = models.get()?.ok()?;
        let fresh = picked.with(Option::is_none) && shared.with(Option::is_none);
        let chosen =
            profile.get().or_else(|| fresh.then(|| list.profiles.first().map(|p| p.name.clone())).flatten());
        selected.with(|model| profiles::active(&list, chosen.as_deref(), model.as_deref()).cloned())
    });
    let choice = ModelChoice { models, picked, shared, selected, profile, active_profile };
    provide_context(choice);

    let draft = Draft::new();
    provide_context(draft);
    let fan_out = FanOut::new();
    provide_context(fan_out);
    let link = SharedLink { opened: RwSignal::new(false), error: RwSignal::new(None) };
    provide_context(link);
    open_shared_link(&page_hash(), draft, choice, fan_out, &runner, link);
    provide_context(use_session(draft, choice, fan_out, &runner, link.opened.get_untracked()));
    use_budget(&runner, draft, choice);
    // A link pasted into this tab's address bar changes only the fragment: no reload, so read it here.
    let hash_change = {
        let runner = runner.clone();
        window_event_listener(leptos::ev::hashchange, move |_| {
            open_shared_link(&page_hash(), draft, choice, fan_out, &runner, link)
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
            <SharedLinkBanner />
            <RestoredNotice />
            <StorageWarning />
            <PromptBox />
            <ProfileHint />
            <ErrorMessage />
            <MetricsBar />
            <main class="workspace">
                <section class="pane code-pane">
                    <div class="pane-title">
                        "Code"
                        <VersionsBar />
                        <ExportMenu />
                    </div>
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
/// model and shows its code, or says why the link cannot be opened. Nothing runs until the person
/// asks: running can cost money on a paid provider.
fn open_shared_link(
    hash: &str,
    draft: Draft,
    choice: ModelChoice,
    fan_out: FanOut,
    runner: &Runner,
    link: SharedLink,
) {
    let Some(encoded) = link_in_hash(hash) else { return };
    let decoded = decode(encoded);
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
            fan_out.count.set(shared.variations);
            fan_out.compare.set(false);
            if let Some(code) = shared.code {
                runner.show_code(code);
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
