//! What `local_abuse.rs` attacks with: the embedded model on a short leash, a victim tab whose
//! stream is watched for stalls, and prompts sized to be cheap or slow to tokenize.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use flint_gateway::config::LocalConfig;
use flint_gateway::local::model_file;
use flint_gateway::providers::local::LocalProvider;
use flint_gateway::providers::{ClientId, EventStream, GenRequest, Provider, ProviderError, ProviderEvent};
use flint_protocol::{ChatMessage, GenParams, Role};
use futures::StreamExt;
use tokio::task::JoinHandle;

pub const VICTIM: ClientId = 1;
pub const ATTACKER: ClientId = 2;

/// One test at a time: they measure delays, which another engine decoding alongside would stretch.
pub static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

pub fn provider(config: LocalConfig) -> LocalProvider {
    let path = model_file::default_model_path();
    assert!(
        path.is_file(),
        "the embedded model is not at {}; run `cargo xtask test` (it fetches the model) or set FLINT_MODEL_PATH",
        path.display()
    );
    let provider = LocalProvider::new(&LocalConfig { model_path: Some(path), ..config });
    assert_eq!(provider.problem(), None, "the model should load");
    provider
}

pub fn ask(client: ClientId, prompt: &str, max_tokens: u32) -> GenRequest {
    GenRequest {
        client,
        person: client,
        key: None,
        model: LocalConfig::default().model,
        messages: vec![ChatMessage::new(Role::User, prompt)],
        params: GenParams { max_tokens: Some(max_tokens), temperature: Some(0.0), ..GenParams::default() },
    }
}

/// Ordinary text of about `bytes` bytes: about five bytes a token, so far more tokens than any
/// context holds, yet every byte must be read to count them.
pub fn wordy(bytes: usize) -> String {
    "describe this page in detail ".repeat(bytes / 29 + 1)
}

/// `bytes` of `#`: 80 of them are one token, so this fits the context while being large in bytes.
pub fn dense(bytes: usize) -> String {
    "#".repeat(bytes)
}

/// A stream watched from its own task: when each text delta came, and how it ended.
pub struct Watched {
    deltas: Arc<Mutex<Vec<Instant>>>,
    pub task: JoinHandle<Option<Result<(), ProviderError>>>,
}

impl Watched {
    pub fn start(mut stream: EventStream) -> Self {
        let deltas = Arc::new(Mutex::new(Vec::new()));
        let seen = deltas.clone();
        let task = tokio::spawn(async move {
            while let Some(event) = stream.next().await {
                match event {
                    Ok(ProviderEvent::Delta(_)) => seen.lock().expect("not poisoned").push(Instant::now()),
                    Ok(ProviderEvent::Finished(_)) => return Some(Ok(())),
                    Ok(_) => {}
                    Err(e) => return Some(Err(e)),
                }
            }
            None
        });
        Self { deltas, task }
    }

    pub fn count(&self) -> usize {
        self.deltas.lock().expect("not poisoned").len()
    }

    /// Waits until the stream has sent `n` deltas; panics after `limit`.
    pub async fn wait_for(&self, n: usize, limit: Duration) -> Instant {
        let start = Instant::now();
        loop {
            if let Some(at) = self.deltas.lock().expect("not poisoned").get(n - 1) {
                return *at;
            }
            assert!(!self.task.is_finished(), "the stream ended after {} deltas", self.count());
            assert!(start.elapsed() < limit, "{} deltas after {limit:?}, waiting for {n}", self.count());
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }

    /// The median wait between deltas so far: the stream's own pace on this machine, now.
    pub fn median_gap(&self) -> Duration {
        let deltas = self.deltas.lock().expect("not poisoned");
        let mut gaps: Vec<_> = deltas.windows(2).map(|w| w[1] - w[0]).collect();
        gaps.sort();
        gaps.get(gaps.len() / 2).copied().unwrap_or_default()
    }

    /// Deltas that came after `since`.
    pub fn count_since(&self, since: Instant) -> usize {
        self.deltas.lock().expect("not poisoned").iter().filter(|&&at| at > since).count()
    }

    /// The longest wait for a delta from `since` until now (or until the stream ended).
    pub fn longest_gap_since(&self, since: Instant) -> Duration {
        let deltas = self.deltas.lock().expect("not poisoned");
        let mut last = since;
        let mut longest = Duration::ZERO;
        for &at in deltas.iter().filter(|&&at| at > since) {
            longest = longest.max(at - last);
            last = at;
        }
        if !self.task.is_finished() {
            longest = longest.max(last.elapsed());
        }
        longest
    }
}

/// The victim: another tab's long answer, already streaming.
pub async fn victim(provider: &LocalProvider) -> Watched {
    let watched = Watched::start(provider.stream(ask(VICTIM, "a long landing page for a bakery", 2048)));
    watched.wait_for(3, Duration::from_secs(30)).await;
    watched
}

/// The first event of `stream` if it comes within `limit`: a refusal comes at once, a request that
/// waits for a sequence sends nothing.
pub async fn at_once(
    stream: &mut EventStream,
    limit: Duration,
) -> Option<Result<ProviderEvent, ProviderError>> {
    tokio::time::timeout(limit, stream.next()).await.ok().flatten()
}

/// Waits until `counter` has not moved for `quiet`.
pub async fn settle(counter: impl Fn() -> u64, quiet: Duration) -> u64 {
    let mut last = counter();
    let mut since = Instant::now();
    loop {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let now = counter();
        if now != last {
            (last, since) = (now, Instant::now());
        } else if since.elapsed() >= quiet {
            return now;
        }
    }
}

/// Asks for `prompt` and returns the refusal's message, checking that it came as `PromptTooLarge`
/// and that no prompt was tokenized meanwhile.
pub async fn refused_untokenized(provider: &LocalProvider, what: &str, prompt: &str) -> String {
    let stats = provider.engine().expect("engine").stats().clone();
    let before = stats.prompts_tokenized.load(Ordering::Relaxed);
    let start = Instant::now();
    let end = provider.stream(ask(ATTACKER, prompt, 8)).next().await;
    eprintln!("{what} refused after {:?}", start.elapsed());
    let tokenized = stats.prompts_tokenized.load(Ordering::Relaxed) - before;
    assert_eq!(tokenized, 0, "the prompt was tokenized before it was refused");
    match end {
        Some(Err(ProviderError::PromptTooLarge(message))) => message,
        other => panic!("expected PromptTooLarge, got {other:?}"),
    }
}
