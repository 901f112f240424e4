//! Open vSwitch bonds (`ofproto/bond.c`): `ovs:balance-slb` (source MAC +
//! VLAN) and `ovs:balance-tcp` (5-tuple), 256 buckets each.
//!
//! A bucket gets a member on its first packet, round-robin over the enabled
//! members (`get_enabled_member`), and again if its member is disabled. Every
//! `bond-rebalance-interval` (default 10000 ms; 0 = never) `bond_rebalance`
//! runs: while the most loaded member exceeds the least loaded by at least
//! 100000 bytes and 1/32 of the latter, the first bucket (by index) of the
//! most loaded member whose move keeps the low side above its old load and
//! closes at least a tenth of the gap to the midpoint moves to the least
//! loaded member; a member with fewer than two busy buckets is not a source.
//! Then every bucket's byte count is halved (an exponentially weighted
//! average). balance-tcp is modelled with the lazy assignment above and LACP
//! negotiated.

use super::hash::{ovs_hash_5tuple, ovs_hash_mac};
use super::params::{ParamKind, ParamSpec, Params};
use super::registry::{BuildContext, SchedulerInfo};
use super::{BondView, LinkId, PacketInfo, Pick, Scheduler};
use crate::error::Result;
use crate::time::SimTime;

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "bond_rebalance_interval",
        kind: ParamKind::Int { min: 0, max: 10_000_000 },
        default: "10000",
        help: "other_config:bond-rebalance-interval, ms (0 = no rebalancing; 1-999 mean 1000)",
    },
    ParamSpec {
        name: "bond_hash_basis",
        kind: ParamKind::Int { min: 0, max: 4_294_967_295 },
        default: "0",
        help: "other_config:bond-hash-basis",
    },
];

/// Registry entry of balance-slb.
pub const SLB: SchedulerInfo = SchedulerInfo {
    name: "ovs:balance-slb",
    aliases: &[],
    summary: "Open vSwitch balance-slb: source MAC + VLAN buckets, rebalanced every 10 s",
    params: PARAMS,
    build: |params, ctx| build(params, ctx, false),
};

/// Registry entry of balance-tcp.
pub const TCP: SchedulerInfo = SchedulerInfo {
    name: "ovs:balance-tcp",
    aliases: &[],
    summary: "Open vSwitch balance-tcp: L3/L4 5-tuple buckets, rebalanced every 10 s",
    params: PARAMS,
    build: |params, ctx| build(params, ctx, true),
};

fn build(params: &Params, ctx: &BuildContext, tcp: bool) -> Result<Box<dyn Scheduler>> {
    let interval_ms = match params.int("bond_rebalance_interval") {
        0 => 0,
        ms => ms.max(1000),
    };
    Ok(Box::new(OvsBond {
        tcp,
        basis: params.int("bond_hash_basis") as u32,
        interval: (interval_ms > 0).then(|| SimTime::from_millis_f64(interval_ms as f64)),
        enabled: (0..ctx.links.len()).collect(),
        member: [None; 256],
        tx_bytes: [0; 256],
    }))
}

/// State of an OVS balanced bond.
pub struct OvsBond {
    tcp: bool,
    basis: u32,
    interval: Option<SimTime>,
    /// Enabled members in `enabled_members` list order (next to hand out first).
    enabled: Vec<LinkId>,
    member: [Option<LinkId>; 256],
    tx_bytes: [u64; 256],
}

impl OvsBond {
    fn next_enabled(&mut self) -> Option<LinkId> {
        let first = *self.enabled.first()?;
        self.enabled.rotate_left(1);
        Some(first)
    }

    /// `bond_rebalance`.
    fn rebalance(&mut self) {
        let mut load: Vec<(LinkId, u64)> = Vec::new();
        for &m in &self.enabled {
            let bytes = (0..256).filter(|&b| self.member[b] == Some(m)).map(|b| self.tx_bytes[b]).sum();
            load.push((m, bytes));
        }
        let mut moved = [false; 256];
        // Most loaded first; equal loads keep list order.
        load.sort_by_key(|m| std::cmp::Reverse(m.1));
        while load.len() >= 2 {
            let (from, from_bytes) = load[0];
            let (to, to_bytes) = *load.last().expect("two members");
            let overload = from_bytes - to_bytes;
            if overload < to_bytes >> 5 || overload < 100_000 {
                break;
            }
            let busy: Vec<usize> =
                (0..256).filter(|&b| self.member[b] == Some(from) && self.tx_bytes[b] > 0 && !moved[b]).collect();
            let ideal = (from_bytes + to_bytes) / 2;
            let choice = if busy.len() < 2 {
                None
            } else {
                busy.into_iter().find(|&b| {
                    let delta = self.tx_bytes[b];
                    let new_low = (from_bytes - delta).min(to_bytes + delta);
                    new_low > to_bytes && new_low - to_bytes >= (ideal - to_bytes) / 10
                })
            };
            match choice {
                Some(b) => {
                    let delta = self.tx_bytes[b];
                    self.member[b] = Some(to);
                    moved[b] = true;
                    load[0].1 -= delta;
                    let last = load.len() - 1;
                    load[last].1 += delta;
                    load.sort_by_key(|m| std::cmp::Reverse(m.1));
                }
                None => {
                    load.remove(0);
                }
            }
        }
        self.tx_bytes.iter_mut().for_each(|b| *b /= 2);
    }
}

impl Scheduler for OvsBond {
    fn reads_link_load(&self) -> bool {
        false
    }

    fn pick(&mut self, packet: &PacketInfo, bond: &BondView) -> Pick {
        let h = packet.headers;
        let hash = if self.tcp {
            ovs_hash_5tuple(h, self.basis)
        } else {
            ovs_hash_mac(&h.src_mac, h.vlan.unwrap_or(0), self.basis)
        };
        let bucket = (hash & 0xff) as usize;
        let member = match self.member[bucket] {
            Some(m) if bond.links[m].up => m,
            _ => {
                let Some(m) = self.next_enabled() else { return Pick::Drop };
                self.member[bucket] = Some(m);
                m
            }
        };
        self.tx_bytes[bucket] += u64::from(packet.frame_bytes());
        Pick::Link(member)
    }

    fn tick_interval(&self) -> Option<SimTime> {
        self.interval
    }

    fn on_tick(&mut self, _bond: &BondView) {
        self.rebalance();
    }

    fn on_link_change(&mut self, link: LinkId, bond: &BondView) {
        if bond.links[link].up {
            if !self.enabled.contains(&link) {
                self.enabled.push(link); // appended at the tail of enabled_members
            }
        } else {
            self.enabled.retain(|&m| m != link);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::{build, headers, links, packet};
    use crate::time::SimTime;
    use crate::{BondView, Pick};

    #[test]
    fn tcp_buckets_go_round_robin_then_rebalance_moves_load() {
        let view = links(2);
        let mut ovs = build("ovs:balance-tcp", &view);
        let bond = BondView { now: SimTime::ZERO, links: &view };
        // Find four flows in distinct buckets; they are handed out 0,1,0,1.
        let flows: Vec<_> = (0..4u16).map(|i| headers(1, 40000 + i)).collect();
        let first: Vec<Pick> = flows.iter().map(|h| ovs.pick(&packet(h), &bond)).collect();
        assert!(first.contains(&Pick::Link(0)) && first.contains(&Pick::Link(1)));
        // Make every flow on link 0 heavy; the rebalance moves one bucket away.
        let on_zero: Vec<_> = flows.iter().zip(&first).filter(|(_, p)| **p == Pick::Link(0)).map(|(h, _)| *h).collect();
        for _ in 0..1000 {
            for h in &on_zero {
                ovs.pick(&packet(h), &bond);
            }
        }
        ovs.on_tick(&bond);
        let after: Vec<Pick> = on_zero.iter().map(|h| ovs.pick(&packet(h), &bond)).collect();
        assert!(after.contains(&Pick::Link(1)), "{after:?}");
    }

    #[test]
    fn slb_keeps_all_flows_of_one_source_mac_together() {
        let view = links(4);
        let mut slb = build("ovs:balance-slb[bond_rebalance_interval=0]", &view);
        assert_eq!(slb.tick_interval(), None);
        let bond = BondView { now: SimTime::ZERO, links: &view };
        let used: std::collections::HashSet<_> =
            (0..50u8).map(|c| slb.pick(&packet(&headers(c, 40000 + u16::from(c))), &bond)).collect();
        assert_eq!(used.len(), 1, "one server MAC: one bucket");
    }
}
