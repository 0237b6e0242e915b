//! Choosing and describing models from `GET /api/models`.

use flint_protocol::{ContextSource, FoundServer, ModelInfo, ModelList};

/// The model to preselect: the gateway's default when usable, else the first usable one.
pub fn initial_choice(list: &ModelList) -> Option<String> {
    list.default
        .clone()
        .filter(|d| is_usable(list, d))
        .or_else(|| list.models.iter().find(|m| m.available).map(|m| m.id.clone()))
}

/// The model to preselect when a shared link asked for `preferred`: that one if usable here, else
/// [`initial_choice`].
pub fn preferred_choice(list: &ModelList, preferred: Option<&str>) -> Option<String> {
    preferred.filter(|p| is_usable(list, p)).map(str::to_owned).or_else(|| initial_choice(list))
}

/// Whether `id` is on the list and can be used now.
pub fn is_usable(list: &ModelList, id: &str) -> bool {
    list.models.iter().any(|m| m.id == id && m.available)
}

/// Whether any model can be used now.
pub fn any_usable(list: &ModelList) -> bool {
    list.models.iter().any(|m| m.available)
}

/// The picker's text for a model; an unusable one says why.
pub fn option_label(model: &ModelInfo) -> String {
    match (&model.problem, model.available) {
        (_, true) => model.label.clone(),
        (Some(problem), false) => format!("{} — {}", model.label, problem),
        (None, false) => format!("{} — unavailable", model.label),
    }
}

/// The picker's tooltip for a usable model: its id, its window (saying when that is only a guess,
/// and what to set) and its price.
pub fn option_title(model: &ModelInfo) -> String {
    let window = crate::metrics::group_thousands(u64::from(model.context_window));
    let source = match model.context_source {
        ContextSource::Guess => {
            " (a guess: the server does not say; set context_window for this model in flint.toml)"
        }
        ContextSource::Discovered => " (as the server reports)",
        ContextSource::Configured => "",
    };
    let price = model
        .price
        .map(|p| format!(" · ${} in / ${} out per million tokens", p.input_per_mtok, p.output_per_mtok))
        .unwrap_or_default();
    format!("{} · {window} tokens context{source}{price}", model.id)
}

/// What the gateway's label for its embedded demo model says (`providers::local`).
pub const DEMO_MARK: &str = "demo model";

/// Whether `model` is the embedded demo model (a 135M model: small pages, often wrong).
pub fn is_demo(model: &ModelInfo) -> bool {
    model.label.contains(DEMO_MARK)
}

/// The found model to offer while the demo model is `selected`: the best-sized usable model of the
/// first found server that has one.
pub fn found_offer<'a>(list: &'a ModelList, selected: Option<&str>) -> Option<&'a ModelInfo> {
    let current = list.models.iter().find(|m| Some(m.id.as_str()) == selected)?;
    if !is_demo(current) {
        return None;
    }
    list.found
        .iter()
        .filter_map(|server| server.best.as_deref())
        .find_map(|best| list.models.iter().find(|m| m.id == best && m.available))
}

/// What a look for local model servers found, in one sentence.
pub fn found_summary(found: &[FoundServer], models: &[ModelInfo]) -> String {
    if found.is_empty() {
        return "No model server found on this machine (Ollama, llama.cpp, LM Studio, vLLM, SGLang, LiteLLM)."
            .to_owned();
    }
    let each: Vec<String> = found
        .iter()
        .map(|server| {
            let count = models.iter().filter(|m| m.provider == server.provider && m.available).count();
            match &server.problem {
                Some(problem) => format!("{} at {}: {problem}", server.kind, server.address),
                None if count == 1 => format!("{} at {} (1 model)", server.kind, server.address),
                None => format!("{} at {} ({count} models)", server.kind, server.address),
            }
        })
        .collect();
    format!("Found {}.", each.join("; "))
}

#[cfg(test)]
mod tests {
    use flint_protocol::Price;

    use super::*;

    #[test]
    fn the_title_says_when_the_window_is_a_guess_and_what_it_costs() {
        let mut m = model("p/x", true);
        m.context_window = 128_000;
        m.context_source = ContextSource::Guess;
        m.price = Some(Price { input_per_mtok: 1.75, output_per_mtok: 14.0 });
        let title = option_title(&m);
        assert!(title.starts_with("p/x · 128,000 tokens context (a guess"), "{title}");
        assert!(title.ends_with("$1.75 in / $14 out per million tokens"), "{title}");
        m.context_source = ContextSource::Configured;
        m.price = None;
        assert_eq!(option_title(&m), "p/x · 128,000 tokens context");
    }

    fn model(id: &str, available: bool) -> ModelInfo {
        ModelInfo {
            id: id.into(),
            provider: "p".into(),
            model: id.into(),
            label: id.to_uppercase(),
            context_window: 8192,
            context_source: Default::default(),
            tokenizer: Default::default(),
            reasoning: false,
            vision: false,
            price: None,
            user_key: false,
            available,
            problem: (!available).then(|| "no key".into()),
        }
    }

    #[test]
    fn default_only_when_usable() {
        let mut list = ModelList {
            models: vec![model("a", false), model("b", true)],
            default: Some("a".into()),
            notice: None,
            ..ModelList::default()
        };
        assert_eq!(initial_choice(&list), Some("b".into()));
        list.default = Some("b".into());
        assert_eq!(initial_choice(&list), Some("b".into()));
        list.models[1].available = false;
        assert_eq!(initial_choice(&list), None);
        assert!(!any_usable(&list));
    }

    #[test]
    fn a_shared_model_wins_only_when_usable() {
        let list = ModelList {
            models: vec![model("a", true), model("b", true), model("c", false)],
            default: Some("a".into()),
            notice: None,
            ..ModelList::default()
        };
        assert_eq!(preferred_choice(&list, Some("b")), Some("b".into()));
        assert_eq!(preferred_choice(&list, Some("c")), Some("a".into()));
        assert_eq!(preferred_choice(&list, Some("elsewhere/x")), Some("a".into()));
        assert_eq!(preferred_choice(&list, None), Some("a".into()));
        assert!(is_usable(&list, "b") && !is_usable(&list, "c") && !is_usable(&list, "elsewhere/x"));
    }

    #[test]
    fn labels_explain_problems() {
        assert_eq!(option_label(&model("a", true)), "A");
        assert_eq!(option_label(&model("a", false)), "A — no key");
    }

    fn found(provider: &str, best: Option<&str>, problem: Option<&str>) -> FoundServer {
        FoundServer {
            provider: provider.into(),
            kind: provider.to_uppercase(),
            address: "127.0.0.1:11434".into(),
            best: best.map(Into::into),
            problem: problem.map(Into::into),
        }
    }

    #[test]
    fn the_demo_model_offers_the_best_found_model() {
        let mut demo = model("local/smollm2", true);
        demo.label = "smollm2-135m-instruct · 135M demo model (embedded, CPU)".into();
        let mut list = ModelList {
            models: vec![
                demo,
                model("ollama/big", true),
                model("ollama/small", true),
                model("cloud/x", true),
            ],
            found: vec![
                found("litellm", None, Some("wants a key")),
                found("ollama", Some("ollama/big"), None),
            ],
            ..ModelList::default()
        };
        assert_eq!(found_offer(&list, Some("local/smollm2")).map(|m| m.id.as_str()), Some("ollama/big"));
        assert_eq!(found_offer(&list, Some("cloud/x")), None, "only the demo model is second-guessed");
        assert_eq!(found_offer(&list, None), None);
        list.models[1].available = false;
        assert_eq!(found_offer(&list, Some("local/smollm2")), None, "an unusable find is not offered");
    }

    #[test]
    fn the_summary_says_what_was_found_or_where_it_looked() {
        assert!(found_summary(&[], &[]).starts_with("No model server found"));
        let of_ollama = |id: &str| ModelInfo { provider: "ollama".into(), ..model(id, true) };
        let models = [of_ollama("ollama/a"), of_ollama("ollama/b"), model("p/c", true)];
        let ollama = found("ollama", Some("ollama/a"), None);
        let text = found_summary(&[ollama, found("litellm", None, Some("wants a key"))], &models);
        assert_eq!(
            text,
            "Found OLLAMA at 127.0.0.1:11434 (2 models); LITELLM at 127.0.0.1:11434: wants a key."
        );
    }
}
