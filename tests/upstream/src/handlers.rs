//! HTTP handlers: the chat-completions script and the log endpoints.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::Shared;
use crate::continuation::{self, Continuation};
use crate::log::RequestRecord;
use crate::paced::{self, Answer};
use crate::script::{
    self, CONTEXT_MIDSTREAM, CONTEXT_REFUSAL, CONTEXT_UNSTREAMED, DROP_MIDWAY_TEXT, GARBAGE_BODY,
    LEAK_PREFIX, LEAK_SUFFIX, Leak, NO_FINISH_TEXT, RETRY_AFTER_SECS, Script, WANTS_KEY_TEXT,
    WHOLE_ONLY_TEXT,
};

/// `POST /v1/chat/completions`.
pub(crate) async fn chat_completions(
    State(shared): State<Arc<Shared>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let id = shared.log.next_id();
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let model = body.get("model").and_then(Value::as_str).unwrap_or_default().to_owned();
    let authorization = headers.contains_key(header::AUTHORIZATION);
    let key = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok()?.strip_prefix("Bearer "))
        .unwrap_or(NO_KEY);
    let (status, response, mut answer) = respond(&shared, id, &model, &body, key);
    if let Some(answer) = answer.as_mut().filter(|_| shared.options.single_slot) {
        let token = tokio_util::sync::CancellationToken::new();
        let running = shared.slot.lock().unwrap_or_else(|e| e.into_inner()).replace(token.clone());
        if let Some(running) = running {
            running.cancel();
        }
        answer.interrupt = Some(token);
    }
    shared.log.push(RequestRecord {
        id,
        model,
        peer: peer.to_string(),
        body,
        status: status.as_u16(),
        tokens_sent: 0,
        finished: answer.is_none(),
        closed_early: false,
        authorization,
        key_tail: key_tail(key),
        interrupted: false,
        responses: None,
    });
    match answer {
        Some(answer) => Response::builder()
            .status(StatusCode::OK)
            .header(header::CONTENT_TYPE, "text/event-stream")
            .header(header::CACHE_CONTROL, "no-cache")
            .body(Body::from_stream(paced::body(answer, shared.log.clone())))
            .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response()),
        None => response,
    }
}

/// What `key` is when the request carried no `Authorization: Bearer`.
pub(crate) const NO_KEY: &str = "no-key-was-sent";

/// The end of a key, for the log ([`RequestRecord::key_tail`]).
pub(crate) fn key_tail(key: &str) -> Option<String> {
    (key != NO_KEY).then(|| key.chars().rev().take(4).collect::<Vec<_>>().into_iter().rev().collect())
}

/// Decides the answer: either a complete response, or an [`Answer`] to stream; `key` is the
/// request's bearer token, for the scripts that echo it.
fn respond(
    shared: &Shared,
    id: u64,
    model: &str,
    body: &Value,
    key: &str,
) -> (StatusCode, Response, Option<Answer>) {
    if body.is_null() {
        return error(StatusCode::BAD_REQUEST, "the request body is not JSON", "invalid_request_error");
    }
    if body.get("stream").and_then(Value::as_bool) != Some(true) {
        if Script::parse(model) == Script::ContextEmptyStream {
            return error(StatusCode::BAD_REQUEST, CONTEXT_UNSTREAMED, "context_length_exceeded");
        }
        return error(
            StatusCode::BAD_REQUEST,
            "this server only streams: set \"stream\": true",
            "invalid_request_error",
        );
    }
    // Image parts are checked for every script, as a real API checks them before anything else.
    let images = match crate::images::seen(body, crate::images::Api::Chat) {
        Ok(images) => images,
        Err(message) => return error(StatusCode::BAD_REQUEST, &message, "invalid_request_error"),
    };
    let mut served_as = model.to_owned();
    let mut fail_with = None;
    let mut done_unfinished = false;
    let (tokens, rate, finishes) = match Script::parse(model) {
        Script::Fail429 => {
            let (status, mut response, _) = error(
                StatusCode::TOO_MANY_REQUESTS,
                "Rate limit reached for requests",
                "rate_limit_exceeded",
            );
            response.headers_mut().insert(header::RETRY_AFTER, RETRY_AFTER_SECS.into());
            return (status, response, None);
        }
        Script::Fail500 => {
            return error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "The server had an error while processing your request",
                "server_error",
            );
        }
        Script::Fail401 => {
            return error(
                StatusCode::UNAUTHORIZED,
                "Incorrect API key provided: sk-sc****cret",
                "invalid_api_key",
            );
        }
        Script::FailContext => {
            return error(
                StatusCode::BAD_REQUEST,
                "This model's maximum context length is 8192 tokens. However, your messages resulted in 9001 tokens.",
                "context_length_exceeded",
            );
        }
        Script::Garbage => {
            let response = ([(header::CONTENT_TYPE, "text/html")], GARBAGE_BODY).into_response();
            return (StatusCode::OK, response, None);
        }
        Script::DropMidway { rate } => (escaped_tokens(DROP_MIDWAY_TEXT), rate, false),
        Script::NoFinish => {
            done_unfinished = true;
            (escaped_tokens(NO_FINISH_TEXT), None, false)
        }
        Script::EmptyAnswer => (escaped_tokens(""), None, true),
        Script::ContextRefusal => {
            return error(StatusCode::BAD_REQUEST, CONTEXT_REFUSAL, "invalid_request_error");
        }
        Script::ContextSizeRefusal => {
            // llama.cpp's server since 2025: the phrase names neither "window" nor "length", the
            // type does.
            let body = json!({ "error": {
                "code": 400,
                "message": "the request exceeds the available context size, try increasing it",
                "type": "exceed_context_size_error",
                "n_prompt_tokens": 6015,
                "n_ctx": 2048,
            } });
            return (StatusCode::BAD_REQUEST, (StatusCode::BAD_REQUEST, Json(body)).into_response(), None);
        }
        Script::ContextMidstream => {
            let error = json!({ "message": CONTEXT_MIDSTREAM, "type": "BadRequestError", "code": 400 });
            fail_with = Some(json!({ "error": error }).to_string());
            (escaped_tokens(NO_FINISH_TEXT), None, false)
        }
        Script::WantsKey if key == NO_KEY => {
            // llama.cpp's server started with `--api-key`.
            let body = json!({ "error": { "code": 401, "message": "Invalid API Key", "type": "authentication_error" } });
            return (StatusCode::UNAUTHORIZED, (StatusCode::UNAUTHORIZED, Json(body)).into_response(), None);
        }
        Script::WantsKey => (escaped_tokens(WANTS_KEY_TEXT), None, true),
        Script::WholeOnly => (escaped_tokens(WHOLE_ONLY_TEXT), None, true),
        Script::SeeImages => (escaped_tokens(&crate::images::answer(&images)), None, true),
        Script::ContextEmptyStream | Script::EmptyStream => {
            // llama-cpp-python refuses a prompt beyond its window after its `200` and headers.
            let response = ([(header::CONTENT_TYPE, "text/event-stream")], "").into_response();
            return (StatusCode::OK, response, None);
        }
        Script::Leak(leak @ (Leak::Masked | Leak::Upper | Leak::Spaced | Leak::Piece)) => {
            let message = format!("Invalid request made with {}; see the docs", leak.disguise(key));
            return error(StatusCode::BAD_REQUEST, &message, "invalid_request_error");
        }
        Script::Leak(Leak::NotSse) => {
            let headers = [(header::CONTENT_TYPE, "text/event-stream")];
            let response = (headers, format!("Authorization: Bearer {key}\n\n")).into_response();
            return (StatusCode::OK, response, None);
        }
        Script::Leak(Leak::Model) => {
            served_as = key.to_owned();
            (escaped_tokens("<p>A page.</p>"), None, true)
        }
        Script::Leak(leak @ Leak::MidStream) => {
            let message = format!("the upstream failed while serving {}", leak.disguise(key));
            fail_with = Some(json!({ "error": { "message": message, "type": "server_error" } }).to_string());
            (escaped_tokens(LEAK_PREFIX), None, false)
        }
        Script::Leak(Leak::Content { rate }) => {
            (escaped_tokens(&format!("{LEAK_PREFIX}{key}{LEAK_SUFFIX}")), rate, true)
        }
        Script::Leak(Leak::Chars) => {
            let text = format!("{LEAK_PREFIX}{key}{LEAK_SUFFIX}");
            (text.chars().map(|c| serde_json::to_string(&c).unwrap_or_default()).collect(), None, true)
        }
        Script::Thinking(script) => return (StatusCode::OK, crate::thinking::response(script), None),
        Script::Hostile(hostile) => {
            return (StatusCode::OK, crate::hostile::response(hostile, &shared.origin), None);
        }
        Script::Fixture { name, rate } => match load(shared, &name, body.get("seed").and_then(Value::as_u64))
        {
            Some(tokens) => match continued(shared, &tokens, body) {
                Some(Continued::Rest(rest)) => (rest, rate, true),
                Some(Continued::Fail) => {
                    return error(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "The server had an error while continuing the answer",
                        "server_error",
                    );
                }
                None => (tokens, rate, true),
            },
            None => {
                let message = format!("The model `{model}` does not exist or you do not have access to it.");
                return error(StatusCode::NOT_FOUND, &message, "model_not_found");
            }
        },
    };
    let limit = ["max_completion_tokens", "max_tokens"]
        .iter()
        .filter(|_| !shared.options.ignore_max_tokens)
        .find_map(|field| body.get(*field).and_then(Value::as_u64))
        .map_or(usize::MAX, |n| usize::try_from(n).unwrap_or(usize::MAX));
    let count = tokens.len().min(limit);
    let truncated = tokens.len() > limit;
    let finish = finishes.then_some(if truncated { "length" } else { "stop" });
    let include_usage = body.pointer("/stream_options/include_usage").and_then(Value::as_bool) == Some(true);
    let prompt_chars: usize = body
        .get("messages")
        .and_then(Value::as_array)
        .map(|messages| messages.iter().filter_map(|m| m.get("content")?.as_str()).map(str::len).sum())
        .unwrap_or(0);
    let answer = Answer {
        id,
        model: served_as,
        tokens,
        count,
        interval: script::interval(rate.unwrap_or(shared.options.rate)),
        finish,
        fail_with,
        done_unfinished,
        include_usage,
        prompt_tokens: u32::try_from(prompt_chars / 4).unwrap_or(u32::MAX),
        interrupt: None,
    };
    (StatusCode::OK, StatusCode::OK.into_response(), Some(answer))
}

/// The tokens of an inline text or `<fixtures>/<name>.md`, cached after the first load so a
/// request's first token is not delayed by reading and cutting a large fixture. Names that could
/// leave the folder are refused. `{{seed}}` in the text becomes the request's seed (`none` without
/// one), so variations of one prompt differ.
pub(crate) fn load(shared: &Shared, name: &str, seed: Option<u64>) -> Option<Arc<[String]>> {
    let seed = seed.map_or_else(|| "none".to_owned(), |s| s.to_string());
    let seeded_key = format!("{name}#{seed}");
    let mut cache = shared.cache.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(tokens) = cache.get(name).or_else(|| cache.get(&seeded_key)) {
        return Some(tokens.clone());
    }
    let text = match shared.options.inline.get(name) {
        Some(text) => text.clone(),
        None => {
            let safe =
                !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
            if !safe {
                return None;
            }
            std::fs::read_to_string(shared.options.fixtures.join(format!("{name}.md"))).ok()?
        }
    };
    let key = if text.contains("{{seed}}") { seeded_key } else { name.to_owned() };
    let tokens = escaped_tokens(&text.replace("{{upstream}}", &shared.origin).replace("{{seed}}", &seed));
    cache.insert(key, tokens.clone());
    Some(tokens)
}

/// How a request to go on with a cut-off answer is answered.
enum Continued {
    /// With these tokens.
    Rest(Arc<[String]>),
    /// With a server error.
    Fail,
}

/// The answer to `body` when it asks to continue the script's text (`tokens`) and the server
/// continues answers ([`crate::Options::continuation`]); `None` otherwise.
fn continued(shared: &Shared, tokens: &[String], body: &Value) -> Option<Continued> {
    let how = shared.options.continuation?;
    let so_far = continuation::answer_so_far(body)?;
    let full: String = tokens.iter().map(|t| serde_json::from_str::<String>(t).unwrap_or_default()).collect();
    let rest = continuation::rest(how, &full, so_far)?;
    Some(if how == Continuation::Fail { Continued::Fail } else { Continued::Rest(escaped_tokens(&rest)) })
}

/// `text` cut into tokens, each serialised as a JSON string literal.
pub(crate) fn escaped_tokens(text: &str) -> Arc<[String]> {
    script::tokenize(text).into_iter().map(|t| serde_json::to_string(t).unwrap_or_default()).collect()
}

/// An OpenAI-style error response.
fn error(status: StatusCode, message: &str, code: &str) -> (StatusCode, Response, Option<Answer>) {
    let kind = if status.is_server_error() { "server_error" } else { "invalid_request_error" };
    let body = json!({ "error": { "message": message, "type": kind, "code": code } });
    (status, (status, Json(body)).into_response(), None)
}

/// `GET /v1/models`: the fixtures, inline texts and special behaviours.
pub(crate) async fn models(State(shared): State<Arc<Shared>>) -> Json<Value> {
    let mut names: Vec<String> = shared.options.inline.keys().cloned().collect();
    if let Ok(dir) = std::fs::read_dir(&shared.options.fixtures) {
        for entry in dir.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|ext| ext == "md")
                && let Some(stem) = path.file_stem().and_then(|s| s.to_str())
            {
                names.push(stem.to_owned());
            }
        }
    }
    names.extend(Script::SPECIAL.iter().map(|s| (*s).to_owned()));
    names.sort();
    names.dedup();
    let data: Vec<Value> = names
        .iter()
        .map(|id| {
            let mut entry = json!({ "id": id, "object": "model", "owned_by": "scripted" });
            if let Some(n) = shared.options.context.max_model_len {
                entry["max_model_len"] = n.into();
            }
            entry
        })
        .collect();
    Json(json!({ "object": "list", "data": data }))
}

/// `GET /props`, as llama.cpp's server answers it: the context size per slot and the number of
/// slots, each where configured.
pub(crate) async fn props(State(shared): State<Arc<Shared>>) -> Response {
    let context = &shared.options.context;
    if context.props_n_ctx.is_none() && context.props_total_slots.is_none() {
        return StatusCode::NOT_FOUND.into_response();
    }
    let mut body = json!({ "model_path": "/models/scripted.gguf" });
    if let Some(n) = context.props_n_ctx {
        body["default_generation_settings"] = json!({ "id": 0, "n_ctx": n, "params": { "n_predict": -1 } });
    }
    if let Some(slots) = context.props_total_slots {
        body["total_slots"] = slots.into();
    }
    Json(body).into_response()
}

/// `POST /api/show`, as Ollama answers it: the model's trained context in `model_info`, and the
/// one it runs with in `parameters` when its Modelfile sets `num_ctx`.
pub(crate) async fn show(State(shared): State<Arc<Shared>>) -> Response {
    let context = &shared.options.context;
    if context.ollama_context_length.is_none() && context.ollama_num_ctx.is_none() {
        return StatusCode::NOT_FOUND.into_response();
    }
    let mut info = json!({ "general.architecture": "qwen2" });
    if let Some(n) = context.ollama_context_length {
        info["qwen2.context_length"] = n.into();
    }
    let parameters = context.ollama_num_ctx.map(|n| format!("stop \"<|im_end|>\"\nnum_ctx {n}"));
    Json(json!({ "model_info": info, "parameters": parameters.unwrap_or_default() })).into_response()
}

/// `GET /__requests`: the request log as JSON.
pub(crate) async fn requests(State(shared): State<Arc<Shared>>) -> Json<Vec<RequestRecord>> {
    Json(shared.log.snapshot())
}

/// `POST /__reset`: forgets the requests received so far.
pub(crate) async fn reset(State(shared): State<Arc<Shared>>) -> StatusCode {
    shared.log.clear();
    StatusCode::NO_CONTENT
}

/// Never answers (until the server stops): a CDN that hangs, for pages that load assets from it.
pub(crate) async fn stall(State(shared): State<Arc<Shared>>) -> StatusCode {
    shared.shutdown.cancelled().await;
    StatusCode::SERVICE_UNAVAILABLE
}
