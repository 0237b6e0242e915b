//! The Responses API's WebSocket mode: `ws(s)://…/responses`, the key on the handshake, one
//! `{"type": "response.create", …}` frame per answer and the same events as over HTTP in reply.
//!
//! Each tab (connection) has a [`Pool`] of idle sockets. A socket carries one response at a time,
//! so variations running at once open several; an idle socket goes to the same tab's next request,
//! preferring the one whose last response the request continues. The server keeps only a
//! socket's last response (`store: false`), so a request that extends exactly what that response
//! covered ([`Thread`]) goes as `previous_response_id` plus the new messages, and anything else
//! goes whole. If a request sent that way fails before any text, for whatever reason (the
//! server has lost the response, `previous_response_not_found`; or it cannot rebuild the earlier
//! turns, as LiteLLM in front of llama-cpp-python cannot), it is sent again whole on the same
//! socket (a new one if that closed), once, unseen by the person. (A person's cancel drops the answer, and with it its socket:
//! nothing is sent again.)
//!
//! Sockets are not reused past [`MAX_SOCKET_AGE`] (the server ends them at 60 minutes), nor after
//! a cancelled answer (the socket is dropped with the stream, which closes it), and a tab's are
//! closed when it goes ([`Pool::close_client`]). A server that refuses the handshake has no
//! WebSocket mode: the provider uses HTTP from then on, as Codex CLI does; but a 401 or 403 is
//! the key being rejected, said as the HTTP path says it and not tried over HTTP (where LiteLLM,
//! for one, answers a wrong key with an unrelated 400).

use std::collections::VecDeque;
use std::sync::Arc;

use futures::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::{self, Message};

use super::responses_events::{Events, Item, Outcome};
use super::responses_request::{Reasoning, Thread, body};
use super::slots::Permit;
use super::stall::{StallWatch, Watched};
use super::{GenRequest, ProviderError, ProviderEvent};

mod pool;

use pool::{Handshake, Socket};
pub(crate) use pool::{MAX_SOCKET_AGE, Pool};

/// Why a request cannot go over a socket.
pub(crate) enum Refused {
    /// Send it over HTTP.
    UseHttp(Box<GenRequest>, Permit),
    /// It failed.
    Fail(ProviderError),
}

/// One answer on a socket.
pub(crate) struct Turn {
    pool: Arc<Pool>,
    /// `None` once it closed or went back to the pool.
    socket: Option<Socket>,
    request: GenRequest,
    reasoning: Reasoning,
    events: Events,
    queue: VecDeque<Item>,
    /// The last frame sent carried the whole conversation.
    sent_full: bool,
    /// A frame arrived for this answer: a socket that closes before one may only have been
    /// closed while idle, and the request can go again on another.
    answered: bool,
    /// A fresh socket was opened for this answer: it is not retried again.
    fresh: bool,
    /// `Started` was handed out: a request sent again does not say it twice.
    started: bool,
    stall: StallWatch,
    /// The provider slot this answer holds until it is dropped.
    _slot: Permit,
}

impl Turn {
    /// Sends `request` on one of its tab's sockets, or a new one.
    pub(crate) async fn start(
        pool: Arc<Pool>,
        request: GenRequest,
        reasoning: Reasoning,
        slot: Permit,
    ) -> Result<Box<Self>, Refused> {
        let reused = pool.checkout(request.client, &request.messages);
        let fresh = reused.is_none();
        let socket = match reused {
            Some(socket) => socket,
            None => match pool.connect().await {
                Ok(socket) => socket,
                Err(Handshake::Unsupported(why)) => {
                    pool.fall_back(&why);
                    return Err(Refused::UseHttp(Box::new(request), slot));
                }
                Err(Handshake::Refused(status)) => {
                    tracing::debug!(provider = %pool.name, status, "handshake refused; this request goes over HTTP");
                    return Err(Refused::UseHttp(Box::new(request), slot));
                }
                Err(Handshake::KeyRejected(refusal)) => {
                    return Err(Refused::Fail(pool.key_rejected(&request.model, refusal)));
                }
            },
        };
        let events = pool.events(&request.model);
        let mut turn = Box::new(Self {
            stall: StallWatch::new(&pool.name, pool.stall_timeout),
            pool,
            socket: Some(socket),
            request,
            reasoning,
            events,
            queue: VecDeque::with_capacity(64),
            sent_full: false,
            answered: false,
            fresh,
            started: false,
            _slot: slot,
        });
        if let Err(err) = turn.send(false).await {
            // Most likely the server closed the socket while it sat idle.
            tracing::debug!(provider = %turn.pool.name, error = %err, "the socket closed before the request went; opening another");
            turn.reopen().await.map_err(Refused::Fail)?;
        }
        Ok(turn)
    }

    /// Sends the request: continuing the socket's thread where it can (and `full` is false),
    /// else whole.
    async fn send(&mut self, full: bool) -> Result<(), tungstenite::Error> {
        let Some(socket) = self.socket.as_mut() else { return Err(tungstenite::Error::AlreadyClosed) };
        let messages = &self.request.messages;
        let thread = socket.thread.take();
        let continued = thread
            .as_ref()
            .filter(|_| !full)
            .and_then(|t| Some((t.response_id.as_str(), t.new_input(messages)?)));
        let (input, previous) = match continued {
            Some((id, new)) => (new, Some(id)),
            None => (&messages[..], None),
        };
        self.sent_full = previous.is_none();
        let mut frame = body(&self.request, self.reasoning, input, previous);
        frame["type"] = "response.create".into();
        tracing::debug!(provider = %self.pool.name, socket = socket.id, continued = previous.is_some(), items = input.len(), "response.create");
        socket.ws.send(Message::text(frame.to_string())).await
    }

    /// Opens a new socket for this answer and sends it whole there.
    async fn reopen(&mut self) -> Result<(), ProviderError> {
        self.socket = None;
        self.fresh = true;
        let pool = self.pool.clone();
        let unavailable = |why: String| {
            ProviderError::Unavailable(format!("could not open a WebSocket to {}: {why}", pool.name))
        };
        match self.pool.connect().await {
            Ok(socket) => self.socket = Some(socket),
            Err(Handshake::Unsupported(why)) => return Err(unavailable(why)),
            Err(Handshake::Refused(status)) => return Err(unavailable(format!("it answered {status}"))),
            Err(Handshake::KeyRejected(refusal)) => {
                return Err(self.pool.key_rejected(&self.request.model, refusal));
            }
        }
        self.send(true).await.map_err(|err| unavailable(err.to_string()))
    }

    /// The next item, and the turn if more may follow.
    pub(crate) async fn next(mut self: Box<Self>) -> Option<(Item, Option<Box<Self>>)> {
        loop {
            if let Some(item) = self.queue.pop_front() {
                if let Ok(ProviderEvent::Started { .. }) = item
                    && std::mem::replace(&mut self.started, true)
                {
                    continue;
                }
                let last = matches!(item, Err(_) | Ok(ProviderEvent::Finished(_)));
                return Some((item, (!last).then_some(self)));
            }
            if self.events.ended() {
                return None;
            }
            let socket = self.socket.as_mut()?;
            let read = match self.stall.watch(socket.ws.next()).await {
                Watched::Ready(read) => read,
                Watched::Quiet(notice) => return Some((Ok(notice), Some(self))),
                Watched::Stalled(err) => {
                    // A socket silent that long is not trusted with another answer.
                    self.socket = None;
                    self.events.fail(&mut self.queue, err);
                    continue;
                }
            };
            if let Some(flowing) = self.stall.bytes(tokio::time::Instant::now()) {
                self.queue.push_back(Ok(flowing));
            }
            match read {
                Some(Ok(Message::Text(text))) => {
                    self.answered = true;
                    match self.events.on_event(text.as_str(), &mut self.queue) {
                        Outcome::Continue => {}
                        Outcome::Ended if self.continuation_failed() => {
                            self.resend_whole("the continued request failed before any text").await;
                        }
                        Outcome::Ended => self.give_back(),
                        Outcome::ResendFull if !self.sent_full => {
                            self.resend_whole("the server lost the previous response").await;
                        }
                        Outcome::ResendFull | Outcome::Reconnect if self.fresh => {
                            let message =
                                format!("{} refused the conversation even when sent whole", self.pool.name);
                            self.events.fail(&mut self.queue, ProviderError::Unavailable(message));
                        }
                        Outcome::ResendFull | Outcome::Reconnect => {
                            if let Err(err) = self.reopen().await {
                                self.events.fail(&mut self.queue, err);
                            }
                        }
                    }
                }
                Some(Err(_) | Ok(Message::Close(_))) | None if !self.answered && !self.fresh => {
                    tracing::debug!(provider = %self.pool.name, "an idle socket was closed; opening another");
                    if let Err(err) = self.reopen().await {
                        self.events.fail(&mut self.queue, err);
                    }
                }
                Some(Err(_) | Ok(Message::Close(_))) | None => {
                    self.socket = None;
                    self.events.end_of_stream(&mut self.queue);
                    if self.continuation_failed() {
                        self.resend_whole("the socket closed before the continued request's text").await;
                    }
                }
                // Pings are answered by the library as it reads.
                Some(Ok(_)) => {}
            }
        }
    }

    /// The last frame continued the socket's thread and the answer failed (its error queued)
    /// before any text: sent whole, it may well be answered.
    fn continuation_failed(&self) -> bool {
        !self.sent_full && self.events.answer().is_empty() && matches!(self.queue.back(), Some(Err(_)))
    }

    /// Sends the request again whole, on this socket while it is open, else on a new one. What
    /// the failed attempt queued is dropped: the person sees one answer.
    async fn resend_whole(&mut self, why: &str) {
        let error = match self.queue.back() {
            Some(Err(err)) => err.to_string(),
            _ => String::new(),
        };
        tracing::debug!(provider = %self.pool.name, why, error, "sending the whole conversation instead of continuing it");
        if let Some(Err(ProviderError::Protocol(_))) = self.queue.back() {
            // A server that broke the protocol on a socket does not get another request on it.
            self.socket = None;
        }
        self.queue.clear();
        self.events = self.pool.events(&self.request.model);
        if self.socket.is_some() {
            match self.send(true).await {
                Ok(()) => return,
                Err(err) => {
                    tracing::debug!(provider = %self.pool.name, error = %err, "the socket closed; opening another")
                }
            }
        }
        if let Err(err) = self.reopen().await {
            self.events.fail(&mut self.queue, err);
        }
    }

    /// The response ended: the socket goes back to the tab's pool, remembering the thread if the
    /// answer finished, unless the server broke the protocol on it.
    fn give_back(&mut self) {
        let Some(mut socket) = self.socket.take() else { return };
        match self.queue.back() {
            Some(Err(ProviderError::Protocol(_))) => return,
            Some(Ok(ProviderEvent::Finished(_))) => {
                socket.thread = self
                    .events
                    .response_id()
                    .map(|id| Thread::after(id, &self.request.messages, self.events.answer()));
            }
            _ => socket.thread = None,
        }
        self.pool.give_back(self.request.client, socket);
    }
}
