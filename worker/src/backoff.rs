//! Reconnect delays: exponential with full jitter, capped, so a restarted gateway is not hit by
//! every tab at the same instant.

/// Delay before reconnect attempt `attempt` (0 for the first retry), in milliseconds.
///
/// The ceiling doubles from `base_ms` per attempt up to `cap_ms`; the delay is drawn uniformly
/// between half the ceiling and the ceiling from `jitter` (a number in `0.0..1.0`).
pub fn reconnect_delay_ms(attempt: u32, base_ms: u32, cap_ms: u32, jitter: f64) -> u32 {
    let ceiling = u64::from(base_ms).saturating_mul(1u64 << attempt.min(20)).min(u64::from(cap_ms));
    let jitter = if jitter.is_finite() { jitter.clamp(0.0, 1.0) } else { 0.5 };
    let half = ceiling as f64 / 2.0;
    (half + half * jitter).round() as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_exponentially_and_is_capped() {
        assert_eq!(reconnect_delay_ms(0, 250, 10_000, 1.0), 250);
        assert_eq!(reconnect_delay_ms(1, 250, 10_000, 1.0), 500);
        assert_eq!(reconnect_delay_ms(3, 250, 10_000, 1.0), 2000);
        assert_eq!(reconnect_delay_ms(10, 250, 10_000, 1.0), 10_000);
        assert_eq!(reconnect_delay_ms(u32::MAX, 250, 10_000, 1.0), 10_000);
    }

    #[test]
    fn jitter_spreads_between_half_and_full() {
        assert_eq!(reconnect_delay_ms(2, 250, 10_000, 0.0), 500);
        assert_eq!(reconnect_delay_ms(2, 250, 10_000, 0.5), 750);
        assert_eq!(reconnect_delay_ms(2, 250, 10_000, f64::NAN), 750);
    }
}
