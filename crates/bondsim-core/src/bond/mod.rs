//! The bond: a [`Scheduler`] picks the link(s) for each packet from the bond's
//! view of its links.
//!
//! Schedulers are pure decisions over a [`BondView`]: they never touch the
//! event queue, so the same code can drive a real-time emulator. Each one
//! lives in its own file and declares a [`SchedulerInfo`] (name, parameters
//! with defaults and help, constructor); [`registry`] lists them all.
//!
//! Adding a scheduler is one file and one line in `registry::ALL`:
//!
//! ```
//! use bondsim_core::bond::{BondView, PacketInfo, Pick, Scheduler, SchedulerInfo, ParamSpec, ParamKind};
//!
//! /// Sends everything on the link with the fewest queued bytes.
//! struct FewestBytes;
//!
//! impl Scheduler for FewestBytes {
//!     fn pick(&mut self, _packet: &PacketInfo, bond: &BondView) -> Pick {
//!         bond.usable().min_by_key(|&id| bond.links[id].queue_bytes).map_or(Pick::Drop, Pick::Link)
//!     }
//! }
//!
//! pub const INFO: SchedulerInfo = SchedulerInfo {
//!     name: "fewest-bytes",
//!     aliases: &[],
//!     summary: "link with the fewest queued bytes",
//!     params: &[],
//!     build: |_params, _ctx| Box::new(FewestBytes),
//! };
//! # let _ = INFO;
//! ```

pub mod load_based;
pub mod params;
pub mod registry;
pub mod round_robin;

pub use params::{ParamKind, ParamSpec, ParamValue, Params};
pub use registry::{BuildContext, SchedulerInfo};

use crate::time::SimTime;

/// Position of a link in the bond (0-based, after `count` expansion).
pub type LinkId = usize;

/// What the bond knows of one link when it decides.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkView {
    /// Up as the bond's link monitor last saw it.
    pub up: bool,
    /// Packets waiting in the link's transmit queue.
    pub queue_len_pkts: u32,
    /// Bytes waiting in the link's transmit queue.
    pub queue_bytes: u64,
    /// Current sending rate, bits per second (paced links: payload bits per period).
    pub rate_bps: f64,
    /// When the link will have sent everything it holds (now, if idle).
    pub idle_at: SimTime,
    /// One-way delay from the link to the receiver.
    pub delay: SimTime,
}

/// The bond's view of all its links at the moment of a decision.
#[derive(Debug, Clone, Copy)]
pub struct BondView<'a> {
    /// Current simulated time.
    pub now: SimTime,
    /// One entry per link, indexed by [`LinkId`].
    pub links: &'a [LinkView],
}

impl BondView<'_> {
    /// Ids of the links the bond believes are up, in id order.
    pub fn usable(&self) -> impl Iterator<Item = LinkId> + '_ {
        self.links.iter().enumerate().filter(|(_, l)| l.up).map(|(id, _)| id)
    }

    /// The first usable link at or after `start`, wrapping around (the kernel's
    /// `bond_get_slave_by_id` walk).
    pub fn first_usable_from(&self, start: LinkId) -> Option<LinkId> {
        let n = self.links.len();
        (0..n).map(|k| (start + k) % n).find(|&id| self.links[id].up)
    }
}

/// The packet a scheduler is asked to place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketInfo {
    /// The flow (request) the packet belongs to.
    pub flow: u32,
    /// Position of the packet in its flow, from 0.
    pub seq: u32,
    /// Payload bytes.
    pub bytes: u32,
    /// The client the flow goes to.
    pub client: u32,
}

/// A scheduler's decision for one packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    /// Send on this link.
    Link(LinkId),
    /// Send a copy on every usable link (`broadcast`).
    All,
    /// No usable link: the packet is dropped.
    Drop,
}

/// A bonding mode or packet scheduler: picks the link(s) for each packet.
pub trait Scheduler: Send {
    /// Chooses where `packet` goes, given the bond's view of its links.
    fn pick(&mut self, packet: &PacketInfo, bond: &BondView) -> Pick;
}

#[cfg(test)]
pub(crate) mod test_support {
    use super::*;

    /// `n` idle, up links.
    pub fn links(n: usize) -> Vec<LinkView> {
        let idle = LinkView {
            up: true,
            queue_len_pkts: 0,
            queue_bytes: 0,
            rate_bps: 1e9,
            idle_at: SimTime::ZERO,
            delay: SimTime::ZERO,
        };
        vec![idle; n]
    }

    /// The links `scheduler` picks for `count` packets of one flow, queues unchanged.
    pub fn picks(scheduler: &mut dyn Scheduler, view: &[LinkView], count: u32) -> Vec<LinkId> {
        let bond = BondView { now: SimTime::ZERO, links: view };
        (0..count)
            .map(|seq| match scheduler.pick(&PacketInfo { flow: 0, seq, bytes: 1024, client: 0 }, &bond) {
                Pick::Link(id) => id,
                other => panic!("expected a link, got {other:?}"),
            })
            .collect()
    }
}
