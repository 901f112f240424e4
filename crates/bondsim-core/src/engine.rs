//! The event queue: a min-heap keyed by `(time, insertion sequence)`.
//!
//! Ordering guarantee: events run in time order, and events scheduled for the
//! same time run in the order they were scheduled (FIFO), exactly as SimPy's
//! `(time, priority, counter)` heap does. One exception, for arrivals:
//! events scheduled with [`EventQueue::schedule_ranked`] run after the plain
//! events of their instant, in the order of their rank (bondsim ranks packet
//! deliveries by the order the bond sent them, so two packets reaching the
//! receiver at the same instant are taken in sending order). Nothing else
//! breaks ties, so a run is a pure function of its scenario and seed.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::time::SimTime;

struct Entry<E> {
    /// `time << 64 | seq`: one integer compare orders by time, then insertion.
    key: u128,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, other: &Self) -> Ordering {
        // BinaryHeap is a max-heap: reverse so the earliest key is on top.
        other.key.cmp(&self.key)
    }
}

/// The order of an event scheduled at `at` with insertion sequence `seq`.
pub fn key(at: SimTime, seq: u64) -> u128 {
    (u128::from(at.0) << 64) | u128::from(seq)
}

/// The time of an event's key.
pub fn key_time(key: u128) -> SimTime {
    SimTime((key >> 64) as u64)
}

/// A deterministic future-event list.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    next_seq: u64,
    now: SimTime,
    processed: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue { heap: BinaryHeap::new(), next_seq: 0, now: SimTime::ZERO, processed: 0 }
    }
}

impl<E> EventQueue<E> {
    /// An empty queue at time zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// The time of the event being (or last) processed.
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Number of events popped so far.
    pub fn processed(&self) -> u64 {
        self.processed
    }

    /// Schedules `event` at absolute time `at` (never earlier than now).
    pub fn schedule(&mut self, at: SimTime, event: E) {
        debug_assert!(at >= self.now, "event scheduled in the past: {at} < {}", self.now);
        let key = key(at, self.next_seq);
        self.next_seq += 1;
        self.heap.push(Entry { key, event });
    }

    /// Takes the next insertion sequence number without scheduling anything: the place in
    /// the order of its instant that an event scheduled now would have. An event kept out of
    /// the queue (a paced link's idle wake-up, `sim.rs`) holds its place this way, so that
    /// every other event keeps the sequence number it would have had with it in the queue.
    pub fn reserve(&mut self) -> u64 {
        self.next_seq += 1;
        self.next_seq - 1
    }

    /// Schedules `event` at `at` in the place `seq` (from [`EventQueue::reserve`]).
    pub fn schedule_reserved(&mut self, at: SimTime, seq: u64, event: E) {
        debug_assert!(at >= self.now && seq < self.next_seq, "event scheduled in the past or unreserved");
        self.heap.push(Entry { key: key(at, seq), event });
    }

    /// The key (`time << 64 | seq`) of the next event, if any: events run in key order.
    pub fn next_key(&self) -> Option<u128> {
        self.heap.peek().map(|e| e.key)
    }

    /// Schedules `event` at `at`, after every plain event of that instant, ordered by `rank`
    /// among ranked ones (`rank` must be unique among events of one instant and below 2^63).
    pub fn schedule_ranked(&mut self, at: SimTime, rank: u64, event: E) {
        debug_assert!(at >= self.now, "event scheduled in the past: {at} < {}", self.now);
        debug_assert!(rank < 1 << 63, "rank out of range");
        let key = (u128::from(at.0) << 64) | u128::from(rank | 1 << 63);
        self.heap.push(Entry { key, event });
    }

    /// Schedules `event` after `delay` from now.
    pub fn schedule_in(&mut self, delay: SimTime, event: E) {
        self.schedule(self.now + delay, event);
    }

    /// Removes the next event and advances the clock to its time.
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let entry = self.heap.pop()?;
        self.now = key_time(entry.key);
        self.processed += 1;
        Some((self.now, entry.event))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_times_run_in_insertion_order() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(10), "b1");
        q.schedule(SimTime(5), "a");
        q.schedule(SimTime(10), "b2");
        q.schedule(SimTime(10), "b3");
        q.schedule(SimTime(7), "a2");
        let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, ["a", "a2", "b1", "b2", "b3"]);
        assert_eq!(q.processed(), 5);
    }

    #[test]
    fn events_scheduled_while_running_keep_fifo_among_equals() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(0), 0u32);
        q.schedule(SimTime(0), 1u32);
        let (_, first) = q.pop().unwrap();
        assert_eq!(first, 0);
        // Scheduled now, for now: must run after the already-waiting event 1.
        q.schedule_in(SimTime(0), 2);
        assert_eq!(q.pop().unwrap().1, 1);
        assert_eq!(q.pop().unwrap().1, 2);
        assert!(q.pop().is_none());
    }

    #[test]
    fn ranked_events_follow_plain_ones_of_their_instant_in_rank_order() {
        let mut q = EventQueue::new();
        q.schedule_ranked(SimTime(5), 9, "r9");
        q.schedule_ranked(SimTime(5), 2, "r2");
        q.schedule(SimTime(5), "plain");
        q.schedule_ranked(SimTime(4), 7, "early");
        let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, ["early", "plain", "r2", "r9"]);
    }

    #[test]
    fn a_reserved_place_orders_as_if_scheduled_when_reserved() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(5), "first");
        let seq = q.reserve();
        q.schedule(SimTime(5), "third");
        q.schedule_reserved(SimTime(5), seq, "second");
        assert_eq!(q.next_key(), Some(key(SimTime(5), 0)));
        let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, ["first", "second", "third"]);
        assert_eq!(q.next_key(), None);
    }

    #[test]
    fn clock_advances_to_popped_time() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(42), ());
        q.pop();
        assert_eq!(q.now(), SimTime(42));
        q.schedule_in(SimTime(8), ());
        assert_eq!(q.pop().unwrap().0, SimTime(50));
    }
}
