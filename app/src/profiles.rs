//! Profiles (`[profiles.*]` in the gateway's `flint.toml`) as the page uses them: which one is
//! active, which one the toggle switches to, what a profile adds to a request, and when to suggest
//! the deep one. Plain logic, tested natively; the toggle is `components/profile_toggle.rs`.

use flint_protocol::{ChatMessage, GenParams, ModelList, Profile, Role};

/// The profile in effect: the one chosen, while the selected model is still its model (picking
/// another model by hand leaves the profile without switching it off for good).
pub fn active<'a>(list: &'a ModelList, chosen: Option<&str>, selected: Option<&str>) -> Option<&'a Profile> {
    let profile = list.profiles.iter().find(|p| Some(p.name.as_str()) == chosen)?;
    (Some(profile.model.as_str()) == selected).then_some(profile)
}

/// The model of the profile named `chosen`, or of the first profile when none is chosen.
pub fn model_of(list: &ModelList, chosen: Option<&str>) -> Option<String> {
    let profile = match chosen {
        Some(name) => list.profiles.iter().find(|p| p.name == name),
        None => list.profiles.first(),
    };
    profile.map(|p| p.model.clone())
}

/// The profile the toggle (Ctrl/Cmd+Shift+L) switches to: from the first to the second and back;
/// with more than two, the next in the file's order; with none active, the first.
pub fn next<'a>(list: &'a ModelList, active: Option<&str>) -> Option<&'a Profile> {
    let profiles = &list.profiles;
    let at = active.and_then(|name| profiles.iter().position(|p| p.name == name));
    match at {
        Some(i) if profiles.len() > 1 => profiles.get((i + 1) % profiles.len()),
        Some(_) => None,
        None => profiles.first(),
    }
}

/// The params and messages of a request on `model` under `profile`: the profile's settings and
/// system addition when `model` is the profile's model (a compare's other models keep theirs).
pub fn apply(profile: Option<&Profile>, model: &str, messages: &mut Vec<ChatMessage>) -> GenParams {
    let Some(profile) = profile.filter(|p| p.model == model) else { return GenParams::default() };
    if let Some(addition) = &profile.system {
        match messages.iter_mut().find(|m| m.role == Role::System) {
            Some(system) => {
                system.content.push_str("\n\n");
                system.content.push_str(addition);
            }
            None => messages.insert(0, ChatMessage::new(Role::System, addition.clone())),
        }
    }
    profile.params.clone()
}

/// Lane settings over a profile's: a variation's seed and temperature win; the rest is the
/// profile's (length, reasoning, verbosity, continuation).
pub fn merge(base: &GenParams, lane: &GenParams) -> GenParams {
    GenParams {
        max_tokens: lane.max_tokens.or(base.max_tokens),
        temperature: lane.temperature.or(base.temperature),
        top_p: lane.top_p.or(base.top_p),
        seed: lane.seed.or(base.seed),
        reasoning_effort: lane.reasoning_effort.or(base.reasoning_effort),
        verbosity: lane.verbosity.or(base.verbosity),
        auto_continue: lane.auto_continue.or(base.auto_continue),
    }
}

/// Why a prompt looks like work for the deep profile, if it does: the seeds' decision chart sends
/// multi-file, multi-step and security-critical work to the deep model. Only a hint: the page
/// never switches on its own.
pub fn deep_hint(prompt: &str) -> Option<&'static str> {
    let text = prompt.to_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| text.contains(w));
    if has(&[
        "security",
        "authentication",
        "authorization",
        "password",
        "encrypt",
        "xss",
        "csrf",
        "sql injection",
        "sanitiz",
    ]) {
        return Some("it touches security");
    }
    if has(&[
        "multiple files",
        "several files",
        "across files",
        "refactor",
        "architecture",
        "migrate",
        "migration",
    ]) {
        return Some("it spans files or restructures code");
    }
    let steps = prompt.lines().filter(|l| is_list_item(l.trim_start())).count();
    let sequencing =
        ["first", " then ", "after that", "finally", "step "].iter().filter(|w| text.contains(*w)).count();
    if steps >= 3 || sequencing >= 2 {
        return Some("it has several steps");
    }
    None
}

fn is_list_item(line: &str) -> bool {
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    (digits > 0 && line[digits..].starts_with(['.', ')'])) || line.starts_with("- ") || line.starts_with("* ")
}

#[cfg(test)]
mod tests {
    use flint_protocol::ReasoningEffort;

    use super::*;

    fn profile(name: &str, model: &str) -> Profile {
        Profile {
            name: name.into(),
            label: name.to_uppercase(),
            model: model.into(),
            params: GenParams::default(),
            system: None,
            kind: None,
            warnings: Vec::new(),
        }
    }

    fn list(profiles: Vec<Profile>) -> ModelList {
        ModelList { profiles, ..ModelList::default() }
    }

    #[test]
    fn a_profile_is_active_only_while_its_model_is_selected() {
        let l = list(vec![profile("spark", "o/fast"), profile("deep", "o/deep")]);
        assert_eq!(active(&l, Some("deep"), Some("o/deep")).map(|p| p.name.as_str()), Some("deep"));
        assert!(active(&l, Some("deep"), Some("o/fast")).is_none(), "a model picked by hand wins");
        assert!(active(&l, Some("gone"), Some("o/fast")).is_none(), "a profile this gateway lacks");
        assert!(active(&l, None, Some("o/fast")).is_none());
    }

    #[test]
    fn a_fresh_page_uses_the_first_profiles_model() {
        let l = list(vec![profile("spark", "o/fast"), profile("deep", "o/deep")]);
        assert_eq!(model_of(&l, None).as_deref(), Some("o/fast"));
        assert_eq!(model_of(&l, Some("deep")).as_deref(), Some("o/deep"));
        assert_eq!(model_of(&l, Some("gone")), None);
        assert_eq!(model_of(&list(Vec::new()), None), None);
    }

    #[test]
    fn the_toggle_goes_back_and_forth_and_cycles_through_more() {
        let two = list(vec![profile("spark", "a/1"), profile("deep", "a/2")]);
        assert_eq!(next(&two, None).map(|p| p.name.as_str()), Some("spark"));
        assert_eq!(next(&two, Some("spark")).map(|p| p.name.as_str()), Some("deep"));
        assert_eq!(next(&two, Some("deep")).map(|p| p.name.as_str()), Some("spark"));
        let three = list(vec![profile("a", "a/1"), profile("b", "a/2"), profile("c", "a/3")]);
        assert_eq!(next(&three, Some("c")).map(|p| p.name.as_str()), Some("a"));
        let one = list(vec![profile("only", "a/1")]);
        assert!(next(&one, Some("only")).is_none(), "nothing to switch to");
        assert!(next(&list(Vec::new()), None).is_none());
    }

    #[test]
    fn a_profile_adds_its_system_text_and_settings_only_to_its_own_model() {
        let mut deep = profile("deep", "o/deep");
        deep.system = Some("Plan before you write.".into());
        deep.params.reasoning_effort = Some(ReasoningEffort::High);
        let mut messages = vec![ChatMessage::new(Role::System, "Base."), ChatMessage::new(Role::User, "x")];
        let params = apply(Some(&deep), "o/deep", &mut messages);
        assert_eq!(params.reasoning_effort, Some(ReasoningEffort::High));
        assert_eq!(messages[0].content, "Base.\n\nPlan before you write.");
        let mut other = vec![ChatMessage::new(Role::User, "x")];
        assert_eq!(apply(Some(&deep), "o/fast", &mut other), GenParams::default());
        assert_eq!(other.len(), 1, "a compare's other model gets nothing of the profile");
        let mut bare = vec![ChatMessage::new(Role::User, "x")];
        apply(Some(&deep), "o/deep", &mut bare);
        assert_eq!(bare[0], ChatMessage::new(Role::System, "Plan before you write."));
    }

    #[test]
    fn a_lane_keeps_its_seed_and_temperature_over_the_profiles() {
        let base = GenParams {
            temperature: Some(0.2),
            max_tokens: Some(900),
            auto_continue: Some(2),
            ..GenParams::default()
        };
        let lane = GenParams { temperature: Some(0.7), seed: Some(5), ..GenParams::default() };
        let merged = merge(&base, &lane);
        assert_eq!(
            (merged.temperature, merged.seed, merged.max_tokens, merged.auto_continue),
            (Some(0.7), Some(5), Some(900), Some(2))
        );
    }

    #[test]
    fn deep_is_suggested_for_multi_step_multi_file_and_security_work_only() {
        assert!(deep_hint("A pomodoro timer with start, pause and reset buttons.").is_none());
        assert!(deep_hint("make the button red").is_none());
        assert_eq!(deep_hint("Add password login with sessions"), Some("it touches security"));
        assert_eq!(deep_hint("Refactor the app into modules"), Some("it spans files or restructures code"));
        assert_eq!(deep_hint("1. a form\n2. validation\n3. a results table"), Some("it has several steps"));
        assert_eq!(deep_hint("First fetch the data, then chart it"), Some("it has several steps"));
    }
}
