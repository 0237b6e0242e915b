//! Nothing is lost on reload: [`use_session`] saves the prompt draft, the picked model and the last
//! generation to IndexedDB as they change, and puts them back on start-up; every generation is also
//! kept in the [`History`] until the person deletes it. The record and the
//! decisions about it are plain code ([`saved`], [`throttle`]), tested natively.

mod hook;
pub mod saved;
pub mod throttle;

pub use hook::{History, SessionStatus, use_session};
