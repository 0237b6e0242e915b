//! Choosing and describing models from `GET /api/models`.

use flint_protocol::{ModelInfo, ModelList};

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

#[cfg(test)]
mod tests {
    use super::*;

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
            price: None,
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
            profiles: Vec::new(),
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
            profiles: Vec::new(),
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
}
