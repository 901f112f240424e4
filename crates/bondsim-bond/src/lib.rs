//! bondsim-bond: the bond. A [`Scheduler`] picks the link(s) for each packet
//! from the bond's view of its links.
//!
//! This crate knows nothing of the simulator: schedulers are pure decisions
//! over a [`BondView`] and never touch an event queue, so the same code drives
//! bondsim's simulator and a real-time data path (an emulator supplies its own
//! [`LinkView`]s). A scheduler is built from a mode and its options
//! ([`registry::resolve`], [`BuildContext`]); per-flow state is keyed by the
//! 5-tuple and expires ([`flow::FlowTable`]). The link monitor
//! ([`monitor::Monitor`]) and every transmit hash ([`hash`]) live here too.
//!
//! Each scheduler lives in its own file and declares a [`SchedulerInfo`]
//! (name, parameters with defaults and help, constructor); [`registry`] lists
//! them all. Adding a scheduler is one file and one line in `registry::ALL`:
//!
//! ```
//! use bondsim_bond::{BondView, PacketInfo, Pick, Scheduler, SchedulerInfo};
//!
//! /// Sends everything on the link with the fewest queued bytes.
//! struct FewestBytes;
//!
//! impl Scheduler for FewestBytes {
//!     fn pick(&mut self, _packet: &PacketInfo, bond: &BondView) -> Pick {
//!         bond.usable().min_by_key(|&id| bond.links[id].queue_bytes).map_or(Pick::Drop, Pick::Link)
//!     }
//! }
//!
//! pub const INFO: SchedulerInfo = SchedulerInfo {
//!     name: "fewest-bytes",
//!     aliases: &[],
//!     summary: "link with the fewest queued bytes",
//!     params: &[],
//!     build: |_params, _ctx| Ok(Box::new(FewestBytes)),
//! };
//! # let _ = INFO;
//! ```

pub mod active_backup;
pub mod alb;
pub mod arpmon;
pub mod balance_xor;
pub mod broadcast;
pub mod driver;
pub mod drr_stripe;
pub mod earliest_finish;
pub mod error;
pub mod flow;
pub mod flowlet;
pub mod hash;
pub mod lacp;
pub mod lacpdu;
pub mod least_queue;
pub mod load_based;
pub mod monitor;
pub mod n_to_one;
pub mod null;
pub mod ovs;
pub mod params;
pub mod power_of_two;
pub mod registry;
pub mod rng;
pub mod round_robin;
pub mod teamd;
pub mod tlb;

pub use bondsim_time as time;
pub use error::{Error, Result, Warning};
pub use flow::{FlowHeaders, FlowKey, FlowTable};
pub use params::{ParamKind, ParamSpec, ParamValue, Params};
pub use registry::{BuildContext, LinkInfo, SchedulerInfo};

use crate::time::SimTime;

/// Position of a link in the bond (0-based, after `count` expansion).
pub type LinkId = usize;

/// Smallest IP packet an Ethernet frame carries (shorter ones are padded).
pub const MIN_ETHERNET_PAYLOAD: u32 = 46;

/// What the bond knows of one link when it decides.
///
/// `up`, `carrier`, the queue and the nominal speed are what a real bond knows too.
/// `idle_at_est` and `delay_est` are estimates: the simulator supplies its
/// links' exact figures, a real data path (the emulator) supplies its own
/// estimates (from the queue and the nominal rate, a measured delay).
#[derive(Debug, Clone, PartialEq)]
pub struct LinkView {
    /// Up as the bond's link monitor last saw it (miimon's, the ARP monitor's, 802.3ad's
    /// verdict: the kernel's `slave->link == BOND_LINK_UP`).
    pub up: bool,
    /// The NIC reports carrier (`netif_carrier_ok`, `carrier_latency_ms` after the wire
    /// changed): the kernel's `bond_slave_is_up`. A link the monitor still sees up but
    /// without carrier cannot send ([`LinkView::can_tx`]).
    pub carrier: bool,
    /// Packets waiting in (or being sent from) the link's transmit queue.
    pub queue_len_pkts: u32,
    /// Bytes (IP packets) waiting in the link's transmit queue.
    pub queue_bytes: u64,
    /// Nominal speed, bits per second (paced links: payload bits per period).
    pub rate_bps: f64,
    /// Bytes each frame adds on the wire (rate links; 0 for paced links).
    pub overhead_bytes: u32,
    /// Fixed time per packet: the period of a paced link, the per-frame cost of a rate link.
    pub per_packet: SimTime,
    /// True for the thesis's paced interface (one send per period, whatever the size).
    pub paced: bool,
    /// Estimate: when the link will have sent everything it holds (now, if idle).
    pub idle_at_est: SimTime,
    /// Estimate: one-way delay to the receiver.
    pub delay_est: SimTime,
    /// Estimate: the factor the link's send times are stretched by now (1 = nominal speed).
    pub slowdown_est: f64,
}

impl LinkView {
    /// Whether the bond may send on the link: the monitor sees it up and the NIC has
    /// carrier (the kernel's `bond_slave_can_tx`, `include/net/bonding.h`:
    /// `bond_slave_is_up(slave) && slave->link == BOND_LINK_UP && bond_is_active_slave(slave)`).
    /// balance-rr's walk, broadcast, the hash modes' usable array and tlb/alb's choice
    /// test it on every packet or at every carrier change; active-backup sends on its
    /// active slave whatever its carrier, until the monitor's verdict. (Under teamd's
    /// `arp_ping` the simulator leaves `carrier` true: the port's user linkup replaces it.)
    #[inline(always)]
    pub fn can_tx(&self) -> bool {
        self.up & self.carrier // (`&`: no branch in the per-link loops of lb and the like)
    }

    /// Speed in Mbit/s as the kernel's `slave->speed` holds it.
    pub fn speed_mbps(&self) -> u32 {
        (self.rate_bps / 1e6).round() as u32
    }

    /// Bytes on the wire for an IP packet of `l3_bytes`.
    pub fn wire_bytes(&self, l3_bytes: u32) -> u64 {
        u64::from(l3_bytes.max(MIN_ETHERNET_PAYLOAD)) + u64::from(self.overhead_bytes)
    }

    /// Time to put an IP packet of `l3_bytes` on the wire at the link's current speed.
    pub fn tx_time(&self, l3_bytes: u32) -> SimTime {
        let nominal = if self.paced {
            self.per_packet
        } else {
            self.per_packet + SimTime::from_secs_f64(self.wire_bytes(l3_bytes) as f64 * 8.0 / self.rate_bps)
        };
        nominal.scaled(self.slowdown_est)
    }

    /// When a packet of `l3_bytes` queued now would reach the receiver, if nothing changes (an estimate).
    pub fn arrival_if_sent(&self, now: SimTime, l3_bytes: u32) -> SimTime {
        self.idle_at_est.max(now) + self.tx_time(l3_bytes) + self.delay_est
    }
}

/// The bond's view of all its links at the moment of a decision.
#[derive(Debug, Clone, Copy)]
pub struct BondView<'a> {
    /// Current simulated time.
    pub now: SimTime,
    /// One entry per link, indexed by [`LinkId`].
    pub links: &'a [LinkView],
}

impl BondView<'_> {
    /// Ids of the links the bond may send on ([`LinkView::can_tx`]), in id order.
    pub fn usable(&self) -> impl Iterator<Item = LinkId> + '_ {
        self.links.iter().enumerate().filter(|(_, l)| l.can_tx()).map(|(id, _)| id)
    }

    /// Ids of the links the link monitor sees up, carrier or not, in id order (what
    /// active-backup chooses its active slave among: `bond_find_best_slave` tests
    /// `slave->link == BOND_LINK_UP` only).
    pub fn monitored_up(&self) -> impl Iterator<Item = LinkId> + '_ {
        self.links.iter().enumerate().filter(|(_, l)| l.up).map(|(id, _)| id)
    }

    /// The first usable link at or after `start`, wrapping around (the kernel's
    /// `bond_get_slave_by_id` walk, which tests `bond_slave_can_tx`).
    #[inline(always)]
    pub fn first_usable_from(&self, start: LinkId) -> Option<LinkId> {
        if self.links[start].can_tx() {
            return Some(start);
        }
        self.first_usable_after(start)
    }

    /// [`BondView::first_usable_from`] when `start` cannot send (kept out of the per-packet path).
    #[inline(never)]
    fn first_usable_after(&self, start: LinkId) -> Option<LinkId> {
        let n = self.links.len();
        (start + 1..n).chain(0..start).find(|&id| self.links[id].can_tx())
    }

    /// Ids of the usable links, in id order (the kernel's `usable_slaves` array).
    pub fn usable_ids(&self) -> Vec<LinkId> {
        self.usable().collect()
    }
}

/// The packet a scheduler is asked to place.
#[derive(Debug, Clone, Copy)]
pub struct PacketInfo<'a> {
    /// Payload bytes.
    pub bytes: u32,
    /// IP packet bytes (payload + IP and transport headers, + 4 with a VLAN tag).
    pub l3_bytes: u32,
    /// The flow's header fields (what hash policies read; `headers.key()` is its 5-tuple).
    pub headers: &'a FlowHeaders,
}

impl PacketInfo<'_> {
    /// Frame length as the kernel's `skb->len` at the bond (IP packet + 14-byte Ethernet header).
    pub fn frame_bytes(&self) -> u32 {
        self.l3_bytes + 14
    }
}

/// A scheduler's decision for one packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pick {
    /// Send on this link.
    Link(LinkId),
    /// Send a copy on every usable link (`broadcast`).
    All,
    /// No usable link: the packet is dropped.
    Drop,
}

/// Where a bond takes frames in: which of its slaves pass a frame up to the stack,
/// and so where a peer (the switch) must send the bond's traffic. Linux
/// `bond_handle_frame` → `bond_should_deliver_exact_match`
/// (drivers/net/bonding/bond_main.c): a frame on an inactive slave goes only to
/// handlers bound to that slave, except unicast in balance-alb; the modes with an
/// active slave mark the others inactive (`bond_set_slave_inactive_flags`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Receive {
    /// Every slave is active and takes frames in (balance-rr, balance-xor, broadcast,
    /// 802.3ad and the research schedulers).
    AnySlave,
    /// Only the active slave (`curr_active_slave`, [`Scheduler::rx_link`]) takes frames
    /// in, and the bond's MAC is learnt there (active-backup, balance-tlb).
    ActiveSlave,
    /// Each client is assigned a slave by ARP negotiation ([`Scheduler::rx_link`]),
    /// and unicast is taken in on every slave (balance-alb, `rlb_arp_xmit`).
    PerClient,
}

/// A bonding mode or packet scheduler: picks the link(s) for each packet.
///
/// Only [`Scheduler::pick`] is required; the hooks let a scheduler keep state
/// up to date (rebalancing timers, failover) without touching the event queue.
pub trait Scheduler: Send {
    /// Chooses where `packet` goes, given the bond's view of its links.
    fn pick(&mut self, packet: &PacketInfo, bond: &BondView) -> Pick;

    /// How often [`Scheduler::on_tick`] should run (never, by default).
    fn tick_interval(&self) -> Option<SimTime> {
        None
    }

    /// Periodic work (e.g. rebalancing), every [`Scheduler::tick_interval`].
    fn on_tick(&mut self, _bond: &BondView) {}

    /// The link monitor changed its verdict on `link` (`bond.links[link].up`).
    fn on_link_change(&mut self, _link: LinkId, _bond: &BondView) {}

    /// `link`'s NIC reported a carrier change (`bond.links[link].carrier`), the monitor's
    /// verdict unchanged. The kernel hears of it at once (`NETDEV_CHANGE`, an urgent
    /// linkwatch event for a bond's slave) and rebuilds the hash modes' usable array
    /// (`bond_slave_netdev_event` → `bond_update_slave_arr`, which skips a slave that
    /// cannot send); a scheduler that keeps such a list rebuilds it here. Schedulers that
    /// test [`LinkView::can_tx`] per packet need nothing.
    fn on_carrier_change(&mut self, _link: LinkId, _bond: &BondView) {}

    /// Whether miimon skips `updelay` for `link`, whose carrier is back now
    /// (`bond_miimon_inspect`'s `ignore_updelay`, Linux ≥ 5.13): active-backup when it has no
    /// active slave, the hash modes (balance-xor, 802.3ad, balance-tlb, balance-alb) when
    /// their usable array is empty; balance-rr and broadcast keep no such array and always
    /// wait. By default: when the monitor sees no other link up (active-backup's rule, and
    /// what this simulator's own schedulers and teamd's and OVS's modes keep).
    fn skips_updelay(&self, link: LinkId, bond: &BondView) -> bool {
        !bond.monitored_up().any(|l| l != link)
    }

    /// True if the receiver puts packets back in the order the bond sent them
    /// (a resequencing buffer, as striping protocols do).
    fn resequences(&self) -> bool {
        false
    }

    /// The link the client of a new flow (`headers`, seen from the server) sends
    /// to the server on, where the mode decides it (active-backup and
    /// balance-tlb: the active link; balance-alb: its receive load balancing).
    fn rx_link(&mut self, _headers: &FlowHeaders, _bond: &BondView) -> Option<LinkId> {
        None
    }

    /// Where the bond takes frames in ([`Receive`]; every slave, by default).
    fn receive(&self) -> Receive {
        Receive::AnySlave
    }

    /// Whether each slave keeps a MAC address of its own (balance-tlb and balance-alb:
    /// `bond_alb_init_slave` gives a slave back its permanent address, and `bond_do_alb_xmit`
    /// writes it as the source of every frame sent on a slave other than the active one, which
    /// holds the bond's). Elsewhere every slave takes the bond's address (`bond_enslave`), the
    /// default.
    fn own_slave_macs(&self) -> bool {
        false
    }

    /// The bond's active slave (`curr_active_slave`) where the mode keeps one apart from its
    /// receive links; asked only of modes with [`Scheduler::own_slave_macs`] (none by default).
    fn active_link(&self) -> Option<LinkId> {
        None
    }

    /// Whether any of its methods reads the links' load in the view: `queue_len_pkts`,
    /// `queue_bytes`, `idle_at_est`, `slowdown_est` (directly or through
    /// [`LinkView::tx_time`] and [`LinkView::arrival_if_sent`]). A scheduler that reads only
    /// which links are up and their fixed properties (round-robin, the hashes,
    /// active-backup; balance-tlb and -alb count the bytes they sent themselves) says
    /// `false`, and the simulator then leaves those fields as they were (it would refresh a
    /// link's at each of its queue changes, twice per packet). `true` by default; a test
    /// checks, for every registered scheduler, that the saying matches what moves its
    /// decisions.
    fn reads_link_load(&self) -> bool {
        true
    }
}

#[cfg(test)]
pub(crate) mod test_support {
    use super::*;
    use crate::flow::{FlowHeaders, ETH_P_IP};

    /// `n` idle, up links of 1 Gbit/s.
    pub fn links(n: usize) -> Vec<LinkView> {
        let idle = LinkView {
            up: true,
            carrier: true,
            queue_len_pkts: 0,
            queue_bytes: 0,
            rate_bps: 1e9,
            overhead_bytes: 38,
            per_packet: SimTime::ZERO,
            paced: false,
            idle_at_est: SimTime::ZERO,
            delay_est: SimTime::ZERO,
            slowdown_est: 1.0,
        };
        vec![idle; n]
    }

    /// Headers of a flow to client `client` with destination port `port`.
    pub fn headers(client: u8, port: u16) -> FlowHeaders {
        FlowHeaders {
            src_mac: [0, 0x15, 0x17, 0xb0, 0x26, 0xad],
            dst_mac: [2, 0, 0, 0, 0, client],
            src_ip: [10, 0, 0, 1],
            dst_ip: [10, 1, 0, client],
            src_port: 8000,
            dst_port: port,
            ip_proto: 6,
            vlan: None,
            ethertype: ETH_P_IP,
        }
    }

    /// A 1024-byte packet with headers `h`.
    pub fn packet(h: &FlowHeaders) -> PacketInfo<'_> {
        PacketInfo { bytes: 1024, l3_bytes: 1064, headers: h }
    }

    /// A scheduler built from `mode` (with brackets) for links like `view`'s.
    pub fn build(mode: &str, view: &[LinkView]) -> Box<dyn Scheduler> {
        build_with_partner(mode, view, true)
    }

    /// As [`build`], the switch answering LACP (`lacp_partner`) or not.
    pub fn build_with_partner(mode: &str, view: &[LinkView], lacp_partner: bool) -> Box<dyn Scheduler> {
        let ctx = BuildContext {
            links: view
                .iter()
                .enumerate()
                .map(|(i, l)| LinkInfo { name: format!("link{i}"), rate_bps: l.rate_bps })
                .collect(),
            seed: 1,
            lacp_partner,
        };
        registry::resolve(mode, &Default::default()).unwrap().build(&ctx).unwrap()
    }

    /// The links `scheduler` picks for `count` packets of one flow, queues unchanged.
    pub fn picks(scheduler: &mut dyn Scheduler, view: &[LinkView], count: u32) -> Vec<LinkId> {
        let h = headers(1, 40000);
        let bond = BondView { now: SimTime::ZERO, links: view };
        (0..count)
            .map(|_| match scheduler.pick(&packet(&h), &bond) {
                Pick::Link(id) => id,
                other => panic!("expected a link, got {other:?}"),
            })
            .collect()
    }
}

#[cfg(test)]
mod receive_tests {
    use super::test_support::{build, links};
    use super::Receive;

    /// `bond_should_deliver_exact_match`: the modes with an active slave take frames in there
    /// only, balance-alb takes unicast in on every slave by client, the others on any slave.
    #[test]
    fn each_mode_says_where_it_takes_frames_in_as_linux_does() {
        let view = links(2);
        for (mode, receive) in [
            ("active-backup", Receive::ActiveSlave),
            ("balance-tlb", Receive::ActiveSlave),
            ("balance-alb", Receive::PerClient),
            ("balance-rr", Receive::AnySlave),
            ("balance-xor", Receive::AnySlave),
            ("802.3ad", Receive::AnySlave),
            ("broadcast", Receive::AnySlave),
        ] {
            assert_eq!(build(mode, &view).receive(), receive, "{mode}");
        }
    }
}

#[cfg(test)]
mod link_load_tests {
    use rand::RngExt;

    use super::test_support::{build, headers, links};
    use super::*;
    use crate::registry::ALL;

    /// Everything `scheduler` decides over a run of calls (picks, receive links, after
    /// link changes and ticks), with the load fields of its view drawn from `load_seed` and
    /// everything else (which links are up, the packets, the time) the same for any seed.
    fn decisions(mode: &str, load_seed: u64) -> Vec<String> {
        let mut view = links(4);
        for (id, l) in view.iter_mut().enumerate() {
            l.rate_bps = [1e9, 1e9, 10e9, 100e6][id]; // fixed properties differ, but not by seed
        }
        let mut scheduler = build(mode, &view);
        let (mut fixed, mut load) = (rng::stream(7, "fixed"), rng::stream(load_seed, "load"));
        let mut out = Vec::new();
        let mut now = SimTime::ZERO;
        for step in 0..3000u32 {
            now += SimTime(1 + fixed.random_range(0..50_000u64));
            for l in view.iter_mut() {
                l.queue_len_pkts = load.random_range(0..200);
                l.queue_bytes = u64::from(l.queue_len_pkts) * load.random_range(60..1500);
                l.idle_at_est = now + SimTime(load.random_range(0..10_000_000));
                l.slowdown_est = load.random_range(1.0..5.0);
            }
            if step % 97 == 0 {
                let id = fixed.random_range(0..view.len());
                // Never all down for long: a link comes back when it is the last one up.
                view[id].up = !view[id].up || view.iter().filter(|l| l.up).count() == 1;
                scheduler.on_link_change(id, &BondView { now, links: &view });
            }
            let bond = BondView { now, links: &view };
            if scheduler.tick_interval().is_some() && step % 50 == 0 {
                scheduler.on_tick(&bond);
            }
            let h = headers(fixed.random_range(1..9), fixed.random_range(1024..65535));
            let bytes = fixed.random_range(40..1460);
            let packet = PacketInfo { bytes, l3_bytes: bytes + 40, headers: &h };
            out.push(format!("{:?}", scheduler.pick(&packet, &bond)));
            if step % 11 == 0 {
                out.push(format!("rx {:?}", scheduler.rx_link(&h, &bond)));
            }
        }
        out
    }

    /// A scheduler that says it does not read the links' load decides the same whatever the
    /// load fields hold (the simulator leaves them stale for it); one that says it does is
    /// moved by them (so the saying stays exact both ways).
    #[test]
    fn schedulers_that_say_they_ignore_link_load_do() {
        let mut ignoring = Vec::new();
        for info in ALL {
            let reads = build(info.name, &links(4)).reads_link_load();
            let first = decisions(info.name, 0);
            let same = (1..4).all(|seed| decisions(info.name, seed) == first);
            assert_eq!(reads, !same, "{}: reads_link_load() is {reads}", info.name);
            if !reads {
                ignoring.push(info.name);
            }
        }
        assert!(ignoring.contains(&"balance-rr") && ignoring.contains(&"balance-xor"), "{ignoring:?}");
    }
}

#[cfg(test)]
mod carrier_tests {
    use super::test_support::{build, headers, links};
    use super::*;
    use crate::registry::ALL;

    /// Where `scheduler` puts two packets of each of 64 flows: `Some(link)`, or `None` for a drop.
    fn spread(scheduler: &mut dyn Scheduler, view: &[LinkView]) -> Vec<Option<LinkId>> {
        let bond = BondView { now: SimTime::ZERO, links: view };
        let mut out = Vec::new();
        for flow in 0..64u16 {
            let h = headers((flow % 8) as u8 + 1, 40000 + flow);
            for _ in 0..2 {
                out.push(match scheduler.pick(&PacketInfo { bytes: 1024, l3_bytes: 1064, headers: &h }, &bond) {
                    Pick::Link(id) => Some(id),
                    Pick::Drop => None,
                    Pick::All => panic!("broadcast is placed by the simulator"),
                });
            }
        }
        out
    }

    /// The busiest link's NIC loses its carrier while the monitor still sees it up (its
    /// downdelay, or the miimon tick not yet come). The kernel's `bond_slave_can_tx` tests
    /// the carrier (`bond_slave_is_up`): balance-rr's walk skips the link, the hash modes'
    /// usable array is rebuilt at `NETDEV_CHANGE`, tlb/alb drop the packet of a bucket found on
    /// it and move the bucket; so do the research schedulers, modes of the same bond.
    /// Active-backup sends on its active slave until the verdict (`bond_xmit_activebackup`
    /// tests nothing), OVS and teamd's loadbalance runner on the members their own link
    /// watch enabled.
    #[test]
    fn a_link_without_carrier_is_left_before_the_monitors_verdict_by_every_mode_but_the_verdict_driven_ones() {
        let verdict_driven = ["active-backup", "ovs:balance-slb", "ovs:balance-tcp", "teamd:loadbalance"];
        let mut checked = Vec::new();
        for info in ALL.iter().filter(|i| i.name != "broadcast") {
            let mut view = links(3);
            let mut scheduler = build(info.name, &view);
            let before = spread(scheduler.as_mut(), &view);
            let busiest = (0..3).max_by_key(|&l| before.iter().filter(|&&p| p == Some(l)).count()).expect("3 links");
            view[busiest].carrier = false;
            scheduler.on_carrier_change(busiest, &BondView { now: SimTime::ZERO, links: &view });
            let after = spread(scheduler.as_mut(), &view);
            let name = info.name;
            if verdict_driven.contains(&name) {
                assert!(after.contains(&Some(busiest)), "{name}: left link {busiest} before the verdict: {after:?}");
                continue;
            }
            assert!(!after.contains(&Some(busiest)), "{name}: sent on link {busiest} without carrier: {after:?}");
            if name != "null" {
                // (`null` sends on one link only: it drops everything)
                assert!(after.iter().flatten().count() > after.len() / 2, "{name}: dropped the traffic: {after:?}");
            }
            view[busiest].carrier = true;
            scheduler.on_carrier_change(busiest, &BondView { now: SimTime::ZERO, links: &view });
            if ["balance-rr", "balance-xor", "802.3ad", "null"].contains(&name) {
                let back = spread(scheduler.as_mut(), &view);
                assert!(back.contains(&Some(busiest)), "{name}: carrier back, link {busiest} unused: {back:?}");
            }
            checked.push(name);
        }
        for mode in ["balance-rr", "balance-xor", "802.3ad", "balance-tlb", "balance-alb", "teamd:roundrobin", "lb"] {
            assert!(checked.contains(&mode), "{mode} not checked: {checked:?}");
        }
        // Active-backup keeps its active slave (link 0) through the carrier loss.
        let mut view = links(2);
        let mut ab = build("active-backup", &view);
        view[0].carrier = false;
        ab.on_carrier_change(0, &BondView { now: SimTime::ZERO, links: &view });
        assert!(spread(ab.as_mut(), &view).iter().all(|&l| l == Some(0)));
    }
}
