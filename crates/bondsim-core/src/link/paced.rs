//! The thesis's interface: one send opportunity per (slowed) period.

mod queue;

use super::jitter::JitterSampler;
use super::{DropCause, Enqueued, LinkStats, Slowdown};
use crate::bond::LinkView;
use crate::packet::Packet;
use crate::rng::{self, Rng};
use crate::scenario::{LinkSpec, PacedModel, Scenario};
use crate::time::SimTime;
use queue::PacketQueue;

/// The thesis's interface (`interface.py`'s `process_pending`).
#[derive(Debug, Clone)]
pub struct PacedLink {
    period: SimTime,
    slowdown: Slowdown,
    /// The slowdown factor at the last wake-up (what the bond's view shows).
    factor: f64,
    trace: Vec<SimTime>,
    trace_pos: usize,
    /// Timer noise: how late each wake-up comes ([`crate::scenario::PacedModel::jitter`]).
    jitter: Option<(JitterSampler, Rng)>,
    payload_bits: f64,
    queue: PacketQueue,
    queue_bytes: u64,
    next_poll: SimTime,
    /// The last send: its time, the next wake-up after it (the send opportunity it used) and
    /// its payload bytes.
    last_send: (SimTime, SimTime, u32),
    pub(super) carrier: bool,
    /// What the link did so far.
    pub stats: LinkStats,
}

impl PacedLink {
    /// Link `id` of `scenario`, described by `spec`.
    pub fn new(scenario: &Scenario, spec: &LinkSpec, model: &PacedModel, id: usize) -> PacedLink {
        PacedLink {
            period: SimTime::from_millis_f64(model.period_ms),
            slowdown: Slowdown::new(&spec.base, scenario.seed, id),
            factor: 1.0,
            trace: model.trace_intervals_s.iter().flatten().map(|&s| SimTime::from_secs_f64(s)).collect(),
            trace_pos: 0,
            jitter: model
                .jitter
                .as_ref()
                .map(|j| (JitterSampler::new(j), rng::stream(scenario.seed, &format!("links.{id}.jitter")))),
            payload_bits: f64::from(scenario.chunk_bytes()) * 8.0,
            queue: PacketQueue::default(),
            queue_bytes: 0,
            next_poll: SimTime::ZERO,
            last_send: (SimTime::ZERO, SimTime::ZERO, 0),
            carrier: true,
            stats: LinkStats::default(),
        }
    }

    /// Puts `packet` at the tail of the transmit queue.
    #[inline(always)]
    pub fn enqueue(&mut self, packet: &Packet) -> Enqueued {
        if !self.carrier {
            self.stats.record_drop(DropCause::LinkDown);
            return Enqueued::Dropped(DropCause::LinkDown);
        }
        self.queue_bytes += u64::from(packet.bytes);
        self.queue.push_back(packet);
        self.stats.max_queue_pkts = self.stats.max_queue_pkts.max(self.queue.len() as u32);
        Enqueued::Waiting
    }

    /// Wakes the link at `now`: sends the head packet, if any, and returns it
    /// with the time of the next wake-up.
    #[inline(always)]
    pub fn poll(&mut self, now: SimTime) -> (Option<Packet>, SimTime) {
        self.stats.polls += 1;
        let sent = if self.carrier { self.queue.pop_front() } else { None };
        let interval = if self.trace.is_empty() { self.period } else { self.trace[self.trace_pos] };
        self.factor = self.slowdown.factor_at(now);
        self.next_poll = now + interval.scaled(self.factor);
        if let Some((sampler, rng)) = &mut self.jitter {
            // The timer fires late, and the period after it counts from the late wake-up.
            self.next_poll += sampler.sample(rng);
        }
        if let Some(packet) = &sent {
            self.queue_bytes -= u64::from(packet.bytes);
            self.stats.packets_sent += 1;
            self.stats.bytes_sent += u64::from(packet.bytes);
            self.last_send = (now, self.next_poll, packet.bytes);
            if !self.trace.is_empty() {
                // One trace entry per send; an idle wake-up does not consume one.
                self.trace_pos = (self.trace_pos + 1) % self.trace.len();
            }
        }
        (sent, self.next_poll)
    }

    /// When the link wakes up next.
    pub fn next_poll(&self) -> SimTime {
        self.next_poll
    }

    /// The time from one wake-up to the next while the link is idle, when it is the same at
    /// every wake-up: no trace of intervals, no timer noise and a slowdown that does not change
    /// over time (then `poll` on an empty queue moves the next wake-up on by this step and
    /// changes nothing else but the wake-up count). `None` otherwise.
    pub fn idle_step(&self) -> Option<SimTime> {
        let factor = self.slowdown.constant()?;
        let step = self.period.scaled(factor);
        (self.trace.is_empty() && self.jitter.is_none() && step > SimTime::ZERO).then_some(step)
    }

    /// What `count` (≥ 1) calls of `poll` on the empty queue do, the last at `last`, each
    /// `step` ([`PacedLink::idle_step`]) after the one before: returns the next wake-up.
    #[inline(always)]
    pub fn skip_idle_polls(&mut self, count: u64, last: SimTime, step: SimTime) -> SimTime {
        debug_assert!(self.queue.is_empty() && count >= 1, "only an idle link's wake-ups are counted");
        debug_assert_eq!(self.idle_step(), Some(step), "the link's own idle step");
        // (The factor is the slowdown's constant one, set at the link's first wake-up.)
        debug_assert_eq!(Some(self.factor), self.slowdown.constant(), "a constant slowdown");
        self.stats.polls += count;
        self.next_poll = last + step;
        self.next_poll
    }

    /// Payload bytes the link carried up to `t` (not before its last wake-up), each packet's
    /// spread evenly over the send opportunity it used (from its send to the next wake-up; the
    /// thesis's interface sends one packet per period, `interface.py`'s `process_pending`):
    /// what the link trace's `utilisation` is made of, so a bucket shorter than the period
    /// reads the share of it the link was sending, not a whole packet or none.
    pub fn carried_bytes_at(&self, t: SimTime) -> f64 {
        let (from, until, bytes) = self.last_send;
        let ahead = if t < until && from < until {
            f64::from(bytes) * ((until - t).as_secs_f64() / (until - from).as_secs_f64()).min(1.0)
        } else {
            0.0
        };
        self.stats.bytes_sent as f64 - ahead
    }

    /// The carrier goes: everything queued is lost.
    pub fn carrier_down(&mut self) -> Vec<Packet> {
        self.carrier = false;
        self.stats.failures += 1;
        self.queue_bytes = 0;
        let lost = self.queue.drain();
        self.stats.drops_link_down += lost.len() as u64;
        lost
    }

    /// Payload bits per period.
    pub fn capacity_bps(&self) -> f64 {
        self.payload_bits / self.period.as_secs_f64()
    }

    #[inline(always)]
    fn idle_at(&self, now: SimTime) -> SimTime {
        match self.queue.len() as u64 {
            0 => now,
            waiting => self.next_poll + SimTime(self.period.0 * (waiting - 1)).scaled(self.factor),
        }
    }

    /// Refreshes what changes in the bond's view of this link: its queue and when it will be idle.
    #[inline(always)]
    pub fn refresh_view(&self, now: SimTime, view: &mut LinkView) {
        view.queue_len_pkts = self.queue.len() as u32;
        view.queue_bytes = self.queue_bytes;
        view.idle_at_est = self.idle_at(now);
        view.slowdown_est = self.factor;
    }

    /// The bond's view of this link at `now`.
    pub fn view(&self, now: SimTime, up: bool) -> LinkView {
        LinkView {
            up,
            carrier: true, // links start with carrier; the simulator follows the NIC's reports
            queue_len_pkts: self.queue.len() as u32,
            queue_bytes: self.queue_bytes,
            rate_bps: self.capacity_bps(),
            overhead_bytes: 0,
            per_packet: self.period,
            paced: true,
            idle_at_est: self.idle_at(now),
            // A paced link hands the packet to its client the moment it sends.
            delay_est: SimTime::ZERO,
            slowdown_est: self.factor,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(links: serde_json::Value) -> Scenario {
        Scenario::from_json(
            &serde_json::json!({
                "workload": {"requests": 1, "file_size": {"kind": "fixed", "bytes": 1}},
                "bond": {"mode": "rr"}, "links": links})
            .to_string(),
        )
        .unwrap()
    }

    fn paced_link(s: &Scenario) -> PacedLink {
        let crate::scenario::LinkModel::Paced(model) = &s.links[0].model else { panic!("a paced link") };
        PacedLink::new(s, &s.links[0], model, 0)
    }

    fn packet(seq: u32) -> Packet {
        Packet { bond_seq: u64::from(seq), ..Packet::data(0, seq, 1024, SimTime::ZERO) }
    }

    #[test]
    fn sends_one_packet_per_period() {
        let s = scenario(serde_json::json!([{}]));
        let mut link = paced_link(&s);
        link.enqueue(&packet(0));
        link.enqueue(&packet(1));
        let (p, next) = link.poll(SimTime::ZERO);
        assert_eq!((p.map(|p| p.seq), next), (Some(0), SimTime::from_millis_f64(20.0)));
        let (p, next) = link.poll(next);
        assert_eq!((p.map(|p| p.seq), next), (Some(1), SimTime::from_millis_f64(40.0)));
        let (p, _) = link.poll(next);
        assert_eq!(p, None);
        assert_eq!((link.stats.packets_sent, link.stats.polls, link.stats.max_queue_pkts), (2, 3, 2));
    }

    #[test]
    fn carried_bytes_spread_each_packet_over_the_period_it_used() {
        let s = scenario(serde_json::json!([{}]));
        let mut link = paced_link(&s);
        link.enqueue(&packet(0));
        let ms = SimTime::from_millis_f64;
        let (_, next) = link.poll(ms(20.0));
        assert_eq!(link.carried_bytes_at(ms(20.0)), 0.0);
        assert!((link.carried_bytes_at(ms(25.0)) - 256.0).abs() < 1e-9, "a quarter of the period");
        // An idle wake-up at the period's end: the packet is wholly carried, nothing more.
        link.poll(next);
        assert_eq!(link.carried_bytes_at(next), 1024.0);
        assert_eq!(link.carried_bytes_at(ms(55.0)), 1024.0);
    }

    #[test]
    fn trace_sets_the_time_between_sends() {
        let s = scenario(serde_json::json!([{"trace_intervals_s": [0.001, 0.005]}]));
        let mut link = paced_link(&s);
        // Idle: the pending interval is reused, not consumed.
        assert_eq!(link.poll(SimTime::ZERO).1, SimTime::from_millis_f64(1.0));
        for seq in 0..3 {
            link.enqueue(&packet(seq));
        }
        let t1 = link.poll(SimTime::from_millis_f64(1.0)).1;
        let t2 = link.poll(t1).1;
        let t3 = link.poll(t2).1;
        assert_eq!([t1, t2, t3].map(|t| t.as_nanos()), [2_000_000, 7_000_000, 8_000_000]);
    }

    #[test]
    fn timer_noise_makes_each_wake_up_late_and_counts_the_next_period_from_it() {
        let s = scenario(serde_json::json!([{"jitter": {"kind": "uniform", "max_us": 200.0}}]));
        let mut link = paced_link(&s);
        assert_eq!(link.idle_step(), None, "a noisy link's idle wake-ups are not at a fixed step");
        let (period, max) = (SimTime::from_millis_f64(20.0), SimTime::from_micros_f64(200.0));
        let mut now = SimTime::ZERO;
        let mut lateness = Vec::new();
        for _ in 0..1000 {
            let next = link.poll(now).1;
            assert!(next >= now + period && next <= now + period + max, "late by at most max_us");
            lateness.push((next - now - period).as_secs_f64() * 1e6);
            now = next;
        }
        let mean = lateness.iter().sum::<f64>() / lateness.len() as f64;
        assert!((mean - 100.0).abs() < 10.0, "uniform on [0, 200] µs: mean {mean}");
        // The same seed draws the same wake-ups.
        let mut again = paced_link(&s);
        let mut t = SimTime::ZERO;
        for _ in 0..1000 {
            t = again.poll(t).1;
        }
        assert_eq!(t, now);
    }

    #[test]
    fn a_choice_of_delays_draws_each_of_them_as_randint_does() {
        // The appendix's `nextCall = randint(200, 201)/10000.0`: 20 ms or 20.1 ms, equally likely.
        let s = scenario(serde_json::json!([{"jitter": {"kind": "choice", "values_us": [0.0, 100.0]}}]));
        let mut link = paced_link(&s);
        let mut now = SimTime::ZERO;
        let mut longer = 0;
        for _ in 0..2000 {
            let next = link.poll(now).1;
            let period = next - now;
            assert!([20_000_000, 20_100_000].contains(&period.as_nanos()), "{period:?}");
            longer += usize::from(period.as_nanos() == 20_100_000);
            now = next;
        }
        assert!((longer as f64 / 2000.0 - 0.5).abs() < 0.05, "{longer} of 2000 at 20.1 ms");
    }

    #[test]
    fn losing_carrier_drops_the_queue_and_refuses_packets() {
        let s = scenario(serde_json::json!([{}]));
        let mut link = paced_link(&s);
        link.enqueue(&packet(0));
        link.enqueue(&packet(1));
        assert_eq!(link.carrier_down().len(), 2);
        assert_eq!(link.enqueue(&packet(2)), Enqueued::Dropped(DropCause::LinkDown));
        assert_eq!(link.poll(SimTime::ZERO).0, None);
        assert_eq!((link.stats.drops_link_down, link.stats.failures), (3, 1));
    }
}
