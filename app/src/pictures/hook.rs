//! The pictures' signals, and the stream in which a vision model describes them for a code model
//! that does not see. The description starts as soon as it is needed (a picture is attached, or a
//! model that does not see is picked), so it is there to read and correct before Run.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use flint_protocol::image::MAX_IMAGES;
use flint_protocol::picture::describe_request;
use flint_protocol::worker::WorkerRequest;
use flint_protocol::{StartRequest, StreamId};
use leptos::prelude::*;

use super::{Attached, DescribeStatus, Description, SavedPictures, describer, fit, key};
use crate::context::{FanOut, ModelChoice};
use crate::gateway::{StreamEvent, StreamHandler, WorkerLink};
use crate::interop::images::{PictureFile, prepare};

type StartFn = Rc<dyn Fn(StartRequest, StreamHandler) -> StreamId>;
type CancelFn = Rc<dyn Fn(StreamId)>;

struct Inner {
    start: StartFn,
    cancel: CancelFn,
    worker: WorkerLink,
    /// Descriptions made in this tab, per pictures and model (see [`key`]).
    cache: RefCell<HashMap<u64, Description>>,
    /// The describing stream, while it runs.
    stream: Cell<Option<StreamId>>,
    /// The last describing stream started: only its events count (one cancelled for "Describe
    /// again" has the same pictures).
    latest: Cell<StreamId>,
    next_id: Cell<u32>,
}

/// The pictures of the next prompt, and their description; `Copy`, from context.
#[derive(Clone, Copy)]
pub struct Pictures {
    /// The attached pictures, in order.
    pub images: RwSignal<Vec<Attached>>,
    /// Why the last picture offered was refused, as a sentence.
    pub problem: RwSignal<Option<String>>,
    /// Pictures being read and downscaled.
    pub preparing: RwSignal<u32>,
    /// The description of the pictures for the models that do not see, when one is needed.
    pub description: RwSignal<Option<Description>>,
    /// The vision model the run's models need (`None`: they all see, or there is no picture).
    pub needed: Memo<Option<String>>,
    /// The pictures came with a shared link: nothing describes them until the person asks (Run,
    /// or "Describe"), as nothing runs on opening any link.
    pub held: RwSignal<bool>,
    inner: StoredValue<Rc<Inner>, LocalStorage>,
}

/// The [`Pictures`] provided by the app.
pub fn expect_pictures() -> Pictures {
    expect_context::<Pictures>()
}

/// The models the next run goes to: the compared ones, or the one picked.
pub fn run_models(choice: ModelChoice, fan_out: FanOut) -> Vec<String> {
    if fan_out.compare.get() { fan_out.compared.get() } else { choice.selected.get().into_iter().collect() }
}

/// Makes and provides the [`Pictures`]; `start`/`cancel` are the gateway's (`use_gateway`).
pub fn provide_pictures(
    start: impl Fn(StartRequest, StreamHandler) -> StreamId + 'static,
    cancel: impl Fn(StreamId) + 'static,
    worker: WorkerLink,
    choice: ModelChoice,
    fan_out: FanOut,
) -> Pictures {
    let images = RwSignal::new(Vec::<Attached>::new());
    let needed = Memo::new(move |_| {
        if images.with(Vec::is_empty) {
            return None;
        }
        let models = run_models(choice, fan_out);
        choice.models.with(|list| match list {
            Some(Ok(list)) => describer(list, &models),
            _ => None,
        })
    });
    let inner = Inner {
        start: Rc::new(start),
        cancel: Rc::new(cancel),
        worker,
        cache: RefCell::new(HashMap::new()),
        stream: Cell::new(None),
        latest: Cell::new(0),
        next_id: Cell::new(1),
    };
    let pictures = Pictures {
        images,
        problem: RwSignal::new(None),
        preparing: RwSignal::new(0),
        description: RwSignal::new(None),
        needed,
        held: RwSignal::new(false),
        inner: StoredValue::new_local(Rc::new(inner)),
    };
    // Describe what needs describing, once per pictures and model (and again when a hold ends).
    Effect::new(move |_| {
        let by = needed.get();
        pictures.held.track();
        let wanted = images.with(|i| by.as_ref().map(|by| key(i, by)));
        if wanted != pictures.description.with_untracked(|d| d.as_ref().map(|d| d.key)) {
            pictures.describe(false);
        }
    });
    provide_context(pictures);
    pictures
}

impl Pictures {
    /// Reads, checks and downscales `files`, attaching each that is a picture (up to
    /// [`MAX_IMAGES`]); a refusal names the file and says why.
    pub fn add(&self, files: Vec<PictureFile>) {
        let this = *self;
        for file in files {
            if self.images.with_untracked(Vec::len) + self.preparing.get_untracked() as usize >= MAX_IMAGES {
                self.problem.set(Some(format!(
                    "{}: a prompt takes at most {MAX_IMAGES} pictures; remove one first.",
                    file.name
                )));
                return;
            }
            self.preparing.update(|n| *n += 1);
            // Attaching one of their own is the person asking: the shared ones are described too.
            self.held.set(false);
            leptos::task::spawn_local(async move {
                let prepared = prepare(&file, fit).await;
                this.preparing.update(|n| *n = n.saturating_sub(1));
                match prepared {
                    Ok(image) => {
                        let id = this.inner.with_value(|inner| {
                            let id = inner.next_id.get();
                            inner.next_id.set(id + 1);
                            id
                        });
                        this.problem.set(None);
                        this.images.update(|all| all.push(Attached { id, name: file.name, image }));
                    }
                    Err(why) => this.problem.set(Some(format!("{} was not attached: {why}.", file.name))),
                }
            });
        }
    }

    /// Puts back the pictures a reload kept, and their description (it is not asked for again);
    /// pictures a shared link brought stay held until the person asks.
    pub fn restore(&self, saved: SavedPictures) {
        if saved.held {
            self.held.set(true);
        }
        let inner = self.inner.get_value();
        let images: Vec<Attached> = saved
            .images
            .into_iter()
            .map(|(name, image)| {
                let id = inner.next_id.get();
                inner.next_id.set(id + 1);
                Attached { id, name, image }
            })
            .collect();
        if let Some((by, text)) = saved.description {
            let key = key(&images, &by);
            inner.cache.borrow_mut().insert(key, Description { key, by, text, status: DescribeStatus::Done });
        }
        self.images.set(images);
    }

    /// Attaches the pictures a shared link carried (already checked, in place of any attached),
    /// held: none is described until the person asks ([`Pictures::release`]).
    pub fn attach_shared(&self, shared: SavedPictures) {
        self.held.set(true);
        self.restore(shared);
    }

    /// Ends a hold ([`Pictures::attach_shared`]): the pictures are described if a model needs it.
    pub fn release(&self) {
        self.held.set(false);
    }

    /// What the saved session keeps, as a memo: it changes when the pictures do, or when a
    /// description is complete or corrected, not with each streamed piece of one.
    pub fn saved(&self) -> Memo<Option<SavedPictures>> {
        let (images, description, held) = (self.images, self.description, self.held);
        let finished = Memo::new(move |_| {
            description.with(|d| d.as_ref().filter(|d| d.status == DescribeStatus::Done).cloned())
        });
        Memo::new(move |_| {
            let finished = finished.get();
            images.with(|images| SavedPictures::of(images, finished.as_ref(), held.get()))
        })
    }

    /// Removes the picture `id`.
    pub fn remove(&self, id: u32) {
        self.images.update(|all| all.retain(|a| a.id != id));
    }

    /// The person's correction of the description.
    pub fn edit_description(&self, text: String) {
        self.description.update(|d| {
            if let Some(d) = d.as_mut() {
                d.text = text;
                self.inner.with_value(|inner| inner.cache.borrow_mut().insert(d.key, d.clone()));
            }
        });
    }

    /// Describes the pictures with the model [`Self::needed`] names, from the cache unless `again`;
    /// with none needed, forgets the shown description (and stops one streaming).
    pub fn describe(&self, again: bool) {
        let this = *self;
        let inner = self.inner.get_value();
        if let Some(id) = inner.stream.take() {
            (inner.cancel)(id);
        }
        let Some(by) = self.needed.get_untracked() else {
            self.description.set(None);
            return;
        };
        if self.held.get_untracked() && !again {
            self.description.set(None);
            return;
        }
        let images = self.images.get_untracked();
        let key = key(&images, &by);
        if !again
            && let Some(cached) = inner.cache.borrow().get(&key).filter(|d| d.status == DescribeStatus::Done)
        {
            self.description.set(Some(cached.clone()));
            return;
        }
        self.description.set(Some(Description {
            key,
            by: by.clone(),
            text: String::new(),
            status: DescribeStatus::Streaming,
        }));
        let sent: Vec<_> = images.into_iter().map(|a| a.image).collect();
        let id_cell = Rc::new(Cell::new(0));
        let for_handler = Rc::clone(&id_cell);
        let handler: StreamHandler = Rc::new(move |event| this.on_event(key, for_handler.get(), event));
        let id = (inner.start)(describe_request(&by, &sent), handler);
        id_cell.set(id);
        inner.stream.set(Some(id));
        inner.latest.set(id);
        inner.worker.send(&WorkerRequest::Reset { stream: id, preview_only: false, base: None });
    }

    /// An event of the describing stream `id` for the pictures `key`.
    fn on_event(&self, key: u64, id: StreamId, event: StreamEvent) {
        let inner = self.inner.get_value();
        let current = self.description.with_untracked(|d| d.as_ref().is_some_and(|d| d.key == key));
        if !current || id != inner.latest.get() {
            return;
        }
        match event {
            StreamEvent::Parsed(update) => self.description.update(|d| {
                let Some(d) = d.as_mut() else { return };
                if update.code_reset {
                    d.text.clear();
                }
                d.text.push_str(&update.code_append);
                if update.done {
                    if d.status == DescribeStatus::Streaming {
                        d.status = DescribeStatus::Done;
                    }
                    if d.text.trim().is_empty() && d.status == DescribeStatus::Done {
                        d.status = DescribeStatus::Failed(format!("{} answered with no description", d.by));
                    }
                    inner.cache.borrow_mut().insert(key, d.clone());
                }
            }),
            StreamEvent::Done { .. } => {
                inner.stream.set(None);
                inner.worker.send(&WorkerRequest::Finish { stream: id });
            }
            StreamEvent::Failed { message, .. } => {
                inner.stream.set(None);
                self.description.update(|d| {
                    if let Some(d) = d.as_mut() {
                        d.status = DescribeStatus::Failed(message);
                    }
                });
                inner.worker.send(&WorkerRequest::Finish { stream: id });
            }
            _ => {}
        }
    }
}
