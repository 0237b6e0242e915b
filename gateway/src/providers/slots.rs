//! A provider's generation slots, shared by its streams: a stream [enters](Slots::enter) and
//! either runs at once, holding a [`Permit`] until it ends, or gets a [`Waiter`] that says how
//! many start before it and, in time, hands over the permit. Dropping either gives its place back
//! at once (a cancel, a closed tab). The order is [`SlotQueue`]'s; this adds the waking.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::watch;

use super::slot_queue::{Arrival, SlotQueue, Ticket};
use super::{ClientId, ProviderError, ProviderEvent};

/// Requests that may wait for one provider, all tabs together: enough for several tabs of ten
/// variations, and a bound on what a flood of requests holds.
pub(crate) const MAX_WAITING: usize = 64;

/// A hint for a refused request: slots free as answers end, usually within seconds.
const RETRY_AFTER: Duration = Duration::from_secs(5);

/// Where a waiting request stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Turn {
    /// This many start before it.
    Waiting(usize),
    /// A slot is held for it.
    Run,
}

#[derive(Debug)]
struct State {
    queue: SlotQueue,
    next_ticket: Ticket,
    /// The waiting requests, and those given a slot that have not claimed it yet.
    waiters: HashMap<Ticket, watch::Sender<Turn>>,
}

impl State {
    /// Tells every waiting request where it stands now, and those in `starting` to run.
    fn tell(&mut self, starting: &[Ticket]) {
        for ticket in starting {
            if let Some(turn) = self.waiters.get(ticket) {
                turn.send_replace(Turn::Run);
            }
        }
        for (ticket, ahead) in self.queue.order() {
            if let Some(turn) = self.waiters.get(&ticket) {
                turn.send_if_modified(|turn| {
                    let changed = *turn != Turn::Waiting(ahead);
                    *turn = Turn::Waiting(ahead);
                    changed
                });
            }
        }
    }
}

/// The slots of one provider.
#[derive(Debug)]
pub(crate) struct Slots {
    state: Mutex<State>,
}

/// The queue is full; the request may not wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Full {
    /// Generations the provider runs at once.
    pub limit: usize,
    /// Requests already waiting.
    pub waiting: usize,
}

impl Full {
    /// The refusal, naming the setting; `configured`: the limit is `max_concurrent`, not what the
    /// server reported.
    pub fn error(self, provider: &str, configured: bool) -> ProviderError {
        let Self { limit, waiting } = self;
        let source = if configured {
            format!("max_concurrent = {limit}")
        } else {
            format!("its server reports {limit} slot(s); set max_concurrent to change that")
        };
        let message = format!(
            "{provider} runs {limit} generation(s) at once ({source}) and {waiting} more already wait \
             for it; retry when some have finished, or cancel some"
        );
        ProviderError::RateLimited { message, retry_after: Some(RETRY_AFTER) }
    }
}

/// What [`Slots::enter`] gives a request.
#[derive(Debug)]
pub(crate) enum Entry {
    /// It runs now.
    Run(Permit),
    /// It waits; this many start before it.
    Wait(Waiter, usize),
}

/// What a [`Waiter`] learns next.
#[derive(Debug)]
pub(crate) enum Step {
    /// The number starting before it changed.
    Ahead(usize),
    /// Its turn: it runs now.
    Run(Permit),
}

/// A request's next step in the line, as a provider's stream acts on it.
#[derive(Debug)]
pub(crate) enum Admission {
    /// It runs now, holding this slot.
    Run(Permit),
    /// It waits: tell the page ([`ProviderEvent::Queued`]) and ask again with the waiter.
    Wait(Box<Waiter>, ProviderEvent),
    /// The line is full.
    Refused(ProviderError),
}

/// Joins the line (`waiter` is `None`) or waits for the next change in it: the one admission
/// step every queued provider's stream takes before it sends its request.
pub(crate) async fn take_turn(
    slots: &Arc<Slots>,
    person: ClientId,
    waiter: Option<Box<Waiter>>,
    provider: &str,
    limit_configured: bool,
) -> Admission {
    let queued = |ahead: usize| ProviderEvent::Queued { ahead: u32::try_from(ahead).unwrap_or(u32::MAX) };
    match waiter {
        None => match slots.enter(person) {
            Ok(Entry::Run(slot)) => Admission::Run(slot),
            Ok(Entry::Wait(waiter, ahead)) => Admission::Wait(Box::new(waiter), queued(ahead)),
            Err(full) => Admission::Refused(full.error(provider, limit_configured)),
        },
        Some(mut waiter) => match waiter.next().await {
            Step::Ahead(ahead) => Admission::Wait(waiter, queued(ahead)),
            Step::Run(slot) => Admission::Run(slot),
        },
    }
}

impl Slots {
    /// Slots for at most `limit` generations at once (`None`: any number).
    pub fn new(limit: Option<usize>) -> Arc<Self> {
        let state =
            State { queue: SlotQueue::new(limit, MAX_WAITING), next_ticket: 0, waiters: HashMap::new() };
        Arc::new(Self { state: Mutex::new(state) })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // The state is consistent between calls; a panic elsewhere leaves nothing half done.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Changes the limit, starting those waiting that now may.
    pub fn set_limit(&self, limit: Option<usize>) {
        let mut state = self.lock();
        let starting = state.queue.set_limit(limit);
        state.tell(&starting);
    }

    /// A request from `client` asks for a slot.
    pub fn enter(self: &Arc<Self>, client: ClientId) -> Result<Entry, Full> {
        let mut state = self.lock();
        let ticket = state.next_ticket;
        state.next_ticket += 1;
        match state.queue.arrive(client, ticket) {
            Arrival::Run => Ok(Entry::Run(Permit { slots: self.clone() })),
            Arrival::Full => Err(Full {
                limit: state.queue.limit().unwrap_or(state.queue.running()),
                waiting: state.queue.max_waiting(),
            }),
            Arrival::Wait => {
                let ahead = state.queue.order().iter().find(|(t, _)| *t == ticket).map_or(0, |(_, a)| *a);
                let (tx, turn) = watch::channel(Turn::Waiting(ahead));
                state.waiters.insert(ticket, tx);
                let waiter = Waiter { slots: self.clone(), ticket, turn, told: ahead, claimed: false };
                Ok(Entry::Wait(waiter, ahead))
            }
        }
    }

    /// A running generation ended.
    fn finish(&self) {
        let mut state = self.lock();
        let starting = state.queue.finish();
        state.tell(&starting);
    }
}

/// A running generation's slot, given back when dropped.
#[derive(Debug)]
pub(crate) struct Permit {
    slots: Arc<Slots>,
}

impl Drop for Permit {
    fn drop(&mut self) {
        self.slots.finish();
    }
}

/// A request waiting for a slot; dropping it leaves the queue.
#[derive(Debug)]
pub(crate) struct Waiter {
    slots: Arc<Slots>,
    ticket: Ticket,
    turn: watch::Receiver<Turn>,
    /// The count ahead last reported.
    told: usize,
    /// Its permit was handed over, and gives the slot back instead.
    claimed: bool,
}

impl Waiter {
    /// Waits until the number ahead changes or its turn comes.
    pub async fn next(&mut self) -> Step {
        loop {
            let turn = *self.turn.borrow_and_update();
            match turn {
                Turn::Run => {
                    self.claimed = true;
                    self.slots.lock().waiters.remove(&self.ticket);
                    return Step::Run(Permit { slots: self.slots.clone() });
                }
                Turn::Waiting(ahead) if ahead != self.told => {
                    self.told = ahead;
                    return Step::Ahead(ahead);
                }
                Turn::Waiting(_) => {}
            }
            // The sender lives in `slots` until this waiter is dropped or claims its slot, so this
            // never fails; were it to, waiting on is safer than running without a slot.
            if self.turn.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }
}

impl Drop for Waiter {
    fn drop(&mut self) {
        if self.claimed {
            return;
        }
        let mut state = self.slots.lock();
        state.waiters.remove(&self.ticket);
        let starting = if state.queue.leave(self.ticket) {
            Vec::new()
        } else {
            // Given a slot it never claimed: the slot goes to the next one.
            state.queue.finish()
        };
        state.tell(&starting);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn step(waiter: &mut Waiter) -> Step {
        tokio::time::timeout(Duration::from_secs(1), waiter.next()).await.expect("a step within 1 s")
    }

    fn waiting(entry: Result<Entry, Full>) -> (Waiter, usize) {
        match entry {
            Ok(Entry::Wait(waiter, ahead)) => (waiter, ahead),
            other => panic!("expected to wait, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_waiter_hears_its_place_then_its_turn() {
        let slots = Slots::new(Some(1));
        let Ok(Entry::Run(first)) = slots.enter(1) else { panic!("the first runs") };
        let (mut second, ahead) = waiting(slots.enter(1));
        assert_eq!(ahead, 0);
        let (mut third, ahead) = waiting(slots.enter(1));
        assert_eq!(ahead, 1);
        drop(first);
        let Step::Run(permit) = step(&mut second).await else { panic!("the second runs next") };
        assert!(matches!(step(&mut third).await, Step::Ahead(0)), "the third is next now");
        drop(permit);
        assert!(matches!(step(&mut third).await, Step::Run(_)));
    }

    #[tokio::test]
    async fn a_dropped_waiter_leaves_and_the_others_move_up() {
        let slots = Slots::new(Some(1));
        let Ok(Entry::Run(first)) = slots.enter(1) else { panic!("the first runs") };
        let (second, _) = waiting(slots.enter(1));
        let (mut third, _) = waiting(slots.enter(2));
        drop(second);
        assert!(matches!(step(&mut third).await, Step::Ahead(0)));
        drop(first);
        assert!(matches!(step(&mut third).await, Step::Run(_)));
    }

    #[tokio::test]
    async fn a_slot_given_to_a_waiter_that_left_goes_to_the_next() {
        let slots = Slots::new(Some(1));
        let Ok(Entry::Run(first)) = slots.enter(1) else { panic!("the first runs") };
        let (second, _) = waiting(slots.enter(1));
        let (mut third, _) = waiting(slots.enter(1));
        drop(first);
        // The slot is the second's now, but it goes away before claiming it.
        drop(second);
        assert!(matches!(step(&mut third).await, Step::Run(_)), "the slot must not be lost");
    }

    #[tokio::test]
    async fn a_full_queue_says_its_limit() {
        let slots = Slots::new(Some(1));
        let Ok(Entry::Run(_first)) = slots.enter(1) else { panic!("the first runs") };
        let waiters: Vec<_> = (0..MAX_WAITING).map(|_| waiting(slots.enter(1))).collect();
        assert!(matches!(slots.enter(2), Err(Full { limit: 1, waiting: MAX_WAITING })));
        drop(waiters);
        assert!(matches!(slots.enter(2), Ok(Entry::Wait(_, 0))), "those that left made room");
    }

    #[test]
    fn a_refusal_names_the_setting() {
        let full = Full { limit: 1, waiting: MAX_WAITING };
        let err = full.error("llamacpp", true);
        assert!(err.to_string().contains("max_concurrent = 1"), "{err}");
        assert_eq!(err.retry_after(), Some(RETRY_AFTER));
        let err = full.error("llamacpp", false);
        assert!(err.to_string().contains("reports 1 slot(s); set max_concurrent"), "{err}");
    }

    #[tokio::test]
    async fn a_limit_learnt_later_queues_the_next_request() {
        let slots = Slots::new(None);
        let Ok(Entry::Run(first)) = slots.enter(1) else { panic!("no limit yet") };
        slots.set_limit(Some(1));
        let (mut second, _) = waiting(slots.enter(1));
        slots.set_limit(Some(2));
        assert!(matches!(step(&mut second).await, Step::Run(_)), "a higher limit starts it");
        drop(first);
    }
}
