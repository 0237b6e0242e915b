//! Continuing an answer cut off at `max_tokens`, for tests of the gateway's auto-continue.
//!
//! With [`crate::Options::continuation`] set, a request whose messages end with an `assistant`
//! message holding the start of the script's text, then a `user` message (the request to go on),
//! is served the rest of the text, under its own `max_tokens`. Any other request (a follow-up
//! about an earlier answer) is served from the start as usual.

use serde_json::Value;

/// How the server continues a cut-off answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Continuation {
    /// From exactly the next character, as asked.
    #[default]
    Exact,
    /// As models often do: first reopen the code fence the text stopped inside (its opening line
    /// again), then repeat the text's last `repeat` characters, then go on.
    Sloppy {
        /// Characters of the text so far written again.
        repeat: usize,
    },
    /// Answer 500, as an upstream failing part-way through a long answer.
    Fail,
}

/// The answer so far, when `body` asks to continue one: its last two messages are an `assistant`
/// message with text, then a `user` message.
pub(crate) fn answer_so_far(body: &Value) -> Option<&str> {
    let messages = body.get("messages")?.as_array()?;
    let [.., assistant, user] = messages.as_slice() else {
        return None;
    };
    let role = |m: &Value| m.get("role").and_then(Value::as_str).map(str::to_owned);
    if role(assistant)?.as_str() != "assistant" || role(user)?.as_str() != "user" {
        return None;
    }
    assistant.get("content")?.as_str().filter(|text| !text.is_empty())
}

/// What continues `so_far` when the whole answer is `full`; `None` when `so_far` is not its start.
pub(crate) fn rest(how: Continuation, full: &str, so_far: &str) -> Option<String> {
    let rest = full.strip_prefix(so_far)?;
    let Continuation::Sloppy { repeat } = how else {
        return Some(rest.to_owned());
    };
    let mut text = open_fence_line(so_far).map(|line| format!("{line}\n")).unwrap_or_default();
    let start = so_far.char_indices().rev().nth(repeat.saturating_sub(1)).map_or(0, |(at, _)| at);
    text.push_str(if repeat == 0 { "" } else { &so_far[start..] });
    text.push_str(rest);
    Some(text)
}

/// The opening line of the ```` ``` ```` fence `text` ends inside, if it does.
fn open_fence_line(text: &str) -> Option<&str> {
    let mut open = None;
    for line in text.split('\n') {
        if line.trim_start().starts_with("```") {
            open = if open.is_some() { None } else { Some(line) };
        }
    }
    open
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_request_to_go_on_is_recognised() {
        let body = json!({ "messages": [
            { "role": "user", "content": "make a page" },
            { "role": "assistant", "content": "Here it is" },
            { "role": "user", "content": "go on" },
        ] });
        assert_eq!(answer_so_far(&body), Some("Here it is"));
        let first = json!({ "messages": [{ "role": "user", "content": "make a page" }] });
        assert_eq!(answer_so_far(&first), None);
    }

    #[test]
    fn the_rest_follows_the_text_so_far() {
        let full = "Page:\n```html\n<p>one</p>\n<p>two</p>\n```\n";
        let so_far = "Page:\n```html\n<p>one</p>\n<p>t";
        assert_eq!(rest(Continuation::Exact, full, so_far).as_deref(), Some("wo</p>\n```\n"));
        let sloppy = rest(Continuation::Sloppy { repeat: 5 }, full, so_far);
        assert_eq!(sloppy.as_deref(), Some("```html\n\n<p>two</p>\n```\n"));
        assert_eq!(rest(Continuation::Exact, full, "Something else"), None);
    }
}
