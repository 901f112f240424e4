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
//!
//! `guard_us` trades rate for robustness: a packet may leave its flow's
//! previous link only for one where it would arrive at least that long after
//! the previous packet, so jitter smaller than the guard cannot swap them (a
//! link never reorders its own packets).

use super::params::{ParamKind, ParamSpec};
use super::registry::SchedulerInfo;
use super::{BondView, FlowTable, LinkId, PacketInfo, Pick, Scheduler};
use crate::time::SimTime;

/// Registry entry.
pub const INFO: SchedulerInfo = SchedulerInfo {
    name: "earliest-finish",
    aliases: &["eft"],
    summary: "bondsim: the link where the packet would arrive earliest (queue, rate, delay)",
    params: &[ParamSpec {
        name: "guard_us",
        kind: ParamKind::Float { min: 0.0, max: 1e9 },
        default: "0",
        help: "least gap between a flow's consecutive predicted arrivals, microseconds",
    }],
    build: |params, _ctx| {
        Ok(Box::new(EarliestFinish {
            guard: SimTime::from_micros_f64(params.float("guard_us")),
            due: FlowTable::new(),
        }))
    },
};

/// The usable link where a packet of `l3_bytes` sent now would arrive first.
pub fn earliest_arrival(bond: &BondView, l3_bytes: u32) -> Option<LinkId> {
    // The least (arrival, id) over the usable links.
    let mut best: Option<(SimTime, LinkId)> = None;
    for (id, view) in bond.links.iter().enumerate() {
        if view.can_tx() {
            let candidate = (view.arrival_if_sent(bond.now, l3_bytes), id);
            if best.is_none_or(|b| candidate < b) {
                best = Some(candidate);
            }
        }
    }
    best.map(|(_, id)| id)
}

/// earliest-finish: with a guard, when and where each flow's (5-tuple's) last packet is due.
pub struct EarliestFinish {
    guard: SimTime,
    due: FlowTable<(SimTime, LinkId)>,
}

impl Scheduler for EarliestFinish {
    fn pick(&mut self, packet: &PacketInfo, bond: &BondView) -> Pick {
        if self.guard == SimTime::ZERO {
            return earliest_arrival(bond, packet.l3_bytes).map_or(Pick::Drop, Pick::Link);
        }
        let key = packet.headers.key();
        let arrival = |id: LinkId| (bond.links[id].arrival_if_sent(bond.now, packet.l3_bytes), id);
        // Once `due + guard` is past, every link is safe: the entry no longer matters and expires.
        let best = match self.due.get(&key, bond.now).copied() {
            None => bond.usable().map(arrival).min(),
            Some((due, previous)) => {
                let floor = due + self.guard;
                let safe = |&(t, id): &(SimTime, LinkId)| id == previous || t >= floor;
                bond.usable().map(arrival).filter(safe).min().or_else(|| bond.usable().map(arrival).max())
            }
        };
        let Some((t, id)) = best else { return Pick::Drop };
        self.due.insert(key, (t, id), t + self.guard, bond.now);
        Pick::Link(id)
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::{build, headers, links, packet, picks};
    use crate::time::SimTime;
    use crate::{BondView, Pick};

    #[test]
    fn weighs_queue_rate_and_delay() {
        let mut view = links(2);
        view[1].rate_bps = 100e6;
        assert_eq!(picks(build("earliest-finish", &view).as_mut(), &view, 1), [0]);
        // The fast link is busy for 200 us; a 1 KB packet takes ~88 us on the slow one.
        view[0].idle_at_est = SimTime(200_000);
        assert_eq!(picks(build("earliest-finish", &view).as_mut(), &view, 1), [1]);
        // ...unless the slow link is far away.
        view[1].delay_est = SimTime(500_000);
        assert_eq!(picks(build("earliest-finish", &view).as_mut(), &view, 1), [0]);
    }

    #[test]
    fn guard_keeps_consecutive_arrivals_apart() {
        // Two equal idle links: the first packet arrives at 8.816 us on link 0; on link 1 the second would
        // arrive at that same instant, so a 5 us guard keeps it behind the first on link 0 (17.632 us).
        let mut view = links(2);
        let mut eft = build("earliest-finish[guard_us=5]", &view);
        let h = headers(1, 1);
        let first = eft.pick(&packet(&h), &BondView { now: SimTime::ZERO, links: &view });
        assert_eq!(first, Pick::Link(0));
        view[0].idle_at_est = SimTime(8_816);
        let second = eft.pick(&packet(&h), &BondView { now: SimTime::ZERO, links: &view });
        assert_eq!(second, Pick::Link(0), "link 1 would arrive at the same instant");
        // Without a guard the second packet takes the idle link.
        let mut plain = build("earliest-finish", &view);
        assert_eq!(plain.pick(&packet(&h), &BondView { now: SimTime::ZERO, links: &view }), Pick::Link(1));
    }
}
