//! What a Responses request says: the body (the same over HTTP and in WebSocket mode, less
//! `stream`), and whether a request continues the conversation a socket's last response covered.

use flint_protocol::{ChatMessage, Role};
use serde_json::{Value, json};

use super::GenRequest;
use crate::config::ReasoningSummary;

/// What a model is sent about reasoning: whether it takes reasoning keys at all
/// ([`crate::config::ModelConfig::reasoning`]), and the summary its provider asks for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Reasoning {
    pub on: bool,
    pub summary: Option<ReasoningSummary>,
}

/// The smallest `max_output_tokens` OpenAI accepts; a smaller limit is refused with a 400.
const MIN_OUTPUT_TOKENS: u32 = 16;

/// The request body for `input` (all of `request.messages`, or only the new ones after
/// `previous`). `reasoning`: whether the model takes reasoning keys, and the summary to ask for.
///
/// `store: false`: nothing is kept at the provider beyond the connection (WebSocket mode keeps
/// the last response in the socket's memory, which is all a follow-up needs). No `seed`: the
/// Responses API has none. Reasoning models get `reasoning.effort`, `reasoning.summary` (only where
/// the operator asked: OpenAI refuses summaries to organisations it has not verified) and
/// `text.verbosity`, and never `temperature`/`top_p`, which they refuse; other models the other
/// way round.
pub(crate) fn body(
    request: &GenRequest,
    reasoning: Reasoning,
    input: &[ChatMessage],
    previous: Option<&str>,
) -> Value {
    let mut body = json!({
        "model": request.model,
        "input": input_items(input),
        "store": false,
    });
    if let Some(previous) = previous {
        body["previous_response_id"] = previous.into();
    }
    let params = &request.params;
    if let Some(max) = params.max_tokens {
        body["max_output_tokens"] = max.max(MIN_OUTPUT_TOKENS).into();
    }
    if reasoning.on {
        if let Some(effort) = params.reasoning_effort {
            body["reasoning"]["effort"] = effort.as_str().into();
        }
        if let Some(summary) = reasoning.summary {
            body["reasoning"]["summary"] = summary.as_str().into();
        }
        if let Some(verbosity) = params.verbosity {
            body["text"] = json!({ "verbosity": verbosity.as_str() });
        }
    } else {
        if let Some(t) = params.temperature {
            body["temperature"] = super::decimal(t);
        }
        if let Some(p) = params.top_p {
            body["top_p"] = super::decimal(p);
        }
    }
    body
}

/// Messages as input items: `{"type": "message", "role", "content"}` with the text as a string,
/// a form the API takes for every role, the assistant's earlier answers included. A message with
/// images gets a list instead: an `input_text` part, then one `input_image` per image as a data URL.
fn input_items(messages: &[ChatMessage]) -> Vec<Value> {
    messages
        .iter()
        .map(|m| {
            let role = match m.role {
                Role::System => "system",
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            if m.images.is_empty() {
                return json!({ "type": "message", "role": role, "content": m.content });
            }
            let text = std::iter::once(json!({ "type": "input_text", "text": m.content }));
            let images = m.images.iter().map(|i| json!({ "type": "input_image", "image_url": i.data_url() }));
            json!({ "type": "message", "role": role, "content": text.chain(images).collect::<Vec<_>>() })
        })
        .collect()
}

/// The conversation a socket's last response covered: its id, the messages it was asked with,
/// and its answer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Thread {
    /// The response the upstream keeps in the socket's memory.
    pub response_id: String,
    /// The request's messages followed by the answer, as the browser got it.
    pub covered: Vec<ChatMessage>,
}

impl Thread {
    /// The thread after `response_id` answered `messages` with `answer`.
    pub(crate) fn after(response_id: &str, messages: &[ChatMessage], answer: &str) -> Self {
        let mut covered = messages.to_vec();
        covered.push(ChatMessage::new(Role::Assistant, answer));
        Self { response_id: response_id.to_owned(), covered }
    }

    /// The messages `messages` adds to this thread, when it starts with exactly the thread and
    /// adds at least one: only then may it go as `previous_response_id` plus those. Anything
    /// else (an earlier turn edited, another answer carried, a retry of the same prompt) goes
    /// whole.
    pub(crate) fn new_input<'a>(&self, messages: &'a [ChatMessage]) -> Option<&'a [ChatMessage]> {
        let n = self.covered.len();
        (messages.len() > n && messages[..n] == self.covered[..]).then(|| &messages[n..])
    }
}

#[cfg(test)]
mod tests {
    use flint_protocol::{GenParams, ReasoningEffort, Verbosity};

    use super::*;

    fn request(messages: Vec<ChatMessage>, params: GenParams) -> GenRequest {
        GenRequest { client: 1, person: 1, key: None, model: "gpt-5.3-codex".into(), messages, params }
    }

    fn user(text: &str) -> ChatMessage {
        ChatMessage::new(Role::User, text)
    }

    #[test]
    fn reasoning_keys_go_to_reasoning_models_and_sampling_to_the_others() {
        let params = GenParams {
            max_tokens: Some(4),
            temperature: Some(0.2),
            top_p: Some(0.9),
            seed: Some(7),
            reasoning_effort: Some(ReasoningEffort::Xhigh),
            verbosity: Some(Verbosity::Low),
            ..GenParams::default()
        };
        let request = request(vec![ChatMessage::new(Role::System, "be brief"), user("hi")], params);
        let on = Reasoning { on: true, summary: None };
        let body = body(&request, on, &request.messages, None);
        assert_eq!(body["reasoning"], json!({ "effort": "xhigh" }), "no summary unless asked for");
        assert_eq!(body["text"], json!({ "verbosity": "low" }));
        assert_eq!(body["max_output_tokens"], 16, "raised to the API's minimum");
        assert_eq!(body["store"], false);
        assert_eq!(body["input"][0], json!({ "type": "message", "role": "system", "content": "be brief" }));
        for absent in ["temperature", "top_p", "seed", "stream", "previous_response_id"] {
            assert!(body.get(absent).is_none(), "{absent} in {body}");
        }
        let asked = Reasoning { on: true, summary: Some(ReasoningSummary::Auto) };
        let summarised = super::body(&request, asked, &request.messages, None);
        assert_eq!(summarised["reasoning"], json!({ "effort": "xhigh", "summary": "auto" }));
        let off = Reasoning { on: false, summary: Some(ReasoningSummary::Auto) };
        let plain = super::body(&request, off, &request.messages[1..], Some("resp_1"));
        assert!(plain.get("reasoning").is_none() && plain.get("text").is_none(), "{plain}");
        assert_eq!(plain["temperature"], 0.2f32);
        assert_eq!(plain["previous_response_id"], "resp_1");
        assert_eq!(plain["input"].as_array().map(Vec::len), Some(1));
    }

    #[test]
    fn only_an_exact_extension_of_the_thread_continues_it() {
        let first = vec![ChatMessage::new(Role::System, "s"), user("make a page")];
        let thread = Thread::after("resp_1", &first, "<p>page</p>");
        let mut next = thread.covered.clone();
        next.push(user("make it blue"));
        assert_eq!(thread.new_input(&next), Some(&next[3..]));
        // The same prompt again (a retry, another variation): whole.
        assert_eq!(thread.new_input(&first), None);
        // The thread itself, nothing new: whole.
        assert_eq!(thread.new_input(&thread.covered), None);
        // Another answer carried (the person picked a different variation): whole.
        let mut other = first.clone();
        other.push(ChatMessage::new(Role::Assistant, "<p>other</p>"));
        other.push(user("make it blue"));
        assert_eq!(thread.new_input(&other), None);
        // An earlier turn dropped to fit the context: whole.
        let mut dropped = next.clone();
        dropped.remove(1);
        assert_eq!(thread.new_input(&dropped), None);
    }
}
