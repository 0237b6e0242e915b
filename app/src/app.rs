//! The page layout and the contexts its components share.

use flint_protocol::ModelList;
use leptos::prelude::*;

use crate::components::{
    CodeEditor, ConnectionStatus, ConsolePanel, ErrorMessage, MetricsBar, ModelNotice, ModelPicker, Preview,
    PromptBox,
};
use crate::gateway::{ConnectionState, use_gateway};
use crate::interop::http::{FetchError, get_json};
use crate::models::initial_choice;
use crate::run::Runner;

/// The gateway connection as components see it.
#[derive(Debug, Clone, Copy)]
pub struct GatewayStatus {
    /// Connection state.
    pub state: Signal<ConnectionState>,
    /// Delay before the next reconnect attempt, while waiting.
    pub retry_in_ms: Signal<Option<u32>>,
    /// A problem with the connection itself.
    pub problem: Signal<Option<String>>,
}

/// The model list and the user's choice.
#[derive(Clone, Copy)]
pub struct ModelChoice {
    /// `GET /api/models`, refetched when the gateway comes back.
    pub models: LocalResource<Result<ModelList, FetchError>>,
    /// What the user picked, if anything.
    pub picked: RwSignal<Option<String>>,
    /// The model to use: the user's pick, else the list's default.
    pub selected: Signal<Option<String>>,
}

/// The whole app.
#[component]
pub fn App() -> impl IntoView {
    let gateway = use_gateway();
    let runner = Runner::new(gateway.start, gateway.cancel);
    provide_context(runner.clone());
    provide_context(GatewayStatus {
        state: gateway.state,
        retry_in_ms: gateway.retry_in_ms,
        problem: gateway.problem,
    });

    let models = LocalResource::new(|| get_json::<ModelList>("/api/models"));
    let picked = RwSignal::new(None::<String>);
    let selected = Signal::derive(move || {
        picked.get().or_else(|| models.get().and_then(|r| r.ok()).and_then(|list| initial_choice(&list)))
    });
    provide_context(ModelChoice { models, picked, selected });

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

    view! {
        <div class="app">
            <header class="topbar">
                <div class="brand">
                    <span class="brand-mark">"◆"</span>
                    <span class="brand-name">"Flint"</span>
                </div>
                <ModelPicker />
                <div class="spacer"></div>
                <ConnectionStatus />
            </header>
            <ModelNotice />
            <PromptBox />
            <ErrorMessage />
            <MetricsBar />
            <main class="workspace">
                <section class="pane code-pane">
                    <div class="pane-title">"Code"</div>
                    <CodeEditor />
                </section>
                <section class="pane preview-pane">
                    <div class="pane-title">"Preview"</div>
                    <Preview />
                    <ConsolePanel />
                </section>
            </main>
        </div>
    }
}
