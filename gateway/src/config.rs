//! `flint.toml`: where the gateway listens and which providers it relays to.
//!
//! Loading order: the file (if any), then the zero-file quick start from environment variables
//! ([`QUICK_START_BASE_URL`]…), then, with the `local` feature and nothing else configured, the
//! embedded model. Keys stay in the environment (`api_key_env`) and are read when providers are built.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::Deserialize;

mod auth;
mod discovery;
mod limits;
mod preview;
mod profiles;
mod providers;
mod store;
mod vision;

pub use auth::*;
pub use discovery::*;
pub use limits::*;
pub use preview::*;
pub use profiles::*;
pub use providers::*;
pub use store::*;
pub use vision::*;

/// The whole configuration file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Listening address and limits.
    #[serde(default)]
    pub server: ServerConfig,
    /// Providers, in the order they are listed in `/api/models`.
    #[serde(default)]
    pub providers: Vec<ProviderConfig>,
    /// `provider/model` to preselect; defaults to the first available model.
    #[serde(default)]
    pub default_model: Option<String>,
    /// Stored short links (`/s/<id>`).
    #[serde(default)]
    pub share: ShareConfig,
    /// `[limits]`: what one person may use.
    #[serde(default)]
    pub limits: LimitsConfig,
    /// `[profiles.NAME]`: named model settings the app toggles between, in the file's order.
    #[serde(default, deserialize_with = "profiles::in_order")]
    pub profiles: Vec<ProfileConfig>,
    /// `[auth]`: who may use the gateway.
    #[serde(default)]
    pub auth: AuthConfig,
    /// `[store]`: SQLite files (default) or one PostgreSQL database shared by several gateways.
    #[serde(default)]
    pub store: StoreConfig,
    /// `[metrics]`: who may read `/metrics`.
    #[serde(default)]
    pub metrics: MetricsConfig,
    /// `[discovery]`: model servers found on this machine without configuration.
    #[serde(default)]
    pub discovery: DiscoveryConfig,
    /// `[preview]`: the npm modules previews may import.
    #[serde(default)]
    pub preview: PreviewConfig,
    /// `[vision]`: the model that describes images for code models that do not see.
    #[serde(default)]
    pub vision: VisionConfig,
}

/// `[metrics]`: `GET /metrics` in Prometheus' text format.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MetricsConfig {
    /// Peers (addresses or CIDR ranges) that may read it; empty turns it off. Default: loopback,
    /// so a scraper on the same machine (or in the same pod) reads it and the public does not.
    pub allow: Vec<IpRange>,
    /// A listen address of its own (e.g. `127.0.0.1:9187`): `/metrics` is then served there and
    /// not on `server.listen`. Set it behind a reverse proxy, whose requests all come from its
    /// own address. Unset: served on `server.listen`, never to a request that came through a proxy.
    pub listen: Option<SocketAddr>,
}

impl Default for MetricsConfig {
    fn default() -> Self {
        Self {
            allow: ["127.0.0.0/8", "::1/128"].iter().map(|r| r.parse().expect("valid range")).collect(),
            listen: None,
        }
    }
}

/// `[share]`: stored short links for prompts too long to share in a URL.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ShareConfig {
    /// Keep links at all. Unset: on while the gateway listens on loopback, off on any other
    /// address (strangers would fill the disk); `true` turns them on anywhere, `false` off.
    pub enabled: Option<bool>,
    /// The SQLite file; default `$XDG_DATA_HOME/flint/shares.sqlite3` (or `~/.local/share/…`).
    pub database: PathBuf,
    /// Longest link stored, in bytes of its encoded text.
    pub max_link_bytes: usize,
    /// Links one person (a sign-in, or an address) may keep at once.
    pub max_links_per_person: usize,
    /// Bytes of links one person may keep at once.
    pub max_bytes_per_person: usize,
    /// Days a link is kept after it is stored; 0 keeps links until deleted.
    pub ttl_days: u32,
    /// Not a setting: the time links are dated by; tests put a [`crate::clock::Clock::manual`] here.
    #[serde(skip)]
    pub clock: crate::clock::Clock,
}

impl ShareConfig {
    /// Whether stored links are on for a gateway listening on `listen`: as `enabled` says, else on
    /// loopback only, where the one storing them is the one whose disk they fill.
    pub fn stored_links_on(&self, listen: SocketAddr) -> bool {
        self.enabled.unwrap_or_else(|| listen.ip().is_loopback())
    }
}

impl Default for ShareConfig {
    fn default() -> Self {
        let data = std::env::var_os("XDG_DATA_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
            .unwrap_or_else(|| PathBuf::from("."));
        Self {
            enabled: None,
            database: data.join("flint/shares.sqlite3"),
            max_link_bytes: 512 * 1024,
            max_links_per_person: 200,
            max_bytes_per_person: 8 * 1024 * 1024,
            ttl_days: 90,
            clock: crate::clock::Clock::system(),
        }
    }
}

/// `[server]`
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServerConfig {
    /// Address to listen on.
    pub listen: SocketAddr,
    /// The built app (`dist/`, from `cargo xtask` or Trunk), served at `/`.
    pub dist: PathBuf,
    /// Concurrent streams one connection may run.
    pub max_streams_per_connection: usize,
    /// Largest client frame accepted, in bytes, images (as base64) included.
    pub max_frame_bytes: usize,
    /// `max_tokens` used when the client sends none, and the cap on what it sends.
    pub max_tokens: u32,
    /// Origins (`scheme://host[:port]`) whose pages may use `/ws` and `/api` besides the gateway's
    /// own, e.g. `http://127.0.0.1:8080` for `trunk serve`. See [`crate::access`].
    pub allowed_origins: Vec<String>,
    /// Host names the gateway answers to besides loopback ones (loopback names are always served
    /// while it listens on loopback). Set them when it listens elsewhere, against DNS rebinding.
    pub hosts: Vec<String>,
    /// How long a client may take to send a request's headers, in milliseconds, counted from the
    /// moment it connects (and again while a kept-alive connection waits for its next request).
    pub header_read_timeout_ms: u64,
    /// Open connections (WebSockets included) one address may hold; an IPv6 /64 counts as one
    /// address, and `auth.trusted_proxies` are not counted. The next is answered 429. 0: no cap.
    pub max_connections_per_address: usize,
    /// The most continuations one stream may ask for (`auto_continue`) when its answer stops at
    /// the length limit; each costs a full request's prompt tokens again. 0 turns them off.
    pub max_auto_continue: u8,
    /// How long, in seconds, a tab whose socket dropped keeps its streams running for the page to
    /// come back and resume them. 0: a dropped socket ends its streams at once.
    pub resume_grace_secs: u64,
    /// The most bytes of frames one tab keeps for a resume. While the socket is up the oldest go
    /// first; while it is away, passing this stops the tab's streams (the page is told why).
    pub resume_buffer_bytes: usize,
    /// On SIGTERM or Ctrl-C: how long, in seconds, running streams may take to finish after the
    /// gateway stops accepting connections, before the remaining sockets are closed (the pages
    /// reconnect, through a load balancer to another gateway). A second signal stops at once.
    pub drain_secs: u64,
    /// The most bytes of text one answer may bring (continuations included); an upstream sending
    /// more is cut off there and the page told why.
    pub max_answer_bytes: usize,
    /// The longest one answer may run, in seconds of wall-clock time from its start (continuations
    /// included), however often the upstream sends something (keep-alive comments included).
    pub max_stream_secs: u64,
    /// The WebSocket base URL other gateways reach this one at (`ws://10.0.0.2:8787`), for a tab
    /// that resumes on another gateway: its socket is relayed here. Needs a shared `[store]` and
    /// `peer_secret`; unset, a resume reaches only the gateway the tab first used.
    pub peer_address: Option<String>,
    /// A second address serving only the peer route, which keeps accepting while the gateway
    /// drains (the main listener closes at once): a tab that drops during a deploy and
    /// reconnects elsewhere is relayed back here until its answers end. Point `peer_address` at it.
    pub peer_listen: Option<SocketAddr>,
    /// The secret every gateway of one deployment shares, sent on gateway-to-gateway sockets;
    /// the peer route refuses any socket without it. Prefer `peer_secret_env`.
    pub peer_secret: Option<String>,
    /// The environment variable `peer_secret` is read from.
    pub peer_secret_env: Option<String>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 8787)),
            dist: PathBuf::from("dist"),
            max_streams_per_connection: 16,
            // 11 MiB: a start may carry image::MAX_REQUEST_IMAGE_BYTES (four images of 1.5 MiB,
            // 8 MiB as base64, plus their JSON) besides 2 MiB of text (the default before images),
            // which 2 MiB alone did not admit. A frame is held once while it is parsed; the
            // socket's own cap is twice this.
            max_frame_bytes: 11 * 1024 * 1024,
            max_tokens: 8192,
            allowed_origins: Vec::new(),
            hosts: Vec::new(),
            header_read_timeout_ms: 10_000,
            max_connections_per_address: 256,
            max_auto_continue: 3,
            resume_grace_secs: 30,
            resume_buffer_bytes: 8 * 1024 * 1024,
            drain_secs: 30,
            max_answer_bytes: 4 * 1024 * 1024,
            max_stream_secs: 30 * 60,
            peer_address: None,
            peer_listen: None,
            peer_secret: None,
            peer_secret_env: None,
        }
    }
}

/// The configuration file read when `--config` is not given (if it exists).
pub const DEFAULT_PATH: &str = "flint.toml";

/// Base URL of an OpenAI-compatible server, for a set-up without `flint.toml`.
pub const QUICK_START_BASE_URL: &str = "FLINT_OPENAI_BASE_URL";
/// Its key (optional).
pub const QUICK_START_API_KEY: &str = "FLINT_OPENAI_API_KEY";
/// Its models, comma-separated.
pub const QUICK_START_MODELS: &str = "FLINT_OPENAI_MODELS";
/// The provider name the quick start configures.
pub const QUICK_START_PROVIDER: &str = "openai-compatible";

/// Why the configuration cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not valid `flint.toml`.
    #[error("{path} is not a valid flint.toml: {source}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong, with the line.
        source: Box<toml::de::Error>,
    },
    /// The quick-start variables are incomplete.
    #[error(
        "{QUICK_START_BASE_URL} is set but {QUICK_START_MODELS} is empty; list the model names, comma-separated"
    )]
    QuickStartWithoutModels,
    /// An entry of `server.allowed_origins` is not an origin.
    #[error(
        "server.allowed_origins: {0:?} is not an origin; write it as scheme://host[:port], e.g. http://127.0.0.1:8080"
    )]
    BadOrigin(String),
    /// Two providers share a name, so model ids would be ambiguous.
    #[error("two providers are named {0:?}; give each a distinct name")]
    DuplicateProvider(String),
    /// `[vision] model` does not name a configured model that sees.
    #[error("[vision] model = {model:?} cannot describe images: {why}")]
    VisionModel {
        /// The configured id.
        model: String,
        /// What is wrong, and what to do.
        why: String,
    },
}

impl Config {
    /// Parses `flint.toml` text; `path` is only used in messages.
    pub fn parse(text: &str, path: &Path) -> Result<Self, ConfigError> {
        toml::from_str(text)
            .map_err(|source| ConfigError::Parse { path: path.into(), source: Box::new(source) })
    }

    /// Reads and parses a `flint.toml`.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| ConfigError::Read { path: path.into(), source })?;
        Self::parse(&text, path)
    }

    /// Reads `path` if given, else `./flint.toml` when it exists, else starts from the defaults.
    pub fn discover(path: Option<&Path>) -> Result<Self, ConfigError> {
        match path {
            Some(path) => Self::load(path),
            None if Path::new(DEFAULT_PATH).is_file() => Self::load(Path::new(DEFAULT_PATH)),
            None => Ok(Self::default()),
        }
    }

    /// Adds the quick-start provider when [`QUICK_START_BASE_URL`] is set, the embedded model when
    /// nothing at all is configured (with the `local` feature), and checks provider names.
    pub fn complete(mut self, env: &dyn Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        if let Some(base_url) = env(QUICK_START_BASE_URL).filter(|v| !v.trim().is_empty()) {
            let models: Vec<ModelConfig> = env(QUICK_START_MODELS)
                .unwrap_or_default()
                .split(',')
                .map(str::trim)
                .filter(|m| !m.is_empty())
                .map(|id| ModelConfig {
                    id: id.to_owned(),
                    label: None,
                    context_window: None,
                    tokenizer: None,
                    reasoning: None,
                    vision: None,
                    price: None,
                })
                .collect();
            if models.is_empty() {
                return Err(ConfigError::QuickStartWithoutModels);
            }
            self.providers.push(ProviderConfig::Openai(OpenAiConfig {
                name: QUICK_START_PROVIDER.to_owned(),
                base_url: base_url.trim().to_owned(),
                api_key_env: Some(QUICK_START_API_KEY.to_owned()),
                api_key: None,
                api_key_optional: true,
                models,
                max_tokens_field: MaxTokensField::default(),
                max_concurrent: None,
                allow_user_keys: false,
                stall_timeout_secs: None,
            }));
        }
        #[cfg(feature = "local")]
        if self.providers.is_empty() {
            self.providers.push(ProviderConfig::Local(LocalConfig::default()));
        }
        if let Some(bad) = self.server.allowed_origins.iter().find(|o| normalise_origin(o).is_none()) {
            return Err(ConfigError::BadOrigin(bad.clone()));
        }
        let mut names = std::collections::HashSet::new();
        for provider in &self.providers {
            if !names.insert(provider.name()) {
                return Err(ConfigError::DuplicateProvider(provider.name().to_owned()));
            }
        }
        self.check_vision()?;
        Ok(self)
    }
}

/// `scheme://host[:port]` in lower case without a default port, or `None` for anything else.
pub fn normalise_origin(origin: &str) -> Option<String> {
    let origin = origin.trim().to_ascii_lowercase();
    let (scheme, rest) = origin.split_once("://")?;
    if !matches!(scheme, "http" | "https") || rest.is_empty() || rest.contains(['/', '?', '#', '@', ' ']) {
        return None;
    }
    let default_port = if scheme == "https" { ":443" } else { ":80" };
    let rest = rest.strip_suffix(default_port).unwrap_or(rest);
    Some(format!("{scheme}://{rest}"))
}

#[cfg(test)]
mod tests;
