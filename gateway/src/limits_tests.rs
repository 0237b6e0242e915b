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
    let first = limits.start_stream(&stranger(1), 100, 1, 0).await.expect("first");
    let _second = limits.start_stream(&stranger(1), 100, 1, 0).await.expect("second");
    let refused = limits.start_stream(&stranger(1), 100, 1, 0).await.expect_err("third");
    assert!(refused.message.contains("limits.anonymous.streams"), "{}", refused.message);
    assert!(refused.retry_after.is_some());
    drop(first);
    limits.start_stream(&stranger(1), 100, 1, 0).await.expect("an ended stream frees its place");
}

#[tokio::test]
async fn starts_per_minute_are_rate_limited_with_a_wait() {
    let limits = Limits::new(&config(PersonLimits { starts_per_minute: 3, ..tight() }), false);
    for _ in 0..3 {
        drop(limits.start_stream(&stranger(1), 100, 1, 0).await.expect("within the burst"));
    }
    let refused = limits.start_stream(&stranger(1), 100, 1, 0).await.expect_err("the fourth in a minute");
    assert!(refused.message.contains("starts_per_minute"), "{}", refused.message);
    let wait = refused.retry_after.expect("says when");
    assert!(wait > Duration::ZERO && wait <= Duration::from_secs(20), "{wait:?}");
    limits.start_stream(&stranger(2), 100, 1, 0).await.expect("another person has their own rate");
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
    let mut permit = limits.start_stream(&stranger(1), 800, 1, 0).await.expect("quota untouched");
    assert_eq!(permit.limit(), Some(800));
    permit.charge(600).await;
    permit.charge(600).await; // a second path ending the same stream charges nothing
    drop(permit);
    let status = limits.quota(&stranger(1)).await.expect("anonymous has a quota");
    assert_eq!((status.used, status.limit), (600, 1_000), "the unused 200 were given back");
    assert_eq!(status.resets_in, Duration::from_secs(3600));
    let mut permit = limits.start_stream(&stranger(1), 800, 1, 0).await.expect("600 of 1,000");
    assert_eq!(permit.limit(), Some(400), "capped to what is left");
    permit.charge(450).await; // a provider's count a little over its limit is still charged
    let refused = limits.start_stream(&stranger(1), 800, 1, 0).await.expect_err("1,050 of 1,000");
    assert!(refused.message.contains("tokens_per_day"), "{}", refused.message);
    assert_eq!(refused.retry_after, Some(Duration::from_secs(3600)));
    NOW.fetch_add(3600, Ordering::SeqCst);
    limits.start_stream(&stranger(1), 800, 1, 0).await.expect("a new day, a new quota");
    assert_eq!(limits.quota(&stranger(1)).await.map(|q| q.used), Some(800), "held for the new stream");
}

#[tokio::test]
async fn streams_started_together_cannot_reserve_past_the_quota() {
    let limits = Limits::new(&config(PersonLimits { streams: 10, ..tight() }), false);
    let first = limits.start_stream(&stranger(1), 700, 1, 0).await.expect("700 of 1,000");
    let second = limits.start_stream(&stranger(1), 700, 1, 0).await.expect("the 300 left");
    assert_eq!((first.limit(), second.limit()), (Some(700), Some(300)));
    let refused = limits.start_stream(&stranger(1), 700, 1, 0).await.expect_err("all of it is held");
    assert!(refused.message.contains("tokens_per_day"), "{}", refused.message);
    assert_eq!(limits.quota(&stranger(1)).await.map(|q| q.used), Some(1_000), "the excess was given back");
    drop((first, second));
    limits.settled(Duration::from_secs(5)).await;
    assert_eq!(limits.quota(&stranger(1)).await.map(|q| q.used), Some(0), "nothing was generated");
}

#[tokio::test]
async fn a_stream_dropped_without_a_charge_is_charged_what_it_generated() {
    let limits = Limits::new(&config(tight()), false);
    let mut permit = limits.start_stream(&stranger(1), 500, 1, 0).await.expect("start");
    for _ in 0..300 {
        assert!(permit.generated());
    }
    // Its task aborted with its tab: no charge, only the drop.
    drop(permit);
    assert!(limits.settled(Duration::from_secs(5)).await, "the settlement ran");
    assert_eq!(limits.quota(&stranger(1)).await.map(|q| q.used), Some(300));
    // The provider's own count, when it came, is what is charged.
    let mut permit = limits.start_stream(&stranger(1), 500, 1, 0).await.expect("start");
    assert!(permit.generated());
    permit.reported(40);
    drop(permit);
    limits.settled(Duration::from_secs(5)).await;
    assert_eq!(limits.quota(&stranger(1)).await.map(|q| q.used), Some(340));
}

#[tokio::test]
async fn a_stream_is_held_to_what_its_start_reserved() {
    let limits = Limits::new(&config(tight()), false);
    let mut permit = limits.start_stream(&stranger(1), 5_000, 1, 0).await.expect("start");
    assert_eq!(permit.limit(), Some(1_000));
    let counted = std::iter::repeat_with(|| permit.generated()).take(1_200).filter(|ok| *ok).count();
    assert_eq!(counted, 1_001, "events past the reservation (and one held back to its end) are refused");
    assert_eq!(permit.generated_count(), 1_001);
    let free = Limits::new(&config(PersonLimits { tokens_per_day: 0, ..tight() }), false);
    // An auto-continued answer reserves each of its parts.
    let mut parts = limits.start_stream(&stranger(2), 300, 3, 0).await.expect("start");
    assert_eq!(parts.limit(), Some(900));
    assert_eq!(std::iter::repeat_with(|| parts.generated()).take(1_000).filter(|ok| *ok).count(), 903);
    let mut unlimited = free.start_stream(&stranger(1), 5, 1, 0).await.expect("start");
    assert_eq!(unlimited.limit(), None, "no quota, no cut");
    assert!((0..100).all(|_| unlimited.generated()));
}

#[tokio::test]
async fn own_keys_skip_the_quota_but_not_streams_or_starts_per_minute() {
    let limits = Limits::new(&config(PersonLimits { starts_per_minute: 3, ..tight() }), false);
    let mut spent = limits.start_stream(&stranger(1), 1_000, 1, 0).await.expect("start");
    spent.charge(1_000).await;
    drop(spent);
    limits.start_stream(&stranger(1), 10, 1, 0).await.expect_err("the quota is spent");
    let mut own = limits.start_stream_own_key(&stranger(1)).expect("an own key: outside the quota");
    assert_eq!(own.limit(), None);
    own.charge(5_000).await;
    let _second = limits.start_stream_own_key(&stranger(1)).expect("a second stream");
    let refused = limits.start_stream_own_key(&stranger(1)).expect_err("two streams at most");
    assert!(refused.message.contains("streams"), "{}", refused.message);
    drop(own);
    let refused = limits.start_stream_own_key(&stranger(1)).expect_err("the fourth start in a minute");
    assert!(refused.message.contains("starts_per_minute"), "{}", refused.message);
    assert_eq!(limits.quota(&stranger(1)).await.map(|q| q.used), Some(1_000), "own keys charge nothing");
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
        held.push(limits.start_stream(&stranger(1), 100, 1, 0).await.expect("unlimited"));
    }
    let quota = Limits::new(&config(tight()), false);
    quota.start_stream(&stranger(3), 100, 1, 0).await.expect("start").charge(10).await;
    drop(quota.open_socket(&stranger(4)).expect("a tab"));
    quota.prune();
    assert_eq!(quota.counts().len(), 0, "nobody has anything open");
    let used = quota.quota(&stranger(3)).await.map(|q| q.used);
    assert_eq!(used, Some(10), "today's tokens are the store's, not forgotten by pruning");
}

#[tokio::test]
async fn image_tokens_are_reserved_first_and_charged_with_the_answer() {
    let limits = Limits::new(&config(tight()), false);
    // 765 tokens of image (one 1024 px square by the tile rule) and 100 of answer, of 1,000.
    let mut permit = limits.start_stream(&stranger(1), 100, 1, 765).await.expect("865 of 1,000");
    assert_eq!(permit.limit(), Some(100), "the answer's limit is what is left after the images");
    permit.charge(40).await;
    drop(permit);
    assert_eq!(limits.quota(&stranger(1)).await.map(|q| q.used), Some(805), "the images are charged");
    // 195 left: the images alone do not fit, so nothing is sent.
    let refused = limits.start_stream(&stranger(1), 100, 1, 765).await.expect_err("images over what is left");
    assert!(refused.message.contains("tokens_per_day"), "{}", refused.message);
    // The refused start's reservation is given back by its permit's drop, in a task of its own.
    for _ in 0..100 {
        if limits.quota(&stranger(1)).await.map(|q| q.used) == Some(805) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the refused start's reservation was not given back");
}
