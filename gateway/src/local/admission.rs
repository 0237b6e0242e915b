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

use crate::providers::ClientId;

/// The index in `waiting` (clients in arrival order) of the request to admit next, given the
/// clients of the running sequences; `None` when nothing waits.
pub fn next_job<I>(waiting: I, running: &[ClientId]) -> Option<usize>
where
    I: IntoIterator<Item = ClientId>,
{
    let running_for = |client: ClientId| running.iter().filter(|&&c| c == client).count();
    // `min_by_key` keeps the first of equal keys: ties go to the earliest arrival.
    waiting.into_iter().enumerate().min_by_key(|&(_, client)| running_for(client)).map(|(at, _)| at)
}

#[cfg(test)]
mod tests {
    use super::next_job;
    use crate::providers::ClientId;

    const A: ClientId = 1;
    const B: ClientId = 2;
    const C: ClientId = 3;

    /// Admits from `waiting` into `free` sequences next to `running`; returns the clients admitted,
    /// in order, as the scheduler does when several sequences are free at once.
    fn admit(waiting: &mut Vec<ClientId>, running: &mut Vec<ClientId>, free: usize) -> Vec<ClientId> {
        let mut admitted = Vec::new();
        for _ in 0..free {
            let Some(at) = next_job(waiting.iter().copied(), running) else { break };
            let client = waiting.remove(at);
            running.push(client);
            admitted.push(client);
        }
        admitted
    }

    #[test]
    fn nothing_waiting_admits_nothing() {
        assert_eq!(next_job([], &[A, B]), None);
    }

    #[test]
    fn a_connection_with_fewer_sequences_goes_ahead_of_earlier_arrivals() {
        // A's ten variations arrived first and A already runs two; B's one request comes next.
        let mut waiting = vec![A; 8];
        waiting.push(B);
        assert_eq!(next_job(waiting.iter().copied(), &[A, A]), Some(8));
    }

    #[test]
    fn ties_go_to_the_earliest_arrival() {
        assert_eq!(next_job([B, A, C], &[]), Some(0));
        assert_eq!(next_job([A, B, C, B], &[A, C]), Some(1));
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
}
