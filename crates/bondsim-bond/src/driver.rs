//! The bond driver: the glue around a [`Scheduler`] that Linux's bonding driver is made of
//! besides its xmit policy. It holds the scheduler and the bond's view of its links, the link
//! monitors (miimon, the ARP monitor, 802.3ad's LACPDU verdicts), the carrier each NIC reports,
//! and the receive link of every flow, and it applies a monitor's verdict as the driver does.
//!
//! Sans-IO like the schedulers: it touches no event queue and no link. Its host (the
//! simulator's world, the emulator's fabric) feeds it carrier changes, commits and ticks,
//! schedules the commits it returns, refreshes the load fields of [`Bond::views`] from its
//! own links, and carries out the [`Notice`]s a verdict leaves (a switch to teach, peers to
//! notify), which concern what lies outside the bond.

use crate::arpmon::{ArpMode, ArpMonitor};
use crate::monitor::{Commit, Monitor};
use crate::registry::{BuildContext, Resolved};
use crate::time::SimTime;
use crate::{BondView, FlowHeaders, LinkId, LinkView, Receive, Result, Scheduler};

/// The ARP monitor and the number of targets it probes.
pub type Arp = Option<(ArpMonitor, u32)>;

/// What the bond did that its host must carry out beyond the bond, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notice {
    /// balance-alb told the client of `flow` its receive slave (an ARP reply sent on that slave
    /// from its address, `rlb_arp_xmit`, `rlb_update_client`): an unaware switch learns it there.
    ClientTaught { flow: usize, slave: LinkId },
    /// active-backup's active slave is now `port`: the bond notifies its peers there
    /// (gratuitous ARPs, `bond_change_active_slave` sets `send_peer_notif`).
    NotifyPeers { port: LinkId },
    /// balance-tlb/-alb's active slave is now `slave`: it takes the bond's MAC address from the
    /// slave that held it (`bond_alb_handle_active_change`), and the bond teaches the switch.
    ActiveMac { slave: LinkId },
}

/// The bond: scheduler, monitors, the NICs' carrier and the flows' receive links.
pub struct Bond {
    /// The mode or packet scheduler.
    pub scheduler: Box<dyn Scheduler>,
    /// The scheduler's label (its name and non-default parameters).
    pub label: String,
    /// The mode's registered name (the bond's receive rules depend on it).
    pub mode: &'static str,
    /// miimon (or teamd's ethtool watch).
    pub monitor: Monitor,
    /// The ARP monitor (`bond.arp_interval`, teamd's `arp_ping`) and the number of targets it probes.
    pub arp: Arp,
    /// The bond's view of each link, what the scheduler decides from. The host keeps its load
    /// fields (queue, idle time, slowdown) up to date; the bond its `up` and `carrier`.
    pub views: Vec<LinkView>,
    /// Per link: the carrier its NIC reports (what the monitors read, `netif_carrier_ok`).
    pub nic_carrier: Vec<bool>,
    /// Per link: why 802.3ad keeps it out of its aggregator (lost LACPDUs, per direction; 0 = in).
    lacp_out: Vec<u32>,
    /// Per flow: its headers (seen from the server).
    pub headers: Vec<FlowHeaders>,
    /// Per flow: the link its client sends to the server on, where the mode decides it.
    pub rx_links: Vec<Option<LinkId>>,
    /// Per flow: it arrived, and the mode was asked its receive link.
    rx_asked: Vec<bool>,
    /// Whether the mode keeps a MAC address per slave ([`Scheduler::own_slave_macs`]), and the
    /// active slave the bond's address last moved to.
    own_macs: bool,
    mac_active: Option<LinkId>,
    /// The active slave the bond last notified its peers of (active-backup).
    notified_active: Option<LinkId>,
}

impl Bond {
    /// The bond of mode `resolved` built with `ctx`, its monitors, its links as seen at the
    /// start (`views`) and its flows' `headers` (more may come, [`Bond::add_flow`]).
    pub fn new(
        resolved: &Resolved,
        ctx: &BuildContext,
        monitor: Monitor,
        arp: Arp,
        views: Vec<LinkView>,
        headers: Vec<FlowHeaders>,
    ) -> Result<Bond> {
        let scheduler = resolved.build(ctx)?;
        let links = views.len();
        let flows = headers.len();
        Ok(Bond {
            own_macs: scheduler.own_slave_macs(),
            scheduler,
            label: resolved.label(),
            mode: resolved.info.name,
            monitor,
            arp,
            views,
            nic_carrier: vec![true; links],
            lacp_out: vec![0; links],
            headers,
            rx_links: vec![None; flows],
            rx_asked: vec![false; flows],
            mac_active: None,
            notified_active: None,
        })
    }

    /// Whether each slave keeps a MAC address of its own ([`Scheduler::own_slave_macs`]).
    pub fn own_macs(&self) -> bool {
        self.own_macs
    }

    /// The bond's view at `now`.
    #[inline(always)]
    pub fn view(&self, now: SimTime) -> BondView<'_> {
        BondView { now, links: &self.views }
    }

    /// A new flow of `headers`; returns its number.
    pub fn add_flow(&mut self, headers: FlowHeaders) -> usize {
        self.headers.push(headers);
        self.rx_links.push(None);
        self.rx_asked.push(false);
        self.headers.len() - 1
    }

    /// `flow` starts: the mode is asked where its client's packets come back
    /// ([`Scheduler::rx_link`]); balance-alb teaches the client its slave.
    pub fn flow_arrived(&mut self, now: SimTime, flow: usize, out: &mut Vec<Notice>) {
        self.rx_links[flow] = self.scheduler.rx_link(&self.headers[flow], &BondView { now, links: &self.views });
        self.rx_asked[flow] = true;
        self.taught_client(flow, out);
    }

    /// The bond's active slave (`curr_active_slave`: the mode's receive link), where it has one.
    pub fn active_slave(&mut self, now: SimTime) -> Option<LinkId> {
        let headers = self.headers.first()?;
        self.scheduler.rx_link(headers, &BondView { now, links: &self.views })
    }

    /// active-backup: the active slave the bond's peers know of at the start.
    pub fn start_notified(&mut self, now: SimTime) {
        if self.mode == "active-backup" && !self.headers.is_empty() {
            self.notified_active = self.active_slave(now);
        }
    }

    /// The active slave the bond last notified its peers of (active-backup).
    pub fn notified(&self) -> Option<LinkId> {
        self.notified_active
    }

    /// The scheduler's periodic work; returns when it runs next, if it does.
    pub fn tick(&mut self, now: SimTime) -> Option<SimTime> {
        self.scheduler.on_tick(&BondView { now, links: &self.views });
        self.scheduler.tick_interval().map(|every| now + every)
    }

    /// Link `id`'s NIC reports its carrier `up` (`netif_carrier_on`/`off`): what the bond's
    /// miimon reads from now on; returns the monitor's commits to schedule, each for its link.
    /// The bond hears of it at once too (`NETDEV_CHANGE`, an urgent linkwatch event for a
    /// bond's slave, `linkwatch_urgent_event`): every mode but active-backup stops sending on
    /// a link without carrier before the monitor's verdict ([`LinkView::can_tx`]).
    pub fn nic_carrier(&mut self, now: SimTime, id: LinkId, up: bool) -> impl Iterator<Item = (LinkId, Commit)> {
        self.nic_carrier[id] = up;
        let skip_updelay = self.scheduler.skips_updelay(id, &BondView { now, links: &self.views });
        let mut commits = [None, None];
        for (slot, commit) in commits.iter_mut().zip(self.monitor.carrier_changed(id, now, up, skip_updelay)) {
            *slot = Some(commit);
        }
        // teamd's arp_ping watch enables the port's user linkup (`team_set_port_user_linkup_enabled`):
        // the team driver's `team_port_txable` then reads teamd's verdict, not the carrier.
        if !self.arp.as_ref().is_some_and(|(a, _)| a.mode() == ArpMode::TeamdArpPing) {
            self.views[id].carrier = up;
            self.scheduler.on_carrier_change(id, &BondView { now, links: &self.views });
        }
        commits.into_iter().flatten()
    }

    /// The monitor commits its verdict on link `id` (`generation`: its countdown); returns
    /// whether it changed (then the host applies the bond's verdict, [`Bond::verdict`]).
    pub fn commit(&mut self, id: LinkId, generation: u32) -> bool {
        self.monitor.commit(id, generation, self.nic_carrier[id])
    }

    /// 802.3ad: link `id`'s LACPDUs stopped (`leaves`) or came back; returns whether the link
    /// is out of the aggregator now.
    pub fn lacp(&mut self, id: LinkId, leaves: bool) -> bool {
        if leaves {
            self.lacp_out[id] += 1;
        } else {
            self.lacp_out[id] -= 1;
        }
        self.lacp_out[id] > 0
    }

    /// The bond's view of link `id` is every monitor's verdict at once: miimon's, 802.3ad's
    /// (LACPDUs) and the ARP monitor's. Returns the new verdict if it changed (set in the view);
    /// the host then refreshes the link's view and calls [`Bond::link_changed`].
    pub fn verdict(&mut self, id: LinkId) -> Option<bool> {
        let up = self.monitor.is_up(id) && self.lacp_out[id] == 0 && self.arp.as_ref().is_none_or(|(a, _)| a.is_up(id));
        if self.views[id].up == up {
            return None;
        }
        self.views[id].up = up;
        Some(up)
    }

    /// After a verdict on link `id` changed: the scheduler hears of it, the receive links
    /// follow, the peers and the switch are told ([`Notice`]s in `out`). When the last slave
    /// up went down, one waiting out its updelay may be made up at once: returned, for the
    /// host to apply its verdict in turn.
    pub fn link_changed(&mut self, now: SimTime, id: LinkId, out: &mut Vec<Notice>) -> Option<LinkId> {
        self.scheduler.on_link_change(id, &BondView { now, links: &self.views });
        self.follow_active_slave(now, out);
        self.notify_peers(now, out);
        self.follow_active_mac(out);
        if self.views[id].up {
            return None;
        }
        self.monitor.promote_if_none_up(self.mode, &self.views, now)
    }

    /// A bond that receives on its active slave only ([`Receive::ActiveSlave`]: active-backup,
    /// balance-tlb, whose peers learn the bond's MAC there): after the bond changes it, a
    /// LAG-aware switch sends the bond's frames to the new one — Linux's bond takes frames in on
    /// the active slave only (`bond_should_deliver_exact_match`, drivers/net/bonding/bond_main.c);
    /// a failure that keeps the carrier, a silent port, would otherwise keep receiving them.
    /// balance-alb's clients follow its RLB table ([`Receive::PerClient`]); the other modes'
    /// receive link is the switch's hash.
    fn follow_active_slave(&mut self, now: SimTime, out: &mut Vec<Notice>) {
        match self.scheduler.receive() {
            Receive::ActiveSlave => {
                let active = self.active_slave(now);
                // Every flow's (one not yet arrived is set again when it arrives: `flow_arrived`).
                self.rx_links.fill(active);
            }
            Receive::PerClient => {
                // balance-alb: the link change moved clients in the RLB table (`rlb_clear_slave`
                // off a failed link, `rlb_rebalance` over all when one is back) and the bond's
                // ARP updates (`rlb_update_rx_clients`) move their traffic; the updates' own
                // delay (the 100 ms ALB tick) is not modelled. Flows not yet arrived ask at arrival;
                // one left without a link (every link down) is placed again.
                for flow in 0..self.rx_links.len() {
                    if self.rx_asked[flow] {
                        let bond = BondView { now, links: &self.views };
                        self.rx_links[flow] = self.scheduler.rx_link(&self.headers[flow], &bond);
                        self.taught_client(flow, out);
                    }
                }
            }
            Receive::AnySlave => {}
        }
    }

    /// balance-alb tells a client its receive slave by an ARP reply sent on that slave from its
    /// address (`rlb_arp_xmit`, `rlb_update_client`), if the slave can send.
    fn taught_client(&self, flow: usize, out: &mut Vec<Notice>) {
        if !self.own_macs || self.scheduler.receive() != Receive::PerClient {
            return;
        }
        if let Some(slave) = self.rx_links[flow].filter(|&l| self.views[l].can_tx()) {
            out.push(Notice::ClientTaught { flow, slave });
        }
    }

    /// After an active-backup failover the bond notifies its peers on the new active
    /// slave (`bond_change_active_slave` sets `send_peer_notif`; `bond_should_notify_peers`
    /// lets one gratuitous ARP out per `peer_notif_delay`).
    fn notify_peers(&mut self, now: SimTime, out: &mut Vec<Notice>) {
        if self.mode != "active-backup" || self.headers.is_empty() {
            return;
        }
        let active = self.active_slave(now);
        if active == self.notified_active {
            return;
        }
        self.notified_active = active;
        if let Some(port) = active {
            out.push(Notice::NotifyPeers { port });
        }
    }

    /// balance-tlb/-alb: a new active slave takes the bond's MAC address from the slave that
    /// held it (`bond_alb_handle_active_change`). With no active slave (`bond_alb_handle_active_change`
    /// with none) the addresses stay.
    pub fn follow_active_mac(&mut self, out: &mut Vec<Notice>) {
        if !self.own_macs {
            return;
        }
        let active = self.scheduler.active_link();
        if active == self.mac_active {
            return;
        }
        self.mac_active = active;
        if let Some(slave) = active {
            out.push(Notice::ActiveMac { slave });
        }
    }
}
