//! Tests of per-person limits (a separate file keeps `limits.rs` short).

use std::net::{IpAddr, Ipv4Addr};
use std::sync::atomic::{AtomicU64, Ordering};

use super::*;

fn stranger(last: u8) -> Person {
    Person::Anonymous(IpAddr::V4(Ipv4Addr::new(203, 0, 113, last)))
}

fn config(anonymous: PersonLimits) -> LimitsConfig {
    LimitsConfig { anonymous, ..LimitsConfig::default() }
}

fn tight() -> PersonLimits {
    PersonLimits { sockets: 2, streams: 2, starts_per_minute: 100, tokens_per_day: 1_000 }
}

#[tokio::test]
async fn tabs_are_counted_per_person_and_given_back_when_closed() {
    let limits = Limits::new(&config(tight()), false);
    let a = limits.open_socket(&stranger(1)).expect("first tab");
    let _b = limits.open_socket(&stranger(1)).expect("second tab");
    let refused = limits.open_socket(&stranger(1)).expect_err("a third tab is over the limit");
    assert!(refused.message.contains("limits.anonymous.sockets"), "{}", refused.message);
    assert!(refused.message.contains("203.0.113.1"), "{}", refused.message);
    limits.open_socket(&stranger(2)).expect("another person is counted apart");
    drop(a);
    limits.open_socket(&stranger(1)).expect("a closed tab frees its place");
}

#[tokio::test]
async fn running_streams_are_limited_across_tabs_and_freed_when_they_end() {
    let limits = Limits::new(&config(tight()), false);
    let first = limits.start_stream(&stranger(1)).await.expect("first");
    let _second = limits.start_stream(&stranger(1)).await.expect("second");
    let refused = limits.start_stream(&stranger(1)).await.expect_err("third");
    assert!(refused.message.contains("limits.anonymous.streams"), "{}", refused.message);
    assert!(refused.retry_after.is_some());
    drop(first);
    limits.start_stream(&stranger(1)).await.expect("an ended stream frees its place");
}

#[tokio::test]
async fn starts_per_minute_are_rate_limited_with_a_wait() {
    let limits = Limits::new(&config(PersonLimits { starts_per_minute: 3, ..tight() }), false);
    for _ in 0..3 {
        drop(limits.start_stream(&stranger(1)).await.expect("within the burst"));
    }
    let refused = limits.start_stream(&stranger(1)).await.expect_err("the fourth in a minute");
    assert!(refused.message.contains("starts_per_minute"), "{}", refused.message);
    let wait = refused.retry_after.expect("says when");
    assert!(wait > Duration::ZERO && wait <= Duration::from_secs(20), "{wait:?}");
    limits.start_stream(&stranger(2)).await.expect("another person has their own rate");
}

static NOW: AtomicU64 = AtomicU64::new(0);

fn fake_now() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(NOW.load(Ordering::SeqCst))
}

#[tokio::test]
async fn the_daily_quota_counts_tokens_refuses_until_midnight_and_renews() {
    // 23:00 UTC on some day.
    NOW.store(20_000 * DAY.as_secs() + 23 * 3600, Ordering::SeqCst);
    let limits = Limits::with_clock(&config(tight()), false, fake_now);
    let mut permit = limits.start_stream(&stranger(1)).await.expect("quota untouched");
    permit.charge(600).await;
    permit.charge(600).await; // a second path ending the same stream charges nothing
    drop(permit);
    let status = limits.quota(&stranger(1)).await.expect("anonymous has a quota");
    assert_eq!((status.used, status.limit), (600, 1_000));
    assert_eq!(status.resets_in, Duration::from_secs(3600));
    limits.start_stream(&stranger(1)).await.expect("600 of 1,000").charge(500).await;
    let refused = limits.start_stream(&stranger(1)).await.expect_err("1,100 of 1,000");
    assert!(refused.message.contains("tokens_per_day"), "{}", refused.message);
    assert_eq!(refused.retry_after, Some(Duration::from_secs(3600)));
    NOW.fetch_add(3600, Ordering::SeqCst);
    limits.start_stream(&stranger(1)).await.expect("a new day, a new quota");
    assert_eq!(limits.quota(&stranger(1)).await.map(|q| q.used), Some(0));
}

#[tokio::test]
async fn signed_in_people_and_the_loopback_owner_get_the_signed_in_limits() {
    let limits = Limits::new(&config(PersonLimits { sockets: 1, ..tight() }), false);
    let alice = Person::User("alice".into());
    let _tabs: Vec<_> = (0..3).map(|_| limits.open_socket(&alice).expect("signed in: 16 tabs")).collect();
    assert_eq!(limits.quota(&alice).await, None, "no daily quota unless configured");
    let owner = Person::Anonymous(IpAddr::V4(Ipv4Addr::LOCALHOST));
    let local = Limits::new(&config(PersonLimits { sockets: 1, ..tight() }), true);
    let _tabs: Vec<_> = (0..3).map(|_| local.open_socket(&owner).expect("loopback: the owner")).collect();
}

#[tokio::test]
async fn a_limit_of_zero_is_no_limit_and_pruning_keeps_todays_use() {
    let none = PersonLimits { sockets: 0, streams: 0, starts_per_minute: 0, tokens_per_day: 0 };
    let limits = Limits::new(&config(none), false);
    let mut held = Vec::new();
    for _ in 0..100 {
        held.push(limits.start_stream(&stranger(1)).await.expect("unlimited"));
    }
    let quota = Limits::new(&config(tight()), false);
    quota.start_stream(&stranger(3)).await.expect("start").charge(10).await;
    drop(quota.open_socket(&stranger(4)).expect("a tab"));
    quota.prune();
    assert_eq!(quota.counts().len(), 0, "nobody has anything open");
    let used = quota.quota(&stranger(3)).await.map(|q| q.used);
    assert_eq!(used, Some(10), "today's tokens are the store's, not forgotten by pruning");
}
