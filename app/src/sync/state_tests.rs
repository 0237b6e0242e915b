//! Two browsers and a server in memory: the server keeps, per record, what `newer` prefers and
//! numbers its changes, as the gateway's store does (`gateway/tests/store.rs` checks that one).

use std::collections::BTreeMap;

use flint_protocol::sync::{HistoryRecord, PullAnswer, PushAnswer, RecordKind, newer};
use serde_json::{Value, json};

use super::state::SyncState;

const GEN: RecordKind = RecordKind::Generation;

#[derive(Default)]
struct Server {
    records: BTreeMap<String, (u64, HistoryRecord)>,
    seq: u64,
}

impl Server {
    fn push(&mut self, records: &[HistoryRecord]) -> PushAnswer {
        let mut kept = Vec::new();
        for record in records {
            let key = format!("{}:{}", record.kind.as_str(), record.id);
            match self.records.get(&key) {
                Some((_, stored)) if !newer(record, stored) => kept.push(stored.clone()),
                _ => {
                    self.seq += 1;
                    self.records.insert(key, (self.seq, record.clone()));
                    kept.push(record.clone());
                }
            }
        }
        PushAnswer { kept }
    }

    fn pull(&self, since: u64) -> PullAnswer {
        let mut changed: Vec<_> = self.records.values().filter(|(seq, _)| *seq > since).cloned().collect();
        changed.sort_by_key(|(seq, _)| *seq);
        let cursor = changed.last().map_or(since, |(seq, _)| *seq);
        PullAnswer { records: changed.into_iter().map(|(_, r)| r).collect(), cursor, more: false }
    }
}

/// One browser: its history (id → JSON value) and its sync state.
struct Browser {
    history: BTreeMap<String, Value>,
    sync: SyncState,
}

impl Browser {
    fn new(device: &str) -> Self {
        Self { history: BTreeMap::new(), sync: SyncState::new(device) }
    }

    fn edit(&mut self, id: &str, prompt: &str) {
        self.history.insert(id.into(), json!({ "prompt": prompt }));
    }

    fn scan(&mut self, now: u64) {
        let local: Vec<(String, String)> =
            self.history.iter().map(|(id, v)| (id.clone(), v.to_string())).collect();
        self.sync.scan(GEN, &local, now);
    }

    fn apply(&mut self, records: Vec<HistoryRecord>) {
        for record in records {
            if record.deleted {
                self.history.remove(&record.id);
            } else {
                self.history.insert(record.id, record.body);
            }
        }
    }

    /// Pushes until nothing waits, then pulls: what the driver does on each occasion.
    fn sync(&mut self, server: &mut Server, now: u64) {
        self.scan(now);
        for round in 0.. {
            assert!(round < 100, "the queue never drains: every push is sent again");
            let history = self.history.clone();
            let batch = self.sync.next_push(|_, id| history.get(id).cloned());
            if batch.is_empty() {
                break;
            }
            let answer = server.push(&batch);
            let apply = self.sync.pushed(&batch, &answer);
            self.apply(apply);
        }
        let answer = server.pull(self.sync.cursor);
        let apply = self.sync.pulled(&answer);
        self.apply(apply);
    }

    fn prompt(&self, id: &str) -> Option<&str> {
        self.history.get(id).and_then(|v| v["prompt"].as_str())
    }
}

#[test]
fn concurrent_edits_from_two_devices_converge() {
    let mut server = Server::default();
    let (mut laptop, mut phone) = (Browser::new("laptop"), Browser::new("phone"));
    laptop.edit("1", "a clock");
    laptop.sync(&mut server, 100);
    phone.sync(&mut server, 110);
    assert_eq!(phone.prompt("1"), Some("a clock"), "the phone got the laptop's entry");
    // Both edit revision 1 offline; the phone's edit is the later one.
    laptop.edit("1", "a clock, laptop");
    laptop.scan(200);
    phone.edit("1", "a clock, phone");
    phone.scan(300);
    laptop.sync(&mut server, 400);
    phone.sync(&mut server, 410);
    laptop.sync(&mut server, 420);
    assert_eq!(laptop.prompt("1"), Some("a clock, phone"));
    assert_eq!(phone.prompt("1"), Some("a clock, phone"));
    assert_eq!((laptop.sync.waiting(), phone.sync.waiting()), (0, 0));
}

#[test]
fn an_older_revision_never_overwrites_a_newer_one() {
    let mut server = Server::default();
    let (mut laptop, mut phone) = (Browser::new("laptop"), Browser::new("phone"));
    laptop.edit("1", "v1");
    laptop.sync(&mut server, 100);
    phone.sync(&mut server, 110);
    phone.edit("1", "v2");
    phone.sync(&mut server, 120);
    phone.edit("1", "v3");
    phone.sync(&mut server, 130);
    // The laptop edits what it still has (revision 1), much later by its clock: revision 2 < 3.
    laptop.edit("1", "laptop's late edit of v1");
    laptop.sync(&mut server, 99_999);
    assert_eq!(laptop.prompt("1"), Some("v3"), "the server answered its newer copy");
    phone.sync(&mut server, 140);
    assert_eq!(phone.prompt("1"), Some("v3"));
}

#[test]
fn a_delete_wins_over_an_older_edit() {
    let mut server = Server::default();
    let (mut laptop, mut phone) = (Browser::new("laptop"), Browser::new("phone"));
    laptop.edit("1", "v1");
    laptop.edit("2", "kept");
    laptop.sync(&mut server, 100);
    phone.sync(&mut server, 110);
    phone.history.remove("1");
    phone.sync(&mut server, 120);
    // The laptop pushes an edit of revision 1 it made before it heard of the deletion, earlier.
    laptop.edit("1", "an edit of v1");
    laptop.scan(115);
    laptop.sync(&mut server, 130);
    assert_eq!(laptop.prompt("1"), None, "the deletion (revision 2, later) wins");
    assert_eq!(laptop.prompt("2"), Some("kept"), "other entries stay");
    assert_eq!(phone.prompt("1"), None);
}

#[test]
fn the_queue_survives_a_reload_and_drains_once() {
    let mut server = Server::default();
    let mut laptop = Browser::new("laptop");
    laptop.edit("1", "offline work");
    laptop.edit("2", "more offline work");
    laptop.scan(100);
    assert_eq!(laptop.sync.waiting(), 2);
    // Reload: the state comes back from its saved JSON.
    laptop.sync = SyncState::from_json(&laptop.sync.to_json()).expect("reads back");
    assert_eq!(laptop.sync.waiting(), 2, "the queue survived");
    laptop.sync(&mut server, 200);
    assert_eq!(laptop.sync.waiting(), 0);
    assert_eq!(server.seq, 2, "each record sent once");
    laptop.sync(&mut server, 300);
    assert_eq!(server.seq, 2, "nothing sent again: the history did not change");
    let history = laptop.history.clone();
    assert!(laptop.sync.next_push(|_, id| history.get(id).cloned()).is_empty());
    // A fresh browser (cleared storage) gets it all back.
    let mut fresh = Browser::new("laptop-again");
    fresh.sync(&mut server, 400);
    assert_eq!(fresh.history, laptop.history);
    assert_eq!(server.seq, 2, "pulling back what the server has pushes nothing");
}

#[test]
fn an_edit_made_while_its_push_was_in_flight_stays_queued_and_wins() {
    let mut server = Server::default();
    let mut laptop = Browser::new("laptop");
    laptop.edit("1", "first");
    laptop.scan(100);
    let history = laptop.history.clone();
    let batch = laptop.sync.next_push(|_, id| history.get(id).cloned());
    laptop.edit("1", "typed during the push");
    laptop.scan(150);
    let answer = server.push(&batch);
    assert!(laptop.sync.pushed(&batch, &answer).is_empty());
    assert_eq!(laptop.sync.waiting(), 1, "the newer edit still waits");
    laptop.sync(&mut server, 200);
    assert_eq!(server.pull(0).records[0].body["prompt"], "typed during the push");
}

#[test]
fn a_state_that_does_not_read_starts_fresh() {
    assert_eq!(SyncState::from_json("not json"), None);
    assert_eq!(super::state::fingerprint("abc"), super::state::fingerprint("abc"));
    assert_ne!(super::state::fingerprint("abc"), super::state::fingerprint("abd"));
}

#[test]
fn a_pulled_older_copy_does_not_replace_a_newer_change_waiting_here() {
    let mut server = Server::default();
    let (mut laptop, mut phone) = (Browser::new("laptop"), Browser::new("phone"));
    phone.edit("1", "the phone's, earlier");
    phone.sync(&mut server, 100);
    // The laptop made the same entry offline, later, and pulls before it pushes.
    laptop.edit("1", "the laptop's, later");
    laptop.scan(500);
    let apply = laptop.sync.pulled(&server.pull(0));
    assert!(apply.is_empty(), "the older pulled copy is not written here: {apply:?}");
    assert_eq!(laptop.sync.waiting(), 1, "the laptop's change still waits");
    laptop.sync(&mut server, 600);
    phone.sync(&mut server, 700);
    assert_eq!(phone.prompt("1"), Some("the laptop's, later"));
}

#[test]
fn deletions_are_pushed_first_and_alone_so_a_full_server_takes_them() {
    let mut server = Server::default();
    let mut laptop = Browser::new("laptop");
    laptop.edit("1", "kept");
    laptop.edit("2", "to delete");
    laptop.sync(&mut server, 100);
    // A new entry that sorts first, and a deletion made to free room for it.
    laptop.edit("0", "new");
    laptop.history.remove("2");
    laptop.scan(200);
    let history = laptop.history.clone();
    let batch = laptop.sync.next_push(|_, id| history.get(id).cloned());
    assert_eq!(batch.iter().map(|r| (r.id.as_str(), r.deleted)).collect::<Vec<_>>(), [("2", true)]);
    let answer = server.push(&batch);
    laptop.sync.pushed(&batch, &answer);
    let batch = laptop.sync.next_push(|_, id| history.get(id).cloned());
    assert_eq!(batch.iter().map(|r| (r.id.as_str(), r.deleted)).collect::<Vec<_>>(), [("0", false)]);
}
