//! Which waiting request gets the next free sequence of the embedded model.
//!
//! One browser tab may start ten variations at once on its one connection. Served first come, first
//! served, a second tab's single request would wait behind all ten. Instead a free sequence goes to
//! the waiting request whose connection runs the fewest sequences, the earliest among equals, so
//! while several connections wait their shares even out as sequences free up.
//!
//! Admission is work-conserving: a connection alone may fill every sequence, and running
//! sequences are never paused for a newcomer. Keeping a sequence idle in reserve would cost the
//! usual case (one person, one tab, several variations) throughput all the time, while a newcomer
//! waits only until the first running stream ends (bounded by the local `max_tokens`) and is then
//! first in line.
//!
//! Among connections that run as many sequences, the one whose request was taken least recently
//! goes first ([`Turns`]). That matters for requests that are refused once tokenized (a prompt too
//! long for the context): they never run, so by running count alone a tab's pile of them would
//! all go ahead of a later tab's request, each costing a tokenization on the engine thread. In
//! turns, the later tab waits for one of them.

use std::collections::HashMap;

use crate::provider::ClientId;

/// The index in `waiting` (clients in arrival order) of the request to admit next, given the
/// clients of the running sequences; `None` when nothing waits.
pub fn next_job<I>(waiting: I, running: &[ClientId], turns: &Turns) -> Option<usize>
where
    I: IntoIterator<Item = ClientId>,
{
    let running_for = |client: ClientId| running.iter().filter(|&&c| c == client).count();
    // `min_by_key` keeps the first of equal keys: ties go to the earliest arrival.
    waiting
        .into_iter()
        .enumerate()
        .min_by_key(|&(_, client)| (running_for(client), turns.last_taken(client)))
        .map(|(at, _)| at)
}

/// When each connection with requests waiting last had one taken, to break ties in [`next_job`].
/// A connection never taken from counts as longest ago. A connection with nothing waiting is
/// forgotten, so this stays as small as the queue, except the one taken from last: its next
/// request is often on its way already, and must not count as a newcomer's.
#[derive(Debug, Default)]
pub struct Turns {
    taken: HashMap<ClientId, u64>,
    clock: u64,
}

impl Turns {
    fn last_taken(&self, client: ClientId) -> u64 {
        self.taken.get(&client).copied().unwrap_or(0)
    }

    /// Records that a request of `client` was taken; `waiting` are the clients still waiting.
    pub fn took(&mut self, client: ClientId, waiting: &[ClientId]) {
        self.clock += 1;
        self.taken.insert(client, self.clock);
        self.taken.retain(|c, _| *c == client || waiting.contains(c));
    }
}

#[cfg(test)]
mod tests {
    use super::{Turns, next_job};
    use crate::provider::ClientId;

    const A: ClientId = 1;
    const B: ClientId = 2;
    const C: ClientId = 3;

    /// Admits from `waiting` into `free` sequences next to `running`; returns the clients admitted,
    /// in order, as the scheduler does when several sequences are free at once.
    fn admit(waiting: &mut Vec<ClientId>, running: &mut Vec<ClientId>, free: usize) -> Vec<ClientId> {
        let mut admitted = Vec::new();
        let turns = Turns::default();
        for _ in 0..free {
            let Some(at) = next_job(waiting.iter().copied(), running, &turns) else { break };
            let client = waiting.remove(at);
            running.push(client);
            admitted.push(client);
        }
        admitted
    }

    #[test]
    fn nothing_waiting_admits_nothing() {
        assert_eq!(next_job([], &[A, B], &Turns::default()), None);
    }

    #[test]
    fn a_connection_with_fewer_sequences_goes_ahead_of_earlier_arrivals() {
        // A's ten variations arrived first and A already runs two; B's one request comes next.
        let mut waiting = vec![A; 8];
        waiting.push(B);
        assert_eq!(next_job(waiting.iter().copied(), &[A, A], &Turns::default()), Some(8));
    }

    #[test]
    fn ties_go_to_the_earliest_arrival() {
        let turns = Turns::default();
        assert_eq!(next_job([B, A, C], &[], &turns), Some(0));
        assert_eq!(next_job([A, B, C, B], &[A, C], &turns), Some(1));
    }

    #[test]
    fn a_connection_alone_may_fill_every_sequence() {
        // Work-conserving: with nobody else waiting, A's last request takes the last free sequence.
        let mut running = vec![A; 7];
        assert_eq!(admit(&mut vec![A, A], &mut running, 1), [A]);
        assert_eq!(running.len(), 8);
    }

    #[test]
    fn while_others_wait_freed_sequences_even_out_the_shares() {
        // A filled all eight sequences before B and C arrived, and has one more request waiting.
        let mut running = vec![A; 8];
        let mut waiting = vec![A, B, B, B, C];
        let mut admitted = Vec::new();
        for _ in 0..4 {
            // One of A's streams ends; its sequence goes to whoever runs the fewest.
            let at = running.iter().position(|&c| c == A).expect("A still runs");
            running.remove(at);
            admitted.extend(admit(&mut waiting, &mut running, 1));
        }
        assert_eq!(admitted, [B, C, B, B], "A's waiting request stays behind while B and C catch up");
        assert_eq!(waiting, [A]);
        let count = |client| running.iter().filter(|&&c| c == client).count();
        assert_eq!((count(A), count(B), count(C)), (4, 3, 1));
    }

    #[test]
    fn several_free_sequences_are_shared_out_in_one_go() {
        let mut running = Vec::new();
        let mut waiting = vec![A, A, A, A, B];
        assert_eq!(admit(&mut waiting, &mut running, 2), [A, B]);
        assert_eq!(waiting, [A, A, A]);
    }

    /// Takes requests one by one as the scheduler does when each is refused (none runs).
    fn take_all(waiting: &mut Vec<ClientId>, turns: &mut Turns) -> Vec<ClientId> {
        let mut taken = Vec::new();
        while let Some(at) = next_job(waiting.iter().copied(), &[], turns) {
            let client = waiting.remove(at);
            turns.took(client, waiting);
            taken.push(client);
        }
        taken
    }

    #[test]
    fn among_equals_connections_take_turns() {
        // A's pile of prompts that will be refused came first; B's one request after it.
        let mut turns = Turns::default();
        let taken = take_all(&mut vec![A, A, A, A, B], &mut turns);
        assert_eq!(taken, [A, B, A, A, A], "B waits for one of A's requests, not for all of them");
    }

    #[test]
    fn a_newcomer_goes_ahead_of_connections_already_served() {
        let mut turns = Turns::default();
        let mut waiting = vec![A, A, B, B];
        for expected in [A, B] {
            let at = next_job(waiting.iter().copied(), &[], &turns).expect("something waits");
            let client = waiting.remove(at);
            turns.took(client, &waiting);
            assert_eq!(client, expected);
        }
        waiting.push(C);
        assert_eq!(take_all(&mut waiting, &mut turns), [C, A, B], "C has not been served yet");
    }

    #[test]
    fn running_sequences_still_come_first() {
        // B was served more recently, but A runs two sequences and B none.
        let mut turns = Turns::default();
        turns.took(A, &[A, B]);
        turns.took(B, &[A, B]);
        assert_eq!(next_job([A, B], &[A, A], &turns), Some(1));
    }

    #[test]
    fn the_last_connection_served_is_remembered_even_with_nothing_waiting() {
        // A's first request was taken before its second reached the queue; B's came in between.
        let mut turns = Turns::default();
        turns.took(A, &[]);
        assert_eq!(next_job([A, B], &[], &turns), Some(1), "A's second request is not a newcomer's");
    }

    #[test]
    fn connections_with_nothing_waiting_are_forgotten() {
        let mut turns = Turns::default();
        turns.took(A, &[B]);
        turns.took(B, &[]);
        assert_eq!(turns.taken.keys().copied().collect::<Vec<_>>(), [B], "only the last one served is kept");
    }
}
