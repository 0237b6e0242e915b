//! Model servers found on this machine without configuration: at start, and when the picker's
//! "Rescan" asks (`POST /api/discovery/rescan`), the gateway looks on 127.0.0.1 for Ollama,
//! llama.cpp's server, LM Studio, vLLM, SGLang and LiteLLM at their usual ports, and lists what
//! answers as `openai`-kind providers, marked as found (`ModelList.found`).
//!
//! Trust: the probes go to loopback only, in parallel, with short timeouts, bounded answers, no
//! redirects and never a key ([`probe`]); a server that wants one is listed as such, unused. A
//! configured provider at the same address wins (its port is not probed). Off by default when the
//! gateway listens off loopback (the people reaching it would use what runs on the operator's
//! machine), and with `[discovery] enabled = false`; the rescan route then answers 404. It takes
//! only the gateway's own page as its origin, and one rescan every [`RESCAN_INTERVAL`].

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::header::{HOST, ORIGIN, RETRY_AFTER};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use flint_protocol::FoundServer;

use crate::AppState;
use crate::config::{Config, ModelConfig, OpenAiConfig, ProviderConfig};
use crate::providers::{Provider, openai};

mod in_use;
pub mod probe;
pub mod shapes;

use self::in_use::{Counted, InUse};
use self::probe::Found;
use self::shapes::ServerKind;

/// Shortest time between two rescans: each probes six ports, and a page (or a script) clicking
/// in a loop should not make the gateway knock on them continuously.
pub const RESCAN_INTERVAL: Duration = Duration::from_secs(2);

/// What the last look found.
#[derive(Default)]
pub struct FoundProviders {
    /// A provider per server that serves models without a key.
    pub providers: Vec<Arc<dyn Provider>>,
    /// Every server that answered, for `/api/models`.
    pub servers: Vec<FoundServer>,
}

/// What a port answered at a look, and the provider built for it (none when it has a problem).
type Built = (Found, Option<Arc<dyn Provider>>);

/// Looks for local model servers and keeps what it found.
pub struct Discovery {
    active: bool,
    /// Kinds and ports to look at: configured addresses and the gateway's own port left out.
    targets: Vec<(ServerKind, u16)>,
    /// Configured provider names, which found ones must not take.
    taken: HashSet<String>,
    probes: reqwest::Client,
    relay: crate::providers::upstream_http::UpstreamClient,
    found: RwLock<Arc<FoundProviders>>,
    /// What each port answered at the last look and the provider built for it, kept for a port
    /// that is busy at the next look, and reused while a port answers the same.
    answers: Mutex<Vec<Built>>,
    /// Open streams per target port ([`in_use`]).
    in_use: HashMap<u16, InUse>,
    /// One look at a time; a caller that finds one under way takes its result (see [`Self::scan`]).
    looking: tokio::sync::Mutex<()>,
    last_rescan: Mutex<Option<Instant>>,
}

impl Discovery {
    /// Discovery as `config` sets it; nothing is probed until [`Discovery::scan`].
    pub fn new(config: &Config) -> Self {
        let listen = config.server.listen;
        let configured: HashSet<u16> = config.providers.iter().filter_map(loopback_port).collect();
        let targets: Vec<(ServerKind, u16)> = ServerKind::ALL
            .iter()
            .map(|kind| (*kind, kind.port(&config.discovery.ports)))
            .filter(|(_, port)| *port != 0 && !configured.contains(port))
            .filter(|(_, port)| {
                !(listen.ip().is_loopback() || listen.ip().is_unspecified()) || *port != listen.port()
            })
            .collect();
        Self {
            active: config.discovery.active(listen),
            in_use: targets.iter().map(|(_, port)| (*port, InUse::default())).collect(),
            targets,
            taken: config.providers.iter().map(|p| p.name().to_owned()).collect(),
            probes: probe::client(),
            relay: openai::http_client(),
            found: RwLock::default(),
            answers: Mutex::default(),
            looking: tokio::sync::Mutex::new(()),
            last_rescan: Mutex::new(None),
        }
    }

    /// Whether this gateway looks at all.
    pub fn active(&self) -> bool {
        self.active
    }

    /// What the last look found.
    pub fn found(&self) -> Arc<FoundProviders> {
        self.found.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Looks now, every port at once, and keeps what answers; nothing when inactive.
    ///
    /// Looks are never doubled: a caller that finds one under way waits for it and takes what it
    /// found, since every extra request can cut a running answer short ([`in_use`]). For the same
    /// reason a port with an answer streaming is not probed; its last find is kept.
    pub async fn scan(&self) -> Arc<FoundProviders> {
        if !self.active {
            return self.found();
        }
        let _one_at_a_time = match self.looking.try_lock() {
            Ok(guard) => guard,
            Err(_) => {
                drop(self.looking.lock().await);
                return self.found();
            }
        };
        let last = self.answers.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let kept: Vec<Found> =
            last.iter().map(|(answer, _)| answer).filter(|answer| self.busy(answer.port)).cloned().collect();
        let looks = self
            .targets
            .iter()
            .filter(|(_, port)| !kept.iter().any(|answer| answer.port == *port))
            .map(|(kind, port)| probe::probe(&self.probes, *kind, *port));
        let mut answers: Vec<Found> = futures::future::join_all(looks).await.into_iter().flatten().collect();
        answers.extend(kept);
        // Targets' order, whatever was kept: names (`ollama`, `ollama-2`) stay put across looks.
        answers.sort_by_key(|answer| self.targets.iter().position(|(_, port)| *port == answer.port));
        let (found, built) = self.build(answers, &last);
        let found = Arc::new(found);
        *self.answers.lock().unwrap_or_else(|e| e.into_inner()) = built;
        *self.found.write().unwrap_or_else(|e| e.into_inner()) = found.clone();
        found
    }

    fn busy(&self, port: u16) -> bool {
        self.in_use.get(&port).is_some_and(InUse::busy)
    }

    /// Looks in the background (at start: the gateway serves at once, the list fills in).
    pub fn scan_in_background(self: &Arc<Self>) {
        if !self.active {
            return;
        }
        let this = self.clone();
        tokio::spawn(async move {
            let found = this.scan().await;
            for server in &found.servers {
                match &server.problem {
                    None => {
                        tracing::info!(server = %server.kind, address = %server.address, "found a model server")
                    }
                    Some(problem) => {
                        tracing::warn!(server = %server.kind, address = %server.address, "{problem}")
                    }
                }
            }
        });
    }

    /// Claims the right to rescan now, or says how long to wait.
    pub fn claim_rescan(&self, now: Instant) -> Result<(), Duration> {
        let mut last = self.last_rescan.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(wait) = last.and_then(|t| RESCAN_INTERVAL.checked_sub(now.saturating_duration_since(t)))
            && !wait.is_zero()
        {
            return Err(wait);
        }
        *last = Some(now);
        Ok(())
    }

    /// The providers and list entries for `answers`; a port that answers as it did at the `last`
    /// look keeps its provider (no second look at its windows, no cut answer: [`in_use`]).
    fn build(&self, answers: Vec<Found>, last: &[Built]) -> (FoundProviders, Vec<Built>) {
        let mut names = self.taken.clone();
        let mut found = FoundProviders::default();
        let mut built = Vec::with_capacity(answers.len());
        for answer in answers {
            let name = free_name(answer.kind.slug(), &mut names);
            let address = format!("127.0.0.1:{}", answer.port);
            let label = answer.kind.label();
            let problem = if answer.needs_key {
                Some(format!(
                    "{label} at {address} wants a key, and Flint never sends one to a server it found. Add it to \
                     flint.toml as [[providers]] kind = \"openai\", base_url = \"http://{address}/v1\", \
                     api_key_env = \"YOUR_KEY_VARIABLE\", with its models, and restart the gateway."
                ))
            } else if answer.models.is_empty() {
                Some(format!(
                    "{label} at {address} serves no model yet; load or pull one, then press Rescan."
                ))
            } else {
                None
            };
            let best = shapes::best(&answer.models).map(|m| format!("{name}/{}", m.id));
            let same = last.iter().find(|(before, provider)| {
                *before == answer && provider.as_ref().is_some_and(|p| p.name() == name)
            });
            let provider = match (&problem, same) {
                (Some(_), _) => None,
                (None, Some((_, provider))) => provider.clone(),
                (None, None) => {
                    let config = provider_config(&name, answer.port, label, &answer.models);
                    Some(Arc::new(Counted {
                        inner: openai::OpenAiProvider::new(&config, self.relay.clone(), &|_| None),
                        in_use: self.in_use.get(&answer.port).cloned().unwrap_or_default(),
                    }) as Arc<dyn Provider>)
                }
            };
            found.providers.extend(provider.clone());
            found.servers.push(FoundServer {
                provider: name,
                kind: label.to_owned(),
                address,
                best,
                problem,
            });
            built.push((answer, provider));
        }
        (found, built)
    }
}

/// `slug`, or `slug-2`, `slug-3`… when a configured provider (or another find) has the name.
fn free_name(slug: &str, names: &mut HashSet<String>) -> String {
    let name = std::iter::once(slug.to_owned())
        .chain((2..).map(|n| format!("{slug}-{n}")))
        .find(|n| !names.contains(n));
    let name = name.unwrap_or_else(|| slug.to_owned());
    names.insert(name.clone());
    name
}

/// A found server as an `openai`-kind provider: no key, its windows and slots learnt the way a
/// configured server's are (`providers::openai_context`).
fn provider_config(name: &str, port: u16, label: &str, models: &[shapes::FoundModel]) -> OpenAiConfig {
    OpenAiConfig {
        name: name.to_owned(),
        base_url: format!("http://127.0.0.1:{port}/v1"),
        api_key_env: None,
        api_key: None,
        api_key_optional: false,
        models: models
            .iter()
            .map(|m| ModelConfig {
                id: m.id.clone(),
                label: Some(format!("{} · {label}, found", m.id)),
                context_window: m.window,
                tokenizer: None,
                reasoning: None,
                vision: None,
                price: None,
            })
            .collect(),
        max_tokens_field: Default::default(),
        max_concurrent: None,
        allow_user_keys: false,
        // A local server's default: the same two minutes of total silence as a configured one.
        stall_timeout_secs: None,
    }
}

/// The port of a configured provider that lives on this machine (`localhost`, `127.x`, `::1`).
fn loopback_port(provider: &ProviderConfig) -> Option<u16> {
    let base_url = match provider {
        ProviderConfig::Openai(c) => &c.base_url,
        ProviderConfig::Responses(c) => &c.base_url,
        ProviderConfig::Local(_) => return None,
    };
    let url = reqwest::Url::parse(base_url).ok()?;
    let host = url.host_str()?.trim_start_matches('[').trim_end_matches(']');
    let local = host.eq_ignore_ascii_case("localhost")
        || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback() || ip.is_unspecified());
    local.then(|| url.port_or_known_default()).flatten()
}

/// `POST /api/discovery/rescan`: looks again and answers with the new `/api/models` body.
pub async fn rescan(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let discovery = state.discovery();
    if !discovery.active() {
        let why = "This gateway does not look for model servers on its machine ([discovery] in flint.toml).";
        return (StatusCode::NOT_FOUND, why).into_response();
    }
    if !from_own_page(&headers) {
        let why = "Rescan is only taken from this gateway's own page.";
        return (StatusCode::FORBIDDEN, why).into_response();
    }
    if let Err(wait) = discovery.claim_rescan(Instant::now()) {
        let seconds = wait.as_secs() + 1;
        let why = format!("Rescanned a moment ago; try again in {seconds} s.");
        return (StatusCode::TOO_MANY_REQUESTS, [(RETRY_AFTER, seconds.to_string())], why).into_response();
    }
    discovery.scan().await;
    axum::Json(state.model_list()).into_response()
}

/// Whether the request carries an `Origin` naming the very host it was sent to: the gateway's own
/// page. The access guard already refused foreign origins; this also turns away the origins the
/// operator allows for other purposes, and hand-made requests without one.
fn from_own_page(headers: &HeaderMap) -> bool {
    let header = |name| headers.get(name).and_then(|v| v.to_str().ok());
    let (Some(origin), Some(host)) = (header(ORIGIN), header(HOST)) else { return false };
    origin
        .split_once("://")
        .is_some_and(|(scheme, rest)| matches!(scheme, "http" | "https") && rest.eq_ignore_ascii_case(host))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn found_names_never_take_a_configured_one() {
        let mut names: HashSet<String> = ["ollama".to_owned()].into();
        assert_eq!(free_name("ollama", &mut names), "ollama-2");
        assert_eq!(free_name("ollama", &mut names), "ollama-3");
        assert_eq!(free_name("vllm", &mut names), "vllm");
    }

    #[test]
    fn configured_local_addresses_are_recognised() {
        let openai = |url: &str| {
            ProviderConfig::Openai(OpenAiConfig { base_url: url.into(), ..provider_config("x", 1, "X", &[]) })
        };
        assert_eq!(loopback_port(&openai("http://localhost:11434/v1")), Some(11434));
        assert_eq!(loopback_port(&openai("http://127.0.0.1:8080/v1")), Some(8080));
        assert_eq!(loopback_port(&openai("http://[::1]:1234/v1")), Some(1234));
        assert_eq!(loopback_port(&openai("https://api.cerebras.ai/v1")), None);
        assert_eq!(loopback_port(&openai("not a url")), None);
    }

    #[test]
    fn only_the_own_origin_may_rescan() {
        let headers = |origin: Option<&str>, host: &str| {
            let mut h = HeaderMap::new();
            h.insert(HOST, host.parse().expect("host"));
            if let Some(o) = origin {
                h.insert(ORIGIN, o.parse().expect("origin"));
            }
            h
        };
        assert!(from_own_page(&headers(Some("http://127.0.0.1:8787"), "127.0.0.1:8787")));
        assert!(!from_own_page(&headers(Some("http://127.0.0.1:8080"), "127.0.0.1:8787")));
        assert!(!from_own_page(&headers(Some("null"), "127.0.0.1:8787")));
        assert!(!from_own_page(&headers(None, "127.0.0.1:8787")));
    }

    #[test]
    fn rescans_are_spaced() {
        let discovery = Discovery::new(&Config::default());
        let now = Instant::now();
        assert_eq!(discovery.claim_rescan(now), Ok(()));
        assert!(discovery.claim_rescan(now + Duration::from_millis(500)).is_err());
        assert_eq!(discovery.claim_rescan(now + RESCAN_INTERVAL), Ok(()));
    }
}
