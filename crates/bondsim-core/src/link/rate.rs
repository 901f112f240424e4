//! A rate link: drop-tail queue, bit rate, per-frame overhead and cost, wire delay, jitter,
//! random frame loss.

use std::collections::VecDeque;

use rand::RngExt;

use super::jitter::JitterSampler;
use super::line::Line;
use super::{DropCause, Enqueued, LinkStats, Lost, Slowdown};
use crate::bond::{LinkView, MIN_ETHERNET_PAYLOAD};
use crate::packet::Packet;
use crate::rng::{self, Rng};
use crate::scenario::{GilbertElliott, LinkSpec, LossModel, Placement, RateModel, Scenario};
use crate::time::SimTime;

/// How frames are lost on the wire (see [`RateModel::loss`] and [`GilbertElliott`]).
#[derive(Debug, Clone, PartialEq)]
enum LossProcess {
    /// Each frame is lost with this probability, independently of the others.
    Bernoulli(f64),
    /// The Gilbert–Elliott chain and whether it is in the bad state.
    GilbertElliott { model: GilbertElliott, bad: bool },
}

/// Random frame loss: a process and the stream it draws from, stepped once per frame sent.
#[derive(Debug, Clone)]
struct Loss {
    process: LossProcess,
    rng: Rng,
}

impl Loss {
    /// The loss of `model` drawing from `rng`, or `None` if it loses nothing
    /// (then no random number is ever drawn, and no result moves).
    fn new(model: &RateModel, rng: impl FnOnce() -> Rng) -> Option<Loss> {
        let process = match &model.loss_model {
            Some(LossModel::GilbertElliott(ge)) => LossProcess::GilbertElliott { model: ge.clone(), bad: false },
            None if model.loss > 0.0 => LossProcess::Bernoulli(model.loss),
            None => return None,
        };
        Some(Loss { process, rng: rng() })
    }

    /// The same loss from its initial state (the good one), drawing from `rng`.
    fn fresh(&self, rng: Rng) -> Loss {
        let process = match &self.process {
            LossProcess::GilbertElliott { model, .. } => {
                LossProcess::GilbertElliott { model: model.clone(), bad: false }
            }
            bernoulli => bernoulli.clone(),
        };
        Loss { process, rng }
    }

    /// Whether the next frame is lost. Gilbert–Elliott: the frame is lost with
    /// the probability of the current state, then the chain steps (netem's
    /// `loss_gilb_ell` draws the step first but also decides the loss by the
    /// state the frame was sent in: the same process).
    fn lost(&mut self) -> bool {
        match &mut self.process {
            LossProcess::Bernoulli(p) => self.rng.random::<f64>() < *p,
            LossProcess::GilbertElliott { model, bad } => {
                let (loss, leave) = if *bad { (model.loss_bad, model.r) } else { (model.loss_good, model.p) };
                let lost = self.rng.random::<f64>() < loss;
                if self.rng.random::<f64>() < leave {
                    *bad = !*bad;
                }
                lost
            }
        }
    }
}

/// What became of the frame a link finished putting on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sent {
    /// The frame's packet.
    pub packet: Packet,
    /// When it reaches the far end, or why it never will: lost on the wire
    /// ([`DropCause::Random`], counted in [`LinkStats::drops_random`]) or dropped by a full
    /// downstream line ([`DropCause::Downstream`]). A lost frame is not in transit.
    pub arrival: Result<SimTime, DropCause>,
    /// When the next frame (if any) will be on the wire.
    pub next: Option<SimTime>,
}

/// A link with a bit rate and a transmit queue.
#[derive(Debug, Clone)]
pub struct RateLink {
    rate_bps: f64,
    overhead_bytes: u32,
    per_packet: SimTime,
    delay: SimTime,
    jitter: Option<(JitterSampler, Rng)>,
    loss: Option<Loss>,
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
    /// The last frame size (wire bytes) and its nominal transmit time: frames mostly come in
    /// one size, and the conversion (a division and a rounding) is then done once, not twice
    /// per frame. The same value either way.
    tx_memo: (u64, SimTime),
    /// When the frame being sent (if `sending`) started and will be on the wire.
    tx_span: (SimTime, SimTime),
    /// Wire bytes of frames cut off by a carrier loss, counted for the share of their transmit
    /// time that had passed ([`RateLink::carried_bytes_at`]).
    cut_bytes: f64,
    /// When the host stops counting a frame against its socket ([`Release`]).
    release: Release,
    /// Frames sent, waiting for the coalesced TX-completion interrupt ([`Release::Coalesced`]).
    completions: Vec<Packet>,
    /// A line beyond the NIC (`downstream`). (Boxed: `None` is then a null pointer, which every
    /// frame tests at the least cost.)
    line: Option<Box<Line>>,
    /// What the link did so far.
    pub stats: LinkStats,
}

/// When the sending host stops counting a frame against its socket (`sk_wmem_alloc`, which TCP
/// small queues reads): where the link's queue is (`links.N.placement`, docs/placement.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Release {
    /// At its TX completion, after its last bit: a NIC whose driver frees each frame as it
    /// completes (`placement = "nic"`, `tx_coalesce_us = 0`).
    AtEnd,
    /// At the TX-completion interrupt, the given time after the first completion since the last
    /// interrupt (`tx_coalesce_us`; ethtool's `tx-usecs`): every frame completed by then is
    /// freed together.
    Coalesced(SimTime),
    /// As it starts: a host shaper (tc HTB) hands it to a faster NIC then
    /// (`placement = "shaper"`).
    AtStart,
    /// As the bond hands it to the link, before it queues: a TUN device orphans it
    /// (`placement = "tun"`).
    AtEnqueue,
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
            loss: Loss::new(model, || rng::stream(scenario.seed, &format!("links.{id}.loss"))),
            txqueuelen: model.txqueuelen as usize,
            header_bytes: scenario.l3_header_bytes(),
            slowdown: Slowdown::new(&spec.base, scenario.seed, id),
            release: match (model.placement, model.tx_coalesce_us) {
                (Placement::Shaper, _) => Release::AtStart,
                (Placement::Tun, _) => Release::AtEnqueue,
                (Placement::Nic, us) if us > 0.0 => Release::Coalesced(SimTime::from_micros_f64(us)),
                (Placement::Nic, _) => Release::AtEnd,
            },
            line: model.downstream.as_ref().map(|spec| Box::new(Line::new(spec))),
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
            loss: None,
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
            tx_memo: (u64::MAX, SimTime::ZERO),
            tx_span: (SimTime::ZERO, SimTime::ZERO),
            cut_bytes: 0.0,
            release: Release::AtEnd,
            completions: Vec::new(),
            line: None,
            stats: LinkStats::default(),
        }
    }

    /// The same link in the other direction (full duplex): same speed, frame
    /// overhead, per-frame cost, delay and queue; its slowdowns and jitter
    /// model the sending side and are not mirrored. Its random loss is the
    /// same (a lossy cable loses both ways), drawn from its own stream
    /// `links.{id}.reverse_loss` of `seed` and starting from the good state.
    pub fn mirror(&self, seed: u64, id: usize) -> RateLink {
        RateLink {
            rate_bps: self.rate_bps,
            overhead_bytes: self.overhead_bytes,
            per_packet: self.per_packet,
            delay: self.delay,
            loss: self.loss.as_ref().map(|l| l.fresh(rng::stream(seed, &format!("links.{id}.reverse_loss")))),
            txqueuelen: self.txqueuelen,
            header_bytes: self.header_bytes,
            line: self.line.as_ref().map(|line| Box::new(line.fresh())),
            ..RateLink::idle()
        }
    }

    /// Propagation delay (a downstream line's included).
    pub fn delay(&self) -> SimTime {
        self.delay + self.line.as_ref().map_or(SimTime::ZERO, |line| line.delay())
    }

    /// When the host stops counting this link's frames against their socket.
    #[inline(always)]
    pub fn release(&self) -> Release {
        self.release
    }

    /// The frame being sent, if any (what a shaper released as it started).
    pub fn head(&self) -> Option<&Packet> {
        self.queue.front().filter(|_| self.sending)
    }

    /// A frame completed, its release waiting for the coalesced interrupt: returns whether it is
    /// the first since the last interrupt (the world then schedules the interrupt).
    pub fn completed(&mut self, packet: &Packet) -> bool {
        self.completions.push(*packet);
        self.completions.len() == 1
    }

    /// The coalesced TX-completion interrupt: the frames it frees.
    pub fn interrupt(&mut self) -> Vec<Packet> {
        std::mem::take(&mut self.completions)
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
        packet.l3_bytes(self.header_bytes)
    }

    fn wire_bytes(&self, packet: &Packet) -> u64 {
        self.wire_bytes_of(self.l3_bytes(packet))
    }

    /// The bytes a frame of `l3_bytes` at layer 3 occupies on the wire.
    fn wire_bytes_of(&self, l3_bytes: u32) -> u64 {
        u64::from(l3_bytes.max(MIN_ETHERNET_PAYLOAD)) + u64::from(self.overhead_bytes)
    }

    #[inline]
    fn nominal_tx(&mut self, wire_bytes: u64) -> SimTime {
        if self.tx_memo.0 != wire_bytes {
            let tx = self.per_packet + SimTime::from_secs_f64(wire_bytes as f64 * 8.0 / self.rate_bps);
            self.tx_memo = (wire_bytes, tx);
        }
        self.tx_memo.1
    }

    /// Starts sending the head packet at `now`; returns when it is on the wire.
    #[inline]
    fn start(&mut self, now: SimTime) -> SimTime {
        let wire_bytes = self.wire_bytes(&self.queue[0]);
        self.start_frame(now, wire_bytes)
    }

    /// [`RateLink::start`], the head packet being of `wire_bytes` on the wire.
    #[inline]
    fn start_frame(&mut self, now: SimTime, wire_bytes: u64) -> SimTime {
        self.factor = self.slowdown.factor_at(now);
        let tx = self.nominal_tx(wire_bytes).scaled(self.factor);
        self.sending = true;
        self.tx_span = (now, now + tx);
        self.stats.busy_ns += tx.0;
        // Queued packets were predicted at the factor of their queueing: never look idle before
        // the frame being sent is out.
        self.backlog_end = self.backlog_end.max(now + tx);
        now + tx
    }

    /// Queues `packet` at `now` (drop-tail); starts sending it if the link is idle.
    #[inline]
    pub fn enqueue(&mut self, now: SimTime, packet: &Packet) -> Enqueued {
        let cause = if !self.carrier {
            DropCause::LinkDown
        } else if self.queue.len() >= self.txqueuelen {
            DropCause::QueueFull
        } else {
            let l3_bytes = self.l3_bytes(packet);
            self.queue_bytes += u64::from(l3_bytes);
            self.factor = self.slowdown.factor_at(now);
            let wire_bytes = self.wire_bytes_of(l3_bytes);
            let tx = self.nominal_tx(wire_bytes);
            self.backlog_end = self.backlog_end.max(now) + tx.scaled(self.factor);
            self.queue.push_back(*packet);
            self.stats.max_queue_pkts = self.stats.max_queue_pkts.max(self.queue.len() as u32);
            return match (self.sending, self.queue.len()) {
                (true, _) => Enqueued::Waiting,
                // (An idle link's queue is empty: the packet just queued is the head.)
                (false, 1) => Enqueued::Started(self.start_frame(now, wire_bytes)),
                (false, _) => Enqueued::Started(self.start(now)),
            };
        };
        self.stats.record_drop(cause);
        Enqueued::Dropped(cause)
    }

    /// The head packet is on the wire at `now`: returns it (it stays in transit
    /// until [`RateLink::arrive`]), when it reaches the receiver (unless it is
    /// lost on the wire: then it is counted and not in transit), and when the
    /// next packet (if any) will be on the wire. A lost frame took its transmit
    /// time and counts as sent, as a corrupted frame does.
    #[inline(always)]
    pub fn tx_done(&mut self, now: SimTime) -> Sent {
        let packet = self.queue.pop_front().expect("a packet was being sent");
        self.sending = false;
        let l3_bytes = self.l3_bytes(&packet);
        self.queue_bytes -= u64::from(l3_bytes);
        self.stats.packets_sent += 1;
        self.stats.bytes_sent += u64::from(packet.bytes);
        self.stats.wire_bytes += self.wire_bytes_of(l3_bytes);
        // Every frame draws its jitter, lost or not: the frames that arrive get
        // the same jitter whatever the loss.
        let jitter = match &mut self.jitter {
            Some((sampler, rng)) => sampler.sample(rng),
            None => SimTime::ZERO,
        };
        let next = (!self.queue.is_empty()).then(|| self.start(now));
        if self.loss.as_mut().is_some_and(Loss::lost) {
            self.stats.record_drop(DropCause::Random);
            return Sent { packet, arrival: Err(DropCause::Random), next };
        }
        // The wire keeps the link's own packets in order, whatever the jitter.
        let arrival = (now + self.delay + jitter).max(self.last_arrival);
        self.last_arrival = arrival;
        if self.line.is_some() {
            return self.through_line(packet, arrival, self.wire_bytes_of(l3_bytes), next);
        }
        self.transit.push_back(packet);
        Sent { packet, arrival: Ok(arrival), next }
    }

    /// The end of [`RateLink::tx_done`] on a link with a downstream line: the frame of
    /// `wire_bytes`, at the line at `at`, passes it or is dropped by its full queue. (Its fate
    /// on the line is known now: nothing else reaches the line before it.) Out of line: most
    /// links have none.
    #[inline(never)]
    fn through_line(&mut self, packet: Packet, at: SimTime, wire_bytes: u64, next: Option<SimTime>) -> Sent {
        let line = self.line.as_mut().expect("a downstream line");
        let arrival = match line.pass(at, wire_bytes) {
            Some(out) => {
                self.transit.push_back(packet);
                Ok(out)
            }
            None => {
                self.stats.record_drop(DropCause::Downstream);
                Err(DropCause::Downstream)
            }
        };
        Sent { packet, arrival, next }
    }

    /// The oldest packet on the wire reaches the receiver.
    pub fn arrive(&mut self) -> Packet {
        self.transit.pop_front().expect("a packet was on the wire")
    }

    /// The carrier goes at `now`: what is queued, being sent or on the wire is
    /// lost (events of the old epoch are void).
    pub fn carrier_down(&mut self, now: SimTime) -> Lost {
        self.carrier = false;
        self.epoch = self.epoch.wrapping_add(1);
        self.stats.failures += 1;
        // The frame being sent took the wire until now: its bytes count for that share, and its
        // transmit time too (counted whole as it started: the rest never happened, so a link is
        // never busy longer than the run, issue 39).
        self.cut_bytes += self.in_progress_bytes(now);
        if self.sending {
            let (from, until) = self.tx_span;
            self.stats.busy_ns -= until.saturating_sub(now.max(from)).0;
        }
        let released = match self.release {
            Release::AtEnqueue => self.transit.len() + self.queue.len(),
            Release::AtStart => self.transit.len() + usize::from(self.sending),
            Release::AtEnd | Release::Coalesced(_) => self.transit.len(),
        };
        self.sending = false;
        self.queue_bytes = 0;
        self.backlog_end = now;
        if let Some(line) = &mut self.line {
            line.clear();
        }
        // On the wire: released at TX completion (or by the coming interrupt); a shaper released
        // the frame being sent as it started (counted above, before `sending` was reset), a TUN
        // device every frame as it came.
        let packets: Vec<Packet> = self.transit.drain(..).chain(self.queue.drain(..)).collect();
        self.stats.drops_link_down += packets.len() as u64;
        Lost { packets, released }
    }

    /// Bytes of the frame being sent at `t` (if any), for the share of its transmit time before `t`.
    fn in_progress_bytes(&self, t: SimTime) -> f64 {
        let (from, until) = self.tx_span;
        if !self.sending || t <= from || until <= from {
            return 0.0;
        }
        let share = ((t - from).as_secs_f64() / (until - from).as_secs_f64()).min(1.0);
        self.wire_bytes(&self.queue[0]) as f64 * share
    }

    /// The counters at the run's end `end`. [`LinkStats::busy_ns`] takes a frame's whole transmit
    /// time as it starts; a run stopped (`stop_s`) while a frame is being sent ends its busy time
    /// there: the share of that frame after `end` is left out, so the link is never busy longer
    /// than the run (issue 39: `busy_s` ≤ `duration_s`).
    pub fn stats_at(&self, end: SimTime) -> LinkStats {
        let (from, until) = self.tx_span;
        let after_end = if self.sending && until > end { (until - end.max(from)).0 } else { 0 };
        LinkStats { busy_ns: self.stats.busy_ns - after_end, ..self.stats.clone() }
    }

    /// Wire bytes the link carried up to `t` (not before its last event), each frame's spread
    /// evenly over its transmit time: frames done, the share of the one being sent, and of any
    /// cut off by a carrier loss. Over a span it is the bytes the link carried within it, so its
    /// bits over the rate are the share of the span the link spent sending (at most the span,
    /// one frame at a time): the link trace's `utilisation`.
    pub fn carried_bytes_at(&self, t: SimTime) -> f64 {
        self.stats.wire_bytes as f64 + self.cut_bytes + self.in_progress_bytes(t)
    }

    /// Refreshes what changes in the bond's view of this link: its queue and when it will be idle.
    #[inline(always)]
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
            carrier: true, // links start with carrier; the simulator follows the NIC's reports
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
        let Enqueued::Started(done) = l.enqueue(SimTime::ZERO, &packet(0, 1460)) else { panic!() };
        assert_eq!(done, SimTime(123_040));
        assert_eq!(l.enqueue(SimTime::ZERO, &packet(1, 1460)), Enqueued::Waiting);
        assert_eq!(l.view(SimTime::ZERO, true).idle_at_est, SimTime(246_080));
        let sent = l.tx_done(done);
        assert_eq!((sent.packet.seq, sent.arrival, sent.next), (0, Ok(SimTime(133_040)), Some(SimTime(246_080))));
        assert_eq!(l.stats.wire_bytes, 1538);
        assert_eq!(l.arrive().seq, 0);
    }

    #[test]
    fn carried_bytes_grow_with_the_frames_transmit_time_and_keep_a_cut_frames_share() {
        let mut l = link(serde_json::json!({}));
        // Two 1538-byte frames of 123.04 us each, back to back.
        let Enqueued::Started(done) = l.enqueue(SimTime::ZERO, &packet(0, 1460)) else { panic!() };
        l.enqueue(SimTime::ZERO, &packet(1, 1460));
        assert_eq!(l.carried_bytes_at(SimTime::ZERO), 0.0);
        assert!((l.carried_bytes_at(SimTime(30_760)) - 1538.0 / 4.0).abs() < 1e-9);
        l.tx_done(done);
        assert_eq!(l.carried_bytes_at(done), 1538.0);
        // The second frame is cut off half-way: its half stays carried, nothing more comes.
        let half = SimTime(done.0 + 61_520);
        assert!((l.carried_bytes_at(half) - 1538.0 * 1.5).abs() < 1e-9);
        l.carrier_down(half);
        assert!((l.carried_bytes_at(half) - 1538.0 * 1.5).abs() < 1e-9);
        assert!((l.carried_bytes_at(SimTime(done.0 * 3)) - 1538.0 * 1.5).abs() < 1e-9);
    }

    #[test]
    fn the_bonds_view_sees_the_slowdown() {
        let mut l = link(serde_json::json!({"slowdown": 2.5}));
        // 1538 wire bytes at 100 Mbit/s = 123.04 us, x 2.5 = 307.6 us.
        let Enqueued::Started(done) = l.enqueue(SimTime::ZERO, &packet(0, 1460)) else { panic!() };
        assert_eq!(done, SimTime(307_600));
        l.enqueue(SimTime::ZERO, &packet(1, 1460));
        let v = l.view(SimTime::ZERO, true);
        assert_eq!(v.idle_at_est, SimTime(615_200));
        assert_eq!(v.tx_time(1500), SimTime(307_600));
    }

    #[test]
    fn small_packets_are_padded_to_the_ethernet_minimum() {
        let mut l = link(serde_json::json!({}));
        // 1 + 40 = 41 < 46: padded to 46 + 38 = 84 bytes = 6.72 us.
        let Enqueued::Started(done) = l.enqueue(SimTime::ZERO, &packet(0, 1)) else { panic!() };
        assert_eq!(done, SimTime(6_720));
    }

    #[test]
    fn drop_tail_at_txqueuelen() {
        let mut l = link(serde_json::json!({"txqueuelen": 2}));
        l.enqueue(SimTime::ZERO, &packet(0, 100));
        l.enqueue(SimTime::ZERO, &packet(1, 100));
        assert_eq!(l.enqueue(SimTime::ZERO, &packet(2, 100)), Enqueued::Dropped(DropCause::QueueFull));
        assert_eq!(l.stats.drops_queue_full, 1);
    }

    #[test]
    fn jitter_never_reorders_the_links_own_packets() {
        let mut l = link(serde_json::json!({"jitter": {"kind": "exponential", "mean_us": 500.0}}));
        let mut now = SimTime::ZERO;
        let mut arrivals = Vec::new();
        for seq in 0..200 {
            if let Enqueued::Started(done) = l.enqueue(now, &packet(seq, 1460)) {
                arrivals.push(l.tx_done(done).arrival.unwrap());
                now = done;
            }
        }
        assert!(arrivals.windows(2).all(|w| w[0] <= w[1]));
        assert!(arrivals.windows(2).any(|w| w[1] - w[0] > SimTime(200_000)), "jitter spreads arrivals");
    }

    /// Sends `n` frames back to back on `l` and returns, per frame, whether it was lost on the wire.
    fn losses(l: &mut RateLink, n: u32) -> Vec<bool> {
        let mut now = SimTime::ZERO;
        let mut lost = Vec::with_capacity(n as usize);
        for seq in 0..n {
            let Enqueued::Started(done) = l.enqueue(now, &packet(seq, 1460)) else { panic!("an idle link starts") };
            let sent = l.tx_done(done);
            assert_eq!(sent.packet.seq, seq);
            if sent.arrival.is_ok() {
                assert_eq!(l.arrive().seq, seq, "what is not lost is in transit");
            }
            lost.push(sent.arrival.is_err());
            now = done;
        }
        assert_eq!(l.stats.packets_sent, u64::from(n), "a lost frame is sent all the same");
        assert_eq!(l.stats.drops_random, lost.iter().filter(|&&x| x).count() as u64);
        lost
    }

    /// Lengths of the runs of consecutive losses.
    fn bursts(lost: &[bool]) -> Vec<u64> {
        let mut out = Vec::new();
        let mut run = 0;
        for &x in lost.iter().chain([&false]) {
            if x {
                run += 1;
            } else if run > 0 {
                out.push(run);
                run = 0;
            }
        }
        out
    }

    #[test]
    fn bernoulli_loss_matches_its_probability() {
        let (p, n) = (0.01, 200_000);
        let lost = losses(&mut link(serde_json::json!({"loss": p})), n);
        let count = lost.iter().filter(|&&x| x).count() as f64;
        // Binomial(n, p): mean n p, sd sqrt(n p (1 - p)) (about 44.5 here); 4 sigma fails once in ~16000.
        let sigma = (f64::from(n) * p * (1.0 - p)).sqrt();
        assert!(
            (count - f64::from(n) * p).abs() < 4.0 * sigma,
            "{count} lost of {n}, expected {} ± {}",
            f64::from(n) * p,
            4.0 * sigma
        );
        // Independent frames: bursts are short (a run of k losses has probability p^(k-1)).
        assert!(bursts(&lost).iter().all(|&b| b <= 4));
    }

    #[test]
    fn gilbert_elliott_loss_rate_and_burst_length_match_the_chain() {
        let (p, r, n) = (0.01, 0.25, 400_000_u32);
        let lost = losses(&mut link(serde_json::json!({"loss_model": {"kind": "gilbert_elliott", "p": p, "r": r}})), n);
        // Gilbert's model (loss_bad = 1, loss_good = 0): the loss rate is the bad state's share p / (p + r).
        let rate = p / (p + r);
        let count = lost.iter().filter(|&&x| x).count() as f64;
        // The losses are correlated, so the binomial variance is too small: the variance of the
        // number of bad-state frames of a two-state chain is n π(1-π) (1 + λ) / (1 - λ) asymptotically,
        // λ = 1 - p - r the chain's second eigenvalue (Cox & Miller). 4 sigma of that.
        let lambda = 1.0 - p - r;
        let sigma = (f64::from(n) * rate * (1.0 - rate) * (1.0 + lambda) / (1.0 - lambda)).sqrt();
        assert!(
            (count - f64::from(n) * rate).abs() < 4.0 * sigma,
            "{count} lost of {n}, expected {} ± {}",
            f64::from(n) * rate,
            4.0 * sigma
        );
        // A burst is a stay in the bad state: geometric with mean 1 / r (= 4), sd sqrt(1 - r) / r.
        let b = bursts(&lost);
        let mean = b.iter().sum::<u64>() as f64 / b.len() as f64;
        let sigma = (1.0 - r).sqrt() / r / (b.len() as f64).sqrt();
        assert!(
            (mean - 1.0 / r).abs() < 4.0 * sigma,
            "mean burst {mean} over {} bursts, expected {}",
            b.len(),
            1.0 / r
        );
        // The same with Bernoulli loss of the same rate would have mean burst 1 / (1 - rate), about 1.04.
        assert!(mean > 3.0);
    }

    #[test]
    fn gilbert_elliott_with_loss_in_both_states_matches_the_stationary_rate() {
        let (p, r, good, bad, n) = (0.05, 0.2, 0.02, 0.6, 400_000_u32);
        let spec = serde_json::json!({"kind": "gilbert_elliott", "p": p, "r": r, "loss_good": good, "loss_bad": bad});
        let lost = losses(&mut link(serde_json::json!({ "loss_model": spec })), n);
        let (pi_bad, pi_good) = (p / (p + r), r / (p + r));
        let rate = pi_bad * bad + pi_good * good;
        let count = lost.iter().filter(|&&x| x).count() as f64;
        // Total variance: the spread of the states' loss probabilities over the frames (the bad-state
        // count's variance as above, times (loss_bad - loss_good)^2) plus the mean binomial variance
        // of the loss draws given the states.
        let lambda = 1.0 - p - r;
        let states = f64::from(n) * pi_bad * pi_good * (1.0 + lambda) / (1.0 - lambda) * (bad - good).powi(2);
        let draws = f64::from(n) * (pi_bad * bad * (1.0 - bad) + pi_good * good * (1.0 - good));
        let sigma = (states + draws).sqrt();
        assert!(
            (count - f64::from(n) * rate).abs() < 4.0 * sigma,
            "{count} lost of {n}, expected {}",
            f64::from(n) * rate
        );
        // And it is not the rate of either state alone (the bound is tight enough to tell).
        assert!(4.0 * sigma < f64::from(n) * (rate - good).min(bad - rate));
    }

    #[test]
    fn the_same_seed_loses_the_same_frames_and_each_direction_has_its_own_stream() {
        let a = losses(&mut link(serde_json::json!({"loss": 0.05})), 5_000);
        let b = losses(&mut link(serde_json::json!({"loss": 0.05})), 5_000);
        assert_eq!(a, b);
        let forward = link(serde_json::json!({"loss_model": {"kind": "gilbert_elliott", "p": 0.05, "r": 0.3}}));
        let mut reverse = forward.mirror(1, 0);
        let mut forward = forward;
        let (f, r) = (losses(&mut forward, 5_000), losses(&mut reverse, 5_000));
        assert_ne!(f, r, "the reverse direction draws from its own stream");
        assert!(r.iter().any(|&x| x), "the reverse direction is lossy too");
        assert_eq!(
            r,
            losses(
                &mut link(serde_json::json!({"loss_model": {"kind": "gilbert_elliott", "p": 0.05, "r": 0.3}}))
                    .mirror(1, 0),
                5_000
            )
        );
    }

    #[test]
    fn no_loss_draws_nothing() {
        let l = link(serde_json::json!({}));
        assert!(l.loss.is_none() && l.mirror(1, 0).loss.is_none());
        let mut l = link(serde_json::json!({"loss": 0.0}));
        assert!(l.loss.is_none());
        assert!(losses(&mut l, 1_000).iter().all(|&x| !x));
    }

    #[test]
    fn a_lost_frame_takes_its_transmit_time_and_never_arrives() {
        // Gilbert's model with p = 1 and r = 1 alternates: the first frame (good state) arrives, the second is lost.
        let mut l =
            link(serde_json::json!({"delay_us": 10.0, "loss_model": {"kind": "gilbert_elliott", "p": 1.0, "r": 1.0}}));
        let Enqueued::Started(done) = l.enqueue(SimTime::ZERO, &packet(0, 1460)) else { panic!() };
        l.enqueue(SimTime::ZERO, &packet(1, 1460));
        l.enqueue(SimTime::ZERO, &packet(2, 1460));
        let first = l.tx_done(done);
        assert_eq!((first.arrival, first.next), (Ok(SimTime(133_040)), Some(SimTime(246_080))));
        let second = l.tx_done(SimTime(246_080));
        assert_eq!(
            (second.packet.seq, second.arrival, second.next),
            (1, Err(DropCause::Random), Some(SimTime(369_120)))
        );
        let third = l.tx_done(SimTime(369_120));
        assert_eq!(third.arrival, Ok(SimTime(379_120)));
        assert_eq!((l.arrive().seq, l.arrive().seq), (0, 2));
        assert_eq!((l.stats.packets_sent, l.stats.drops_random, l.stats.busy_ns), (3, 1, 369_120));
    }

    #[test]
    fn busy_time_ends_with_a_run_stopped_mid_frame() {
        // Two frames of 123.04 us back to back (see `full_frames_take_their_wire_time`).
        let mut l = link(serde_json::json!({}));
        let Enqueued::Started(done) = l.enqueue(SimTime::ZERO, &packet(0, 1460)) else { panic!() };
        l.enqueue(SimTime::ZERO, &packet(1, 1460));
        assert_eq!(l.stats.busy_ns, 123_040, "counted whole as it starts");
        assert_eq!(l.stats_at(SimTime(50_000)).busy_ns, 50_000, "stopped mid-frame: busy until the end only");
        let next = l.tx_done(done).next.unwrap();
        assert_eq!(l.stats.busy_ns, 246_080);
        assert_eq!(l.stats_at(done).busy_ns, 123_040, "stopped as the second frame starts: none of it");
        assert_eq!(l.stats_at(SimTime(200_000)).busy_ns, 200_000);
        l.tx_done(next);
        assert_eq!(l.stats_at(SimTime(1_000_000)), l.stats, "idle at the end: every frame whole");
    }

    #[test]
    fn busy_time_ends_where_a_carrier_loss_cuts_the_frame() {
        // A frame of 123.04 us cut at 50 us: busy for those 50 us only, before and after the run ends.
        let mut l = link(serde_json::json!({}));
        let Enqueued::Started(_) = l.enqueue(SimTime::ZERO, &packet(0, 1460)) else { panic!() };
        l.enqueue(SimTime::ZERO, &packet(1, 1460));
        l.carrier_down(SimTime(50_000));
        assert_eq!(l.stats.busy_ns, 50_000);
        assert_eq!(l.stats_at(SimTime(60_000)).busy_ns, 50_000, "not sending at the end: nothing more to take off");
    }

    #[test]
    fn carrier_loss_empties_queue_and_wire_and_bumps_the_epoch() {
        let mut l = link(serde_json::json!({"delay_us": 1000.0}));
        let Enqueued::Started(done) = l.enqueue(SimTime::ZERO, &packet(0, 1460)) else { panic!() };
        l.enqueue(SimTime::ZERO, &packet(1, 1460));
        l.tx_done(done); // packet 0 is on the wire, packet 1 being sent
        let lost = l.carrier_down(done + SimTime(5));
        assert_eq!(lost.packets.iter().map(|p| p.seq).collect::<Vec<_>>(), [0, 1]);
        // Packet 0 left the host at its TX completion; packet 1 it still held.
        assert_eq!(lost.released, 1);
        assert_eq!(l.epoch(), 1);
        assert_eq!(l.enqueue(SimTime(6), &packet(2, 1460)), Enqueued::Dropped(DropCause::LinkDown));
        assert_eq!(l.stats.drops_link_down, 3);
    }
}
