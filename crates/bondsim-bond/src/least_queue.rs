//! Queue-length schedulers for heterogeneous bonds (Andresen & Hanenkamp,
//! "Heterogeneous Channel Bonding Revisited"):
//!
//! * `least-queue`: the link with the fewest queued packets; equal queues go to
//!   the faster link (then the lower id).
//! * `cutoff-least-queue`: packets of at least `cutoff_bytes` of payload always
//!   take the primary (the fastest link); smaller ones go by least-queue. The
//!   paper gives no cut-off; 512 bytes is bondsim's choice.

use super::n_to_one::{primary_link, CUTOFF, PRIMARY};
use super::registry::SchedulerInfo;
use super::{BondView, LinkId, PacketInfo, Pick, Scheduler};

/// Registry entry of Least-Queue.
pub const INFO: SchedulerInfo = SchedulerInfo {
    name: "least-queue",
    aliases: &[],
    summary: "seed 002's Least-Queue: fewest queued packets, ties to the faster link",
    params: &[],
    build: |_params, _ctx| Ok(Box::new(LeastQueue { primary: None })),
};

/// Registry entry of Cut-off-Least-Queue.
pub const CUTOFF_INFO: SchedulerInfo = SchedulerInfo {
    name: "cutoff-least-queue",
    aliases: &[],
    summary: "seed 002's Cut-off-Least-Queue: large packets on the primary, small ones by least-queue",
    params: &[PRIMARY, CUTOFF],
    build: |params, ctx| {
        Ok(Box::new(LeastQueue { primary: Some((primary_link(params, ctx)?, params.int("cutoff_bytes") as u32)) }))
    },
};

/// The link with the fewest queued packets; ties to the faster, then the lower id.
pub fn least_queued(bond: &BondView) -> Option<LinkId> {
    bond.usable().min_by(|&a, &b| {
        let (la, lb) = (&bond.links[a], &bond.links[b]);
        la.queue_len_pkts.cmp(&lb.queue_len_pkts).then(lb.rate_bps.total_cmp(&la.rate_bps)).then(a.cmp(&b))
    })
}

/// State of least-queue (with an optional primary and cut-off).
pub struct LeastQueue {
    primary: Option<(LinkId, u32)>,
}

impl Scheduler for LeastQueue {
    fn pick(&mut self, packet: &PacketInfo, bond: &BondView) -> Pick {
        if let Some((primary, cutoff)) = self.primary {
            if packet.bytes >= cutoff && bond.links[primary].can_tx() {
                return Pick::Link(primary);
            }
        }
        least_queued(bond).map_or(Pick::Drop, Pick::Link)
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::{build, links, picks};

    #[test]
    fn ties_go_to_the_faster_link() {
        let mut view = links(3);
        view[0].rate_bps = 100e6;
        view[2].rate_bps = 10e9;
        assert_eq!(picks(build("least-queue", &view).as_mut(), &view, 1), [2]);
        view[2].queue_len_pkts = 3;
        view[1].queue_len_pkts = 3;
        assert_eq!(picks(build("least-queue", &view).as_mut(), &view, 1), [0]);
    }
}
