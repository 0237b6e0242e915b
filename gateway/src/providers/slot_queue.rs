//! Who runs next on a provider that takes only so many generations at once (`max_concurrent`, or
//! the slots its server reports). Plain bookkeeping, no I/O: [`super::slots`] drives it.
//!
//! Waiting requests take turns between tabs rather than strictly by arrival: one tab's ten
//! variations would otherwise hold every other tab back until all ten had run. Within a tab they
//! start in the order they were sent. The number waiting is bounded so a flood of requests is
//! refused at once, with a message, instead of queueing without end.

use std::collections::VecDeque;

use super::ClientId;

/// A waiting request's number, unique within one queue.
pub(crate) type Ticket = u64;

/// What happens to a request that arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arrival {
    /// A slot is free: it runs now.
    Run,
    /// It waits for a slot.
    Wait,
    /// The queue is full: it is refused.
    Full,
}

/// The running count, the limit and the waiting requests of one provider.
#[derive(Debug)]
pub(crate) struct SlotQueue {
    /// `None`: no limit.
    limit: Option<usize>,
    max_waiting: usize,
    running: usize,
    /// Tabs with waiting requests, the one whose turn is next first; each with its requests,
    /// oldest first.
    turns: VecDeque<(ClientId, VecDeque<Ticket>)>,
    waiting: usize,
}

impl SlotQueue {
    /// A queue running at most `limit` generations (`None`: any number), with at most
    /// `max_waiting` requests waiting.
    pub fn new(limit: Option<usize>, max_waiting: usize) -> Self {
        Self { limit, max_waiting, running: 0, turns: VecDeque::new(), waiting: 0 }
    }

    /// The limit on running generations, if any.
    pub fn limit(&self) -> Option<usize> {
        self.limit
    }

    /// The most requests that may wait.
    pub fn max_waiting(&self) -> usize {
        self.max_waiting
    }

    /// Generations running now.
    pub fn running(&self) -> usize {
        self.running
    }

    fn has_room(&self) -> bool {
        self.limit.is_none_or(|limit| self.running < limit)
    }

    /// A request from `client` arrives as `ticket`. A free slot goes to it only when nobody waits:
    /// those that waited come first.
    pub fn arrive(&mut self, client: ClientId, ticket: Ticket) -> Arrival {
        if self.waiting == 0 && self.has_room() {
            self.running += 1;
            return Arrival::Run;
        }
        if self.waiting >= self.max_waiting {
            return Arrival::Full;
        }
        match self.turns.iter_mut().find(|(c, _)| *c == client) {
            Some((_, tickets)) => tickets.push_back(ticket),
            None => self.turns.push_back((client, VecDeque::from([ticket]))),
        }
        self.waiting += 1;
        Arrival::Wait
    }

    /// A running generation ended; returns the waiting tickets that run now.
    pub fn finish(&mut self) -> Vec<Ticket> {
        self.running = self.running.saturating_sub(1);
        self.admit()
    }

    /// A waiting request went away (cancelled, or its tab closed); returns whether it was waiting.
    pub fn leave(&mut self, ticket: Ticket) -> bool {
        let Some(at) = self.turns.iter().position(|(_, tickets)| tickets.contains(&ticket)) else {
            return false;
        };
        let tickets = &mut self.turns[at].1;
        tickets.retain(|t| *t != ticket);
        if tickets.is_empty() {
            self.turns.remove(at);
        }
        self.waiting -= 1;
        true
    }

    /// Changes the limit (the server told its slots); returns the waiting tickets that run now.
    /// A lower limit stops no generation: it applies as they end.
    pub fn set_limit(&mut self, limit: Option<usize>) -> Vec<Ticket> {
        self.limit = limit;
        self.admit()
    }

    fn admit(&mut self) -> Vec<Ticket> {
        let mut starting = Vec::new();
        while self.has_room() {
            let Some((client, mut tickets)) = self.turns.pop_front() else { break };
            let Some(ticket) = tickets.pop_front() else { continue };
            if !tickets.is_empty() {
                // Its next request waits for the other tabs' turns.
                self.turns.push_back((client, tickets));
            }
            self.waiting -= 1;
            self.running += 1;
            starting.push(ticket);
        }
        starting
    }

    /// Every waiting ticket with the number that will start before it, in the order they will
    /// start (taking turns as [`Self::finish`] does, if no one else arrives or leaves).
    pub fn order(&self) -> Vec<(Ticket, usize)> {
        let longest = self.turns.iter().map(|(_, tickets)| tickets.len()).max().unwrap_or(0);
        let mut order = Vec::with_capacity(self.waiting);
        for round in 0..longest {
            for (_, tickets) in &self.turns {
                if let Some(ticket) = tickets.get(round) {
                    order.push((*ticket, order.len()));
                }
            }
        }
        order
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ends running generations one by one, collecting who starts.
    fn drain(queue: &mut SlotQueue) -> Vec<Ticket> {
        let mut started = Vec::new();
        while queue.running() > 0 {
            started.extend(queue.finish());
        }
        started
    }

    #[test]
    fn without_a_limit_everything_runs_at_once() {
        let mut queue = SlotQueue::new(None, 4);
        for ticket in 0..100 {
            assert_eq!(queue.arrive(1, ticket), Arrival::Run);
        }
        assert_eq!(queue.running(), 100);
        assert!(queue.order().is_empty());
    }

    #[test]
    fn one_slot_runs_requests_one_after_another_in_order() {
        let mut queue = SlotQueue::new(Some(1), 64);
        assert_eq!(queue.arrive(1, 10), Arrival::Run);
        for ticket in 11..14 {
            assert_eq!(queue.arrive(1, ticket), Arrival::Wait);
        }
        assert_eq!(queue.order(), [(11, 0), (12, 1), (13, 2)]);
        assert_eq!(queue.finish(), [11], "the slot goes to the oldest waiting request");
        assert_eq!(queue.order(), [(12, 0), (13, 1)]);
        assert_eq!(drain(&mut queue), [12, 13]);
        assert_eq!(queue.arrive(1, 14), Arrival::Run, "an idle queue runs at once");
    }

    #[test]
    fn tabs_take_turns() {
        let mut queue = SlotQueue::new(Some(1), 64);
        assert_eq!(queue.arrive(1, 1), Arrival::Run);
        for ticket in 2..=5 {
            queue.arrive(1, ticket);
        }
        // Another tab's request arrives after the first tab's four.
        queue.arrive(2, 20);
        queue.arrive(2, 21);
        assert_eq!(queue.order(), [(2, 0), (20, 1), (3, 2), (21, 3), (4, 4), (5, 5)]);
        assert_eq!(drain(&mut queue), [2, 20, 3, 21, 4, 5], "the order told is the order run");
    }

    #[test]
    fn a_request_that_leaves_frees_its_place() {
        let mut queue = SlotQueue::new(Some(1), 2);
        queue.arrive(1, 1);
        queue.arrive(1, 2);
        queue.arrive(2, 3);
        assert_eq!(queue.arrive(1, 4), Arrival::Full, "two may wait");
        assert!(queue.leave(2));
        assert!(!queue.leave(2), "it left already");
        assert!(!queue.leave(1), "a running request is not waiting");
        assert_eq!(queue.order(), [(3, 0)]);
        assert_eq!(queue.arrive(1, 5), Arrival::Wait, "its place is free again");
        assert_eq!(drain(&mut queue), [3, 5]);
    }

    #[test]
    fn a_full_queue_refuses_without_changing() {
        let mut queue = SlotQueue::new(Some(2), 1);
        assert_eq!(queue.arrive(1, 1), Arrival::Run);
        assert_eq!(queue.arrive(1, 2), Arrival::Run);
        assert_eq!(queue.arrive(1, 3), Arrival::Wait);
        assert_eq!(queue.arrive(2, 4), Arrival::Full);
        assert_eq!(queue.order(), [(3, 0)]);
        assert_eq!(queue.running(), 2);
    }

    #[test]
    fn a_limit_learnt_later_applies_as_generations_end() {
        let mut queue = SlotQueue::new(None, 8);
        queue.arrive(1, 1);
        queue.arrive(1, 2);
        assert!(queue.set_limit(Some(1)).is_empty());
        assert_eq!(queue.arrive(1, 3), Arrival::Wait, "two already run, over the new limit");
        assert!(queue.finish().is_empty(), "one still runs, which is the limit");
        assert_eq!(queue.finish(), [3]);
        queue.arrive(1, 4);
        queue.arrive(1, 5);
        assert_eq!(queue.set_limit(Some(3)), [4, 5], "a higher limit starts those waiting");
    }
}
