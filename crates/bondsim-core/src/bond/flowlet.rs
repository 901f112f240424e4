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
use super::{BondView, LinkId, PacketInfo, Pick, Scheduler};
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
    Ok(Box::new(Flowlet { gap: SimTime::from_micros_f64(params.float("gap_us")), flows: Vec::new() }))
}

/// Per flow: its link and the time of its last packet.
pub struct Flowlet {
    gap: SimTime,
    flows: Vec<Option<(LinkId, SimTime)>>,
}

impl Scheduler for Flowlet {
    fn pick(&mut self, packet: &PacketInfo, bond: &BondView) -> Pick {
        let flow = packet.flow as usize;
        if self.flows.len() <= flow {
            self.flows.resize(flow + 1, None);
        }
        let link = match self.flows[flow] {
            Some((link, last)) if bond.links[link].up && bond.now.saturating_sub(last) <= self.gap => link,
            _ => match earliest_arrival(bond, packet.l3_bytes) {
                Some(link) => link,
                None => return Pick::Drop,
            },
        };
        self.flows[flow] = Some((link, bond.now));
        Pick::Link(link)
    }
}

#[cfg(test)]
mod tests {
    use crate::bond::test_support::{build, headers, links, packet};
    use crate::bond::{BondView, Pick};
    use crate::time::SimTime;

    #[test]
    fn moves_only_after_an_idle_gap() {
        let mut view = links(2);
        let mut f = build("flowlet[gap_us=100]", &view);
        let h = headers(1, 1);
        fn at(now_us: u64, v: &[crate::bond::LinkView]) -> BondView<'_> {
            BondView { now: SimTime(now_us * 1000), links: v }
        }
        assert_eq!(f.pick(&packet(0, 0, &h), &at(0, &view)), Pick::Link(0));
        view[0].idle_at = SimTime(1_000_000); // link 0 now busy: a new flowlet would go to link 1
        assert_eq!(f.pick(&packet(0, 1, &h), &at(50, &view)), Pick::Link(0), "within the gap: stay");
        assert_eq!(f.pick(&packet(0, 2, &h), &at(300, &view)), Pick::Link(1), "after the gap: move");
    }
}
