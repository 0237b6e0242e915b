//! Live numbers for the metrics bar: time to first token and tokens per second as the browser sees
//! them, replaced by the gateway's exact figures when the stream ends.
//!
//! Deltas are coalesced (one frame carries many tokens), so while streaming the token count is an
//! estimate from the text's size (about four bytes per token for code); the `Done` frame's count is
//! exact.

use flint_protocol::{StreamMetrics, Usage};

/// Bytes per token used for the live estimate.
const BYTES_PER_TOKEN: f64 = 4.0;

/// One stream's timing, as seen by the client.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LiveMetrics {
    /// When `Start` was sent (page clock, ms).
    pub started_ms: Option<f64>,
    /// When the first text arrived.
    pub first_token_ms: Option<f64>,
    /// When the latest text arrived.
    pub last_token_ms: Option<f64>,
    /// Bytes of text received.
    pub bytes: usize,
    /// The gateway's final figures.
    pub done: Option<(Usage, StreamMetrics)>,
}

impl LiveMetrics {
    /// A stream started at `now_ms`.
    pub fn started(now_ms: f64) -> Self {
        Self { started_ms: Some(now_ms), ..Self::default() }
    }

    /// Text of `len` bytes arrived at `now_ms`.
    pub fn on_text(&mut self, now_ms: f64, len: usize) {
        self.first_token_ms.get_or_insert(now_ms);
        self.last_token_ms = Some(now_ms);
        self.bytes += len;
    }

    /// The gateway's final figures arrived.
    pub fn on_done(&mut self, usage: Usage, metrics: StreamMetrics) {
        self.done = Some((usage, metrics));
    }

    /// Client-measured time to first token, in milliseconds.
    pub fn ttft_ms(&self) -> Option<f64> {
        Some(self.first_token_ms? - self.started_ms?)
    }

    /// Tokens so far and whether that is an estimate.
    pub fn tokens(&self) -> (u64, bool) {
        match &self.done {
            Some((usage, _)) if usage.completion_tokens > 0 => (u64::from(usage.completion_tokens), false),
            _ => ((self.bytes as f64 / BYTES_PER_TOKEN).ceil() as u64, true),
        }
    }

    /// Tokens per second after the first token: the gateway's figure once done, else live.
    pub fn tokens_per_s(&self) -> Option<f64> {
        if let Some((_, m)) = &self.done
            && m.tokens_per_s > 0.0
        {
            return Some(m.tokens_per_s);
        }
        let elapsed_s = (self.last_token_ms? - self.first_token_ms?) / 1000.0;
        // Below a few frames the rate is noise.
        if elapsed_s < 0.05 {
            return None;
        }
        Some(self.tokens().0 as f64 / elapsed_s)
    }
}

/// `1234.5` → `"1,235"`.
pub fn group_thousands(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A duration for display: `—`, `85 ms`, `1.24 s`.
pub fn format_ms(ms: Option<f64>) -> String {
    match ms {
        None => "—".into(),
        Some(ms) if ms < 1000.0 => format!("{:.0} ms", ms.max(0.0)),
        Some(ms) => format!("{:.2} s", ms / 1000.0),
    }
}

/// A rate for display: `—` or `1,234 tok/s`.
pub fn format_tps(tps: Option<f64>) -> String {
    match tps {
        Some(t) if t.is_finite() => format!("{} tok/s", group_thousands(t.round() as u64)),
        _ => "—".into(),
    }
}

/// A token count for display; estimates are marked `≈`.
pub fn format_tokens((count, estimated): (u64, bool)) -> String {
    if estimated && count > 0 { format!("≈{}", group_thousands(count)) } else { group_thousands(count) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_then_final() {
        let mut m = LiveMetrics::started(100.0);
        assert_eq!(m.ttft_ms(), None);
        m.on_text(180.0, 40);
        assert_eq!(m.ttft_ms(), Some(80.0));
        assert_eq!(m.tokens_per_s(), None, "too early for a rate");
        m.on_text(1180.0, 3960);
        assert_eq!(m.tokens(), (1000, true));
        assert_eq!(m.tokens_per_s(), Some(1000.0));
        m.on_done(
            Usage { prompt_tokens: Some(9), completion_tokens: 980 },
            StreamMetrics { ttft_ms: 70.0, total_ms: 1100.0, tokens_per_s: 950.0 },
        );
        assert_eq!(m.tokens(), (980, false));
        assert_eq!(m.tokens_per_s(), Some(950.0));
    }

    #[test]
    fn formatting() {
        assert_eq!(group_thousands(0), "0");
        assert_eq!(group_thousands(1234567), "1,234,567");
        assert_eq!(format_ms(None), "—");
        assert_eq!(format_ms(Some(85.4)), "85 ms");
        assert_eq!(format_ms(Some(1240.0)), "1.24 s");
        assert_eq!(format_tps(Some(12345.6)), "12,346 tok/s");
        assert_eq!(format_tps(Some(f64::INFINITY)), "—");
        assert_eq!(format_tokens((1500, true)), "≈1,500");
        assert_eq!(format_tokens((0, true)), "0");
        assert_eq!(format_tokens((42, false)), "42");
    }
}
