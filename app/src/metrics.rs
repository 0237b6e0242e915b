//! Live numbers for the metrics bar: time to first token and tokens per second as the browser sees
//! them, replaced by the gateway's exact figures when the stream ends.
//!
//! Deltas are coalesced (one frame carries many tokens), so while streaming the token count is an
//! estimate from the text's size (about four bytes per token for code); the `Done` frame's count is
//! exact.

use flint_protocol::{Price, StreamMetrics, Usage};

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
    /// The model's price, when the gateway's operator set one.
    pub price: Option<Price>,
    /// The prompt's size as the page counted it before sending (the upstream's count replaces it).
    pub prompt_estimate: Option<u32>,
    /// When the model's first reasoning arrived (before its first code).
    pub first_reasoning_ms: Option<f64>,
    /// Reasoning tokens so far, as the gateway counts them while streaming.
    pub reasoning_tokens: u32,
}

impl LiveMetrics {
    /// A stream started at `now_ms`.
    pub fn started(now_ms: f64) -> Self {
        Self { started_ms: Some(now_ms), ..Self::default() }
    }

    /// The same, priced: `price` per token, `prompt_estimate` tokens sent.
    pub fn priced(self, price: Option<Price>, prompt_estimate: Option<u32>) -> Self {
        Self { price, prompt_estimate, ..self }
    }

    /// What the stream has cost so far, in dollars, and whether that is an estimate (the text's
    /// size before the gateway's count; the page's prompt count when the upstream gave none).
    /// `None` without a price.
    pub fn cost(&self) -> Option<(f64, bool)> {
        let price = self.price?;
        let (completion, completion_estimated) = self.tokens();
        let reported = self.done.and_then(|(usage, _)| usage.prompt_tokens);
        let prompt = reported.or(self.prompt_estimate).unwrap_or(0);
        let completion = u32::try_from(completion).unwrap_or(u32::MAX);
        Some((price.cost(prompt, completion), completion_estimated || reported.is_none()))
    }

    /// Text of `len` bytes arrived at `now_ms`.
    pub fn on_text(&mut self, now_ms: f64, len: usize) {
        self.first_token_ms.get_or_insert(now_ms);
        self.last_token_ms = Some(now_ms);
        self.bytes += len;
    }

    /// The model's reasoning reached `tokens` tokens at `now_ms`.
    pub fn on_thinking(&mut self, now_ms: f64, tokens: u32) {
        self.first_reasoning_ms.get_or_insert(now_ms);
        self.reasoning_tokens = self.reasoning_tokens.max(tokens);
    }

    /// Client-measured time to the first reasoning, when the model reasoned, in milliseconds.
    pub fn ttfr_ms(&self) -> Option<f64> {
        Some(self.first_reasoning_ms? - self.started_ms?)
    }

    /// Reasoning tokens: the gateway's final count, else the live one; `None` if it did not reason.
    pub fn reasoning(&self) -> Option<u64> {
        let done = self.done.and_then(|(usage, _)| usage.reasoning_tokens);
        done.or((self.reasoning_tokens > 0).then_some(self.reasoning_tokens)).map(u64::from)
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
            // Reasoning is billed as output, so it counts while it streams too.
            _ => {
                ((self.bytes as f64 / BYTES_PER_TOKEN).ceil() as u64 + u64::from(self.reasoning_tokens), true)
            }
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
        let text_tokens = self.tokens().0.saturating_sub(u64::from(self.reasoning_tokens));
        Some(text_tokens as f64 / elapsed_s)
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

/// Dollars for display: `—`, `$0.0042`, `$1.27`; estimates are marked `≈`. Small amounts keep two
/// significant digits: a fast model's single answer often costs a fraction of a cent.
pub fn format_cost(cost: Option<(f64, bool)>) -> String {
    let Some((dollars, estimated)) = cost.filter(|(d, _)| d.is_finite()) else { return "—".into() };
    let mark = if estimated { "≈" } else { "" };
    let text = if dollars == 0.0 {
        "$0".to_owned()
    } else if dollars >= 0.995 {
        format!("${dollars:.2}")
    } else {
        let decimals = (-dollars.log10().floor()) as usize + 1;
        format!("${dollars:.decimals$}")
    };
    format!("{mark}{text}")
}

/// The sum of several streams' costs (a run's variations, a session), estimated if any part is.
pub fn total_cost(costs: impl IntoIterator<Item = Option<(f64, bool)>>) -> Option<(f64, bool)> {
    costs.into_iter().flatten().reduce(|(a, ea), (b, eb)| (a + b, ea || eb))
}

/// What is left of a daily token quota: `48,800 of 50,000 tokens left today · renews in 5 h`.
pub fn format_quota(used: u64, limit: u64, resets_in_ms: u64) -> String {
    let left = limit.saturating_sub(used);
    let minutes = resets_in_ms.div_ceil(60_000);
    let renews = if minutes >= 60 { format!("{} h", minutes.div_ceil(60)) } else { format!("{minutes} min") };
    format!("{} of {} tokens left today · renews in {renews}", group_thousands(left), group_thousands(limit))
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
            Usage { prompt_tokens: Some(9), completion_tokens: 980, reasoning_tokens: None },
            StreamMetrics { ttft_ms: 70.0, ttfr_ms: None, total_ms: 1100.0, tokens_per_s: 950.0 },
        );
        assert_eq!(m.tokens(), (980, false));
        assert_eq!(m.tokens_per_s(), Some(950.0));
    }

    #[test]
    fn cost_is_estimated_while_streaming_and_exact_with_the_upstreams_counts() {
        let spark = Price { input_per_mtok: 1.75, output_per_mtok: 14.0 };
        let unpriced = LiveMetrics::started(0.0);
        assert_eq!(unpriced.cost(), None, "no price configured: no cost shown");
        let mut m = LiveMetrics::started(0.0).priced(Some(spark), Some(2_000));
        m.on_text(10.0, 4_000);
        let (live, estimated) = m.cost().expect("priced");
        assert!(estimated);
        assert!((live - (2_000.0 * 1.75 + 1_000.0 * 14.0) / 1e6).abs() < 1e-12, "{live}");
        m.on_done(
            Usage { prompt_tokens: Some(1_800), completion_tokens: 900, reasoning_tokens: None },
            StreamMetrics::default(),
        );
        let (exact, estimated) = m.cost().expect("priced");
        assert!(!estimated);
        assert!((exact - 0.01575).abs() < 1e-12, "1,800 × $1.75 + 900 × $14 per million: {exact}");
        m.done = Some((
            Usage { prompt_tokens: None, completion_tokens: 900, reasoning_tokens: None },
            StreamMetrics::default(),
        ));
        assert!(m.cost().expect("priced").1, "the prompt count is the page's own estimate");
    }

    #[test]
    fn costs_format_and_add_up() {
        assert_eq!(format_cost(None), "—");
        assert_eq!(format_cost(Some((0.0, false))), "$0");
        assert_eq!(format_cost(Some((0.01575, false))), "$0.016");
        assert_eq!(format_cost(Some((0.000_42, true))), "≈$0.00042");
        assert_eq!(format_cost(Some((1.274, false))), "$1.27");
        assert_eq!(format_cost(Some((12.5, false))), "$12.50");
        assert_eq!(total_cost([Some((0.5, false)), None, Some((0.25, true))]), Some((0.75, true)));
        assert_eq!(total_cost([None, None]), None);
    }

    #[test]
    fn the_quota_says_what_is_left_and_when_it_renews() {
        assert_eq!(
            format_quota(1_200, 50_000, 5 * 3_600_000),
            "48,800 of 50,000 tokens left today · renews in 5 h"
        );
        assert_eq!(format_quota(60_000, 50_000, 90_000), "0 of 50,000 tokens left today · renews in 2 min");
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

    #[test]
    fn reasoning_counts_live_and_its_time_is_apart_from_the_codes() {
        let mut m = LiveMetrics::started(1_000.0);
        m.on_thinking(1_200.0, 10);
        m.on_thinking(1_900.0, 300);
        m.on_text(2_000.0, 400);
        assert_eq!((m.ttfr_ms(), m.ttft_ms()), (Some(200.0), Some(1_000.0)));
        assert_eq!(m.reasoning(), Some(300));
        assert_eq!(m.tokens(), (400, true), "100 tokens of text and 300 of reasoning");
        let usage = Usage { prompt_tokens: Some(5), completion_tokens: 420, reasoning_tokens: Some(321) };
        m.on_done(usage, StreamMetrics::default());
        assert_eq!((m.reasoning(), m.tokens()), (Some(321), (420, false)), "the gateway's counts win");
        assert_eq!(LiveMetrics::started(0.0).reasoning(), None);
    }
}
