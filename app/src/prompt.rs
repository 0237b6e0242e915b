//! What Flint asks the model: one complete HTML page in one fenced block, so the preview can show it
//! while it streams.

use flint_protocol::prompt::SYSTEM_PROMPT;
use flint_protocol::{ChatMessage, GenParams, Role, StartRequest};

/// The request for `prompt` on `model` (the stream id is assigned by the gateway connection).
pub fn start_request(model: &str, prompt: &str) -> StartRequest {
    StartRequest {
        stream: 0,
        model: model.to_owned(),
        messages: vec![
            ChatMessage::new(Role::System, SYSTEM_PROMPT),
            ChatMessage::new(Role::User, prompt.trim()),
        ],
        params: GenParams::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_then_user() {
        let r = start_request("local/smollm2", "  a red button \n");
        assert_eq!(r.model, "local/smollm2");
        assert_eq!(r.messages[0].role, Role::System);
        assert!(r.messages[0].content.contains("```html"));
        assert_eq!(r.messages[1], ChatMessage::new(Role::User, "a red button"));
    }
}
