//! Keeping the socket alive: pings on an interval, a silent connection replaced, and streams that
//! wait too long for a lost connection failed with their text kept.

use std::rc::Rc;
use std::time::Duration;

use flint_protocol::ClientMessage;
use leptos::prelude::*;

use super::{Inner, flush, on_close, with};
use crate::interop::now_ms;

/// How long streams wait for a lost connection to come back and resume them before they fail:
/// past the gateway's default grace period (`server.resume_grace_secs`, 30 s), it has let them go.
const GIVE_UP_RESUMING_MS: f64 = 45_000.0;

/// Streams waiting for a connection that stays away fail, their text kept.
fn give_up_resuming(inner: &Rc<Inner>) {
    let Some(lost_at) = inner.lost_at_ms.get() else { return };
    if now_ms() - lost_at < GIVE_UP_RESUMING_MS {
        return;
    }
    let failed = inner.streams.borrow_mut().give_up_resuming(
        "The connection to the gateway stayed away too long to pick this answer up again; the text \
         received so far is kept. Run again once it reconnects.",
    );
    for (handler, event) in failed {
        handler(event);
    }
}

/// Pings on an interval; a connection silent for two intervals is presumed dead and replaced.
pub(super) fn start_pinging(inner: &Rc<Inner>) {
    let weak = Rc::downgrade(inner);
    let interval = Duration::from_millis(u64::from(inner.options.ping_interval_ms));
    let handle = set_interval_with_handle(
        move || {
            with(&weak, |inner| {
                if !inner.open.get() {
                    give_up_resuming(inner);
                    return;
                }
                let silent_for = now_ms() - inner.last_seen_ms.get();
                if silent_for > 2.0 * f64::from(inner.options.ping_interval_ms) {
                    // A dead network can hold a polite close for minutes: drop the socket and
                    // reconnect now.
                    leptos::logging::warn!("Flint: no answer from the gateway for {silent_for:.0} ms");
                    drop(inner.socket.take());
                    on_close(inner, 4000, "no answer to pings");
                    return;
                }
                let nonce = inner.nonce.get().wrapping_add(1);
                inner.nonce.set(nonce);
                inner.streams.borrow_mut().queue_control(&ClientMessage::Ping { nonce });
                flush(inner);
            });
        },
        interval,
    );
    match handle {
        Ok(handle) => *inner.ping.borrow_mut() = Some(handle),
        Err(_) => leptos::logging::error!("Flint: cannot schedule pings"),
    }
}
