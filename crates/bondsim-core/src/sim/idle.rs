//! Idle paced links waking outside the event queue, one by one, in bulk, or frozen while
//! the run drains; every figure as with every wake-up in the queue.

use super::*;

/// The idle paced links' wake-ups kept out of the event queue, and what the tests read of them.
pub(super) struct IdleLinks {
    /// Idle paced links' next wake-ups, kept out of the event queue: per link, the key
    /// (`engine::key`) its poll has in the queue's order, or [`NO_POLL`] (not idle, or not
    /// paced); and the smallest of them with its link. See [`World::idle_polls_before`].
    pub(super) polls: Vec<u128>,
    pub(super) next_poll: u128,
    pub(super) next_link: usize,
    /// Per link, the time between its idle wake-ups in nanoseconds when it is always the same
    /// ([`PacedLink::idle_step`]), else 0.
    pub(super) steps: Vec<u64>,
    /// Whether idle links may be frozen once the run only drains (paced sender, sink, no
    /// trace, nothing between the links and the clients; see [`World::freeze_idle_links`]),
    /// and the frozen ones: per link, the key of its first wake-up not run.
    pub(super) may_freeze: bool,
    pub(super) frozen: Vec<(usize, u128)>,
    /// Idle wake-ups counted in bulk, whether counting in bulk is off, and (when a test asks
    /// for it with `Some`) the idle links' wake-up keys after each [`World::idle_polls_before`]:
    /// what the tests check the bulk path by.
    #[cfg(test)]
    pub(super) bulk_polls: u64,
    #[cfg(test)]
    pub(super) bulk_off: bool,
    #[cfg(test)]
    pub(super) log: Option<Vec<Vec<u128>>>,
    /// Whether freezing is off, the links frozen, and the frozen links with a wake-up at the
    /// last event's time ([`World::settle_frozen`]): counted from their step, after the last
    /// event and before it; their first wake-up not run, after it and before it.
    #[cfg(test)]
    pub(super) freeze_off: bool,
    #[cfg(test)]
    pub(super) frozen_links: u64,
    #[cfg(test)]
    pub(super) frozen_ties: [u64; 4],
}

impl IdleLinks {
    /// None idle yet, for `links`.
    pub(super) fn new(links: &[Link]) -> IdleLinks {
        IdleLinks {
            polls: vec![NO_POLL; links.len()],
            next_poll: NO_POLL,
            next_link: 0,
            steps: idle_steps(links),
            may_freeze: false,
            frozen: Vec::new(),
            #[cfg(test)]
            bulk_polls: 0,
            #[cfg(test)]
            bulk_off: false,
            #[cfg(test)]
            log: None,
            #[cfg(test)]
            freeze_off: false,
            #[cfg(test)]
            frozen_links: 0,
            #[cfg(test)]
            frozen_ties: [0; 4],
        }
    }
}

impl World {
    /// Runs, in the queue's order, the idle paced links' wake-ups that come before the event
    /// of key `next`. The thesis's interface (`interface.py`) wakes every period whether or
    /// not it has something to send; a wake-up with nothing to send changes only the link's
    /// own counters and view (`PacedLink::poll` with an empty queue) and schedules the next
    /// one, so it runs here, outside the event queue, at its own time and in its place:
    /// each reserves the sequence number its successor would have taken, so every event
    /// keeps its place among those of its instant, and every figure stays as it was. Links
    /// idling at one fixed step are counted in bulk ([`World::skip_idle_polls_before`]), and
    /// once the run only drains, once at its end ([`World::freeze_idle_links`]).
    pub(super) fn idle_polls_before(&mut self, next: u128) {
        #[cfg(test)]
        let bulk_off = self.idle.bulk_off;
        #[cfg(not(test))]
        let bulk_off = false;
        while self.idle.next_poll < next {
            // (The bulk path's first test here: most runs of this loop wake one link once.)
            let step = self.idle.steps[self.idle.next_link];
            let twice = step != 0 && engine::key_time(self.idle.next_poll).0 + step < engine::key_time(next).0;
            if twice && !bulk_off && self.skip_idle_polls_before(next, step) {
                continue;
            }
            let (at, id) = (engine::key_time(self.idle.next_poll), self.idle.next_link);
            let (sent, following) = self.links[id].poll(at);
            debug_assert!(sent.is_none(), "an idle link sends nothing");
            self.idle.polls[id] = engine::key(following, self.events.reserve());
            self.refresh_idle_view(id, at);
            self.find_next_idle_poll();
        }
        #[cfg(test)]
        if let Some(log) = &mut self.idle.log {
            log.push(self.idle.polls.clone());
        }
    }

    /// Counts in bulk, without running them one by one, the idle wake-ups of the links that
    /// wake at the first idle link's fixed step `d` (`step`, [`PacedLink::idle_step`]), up to the
    /// first wake-up of another idle link or the event of key `next`, whichever comes first
    /// (the bound, at time `T`), where the first link wakes at least twice before it;
    /// returns whether it did (otherwise [`World::idle_polls_before`] runs the first
    /// wake-up alone).
    ///
    /// Why the result is the same as running them in the queue's order: with one step `d`,
    /// these links take turns in a fixed cycle. Each link's wake-up is due at most `d` after
    /// the last wake-up run, so the link just run (the first) comes back after all the
    /// others (on a tie in time, their sequence numbers are the older). In the order of their
    /// keys `L_0, …, L_{n-1}`, link `j` at time `t_j` therefore wakes `R_j = 1 +
    /// ⌊(T − t_j − 1) / d⌋` times before the bound (from its second wake-up its sequence
    /// number is newer than the bound's, so a wake-up at `T` itself comes after it), and its
    /// last wake-up is number `Σ_k min(R_k, R_j − 1) + j` of the `Σ_k R_k` run: the
    /// sequence number it reserves is that far from the first reserved. When they all wake at
    /// one time (the common case: links of one period fed by one sender), that is
    /// `n (R − 1) + j`.
    #[inline(never)]
    pub(super) fn skip_idle_polls_before(&mut self, next: u128, step: u64) -> bool {
        if self.idle.may_freeze && self.freeze_idle_links() {
            return true;
        }
        // One scan: the links at this step in the order of their keys (a few: an insertion sort
        // on the stack; with more than `BULK_LINKS` they run one by one), and the first key of
        // the others, which bounds the cycle. (Every idle link at this step is in the cycle: it
        // is due at most `d` after the first, before the bound.)
        let mut keys = [NO_POLL; BULK_LINKS];
        let mut ids = [0u32; BULK_LINKS];
        let (mut n, mut others) = (0, NO_POLL);
        for (id, (&key, &link_step)) in self.idle.polls.iter().zip(&self.idle.steps).enumerate() {
            if link_step != step {
                others = others.min(key);
            } else if key != NO_POLL {
                if n == BULK_LINKS {
                    return false;
                }
                let mut pos = n;
                while pos > 0 && keys[pos - 1] > key {
                    (keys[pos], ids[pos]) = (keys[pos - 1], ids[pos - 1]);
                    pos -= 1;
                }
                (keys[pos], ids[pos]) = (key, id as u32);
                n += 1;
            }
        }
        let (t0, end) = (engine::key_time(keys[0]).0, engine::key_time(next.min(others)).0);
        if t0 + step >= end {
            return false;
        }
        let mut wakes = [0u64; BULK_LINKS];
        let (mut count, mut at) = (0, u64::MAX);
        for j in 0..n {
            // (Links on one grid wake at the same times: one division for them all.)
            let t = engine::key_time(keys[j]).0;
            debug_assert!(t < end, "every link at this step is due before the bound");
            wakes[j] = if t == at { wakes[j - 1] } else { 1 + (end - t - 1) / step };
            at = t;
            count += wakes[j];
        }
        let first_seq = self.events.reserve_many(count);
        let one_time = at == t0;
        let mut first = others;
        for j in 0..n {
            let mine = wakes[j];
            let place = if one_time {
                n as u64 * (mine - 1) + j as u64
            } else {
                j as u64 + wakes[..n].iter().map(|&other| other.min(mine - 1)).sum::<u64>()
            };
            let id = ids[j] as usize;
            let last = SimTime(engine::key_time(keys[j]).0 + (mine - 1) * step);
            let following = self.links[id].skip_idle_polls(mine, last, SimTime(step));
            let key = engine::key(following, first_seq + place);
            self.idle.polls[id] = key;
            if key < first {
                (first, self.idle.next_link) = (key, id);
            }
            self.refresh_idle_view(id, last);
        }
        // The next idle wake-up: one of these, or else the others' first, found by a scan.
        if first < others {
            self.idle.next_poll = first;
        } else {
            self.find_next_idle_poll();
        }
        #[cfg(test)]
        {
            self.idle.bulk_polls += count;
        }
        true
    }

    /// Freezes the idle links when the run only drains, and returns whether it did: every
    /// request has arrived and the paced sender has sent everything, and all that waits in the
    /// queue is the wake-ups of links with packets left, each waking at a fixed step no other
    /// link has. Then no link is given a packet again, so the idle links stay idle to the end;
    /// their wake-ups change nothing but their own counts, which are made once, at the end
    /// ([`World::settle_frozen`]). (The sequence numbers they would have reserved are not:
    /// the events that remain keep their order among themselves.)
    pub(super) fn freeze_idle_links(&mut self) -> bool {
        if self.arrived as usize != self.requests.len() || !self.server.is_idle() || self.capture.is_some() {
            return false;
        }
        #[cfg(test)]
        if self.idle.freeze_off || self.idle.log.is_some() {
            return false; // (the key log compares keys: frozen links have none)
        }
        let steps = &self.idle.steps;
        let own_step = |id: usize| steps[id] != 0 && steps.iter().filter(|&&s| s == steps[id]).count() == 1;
        let drains = self.events.pending().all(|e| matches!(e.target, Target::Poll(id) if own_step(id as usize)));
        let idle_fixed = self.idle.polls.iter().zip(steps).all(|(&key, &step)| key == NO_POLL || step != 0);
        if !(drains && idle_fixed) {
            return false;
        }
        for (id, key) in self.idle.polls.iter_mut().enumerate() {
            if *key != NO_POLL {
                self.idle.frozen.push((id, std::mem::replace(key, NO_POLL)));
            }
        }
        #[cfg(test)]
        {
            self.idle.frozen_links += self.idle.frozen.len() as u64;
        }
        (self.idle.next_poll, self.idle.next_link) = (NO_POLL, 0);
        true
    }

    /// Counts the frozen links' wake-ups ([`World::freeze_idle_links`]) before the last event
    /// run, at time `T`: the wake-up of a link at its own fixed step `d_L`, whose key was
    /// reserved by that link's wake-up `d_L` before. A frozen link wakes at each of its steps
    /// `d` from its first wake-up not run, at `t`, and the wake-ups before `T` come before the
    /// last event; one at `T` itself comes before it when its key is the older, that is when
    /// it was reserved first: by the link's wake-up at `T − d`, before `T − d_L` when
    /// `d > d_L` (the two steps differ). The last event's link is the one that woke at `T`
    /// with the least step: of the wake-ups run at `T`, the last holds the newest key, the one
    /// reserved last, at `T − d_L`.
    pub(super) fn settle_frozen(&mut self) {
        let end = self.events.now().0;
        let last_step = (self.links.iter().zip(&self.idle.steps))
            .filter_map(|(link, &step)| match link {
                link if step != 0 && link.next_poll() == Some(SimTime(end + step)) => Some(step),
                _ => None,
            })
            .min()
            .expect("the last event is a wake-up of a link at a fixed step");
        for (id, key) in std::mem::take(&mut self.idle.frozen) {
            let (t, step) = (engine::key_time(key).0, self.idle.steps[id]);
            if t > end {
                continue;
            }
            let on_grid = (end - t).is_multiple_of(step);
            let at_end = on_grid && step > last_step;
            #[cfg(test)]
            if on_grid {
                self.idle.frozen_ties[2 * usize::from(t == end) + usize::from(at_end)] += 1;
            }
            let wakes = (end - t).div_ceil(step) + u64::from(at_end);
            if wakes > 0 {
                let at = SimTime(t + (wakes - 1) * step);
                self.links[id].skip_idle_polls(wakes, at, SimTime(step));
                self.refresh_idle_view(id, at);
            }
        }
    }

    /// The view of link `id` after an idle wake-up at `at` (its queue stays empty, so the
    /// trace's queue record, [`World::refresh_view`]'s other half, has nothing new).
    #[inline(always)]
    pub(super) fn refresh_idle_view(&mut self, id: usize, at: SimTime) {
        if self.fresh_views {
            self.links[id].refresh_view(at, &mut self.bond.views[id]);
        }
    }

    /// Finds the first of the idle links' wake-ups.
    pub(super) fn find_next_idle_poll(&mut self) {
        (self.idle.next_poll, self.idle.next_link) = (NO_POLL, 0);
        for (id, &key) in self.idle.polls.iter().enumerate() {
            if key < self.idle.next_poll {
                (self.idle.next_poll, self.idle.next_link) = (key, id);
            }
        }
    }

    /// A packet waits on idle paced link `id`: its pending wake-up goes into the event queue.
    pub(super) fn wake_idle_link(&mut self, id: usize) {
        let key = std::mem::replace(&mut self.idle.polls[id], NO_POLL);
        let poll = Event::new(Target::Poll(id as u32), 0);
        self.events.schedule_reserved(engine::key_time(key), key as u64, poll);
        if key == self.idle.next_poll {
            self.find_next_idle_poll();
        }
    }

    /// Nothing else is scheduled: the idle links wake up in the queue again, as they would
    /// have (a run that never ends this way meets its guard, `max_events`).
    pub(super) fn wake_idle_links(&mut self) {
        for id in 0..self.idle.polls.len() {
            if self.idle.polls[id] != NO_POLL {
                self.wake_idle_link(id);
            }
        }
    }
}

/// Per link, the time between its idle wake-ups in nanoseconds when it is always the same, else 0.
fn idle_steps(links: &[Link]) -> Vec<u64> {
    links.iter().map(|l| l.idle_step().map_or(0, |step| step.0)).collect()
}
