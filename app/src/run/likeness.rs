//! "Looks like the picture": with a picture in the prompt, every finished page that runs in a
//! preview (a tile's or the main one) is drawn once more, hidden, at the picture's size, and the
//! worker scores how alike they look; the score lands on the tile or in
//! [`RunState::likeness`](super::RunState). It shares its check's number, so a late score for a
//! page no longer shown is dropped, as a late check is.

use flint_protocol::image::ImageData;
use leptos::prelude::*;

use super::{Inner, Target};
use crate::interop::likeness::Drawn;
use crate::interop::preview::Preview;
use crate::judge::Likeness;
use crate::judge::likeness::in_picture_px;
use crate::prompt::Job;

/// The picture a job's pages are compared with: its first (the one a mock usually is).
pub(super) fn picture_of(job: &Job) -> Option<ImageData> {
    job.pictures.images.first().cloned()
}

/// What the worker compared at, of the picture's own width: picture.js draws at most 320 px wide.
fn compared_scale(picture: &ImageData, drawn: &Drawn) -> f32 {
    // Both sides are a few thousand px at most: f32 holds them exactly.
    #[allow(clippy::cast_precision_loss)]
    let scale = drawn.mock.width as f32 / picture.width.max(1) as f32;
    scale
}

impl Inner {
    /// Compares `doc`, which just started running in `target`'s preview and was just checked, with
    /// `picture`; without one, the target shows no likeness.
    pub(super) fn compare_page(
        &self,
        target: Target,
        preview: &Preview,
        doc: &str,
        picture: Option<ImageData>,
    ) {
        let Some(picture) = picture else {
            preview.stop_drawing();
            self.set_likeness(target, Likeness::None);
            return;
        };
        let seq = self.current_check(target);
        self.set_likeness(target, Likeness::Drawing);
        let weak = self.this.clone();
        let size = picture.clone();
        preview.draw_for_likeness(doc, &picture, move |drawn| {
            let Some(inner) = weak.upgrade() else { return };
            let drawn = match drawn {
                Ok(drawn) => drawn,
                Err(why) => return inner.finish_likeness(target, seq, Likeness::Failed(why)),
            };
            let scale = compared_scale(&size, &drawn);
            let weak = inner.this.clone();
            inner.worker.likeness(drawn.mock, drawn.page, move |report| {
                let Some(inner) = weak.upgrade() else { return };
                let likeness =
                    match (report.score, report.problem) {
                        (Some(score), _) => Likeness::Done {
                            score,
                            findings: report.findings.iter().map(|f| in_picture_px(f, scale)).collect(),
                        },
                        (None, problem) => Likeness::Failed(problem.unwrap_or_else(|| {
                            "The worker could not compare the page with the picture.".into()
                        })),
                    };
                inner.finish_likeness(target, seq, likeness);
            });
        });
    }

    /// A new answer begins in `target`: its earlier page's likeness no longer applies.
    pub(super) fn forget_likeness(&self, target: Target) {
        self.set_likeness(target, Likeness::None);
    }

    fn finish_likeness(&self, target: Target, seq: u64, likeness: Likeness) {
        if self.current_check(target) == seq {
            self.set_likeness(target, likeness);
        }
    }

    fn set_likeness(&self, target: Target, likeness: Likeness) {
        match target {
            Target::Main => self.state.likeness.set(likeness),
            Target::Tile(key) => {
                let tiles = self.tiles.borrow();
                if let Some(tile) = tiles.iter().find(|t| t.view.key == key) {
                    tile.view.likeness.set(likeness);
                }
            }
        }
    }
}
