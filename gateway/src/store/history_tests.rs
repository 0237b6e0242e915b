//! The quota and rate decisions both backends share, without a database.

use std::collections::HashMap;

use flint_protocol::sync::{HistoryRecord, RecordKind};

use super::{HistoryQuota, HistoryRefused, ROW_BYTES, Usage, check, plan, stored_bytes};

fn record(id: &str, revision: u64, text: &str, deleted: bool) -> HistoryRecord {
    HistoryRecord {
        id: id.into(),
        kind: RecordKind::Generation,
        body: serde_json::json!({ "code": text }),
        revision,
        updated_at: revision,
        device: "d".into(),
        deleted,
    }
}

const QUOTA: HistoryQuota =
    HistoryQuota { max_records: 10, max_bytes: usize::MAX, write_bytes_per_minute: usize::MAX };

#[test]
fn a_deletion_is_kept_without_its_body_and_frees_what_the_body_took() {
    let page = record("1", 1, &"x".repeat(1_000), false);
    let stored = HashMap::from([((RecordKind::Generation, "1".to_owned()), page.clone())]);
    let deletion = plan(&[record("1", 2, &"x".repeat(1_000), true)], stored.clone());
    assert!(deletion.writes[0].body.is_null() && deletion.kept[0].body.is_null());
    assert_eq!(deletion.records, -1);
    assert_eq!(deletion.bytes, -(page.body_bytes() as i64), "only the body is freed");
    assert_eq!(deletion.written, (1 + 1 + ROW_BYTES) as i64, "a tombstone costs its row");
    // The same deletion sent again with its body is not written again.
    let kept = plan(&deletion.writes, HashMap::new()).kept;
    let again = HashMap::from([((RecordKind::Generation, "1".to_owned()), kept[0].clone())]);
    assert!(plan(&[record("1", 2, &"x".repeat(1_000), true)], again).writes.is_empty());
}

#[test]
fn a_push_that_frees_room_passes_even_over_the_quota() {
    let full = Usage { records: 20, bytes: 1_000_000, write_until: 0 };
    let small = HistoryQuota { max_records: 5, max_bytes: 1_000, ..QUOTA };
    let page = record("1", 1, "a page", false);
    let stored = HashMap::from([((RecordKind::Generation, "1".to_owned()), page)]);
    let deletion = plan(&[record("1", 2, "", true)], stored);
    let after = check(full, &deletion, small, 0).expect("a deletion always fits");
    assert_eq!((after.records, after.bytes), (19, 1_000_000 - 17));
    let new = plan(&[record("2", 1, "", false)], HashMap::new());
    assert_eq!(check(full, &new, small, 0), Err(HistoryRefused::Records(5)));
    let roomy = HistoryQuota { max_records: 100, ..small };
    assert_eq!(check(full, &new, roomy, 0), Err(HistoryRefused::Bytes(1_000)));
}

#[test]
fn the_write_rate_takes_a_minutes_worth_then_says_when() {
    let page = record("1", 1, "p", false);
    let size = stored_bytes(&page);
    // A minute's allowance is exactly three such pages.
    let quota = HistoryQuota { write_bytes_per_minute: 3 * size, ..QUOTA };
    let one = plan(&[page], HashMap::new());
    let mut usage = Usage::default();
    for _ in 0..3 {
        usage = check(usage, &one, quota, 1_000).expect("within the minute's allowance");
    }
    assert_eq!(usage.write_until, 61_000);
    let Err(HistoryRefused::Rate { limit, retry_after_ms }) = check(usage, &one, quota, 1_000) else {
        panic!("a fourth page in the same instant is too fast");
    };
    assert_eq!((limit, retry_after_ms), (3 * size, 20_000), "one page's time later");
    check(usage, &one, quota, 21_000).expect("taken when told");
}

#[test]
fn one_push_from_a_standstill_passes_whatever_the_rate() {
    let page = record("1", 1, &"x".repeat(10_000), false);
    let quota = HistoryQuota { write_bytes_per_minute: 100, ..QUOTA };
    let big = plan(&[page], HashMap::new());
    let usage = check(Usage::default(), &big, quota, 0).expect("from a standstill");
    let Err(HistoryRefused::Rate { retry_after_ms, .. }) = check(usage, &big, quota, 0) else {
        panic!("the next one waits");
    };
    assert_eq!(retry_after_ms, u64::try_from(usage.write_until).expect("positive"), "until paid off");
}
