//! Turns a conversation into the model's prompt text with the chat template stored in the GGUF
//! (`tokenizer.chat_template`), rendered by minijinja.
//!
//! llama.cpp's built-in template matcher recognises SmolLM2's template as ChatML but drops its
//! system message handling, so the Jinja source itself is rendered here. A model without a template
//! gets ChatML, with a warning in the log.

use flint_protocol::{ChatMessage, Role};
use minijinja::{Environment, ErrorKind, context};

/// Used when the GGUF has no chat template.
const CHATML: &str = "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + \
                      message['content'] + '<|im_end|>\n' }}{% endfor %}{% if add_generation_prompt \
                      %}{{ '<|im_start|>assistant\n' }}{% endif %}";

/// The system prompt put in front of every conversation: tuned so that SmolLM2-135M answers with
/// one complete HTML document in one fenced block as often as it can (see `bench/local-quality.md`),
/// and against the checks best of N ranks by (`bench/judge.md`): the script at the end of the body
/// (scripts in `<head>` looked up elements not yet there) and buttons that do something. Tried and
/// left out: naming what not to use ("no CDN, no images from the web") made this model add CDN
/// scripts more often (failed loads 13 → 32 of best of 8's pages), and a worked example was copied
/// into every answer ("a tip calculator" became the example's button).
pub const TUNED_SYSTEM_PROMPT: &str = "You are a web developer. Reply with one complete HTML file in a ```html code block: <!DOCTYPE html>, <html>, <head> with <style>, <body> with the page and its <script> at the end of the body, ending with </html>. Every button must change the page when clicked. No explanations.";

/// Why a conversation could not be rendered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// The template source does not parse.
    #[error("the model's chat template is not valid Jinja: {0}")]
    Invalid(String),
    /// Rendering failed (the template raised an error or used something unsupported).
    #[error("the model's chat template could not render this conversation: {0}")]
    Render(String),
}

/// Where the template came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TemplateSource {
    /// `tokenizer.chat_template` in the GGUF.
    Gguf,
    /// The GGUF has none; ChatML is used.
    ChatMlFallback,
}

/// A compiled chat template.
pub struct ChatTemplate {
    env: Environment<'static>,
    source: TemplateSource,
    bos: String,
    eos: String,
}

impl std::fmt::Debug for ChatTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatTemplate").field("source", &self.source).finish_non_exhaustive()
    }
}

impl ChatTemplate {
    /// Compiles the GGUF's template, or ChatML when it has none. `bos`/`eos` are the model's special
    /// token texts, which many templates print.
    pub fn new(gguf_template: Option<&str>, bos: &str, eos: &str) -> Result<Self, TemplateError> {
        let (source_text, source) = match gguf_template {
            Some(t) if !t.trim().is_empty() => (t.to_owned(), TemplateSource::Gguf),
            _ => {
                tracing::warn!("the model has no chat template in its GGUF metadata; using ChatML");
                (CHATML.to_owned(), TemplateSource::ChatMlFallback)
            }
        };
        let mut env = Environment::new();
        // Hugging Face templates are written for Python's Jinja: `.strip()`, `.startswith()` …
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_function("raise_exception", |message: String| -> Result<String, minijinja::Error> {
            Err(minijinja::Error::new(ErrorKind::InvalidOperation, message))
        });
        env.add_template_owned("chat", source_text).map_err(|e| TemplateError::Invalid(e.to_string()))?;
        Ok(Self { env, source, bos: bos.to_owned(), eos: eos.to_owned() })
    }

    /// Where the template came from.
    pub fn source(&self) -> TemplateSource {
        self.source
    }

    /// Renders `messages` followed by the assistant's turn opener.
    pub fn render(&self, messages: &[ChatMessage]) -> Result<String, TemplateError> {
        let messages: Vec<_> = messages
            .iter()
            .map(|m| context! { role => role_name(m.role), content => m.content.as_str() })
            .collect();
        let template = self.env.get_template("chat").map_err(|e| TemplateError::Invalid(e.to_string()))?;
        template
            .render(context! {
                messages => messages,
                add_generation_prompt => true,
                bos_token => self.bos.as_str(),
                eos_token => self.eos.as_str(),
            })
            .map_err(|e| TemplateError::Render(e.to_string()))
    }
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

/// Puts the tuned system prompt in front of the conversation.
///
/// Without a system message the tuned one is added. With one, the tuned text comes first and the
/// client's follows in the same message: the tuned part carries the output format this small model
/// needs for the preview, the client's carries whatever else it wants. `tuned` empty leaves the
/// conversation unchanged.
pub fn with_system_prompt(messages: &[ChatMessage], tuned: &str) -> Vec<ChatMessage> {
    if tuned.is_empty() {
        return messages.to_vec();
    }
    match messages.first() {
        Some(first) if first.role == Role::System => {
            let mut out = messages.to_vec();
            out[0].content = format!("{tuned}\n\n{}", first.content);
            out
        }
        _ => {
            let mut out = Vec::with_capacity(messages.len() + 1);
            out.push(ChatMessage::new(Role::System, tuned));
            out.extend_from_slice(messages);
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMOLLM2: &str = "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

    #[test]
    fn smollm2_keeps_the_system_prompt() {
        let t = ChatTemplate::new(Some(SMOLLM2), "<|im_start|>", "<|im_end|>").unwrap();
        let text = t
            .render(&[ChatMessage::new(Role::System, "Be brief."), ChatMessage::new(Role::User, "hi")])
            .unwrap();
        assert_eq!(
            text,
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
        );
    }

    #[test]
    fn missing_template_falls_back_to_chatml() {
        let t = ChatTemplate::new(None, "", "").unwrap();
        assert_eq!(t.source(), TemplateSource::ChatMlFallback);
        let text = t.render(&[ChatMessage::new(Role::User, "hi")]).unwrap();
        assert_eq!(text, "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
    }

    #[test]
    fn python_methods_and_raise_exception_work() {
        let src = "{% if messages[0]['role'] == 'assistant' %}{{ raise_exception('bad') }}{% endif %}{{ messages[0]['content'].strip() }}";
        let t = ChatTemplate::new(Some(src), "", "").unwrap();
        assert_eq!(t.render(&[ChatMessage::new(Role::User, "  x ")]).unwrap(), "x");
        let err = t.render(&[ChatMessage::new(Role::Assistant, "x")]).unwrap_err();
        assert!(matches!(err, TemplateError::Render(m) if m.contains("bad")));
    }

    #[test]
    fn tuned_prompt_is_added_or_combined() {
        let user = ChatMessage::new(Role::User, "a button");
        let added = with_system_prompt(std::slice::from_ref(&user), "T");
        assert_eq!(added, vec![ChatMessage::new(Role::System, "T"), user.clone()]);
        let client = ChatMessage::new(Role::System, "C");
        let combined = with_system_prompt(&[client, user.clone()], "T");
        assert_eq!(combined[0].content, "T\n\nC");
        assert_eq!(combined.len(), 2);
        assert_eq!(with_system_prompt(std::slice::from_ref(&user), ""), vec![user]);
    }
}
