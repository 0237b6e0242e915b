//! Found servers with an answer running are not probed again. llama-cpp-python's server ends the
//! answer it is streaming whenever another request reaches it (its `interrupt_requests`, on by
//! default) — a `GET /v1/models` probe included — so a rescan in the middle of a run would cut
//! that run short. Each found provider counts its open streams; a look keeps the last find for a
//! port whose count is not zero.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::StreamExt;

use flint_protocol::ModelInfo;

use crate::providers::{ClientId, EventStream, GenRequest, Provider, TextScrubber};

/// Open streams to one port, shared by every provider built for it across looks.
#[derive(Clone, Default)]
pub struct InUse(Arc<AtomicUsize>);

impl InUse {
    /// Whether an answer is streaming from the port now.
    pub fn busy(&self) -> bool {
        self.0.load(Ordering::Acquire) > 0
    }

    fn hold(&self) -> Held {
        self.0.fetch_add(1, Ordering::AcqRel);
        Held(self.0.clone())
    }
}

/// One open stream; dropping it (the stream ended or was cancelled) frees the port.
struct Held(Arc<AtomicUsize>);

impl Drop for Held {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A found server's provider, counting its streams in the port's [`InUse`].
pub struct Counted<P> {
    pub inner: P,
    pub in_use: InUse,
}

impl<P: Provider> Provider for Counted<P> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn models(&self) -> Vec<ModelInfo> {
        self.inner.models()
    }

    fn stream(&self, request: GenRequest) -> EventStream {
        let held = self.in_use.hold();
        Box::pin(self.inner.stream(request).map(move |event| {
            // The closure owns `held`, so the count drops with the stream, however it ends.
            let _ = &held;
            event
        }))
    }

    fn scrubber(&self, request: &GenRequest) -> Option<Box<dyn TextScrubber>> {
        self.inner.scrubber(request)
    }

    fn client_closed(&self, client: ClientId) {
        self.inner.client_closed(client)
    }
}
