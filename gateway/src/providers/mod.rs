//! The provider registry: builds every configured provider (`openai`, `responses`, `local`) behind
//! the contract in [`crate::provider`], which the relay and the embedded model depend on instead of
//! on this module, so the registry can build `local` without a circle.

use std::sync::Arc;

use flint_protocol::ModelInfo;

use crate::config::{Config, ProviderConfig};

mod answer_caps;
pub mod continuation;
#[cfg(feature = "local")]
pub mod local;
pub mod openai;
mod openai_chunk;
mod openai_chunk_scan;
mod openai_chunk_template;
mod openai_context;
mod openai_errors;
mod openai_reasoning;
// Apart from the providers: both HTTP providers and the Responses sockets scrub the key.
pub(crate) mod redact;
pub mod responses;
mod responses_events;
mod responses_request;
mod responses_ws;
mod slot_queue;
mod slots;
pub mod sse;
pub(crate) mod stall;
mod upstream_conn;
pub mod upstream_http;

pub use self::answer_caps::AnswerCaps;
pub use crate::provider::{
    ClientId, EventStream, GenRequest, Provider, ProviderError, ProviderEvent, TextScrubber,
};

/// An `f32` setting as the decimal the person wrote: `0.3_f32` widened to `f64` is
/// 0.30000001192092896, which upstreams log and echo as such. The shortest decimal that reads back
/// as the same `f32` is what was meant.
pub(crate) fn decimal(value: f32) -> serde_json::Value {
    value.to_string().parse::<f64>().map_or_else(|_| f64::from(value).into(), Into::into)
}

/// A configured model as `/api/models` lists it: the window the server reported (`discovered`)
/// wins over the configured one, else a labelled guess; unusable while the provider has a
/// `problem` (a missing key).
pub(crate) fn model_info(
    provider: &str,
    m: &crate::config::ModelConfig,
    discovered: Option<u32>,
    user_key: bool,
    problem: &Option<String>,
) -> ModelInfo {
    let (context_window, context_source) = openai_context::context_of(discovered, m.context_window);
    ModelInfo {
        id: format!("{provider}/{}", m.id),
        provider: provider.to_owned(),
        model: m.id.clone(),
        label: m.label.clone().unwrap_or_else(|| m.id.clone()),
        context_window,
        context_source,
        tokenizer: m.tokenizer.unwrap_or_else(|| flint_protocol::Tokenizer::guess(&m.id)),
        reasoning: m.reasoning(),
        vision: m.vision(),
        price: m.price(),
        user_key,
        available: problem.is_none(),
        problem: problem.clone(),
    }
}

/// Builds every configured provider, in order; `env` looks up environment variables (keys).
///
/// With the `local` feature off, a `kind = "local"` provider is skipped with a warning.
pub fn build_all(config: &Config, env: &dyn Fn(&str) -> Option<String>) -> Vec<Arc<dyn Provider>> {
    let client = openai::http_client();
    let mut providers: Vec<Arc<dyn Provider>> = Vec::with_capacity(config.providers.len());
    for provider in &config.providers {
        match provider {
            ProviderConfig::Openai(openai) => {
                providers.push(Arc::new(openai::OpenAiProvider::new(openai, client.clone(), env)));
            }
            ProviderConfig::Responses(responses) => {
                providers.push(Arc::new(responses::ResponsesProvider::new(responses, client.clone(), env)));
            }
            #[cfg(feature = "local")]
            ProviderConfig::Local(local) => providers.push(local::build(local)),
            #[cfg(not(feature = "local"))]
            ProviderConfig::Local(local) => {
                tracing::warn!(provider = %local.name, "this gateway was built without the `local` feature; skipping");
            }
        }
    }
    providers
}
