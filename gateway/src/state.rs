//! What every request handler shares: the providers, the limits, the shutdown signal.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use flint_protocol::ModelList;
use tokio_util::sync::CancellationToken;

use crate::access::Access;
use crate::auth::Auth;
use crate::config::{Config, ProfileConfig, ServerConfig};
use crate::discovery::Discovery;
use crate::limits::Limits;
use crate::metrics::{Metrics, ScrapePolicy};
use crate::models;
use crate::providers::{self, Provider};
use crate::shares::{self, Shares};
use crate::store::{self, Store};
use crate::vendor::Vendor;
use crate::ws::{Peers, Resumes};

/// Shared state of the gateway; cheap to clone.
#[derive(Clone)]
pub struct AppState(Arc<Inner>);

struct Inner {
    providers: Vec<Arc<dyn Provider>>,
    server: ServerConfig,
    access: Access,
    auth: Auth,
    default_model: Option<String>,
    vision_model: Option<String>,
    profiles: Vec<ProfileConfig>,
    shutdown: CancellationToken,
    next_connection: AtomicU64,
    shares: Shares,
    share_limit: usize,
    people: Arc<Limits>,
    resumes: Resumes,
    peers: Peers,
    metrics: Arc<Metrics>,
    scrape: ScrapePolicy,
    store: Arc<dyn Store>,
    history: crate::history::HistoryLimits,
    discovery: Arc<Discovery>,
    vendor: Vendor,
}

impl AppState {
    /// State for `config` served by `providers` (in `/api/models` order).
    pub fn new(config: &Config, providers: Vec<Arc<dyn Provider>>) -> Self {
        Self::build(config, providers, &|name| std::env::var(name).ok())
    }

    fn build(
        config: &Config,
        providers: Vec<Arc<dyn Provider>>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Self {
        let store = store::open(config);
        let loopback = config.server.listen.ip().is_loopback();
        Self(Arc::new(Inner {
            providers,
            server: config.server.clone(),
            access: Access::new(&config.server),
            auth: Auth::new(&config.auth, &store),
            default_model: config.default_model.clone(),
            vision_model: config.vision.model.clone(),
            profiles: config.profiles.clone(),
            shutdown: CancellationToken::new(),
            next_connection: AtomicU64::new(1),
            shares: shares::open_configured(&config.share, config.server.listen, &store),
            share_limit: config.share.max_link_bytes,
            people: Limits::with_store(
                &config.limits,
                loopback,
                std::time::SystemTime::now,
                Arc::clone(&store),
            ),
            resumes: Resumes::default(),
            peers: Peers::new(&config.server, env),
            metrics: Arc::new(Metrics::new()),
            scrape: ScrapePolicy::new(config),
            store,
            history: crate::history::HistoryLimits::from(&config.store),
            discovery: Arc::new(Discovery::new(config)),
            vendor: Vendor::open(&config.preview.vendor_dir),
        }))
    }

    /// State with the providers `config` describes; `env` looks up keys (`api_key_env`).
    pub fn from_config(config: &Config, env: &dyn Fn(&str) -> Option<String>) -> Self {
        Self::build(config, providers::build_all(config, env), env)
    }

    /// Cancel it to close every WebSocket (and with it every stream).
    pub fn shutdown(&self) -> &CancellationToken {
        &self.0.shutdown
    }

    /// Where other gateways reach this one, and the secret they share (resume on any gateway).
    pub fn peers(&self) -> &Peers {
        &self.0.peers
    }

    /// Listening address, limits and the app folder.
    pub fn limits(&self) -> &ServerConfig {
        &self.0.server
    }

    /// What each person may use (tabs, streams, starts, tokens a day).
    pub fn people(&self) -> &Arc<Limits> {
        &self.0.people
    }

    /// Dropped connections waiting for their page to resume them.
    pub fn resumes(&self) -> &Resumes {
        &self.0.resumes
    }

    /// The gateway's figures, rendered at `/metrics`.
    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.0.metrics
    }

    /// Who may read `/metrics`, and where (`[metrics]`).
    pub fn scrape_policy(&self) -> &ScrapePolicy {
        &self.0.scrape
    }

    /// Where links, tokens, sessions and the day's quotas are kept.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.0.store
    }

    /// What synced history may hold (`[store] history_*`).
    pub fn history_limits(&self) -> crate::history::HistoryLimits {
        self.0.history
    }

    /// Who may use the gateway.
    pub fn access(&self) -> &Access {
        &self.0.access
    }

    /// Who is asking: the sign-in policy and its store.
    pub fn auth(&self) -> &Auth {
        &self.0.auth
    }

    /// The built app's folder.
    pub fn dist(&self) -> &Path {
        &self.0.server.dist
    }

    /// The configured providers.
    pub fn providers(&self) -> &[Arc<dyn Provider>] {
        &self.0.providers
    }

    /// The stored-link database: `None` when switched off, `Err` (why) when it could not be opened.
    pub fn shares(&self) -> &Shares {
        &self.0.shares
    }

    /// Longest link `POST /api/share` stores.
    pub fn share_limit(&self) -> usize {
        self.0.share_limit
    }

    /// A fresh connection id, for logs and for sharing providers fairly between connections.
    pub(crate) fn next_connection_id(&self) -> u64 {
        self.0.next_connection.fetch_add(1, Ordering::Relaxed)
    }

    /// The npm modules previews import (`/vendor/`).
    pub fn vendor(&self) -> &Vendor {
        &self.0.vendor
    }

    /// Model servers found on this machine (`[discovery]`).
    pub fn discovery(&self) -> &Arc<Discovery> {
        &self.0.discovery
    }

    /// The provider serving model id `provider/model` (configured, else found), and the model's
    /// name at the provider.
    pub(crate) fn find_model(&self, id: &str) -> Option<(Arc<dyn Provider>, String)> {
        let (name, model) = id.split_once('/')?;
        let found = self.0.discovery.found();
        let provider = self.0.providers.iter().chain(&found.providers).find(|p| p.name() == name)?;
        provider.models().iter().any(|m| m.model == model).then(|| (provider.clone(), model.to_owned()))
    }

    /// `[vision] model`: the model that describes images for models that do not see.
    pub fn vision_model(&self) -> Option<&str> {
        self.0.vision_model.as_deref()
    }

    /// The body of `GET /api/models`: the configured providers' models, then the found ones'.
    pub fn model_list(&self) -> ModelList {
        let found = self.0.discovery.found();
        let providers: Vec<Arc<dyn Provider>> =
            self.0.providers.iter().chain(&found.providers).cloned().collect();
        let mut list = models::model_list(&providers, self.0.default_model.as_deref(), &self.0.profiles);
        list.found = found.servers.clone();
        list.discovery = self.0.discovery.active();
        list.vision_model = self.0.vision_model.clone();
        list
    }
}
