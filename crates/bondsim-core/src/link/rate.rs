//! A rate link: drop-tail queue, bit rate, per-frame overhead and cost, wire delay, jitter.

use std::collections::VecDeque;

use rand::RngExt;
use rand_distr::{Distribution, Exp, Normal};

use super::{DropCause, Enqueued, LinkStats, Slowdown};
use crate::bond::{LinkView, MIN_ETHERNET_PAYLOAD};
use crate::packet::Packet;
use crate::rng::{self, Rng};
use crate::scenario::{Jitter, LinkSpec, RateModel, Scenario};
use crate::time::SimTime;

#[derive(Debug, Clone)]
enum JitterSampler {
    Uniform(f64),
    Exponential(Exp<f64>),
    Normal(Normal<f64>),
}

impl JitterSampler {
    fn new(spec: &Jitter) -> JitterSampler {
        match spec {
            Jitter::Uniform { max_us } => JitterSampler::Uniform(max_us * 1e-6),
            Jitter::Exponential { mean_us } => JitterSampler::Exponential(Exp::new(1e6 / mean_us).expect("validated")),
            Jitter::Normal { sd_us } => JitterSampler::Normal(Normal::new(0.0, sd_us * 1e-6).expect("validated")),
        }
    }

    fn sample(&self, rng: &mut Rng) -> SimTime {
        let secs = match self {
            JitterSampler::Uniform(max) => rng.random::<f64>() * max,
            JitterSampler::Exponential(d) => d.sample(rng),
            JitterSampler::Normal(d) => d.sample(rng).abs(),
        };
        SimTime::from_secs_f64(secs)
    }
}

/// A link with a bit rate and a transmit queue.
#[derive(Debug, Clone)]
pub struct RateLink {
    rate_bps: f64,
    overhead_bytes: u32,
    per_packet: SimTime,
    delay: SimTime,
    jitter: Option<(JitterSampler, Rng)>,
    txqueuelen: usize,
    header_bytes: u32,
    slowdown: Slowdown,
    /// The slowdown factor when the link last queued or started a packet (what the bond's view shows).
    factor: f64,
    queue: VecDeque<Packet>,
    queue_bytes: u64,
    /// Packets on the wire, in arrival order.
    transit: VecDeque<Packet>,
    sending: bool,
    backlog_end: SimTime,
    last_arrival: SimTime,
    pub(super) carrier: bool,
    epoch: u32,
    /// What the link did so far.
    pub stats: LinkStats,
}

impl RateLink {
    /// Link `id` of `scenario`, described by `spec` (a rate link).
    pub fn new(scenario: &Scenario, spec: &LinkSpec, model: &RateModel, id: usize) -> RateLink {
        RateLink {
            rate_bps: model.rate_mbps * 1e6,
            overhead_bytes: model.overhead_bytes,
            per_packet: SimTime::from_micros_f64(model.per_packet_us),
            delay: SimTime::from_micros_f64(model.delay_us),
            jitter: model
                .jitter
                .as_ref()
                .map(|j| (JitterSampler::new(j), rng::stream(scenario.seed, &format!("links.{id}.jitter")))),
            txqueuelen: model.txqueuelen as usize,
            header_bytes: scenario.l3_header_bytes(),
            slowdown: Slowdown::new(&spec.base, scenario.seed, id),
            ..RateLink::idle()
        }
    }

    /// An idle, empty link of no speed: the state every link starts from.
    fn idle() -> RateLink {
        RateLink {
            rate_bps: 0.0,
            overhead_bytes: 0,
            per_packet: SimTime::ZERO,
            delay: SimTime::ZERO,
            jitter: None,
            txqueuelen: 0,
            header_bytes: 0,
            slowdown: Slowdown::none(),
            factor: 1.0,
            queue: VecDeque::new(),
            queue_bytes: 0,
            transit: VecDeque::new(),
            sending: false,
            backlog_end: SimTime::ZERO,
            last_arrival: SimTime::ZERO,
            carrier: true,
            epoch: 0,
            stats: LinkStats::default(),
        }
    }

    /// The same link in the other direction (full duplex): same speed, frame
    /// overhead, per-frame cost, delay and queue; its slowdowns and jitter
    /// model the sending side and are not mirrored.
    pub fn mirror(&self) -> RateLink {
        RateLink {
            rate_bps: self.rate_bps,
            overhead_bytes: self.overhead_bytes,
            per_packet: self.per_packet,
            delay: self.delay,
            txqueuelen: self.txqueuelen,
            header_bytes: self.header_bytes,
            ..RateLink::idle()
        }
    }

    /// Propagation delay.
    pub fn delay(&self) -> SimTime {
        self.delay
    }

    /// The carrier is back.
    pub fn carrier_up(&mut self) {
        self.carrier = true;
    }

    /// Nominal bit rate.
    pub fn rate_bps(&self) -> f64 {
        self.rate_bps
    }

    /// Changes every time the carrier goes: events of an older epoch are void.
    pub fn epoch(&self) -> u32 {
        self.epoch
    }

    fn l3_bytes(&self, packet: &Packet) -> u32 {
        packet.bytes + self.header_bytes
    }

    fn wire_bytes(&self, packet: &Packet) -> u64 {
        u64::from(self.l3_bytes(packet).max(MIN_ETHERNET_PAYLOAD)) + u64::from(self.overhead_bytes)
    }

    fn nominal_tx(&self, packet: &Packet) -> SimTime {
        self.per_packet + SimTime::from_secs_f64(self.wire_bytes(packet) as f64 * 8.0 / self.rate_bps)
    }

    /// Starts sending the head packet at `now`; returns when it is on the wire.
    fn start(&mut self, now: SimTime) -> SimTime {
        let head = self.queue[0];
        self.factor = self.slowdown.factor_at(now);
        let tx = self.nominal_tx(&head).scaled(self.factor);
        self.sending = true;
        self.stats.busy_ns += tx.0;
        // Queued packets were predicted at the factor of their queueing: never look idle before
        // the frame being sent is out.
        self.backlog_end = self.backlog_end.max(now + tx);
        now + tx
    }

    /// Queues `packet` at `now` (drop-tail); starts sending it if the link is idle.
    pub fn enqueue(&mut self, now: SimTime, packet: Packet) -> Enqueued {
        let cause = if !self.carrier {
            DropCause::LinkDown
        } else if self.queue.len() >= self.txqueuelen {
            DropCause::QueueFull
        } else {
            self.queue_bytes += u64::from(self.l3_bytes(&packet));
            self.factor = self.slowdown.factor_at(now);
            self.backlog_end = self.backlog_end.max(now) + self.nominal_tx(&packet).scaled(self.factor);
            self.queue.push_back(packet);
            self.stats.max_queue_pkts = self.stats.max_queue_pkts.max(self.queue.len() as u32);
            return if self.sending { Enqueued::Waiting } else { Enqueued::Started(self.start(now)) };
        };
        self.stats.record_drop(cause);
        Enqueued::Dropped(cause)
    }

    /// The head packet is on the wire at `now`: returns it (it stays in transit
    /// until [`RateLink::arrive`]), when it reaches the receiver, and when the
    /// next packet (if any) will be on the wire.
    pub fn tx_done(&mut self, now: SimTime) -> (Packet, SimTime, Option<SimTime>) {
        let packet = self.queue.pop_front().expect("a packet was being sent");
        self.sending = false;
        self.queue_bytes -= u64::from(self.l3_bytes(&packet));
        self.stats.packets_sent += 1;
        self.stats.bytes_sent += u64::from(packet.bytes);
        self.stats.wire_bytes += self.wire_bytes(&packet);
        let jitter = match &mut self.jitter {
            Some((sampler, rng)) => sampler.sample(rng),
            None => SimTime::ZERO,
        };
        // The wire keeps the link's own packets in order, whatever the jitter.
        let arrival = (now + self.delay + jitter).max(self.last_arrival);
        self.last_arrival = arrival;
        self.transit.push_back(packet);
        let next = (!self.queue.is_empty()).then(|| self.start(now));
        (packet, arrival, next)
    }

    /// The oldest packet on the wire reaches the receiver.
    pub fn arrive(&mut self) -> Packet {
        self.transit.pop_front().expect("a packet was on the wire")
    }

    /// The carrier goes at `now`: what is queued, being sent or on the wire is
    /// lost (events of the old epoch are void).
    pub fn carrier_down(&mut self, now: SimTime) -> Vec<Packet> {
        self.carrier = false;
        self.epoch = self.epoch.wrapping_add(1);
        self.stats.failures += 1;
        self.sending = false;
        self.queue_bytes = 0;
        self.backlog_end = now;
        let lost: Vec<Packet> = self.transit.drain(..).chain(self.queue.drain(..)).collect();
        self.stats.drops_link_down += lost.len() as u64;
        lost
    }

    /// Refreshes what changes in the bond's view of this link: its queue and when it will be idle.
    pub fn refresh_view(&self, now: SimTime, view: &mut LinkView) {
        view.queue_len_pkts = self.queue.len() as u32;
        view.queue_bytes = self.queue_bytes;
        view.idle_at_est = self.backlog_end.max(now);
        view.slowdown_est = self.factor;
    }

    /// The bond's view of this link at `now`.
    pub fn view(&self, now: SimTime, up: bool) -> LinkView {
        LinkView {
            up,
            queue_len_pkts: self.queue.len() as u32,
            queue_bytes: self.queue_bytes,
            rate_bps: self.rate_bps,
            overhead_bytes: self.overhead_bytes,
            per_packet: self.per_packet,
            paced: false,
            idle_at_est: self.backlog_end.max(now),
            delay_est: self.delay,
            slowdown_est: self.factor,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(extra: serde_json::Value) -> RateLink {
        let mut spec = serde_json::json!({"rate_mbps": 100.0});
        spec.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        let s = Scenario::from_json(
            &serde_json::json!({
                "workload": {"requests": 1, "file_size": {"kind": "fixed", "bytes": 1}},
                "sender": {"kind": "window", "chunk_bytes": 1460},
                "bond": {"mode": "rr"}, "links": [spec]})
            .to_string(),
        )
        .unwrap();
        let crate::scenario::LinkModel::Rate(model) = &s.links[0].model else { panic!("a rate link") };
        RateLink::new(&s, &s.links[0], model, 0)
    }

    fn packet(seq: u32, bytes: u32) -> Packet {
        Packet { bond_seq: u64::from(seq), ..Packet::data(0, seq, bytes, SimTime::ZERO) }
    }

    #[test]
    fn full_frames_take_their_wire_time() {
        let mut l = link(serde_json::json!({"delay_us": 10.0}));
        // 1460 + 40 header + 38 overhead = 1538 bytes = 12304 bits at 100 Mbit/s = 123.04 us.
        let Enqueued::Started(done) = l.enqueue(SimTime::ZERO, packet(0, 1460)) else { panic!() };
        assert_eq!(done, SimTime(123_040));
        assert_eq!(l.enqueue(SimTime::ZERO, packet(1, 1460)), Enqueued::Waiting);
        assert_eq!(l.view(SimTime::ZERO, true).idle_at_est, SimTime(246_080));
        let (p, arrival, next) = l.tx_done(done);
        assert_eq!((p.seq, arrival, next), (0, SimTime(133_040), Some(SimTime(246_080))));
        assert_eq!(l.stats.wire_bytes, 1538);
        assert_eq!(l.arrive().seq, 0);
    }

    #[test]
    fn the_bonds_view_sees_the_slowdown() {
        let mut l = link(serde_json::json!({"slowdown": 2.5}));
        // 1538 wire bytes at 100 Mbit/s = 123.04 us, x 2.5 = 307.6 us.
        let Enqueued::Started(done) = l.enqueue(SimTime::ZERO, packet(0, 1460)) else { panic!() };
        assert_eq!(done, SimTime(307_600));
        l.enqueue(SimTime::ZERO, packet(1, 1460));
        let v = l.view(SimTime::ZERO, true);
        assert_eq!(v.idle_at_est, SimTime(615_200));
        assert_eq!(v.tx_time(1500), SimTime(307_600));
    }

    #[test]
    fn small_packets_are_padded_to_the_ethernet_minimum() {
        let mut l = link(serde_json::json!({}));
        // 1 + 40 = 41 < 46: padded to 46 + 38 = 84 bytes = 6.72 us.
        let Enqueued::Started(done) = l.enqueue(SimTime::ZERO, packet(0, 1)) else { panic!() };
        assert_eq!(done, SimTime(6_720));
    }

    #[test]
    fn drop_tail_at_txqueuelen() {
        let mut l = link(serde_json::json!({"txqueuelen": 2}));
        l.enqueue(SimTime::ZERO, packet(0, 100));
        l.enqueue(SimTime::ZERO, packet(1, 100));
        assert_eq!(l.enqueue(SimTime::ZERO, packet(2, 100)), Enqueued::Dropped(DropCause::QueueFull));
        assert_eq!(l.stats.drops_queue_full, 1);
    }

    #[test]
    fn jitter_never_reorders_the_links_own_packets() {
        let mut l = link(serde_json::json!({"jitter": {"kind": "exponential", "mean_us": 500.0}}));
        let mut now = SimTime::ZERO;
        let mut arrivals = Vec::new();
        for seq in 0..200 {
            if let Enqueued::Started(done) = l.enqueue(now, packet(seq, 1460)) {
                let (_, arrival, _) = l.tx_done(done);
                arrivals.push(arrival);
                now = done;
            }
        }
        assert!(arrivals.windows(2).all(|w| w[0] <= w[1]));
        assert!(arrivals.windows(2).any(|w| w[1] - w[0] > SimTime(200_000)), "jitter spreads arrivals");
    }

    #[test]
    fn carrier_loss_empties_queue_and_wire_and_bumps_the_epoch() {
        let mut l = link(serde_json::json!({"delay_us": 1000.0}));
        let Enqueued::Started(done) = l.enqueue(SimTime::ZERO, packet(0, 1460)) else { panic!() };
        l.enqueue(SimTime::ZERO, packet(1, 1460));
        l.tx_done(done); // packet 0 is on the wire, packet 1 being sent
        let lost: Vec<u32> = l.carrier_down(done + SimTime(5)).iter().map(|p| p.seq).collect();
        assert_eq!(lost, [0, 1]);
        assert_eq!(l.epoch(), 1);
        assert_eq!(l.enqueue(SimTime(6), packet(2, 1460)), Enqueued::Dropped(DropCause::LinkDown));
        assert_eq!(l.stats.drops_link_down, 3);
    }
}
