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
//!
//! A popped event stays on top of the heap until the next one is scheduled, which then
//! takes its place with one sift down (most events schedule the next event of their
//! component: a removal and an insertion would each walk the heap). The order is the same.

use crate::time::SimTime;

#[derive(Clone, Copy)]
struct Entry<E> {
    /// `time << 64 | seq`: one integer compare orders by time, then insertion.
    key: u128,
    event: E,
}

/// A binary min-heap on `key`, its root at 0. Hand-written rather than `BinaryHeap`: the
/// loop's common step is "replace the root and sift it down" ([`EventQueue::push`] over a
/// taken event), which `BinaryHeap` offers only through `PeekMut` at several times the cost.
struct Heap<E>(Vec<Entry<E>>);

impl<E: Copy> Heap<E> {
    fn push(&mut self, entry: Entry<E>) {
        let mut pos = self.0.len();
        self.0.push(entry);
        while pos > 0 {
            let parent = (pos - 1) / 2;
            if self.0[parent].key <= entry.key {
                break;
            }
            self.0[pos] = self.0[parent];
            pos = parent;
        }
        self.0[pos] = entry;
    }

    /// Puts `entry` at the root in place of the entry there (the heap is not empty), and
    /// restores the order.
    fn replace_root(&mut self, entry: Entry<E>) {
        let heap = &mut self.0[..];
        let len = heap.len();
        let mut pos = 0;
        let mut child = 1;
        while child < len {
            // The lesser child, chosen without a branch (which child it is cannot be
            // predicted: a branch here missed on most sifts).
            if child + 1 < len {
                child += usize::from(heap[child + 1].key < heap[child].key);
            }
            if entry.key <= heap[child].key {
                break;
            }
            heap[pos] = heap[child];
            pos = child;
            child = 2 * pos + 1;
        }
        heap[pos] = entry;
    }

    fn pop_root(&mut self) {
        let last = self.0.pop().expect("a root to remove");
        if !self.0.is_empty() {
            self.replace_root(last);
        }
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
    heap: Heap<E>,
    /// Whether the heap's top is the event last popped (taken, its place not yet reused).
    taken: bool,
    next_seq: u64,
    now: SimTime,
    processed: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue { heap: Heap(Vec::new()), taken: false, next_seq: 0, now: SimTime::ZERO, processed: 0 }
    }
}

impl<E: Copy> EventQueue<E> {
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
    #[inline(always)]
    pub fn schedule(&mut self, at: SimTime, event: E) {
        debug_assert!(at >= self.now, "event scheduled in the past: {at} < {}", self.now);
        let key = key(at, self.next_seq);
        self.next_seq += 1;
        self.push(Entry { key, event });
    }

    /// Puts `entry` in the heap, in the taken top's place if there is one.
    #[inline]
    fn push(&mut self, entry: Entry<E>) {
        if self.taken {
            self.taken = false;
            self.heap.replace_root(entry);
        } else {
            self.heap.push(entry);
        }
    }

    /// Removes the taken top, if any, from the heap.
    #[inline]
    fn drop_taken(&mut self) {
        if self.taken {
            self.taken = false;
            self.heap.pop_root();
        }
    }

    /// Takes the next insertion sequence number without scheduling anything: the place in
    /// the order of its instant that an event scheduled now would have. An event kept out of
    /// the queue (a paced link's idle wake-up, `sim/idle.rs`) holds its place this way, so that
    /// every other event keeps the sequence number it would have had with it in the queue.
    pub fn reserve(&mut self) -> u64 {
        self.next_seq += 1;
        self.next_seq - 1
    }

    /// Takes the next `count` insertion sequence numbers at once (what `count` calls of
    /// [`EventQueue::reserve`] take), returning the first.
    pub fn reserve_many(&mut self, count: u64) -> u64 {
        self.next_seq += count;
        self.next_seq - count
    }

    /// Schedules `event` at `at` in the place `seq` (from [`EventQueue::reserve`]).
    pub fn schedule_reserved(&mut self, at: SimTime, seq: u64, event: E) {
        debug_assert!(at >= self.now && seq < self.next_seq, "event scheduled in the past or unreserved");
        self.push(Entry { key: key(at, seq), event });
    }

    /// The key (`time << 64 | seq`) of the next event, if any: events run in key order.
    pub fn next_key(&mut self) -> Option<u128> {
        self.drop_taken();
        self.heap.0.first().map(|e| e.key)
    }

    /// The events waiting in the queue, in no particular order.
    pub fn pending(&mut self) -> impl Iterator<Item = &E> {
        self.drop_taken();
        self.heap.0.iter().map(|e| &e.event)
    }

    /// Schedules `event` at `at`, after every plain event of that instant, ordered by `rank`
    /// among ranked ones (`rank` must be unique among events of one instant and below 2^63).
    pub fn schedule_ranked(&mut self, at: SimTime, rank: u64, event: E) {
        debug_assert!(at >= self.now, "event scheduled in the past: {at} < {}", self.now);
        debug_assert!(rank < 1 << 63, "rank out of range");
        let key = (u128::from(at.0) << 64) | u128::from(rank | 1 << 63);
        self.push(Entry { key, event });
    }

    /// Schedules `event` after `delay` from now.
    pub fn schedule_in(&mut self, delay: SimTime, event: E) {
        self.schedule(self.now + delay, event);
    }

    /// Removes the next event and advances the clock to its time.
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        self.drop_taken();
        let entry = self.heap.0.first()?;
        self.taken = true;
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
    fn an_event_scheduled_after_a_pop_takes_its_place_in_the_order() {
        let mut q = EventQueue::new();
        for (at, name) in [(10, "c"), (1, "a"), (20, "d")] {
            q.schedule(SimTime(at), name);
        }
        assert_eq!(q.pop(), Some((SimTime(1), "a")));
        // Replaces the taken "a" on top: earlier than "c", then later than "d".
        q.schedule(SimTime(5), "b");
        assert_eq!(q.pop(), Some((SimTime(5), "b")));
        q.schedule(SimTime(30), "e");
        let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, ["c", "d", "e"]);
        assert_eq!((q.processed(), q.next_key()), (5, None));
    }

    #[test]
    fn interleaved_schedules_and_pops_follow_key_order() {
        // Against a sorted reference: a pseudo-random mix of plain and ranked schedules and pops.
        let mut q = EventQueue::new();
        let mut reference = std::collections::BTreeMap::new();
        let mut x = 12345u64;
        let mut next = || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            x >> 33
        };
        for i in 0..5000u64 {
            match next() % 3 {
                0 | 1 => {
                    let at = q.now() + SimTime(next() % 50);
                    if next() % 4 == 0 {
                        q.schedule_ranked(at, i, i);
                        reference.insert((at.0, 1 << 63 | i), i);
                    } else {
                        reference.insert((at.0, q.next_seq), i);
                        q.schedule(at, i);
                    }
                }
                _ => {
                    let want = reference.pop_first().map(|((at, _), e)| (SimTime(at), e));
                    assert_eq!(q.pop(), want);
                }
            }
        }
        while let Some(((at, _), e)) = reference.pop_first() {
            assert_eq!(q.pop(), Some((SimTime(at), e)));
        }
        assert_eq!(q.pop(), None);
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
