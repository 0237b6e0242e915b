//! `[limits]`: what one person may use: per signed-in person, and per address for anonymous use.

use serde::Deserialize;

/// `[limits.signed_in]` and `[limits.anonymous]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LimitsConfig {
    /// For a person signed in (an access token, or an authenticating proxy's user), and for
    /// everyone while the gateway listens on loopback (its owner).
    pub signed_in: PersonLimits,
    /// For anyone not signed in on a gateway others can reach (`[auth] allow_anonymous`), per
    /// address.
    pub anonymous: PersonLimits,
}

impl Default for LimitsConfig {
    fn default() -> Self {
        Self {
            signed_in: PersonLimits::default(),
            // A stranger on a public page: enough to try Flint (a few variations, a few dozen
            // prompts), not enough to run the operator's key all day.
            anonymous: PersonLimits { sockets: 4, streams: 8, starts_per_minute: 20, tokens_per_day: 50_000 },
        }
    }
}

/// What one person may use. A limit of 0 means none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PersonLimits {
    /// Open connections (tabs) at once.
    pub sockets: u32,
    /// Generations running at once, all tabs together.
    pub streams: u32,
    /// Generations started per minute (a burst of this many, refilled evenly over the minute).
    pub starts_per_minute: u32,
    /// Generated tokens per UTC day (0: no daily quota).
    pub tokens_per_day: u64,
}

impl Default for PersonLimits {
    fn default() -> Self {
        // Generous: ten variations in each of a few tabs, a prompt every few seconds all day.
        Self { sockets: 16, streams: 48, starts_per_minute: 240, tokens_per_day: 0 }
    }
}
