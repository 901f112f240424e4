//! `802.3ad`: dynamic link aggregation (`bond_3ad.c`, `bond_update_slave_arr`).
//!
//! Links of equal speed form an aggregator (their LACP keys match; the switch
//! is one partner). The active aggregator is chosen by `ad_select`: `stable`
//! and `bandwidth` take the largest bandwidth (active links × speed), `count`
//! the most active links; `stable` keeps the current one while it has an
//! active link. Flows go to `usable[xmit_hash % count]` over the active
//! aggregator's links that are up and distributing, re-mapped by plain
//! modulo when that set changes. A link whose carrier comes back restarts its
//! state machines (`ad_update_actor_keys` finds its speed changed from the 0 of
//! the link-down reset and sets `AD_PORT_BEGIN`): at the first run of the
//! 100 ms state machines (`bond_3ad_state_machine_handler`) its mux goes DETACHED,
//! at the next WAITING for `AD_AGGREGATE_WAIT_TIME` (20 runs), then ATTACHED, and
//! collecting/distributing one run later once the partner, through the same
//! sequence, reports sync: it distributes 22 runs after the first one after the
//! miimon verdict (2.2–2.3 s; a partner whose LACPDU leaves late in its 300 ms
//! transmit slots adds up to two runs, not modelled). A port back from LACP's
//! `DEFAULTED` state waits the 2 s aggregate wait; one that left because
//! its partner's LACPDUs timed out and hears one again within the `EXPIRED` state's
//! 3 s (`ad_rx_machine` sets the short timeout there and only `DEFAULTED`, when it runs
//! out, unselects the port): it stayed selected and attached, so the mux machine puts
//! it back in collecting/distributing at the run after the LACPDU. With fewer than `min_links`
//! active links the bond's carrier is off: every packet is dropped.
//!
//! Without an LACP partner (a switch with a static LAG or none) no port hears a
//! LACPDU: a port joins an aggregator only if that aggregator has a partner
//! (`ad_port_selection_logic`: `__agg_has_partner(aggregator) && !aggregator->is_individual`),
//! so each port is an aggregator of its own; the same `ad_select` picks the active one
//! and `ad_agg_selection_logic` enables its one port at once ("if the selected
//! aggregator is of join individuals (partner_system is NULL), enable their ports"),
//! with no aggregate wait. The bond then sends and receives on that port only, as
//! active-backup does: frames on the other ports are dropped
//! (`bond_should_deliver_exact_match` for an inactive slave).

use super::hash::{linux_xmit_hash, HashPolicy};
use super::params::{ParamKind, ParamSpec, Params};
use super::registry::{BuildContext, SchedulerInfo};
use super::{BondView, FlowHeaders, LinkId, PacketInfo, Pick, Receive, Scheduler};
use crate::error::Result;
use crate::time::SimTime;

/// Registry entry.
pub const INFO: SchedulerInfo = SchedulerInfo {
    name: "802.3ad",
    aliases: &["lacp", "4"],
    summary: "Linux 802.3ad (LACP): hash over the active aggregator's links (ad_select, min_links)",
    params: &[
        super::balance_xor::XMIT_HASH_POLICY,
        ParamSpec {
            name: "ad_select",
            kind: ParamKind::Choice(&["stable", "bandwidth", "count"]),
            default: "stable",
            help: "how the active aggregator is chosen",
        },
        ParamSpec {
            name: "min_links",
            kind: ParamKind::Int { min: 0, max: 4096 },
            default: "0",
            help: "fewest active links for the bond to carry traffic (0 and 1 are the same)",
        },
    ],
    build,
};

/// LACP's wait before a (re)joining link distributes traffic (`AD_AGGREGATE_WAIT_TIME`).
pub const AGGREGATE_WAIT: SimTime = SimTime(2_000_000_000);

/// Runs of the state machines from a port's restart (`AD_PORT_BEGIN`, at the first run after
/// its carrier's verdict) to collecting/distributing: DETACHED, then WAITING for 20 runs
/// (`AD_AGGREGATE_WAIT_TIME`), ATTACHED at the 21st, collecting/distributing at the next.
pub const REJOIN_RUNS: u64 = 22;

/// When a port restarted by a link coming back at `at` (the bond's: its monitor's verdict; an
/// LACP partner's: the link's return) distributes again: [`REJOIN_RUNS`] runs after the first
/// run at or after `at`.
pub fn rejoins_at(at: SimTime) -> SimTime {
    crate::lacpdu::tick_at_or_after(at.0) + SimTime(REJOIN_RUNS * crate::lacpdu::TICK.0)
}

#[cfg(test)]
const REJOIN: SimTime = SimTime(REJOIN_RUNS * crate::lacpdu::TICK.0);

/// How long a port whose `current_while` ran out stays `EXPIRED` (selected) before it is
/// `DEFAULTED` (`AD_SHORT_TIMEOUT_TIME`, whatever `lacp_rate`).
pub const EXPIRED_FOR: SimTime = SimTime(3_000_000_000);

fn build(params: &Params, ctx: &BuildContext) -> Result<Box<dyn Scheduler>> {
    let min_links = params.int("min_links") as usize;
    if min_links > ctx.links.len() {
        // Linux takes it (slaves may come later), but this bond's links are all there is.
        return Err(crate::Error::at(
            "bond.min_links",
            format!(
                "is {min_links}, above the bond's {} links: the bond would never carry a packet (802.3ad \
                 asserts carrier only with min_links ports active, `bond_3ad_set_carrier`)",
                ctx.links.len()
            ),
        ));
    }
    // Aggregator = the links of one speed (its id is its first link), or without a partner each
    // link alone.
    let aggregator = if ctx.lacp_partner {
        ctx.links.iter().map(|l| ctx.links.iter().position(|m| m.rate_bps == l.rate_bps).expect("itself")).collect()
    } else {
        (0..ctx.links.len()).collect()
    };
    let mut lacp = Lacp {
        partnered: ctx.lacp_partner,
        policy: HashPolicy::from_name(params.choice("xmit_hash_policy")),
        select: params.choice("ad_select"),
        min_links,
        aggregator,
        ready_at: vec![SimTime::ZERO; ctx.links.len()],
        expired_at: vec![None; ctx.links.len()],
        up: vec![true; ctx.links.len()],
        nic_carrier: vec![true; ctx.links.len()],
        rate: ctx.links.iter().map(|l| l.rate_bps).collect(),
        active: None,
        usable: Vec::new(),
        carrier: true,
        refresh_at: None,
    };
    lacp.refresh(SimTime::ZERO);
    Ok(Box::new(lacp))
}

/// State of `802.3ad`.
pub struct Lacp {
    /// The ports hear an LACP partner; without one each is an individual aggregator.
    partnered: bool,
    policy: HashPolicy,
    select: &'static str,
    min_links: usize,
    aggregator: Vec<usize>,
    ready_at: Vec<SimTime>,
    /// When a port left with its carrier on: its partner's LACPDUs timed out (`EXPIRED`).
    expired_at: Vec<Option<SimTime>>,
    up: Vec<bool>,
    /// Each port's NIC carrier: a port without it stays in its aggregator until the monitor's
    /// verdict but leaves the usable array at once (`bond_update_slave_arr` skips a slave that
    /// fails `bond_slave_can_tx`).
    nic_carrier: Vec<bool>,
    rate: Vec<f64>,
    active: Option<usize>,
    usable: Vec<LinkId>,
    carrier: bool,
    refresh_at: Option<SimTime>,
}

impl Lacp {
    /// Active links (up, whether or not yet distributing) of aggregator `agg`.
    fn active_ports(&self, agg: usize) -> usize {
        (0..self.up.len()).filter(|&l| self.aggregator[l] == agg && self.up[l]).count()
    }

    fn choose_aggregator(&self) -> Option<usize> {
        let mut aggs: Vec<usize> = self.aggregator.clone();
        aggs.dedup();
        aggs.sort_unstable();
        aggs.dedup();
        let score = |agg: usize| {
            let ports = self.active_ports(agg);
            let bandwidth = ports as f64 * self.rate[agg];
            (ports, bandwidth)
        };
        if self.select == "stable" {
            if let Some(current) = self.active {
                if self.active_ports(current) > 0 {
                    return Some(current);
                }
            }
        }
        // Ties keep the earlier best: the current aggregator, then the lowest id.
        let mut best = self.active.filter(|&a| self.active_ports(a) > 0);
        for agg in aggs {
            let (ports, bandwidth) = score(agg);
            if ports == 0 {
                continue;
            }
            best = match best {
                None => Some(agg),
                Some(b) => {
                    let (b_ports, b_bandwidth) = score(b);
                    let better = match self.select {
                        "count" => ports > b_ports || (ports == b_ports && bandwidth > b_bandwidth),
                        _ => bandwidth > b_bandwidth,
                    };
                    Some(if better { agg } else { b })
                }
            };
        }
        best
    }

    /// Rebuilds the usable array at `now` (`bond_update_slave_arr`).
    fn refresh(&mut self, now: SimTime) {
        self.active = self.choose_aggregator();
        self.refresh_at = None;
        self.usable.clear();
        let Some(agg) = self.active else {
            self.carrier = false;
            return;
        };
        for l in 0..self.up.len() {
            if self.aggregator[l] != agg || !self.up[l] || !self.nic_carrier[l] {
                continue;
            }
            if self.ready_at[l] <= now {
                self.usable.push(l);
            } else {
                self.refresh_at = Some(self.refresh_at.map_or(self.ready_at[l], |t: SimTime| t.min(self.ready_at[l])));
            }
        }
        self.carrier = self.active_ports(agg) >= self.min_links.max(1);
    }
}

impl Scheduler for Lacp {
    fn skips_updelay(&self, _link: LinkId, bond: &BondView) -> bool {
        // `usable_slaves && usable_slaves->count == 0`: the active aggregator's distributing ports
        // (one whose aggregate wait ended by now joins at the next refresh), whether or not
        // `min_links` keeps the bond's carrier off (`bond_update_slave_arr` does not read it).
        // With no active aggregator (every port down) `bond_update_slave_arr` resets the array
        // to NULL ("No active aggragator means it's not safe to use the previous array"): no skip.
        self.active.is_some() && self.usable.is_empty() && self.refresh_at.is_none_or(|t| t > bond.now)
    }

    fn reads_link_load(&self) -> bool {
        false
    }

    fn pick(&mut self, packet: &PacketInfo, bond: &BondView) -> Pick {
        if self.refresh_at.is_some_and(|t| bond.now >= t) {
            self.refresh(bond.now);
        }
        if !self.carrier || self.usable.is_empty() {
            return Pick::Drop;
        }
        let hash = linux_xmit_hash(self.policy, packet.headers);
        Pick::Link(self.usable[hash as usize % self.usable.len()])
    }

    fn on_link_change(&mut self, link: LinkId, bond: &BondView) {
        self.up[link] = bond.links[link].up;
        if !self.up[link] {
            // A verdict down with the carrier on is LACP's (miimon's follows a carrier loss).
            self.expired_at[link] = bond.links[link].carrier.then_some(bond.now);
        } else if self.partnered {
            self.ready_at[link] = match self.expired_at[link] {
                // LACPDUs back while EXPIRED: still selected and attached.
                Some(t) if bond.now <= t + EXPIRED_FOR => bond.now,
                // Back from DEFAULTED: selected again, then the aggregate wait.
                Some(_) => bond.now + AGGREGATE_WAIT,
                // The carrier's return: BEGIN at the next run, then 22 runs.
                None => rejoins_at(bond.now),
            };
        }
        self.refresh(bond.now);
    }

    fn on_carrier_change(&mut self, link: LinkId, bond: &BondView) {
        self.nic_carrier[link] = bond.links[link].carrier;
        self.refresh(bond.now);
    }

    fn rx_link(&mut self, _headers: &FlowHeaders, _bond: &BondView) -> Option<LinkId> {
        // Without a partner the active aggregator's one port (its id is the link's).
        self.active.filter(|_| !self.partnered)
    }

    fn receive(&self) -> Receive {
        if self.partnered {
            Receive::AnySlave
        } else {
            Receive::ActiveSlave
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::{build, build_with_partner, headers, links, packet};

    #[test]
    fn min_links_above_the_bonds_links_is_refused_naming_both() {
        let ctx = crate::BuildContext {
            links: (0..2).map(|i| crate::LinkInfo { name: format!("link{i}"), rate_bps: 1e9 }).collect(),
            seed: 1,
            lacp_partner: true,
        };
        let resolved = crate::registry::resolve("802.3ad[min_links=3]", &Default::default()).unwrap();
        let e = resolved.build(&ctx).err().expect("refused").to_string();
        assert!(e.starts_with("bond.min_links: is 3, above the bond's 2 links"), "{e}");
        assert!(crate::registry::resolve("802.3ad[min_links=2]", &Default::default()).unwrap().build(&ctx).is_ok());
    }
    use crate::time::SimTime;
    use crate::{BondView, LinkView, Pick, Receive, Scheduler};

    fn pick(s: &mut dyn Scheduler, view: &[LinkView], now: SimTime, port: u16) -> Pick {
        let h = headers(3, port);
        s.pick(&packet(&h), &BondView { now, links: view })
    }

    /// The picks of 200 flows (client ports 30000 on) at `now`: the links in use.
    fn used(s: &mut dyn Scheduler, view: &[LinkView], now: SimTime) -> std::collections::HashSet<Pick> {
        (0..200).map(|p| pick(s, view, now, 30000 + p)).collect()
    }

    /// miimon's verdict on `link` after its carrier went (or came back).
    fn change(s: &mut dyn Scheduler, view: &mut [LinkView], now: SimTime, link: usize, up: bool) {
        view[link].carrier = up;
        lacp_change(s, view, now, link, up);
    }

    /// A verdict on `link` with its carrier on (LACP's: its partner's LACPDUs stopped or returned).
    fn lacp_change(s: &mut dyn Scheduler, view: &mut [LinkView], now: SimTime, link: usize, up: bool) {
        view[link].up = up;
        s.on_link_change(link, &BondView { now, links: view });
    }

    #[test]
    fn uses_only_the_largest_aggregator() {
        let mut view = links(3);
        view[2].rate_bps = 100e6; // a Fast Ethernet link forms its own aggregator
        let mut lacp = build("802.3ad[xmit_hash_policy=layer3+4]", &view);
        assert_eq!(used(lacp.as_mut(), &view, SimTime::ZERO), [Pick::Link(0), Pick::Link(1)].into_iter().collect());
    }

    #[test]
    fn without_an_lacp_partner_each_port_is_alone_and_one_carries_everything() {
        // `ad_port_selection_logic` joins a port to an aggregator only if that has a partner:
        // partnerless, every port is its own aggregator and the active one's port is enabled at
        // once (`ad_agg_selection_logic`, "join individuals"), with no aggregate wait.
        let mut view = links(3);
        let mut lacp = build_with_partner("802.3ad[xmit_hash_policy=layer3+4]", &view, false);
        assert_eq!(used(lacp.as_mut(), &view, SimTime::ZERO), [Pick::Link(0)].into_iter().collect());
        assert_eq!(lacp.receive(), Receive::ActiveSlave, "frames on the inactive ports are dropped");
        let h = headers(3, 1);
        assert_eq!(lacp.rx_link(&h, &BondView { now: SimTime::ZERO, links: &view }), Some(0));
        change(lacp.as_mut(), &mut view, SimTime(10), 0, false);
        assert_eq!(used(lacp.as_mut(), &view, SimTime(11)), [Pick::Link(1)].into_iter().collect(), "no 2 s wait");
        assert_eq!(lacp.rx_link(&h, &BondView { now: SimTime(11), links: &view }), Some(1));
        // `stable` keeps the active partnerless aggregator while it has a port up.
        change(lacp.as_mut(), &mut view, SimTime(20), 0, true);
        assert_eq!(used(lacp.as_mut(), &view, SimTime(21)), [Pick::Link(1)].into_iter().collect());
        // `bandwidth` takes the fastest port alone; with a partner its own aggregator (one 10G
        // port) also beats two 1G ones.
        let mut view = links(3);
        view[2].rate_bps = 10e9;
        let mut lacp = build_with_partner("802.3ad[ad_select=bandwidth]", &view, false);
        assert_eq!(used(lacp.as_mut(), &view, SimTime::ZERO), [Pick::Link(2)].into_iter().collect());
        // With a partner the ports of one speed aggregate and every port receives.
        let lacp = build_with_partner("802.3ad", &links(2), true);
        assert_eq!(lacp.receive(), Receive::AnySlave);
    }

    #[test]
    fn updelay_is_skipped_while_no_port_distributes() {
        // `usable_slaves->count == 0` counts the active aggregator's distributing ports: a port
        // in its aggregate wait does not make the bond usable.
        let mut view = links(2);
        let mut lacp = build("802.3ad", &view);
        change(lacp.as_mut(), &mut view, SimTime(10), 0, false);
        change(lacp.as_mut(), &mut view, SimTime(20), 1, false);
        let back = SimTime(10_000_000_000);
        change(lacp.as_mut(), &mut view, back, 1, true); // restarting its LACP machines
        let soon = back + SimTime(500_000_000);
        assert!(lacp.skips_updelay(0, &BondView { now: soon, links: &view }));
        let after = back + super::REJOIN;
        assert!(!lacp.skips_updelay(0, &BondView { now: after, links: &view }), "link 1 distributes from then on");
    }

    #[test]
    fn with_every_port_down_the_updelay_is_not_skipped() {
        let mut view = links(2);
        let mut lacp = build("802.3ad", &view);
        change(lacp.as_mut(), &mut view, SimTime(10), 0, false);
        assert!(!lacp.skips_updelay(0, &BondView { now: SimTime(15), links: &view }), "link 1 distributes");
        change(lacp.as_mut(), &mut view, SimTime(20), 1, false);
        assert!(!lacp.skips_updelay(0, &BondView { now: SimTime(30), links: &view }), "no active aggregator");
    }

    #[test]
    fn without_a_partner_a_returning_port_carries_at_once_with_one_it_waits() {
        // Both ports down, link 0 back: partnerless its own aggregator is enabled at once
        // (`ad_agg_selection_logic`); with a partner it waits out AD_AGGREGATE_WAIT_TIME.
        for (partner, first) in [(false, Pick::Link(0)), (true, Pick::Drop)] {
            let mut view = links(2);
            let mut lacp = build_with_partner("802.3ad", &view, partner);
            change(lacp.as_mut(), &mut view, SimTime(10), 0, false);
            change(lacp.as_mut(), &mut view, SimTime(20), 1, false);
            let back = SimTime(1_000_000_000);
            change(lacp.as_mut(), &mut view, back, 0, true);
            assert_eq!(pick(lacp.as_mut(), &view, back, 40000), first, "partner: {partner}");
            assert_eq!(pick(lacp.as_mut(), &view, back + super::REJOIN, 40000), Pick::Link(0));
        }
    }

    #[test]
    fn a_port_whose_lacpdus_return_before_it_is_defaulted_rejoins_at_once() {
        // LACP takes link 1 out with its carrier on (its partner's LACPDUs timed out: EXPIRED).
        // A LACPDU within 3 s puts it back at once; one after 3 s (DEFAULTED, unselected) means
        // selection again and the 2 s aggregate wait. A carrier loss always means the wait.
        let s = |x: f64| SimTime::from_secs_f64(x);
        for (back, wait) in [(2.9, false), (3.0, false), (3.1, true)] {
            let mut view = links(2);
            let mut lacp = build("802.3ad[xmit_hash_policy=layer3+4]", &view);
            lacp_change(lacp.as_mut(), &mut view, s(10.0), 1, false);
            lacp_change(lacp.as_mut(), &mut view, s(10.0 + back), 1, true);
            assert_eq!(
                used(lacp.as_mut(), &view, s(10.0 + back)).len(),
                if wait { 1 } else { 2 },
                "back after {back} s"
            );
            assert_eq!(used(lacp.as_mut(), &view, s(10.0 + back + 2.0)).len(), 2);
        }
        let mut view = links(2);
        let mut lacp = build("802.3ad[xmit_hash_policy=layer3+4]", &view);
        change(lacp.as_mut(), &mut view, s(10.0), 1, false);
        change(lacp.as_mut(), &mut view, s(10.5), 1, true);
        assert_eq!(used(lacp.as_mut(), &view, s(10.5)).len(), 1, "after a carrier loss: BEGIN, the wait");
    }

    #[test]
    fn below_min_links_a_returning_link_still_waits_its_updelay_while_another_distributes() {
        // `ignore_updelay` needs an empty usable array; min_links turns the bond's carrier off but
        // leaves the surviving port in the array.
        let mut view = links(2);
        let mut lacp = build("802.3ad[min_links=2]", &view);
        change(lacp.as_mut(), &mut view, SimTime(10), 1, false);
        assert_eq!(pick(lacp.as_mut(), &view, SimTime(11), 40000), Pick::Drop, "below min_links");
        assert!(!lacp.skips_updelay(1, &BondView { now: SimTime(20), links: &view }));
    }

    #[test]
    fn rejoining_link_waits_for_lacp_and_min_links_turns_carrier_off() {
        let mut view = links(2);
        let mut lacp = build("802.3ad[xmit_hash_policy=layer3+4,min_links=2]", &view);
        assert!(matches!(pick(lacp.as_mut(), &view, SimTime::ZERO, 40000), Pick::Link(_)));
        change(lacp.as_mut(), &mut view, SimTime(10), 1, false);
        assert_eq!(pick(lacp.as_mut(), &view, SimTime(11), 40000), Pick::Drop, "below min_links");
        let back = SimTime(1_000_000_000);
        change(lacp.as_mut(), &mut view, back, 1, true);
        // Carrier is back (2 active ports), but link 1 is not distributing yet.
        assert_eq!(used(lacp.as_mut(), &view, back), [Pick::Link(0)].into_iter().collect());
        // BEGIN at the run at 1.0 s, WAITING from 1.1 s for 20 runs, ATTACHED at 3.1 s,
        // collecting/distributing at 3.2 s: not yet at 3.1 s.
        assert_eq!(used(lacp.as_mut(), &view, back + SimTime(2_100_000_000)).len(), 1);
        assert_eq!(used(lacp.as_mut(), &view, back + super::REJOIN).len(), 2);
        // A verdict between two runs: BEGIN at the next one.
        let mut view = links(2);
        let mut lacp = build("802.3ad[xmit_hash_policy=layer3+4]", &view);
        change(lacp.as_mut(), &mut view, SimTime(10), 1, false);
        change(lacp.as_mut(), &mut view, SimTime(1_030_000_000), 1, true);
        assert_eq!(used(lacp.as_mut(), &view, SimTime(3_290_000_000)).len(), 1);
        assert_eq!(used(lacp.as_mut(), &view, SimTime(3_300_000_000)).len(), 2);
    }
}
