//! `[profiles.NAME]`: a model and how to ask it, under a name the app can toggle to (Spark for
//! fast iteration, Deep for hard problems).

use flint_protocol::{ReasoningEffort, Verbosity};
use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};

/// One profile as written in `flint.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileConfig {
    /// The table's key (`spark` in `[profiles.spark]`); filled in from it.
    #[serde(skip)]
    pub name: String,
    /// Shown on the toggle; defaults to the name, capitalised.
    #[serde(default)]
    pub label: Option<String>,
    /// A model id, `provider/model`.
    pub model: String,
    /// Sampling temperature.
    #[serde(default)]
    pub temperature: Option<f32>,
    /// Nucleus sampling threshold.
    #[serde(default)]
    pub top_p: Option<f32>,
    /// Longest answer, in tokens (still capped by `server.max_tokens`).
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// For reasoning models only.
    #[serde(default)]
    pub reasoning_effort: Option<ReasoningEffort>,
    /// How long an answer the model aims for, where it takes the key.
    #[serde(default)]
    pub verbosity: Option<Verbosity>,
    /// Added to the system prompt of every request made with the profile.
    #[serde(default)]
    pub system: Option<String>,
    /// The project kind asked for while the profile is active (`html`, `react`), unless the
    /// person picks one next to the prompt.
    #[serde(default)]
    pub kind: Option<flint_protocol::prompt::ProjectKind>,
    /// Continuations when an answer stops at its length limit (capped by
    /// `server.max_auto_continue`).
    #[serde(default)]
    pub auto_continue: Option<u8>,
}

/// Reads `[profiles.*]` into a list in the file's order (the toggle's order), each named by its key.
pub(super) fn in_order<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<ProfileConfig>, D::Error> {
    struct Profiles;
    impl<'de> Visitor<'de> for Profiles {
        type Value = Vec<ProfileConfig>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("tables of profiles, [profiles.NAME]")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            while let Some((name, mut profile)) = map.next_entry::<String, ProfileConfig>()? {
                profile.name = name;
                out.push(profile);
            }
            Ok(out)
        }
    }
    deserializer.deserialize_map(Profiles)
}
