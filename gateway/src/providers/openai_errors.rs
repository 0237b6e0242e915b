//! Failed OpenAI-compatible requests → [`ProviderError`]s a person can act on.
//!
//! Messages name the provider and what to change; they never contain the key (upstream text is
//! scrubbed of it in any form, see [`Redactor`], and a 401's upstream text, which often echoes
//! part of the key, is only used when no key was sent). The upstream's own reason is kept: a
//! person can act on "Requested tokens (6015) exceed context window of 2048", not on "400".

use std::time::{Duration, SystemTime};

use reqwest::StatusCode;
use reqwest::header::{HeaderMap, RETRY_AFTER};

use super::ProviderError;
use super::redact::Redactor;
use super::upstream_http::SendError;

/// Where a provider's key comes from, for telling the person what to check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum KeyHint {
    /// An environment variable named in `api_key_env`.
    Env(String),
    /// `api_key` in `flint.toml`.
    ConfigFile,
    /// No key is configured.
    None,
    /// The quick start's variable, unset: a server that wants no key is fine without it.
    Unset(String),
    /// The person's own key (`allow_user_keys`).
    User,
}

/// Largest error body read from an upstream.
const MAX_ERROR_BODY: usize = 64 * 1024;
/// Longest upstream message passed on.
const MAX_MESSAGE_CHARS: usize = 300;

/// An upstream's message as a person sees it: on one line, without the key, shortened. The key
/// is scrubbed before shortening, so a cut cannot leave a piece too short to be recognised.
pub(crate) fn tidy(message: &str, redactor: &Redactor) -> String {
    let one_line = message.split_whitespace().collect::<Vec<_>>().join(" ");
    let scrubbed = redactor.scrub(&one_line);
    let mut short: String = scrubbed.chars().take(MAX_MESSAGE_CHARS).collect();
    if short.len() < scrubbed.len() {
        short.push('…');
    }
    short
}

/// The request never got an answer.
pub(crate) fn connect_error(name: &str, err: &SendError) -> ProviderError {
    let at = err.host().map(|h| format!(" at {h}")).unwrap_or_default();
    let described = match err {
        SendError::Reqwest(err) => describe(err),
        other => chain(other),
    };
    tracing::warn!(provider = name, error = %described, "request failed");
    let message = if err.is_timeout() {
        format!("{name}{at} did not answer in time")
    } else if err.is_connect() {
        format!("could not connect to {name}{at}; is it running and is base_url right?")
    } else {
        format!("the request to {name}{at} failed before an answer came")
    };
    ProviderError::Unavailable(message)
}

/// An error and its causes, for logs (hyper's errors name no URL).
fn chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// The error and its causes, without the URL (which could carry credentials in a query), for logs.
pub(crate) fn describe(err: &reqwest::Error) -> String {
    let text = chain(err);
    match err.url() {
        Some(url) => text.replace(url.as_str(), "<url>"),
        None => text,
    }
}

/// A non-success status, with the upstream's short message where it sent JSON.
pub(crate) async fn status_error(
    name: &str,
    model: &str,
    hint: &KeyHint,
    redactor: &Redactor,
    mut response: reqwest::Response,
) -> ProviderError {
    let status = response.status();
    if status.is_redirection() {
        // Not followed (see `openai::http_client`): where it points and what it says are another
        // host's, which the person has no business reading; the operator's log has the target.
        let to = response.headers().get(reqwest::header::LOCATION).and_then(|l| l.to_str().ok());
        tracing::warn!(provider = name, %status, location = to.unwrap_or(""), "upstream redirected; not followed");
        return redirected(name, status);
    }
    let retry_after = retry_after(response.headers(), SystemTime::now());
    let mut body = Vec::new();
    while body.len() < MAX_ERROR_BODY {
        match response.chunk().await {
            Ok(Some(bytes)) => body.extend_from_slice(&bytes),
            _ => break,
        }
    }
    let upstream = upstream_message(&body, redactor);
    let context = serde_json::from_slice::<serde_json::Value>(&body)
        .is_ok_and(|v| is_context_refusal(v.get("error").unwrap_or(&v)));
    tracing::warn!(provider = name, %status, message = upstream.as_deref().unwrap_or(""), "upstream refused");
    let refusal = Refusal { status, upstream, context, retry_after };
    classify(name, model, hint, refusal)
}

/// A redirect, which the gateway does not follow: the error names its status and nothing it said.
fn redirected(name: &str, status: StatusCode) -> ProviderError {
    ProviderError::Unavailable(format!(
        "{name} answered {status}, a redirect, which this gateway does not follow (the prompt and \
         key go only to the configured base_url); set base_url to the address that answers"
    ))
}

/// What a failed response said.
#[derive(Debug)]
pub(crate) struct Refusal {
    /// Its status.
    pub status: StatusCode,
    /// Its message, [tidied](tidy).
    pub upstream: Option<String>,
    /// Its code or type says the prompt does not fit the context (whatever the message says).
    pub context: bool,
    /// When to retry, if it said.
    pub retry_after: Option<Duration>,
}

/// The mapping itself, apart from I/O so it can be tested.
pub(crate) fn classify(name: &str, model: &str, hint: &KeyHint, refusal: Refusal) -> ProviderError {
    let Refusal { status, upstream, context, retry_after } = refusal;
    let detail = upstream.as_deref().map(|m| format!(": {m}")).unwrap_or_default();
    match status {
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => {
            // Without a key sent, the upstream's words cannot echo one, and they say what it wants.
            let check = match hint {
                KeyHint::Env(var) => format!("the provider rejected the API key for {name}; check {var}"),
                KeyHint::ConfigFile => {
                    format!("the provider rejected the API key for {name}; check api_key in flint.toml")
                }
                KeyHint::None => format!(
                    "{name} wants an API key and none is configured; set api_key_env (or api_key) for it in flint.toml{detail}"
                ),
                KeyHint::Unset(var) => format!("{name} wants an API key; set {var}{detail}"),
                KeyHint::User => format!(
                    "{name} rejected your own key; check it under Keys, or remove it to use this gateway's"
                ),
            };
            ProviderError::Unauthorized(check)
        }
        StatusCode::NOT_FOUND => {
            ProviderError::UnknownModel(format!("{name} does not know the model {model}{detail}"))
        }
        StatusCode::TOO_MANY_REQUESTS => {
            let wait =
                retry_after.map(|d| format!("; retry in {} s", d.as_secs_f64().ceil())).unwrap_or_default();
            ProviderError::RateLimited {
                message: format!("{name} is rate limiting requests{wait}{detail}"),
                retry_after,
            }
        }
        StatusCode::PAYLOAD_TOO_LARGE => {
            ProviderError::PromptTooLarge(format!("the prompt is too large for {name}{detail}"))
        }
        // Servers refuse an oversized prompt with 400, 413, 422 or even 500 (older llama.cpp).
        _ if context || upstream.as_deref().is_some_and(mentions_context_length) => {
            ProviderError::PromptTooLarge(format!("the prompt does not fit {model}'s context{detail}"))
        }
        _ => ProviderError::Unavailable(format!("{name} answered {status}{detail}")),
    }
}

/// Whether an upstream error object (or bare message) says the prompt does not fit the context:
/// by its `code` or `type` (OpenAI's `context_length_exceeded`, llama.cpp's
/// `exceed_context_size_error`), or in its words.
pub(crate) fn is_context_refusal(error: &serde_json::Value) -> bool {
    let coded = ["code", "type"].iter().filter_map(|field| error.get(*field)?.as_str()).any(|value| {
        let value = value.to_ascii_lowercase();
        value.contains("context_length") || value.contains("context_size")
    });
    coded || mentions_context_length(&error_message(error))
}

/// The phrasings of OpenAI, vLLM ("maximum context length"), llama.cpp ("exceed context window",
/// "exceeds the available context size"), Anthropic-style gateways and others.
fn mentions_context_length(message: &str) -> bool {
    let message = message.to_ascii_lowercase();
    [
        "context length",
        "context_length",
        "context window",
        "context size",
        "maximum context",
        "prompt is too long",
        "too many tokens",
    ]
    .iter()
    .any(|needle| message.contains(needle))
}

/// The upstream's error message from a JSON body (`{"error": {"message"}}`, `{"error": "…"}`,
/// `{"message"}` or `{"detail"}`), [tidied](tidy).
pub(crate) fn upstream_message(body: &[u8], redactor: &Redactor) -> Option<String> {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(body) else {
        return plain_text(body).map(|text| tidy(text, redactor));
    };
    let message = match (value.get("error"), value.get("message"), value.get("detail")) {
        (Some(error), _, _) => error_message(error),
        (None, Some(serde_json::Value::String(m)), _) | (None, None, Some(serde_json::Value::String(m))) => {
            m.clone()
        }
        _ => return None,
    };
    Some(tidy(&message, redactor)).filter(|m| !m.is_empty())
}

/// A body that is short plain text (some servers answer errors that way), not an HTML page.
fn plain_text(body: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(body).ok()?.trim();
    (!text.is_empty() && !text.starts_with('<') && text.len() <= 2 * MAX_MESSAGE_CHARS).then_some(text)
}

/// `retry-after-ms`, or `retry-after` in seconds or as an HTTP date.
pub(crate) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    if let Some(ms) = headers.get("retry-after-ms").and_then(|v| v.to_str().ok()?.trim().parse::<f64>().ok())
    {
        return (ms.is_finite() && ms >= 0.0).then(|| Duration::from_secs_f64(ms / 1000.0));
    }
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// The message of an OpenAI-style error value (`{"message": …}` or a bare string).
pub(crate) fn error_message(error: &serde_json::Value) -> String {
    error
        .get("message")
        .and_then(serde_json::Value::as_str)
        .or_else(|| error.as_str())
        .unwrap_or("unknown error")
        .to_owned()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn env_hint() -> KeyHint {
        KeyHint::Env("CEREBRAS_API_KEY".into())
    }

    fn classify(
        name: &str,
        model: &str,
        hint: &KeyHint,
        status: StatusCode,
        upstream: Option<String>,
        retry_after: Option<Duration>,
    ) -> ProviderError {
        super::classify(name, model, hint, Refusal { status, upstream, context: false, retry_after })
    }

    #[test]
    fn statuses_map_to_errors_a_person_can_act_on() {
        let err = classify("cerebras", "m", &env_hint(), StatusCode::UNAUTHORIZED, Some("sk-1".into()), None);
        assert_eq!(
            err,
            ProviderError::Unauthorized(
                "the provider rejected the API key for cerebras; check CEREBRAS_API_KEY".into()
            )
        );
        let err = classify("groq", "m", &env_hint(), StatusCode::NOT_FOUND, None, None);
        assert!(matches!(err, ProviderError::UnknownModel(_)), "{err:?}");
        let ctx = Some("This model's maximum context length is 8192 tokens".to_owned());
        let err = classify("groq", "m", &env_hint(), StatusCode::BAD_REQUEST, ctx, None);
        assert!(matches!(err, ProviderError::PromptTooLarge(_)), "{err:?}");
        let err = classify("groq", "m", &env_hint(), StatusCode::BAD_REQUEST, Some("bad top_p".into()), None);
        assert_eq!(err, ProviderError::Unavailable("groq answered 400 Bad Request: bad top_p".into()));
        let wait = Some(Duration::from_secs(7));
        let err = classify("groq", "m", &env_hint(), StatusCode::TOO_MANY_REQUESTS, None, wait);
        assert_eq!(err.retry_after(), wait);
        assert!(err.to_string().contains("retry in 7 s"), "{err}");
    }

    #[test]
    fn without_a_key_a_refusal_says_a_key_is_wanted_and_where_to_put_it() {
        let said = Some("Invalid API Key".to_owned());
        let err = classify("llamacpp", "m", &KeyHint::None, StatusCode::UNAUTHORIZED, said.clone(), None);
        assert_eq!(
            err.to_string(),
            "llamacpp wants an API key and none is configured; set api_key_env (or api_key) for it in flint.toml: Invalid API Key"
        );
        let quick = KeyHint::Unset("FLINT_OPENAI_API_KEY".into());
        let err = classify("openai-compatible", "m", &quick, StatusCode::FORBIDDEN, said, None);
        assert_eq!(
            err.to_string(),
            "openai-compatible wants an API key; set FLINT_OPENAI_API_KEY: Invalid API Key"
        );
    }

    #[test]
    fn context_refusals_are_recognised_in_every_phrasing_and_status() {
        let refusals = [
            json!({ "message": "This model's maximum context length is 8192 tokens", "code": "context_length_exceeded" }),
            json!({ "message": "Requested tokens (6015) exceed context window of 2048" }),
            json!({ "message": "the request exceeds the available context size, try increasing it", "type": "exceed_context_size_error" }),
            json!({ "message": "bad", "code": "context_length_exceeded" }),
            json!("Too many tokens in the prompt"),
        ];
        for refusal in &refusals {
            assert!(is_context_refusal(refusal), "{refusal}");
        }
        assert!(!is_context_refusal(&json!({ "message": "bad top_p", "code": "invalid_value" })));
        for status in
            [StatusCode::BAD_REQUEST, StatusCode::UNPROCESSABLE_ENTITY, StatusCode::INTERNAL_SERVER_ERROR]
        {
            let refusal = Refusal { status, upstream: Some("x".into()), context: true, retry_after: None };
            let err = super::classify("vllm", "m", &env_hint(), refusal);
            assert_eq!(err, ProviderError::PromptTooLarge("the prompt does not fit m's context: x".into()));
        }
    }

    #[test]
    fn retry_after_reads_seconds_dates_and_milliseconds() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
        let mut headers = HeaderMap::new();
        headers.insert(RETRY_AFTER, "7".parse().expect("header"));
        assert_eq!(retry_after(&headers, now), Some(Duration::from_secs(7)));
        let later = httpdate::fmt_http_date(now + Duration::from_secs(30));
        headers.insert(RETRY_AFTER, later.parse().expect("header"));
        assert_eq!(retry_after(&headers, now), Some(Duration::from_secs(30)));
        headers.insert("retry-after-ms", "1500".parse().expect("header"));
        assert_eq!(retry_after(&headers, now), Some(Duration::from_millis(1500)));
        assert_eq!(retry_after(&HeaderMap::new(), now), None);
    }

    #[test]
    fn upstream_messages_are_short_single_lines_without_the_key() {
        let redactor = Redactor::new(Some("sk-secret-0123456789"));
        let body = br#"{"error":{"message":"Invalid key SK-SECRET-0123456789\nsee docs","type":"x"}}"#;
        let message = upstream_message(body, &redactor).expect("a message");
        assert_eq!(message, "Invalid key [redacted] see docs");
        assert_eq!(upstream_message(br#"{"detail":"Not Found"}"#, &redactor).as_deref(), Some("Not Found"));
        assert_eq!(upstream_message(b"<html>oops</html>", &redactor), None);
        assert_eq!(upstream_message(b"model not loaded\n", &redactor).as_deref(), Some("model not loaded"));
        let long = format!(r#"{{"error":"{}"}}"#, "x".repeat(1000));
        assert_eq!(
            upstream_message(long.as_bytes(), &redactor).expect("message").chars().count(),
            MAX_MESSAGE_CHARS + 1
        );
    }

    #[test]
    fn a_key_at_the_cut_is_scrubbed_before_the_message_is_shortened() {
        let key = "sk-secret-0123456789";
        let redactor = Redactor::new(Some(key));
        // The key straddles the 300th character: cut first, the 10 letters and digits before the
        // cut would be too few to recognise.
        let message = format!("{} {key}", "x".repeat(MAX_MESSAGE_CHARS - 13));
        assert_eq!(tidy(&message, &redactor), format!("{} [redacted]", "x".repeat(MAX_MESSAGE_CHARS - 13)));
    }
}
