//! The embedded llama.cpp model as a provider. Placeholder until the engine lands: it lists the
//! model as unavailable and refuses streams with a clear error.

use std::sync::Arc;

use flint_protocol::ModelInfo;

use super::{EventStream, GenRequest, Provider, ProviderError};
use crate::config::LocalConfig;

/// Builds the local provider from its configuration.
pub fn build(config: &LocalConfig) -> Arc<dyn Provider> {
    Arc::new(Placeholder { config: config.clone() })
}

struct Placeholder {
    config: LocalConfig,
}

const NOT_BUILT: &str = "the embedded model is not built into this gateway yet";

impl Provider for Placeholder {
    fn name(&self) -> &str {
        &self.config.name
    }

    fn models(&self) -> Vec<ModelInfo> {
        vec![ModelInfo {
            id: format!("{}/{}", self.config.name, self.config.model),
            provider: self.config.name.clone(),
            model: self.config.model.clone(),
            label: self.config.model.clone(),
            context_window: self.config.context_window,
            available: false,
            problem: Some(NOT_BUILT.into()),
        }]
    }

    fn stream(&self, _request: GenRequest) -> EventStream {
        Box::pin(futures::stream::once(async {
            Err(ProviderError::ModelUnavailable(NOT_BUILT.into()))
        }))
    }
}
