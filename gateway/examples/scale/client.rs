//! The load: browser tabs as the app opens them (`/ws` with the gateway's own Origin), and one
//! generation per tab, timed frame by frame.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use flint_protocol::{ChatMessage, ClientMessage, GenParams, Role, ServerMessage, StartRequest};
use futures::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

pub type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Every token of the bench's answer is this many bytes, so bytes received tell tokens received.
pub const TOKEN_BYTES: usize = 4;

/// The answer the upstream streams: `count` four-digit tokens (no spaces, so the scripted
/// upstream's tokenizer cuts exactly every four characters).
pub fn answer_text(count: u32) -> String {
    (0..count).map(|i| format!("{:04}", i % 10_000)).collect()
}

/// Opens a tab: the socket, with the Origin the gateway requires, and its `Hello`.
pub async fn open(addr: SocketAddr) -> anyhow::Result<Ws> {
    let mut request = format!("ws://{addr}/ws").into_client_request()?;
    request.headers_mut().insert("origin", format!("http://{addr}").parse()?);
    let (mut ws, _) = tokio_tungstenite::connect_async(request).await.context("opening /ws")?;
    match next(&mut ws).await? {
        ServerMessage::Hello { .. } => Ok(ws),
        other => bail!("expected Hello, got {other:?}"),
    }
}

/// A tab whose generation is over. A page keeps reading its socket, and so answers the gateway's
/// pings: those pongs are the receipts that let the gateway drop the finished answer's frames
/// (`ws/replay.rs`). A load generator that stopped reading would hold them there and measure that.
pub struct Open {
    leave: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

/// Keeps reading `ws` until the tab is left, then closes it as a page that is left does (a Close
/// with code 1000), so that the gateway ends its session at once rather than keeping it for a
/// resume as it does for a dropped socket.
pub fn keep_reading(mut ws: Ws) -> Open {
    use tokio_tungstenite::tungstenite::protocol::{CloseFrame, frame::coding::CloseCode};
    let (leave, mut left) = tokio::sync::oneshot::channel();
    let task = tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = &mut left => break,
                frame = ws.next() => if !matches!(frame, Some(Ok(_))) { return },
            }
        }
        let goodbye = CloseFrame { code: CloseCode::Normal, reason: "".into() };
        let _ = ws.close(Some(goodbye)).await;
    });
    Open { leave, task }
}

/// Leaves every tab at once.
pub async fn close_all(tabs: Vec<Open>) {
    let closing = tabs.into_iter().map(|tab| {
        let _ = tab.leave.send(());
        tab.task
    });
    futures::future::join_all(closing).await;
}

async fn next(ws: &mut Ws) -> anyhow::Result<ServerMessage> {
    loop {
        match ws.next().await.context("the gateway closed the socket")?? {
            Message::Text(text) => return Ok(serde_json::from_str(text.as_str())?),
            Message::Close(_) => bail!("the gateway closed the socket"),
            _ => {}
        }
    }
}

/// What one stream saw.
#[derive(Debug, Default)]
pub struct Outcome {
    pub completed: bool,
    pub error: Option<String>,
    pub ttft_ms: Option<f64>,
    pub tokens: u64,
    /// Per delta frame, ms after the upstream's schedule for the newest token in it (see [`lateness`]).
    pub relay_ms: Vec<f64>,
}

/// Runs one generation of `tokens` at `rate` tok/s on `ws`, giving up at `deadline`.
pub async fn stream(ws: &mut Ws, model: &str, tokens: u32, rate: u32, deadline: Instant) -> Outcome {
    let mut outcome = Outcome::default();
    let run = async {
        let start = StartRequest {
            stream: 1,
            model: format!("scripted/{model}"),
            messages: vec![ChatMessage::new(Role::User, "Make a palette page.")],
            params: GenParams { max_tokens: Some(tokens), ..GenParams::default() },
        };
        let t0 = Instant::now();
        ws.send(Message::Text(serde_json::to_string(&ClientMessage::Start(start))?.into())).await?;
        let (mut bytes, mut arrivals) = (0usize, Vec::new());
        loop {
            match next(ws).await? {
                ServerMessage::Delta { text, .. } => {
                    let now = Instant::now();
                    outcome.ttft_ms.get_or_insert_with(|| (now - t0).as_secs_f64() * 1e3);
                    bytes += text.len();
                    arrivals.push((now, bytes / TOKEN_BYTES));
                }
                ServerMessage::Done { .. } => break,
                ServerMessage::Error { message, .. } => bail!("gateway error: {message}"),
                _ => {}
            }
        }
        outcome.tokens = (bytes / TOKEN_BYTES) as u64;
        outcome.relay_ms = lateness(&arrivals, Duration::from_secs_f64(1.0 / f64::from(rate)));
        anyhow::Ok(())
    };
    let result = tokio::time::timeout_at(deadline.into(), run).await;
    match result {
        Ok(Ok(())) => outcome.completed = true,
        Ok(Err(e)) => outcome.error = Some(e.to_string()),
        Err(_) => outcome.error = Some("did not finish within the point's time".into()),
    }
    outcome
}

/// How late each frame came, against the upstream's pace: token `n` (1-based) is due at
/// `anchor + (n - 1) × interval`, and the anchor is the one that makes the stream's least-late frame
/// exactly on time. A lag the whole stream shares (the first token's) is in the time to first token
/// instead; what this shows is the relay's delay beyond that: coalescing, queueing, CPU backlog.
pub fn lateness(arrivals: &[(Instant, usize)], interval: Duration) -> Vec<f64> {
    let due = |n: usize| interval.mul_f64(n.saturating_sub(1) as f64);
    let Some(anchor) = arrivals.iter().map(|&(at, n)| at - due(n)).min() else { return Vec::new() };
    arrivals.iter().map(|&(at, n)| (at - (anchor + due(n))).as_secs_f64() * 1e3).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_behind_schedule_shows_its_delay() {
        let t = Instant::now();
        let ms = Duration::from_millis;
        // 1 ms per token: tokens 1–16 on time, then 17–32 arriving 30 ms behind their schedule.
        let late = lateness(&[(t, 1), (t + ms(15), 16), (t + ms(61), 32)], ms(1));
        assert_eq!(late.len(), 3);
        assert!(late[0].abs() < 1e-6 && late[1].abs() < 1e-6, "{late:?}");
        assert!((late[2] - 30.0).abs() < 1e-6, "{late:?}");
    }

    #[test]
    fn the_answer_cuts_into_four_byte_tokens() {
        let text = answer_text(12_000);
        assert_eq!(text.len(), 48_000);
        assert_eq!(flint_scripted_upstream::tokenize(&text).len(), 12_000);
    }
}
