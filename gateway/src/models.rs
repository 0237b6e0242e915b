//! `GET /api/models`: what the picker offers, and what to set up when nothing is usable.

use std::sync::Arc;

use flint_protocol::{ModelInfo, ModelList};

use crate::config::ProfileConfig;
use crate::profiles;
use crate::providers::Provider;

/// Set-up advice shown when no model can be used.
pub const NO_MODEL_NOTICE: &str = concat!(
    "No model is available yet. Either add a provider to flint.toml (see flint.example.toml), e.g.\n",
    "  [[providers]]\n",
    "  kind = \"openai\"\n",
    "  name = \"cerebras\"\n",
    "  base_url = \"https://api.cerebras.ai/v1\"\n",
    "  api_key_env = \"CEREBRAS_API_KEY\"\n",
    "  models = [{ id = \"llama-3.3-70b\" }]\n",
    "or set FLINT_OPENAI_BASE_URL (e.g. http://localhost:11434/v1), FLINT_OPENAI_MODELS (comma-separated) ",
    "and, if the server needs one, FLINT_OPENAI_API_KEY, then restart the gateway; ",
    "or run `cargo xtask serve`, which fetches the embedded model."
);

/// Lists every provider's models: the default first, then the other available ones, then the rest;
/// and the profiles, checked against them.
pub fn model_list(
    providers: &[Arc<dyn Provider>],
    default_model: Option<&str>,
    profiles: &[ProfileConfig],
) -> ModelList {
    let all: Vec<ModelInfo> = providers.iter().flat_map(|p| p.models()).collect();
    let default = default_model
        .and_then(|wanted| all.iter().find(|m| m.available && m.id == wanted))
        .or_else(|| all.iter().find(|m| m.available))
        .map(|m| m.id.clone());
    let rank = |m: &ModelInfo| match (Some(&m.id) == default.as_ref(), m.available) {
        (true, _) => 0,
        (false, true) => 1,
        (false, false) => 2,
    };
    let mut models = all;
    // Stable: providers and models keep their configured order within each group.
    models.sort_by_key(|m| rank(m));
    let notice = default.is_none().then(|| NO_MODEL_NOTICE.to_owned());
    let profiles = profiles::resolve_all(profiles, &models);
    ModelList { models, default, notice, profiles, ..ModelList::default() }
}

#[cfg(test)]
mod tests {
    use flint_protocol::ModelInfo;

    use super::*;
    use crate::config::{QUICK_START_API_KEY, QUICK_START_BASE_URL, QUICK_START_MODELS};
    use crate::providers::{EventStream, GenRequest};

    struct Fixed(Vec<ModelInfo>);

    impl Provider for Fixed {
        fn name(&self) -> &str {
            "p"
        }
        fn models(&self) -> Vec<ModelInfo> {
            self.0.clone()
        }
        fn stream(&self, _: GenRequest) -> EventStream {
            Box::pin(futures::stream::empty())
        }
    }

    fn model(id: &str, available: bool) -> ModelInfo {
        ModelInfo {
            id: format!("p/{id}"),
            provider: "p".into(),
            model: id.into(),
            label: id.into(),
            context_window: 8192,
            context_source: Default::default(),
            tokenizer: Default::default(),
            reasoning: false,
            vision: false,
            price: None,
            user_key: false,
            available,
            problem: (!available).then(|| "set P_KEY".into()),
        }
    }

    fn ids(list: &ModelList) -> Vec<&str> {
        list.models.iter().map(|m| m.id.as_str()).collect()
    }

    #[test]
    fn available_models_come_first_and_the_first_is_the_default() {
        let p: Arc<dyn Provider> =
            Arc::new(Fixed(vec![model("a", false), model("b", true), model("c", true)]));
        let list = model_list(std::slice::from_ref(&p), None, &[]);
        assert_eq!(ids(&list), ["p/b", "p/c", "p/a"]);
        assert_eq!(list.default.as_deref(), Some("p/b"));
        assert_eq!(list.notice, None);
        let list = model_list(&[p], Some("p/c"), &[]);
        assert_eq!(ids(&list), ["p/c", "p/b", "p/a"], "the configured default leads");
        assert_eq!(list.default.as_deref(), Some("p/c"));
    }

    #[test]
    fn with_nothing_available_the_notice_says_what_to_set() {
        let p: Arc<dyn Provider> = Arc::new(Fixed(vec![model("a", false)]));
        let list = model_list(&[p], Some("p/a"), &[]);
        assert_eq!(list.default, None);
        let notice = list.notice.expect("a notice");
        for needle in
            ["flint.toml", QUICK_START_BASE_URL, QUICK_START_MODELS, QUICK_START_API_KEY, "cargo xtask serve"]
        {
            assert!(notice.contains(needle), "notice lacks {needle}: {notice}");
        }
    }
}
