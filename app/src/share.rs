//! Shareable links as the page uses them: where a link sits in the address (`#p=<link>`), what Share
//! puts in it, and what to say about a shared model. The link format itself is
//! [`flint_protocol::share`].

pub mod stored_pictures;

use flint_protocol::ModelList;
use flint_protocol::share::{MAX_LINK_CHARS, SharedPrompt, encode, is_too_long};

/// The fragment key a shared prompt sits under: `#p=<link>`.
const KEY: &str = "p=";

/// The encoded link in a page's `location.hash` (`#p=…`), if it carries one. Anything after a `&` is
/// left for other keys a later Flint may add.
pub fn link_in_hash(hash: &str) -> Option<&str> {
    let fragment = hash.strip_prefix('#').unwrap_or(hash);
    let link = fragment.strip_prefix(KEY)?;
    Some(link.split('&').next().unwrap_or(link))
}

/// The address that opens `link`: the page without its query or fragment, then `#p=<link>`.
/// A fragment is never sent to a server, so the prompt stays between the people sharing it.
pub fn share_url(origin: &str, pathname: &str, link: &str) -> String {
    format!("{origin}{pathname}#{KEY}{link}")
}

/// What Share puts in a link: the prompt, the selected model and, when asked for and not blank, the
/// editor's code.
pub fn shared_prompt(prompt: String, model: Option<String>, code: Option<String>) -> SharedPrompt {
    SharedPrompt { model, code: code.filter(|c| !c.trim().is_empty()), ..SharedPrompt::new(prompt) }
}

/// What pressing Share produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShareOutcome {
    /// The address to give out.
    Link(String),
    /// The link would be longer than [`MAX_LINK_CHARS`], so it is not offered.
    TooLong {
        /// Its length in characters.
        chars: usize,
        /// Whether it carried code, so leaving the code out may help.
        with_code: bool,
        /// The encoded link, which the gateway can store under a short address instead.
        link: String,
    },
    /// Storing the link as a short one failed: the gateway's reason.
    Failed(String),
    /// The prompt has pictures, which only a stored link carries, and it is being stored.
    Storing,
    /// The prompt has pictures but they could not be stored: why ([`stored_pictures::not_carried`]),
    /// and the link without them when it is short enough to offer.
    WithoutPictures {
        /// The link carrying the rest of the prompt.
        url: Option<String>,
        /// The sentence saying why the pictures are not in it.
        why: String,
    },
}

/// Builds the address for `shared` on the page at `origin` + `pathname`, unless it is too long.
pub fn make_share(origin: &str, pathname: &str, shared: &SharedPrompt) -> ShareOutcome {
    let link = encode(shared);
    if is_too_long(&link) {
        ShareOutcome::TooLong { chars: link.len(), with_code: shared.code.is_some(), link }
    } else {
        ShareOutcome::Link(share_url(origin, pathname, &link))
    }
}

/// The sentence shown when a link is too long.
pub fn too_long_message(chars: usize, with_code: bool) -> String {
    let size = format!(
        "This link would be {chars} characters long; chat apps and some browsers cut links over {MAX_LINK_CHARS}."
    );
    if with_code {
        format!("{size} Store it as a short link, or share the prompt without the code?")
    } else {
        format!("{size} Store it as a short link, or shorten the prompt.")
    }
}

/// What the share dialog says about a stored link's expiry (`expires_at`, Unix seconds, as the
/// gateway answers it): the day it is kept until, in UTC; nothing for a link kept until deleted.
pub fn kept_until(expires_at: Option<i64>) -> Option<String> {
    let (year, month, day) = civil_date(expires_at?.div_euclid(86_400));
    Some(format!("Kept until {year:04}-{month:02}-{day:02} (UTC)"))
}

/// The proleptic Gregorian date `days` after 1970-01-01 (Howard Hinnant's `civil_from_days`), so
/// the page needs no date library or JavaScript `Date` for one line of text.
pub(crate) fn civil_date(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Why the model a link asked for cannot be selected here, or `None` when it can.
pub fn shared_model_problem(list: &ModelList, model: &str) -> Option<String> {
    match list.models.iter().find(|m| m.id == model) {
        Some(m) if m.available => None,
        Some(m) => Some(format!(
            "The shared prompt used {model}, which cannot run here ({}); the default model is selected instead.",
            m.problem.as_deref().unwrap_or("unavailable")
        )),
        None => Some(format!(
            "The shared prompt used {model}, which is not available here; the default model is selected instead."
        )),
    }
}

pub use flint_protocol::language::code_language;

#[cfg(test)]
mod tests {
    use flint_protocol::ModelInfo;
    use flint_protocol::share::decode;

    use super::*;

    #[test]
    fn links_are_found_under_p_only() {
        assert_eq!(link_in_hash("#p=v1.abc"), Some("v1.abc"));
        assert_eq!(link_in_hash("p=v1.abc"), Some("v1.abc"));
        assert_eq!(link_in_hash("#p=v1.abc&later=1"), Some("v1.abc"));
        assert_eq!(link_in_hash("#p="), Some(""));
        assert_eq!(link_in_hash(""), None);
        assert_eq!(link_in_hash("#"), None);
        assert_eq!(link_in_hash("#section-2"), None);
        assert_eq!(link_in_hash("#q=v1.abc"), None);
    }

    #[test]
    fn a_made_link_opens_to_what_was_shared() {
        let shared = shared_prompt("a clock".into(), Some("groq/llama".into()), Some("<p>".into()));
        let ShareOutcome::Link(url) = make_share("http://127.0.0.1:8787", "/", &shared) else {
            panic!("a short prompt was not offered as a link")
        };
        let (page, hash) = url.split_once('#').expect("the address has a fragment");
        assert_eq!(page, "http://127.0.0.1:8787/");
        let hash = format!("#{hash}");
        let link = link_in_hash(&hash).expect("the fragment holds a link");
        assert_eq!(decode(link), Ok(shared));
    }

    #[test]
    fn blank_code_is_left_out() {
        assert_eq!(shared_prompt("x".into(), None, Some(" \n".into())).code, None);
        assert_eq!(shared_prompt("x".into(), None, None), SharedPrompt::new("x"));
    }

    #[test]
    fn long_links_are_refused_and_say_whether_code_was_in() {
        // Pseudo-random printable text barely compresses, so the link outgrows the limit.
        let mut x: u32 = 0x9E37_79B9;
        let noise: String = (0..20_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                char::from(b'!' + (x % 94) as u8)
            })
            .collect();
        let with_code = shared_prompt("x".into(), None, Some(noise.clone()));
        assert!(matches!(
            make_share("o", "/", &with_code),
            ShareOutcome::TooLong { with_code: true, chars, .. } if chars > MAX_LINK_CHARS
        ));
        let without = shared_prompt(noise, None, None);
        assert!(matches!(make_share("o", "/", &without), ShareOutcome::TooLong { with_code: false, .. }));
        assert!(too_long_message(9_000, true).contains("without the code"));
        assert!(!too_long_message(9_000, false).contains("without the code"));
    }

    fn model(id: &str, available: bool) -> ModelInfo {
        ModelInfo {
            id: id.into(),
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
            problem: (!available).then(|| "no key".into()),
        }
    }

    #[test]
    fn shared_models_are_checked_against_this_gateway() {
        let list = ModelList {
            models: vec![model("a/x", true), model("b/y", false)],
            default: None,
            notice: None,
            ..ModelList::default()
        };
        assert_eq!(shared_model_problem(&list, "a/x"), None);
        assert!(shared_model_problem(&list, "b/y").is_some_and(|m| m.contains("no key")));
        assert!(shared_model_problem(&list, "c/z").is_some_and(|m| m.contains("not available here")));
    }

    #[test]
    fn a_stored_links_expiry_is_shown_as_its_day() {
        assert_eq!(kept_until(None), None, "kept until deleted: nothing to say");
        assert_eq!(kept_until(Some(0)).as_deref(), Some("Kept until 1970-01-01 (UTC)"));
        assert_eq!(kept_until(Some(951_782_400)).as_deref(), Some("Kept until 2000-02-29 (UTC)"));
        assert_eq!(
            kept_until(Some(1_700_000_000 + 90 * 86_400)).as_deref(),
            Some("Kept until 2024-02-12 (UTC)")
        );
        assert_eq!(kept_until(Some(4_102_444_799)).as_deref(), Some("Kept until 2099-12-31 (UTC)"));
    }
}
