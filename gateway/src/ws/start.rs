//! `Start`: the checks a stream passes before its task runs (its id, the tab's and the person's
//! limits, the model, the sampling), and the task itself.

use std::fmt::Display;

use axum::extract::ws::Message;
use flint_protocol::{ErrorCode, GenParams, StartRequest};
use futures::Sink;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::connection::{Closed, Connection, refused};
use super::frames;
use super::session::Running;
use super::stream::{self, StreamJob};
use crate::images;
use crate::providers::GenRequest;

impl<S> Connection<S>
where
    S: Sink<Message> + Unpin,
    S::Error: Display,
{
    /// Starts a stream the page asked for, or says why not: a duplicate id, the tab's stream
    /// limit, an unknown model, sampling out of range, images the model does not see or that fail
    /// their checks, the person's limits.
    pub(super) async fn start(&mut self, start: StartRequest, received_at: Instant) -> Result<(), Closed> {
        let id = start.stream;
        if !self.still_signed_in(id).await? {
            return Ok(());
        }
        let limits = self.state.limits();
        if self.session.running.contains_key(&id) {
            let message = format!("stream {id} is already running on this connection; use a new id");
            return self.send(frames::error(None, ErrorCode::DuplicateStream, message)).await;
        }
        if self.session.running.len() >= limits.max_streams_per_connection {
            let message = format!(
                "this tab already runs {} streams, the most this gateway allows at once \
                 (server.max_streams_per_connection); cancel one or wait for one to finish",
                self.session.running.len()
            );
            return self.send(frames::error(Some(id), ErrorCode::TooManyStreams, message)).await;
        }
        let Some((provider, model)) = self.state.find_model(&start.model) else {
            let message = format!(
                "no configured provider offers the model {:?}; /api/models lists the ones that are",
                start.model
            );
            return self.send(frames::error(Some(id), ErrorCode::UnknownModel, message)).await;
        };
        if let Err(message) = check_sampling(&start.params) {
            return self.send(frames::error(Some(id), ErrorCode::InvalidParams, message)).await;
        }
        // Before any reservation or upstream call: a model that does not see is never sent an
        // image, and every image is checked again here (the page is not a trust boundary).
        let vision = provider.models().iter().any(|m| m.model == model && m.vision);
        let target = images::Target { id: &start.model, vision, describer: self.state.vision_model() };
        let images = match images::check(&start.messages, target) {
            Ok(images) => images,
            Err(refused) => return self.send(frames::error(Some(id), refused.code, refused.message)).await,
        };
        let mut params = start.params;
        let max_tokens = capped_max_tokens(params.max_tokens, limits.max_tokens);
        params.auto_continue = params.auto_continue.map(|asked| asked.min(limits.max_auto_continue));
        // Each part of an auto-continued answer may write `max_tokens`.
        let parts = 1 + u32::from(params.auto_continue.unwrap_or(0));
        let key = self.session.keys.get(provider.name()).cloned();
        let people = self.state.people();
        let permitted = if key.is_some() {
            people.start_stream_own_key(&self.session.person)
        } else {
            people.start_stream(&self.session.person, max_tokens, parts, images.tokens).await
        };
        let permit = match permitted {
            Ok(permit) => permit,
            Err(refusal) => return self.send(refused(Some(id), refusal)).await,
        };
        // A start that got less than it asked of the day's quota asks the upstream for no more.
        params.max_tokens = Some(permit.limit().map_or(max_tokens, |limit| max_tokens.min(limit.max(1))));
        match images.count {
            0 => tracing::info!(conn = self.session.conn, stream = id, model = %start.model, "stream start"),
            _ => {
                tracing::info!(conn = self.session.conn, stream = id, model = %start.model, images = %images.summary(), "stream start")
            }
        }
        let cancel = CancellationToken::new();
        let job = StreamJob {
            conn: self.session.conn,
            id,
            provider,
            request: GenRequest {
                client: self.session.conn,
                person: self.session.person_key,
                key,
                model,
                messages: start.messages,
                params,
            },
            received_at,
            cancel: cancel.clone(),
            out: self.session.out.clone(),
            permit,
            metrics: std::sync::Arc::clone(self.state.metrics()),
            caps: crate::providers::AnswerCaps::new(limits),
        };
        self.session.replay.open(id);
        let handle = self.session.tasks.spawn(stream::run(job));
        self.session.running.insert(id, Running { cancel, task: handle.id() });
        Ok(())
    }
}

/// Refuses sampling values no provider accepts, before any upstream sees them: some answer with
/// an error that names neither the parameter nor the range, others silently clamp or ignore them.
/// `top_p` 0 would keep no token at all. A value too large for an `f32` arrives as infinity.
fn check_sampling(params: &GenParams) -> Result<(), String> {
    if let Some(t) = params.temperature.filter(|t| !(t.is_finite() && (0.0..=2.0).contains(t))) {
        return Err(format!("temperature {t} is out of range: use a number from 0 to 2"));
    }
    if let Some(p) = params.top_p.filter(|p| !(p.is_finite() && *p > 0.0 && *p <= 1.0)) {
        return Err(format!("top_p {p} is out of range: use a number above 0 and at most 1"));
    }
    Ok(())
}

/// The length limit sent upstream: always set, so no provider reserves its own (often huge) default
/// per stream, and at most `cap` (`server.max_tokens`). At least 1, because upstreams reject 0.
fn capped_max_tokens(asked: Option<u32>, cap: u32) -> u32 {
    let cap = cap.max(1);
    asked.unwrap_or(cap).clamp(1, cap)
}
