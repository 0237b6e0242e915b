//! `[vision]`: the model that describes images for a code model that does not see.

use serde::Deserialize;

use super::{Config, ConfigError, ProviderConfig};

/// `[vision]` in `flint.toml`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct VisionConfig {
    /// `provider/model` of a configured model that sees (`vision = true`, or guessed so). The page
    /// asks it to describe a person's image when the code model does not see, and sends the code
    /// model the description. Unset: images go only to models that see them.
    pub model: Option<String>,
}

impl Config {
    /// Checks `[vision] model` names a configured model that sees, so a typo is a startup error
    /// rather than a describe panel that fails on first use.
    pub(super) fn check_vision(&self) -> Result<(), ConfigError> {
        let Some(wanted) = self.vision.model.as_deref() else { return Ok(()) };
        let bad = |why: String| ConfigError::VisionModel { model: wanted.to_owned(), why };
        let (name, model) = wanted
            .split_once('/')
            .ok_or_else(|| bad("write it as provider/model, as the model picker lists it".to_owned()))?;
        let provider = self
            .providers
            .iter()
            .find(|p| p.name() == name)
            .ok_or_else(|| bad(format!("no provider is named {name:?}")))?;
        let models = match provider {
            ProviderConfig::Openai(c) => &c.models,
            ProviderConfig::Responses(c) => &c.models,
            ProviderConfig::Local(_) => {
                return Err(bad(
                    "the embedded model does not see images; name a provider's model that does".into()
                ));
            }
        };
        let config = models
            .iter()
            .find(|m| m.id == model)
            .ok_or_else(|| bad(format!("provider {name:?} lists no model {model:?}")))?;
        if !config.vision() {
            return Err(bad(format!(
                "{wanted} is not marked as seeing images; set vision = true on it if it does, or name one that does"
            )));
        }
        Ok(())
    }
}
