//! Links: each holds a FIFO transmit queue and sends from it.
//!
//! * [`PacedLink`] is the thesis's interface (`interface.py`): it wakes up once
//!   per period, sends the first queued packet if there is one, and the packet
//!   reaches its client at once; with timer noise (`jitter`) each wake-up comes
//!   late and the next period counts from it.
//! * [`RateLink`] is a real link: a drop-tail queue of `txqueuelen` packets, a
//!   bit rate with per-frame overhead, a fixed per-frame cost, propagation
//!   delay and optional jitter (never reordering the link's own packets), and
//!   optional random frame loss on the wire (`loss`, Bernoulli, or `loss_model`,
//!   Gilbert–Elliott bursts): a lost frame takes its transmit time and never
//!   arrives. Its reverse direction ([`RateLink::mirror`]) loses frames the same
//!   way, from its own random stream.
//!
//! Both can be slowed ([`Slowdown`]) and lose their carrier: a link that goes
//! down drops what it holds and what is on its wire; what the bond sends to it
//! before the monitor notices is dropped too.

mod jitter;
mod line;
mod paced;
mod rate;
mod slowdown;

pub use paced::PacedLink;
pub use rate::{RateLink, Release, Sent};
pub use slowdown::Slowdown;

use crate::bond::LinkView;
use crate::packet::Packet;
use crate::scenario::{LinkModel, LinkSpec, Scenario};
use crate::time::SimTime;

/// Why a packet was lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropCause {
    /// The transmit queue was full (drop-tail).
    QueueFull,
    /// The link had no carrier (or lost it while holding the packet).
    LinkDown,
    /// The bond had no usable link for it.
    NoLink,
    /// Lost on the wire at random (a rate link's `loss` or `loss_model`), after
    /// taking its transmit time.
    Random,
    /// Dropped by a port that kept its carrier (`failures.K.kind = "silent"`), after
    /// crossing the wire.
    Silent,
    /// Sent, then dropped at the switch port (spanning tree kept it from forwarding:
    /// `switch.stp`); counted by the switch (`drops_switch_port`).
    SwitchPort,
    /// Dropped by the full queue of the line beyond the NIC (`links.N.downstream`), after
    /// leaving the host.
    Downstream,
    /// Dropped by the receiving host's full receive queue (`[host]`: the backlog or the ring),
    /// after crossing the wire; counted by the host (`host_drops`).
    HostQueue,
}

impl DropCause {
    /// How many causes there are (for arrays indexed by `cause as usize`).
    pub const COUNT: usize = 8;
}

/// Counters of one link over a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// Packets sent (put on the wire).
    pub packets_sent: u64,
    /// Payload bytes sent.
    pub bytes_sent: u64,
    /// Bytes sent on the wire, frame overhead included.
    pub wire_bytes: u64,
    /// Time spent sending, nanoseconds.
    pub busy_ns: u64,
    /// Send opportunities (paced links: wake-ups).
    pub polls: u64,
    /// Longest the transmit queue got, packets.
    pub max_queue_pkts: u32,
    /// Packets dropped because the queue was full.
    pub drops_queue_full: u64,
    /// Packets dropped because the carrier was gone.
    pub drops_link_down: u64,
    /// Frames sent but lost on the wire at random (`loss`, `loss_model`); they count in `packets_sent` too.
    pub drops_random: u64,
    /// Frames dropped by a silent failure of the port (carrier up); they count in `packets_sent` too.
    pub drops_silent: u64,
    /// Frames dropped by the full queue of the line beyond the NIC (`downstream`); they count in
    /// `packets_sent` too.
    pub drops_downstream: u64,
    /// Times the carrier was lost.
    pub failures: u64,
}

impl LinkStats {
    pub(crate) fn record_drop(&mut self, cause: DropCause) {
        match cause {
            DropCause::QueueFull => self.drops_queue_full += 1,
            DropCause::LinkDown => self.drops_link_down += 1,
            DropCause::Random => self.drops_random += 1,
            DropCause::Silent => self.drops_silent += 1,
            DropCause::Downstream => self.drops_downstream += 1,
            DropCause::NoLink | DropCause::SwitchPort | DropCause::HostQueue => {}
        }
    }
}

/// What became of a packet handed to a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enqueued {
    /// The link was idle and started sending it; it will be on the wire until then.
    Started(SimTime),
    /// It waits in the transmit queue.
    Waiting,
    /// It was dropped.
    Dropped(DropCause),
}

/// What a link held when its carrier went: every packet is lost. The host had already stopped
/// counting the first `released` of them against their socket (frames on the wire: released at
/// TX completion); it frees the rest now, as a NIC's driver frees what its ring held when the
/// carrier goes.
#[derive(Debug, Default)]
pub struct Lost {
    /// The packets, those the host had released first.
    pub packets: Vec<Packet>,
    /// How many of them the host had released.
    pub released: usize,
}

/// A link of either kind. (Unboxed, though a rate link is the larger: a run has a handful of
/// links, and every frame reaches its link through this enum.)
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)]
pub enum Link {
    /// The thesis's interface.
    Paced(PacedLink),
    /// A rate link.
    Rate(RateLink),
}

impl Link {
    /// Link `id` of `scenario`, described by `spec`.
    pub fn new(scenario: &Scenario, spec: &LinkSpec, id: usize) -> Link {
        match &spec.model {
            LinkModel::Rate(model) => Link::Rate(RateLink::new(scenario, spec, model, id)),
            LinkModel::Paced(model) => Link::Paced(PacedLink::new(scenario, spec, model, id)),
        }
    }

    /// Hands `packet` to the link at `now`.
    #[inline]
    pub fn enqueue(&mut self, now: SimTime, packet: &Packet) -> Enqueued {
        match self {
            Link::Paced(l) => l.enqueue(packet),
            Link::Rate(l) => l.enqueue(now, packet),
        }
    }

    /// The carrier goes at `now`: returns the packets the link held (lost).
    pub fn carrier_down(&mut self, now: SimTime) -> Lost {
        match self {
            Link::Paced(l) => Lost { packets: l.carrier_down(), released: 0 },
            Link::Rate(l) => l.carrier_down(now),
        }
    }

    /// The carrier is back.
    pub fn carrier_up(&mut self) {
        match self {
            Link::Paced(l) => l.carrier = true,
            Link::Rate(l) => l.carrier = true,
        }
    }

    /// Whether the carrier is present.
    pub fn carrier(&self) -> bool {
        match self {
            Link::Paced(l) => l.carrier,
            Link::Rate(l) => l.carrier,
        }
    }

    /// The bond's view of this link at `now`, with the monitor's verdict `up`.
    pub fn view(&self, now: SimTime, up: bool) -> LinkView {
        match self {
            Link::Paced(l) => l.view(now, up),
            Link::Rate(l) => l.view(now, up),
        }
    }

    /// Refreshes the queue and idle time in `view` (the rest does not change).
    #[inline(always)]
    pub fn refresh_view(&self, now: SimTime, view: &mut LinkView) {
        match self {
            Link::Paced(l) => l.refresh_view(now, view),
            Link::Rate(l) => l.refresh_view(now, view),
        }
    }

    /// Counters so far.
    pub fn stats(&self) -> &LinkStats {
        match self {
            Link::Paced(l) => &l.stats,
            Link::Rate(l) => &l.stats,
        }
    }

    /// Counters at the run's end `end`: busy time up to `end` only ([`RateLink::stats_at`]).
    pub fn stats_at(&self, end: SimTime) -> LinkStats {
        match self {
            Link::Paced(l) => l.stats.clone(), // (no busy time: a paced link's sends take none)
            Link::Rate(l) => l.stats_at(end),
        }
    }

    /// Counts a frame that crossed the wire and was dropped at the far end (a silent port).
    pub fn record_drop(&mut self, cause: DropCause) {
        match self {
            Link::Paced(l) => l.stats.record_drop(cause),
            Link::Rate(l) => l.stats.record_drop(cause),
        }
    }

    /// Bytes the link carried up to `t`, each frame's spread over its transmit time (paced links:
    /// payload over the period it used); see [`RateLink::carried_bytes_at`].
    pub fn carried_bytes_at(&self, t: SimTime) -> f64 {
        match self {
            Link::Paced(l) => l.carried_bytes_at(t),
            Link::Rate(l) => l.carried_bytes_at(t),
        }
    }

    /// Nominal capacity, bits per second (paced links: payload bits per period).
    pub fn capacity_bps(&self) -> f64 {
        match self {
            Link::Paced(l) => l.capacity_bps(),
            Link::Rate(l) => l.rate_bps(),
        }
    }

    /// The kind's name, as the scenario spells it (`LinkSpec::kind`) and the results report it.
    pub fn kind(&self) -> &'static str {
        match self {
            Link::Paced(_) => "paced",
            Link::Rate(_) => "rate",
        }
    }

    /// Bytes put on the wire so far, as the results count them: frames with their overhead
    /// (paced links, which have no frames: payload).
    pub fn wire_bytes(&self) -> u64 {
        match self {
            Link::Paced(l) => l.stats.bytes_sent,
            Link::Rate(l) => l.stats.wire_bytes,
        }
    }

    /// The same link in the other direction, for the clients' packets; `None` for a kind with
    /// no return path (the paced interface: what a client sends reaches the server at once).
    pub fn mirror(&self, seed: u64, id: usize) -> Option<RateLink> {
        match self {
            Link::Paced(_) => None,
            Link::Rate(l) => Some(l.mirror(seed, id)),
        }
    }

    // ---- Driven by events: the world schedules `TxDone` when `enqueue` says
    // `Enqueued::Started` (or `tx_done` says `next`) and `Deliver` at a `Sent`'s arrival,
    // both stamped with the link's `epoch`.

    /// Changes every time the carrier goes: events of an older epoch are void (0 for a kind
    /// that takes no such events).
    #[inline(always)]
    pub fn epoch(&self) -> u32 {
        match self {
            Link::Paced(_) => 0,
            Link::Rate(l) => l.epoch(),
        }
    }

    /// The frame being sent is out at `now` ([`RateLink::tx_done`]), with the link's
    /// [`Link::release`] (by which the world frees the frame and the next; given here, the
    /// world does not look the link up again for it, twice per frame); `None` when the event
    /// is of an older `epoch` (the carrier went meanwhile) or the kind takes no such event.
    #[inline(always)]
    pub fn tx_done(&mut self, now: SimTime, epoch: u32) -> Option<(Sent, Release)> {
        match self {
            Link::Rate(l) if l.epoch() == epoch => Some((l.tx_done(now), l.release())),
            _ => None,
        }
    }

    /// The oldest frame on the wire reaches the far end ([`RateLink::arrive`]); `None` as for
    /// [`Link::tx_done`].
    #[inline(always)]
    pub fn arrive(&mut self, epoch: u32) -> Option<Packet> {
        match self {
            Link::Rate(l) if l.epoch() == epoch => Some(l.arrive()),
            _ => None,
        }
    }

    /// When the host stops counting this link's frames against their socket (a link that
    /// wakes: as it sends, `AtEnd`).
    #[inline(always)]
    pub fn release(&self) -> Release {
        match self {
            Link::Paced(_) => Release::AtEnd,
            Link::Rate(l) => l.release(),
        }
    }

    /// The frame being sent, if any.
    pub fn head(&self) -> Option<&Packet> {
        match self {
            Link::Paced(_) => None,
            Link::Rate(l) => l.head(),
        }
    }

    /// A frame completed, its release waiting for the coalesced interrupt
    /// ([`Release::Coalesced`]): whether it is the first since the last interrupt.
    pub fn completed(&mut self, packet: &Packet) -> bool {
        match self {
            Link::Rate(l) => l.completed(packet),
            Link::Paced(_) => unreachable!("only a link with Release::Coalesced waits for an interrupt"),
        }
    }

    /// The coalesced TX-completion interrupt: the frames it frees.
    pub fn interrupt(&mut self) -> Vec<Packet> {
        match self {
            Link::Rate(l) => l.interrupt(),
            Link::Paced(_) => Vec::new(),
        }
    }

    // ---- Driven by wake-ups: the world schedules a `Poll` at time zero for a kind that
    // `wakes`, then at each wake-up's answer; idle ones wait outside the queue (`sim/idle.rs`).

    /// Whether the link sends by waking up (a `Poll` from time zero) rather than by events.
    pub fn wakes(&self) -> bool {
        matches!(self, Link::Paced(_))
    }

    /// A wake-up at `now`: what it sent, and when it wakes next ([`PacedLink::poll`]). Only a
    /// link that [`Link::wakes`] is polled. (Not wrapped in an `Option` for the other kinds: the
    /// packet, moved once more through it, made a run of paced links 2% slower.)
    #[inline(always)]
    pub fn poll(&mut self, now: SimTime) -> (Option<Packet>, SimTime) {
        match self {
            Link::Paced(l) => l.poll(now),
            Link::Rate(_) => unreachable!("only a link that wakes is polled"),
        }
    }

    /// When the link wakes next (`None`: it does not wake).
    pub fn next_poll(&self) -> Option<SimTime> {
        match self {
            Link::Paced(l) => Some(l.next_poll()),
            Link::Rate(_) => None,
        }
    }

    /// The time between idle wake-ups when it never changes ([`PacedLink::idle_step`]).
    pub fn idle_step(&self) -> Option<SimTime> {
        match self {
            Link::Paced(l) => l.idle_step(),
            Link::Rate(_) => None,
        }
    }

    /// What `count` idle wake-ups do, the last at `last`, `step` apart
    /// ([`PacedLink::skip_idle_polls`]): returns the next wake-up. Only a link with an
    /// [`Link::idle_step`] waits idle.
    #[inline(always)]
    pub fn skip_idle_polls(&mut self, count: u64, last: SimTime, step: SimTime) -> SimTime {
        match self {
            Link::Paced(l) => l.skip_idle_polls(count, last, step),
            Link::Rate(_) => unreachable!("only a link with an idle step waits idle"),
        }
    }
}
