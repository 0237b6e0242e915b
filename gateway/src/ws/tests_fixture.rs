//! The relay's tests talk to one connection through channels: a fake provider answering by model
//! name, and a client that sends frames and reads them back.

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::ws::Message;
use flint_protocol::{ErrorCode, FinishReason, ModelInfo, ServerMessage};
use futures::channel::mpsc::{UnboundedReceiver, UnboundedSender, unbounded};
use futures::{StreamExt, stream};
use tokio::task::JoinHandle;

use super::super::serve_socket;
use crate::AppState;
use crate::config::{Config, ServerConfig};
use crate::person::Person;
use crate::providers::{EventStream, GenRequest, Provider, ProviderError, ProviderEvent};

/// Answers by model name; counts dropped streams so tests can see cancels reach the provider, and
/// keeps the requests so tests can see what the gateway sent on.
#[derive(Default)]
pub(super) struct Fake {
    pub(super) dropped: Arc<AtomicUsize>,
    pub(super) requests: Arc<Mutex<Vec<GenRequest>>>,
}

/// Counts a drop of the stream that owns it.
pub(super) struct DropCounter(Arc<AtomicUsize>);

impl Drop for DropCounter {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

impl Provider for Fake {
    fn name(&self) -> &str {
        "fake"
    }

    fn models(&self) -> Vec<ModelInfo> {
        ["echo", "burst", "paced", "hang", "fail", "leaky", "numbered"]
            .iter()
            .map(|m| ModelInfo {
                id: format!("fake/{m}"),
                provider: "fake".into(),
                model: (*m).into(),
                label: (*m).into(),
                context_window: 1000,
                context_source: Default::default(),
                tokenizer: Default::default(),
                reasoning: false,
                vision: false,
                price: None,
                user_key: false,
                available: true,
                problem: None,
            })
            .collect()
    }

    fn stream(&self, request: GenRequest) -> EventStream {
        self.requests.lock().expect("not poisoned").push(request.clone());
        let guard = DropCounter(self.dropped.clone());
        let started = Ok(ProviderEvent::Started { model: format!("{}-served", request.model) });
        let delta = |t: &str| Ok(ProviderEvent::Delta(t.to_owned()));
        let finished = Ok(ProviderEvent::Finished(FinishReason::Stop));
        let events: EventStream = match request.model.as_str() {
            "echo" => Box::pin(stream::iter(vec![started, delta("Hel"), delta("lo"), finished])),
            // An upstream that names something other than a model (here, a key) as its model.
            "leaky" => Box::pin(stream::iter(vec![
                Ok(ProviderEvent::Started { model: "sk-upstream-echoed-key".into() }),
                delta("hi"),
                finished,
            ])),
            "burst" => {
                let tokens: Vec<_> = (0..100).map(|i| delta(&format!("t{i} "))).collect();
                Box::pin(stream::iter(std::iter::once(started).chain(tokens).chain([finished])))
            }
            // Tokens on the upstream's own clock, as a server sends them whether read or not.
            "paced" => on_a_clock(started, 10, Duration::from_millis(5), finished),
            // Twenty tokens far enough apart to each go out as its own delta.
            "numbered" => {
                let tokens: Vec<_> = (0..20).map(|i| delta(&format!("t{i} "))).collect();
                let paced = stream::iter(tokens).then(|event| async move {
                    tokio::time::sleep(Duration::from_millis(40)).await;
                    event
                });
                Box::pin(stream::iter([started]).chain(paced).chain(stream::iter([finished])))
            }
            "fail" => Box::pin(stream::iter(vec![
                started,
                delta("partial"),
                Err(ProviderError::Interrupted("fake broke".into())),
            ])),
            _ => Box::pin(stream::iter([started]).chain(stream::pending())),
        };
        Box::pin(events.map(move |event| {
            let _owned_by_the_stream = &guard;
            event
        }))
    }
}

type Event = Result<ProviderEvent, ProviderError>;

/// `started`, then `count` one-byte tokens due `gap` apart from now, then `finished`.
fn on_a_clock(started: Event, count: u32, gap: Duration, finished: Event) -> EventStream {
    let start = tokio::time::Instant::now();
    let tokens = stream::iter(1..=count).then(move |i| async move {
        tokio::time::sleep_until(start + gap * i).await;
        Ok(ProviderEvent::Delta("x".into()))
    });
    Box::pin(stream::iter([started]).chain(tokens).chain(stream::iter([finished])))
}

pub(super) struct Client {
    pub(super) to_gateway: UnboundedSender<Result<Message, Infallible>>,
    pub(super) from_gateway: UnboundedReceiver<Message>,
    pub(super) connection: JoinHandle<()>,
    pub(super) fake: Arc<Fake>,
}

pub(super) fn connect_with(server: ServerConfig, protocol: Option<&'static str>) -> Client {
    connect_as(1, server, protocol)
}

pub(super) fn connect_as(conn: u64, server: ServerConfig, protocol: Option<&'static str>) -> Client {
    let fake = Arc::new(Fake::default());
    let config = Config { server, ..Config::default() };
    let state = AppState::new(&config, vec![fake.clone() as Arc<dyn Provider>]);
    let (to_gateway, incoming) = unbounded();
    let (sink, from_gateway) = unbounded();
    let connection = tokio::spawn(async move {
        serve_socket(sink, incoming, state, conn, protocol, Person::Anonymous([127, 0, 0, 1].into()), None)
            .await
    });
    Client { to_gateway, from_gateway, connection, fake }
}

pub(super) fn connect() -> Client {
    connect_with(ServerConfig::default(), None)
}

impl Client {
    pub(super) fn send(&self, json: &str) {
        self.to_gateway.unbounded_send(Ok(Message::Text(json.into()))).expect("connection is open");
    }

    pub(super) fn start(&self, stream: u32, model: &str) {
        self.send(&format!(r#"{{"type":"start","stream":{stream},"model":"fake/{model}","messages":[]}}"#));
    }

    pub(super) async fn next(&mut self) -> ServerMessage {
        loop {
            let message = tokio::time::timeout(Duration::from_secs(5), self.from_gateway.next())
                .await
                .expect("a frame within 5 s")
                .expect("connection still open");
            match message {
                Message::Text(text) => return serde_json::from_str(&text).expect("gateway frames are valid"),
                Message::Ping(_) | Message::Pong(_) => {}
                other => panic!("unexpected frame {other:?}"),
            }
        }
    }

    /// Frames up to and including the first `Done` or `Error` of `stream`.
    pub(super) async fn until_end(&mut self, stream: u32) -> Vec<ServerMessage> {
        let mut frames = Vec::new();
        loop {
            let frame = self.next().await;
            let end = matches!(&frame, ServerMessage::Done { stream: s, .. } | ServerMessage::Error { stream: Some(s), .. } if *s == stream);
            frames.push(frame);
            if end {
                return frames;
            }
        }
    }

    pub(super) async fn hello(&mut self) {
        assert!(
            matches!(self.next().await, ServerMessage::Hello { protocol: 1, .. }),
            "Hello must come first"
        );
    }
}

pub(super) fn text_of(frames: &[ServerMessage]) -> (String, Vec<u32>) {
    let mut text = String::new();
    let mut seqs = Vec::new();
    for frame in frames {
        if let ServerMessage::Delta { text: t, seq, .. } = frame {
            text.push_str(t);
            seqs.push(*seq);
        }
    }
    (text, seqs)
}

pub(super) fn error_code(frame: &ServerMessage) -> Option<(Option<u32>, ErrorCode)> {
    match frame {
        ServerMessage::Error { stream, code, .. } => Some((*stream, *code)),
        _ => None,
    }
}
