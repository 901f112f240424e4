//! `balance-alb`: balance-tlb's transmit balancing (buckets by the XOR of the
//! destination IP's bytes) plus receive load balancing (`bond_alb.c`, RLB).
//!
//! Receive balancing: the bond answers each client's ARP with the MAC of a
//! link chosen round-robin among the fastest usable links
//! (`__rlb_next_rx_slave`), so that client's traffic to the server arrives on
//! that link. The client table has 256 entries indexed by the XOR of the
//! client IP's bytes; a client whose entry is taken by another IP replaces it,
//! and the previous client falls back to the active link. When a link fails
//! its clients are reassigned; when one comes back all are reshuffled.

use super::active_backup::{PRIMARY, PRIMARY_RESELECT};
use super::params::Params;
use super::registry::{BuildContext, SchedulerInfo};
use super::tlb::{BucketOf, Tlb, REBALANCE, TLB_DYNAMIC_LB};
use super::{BondView, LinkId, PacketInfo, Pick, Receive, Scheduler};
use crate::error::Result;
use crate::flow::FlowHeaders;
use crate::time::SimTime;

/// Registry entry.
pub const INFO: SchedulerInfo = SchedulerInfo {
    name: "balance-alb",
    aliases: &["alb", "6"],
    summary: "Linux balance-alb: balance-tlb plus receive balancing by ARP (clients spread over links)",
    params: &[super::balance_xor::XMIT_HASH_POLICY, TLB_DYNAMIC_LB, REBALANCE, PRIMARY, PRIMARY_RESELECT],
    build,
};

/// Entries of the client table (`RLB_HASH_TABLE_SIZE`).
const RLB_ENTRIES: usize = 256;

fn build(params: &Params, ctx: &BuildContext) -> Result<Box<dyn Scheduler>> {
    Ok(Box::new(Alb {
        tlb: Tlb::new(params, ctx, BucketOf::DestinationIp)?,
        clients: vec![None; RLB_ENTRIES],
        used: Vec::new(),
        last_rx: None,
    }))
}

/// State of `balance-alb`.
pub struct Alb {
    tlb: Tlb,
    /// Per entry in use: the client's IP and its receive link (none while no link can take it:
    /// `rlb_clear_slave` leaves the entry assigned with `slave = NULL`).
    clients: Vec<Option<([u8; 4], Option<LinkId>)>>,
    /// The entries in use, in the order they were first taken (`rx_hashtbl_used_head`'s list,
    /// walked newest first: `rlb_choose_channel` puts a newly assigned entry at its head).
    used: Vec<usize>,
    last_rx: Option<LinkId>,
}

impl Alb {
    /// `__rlb_next_rx_slave`: round-robin after the last link handed out, preferring the fastest.
    fn next_rx_link(&mut self, bond: &BondView) -> Option<LinkId> {
        let mut before: Option<LinkId> = None;
        let mut after: Option<LinkId> = None;
        let mut found = false;
        for id in bond.usable() {
            let speed = bond.links[id].rate_bps;
            if !found {
                if before.is_none_or(|b| bond.links[b].rate_bps < speed) {
                    before = Some(id);
                }
            } else if after.is_none_or(|a| bond.links[a].rate_bps < speed) {
                after = Some(id);
            }
            if Some(id) == self.last_rx {
                found = true;
            }
        }
        let pick = match (after, before) {
            (Some(a), Some(b)) if bond.links[a].rate_bps < bond.links[b].rate_bps => Some(b),
            (Some(a), _) => Some(a),
            (None, b) => b,
        };
        if pick.is_some() {
            self.last_rx = pick;
        }
        pick
    }
}

impl Scheduler for Alb {
    fn skips_updelay(&self, _link: LinkId, bond: &BondView) -> bool {
        bond.usable().next().is_none() // `usable_slaves->count == 0`
    }

    fn reads_link_load(&self) -> bool {
        false
    }

    fn pick(&mut self, packet: &PacketInfo, bond: &BondView) -> Pick {
        self.tlb.pick(packet, bond)
    }

    fn tick_interval(&self) -> Option<SimTime> {
        self.tlb.tick_interval()
    }

    fn on_tick(&mut self, bond: &BondView) {
        self.tlb.on_tick(bond);
    }

    fn on_carrier_change(&mut self, link: LinkId, bond: &BondView) {
        // Transmit as tlb; the clients' receive links move at the monitor's verdict
        // (`rlb_clear_slave` runs from `bond_alb_handle_link_change`).
        self.tlb.on_carrier_change(link, bond);
    }

    fn on_link_change(&mut self, link: LinkId, bond: &BondView) {
        self.tlb.on_link_change(link, bond);
        let up = bond.links[link].up;
        for k in (0..self.used.len()).rev() {
            let i = self.used[k];
            let Some((ip, rx)) = self.clients[i] else { continue };
            // Link back: reshuffle every client (`rlb_rebalance`, those without a link too); link
            // gone: move only its clients (`rlb_clear_slave`).
            if up || rx == Some(link) {
                let new = self.next_rx_link(bond).or(self.tlb.active.active);
                self.clients[i] = Some((ip, new));
            }
        }
    }

    fn rx_link(&mut self, headers: &FlowHeaders, bond: &BondView) -> Option<LinkId> {
        let ip = headers.dst_ip;
        let index = usize::from(ip.iter().fold(0u8, |x, b| x ^ b));
        match self.clients[index] {
            Some((known, Some(link))) if known == ip => Some(link),
            taken => {
                // A new client, one replacing another in the same entry, or a known one without a
                // link (`rlb_choose_channel`): an entry already in use keeps its place in the list.
                let link = self.next_rx_link(bond)?;
                if taken.is_none() {
                    self.used.push(index);
                }
                self.clients[index] = Some((ip, Some(link)));
                Some(link)
            }
        }
    }

    fn receive(&self) -> Receive {
        Receive::PerClient
    }

    fn own_slave_macs(&self) -> bool {
        true
    }

    fn active_link(&self) -> Option<LinkId> {
        self.tlb.active.active
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::{build, headers, links};
    use crate::time::SimTime;
    use crate::{BondView, LinkView, Scheduler};

    fn rx(s: &mut dyn Scheduler, view: &[LinkView], client: u8) -> Option<usize> {
        s.rx_link(&headers(client, 40000), &BondView { now: SimTime::ZERO, links: view })
    }

    #[test]
    fn clients_are_spread_round_robin_over_the_fastest_links() {
        let mut view = links(3);
        view[2].rate_bps = 100e6;
        let mut alb = build("balance-alb", &view);
        let got: Vec<_> = (1..=5).map(|c| rx(alb.as_mut(), &view, c)).collect();
        assert_eq!(got, [Some(0), Some(1), Some(0), Some(1), Some(0)], "the slow link gets none");
        assert_eq!(rx(alb.as_mut(), &view, 2), Some(1), "a known client keeps its link");
    }

    #[test]
    fn tlb_receives_on_the_active_link_only() {
        let view = links(3);
        let mut tlb = build("balance-tlb", &view);
        assert!((1..=5).all(|c| rx(tlb.as_mut(), &view, c) == Some(0)));
    }

    #[test]
    fn a_link_back_reshuffles_the_clients_newest_first() {
        // Clients 1, 4, 2, 7 take table entries 10, 15, 9, 12 (the XOR of their IPs' bytes) in
        // that order; `rlb_clear_slave` and `rlb_rebalance` walk the entries in use newest first
        // (7, 2, 4, 1), neither oldest first nor by index.
        let mut view = links(2);
        let mut alb = build("balance-alb", &view);
        let clients = [1, 4, 2, 7];
        let got: Vec<_> = clients.iter().map(|&c| rx(alb.as_mut(), &view, c)).collect();
        assert_eq!(got, [Some(0), Some(1), Some(0), Some(1)]);
        for up in [false, true] {
            view[1].up = up;
            alb.on_link_change(1, &BondView { now: SimTime::ZERO, links: &view });
        }
        // After link 0 was handed out last: 7 → link 1, 2 → link 0, 4 → link 1, 1 → link 0
        // (oldest first would give 1, 0, 1, 0; by index 0, 0, 1, 1).
        let got: Vec<_> = clients.iter().map(|&c| rx(alb.as_mut(), &view, c)).collect();
        assert_eq!(got, [Some(0), Some(1), Some(0), Some(1)]);
    }

    #[test]
    fn a_client_left_without_a_link_keeps_its_entry_and_is_placed_once_at_a_return() {
        // All three links fail, then come back one by one: client 1's and 4's entries stay in the
        // list once each (`rlb_clear_slave` sets `slave = NULL`, `rlb_choose_channel` never links an
        // assigned entry again), so each return reassigns each client once, newest first.
        let mut view = links(3);
        let mut alb = build("balance-alb", &view);
        assert_eq!((rx(alb.as_mut(), &view, 1), rx(alb.as_mut(), &view, 4)), (Some(0), Some(1)));
        for l in 0..3 {
            view[l].up = false;
            alb.on_link_change(l, &BondView { now: SimTime::ZERO, links: &view });
        }
        assert_eq!(rx(alb.as_mut(), &view, 1), None);
        for l in 0..3 {
            view[l].up = true;
            alb.on_link_change(l, &BondView { now: SimTime::ZERO, links: &view });
            rx(alb.as_mut(), &view, 1);
            rx(alb.as_mut(), &view, 4);
        }
        // The last return (link 2) hands out, after link 0 (the last one before it), link 1 to
        // client 4 and link 2 to client 1.
        assert_eq!((rx(alb.as_mut(), &view, 4), rx(alb.as_mut(), &view, 1)), (Some(1), Some(2)));
    }

    #[test]
    fn failed_links_clients_move() {
        let mut view = links(2);
        let mut alb = build("alb", &view);
        assert_eq!(rx(alb.as_mut(), &view, 1), Some(0));
        assert_eq!(rx(alb.as_mut(), &view, 2), Some(1));
        view[1].up = false;
        alb.on_link_change(1, &BondView { now: SimTime::ZERO, links: &view });
        assert_eq!(rx(alb.as_mut(), &view, 2), Some(0));
    }
}
