//! `balance-tlb`: adaptive transmit load balancing (`bond_alb.c`, TLB part).
//!
//! 256 buckets; a packet's bucket is `xmit_hash & 0xff` (balance-alb: the XOR
//! of the destination IP's bytes). A bucket without a link is given the link
//! with the most spare capacity, `gap = (speed_Mbps << 20) - (load << 3)` —
//! computed, as the kernel does, in 32 bits before widening, so speeds of
//! 4096 Mbit/s and more wrap — and that link's load grows by the bucket's
//! load history. Every 10 s (`BOND_TLB_REBALANCE_INTERVAL`) every bucket is
//! released and its history set to `1 + bytes sent / 10 s`, so flows are
//! re-placed greedily by their recent rate. The rebalance is counted in the ALB
//! timer's 100 ms runs (`bond_alb_monitor`, `tx_rebalance_counter`); a link coming
//! up orders one at the next run and restarts the count
//! (`bond_alb_handle_link_change`). A link that fails loses its buckets, and at a
//! change of active link the old and the new one are released with their history
//! saved (`bond_alb_handle_active_change` → `tlb_clear_slave(.., 1)`). With `tlb_dynamic_lb = 0` there is no rebalancing: flows go to
//! `usable[xmit_hash % count]`. The bond receives on the active link only.

use super::active_backup::{ActiveLink, PRIMARY, PRIMARY_RESELECT};
use super::hash::{linux_xmit_hash, HashPolicy};
use super::params::{ParamKind, ParamSpec, Params};
use super::registry::{BuildContext, SchedulerInfo};
use super::{BondView, LinkId, PacketInfo, Pick, Receive, Scheduler};
use crate::error::Result;
use crate::flow::FlowHeaders;
use crate::time::SimTime;

/// Registry entry.
pub const INFO: SchedulerInfo = SchedulerInfo {
    name: "balance-tlb",
    aliases: &["tlb", "5"],
    summary: "Linux balance-tlb: 256 hash buckets placed on the least-loaded link, rebalanced every 10 s",
    params: &[super::balance_xor::XMIT_HASH_POLICY, TLB_DYNAMIC_LB, REBALANCE, PRIMARY, PRIMARY_RESELECT],
    build,
};

/// `tlb_dynamic_lb`: rebalance by load (1) or hash only (0).
pub const TLB_DYNAMIC_LB: ParamSpec = ParamSpec {
    name: "tlb_dynamic_lb",
    kind: ParamKind::Int { min: 0, max: 1 },
    default: "1",
    help: "1: place buckets by load and rebalance; 0: usable[hash % count], no rebalancing",
};

/// The rebalance interval (a kernel constant, exposed for experiments).
pub const REBALANCE: ParamSpec = ParamSpec {
    name: "rebalance_interval_s",
    kind: ParamKind::Float { min: 0.1, max: 3600.0 },
    default: "10",
    help: "seconds between rebalances (the kernel's BOND_TLB_REBALANCE_INTERVAL), counted in the ALB timer's 100 ms runs (rounded to them)",
};

/// Number of transmit buckets (`TLB_HASH_TABLE_SIZE`).
pub const BUCKETS: usize = 256;

/// The ALB timer's period (`alb_delta_in_ticks`: `HZ / ALB_TIMER_TICKS_PER_SEC`, 10 a second).
pub const ALB_TICK: SimTime = SimTime(100_000_000);

fn build(params: &Params, ctx: &BuildContext) -> Result<Box<dyn Scheduler>> {
    Ok(Box::new(Tlb::new(params, ctx, BucketOf::XmitHash)?))
}

/// How a packet's bucket is found.
#[derive(Debug, Clone, Copy)]
pub enum BucketOf {
    /// `bond_xmit_hash & 0xff` (balance-tlb).
    XmitHash,
    /// XOR of the destination IP's bytes (balance-alb's `_simple_hash`).
    DestinationIp,
}

#[derive(Debug, Clone, Copy, Default)]
struct Bucket {
    link: Option<LinkId>,
    // u32 as the kernel's `tlb_client_info` keeps them (`bond_alb.h`): a bucket sending
    // more than 4 GiB in an interval wraps, and so does its recorded load.
    tx_bytes: u32,
    load_history: u32,
}

/// The transmit side of balance-tlb and balance-alb.
pub struct Tlb {
    bucket_of: BucketOf,
    /// `xmit_hash_policy`: the hash of balance-tlb's buckets, and of both modes' usable array
    /// when `tlb_dynamic_lb` is 0 (`bond_xmit_tlb_slave_get`, `bond_xmit_alb_slave_get`:
    /// `slaves->arr[bond_xmit_hash(bond, skb) % count]`).
    policy: HashPolicy,
    dynamic: bool,
    interval: SimTime,
    /// The rebalance interval in ALB timer runs, and the runs counted since the last rebalance
    /// (`BOND_TLB_REBALANCE_TICKS`, `tx_rebalance_counter`).
    rebalance_ticks: u32,
    counter: u32,
    buckets: Vec<Bucket>,
    /// Each link's assigned load (`tlb_slave_info.load`, u32).
    load: Vec<u32>,
    usable: Vec<LinkId>,
    /// The active link (receives; takes non-balanced traffic).
    pub active: ActiveLink,
}

impl Tlb {
    /// From the mode's parameters.
    pub fn new(params: &Params, ctx: &BuildContext, bucket_of: BucketOf) -> Result<Tlb> {
        Ok(Tlb {
            bucket_of,
            policy: HashPolicy::from_name(params.choice("xmit_hash_policy")),
            dynamic: params.int("tlb_dynamic_lb") == 1,
            interval: SimTime::from_secs_f64(params.float("rebalance_interval_s")),
            rebalance_ticks: ((params.float("rebalance_interval_s") / ALB_TICK.as_secs_f64()).round() as u32).max(1),
            // `bond_alb_init_slave` orders a rebalance at the timer's first run, at `bond_open`,
            // when nothing is placed yet: the count starts there.
            counter: 0,
            buckets: vec![Bucket::default(); BUCKETS],
            load: vec![0; ctx.links.len()],
            usable: (0..ctx.links.len()).collect(),
            active: ActiveLink::new(params, ctx)?,
        })
    }

    /// The kernel's `compute_gap`, wrapping in 32 bits as it does.
    fn gap(speed_mbps: u32, load: u32) -> i64 {
        i64::from(speed_mbps.wrapping_shl(20)) - i64::from(load.wrapping_shl(3))
    }

    fn least_loaded(&self, bond: &BondView) -> Option<LinkId> {
        let mut best: Option<(i64, LinkId)> = None;
        for id in bond.usable() {
            let gap = Self::gap(bond.links[id].speed_mbps(), self.load[id]);
            if best.is_none_or(|(g, _)| g < gap) {
                best = Some((gap, id));
            }
        }
        best.map(|(_, id)| id)
    }

    /// `tlb_clear_slave`: releases `link`'s buckets; with `save_load` their history becomes
    /// `1 + bytes sent / interval` and the count restarts (`tlb_init_table_entry`), without it
    /// both are kept.
    fn clear_link(&mut self, link: LinkId, save_load: bool) {
        let seconds = self.interval.as_secs_f64();
        for b in self.buckets.iter_mut().filter(|b| b.link == Some(link)) {
            b.link = None;
            if save_load {
                b.load_history = 1u32.wrapping_add((f64::from(b.tx_bytes) / seconds) as u64 as u32);
                b.tx_bytes = 0;
            }
        }
        self.load[link] = 0;
    }

    fn rebalance(&mut self) {
        for link in 0..self.load.len() {
            self.clear_link(link, true);
        }
    }
}

impl Scheduler for Tlb {
    fn skips_updelay(&self, _link: LinkId, bond: &BondView) -> bool {
        bond.usable().next().is_none() // `usable_slaves->count == 0`
    }

    fn reads_link_load(&self) -> bool {
        false
    }

    fn pick(&mut self, packet: &PacketInfo, bond: &BondView) -> Pick {
        if !self.dynamic {
            return if self.usable.is_empty() {
                Pick::Drop
            } else {
                let hash = linux_xmit_hash(self.policy, packet.headers);
                Pick::Link(self.usable[hash as usize % self.usable.len()])
            };
        }
        let hash = match self.bucket_of {
            BucketOf::XmitHash => linux_xmit_hash(self.policy, packet.headers),
            BucketOf::DestinationIp => u32::from(packet.headers.dst_ip.iter().fold(0u8, |x, b| x ^ b)),
        };
        let index = (hash & 0xff) as usize;
        let link = match self.buckets[index].link {
            Some(link) => link,
            None => {
                let Some(link) = self.least_loaded(bond) else { return Pick::Drop };
                self.buckets[index].link = Some(link);
                self.load[link] = self.load[link].wrapping_add(self.buckets[index].load_history);
                link
            }
        };
        if !bond.links[link].can_tx() {
            // bond_do_alb_xmit: a bucket on a link that cannot send (`bond_slave_can_tx`: the
            // monitor's verdict or the carrier) is cleared and the packet dropped.
            self.clear_link(link, false);
            return Pick::Drop;
        }
        self.buckets[index].tx_bytes = self.buckets[index].tx_bytes.wrapping_add(packet.frame_bytes());
        Pick::Link(link)
    }

    fn tick_interval(&self) -> Option<SimTime> {
        self.dynamic.then_some(ALB_TICK)
    }

    fn on_tick(&mut self, _bond: &BondView) {
        self.counter += 1;
        if self.counter >= self.rebalance_ticks {
            self.rebalance();
            self.counter = 0;
        }
    }

    fn on_link_change(&mut self, link: LinkId, bond: &BondView) {
        self.usable = bond.usable_ids();
        // `bond_alb_handle_link_change`: a link down loses its buckets at once; a link up
        // orders a rebalance at the timer's next run.
        if bond.links[link].up {
            self.counter = self.rebalance_ticks;
        } else {
            self.clear_link(link, false);
        }
        let before = self.active.active;
        if self.active.on_link_change(link, bond) {
            // `bond_alb_handle_active_change`: the old and the new active link are released,
            // their loads saved (the old one is the slave that held the bond's address).
            for l in [before, self.active.active].into_iter().flatten() {
                self.clear_link(l, true);
            }
        }
    }

    fn on_carrier_change(&mut self, _link: LinkId, bond: &BondView) {
        // tlb_dynamic_lb = 0 hashes over the usable array, rebuilt at the carrier change;
        // the dynamic buckets find a link without carrier at their next packet (`pick`).
        self.usable = bond.usable_ids();
    }

    fn rx_link(&mut self, _headers: &FlowHeaders, _bond: &BondView) -> Option<LinkId> {
        self.active.active
    }

    fn receive(&self) -> Receive {
        Receive::ActiveSlave
    }

    fn own_slave_macs(&self) -> bool {
        true
    }

    fn active_link(&self) -> Option<LinkId> {
        self.active.active
    }
}

#[cfg(test)]
mod tests {
    use super::Tlb;
    use crate::test_support::{build, headers, links, packet};
    use crate::time::SimTime;
    use crate::{BondView, LinkView, Pick, Scheduler};

    fn send(s: &mut dyn Scheduler, view: &[LinkView], client: u8) -> Pick {
        let h = headers(client, 40000);
        s.pick(&packet(&h), &BondView { now: SimTime::ZERO, links: view })
    }

    #[test]
    fn a_buckets_bytes_wrap_in_32_bits_as_the_kernel_counts_them() {
        // `tlb_client_info.tx_bytes` is a u32: a bucket that sent 4 GiB + 10 MB in the interval
        // is recorded as 10 MB (then /10 s), lighter than one that sent 20 MB.
        let view = links(2);
        let mut tlb = build("balance-tlb", &view);
        let bond = BondView { now: SimTime::ZERO, links: &view };
        let sent = |tlb: &mut Box<dyn crate::Scheduler>, client: u8, bytes: u64| {
            let h = headers(client, 40000);
            let mut left = bytes;
            while left > 0 {
                let l3 = left.min(60_000) as u32;
                tlb.pick(&crate::PacketInfo { bytes: l3, l3_bytes: l3 - 14, headers: &h }, &bond);
                left -= u64::from(l3);
            }
        };
        sent(&mut tlb, 1, (1 << 32) + 10_000_000); // heavy, wrapped
        sent(&mut tlb, 2, 20_000_000);
        rebalance(tlb.as_mut(), &bond);
        // After the rebalance: the wrapped bucket first (link 0, its light recorded load), then
        // the 20 MB one (link 1, the emptier), then a third bucket finds link 0 the lighter.
        assert_eq!(send(tlb.as_mut(), &view, 1), Pick::Link(0));
        assert_eq!(send(tlb.as_mut(), &view, 2), Pick::Link(1));
        assert_eq!(send(tlb.as_mut(), &view, 3), Pick::Link(0), "with 64-bit counters link 1 would be the lighter");
    }

    /// Runs the ALB timer for one rebalance interval (10 s: 100 runs).
    fn rebalance(tlb: &mut dyn crate::Scheduler, bond: &BondView) {
        assert_eq!(tlb.tick_interval(), Some(super::ALB_TICK));
        for _ in 0..100 {
            tlb.on_tick(bond);
        }
    }

    #[test]
    fn rebalances_come_every_100_timer_runs_and_a_link_up_orders_one_at_the_next() {
        let mut view = links(2);
        let mut tlb = build("balance-tlb", &view);
        let bond = |view: &[LinkView]| view.to_vec();
        // Client 1 heavy on link 0; a new client lands on link 0 too (no load known yet).
        for _ in 0..10_000 {
            send(tlb.as_mut(), &view, 1);
        }
        assert_eq!(send(tlb.as_mut(), &view, 2), Pick::Link(0));
        let v = bond(&view);
        for _ in 0..99 {
            tlb.on_tick(&BondView { now: SimTime::ZERO, links: &v });
        }
        assert_eq!(send(tlb.as_mut(), &view, 3), Pick::Link(0), "99 runs: no rebalance yet");
        tlb.on_tick(&BondView { now: SimTime::ZERO, links: &v });
        assert_eq!(send(tlb.as_mut(), &view, 1), Pick::Link(0));
        assert_eq!(send(tlb.as_mut(), &view, 2), Pick::Link(1), "the 100th run rebalanced by load");
        // Link 1 fails: its bucket (client 2's) goes at once, to link 0, with its saved history.
        view[1].up = false;
        tlb.on_link_change(1, &BondView { now: SimTime::ZERO, links: &view });
        assert_eq!(send(tlb.as_mut(), &view, 2), Pick::Link(0));
        // It comes back: no rebalance yet (a new client finds link 0 loaded with both histories
        // and takes link 1; an immediate rebalance would have emptied both links).
        view[1].up = true;
        tlb.on_link_change(1, &BondView { now: SimTime::ZERO, links: &view });
        assert_eq!(send(tlb.as_mut(), &view, 4), Pick::Link(1), "placed by the loads before the rebalance");
        assert_eq!(send(tlb.as_mut(), &view, 2), Pick::Link(0));
        // The next run rebalances, and the count restarts from there.
        tlb.on_tick(&BondView { now: SimTime::ZERO, links: &view });
        assert_eq!(send(tlb.as_mut(), &view, 1), Pick::Link(0));
        assert_eq!(send(tlb.as_mut(), &view, 4), Pick::Link(1), "released at the run after the link came up");
    }

    #[test]
    fn a_change_of_active_link_releases_the_new_ones_buckets_with_their_load() {
        let mut view = links(3);
        let mut tlb = build("balance-tlb", &view);
        let bond = |view: &[LinkView]| view.to_vec();
        // Histories: client 1 the heaviest, then 2, then 3; placed in that order over the three links.
        for (client, packets) in [(1, 300), (2, 200), (3, 100)] {
            for _ in 0..packets {
                send(tlb.as_mut(), &view, client);
            }
        }
        let v = bond(&view);
        rebalance(tlb.as_mut(), &BondView { now: SimTime::ZERO, links: &v });
        for (client, link) in [(1, 0), (2, 1), (3, 2)] {
            assert_eq!(send(tlb.as_mut(), &view, client), Pick::Link(link));
        }
        // The active link 0 fails: link 1 becomes active and its buckets are released, its load
        // zeroed (`tlb_clear_slave(bond, new_slave, 1)`), so client 1 moves to link 1, not to link
        // 2 (whose load, client 3's, is lighter than client 2's that link 1 would still carry).
        view[0].up = false;
        tlb.on_link_change(0, &BondView { now: SimTime::ZERO, links: &view });
        assert_eq!(tlb.active_link(), Some(1));
        assert_eq!(send(tlb.as_mut(), &view, 1), Pick::Link(1));
        assert_eq!(send(tlb.as_mut(), &view, 3), Pick::Link(2), "a link not involved keeps its buckets");
    }

    #[test]
    fn gap_wraps_in_32_bits_as_the_kernel_does() {
        assert_eq!(Tlb::gap(1000, 0), 1000 << 20);
        assert_eq!(Tlb::gap(25_000, 0), 444_596_224); // less than a 1 Gbit/s link's 1_048_576_000
        assert_eq!(Tlb::gap(1000, 1000), (1000 << 20) - 8000);
    }

    #[test]
    fn new_buckets_go_to_the_link_with_most_spare_capacity_after_a_rebalance() {
        let view = links(2);
        let mut tlb = build("balance-tlb", &view);
        // Before any rebalance every bucket's history is 0: all land on link 0.
        assert!((1..20).all(|c| send(tlb.as_mut(), &view, c) == Pick::Link(0)));
        // Client 1 sends a lot, then a rebalance spreads by recent load.
        for _ in 0..10_000 {
            send(tlb.as_mut(), &view, 1);
        }
        rebalance(tlb.as_mut(), &BondView { now: SimTime::ZERO, links: &view });
        assert_eq!(send(tlb.as_mut(), &view, 1), Pick::Link(0));
        assert_eq!(send(tlb.as_mut(), &view, 2), Pick::Link(1), "the heavy bucket's load pushes others away");
    }

    #[test]
    fn balance_alb_without_dynamic_lb_hashes_by_the_xmit_hash_policy() {
        // `bond_xmit_alb_slave_get`: "tx_slave = slaves->arr[bond_xmit_hash(bond, skb) % count]",
        // the xmit_hash_policy's hash, not the dynamic table's destination-IP XOR.
        use crate::hash::{linux_xmit_hash, HashPolicy};
        let view = links(3);
        for policy in ["layer2", "layer3+4"] {
            let mut alb = build(&format!("balance-alb[tlb_dynamic_lb=0,xmit_hash_policy={policy}]"), &view);
            for client in 1..40u8 {
                let h = headers(client, 40000 + u16::from(client));
                let want = linux_xmit_hash(HashPolicy::from_name(policy), &h) as usize % 3;
                let got = alb.pick(&packet(&h), &BondView { now: SimTime::ZERO, links: &view });
                assert_eq!(got, Pick::Link(want), "{policy}, client {client}");
            }
        }
    }

    #[test]
    fn failed_links_buckets_move_and_static_mode_hashes() {
        let mut view = links(2);
        let mut tlb = build("balance-tlb", &view);
        assert_eq!(send(tlb.as_mut(), &view, 5), Pick::Link(0));
        view[0].up = false;
        tlb.on_link_change(0, &BondView { now: SimTime::ZERO, links: &view });
        assert_eq!(send(tlb.as_mut(), &view, 5), Pick::Link(1));
        let view = links(3);
        let mut fixed = build("balance-tlb[tlb_dynamic_lb=0,xmit_hash_policy=layer2+3]", &view);
        assert_eq!(fixed.tick_interval(), None);
        let used: std::collections::HashSet<_> = (1..60).map(|c| send(fixed.as_mut(), &view, c)).collect();
        assert_eq!(used.len(), 3);
    }
}
