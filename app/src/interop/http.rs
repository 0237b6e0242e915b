//! `fetch` for the gateway's JSON endpoints.

use serde::de::DeserializeOwned;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::Response;

/// Why a request failed, in words for the user.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    /// The request did not reach the server.
    #[error("cannot reach {url}: {reason}")]
    Network {
        /// The URL.
        url: String,
        /// The browser's explanation.
        reason: String,
    },
    /// The server answered with an error status.
    #[error("{url} answered HTTP {status}")]
    Status {
        /// The URL.
        url: String,
        /// The status code.
        status: u16,
    },
    /// The server refused, saying why.
    #[error("{message}")]
    Refused {
        /// The URL.
        url: String,
        /// The status code.
        status: u16,
        /// The server's explanation.
        message: String,
    },
    /// The body was not the expected JSON.
    #[error("{url} sent an unexpected answer: {reason}")]
    Body {
        /// The URL.
        url: String,
        /// What was wrong.
        reason: String,
    },
}

/// GETs `url` and parses its JSON body.
pub async fn get_json<T: DeserializeOwned>(url: &str) -> Result<T, FetchError> {
    let (status, text) = fetch_text(url, &web_sys::RequestInit::new()).await?;
    if !(200..300).contains(&status) {
        return Err(FetchError::Status { url: url.to_owned(), status });
    }
    parse(url, &text)
}

/// GETs `url` as text (a vendored module an export carries).
pub async fn get_text(url: &str) -> Result<String, FetchError> {
    let (status, text) = fetch_text(url, &web_sys::RequestInit::new()).await?;
    if !(200..300).contains(&status) {
        return Err(FetchError::Status { url: url.to_owned(), status });
    }
    Ok(text)
}

/// POSTs `body` as JSON to `url` and parses the JSON answer; an error status carries the gateway's
/// own sentence (it says what the person can do).
pub async fn post_json<B: serde::Serialize, T: DeserializeOwned>(
    url: &str,
    body: &B,
) -> Result<T, FetchError> {
    let network = network_error(url);
    let init = web_sys::RequestInit::new();
    init.set_method("POST");
    init.set_body(&wasm_bindgen::JsValue::from_str(&serde_json::to_string(body).unwrap_or_default()));
    let headers = web_sys::Headers::new().map_err(network)?;
    headers.set("content-type", "application/json").map_err(network)?;
    init.set_headers(&headers);
    let (status, text) = fetch_text(url, &init).await?;
    if !(200..300).contains(&status) {
        return Err(FetchError::Refused { url: url.to_owned(), status, message: text });
    }
    parse(url, &text)
}

/// POSTs nothing to `url`: `Ok` for a success status, else the server's sentence. (A POST, because
/// a browser sends `Origin` with it even to the page's own server, and the origin is what the
/// gateway judges.)
pub async fn post_empty(url: &str) -> Result<(), FetchError> {
    let init = web_sys::RequestInit::new();
    init.set_method("POST");
    let (status, text) = fetch_text(url, &init).await?;
    if (200..300).contains(&status) {
        return Ok(());
    }
    Err(FetchError::Refused { url: url.to_owned(), status, message: text })
}

/// Fetches `url` and reads the whole body as text, whatever the status.
async fn fetch_text(url: &str, init: &web_sys::RequestInit) -> Result<(u16, String), FetchError> {
    let network = network_error(url);
    let window = web_sys::window()
        .ok_or_else(|| FetchError::Network { url: url.into(), reason: "no window".into() })?;
    let response = JsFuture::from(window.fetch_with_str_and_init(url, init)).await.map_err(network)?;
    let response: Response = response.dyn_into().map_err(network)?;
    let text = JsFuture::from(response.text().map_err(network)?).await.map_err(network)?;
    Ok((response.status(), text.as_string().unwrap_or_default()))
}

fn network_error(url: &str) -> impl Fn(wasm_bindgen::JsValue) -> FetchError + Copy + '_ {
    move |e| FetchError::Network { url: url.to_owned(), reason: format!("{e:?}") }
}

fn parse<T: DeserializeOwned>(url: &str, text: &str) -> Result<T, FetchError> {
    serde_json::from_str(text).map_err(|e| FetchError::Body { url: url.to_owned(), reason: e.to_string() })
}
