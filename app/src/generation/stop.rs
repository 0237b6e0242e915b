//! Stopping a generation: by the person (Cancel, Esc), by a newer one replacing it, or to run it
//! again (a tile's Retry).

use super::{CodeChange, Command, Display, Generation, StreamStatus, Surface};

impl Generation {
    /// The person stopped it. The editor keeps exactly what it shows (text still in flight is
    /// dropped), except that a stopped edit changes nothing: the code it started from comes back.
    pub fn cancel(&mut self) -> Vec<Command> {
        let mut out = Vec::new();
        let Some(id) = self.stream else { return out };
        let stoppable = match self.surface {
            // A single run whose page is about to show may still be stopped (it stays as it is).
            Surface::Editor => self.status == StreamStatus::Streaming && !self.frozen,
            Surface::Tile => self.streaming(),
        };
        if !stoppable {
            return out;
        }
        self.set_status(StreamStatus::Cancelled, &mut out);
        out.push(Command::CancelStream(id));
        self.frozen = true;
        if self.surface == Surface::Editor {
            out.push(Command::Code(CodeChange::Finish));
            if let Some(base) = self.job.base.clone() {
                out.push(Command::Show(Display::Edit(None)));
                out.push(Command::Restore(base));
            }
        }
        self.finish_worker(&mut out);
        out
    }

    /// Another generation replaces this one: its stream stops if text may still arrive, and the
    /// worker forgets it. Nothing is shown: its display belongs to the next one.
    pub fn retire(&mut self) -> Vec<Command> {
        let mut out = Vec::new();
        if let Some(id) = self.stream {
            if self.streaming() {
                out.push(Command::CancelStream(id));
            }
            self.frozen = true;
            self.finish_worker(&mut out);
        }
        out
    }

    /// Runs it again at `now_ms` with the same model and sampling (a tile's Retry).
    pub fn retry(&mut self, now_ms: f64) -> Vec<Command> {
        let mut out = self.cancel();
        // A stream that ended on its own has told the worker already; this one is forgotten too.
        self.finish_worker(&mut out);
        out.extend(self.start(now_ms));
        out
    }
}
