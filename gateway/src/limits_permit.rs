//! A running generation's place among the person's streams and its share of the day's quota:
//! what its start reserved, what it generated, and the settlement of the two however it ends.

use std::sync::Arc;

use tokio_util::task::task_tracker::TaskTrackerToken;

use super::{Limits, QuotaStatus};
use crate::person::Person;

/// A running generation, counted until dropped; it charges the day's quota what it generated
/// however it ends. [`StreamPermit::charge`] settles it with the count its stream reports; a
/// permit dropped unsettled (its task aborted with its tab) settles with the tokens it saw, in a
/// task of its own that the process waits for.
#[derive(Debug)]
pub struct StreamPermit {
    pub(super) limits: Arc<Limits>,
    pub(super) person: Person,
    /// The day its tokens count for: the day it started, even if it ends after midnight.
    pub(super) day: i64,
    /// Tokens the store holds for it since its start, given back less what it generated.
    pub(super) reserved: u64,
    /// The most it may generate: what its start could reserve. `None`: no daily quota.
    pub(super) limit: Option<u32>,
    /// The text event past which it is cut: `limit` and one more per request for text a
    /// provider held back until the request's end.
    pub(super) cut: Option<u32>,
    /// Text events so far (see [`StreamPermit::generated`]).
    pub(super) generated: u32,
    /// Completion tokens the provider reported, which count rather than the text events.
    pub(super) reported: Option<u32>,
    /// Prompt tokens its images are estimated to cost (OpenAI's tile rule,
    /// [`flint_protocol::image::estimated_tokens`]), charged on top of what it generates: the
    /// quota counts generated tokens, and images are the one prompt cost large enough to matter
    /// (a 2048 px screenshot is about 1,100 tokens, re-sent on every turn).
    pub(super) images: u32,
    /// Charged, or never to be (a generation on the person's own key).
    pub(super) settled: bool,
    /// The person's tokens today, as the store answered the charge.
    pub(super) used: Option<u64>,
    /// Holds the process open until this permit is dropped ([`Limits::settled`]).
    pub(super) _held: TaskTrackerToken,
}

impl StreamPermit {
    /// The most tokens the stream may generate: what its start reserved of the person's quota.
    /// The upstream is asked for no more, and the stream is cut there if it sends more anyway.
    /// `None`: no daily quota applies.
    pub fn limit(&self) -> Option<u32> {
        self.limit
    }

    /// One more text event arrived: counted, and `true`, unless the stream already generated its
    /// [`limit`](Self::limit) (and the event a provider may add at the end of each request: then
    /// it must end, as cut at its length limit). The only work the quota adds per event: a
    /// comparison and a counter.
    #[inline]
    pub fn generated(&mut self) -> bool {
        if self.cut.is_some_and(|cut| self.generated >= cut) {
            return false;
        }
        self.generated = self.generated.saturating_add(1);
        true
    }

    /// Text events generated so far.
    pub fn generated_count(&self) -> u32 {
        self.generated
    }

    /// The provider's own count of the tokens it generated, charged in place of the text events.
    pub fn reported(&mut self, completion_tokens: u32) {
        self.reported = Some(completion_tokens);
    }

    /// Charges the day's quota the `tokens` the generation produced, settling what its start
    /// reserved; once (later calls, and the drop, do nothing, so the end of a stream may charge
    /// from more than one path). The store is asked in a task of its own: a stream aborted while
    /// it waits still gets charged.
    pub async fn charge(&mut self, tokens: u32) {
        if std::mem::replace(&mut self.settled, true) {
            return;
        }
        let tokens = tokens.saturating_add(self.images);
        let delta = i64::from(tokens) - i64::try_from(self.reserved).unwrap_or(i64::MAX);
        let settling = settle(Arc::clone(&self.limits), self.person.clone(), self.day, delta, tokens);
        match self.limits.settling.spawn(settling).await {
            Ok(used) => self.used = used,
            Err(err) => tracing::error!(error = %err, tokens, "counting a stream's tokens failed"),
        }
    }

    /// The person's quota after this stream, for the page's meter: the total the charge answered
    /// (no second round trip to the store), else read.
    pub async fn quota(&self) -> Option<QuotaStatus> {
        let (limits, _, _) = self.limits.of(&self.person);
        match self.used {
            Some(used) if limits.tokens_per_day > 0 => Some(self.limits.status(used, limits.tokens_per_day)),
            _ => self.limits.quota(&self.person).await,
        }
    }
}

/// Adds `delta` to `person`'s tokens on `day` (what a stream generated, less what it reserved);
/// the new total, or `None` if the store failed (logged).
async fn settle(limits: Arc<Limits>, person: Person, day: i64, delta: i64, tokens: u32) -> Option<u64> {
    let added = async {
        let key = limits.key(&person).await?;
        limits.store.add_tokens(&key, day, delta).await
    };
    match added.await {
        Ok(used) => Some(used),
        Err(err) => {
            tracing::error!(error = %err, tokens, delta, "counting a stream's tokens failed");
            None
        }
    }
}

impl Drop for StreamPermit {
    fn drop(&mut self) {
        if let Some(c) = self.limits.counts().get_mut(&self.person) {
            c.streams = c.streams.saturating_sub(1);
        }
        if self.settled {
            return;
        }
        // Its task was aborted (the tab closed, the socket's grace ran out, the gateway stopped)
        // before the stream could charge: what it generated is charged all the same.
        let tokens = self.reported.unwrap_or(self.generated).saturating_add(self.images);
        let delta = i64::from(tokens) - i64::try_from(self.reserved).unwrap_or(i64::MAX);
        if delta == 0 {
            return;
        }
        let settling = settle(Arc::clone(&self.limits), self.person.clone(), self.day, delta, tokens);
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(self.limits.settling.spawn_on(settling, &runtime)),
            Err(_) => {
                tracing::error!(tokens, "a stream ended outside the runtime; its tokens are not counted")
            }
        }
    }
}
