//! Links: each holds a FIFO transmit queue and sends from it.
//!
//! The paced link is the thesis's interface (`interface.py`): it wakes up once
//! per period, sends the first queued packet if there is one, and the packet
//! reaches its client at once. Its period can be slowed uniformly, over time
//! windows, intermittently, or replaced by a replayed trace (§5.3.4).

use std::collections::VecDeque;

use rand_distr::{Distribution, Exp};

use crate::bond::LinkView;
use crate::packet::Packet;
use crate::rng::{self, Rng};
use crate::scenario::{Intermittent, LinkSpec};
use crate::time::SimTime;

/// The factor by which a link's send time is stretched at a given moment:
/// uniform × every window in force × the intermittent phase.
#[derive(Debug, Clone)]
pub struct Slowdown {
    uniform: f64,
    windows: Vec<(SimTime, SimTime, f64)>,
    intermittent: Option<IntermittentState>,
}

#[derive(Debug, Clone)]
struct IntermittentState {
    slow_factor: f64,
    slow_mean: f64,
    normal_mean: f64,
    random: Option<Rng>,
    in_slow: bool,
    phase_end: SimTime,
}

impl IntermittentState {
    fn new(spec: &Intermittent, rng: Rng) -> IntermittentState {
        let mut state = IntermittentState {
            slow_factor: spec.slowdown,
            slow_mean: spec.slow_s,
            normal_mean: spec.normal_s,
            random: spec.random.then_some(rng),
            in_slow: false,
            phase_end: SimTime::ZERO,
        };
        state.phase_end = state.phase_length(false);
        state
    }

    /// Length of the next phase (at least 1 ns, so time always moves on).
    fn phase_length(&mut self, slow: bool) -> SimTime {
        let mean = if slow { self.slow_mean } else { self.normal_mean };
        let secs = match &mut self.random {
            Some(rng) => Exp::new(1.0 / mean).expect("validated mean > 0").sample(rng),
            None => mean,
        };
        SimTime::from_secs_f64(secs).max(SimTime(1))
    }

    /// The factor at `now`; queries must come in non-decreasing time order.
    fn factor_at(&mut self, now: SimTime) -> f64 {
        while now >= self.phase_end {
            self.in_slow = !self.in_slow;
            let length = self.phase_length(self.in_slow);
            self.phase_end += length;
        }
        if self.in_slow {
            self.slow_factor
        } else {
            1.0
        }
    }
}

impl Slowdown {
    /// The slowdown schedule of link `id` described by `spec`.
    pub fn new(spec: &LinkSpec, seed: u64, id: usize) -> Slowdown {
        Slowdown {
            uniform: spec.slowdown,
            windows: spec
                .slow_windows
                .iter()
                .map(|w| (SimTime::from_secs_f64(w.start_s), SimTime::from_secs_f64(w.end_s), w.slowdown))
                .collect(),
            intermittent: spec
                .intermittent
                .as_ref()
                .map(|im| IntermittentState::new(im, rng::stream(seed, &format!("links.{id}.intermittent")))),
        }
    }

    /// The factor at `now` (queries in non-decreasing time order).
    pub fn factor_at(&mut self, now: SimTime) -> f64 {
        let mut factor = self.uniform;
        for &(start, end, f) in &self.windows {
            if start <= now && now < end {
                factor *= f;
            }
        }
        if let Some(im) = &mut self.intermittent {
            factor *= im.factor_at(now);
        }
        factor
    }

    /// `span` stretched by the factor at `now`.
    pub fn stretch(&mut self, now: SimTime, span: SimTime) -> SimTime {
        let factor = self.factor_at(now);
        if factor == 1.0 {
            span
        } else {
            SimTime((span.0 as f64 * factor).round() as u64)
        }
    }
}

/// Counters of one link over a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// Packets sent.
    pub packets_sent: u64,
    /// Payload bytes sent.
    pub bytes_sent: u64,
    /// Send opportunities (paced links: wake-ups).
    pub polls: u64,
    /// Longest the transmit queue got, packets.
    pub max_queue_pkts: u32,
}

/// The thesis's interface: one send opportunity per (slowed) period.
#[derive(Debug, Clone)]
pub struct PacedLink {
    period: SimTime,
    slowdown: Slowdown,
    trace: Vec<SimTime>,
    trace_pos: usize,
    payload_bits: f64,
    queue: VecDeque<Packet>,
    queue_bytes: u64,
    next_poll: SimTime,
    /// What the link did so far.
    pub stats: LinkStats,
}

impl PacedLink {
    /// Link `id` of a run with this `seed`, sending `chunk_bytes` payloads.
    pub fn new(spec: &LinkSpec, seed: u64, id: usize, chunk_bytes: u32) -> PacedLink {
        PacedLink {
            period: SimTime::from_millis_f64(spec.period_ms),
            slowdown: Slowdown::new(spec, seed, id),
            trace: spec.trace_intervals_s.iter().flatten().map(|&s| SimTime::from_secs_f64(s)).collect(),
            trace_pos: 0,
            payload_bits: f64::from(chunk_bytes) * 8.0,
            queue: VecDeque::new(),
            queue_bytes: 0,
            next_poll: SimTime::ZERO,
            stats: LinkStats::default(),
        }
    }

    /// Puts `packet` at the tail of the transmit queue.
    pub fn enqueue(&mut self, packet: Packet) {
        self.queue_bytes += u64::from(packet.bytes);
        self.queue.push_back(packet);
        self.stats.max_queue_pkts = self.stats.max_queue_pkts.max(self.queue.len() as u32);
    }

    /// Wakes the link at `now`: sends the head packet, if any, and returns it
    /// with the time of the next wake-up.
    pub fn poll(&mut self, now: SimTime) -> (Option<Packet>, SimTime) {
        self.stats.polls += 1;
        let sent = self.queue.pop_front();
        let interval = if self.trace.is_empty() { self.period } else { self.trace[self.trace_pos] };
        if let Some(packet) = &sent {
            self.queue_bytes -= u64::from(packet.bytes);
            self.stats.packets_sent += 1;
            self.stats.bytes_sent += u64::from(packet.bytes);
            if !self.trace.is_empty() {
                // One trace entry per send; an idle wake-up does not consume one.
                self.trace_pos = (self.trace_pos + 1) % self.trace.len();
            }
        }
        self.next_poll = now + self.slowdown.stretch(now, interval);
        (sent, self.next_poll)
    }

    /// Packets waiting.
    pub fn queue_len(&self) -> usize {
        self.queue.len()
    }

    /// The bond's view of this link at `now`.
    pub fn view(&self, now: SimTime) -> LinkView {
        let waiting = self.queue.len() as u64;
        LinkView {
            up: true,
            queue_len_pkts: self.queue.len() as u32,
            queue_bytes: self.queue_bytes,
            rate_bps: self.payload_bits / self.period.as_secs_f64(),
            idle_at: if waiting == 0 { now } else { self.next_poll + SimTime(self.period.0 * (waiting - 1)) },
            // A paced link hands the packet to its client the moment it sends.
            delay: SimTime::ZERO,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::SlowWindow;

    fn spec() -> LinkSpec {
        serde_json::from_str("{}").unwrap()
    }

    fn packet(seq: u32) -> Packet {
        Packet { flow: 0, seq, bytes: 1024, born: SimTime::ZERO }
    }

    #[test]
    fn sends_one_packet_per_period() {
        let mut link = PacedLink::new(&spec(), 1, 0, 1024);
        link.enqueue(packet(0));
        link.enqueue(packet(1));
        let (p, next) = link.poll(SimTime::ZERO);
        assert_eq!((p.map(|p| p.seq), next), (Some(0), SimTime::from_millis_f64(20.0)));
        let (p, next) = link.poll(next);
        assert_eq!((p.map(|p| p.seq), next), (Some(1), SimTime::from_millis_f64(40.0)));
        let (p, _) = link.poll(next);
        assert_eq!(p, None);
        assert_eq!((link.stats.packets_sent, link.stats.polls, link.stats.max_queue_pkts), (2, 3, 2));
    }

    #[test]
    fn windows_and_uniform_slowdowns_multiply() {
        let mut s = spec();
        s.slowdown = 2.0;
        s.slow_windows = vec![SlowWindow { start_s: 1.0, end_s: 2.0, slowdown: 3.0 }];
        let mut slow = Slowdown::new(&s, 1, 0);
        assert_eq!(slow.factor_at(SimTime::from_secs_f64(0.5)), 2.0);
        assert_eq!(slow.factor_at(SimTime::from_secs_f64(1.0)), 6.0);
        assert_eq!(slow.factor_at(SimTime::from_secs_f64(2.0)), 2.0);
    }

    #[test]
    fn intermittent_alternates_normal_then_slow() {
        let mut s = spec();
        s.intermittent = Some(Intermittent { slow_s: 1.0, normal_s: 2.0, slowdown: 4.0, random: false });
        let mut slow = Slowdown::new(&s, 1, 0);
        let at = |x: f64| SimTime::from_secs_f64(x);
        let got: Vec<f64> = [0.0, 1.9, 2.0, 2.9, 3.0, 4.9, 5.0].iter().map(|&t| slow.factor_at(at(t))).collect();
        assert_eq!(got, [1.0, 1.0, 4.0, 4.0, 1.0, 1.0, 4.0]);
    }

    #[test]
    fn random_intermittent_spends_its_mean_share_slow() {
        let mut s = spec();
        s.intermittent = Some(Intermittent { slow_s: 1.0, normal_s: 3.0, slowdown: 4.0, random: true });
        let mut slow = Slowdown::new(&s, 9, 0);
        let samples = 200_000;
        let slow_share =
            (0..samples).filter(|k| slow.factor_at(SimTime::from_millis_f64(*k as f64 * 10.0)) > 1.0).count() as f64
                / samples as f64;
        // Mean slow 1 s out of a 4 s cycle; 2000 s of samples hold ~500 cycles.
        assert!((slow_share - 0.25).abs() < 0.04, "slow share {slow_share}");
    }

    #[test]
    fn trace_sets_the_time_between_sends() {
        let mut s = spec();
        s.trace_intervals_s = Some(vec![0.001, 0.005]);
        let mut link = PacedLink::new(&s, 1, 0, 1024);
        // Idle: the pending interval is reused, not consumed.
        assert_eq!(link.poll(SimTime::ZERO).1, SimTime::from_millis_f64(1.0));
        link.enqueue(packet(0));
        link.enqueue(packet(1));
        link.enqueue(packet(2));
        let t1 = link.poll(SimTime::from_millis_f64(1.0)).1;
        let t2 = link.poll(t1).1;
        let t3 = link.poll(t2).1;
        assert_eq!([t1, t2, t3].map(|t| t.as_nanos()), [2_000_000, 7_000_000, 8_000_000]);
    }
}
