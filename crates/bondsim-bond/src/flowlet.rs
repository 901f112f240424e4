//! `flowlet`: flowlet switching (Kandula, Katabi, Sinha and Berger, "Dynamic
//! load balancing without packet reordering", CCR 2007 — FLARE; CONGA's
//! flowlets, Alizadeh et al., SIGCOMM 2014). A flow stays on its link while
//! its packets come closer together than `gap_us`; after an idle gap longer
//! than that — longer than the links' difference in delay, so the previous
//! burst has drained — it may move, to the link where its next packet would
//! arrive earliest (CONGA picks the least congested path). A flow whose link
//! goes down moves at once.

use super::earliest_finish::earliest_arrival;
use super::params::{ParamKind, ParamSpec, Params};
use super::registry::{BuildContext, SchedulerInfo};
use super::{BondView, FlowTable, LinkId, PacketInfo, Pick, Scheduler};
use crate::error::Result;
use crate::time::SimTime;

/// Registry entry.
pub const INFO: SchedulerInfo = SchedulerInfo {
    name: "flowlet",
    aliases: &[],
    summary: "flowlet switching (FLARE/CONGA): a flow moves only after an idle gap > gap_us",
    params: &[ParamSpec {
        name: "gap_us",
        kind: ParamKind::Float { min: 0.0, max: 1e9 },
        default: "500",
        help: "idle time after which a flow may change link, microseconds",
    }],
    build,
};

fn build(params: &Params, _ctx: &BuildContext) -> Result<Box<dyn Scheduler>> {
    Ok(Box::new(Flowlet { gap: SimTime::from_micros_f64(params.float("gap_us")), flows: FlowTable::new() }))
}

/// Per flow (5-tuple): its link, until an idle gap ends its flowlet.
pub struct Flowlet {
    gap: SimTime,
    flows: FlowTable<LinkId>,
}

impl Scheduler for Flowlet {
    fn pick(&mut self, packet: &PacketInfo, bond: &BondView) -> Pick {
        let key = packet.headers.key();
        let link = match self.flows.get(&key, bond.now) {
            Some(&link) if bond.links[link].can_tx() => link,
            _ => match earliest_arrival(bond, packet.l3_bytes) {
                Some(link) => link,
                None => return Pick::Drop,
            },
        };
        // The flowlet lasts while the next packet comes within `gap` of this one.
        self.flows.insert(key, link, bond.now + self.gap, bond.now);
        Pick::Link(link)
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::{build, headers, links, packet};
    use crate::time::SimTime;
    use crate::{BondView, Pick};

    #[test]
    fn moves_only_after_an_idle_gap() {
        let mut view = links(2);
        let mut f = build("flowlet[gap_us=100]", &view);
        let h = headers(1, 1);
        fn at(now_us: u64, v: &[crate::LinkView]) -> BondView<'_> {
            BondView { now: SimTime(now_us * 1000), links: v }
        }
        assert_eq!(f.pick(&packet(&h), &at(0, &view)), Pick::Link(0));
        view[0].idle_at_est = SimTime(1_000_000); // link 0 now busy: a new flowlet would go to link 1
        assert_eq!(f.pick(&packet(&h), &at(50, &view)), Pick::Link(0), "within the gap: stay");
        assert_eq!(f.pick(&packet(&h), &at(300, &view)), Pick::Link(1), "after the gap: move");
    }
}
