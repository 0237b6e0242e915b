//! The main preview made ready for a React answer before it exists (`Preview::prepare`).

use super::{Inner, Runner};

impl Runner {
    /// Makes the main preview ready for a React answer (`on`), or lets that go: see
    /// [`crate::interop::preview::Preview::prepare`].
    pub fn warm_react(&self, on: bool) {
        let inner = self.inner();
        if !on {
            if let Some(preview) = inner.preview.borrow().as_ref() {
                preview.prepare(None);
            }
            return;
        }
        let prepare = |inner: &Inner, doc: String| {
            if let Some(preview) = inner.preview.borrow().as_ref() {
                preview.prepare(Some(doc));
            }
        };
        let ready = inner.ready_page.borrow().clone();
        if let Some(doc) = ready {
            prepare(&inner, doc);
            return;
        }
        let this = inner.this.clone();
        inner.worker.warm_page(move |built| {
            let (Some(inner), Ok(doc)) = (this.upgrade(), built) else { return };
            *inner.ready_page.borrow_mut() = Some(doc.clone());
            prepare(&inner, doc);
        });
    }
}
