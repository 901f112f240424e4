//! `earliest-finish`: each packet on the link where it would finish arriving
//! earliest — after what the link already holds (its queued bytes at its
//! rate), its own time on the wire, and the link's delay. A bondsim scheduler,
//! the rule of earliest-finish-time list scheduling (as in HEFT, Topcuoglu et
//! al. 2002) applied to striping.
//!
//! In a deterministic bond this delivers every flow in order at full rate:
//! the link chosen for a packet is the earliest for it, so no later packet
//! can arrive before it (packets arriving at the same instant are taken in
//! sending order). Jitter, slowdowns and failures break the prediction; ties
//! go to the lower link id.

use super::registry::SchedulerInfo;
use super::{BondView, LinkId, PacketInfo, Pick, Scheduler};

/// Registry entry.
pub const INFO: SchedulerInfo = SchedulerInfo {
    name: "earliest-finish",
    aliases: &["eft"],
    summary: "bondsim: the link where the packet would arrive earliest (queue, rate, delay)",
    params: &[],
    build: |_params, _ctx| Ok(Box::new(EarliestFinish)),
};

/// The usable link where a packet of `l3_bytes` sent now would arrive first.
pub fn earliest_arrival(bond: &BondView, l3_bytes: u32) -> Option<LinkId> {
    bond.usable().min_by_key(|&id| (bond.links[id].arrival_if_sent(bond.now, l3_bytes), id))
}

/// The stateless earliest-finish scheduler.
pub struct EarliestFinish;

impl Scheduler for EarliestFinish {
    fn pick(&mut self, packet: &PacketInfo, bond: &BondView) -> Pick {
        earliest_arrival(bond, packet.l3_bytes).map_or(Pick::Drop, Pick::Link)
    }
}

#[cfg(test)]
mod tests {
    use crate::bond::test_support::{build, links, picks};
    use crate::time::SimTime;

    #[test]
    fn weighs_queue_rate_and_delay() {
        let mut view = links(2);
        view[1].rate_bps = 100e6;
        assert_eq!(picks(build("earliest-finish", &view).as_mut(), &view, 1), [0]);
        // The fast link is busy for 200 us; a 1 KB packet takes ~88 us on the slow one.
        view[0].idle_at = SimTime(200_000);
        assert_eq!(picks(build("earliest-finish", &view).as_mut(), &view, 1), [1]);
        // ...unless the slow link is far away.
        view[1].delay = SimTime(500_000);
        assert_eq!(picks(build("earliest-finish", &view).as_mut(), &view, 1), [0]);
    }
}
