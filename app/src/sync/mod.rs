//! History that follows a signed-in person: the history's generations are pushed to the gateway
//! (`POST /api/history/push`) and other devices' changes pulled back (`GET /api/history`), last
//! writer wins per record ([`flint_protocol::sync`]). Changes made offline wait in a queue that a
//! reload keeps, and are sent when the gateway can be reached again.
//!
//! [`state::SyncState`] decides everything (queue, merge, cursor) and is tested natively;
//! [`use_history_sync`] only reads the history, talks to the gateway and saves the state. It
//! starts once the gateway's greeting says this person may sync (signed in, history kept there);
//! otherwise, or when the gateway later answers "not signed in", "anonymous" or "no history kept
//! here", the history stays in this browser only, as before (export moves it).

mod hook;
pub mod state;
#[cfg(test)]
mod state_tests;

pub use hook::{SyncStatus, use_history_sync};
