//! Checking finished pages: every page that runs in a preview (a tile's or the main one) runs once
//! more, hidden, in a check frame, and its report lands on the tile or in [`RunState::checks`](super::RunState).
//! A page held still (from a link or a restore) is never checked: checking runs its scripts.

use leptos::prelude::*;

use super::{Inner, Target};
use crate::interop::preview::Preview;
use crate::judge::{Checked, Expect, expect_json, guard_loops, report};

impl Inner {
    /// Checks `doc`, which just started running in `target`'s preview, against `expect`.
    pub(super) fn check_page(&self, target: Target, preview: &Preview, doc: &str, expect: Expect) {
        let seq = self.check_seq.get() + 1;
        self.check_seq.set(seq);
        self.set_checked(target, seq, Checked::Running);
        let weak = self.this.clone();
        let page = doc.to_owned();
        // The check frame clicks every button: its copy has guarded loops (see `judge::guard`).
        preview.check(&guard_loops(doc), &expect_json(&expect), move |json| {
            let Some(inner) = weak.upgrade() else { return };
            let report = report::read(&json, &expect, &page);
            inner.finish_check(target, seq, Checked::Done(report));
        });
    }

    /// A new answer begins in `target`: its earlier page's report no longer applies, and a check
    /// still running for it is ignored when it ends.
    pub(super) fn forget_checks(&self, target: Target) {
        let seq = self.check_seq.get() + 1;
        self.check_seq.set(seq);
        self.set_checked(target, seq, Checked::Waiting);
        self.forget_likeness(target);
    }

    /// The number of `target`'s latest check (0 for a tile that is gone): a likeness drawn for the
    /// same page shares it.
    pub(super) fn current_check(&self, target: Target) -> u64 {
        match target {
            Target::Main => self.main_check.get(),
            Target::Tile(key) => {
                self.tiles.borrow().iter().find(|t| t.view.key == key).map_or(0, |t| t.check.get())
            }
        }
    }

    fn finish_check(&self, target: Target, seq: u64, checked: Checked) {
        if self.current_check(target) == seq {
            self.set_checked(target, seq, checked);
        }
    }

    fn set_checked(&self, target: Target, seq: u64, checked: Checked) {
        match target {
            Target::Main => {
                self.main_check.set(seq);
                self.state.checks.set(checked);
            }
            Target::Tile(key) => {
                let tiles = self.tiles.borrow();
                if let Some(tile) = tiles.iter().find(|t| t.view.key == key) {
                    tile.check.set(seq);
                    tile.view.checks.set(checked);
                }
            }
        }
    }
}
