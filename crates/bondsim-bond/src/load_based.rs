//! `lb`: the thesis's load-based scheduling (`queue_packet_to_iface_lb`,
//! §5.3.3.2): the first link with the fewest queued packets. Ties go to the
//! lowest link id, so with equal queues it behaves like round-robin.

use super::registry::{BuildContext, SchedulerInfo};
use super::{BondView, PacketInfo, Pick, Scheduler};
use crate::error::Result;
use crate::params::Params;

/// Registry entry.
pub const INFO: SchedulerInfo = SchedulerInfo {
    name: "lb",
    aliases: &["load-based"],
    summary: "thesis load-based: first link with the fewest queued packets (Gupta 2010, §5.3.3.2)",
    params: &[],
    build,
};

fn build(_params: &Params, _ctx: &BuildContext) -> Result<Box<dyn Scheduler>> {
    Ok(Box::new(LoadBased))
}

/// The stateless load-based scheduler.
pub struct LoadBased;

impl Scheduler for LoadBased {
    fn pick(&mut self, _packet: &PacketInfo, bond: &BondView) -> Pick {
        // The least (queue length, link number) among the links up: the first with the fewest
        // queued packets, found without a branch per link (which one wins is not predictable).
        let mut best = u64::MAX;
        for (id, link) in bond.links.iter().enumerate() {
            let key = (u64::from(link.queue_len_pkts) << 32) | id as u64;
            best = best.min(if link.can_tx() { key } else { u64::MAX });
        }
        if best == u64::MAX {
            Pick::Drop
        } else {
            Pick::Link((best & u64::from(u32::MAX)) as usize)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{headers, links, packet};
    use crate::time::SimTime;
    use crate::BondView;

    fn pick(view: &[crate::LinkView]) -> Pick {
        let h = headers(1, 1);
        LoadBased.pick(&packet(&h), &BondView { now: SimTime::ZERO, links: view })
    }

    #[test]
    fn picks_first_link_with_fewest_queued_packets() {
        let mut view = links(4);
        for (l, q) in view.iter_mut().zip([3, 1, 2, 1]) {
            l.queue_len_pkts = q;
        }
        assert_eq!(pick(&view), Pick::Link(1));
        view[1].up = false;
        assert_eq!(pick(&view), Pick::Link(3));
        view.iter_mut().for_each(|l| l.up = false);
        assert_eq!(pick(&view), Pick::Drop);
    }

    #[test]
    fn equal_queues_pick_lowest_id() {
        assert_eq!(pick(&links(4)), Pick::Link(0));
    }
}
