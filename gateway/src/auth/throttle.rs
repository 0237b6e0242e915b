//! Sign-in tries per address (`auth.signin_per_minute`).
//!
//! Tokens are 256-bit secrets, so guessing one is hopeless; but `POST /api/signin` answered
//! 2,755 guesses a second from one address, each a database lookup, and a limit costs nothing.
//! Tries are counted per network ([`network_of`]: an IPv6 /64 is one), in this gateway's memory.

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

use crate::person::network_of;

/// Tries between two clean-ups of addresses that have not tried for a while.
const PRUNE_EVERY: u64 = 1024;

/// How many sign-in tries each address may make.
pub(crate) struct SignInThrottle {
    /// `None`: no limit (`signin_per_minute = 0`).
    tries: Option<DefaultKeyedRateLimiter<IpAddr>>,
    per_minute: u32,
    counted: AtomicU64,
}

/// Too many tries: the sentence, and when the next try is allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TooManyTries {
    pub message: String,
    pub retry_after: Duration,
}

impl SignInThrottle {
    /// `per_minute` tries an address, at most that many at once (0: no limit).
    pub(crate) fn new(per_minute: u32) -> Self {
        let tries = NonZeroU32::new(per_minute).map(|n| RateLimiter::dashmap(Quota::per_minute(n)));
        Self { tries, per_minute, counted: AtomicU64::new(0) }
    }

    /// Counts a try from `client`, or says how long to wait.
    pub(crate) fn count_try(&self, client: IpAddr) -> Result<(), TooManyTries> {
        let Some(tries) = &self.tries else { return Ok(()) };
        if self.counted.fetch_add(1, Ordering::Relaxed) % PRUNE_EVERY == PRUNE_EVERY - 1 {
            tries.retain_recent();
        }
        tries.check_key(&network_of(client)).map_err(|not_until| {
            let retry_after =
                not_until.wait_time_from(DefaultClock::default().now()).max(Duration::from_secs(1));
            TooManyTries {
                message: format!(
                    "too many sign-in tries from your address: this Flint allows {} a minute \
                     (auth.signin_per_minute); try again in {} s",
                    self.per_minute,
                    retry_after.as_secs_f64().ceil()
                ),
                retry_after,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().expect(text)
    }

    #[test]
    fn an_address_gets_its_tries_a_minute_and_an_ipv6_64_counts_once() {
        let throttle = SignInThrottle::new(3);
        for _ in 0..3 {
            throttle.count_try(ip("203.0.113.9")).expect("within the limit");
        }
        let refused = throttle.count_try(ip("203.0.113.9")).expect_err("the fourth try");
        assert!(refused.message.contains("auth.signin_per_minute"), "{}", refused.message);
        assert!(refused.retry_after >= Duration::from_secs(1), "{:?}", refused.retry_after);
        throttle.count_try(ip("203.0.113.10")).expect("another address is untouched");
        for host in 1..=3 {
            throttle.count_try(ip(&format!("2001:db8:1:2::{host}"))).expect("within the limit");
        }
        assert!(throttle.count_try(ip("2001:db8:1:2:ffff::1")).is_err(), "the same /64");
        let open = SignInThrottle::new(0);
        for _ in 0..100 {
            open.count_try(ip("203.0.113.9")).expect("0: no limit");
        }
    }
}
