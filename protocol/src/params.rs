//! Values inside frames that need more than a plain type: reasoning settings, and secrets that
//! must never show in a log.

use serde::{Deserialize, Serialize};

/// A secret (a person's own API key): its `Debug` never shows it, so no log line can.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    /// Wraps `value`.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The secret itself, for the one place that sends it on.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

/// A reasoning model's effort setting (OpenAI's `reasoning.effort`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasoningEffort {
    /// No reasoning (GPT-5.1 and later).
    None,
    /// The least reasoning that still reasons.
    Minimal,
    /// Low.
    Low,
    /// Medium (most models' default).
    Medium,
    /// High.
    High,
    /// Extra high (Codex models).
    Xhigh,
}

impl ReasoningEffort {
    /// The wire name (`"xhigh"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Minimal => "minimal",
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
            Self::Xhigh => "xhigh",
        }
    }
}

/// How long an answer the model aims for (OpenAI's `verbosity`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verbosity {
    /// Terse.
    Low,
    /// The default.
    Medium,
    /// Thorough.
    High,
}

impl Verbosity {
    /// The wire name (`"low"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
        }
    }
}
