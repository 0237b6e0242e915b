//! `[profiles.*]` as the app sees them: each profile's settings checked against its model, with a
//! sentence for every key the model would ignore or refuse, and those keys removed.
//!
//! The seeds' warning is the reason this exists: a profile tuned for a deep reasoning model
//! (`reasoning_effort = "xhigh"`) pointed at a fast one gives "confusingly shallow output" with no
//! error anywhere. Saying so at start and next to the toggle costs nothing.

use flint_protocol::{GenParams, ModelInfo, Profile};

use crate::config::ProfileConfig;

/// Resolves every profile against the listed models, in order.
pub fn resolve_all(profiles: &[ProfileConfig], models: &[ModelInfo]) -> Vec<Profile> {
    profiles.iter().map(|p| resolve(p, models)).collect()
}

/// One profile: its params without the keys its model does not take, and why each was dropped.
pub fn resolve(config: &ProfileConfig, models: &[ModelInfo]) -> Profile {
    let mut warnings = Vec::new();
    let mut params = GenParams {
        max_tokens: config.max_tokens,
        temperature: config.temperature,
        top_p: config.top_p,
        seed: None,
        reasoning_effort: config.reasoning_effort,
        verbosity: config.verbosity,
        auto_continue: config.auto_continue,
    };
    let name = &config.name;
    match models.iter().find(|m| m.id == config.model) {
        None => warnings.push(format!(
            "profile {name}: no provider offers the model {:?}; use an id from the model picker (provider/model)",
            config.model
        )),
        Some(model) if !model.reasoning => {
            if let Some(effort) = params.reasoning_effort.take() {
                warnings.push(format!(
                    "profile {name}: reasoning_effort = {:?} is not sent: {} takes no reasoning keys, so it \
                     would be ignored (set reasoning = true on the model if it does reason)",
                    effort.as_str(),
                    model.id
                ));
            }
            if let Some(verbosity) = params.verbosity.take() {
                warnings.push(format!(
                    "profile {name}: verbosity = {:?} is not sent: {} does not take it (only GPT-5-family models do)",
                    verbosity.as_str(),
                    model.id
                ));
            }
        }
        Some(model) if refuses_sampling(&model.model) => {
            for (key, value) in [("temperature", params.temperature.take()), ("top_p", params.top_p.take())] {
                if let Some(value) = value {
                    warnings.push(format!(
                        "profile {name}: {key} = {value} is not sent: {} is an OpenAI reasoning model, which \
                         refuses sampling settings; use reasoning_effort instead",
                        model.id
                    ));
                }
            }
        }
        Some(_) => {}
    }
    Profile {
        name: name.clone(),
        label: config.label.clone().unwrap_or_else(|| capitalised(name)),
        model: config.model.clone(),
        params,
        system: config.system.clone().filter(|s| !s.trim().is_empty()),
        kind: config.kind,
        warnings,
    }
}

/// OpenAI's own reasoning models (o-series, GPT-5, Codex) answer `temperature`/`top_p` with a 400;
/// open reasoning models (gpt-oss, served by Cerebras or Groq) take them.
fn refuses_sampling(model: &str) -> bool {
    let name = model.to_ascii_lowercase();
    ["o1", "o3", "o4", "gpt-5", "codex"].iter().any(|p| name.starts_with(p))
}

fn capitalised(name: &str) -> String {
    let mut chars = name.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use flint_protocol::{ReasoningEffort, Verbosity};

    use super::*;
    use crate::config::Config;

    fn model(id: &str, reasoning: bool) -> ModelInfo {
        let (provider, name) = id.split_once('/').expect("provider/model");
        ModelInfo {
            id: id.into(),
            provider: provider.into(),
            model: name.into(),
            label: name.into(),
            context_window: 128_000,
            context_source: Default::default(),
            tokenizer: Default::default(),
            reasoning,
            vision: false,
            price: None,
            user_key: false,
            available: true,
            problem: None,
        }
    }

    fn profiles(text: &str) -> Vec<ProfileConfig> {
        Config::parse(text, std::path::Path::new("flint.toml")).expect("valid profiles").profiles
    }

    #[test]
    fn profiles_keep_the_files_order_and_are_named_by_their_keys() {
        let list = profiles(
            "[profiles.spark]\nmodel = \"o/gpt-5.3-codex-spark\"\n[profiles.deep]\nmodel = \"o/gpt-5.3-codex\"\n\
             label = \"Deep think\"\n[profiles.alpha]\nmodel = \"o/x\"\n",
        );
        let names: Vec<_> = list.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["spark", "deep", "alpha"], "file order, not alphabetical");
        let models =
            [model("o/gpt-5.3-codex-spark", false), model("o/gpt-5.3-codex", true), model("o/x", false)];
        let resolved = resolve_all(&list, &models);
        assert_eq!(resolved[0].label, "Spark");
        assert_eq!(resolved[1].label, "Deep think");
        assert!(resolved.iter().all(|p| p.warnings.is_empty()), "{resolved:?}");
    }

    #[test]
    fn reasoning_keys_on_a_fast_model_are_dropped_with_a_sentence_naming_them() {
        let list = profiles(
            "[profiles.spark]\nmodel = \"o/gpt-5.3-codex-spark\"\nreasoning_effort = \"xhigh\"\n\
             verbosity = \"low\"\ntemperature = 0.2\n",
        );
        let spark = resolve(&list[0], &[model("o/gpt-5.3-codex-spark", false)]);
        assert_eq!(spark.params.reasoning_effort, None);
        assert_eq!(spark.params.verbosity, None);
        assert_eq!(spark.params.temperature, Some(0.2), "a fast model takes sampling settings");
        assert_eq!(spark.warnings.len(), 2, "{:?}", spark.warnings);
        assert!(spark.warnings[0].contains("reasoning_effort = \"xhigh\""), "{}", spark.warnings[0]);
        assert!(spark.warnings[0].contains("o/gpt-5.3-codex-spark"), "{}", spark.warnings[0]);
        assert!(spark.warnings[1].contains("verbosity"), "{}", spark.warnings[1]);
    }

    #[test]
    fn sampling_keys_on_an_openai_reasoning_model_are_dropped_and_open_reasoners_keep_them() {
        let text = "[profiles.deep]\nmodel = \"o/gpt-5.3-codex\"\nreasoning_effort = \"high\"\ntemperature = 0.7\n\
                    top_p = 0.9\nverbosity = \"high\"\n";
        let deep = resolve(&profiles(text)[0], &[model("o/gpt-5.3-codex", true)]);
        assert_eq!(deep.params.reasoning_effort, Some(ReasoningEffort::High));
        assert_eq!(deep.params.verbosity, Some(Verbosity::High));
        assert_eq!((deep.params.temperature, deep.params.top_p), (None, None));
        assert_eq!(deep.warnings.len(), 2, "{:?}", deep.warnings);
        assert!(deep.warnings[0].starts_with("profile deep: temperature = 0.7"), "{}", deep.warnings[0]);
        let oss = text.replace("o/gpt-5.3-codex", "c/gpt-oss-120b");
        let oss = resolve(&profiles(&oss)[0], &[model("c/gpt-oss-120b", true)]);
        assert_eq!(oss.params.temperature, Some(0.7));
        assert!(oss.warnings.is_empty(), "{:?}", oss.warnings);
    }

    #[test]
    fn a_profile_naming_an_unknown_model_says_so() {
        let list = profiles("[profiles.deep]\nmodel = \"nowhere/m\"\nsystem = \"Think step by step.\"\n");
        let deep = resolve(&list[0], &[model("o/x", false)]);
        assert_eq!(deep.system.as_deref(), Some("Think step by step."));
        assert_eq!(deep.warnings.len(), 1);
        assert!(deep.warnings[0].contains("\"nowhere/m\""), "{}", deep.warnings[0]);
    }

    #[test]
    fn a_profile_may_set_the_project_kind_and_an_unknown_kind_is_refused_by_name() {
        let list =
            profiles("[profiles.app]\nmodel = \"o/x\"\nkind = \"react\"\n[profiles.page]\nmodel = \"o/x\"\n");
        let resolved = resolve_all(&list, &[model("o/x", false)]);
        assert_eq!(resolved[0].kind, Some(flint_protocol::prompt::ProjectKind::React));
        assert_eq!(resolved[1].kind, None, "unset: the person's pick, else the prompt's words");
        let json = serde_json::to_string(&resolved[0]).expect("serialises");
        assert!(json.contains(r#""kind":"react""#), "{json}");
        let err = Config::parse("[profiles.x]\nmodel = \"a/b\"\nkind = \"vue\"\n", "f".as_ref())
            .expect_err("not a kind");
        let message = format!("{err:#}");
        assert!(message.contains("vue") && message.contains("react"), "{message}");
    }

    #[test]
    fn an_unknown_profile_key_is_refused() {
        let err = Config::parse("[profiles.x]\nmodel = \"a/b\"\nreasoning = \"high\"\n", "f".as_ref());
        assert!(err.is_err(), "a misspelt key would otherwise be ignored silently");
    }
}
