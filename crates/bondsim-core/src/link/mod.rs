//! Links: each holds a FIFO transmit queue and sends from it.
//!
//! * [`PacedLink`] is the thesis's interface (`interface.py`): it wakes up once
//!   per period, sends the first queued packet if there is one, and the packet
//!   reaches its client at once.
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

mod paced;
mod rate;
mod slowdown;

pub use paced::PacedLink;
pub use rate::{RateLink, Sent};
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
}

impl DropCause {
    /// How many causes there are (for arrays indexed by `cause as usize`).
    pub const COUNT: usize = 6;
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
            DropCause::NoLink | DropCause::SwitchPort => {}
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

/// A link of either kind.
#[derive(Debug, Clone)]
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
    pub fn carrier_down(&mut self, now: SimTime) -> Vec<Packet> {
        match self {
            Link::Paced(l) => l.carrier_down(),
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
}
