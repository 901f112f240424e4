//! The switch between the bond's links and the clients, sans-IO like the
//! schedulers: it decides (which port a frame for the bond leaves by, whether a
//! frame from the bond is forwarded), `sim` carries out.
//!
//! * **LAG-aware** (`lag = "static" | "lacp"`, the default): the bond's ports are one
//!   bridge port (IEEE 802.1AX-2014 §6: the aggregator sits below the MAC relay, so
//!   learning and spanning tree see one port); frames for the bond leave by the
//!   switch's own hash (`switch.hash`, computed as Linux's `bond_xmit_hash`) over the
//!   members, the ports with carrier. A member that comes back joins at once, or with
//!   `lag = "lacp"` once the switch's LACP has restarted it (`lacp::rejoins_at`: 2.2–2.3 s,
//!   the bond's side alike). With `lag = "lacp"` a member also leaves while LACPDUs are lost on it (the bond's
//!   `lacp_rate` timeout, `fault::SilentPorts::lacp_outages`): when either side's
//!   `current_while` timer expires the partner information is defaulted, the port is
//!   unselected and its Mux machine detaches it from the aggregator, on both ends
//!   (IEEE 802.1AX-2014 §6.4.12 Receive machine, §6.4.14 Selection, §6.4.15 Mux).
//! * **Unaware** (`lag = "none"`): each port is a bridge port. The switch learns the
//!   source MAC of every frame the bond sends on the port it arrived on (IEEE
//!   802.1Q-2018 §8.7 learning process), so a MAC seen on two ports moves between
//!   them (`switch_mac_moves`: balance-rr sends the bond's MAC on every slave, the
//!   entry flaps about once per packet pair); entries age out after `ageing_s`
//!   (802.1D-2004 §7.9.2, Table 7-5: 300 s) and are removed when their port loses
//!   its link (switches do, e.g. Alaxala AX8300S configuration guide §2.1.3:
//!   "entries learned on a port are deleted when the port links down"). A frame
//!   for an unknown MAC is flooded to every forwarding port (§8.8.1).
//! * **Spanning tree** (only without a LAG): a port whose link comes up and is not
//!   an edge port discards for `forward_delay_s` (STP: listening; RSTP: discarding,
//!   `fdWhile`, 802.1D-2004 §17.29.3), then learns for `forward_delay_s` (learns
//!   source MACs, forwards nothing: §7.4), then forwards. A host sends no BPDUs, so
//!   RSTP's proposal/agreement never shortens this; with `auto_edge` the port
//!   becomes an edge port after the edge delay (MigrateTime, 3 s on a point-to-point
//!   link: §17.20.4, §17.25) and forwards. Edge ports (`edge_ports`) forward at once.
//!   Frames the bond sends into a port that does not forward are dropped there
//!   (cause `switch_port`, per link in `drops_switch_port`).

use rustc_hash::FxHashMap;

use crate::bond::flow::{FlowHeaders, Mac};
use crate::bond::hash::{self, HashPolicy};
use crate::bond::Receive;
use crate::scenario::{self, Lag, Stp};
use crate::time::SimTime;

/// RSTP's MigrateTime, the edge delay of a point-to-point port (IEEE 802.1D-2004 §17.20.4, Table 17-1).
const MIGRATE_TIME: SimTime = SimTime(3_000_000_000);

/// A port's state for the relay (IEEE 802.1D-2004 §7.4; STP's blocking and listening are discarding).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PortState {
    /// Neither learns nor forwards (no carrier, or listening / discarding after it came up).
    Discarding,
    /// Learns source MACs, forwards nothing.
    Learning,
    /// Learns and forwards.
    Forwarding,
}

/// Where the switch sends a frame for the bond (unaware switch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Egress {
    /// The port the destination was learned on.
    Port(usize),
    /// Unknown destination: every forwarding port.
    Flood,
    /// Known on a port that does not forward: dropped at the switch.
    Nowhere,
}

/// What the switch counted over a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SwitchStats {
    /// Times a learned MAC moved to another port.
    pub mac_moves: u64,
    /// Frames towards the bond flooded (unknown destination), once per frame.
    pub flooded: u64,
    /// Per port: frames from the bond dropped because the port did not forward (spanning tree).
    pub drops_port: Vec<u64>,
    /// Frames towards the bond dropped at the switch: learned on a port that does not forward,
    /// or nowhere to flood to.
    pub drops_to_bond: u64,
    /// Frames towards the bond that reached it on a slave it does not receive on (dropped by the bond).
    pub drops_inactive_slave: u64,
    /// Gratuitous ARPs the bond sent after an active-backup failover (`bond.num_grat_arp`).
    pub grat_arps: u64,
}

/// The switch: its configuration, each port's link, the MAC table.
#[derive(Debug, Clone)]
pub struct Switch {
    lag: Lag,
    hash: HashPolicy,
    stp: Stp,
    forward_delay: SimTime,
    auto_edge: bool,
    edge: Vec<bool>,
    ageing: SimTime,
    carrier: Vec<bool>,
    /// Ports LACP keeps out of the aggregator (`lag = "lacp"`: LACPDUs lost).
    lacp_out: Vec<bool>,
    /// When each port's link last came up (`None`: before the run; the port is in its steady state).
    up_at: Vec<Option<SimTime>>,
    /// MAC → (port, last frame seen from it).
    table: FxHashMap<Mac, (usize, SimTime)>,
    /// Gratuitous ARPs the bond will send (when, port, MAC), in time order; each teaches the
    /// switch when the switch next decides anything at or after its time (no event needed).
    announced: std::collections::VecDeque<(SimTime, usize, Mac)>,
    /// What it counted.
    pub stats: SwitchStats,
}

impl Switch {
    /// A switch with `ports` ports (one per link), all with carrier, the MAC table empty;
    /// `lag` is the scenario's ([`scenario::Scenario::lag`]: `spec.lag` or the mode's default).
    pub fn new(spec: &scenario::Switch, lag: Lag, ports: usize) -> Switch {
        let mut edge = vec![false; ports];
        for &p in &spec.edge_ports {
            edge[p] = true;
        }
        Switch {
            lag,
            hash: HashPolicy::from_name(&spec.hash),
            stp: spec.stp,
            forward_delay: SimTime::from_secs_f64(spec.forward_delay_s),
            auto_edge: spec.auto_edge,
            edge,
            ageing: SimTime::from_secs_f64(spec.ageing_s),
            carrier: vec![true; ports],
            lacp_out: vec![false; ports],
            up_at: vec![None; ports],
            table: FxHashMap::default(),
            announced: std::collections::VecDeque::new(),
            stats: SwitchStats { drops_port: vec![0; ports], ..SwitchStats::default() },
        }
    }

    /// Whether the bond's ports are aggregated (`lag = "static" | "lacp"`).
    pub fn aware(&self) -> bool {
        self.lag != Lag::Unaware
    }

    /// Port `port`'s link went (`up = false`) or came back.
    pub fn carrier(&mut self, port: usize, up: bool, now: SimTime) {
        self.carrier[port] = up;
        if up {
            self.up_at[port] = Some(now);
        } else {
            // The port's learned entries go with its link (see the module's note).
            self.table.retain(|_, (p, _)| *p != port);
        }
    }

    /// LACP took port `port` out of the aggregator (`out`) or put it back: with `lag = "lacp"`
    /// the switch stops (or resumes) sending the bond's frames on it; a static LAG runs no
    /// LACP and keeps it.
    pub fn lacp(&mut self, port: usize, out: bool) {
        if self.lag == Lag::Lacp {
            self.lacp_out[port] = out;
        }
    }

    /// Port `port`'s state at `now`.
    pub fn state(&self, port: usize, now: SimTime) -> PortState {
        if !self.carrier[port] {
            return PortState::Discarding;
        }
        let Some(up) = self.up_at[port] else { return PortState::Forwarding };
        if self.aware() || self.stp == Stp::Off || self.edge[port] {
            return PortState::Forwarding;
        }
        let since = now.saturating_sub(up);
        if self.auto_edge && since >= MIGRATE_TIME {
            return PortState::Forwarding;
        }
        if since < self.forward_delay {
            PortState::Discarding
        } else if since < self.forward_delay + self.forward_delay {
            PortState::Learning
        } else {
            PortState::Forwarding
        }
    }

    /// A frame from the bond with source MAC `src` reaches port `port`: the switch learns
    /// where `src` is (unless the port discards) and says whether it forwards the frame.
    pub fn ingress(&mut self, port: usize, src: Mac, now: SimTime) -> bool {
        if self.aware() {
            return true;
        }
        self.catch_up(now);
        let state = self.state(port, now);
        if state != PortState::Discarding {
            self.learn(port, src, now);
        }
        if state != PortState::Forwarding {
            self.stats.drops_port[port] += 1;
            return false;
        }
        true
    }

    /// The switch sees `mac` on `port` (a frame's source, or a gratuitous ARP).
    pub fn learn(&mut self, port: usize, mac: Mac, now: SimTime) {
        let ageing = self.ageing;
        let entry = self.table.entry(mac).or_insert((port, now));
        if entry.0 != port && now.saturating_sub(entry.1) <= ageing {
            self.stats.mac_moves += 1;
        }
        *entry = (port, now);
    }

    /// The port a LAG-aware switch sends a frame of the flow `reversed` (seen from the
    /// client) to the bond on at `now`: its hash over the members (with carrier, and kept by
    /// LACP). With LACP a port whose link came back distributes only once the switch's own
    /// LACP has restarted it (`bond::lacp::rejoins_at`: a partner running Linux's state machines
    /// restarts the port as the bond's side does, from the link's return).
    pub fn lag_port(&self, reversed: &FlowHeaders, now: SimTime) -> Option<usize> {
        let rejoined =
            |p: usize| self.lag != Lag::Lacp || self.up_at[p].is_none_or(|up| now >= crate::bond::lacp::rejoins_at(up));
        let member = |p: &usize| self.carrier[*p] && !self.lacp_out[*p] && rejoined(*p);
        let n = (0..self.carrier.len()).filter(member).count();
        if n == 0 {
            return None;
        }
        (0..self.carrier.len()).filter(member).nth(hash::linux_xmit_hash(self.hash, reversed) as usize % n)
    }

    /// Where an unaware switch sends a frame for `dst` at `now` (an aged entry is forgotten).
    pub fn egress(&mut self, dst: Mac, now: SimTime) -> Egress {
        self.catch_up(now);
        match self.table.get(&dst).copied() {
            Some((_, seen)) if now.saturating_sub(seen) > self.ageing => {
                self.table.remove(&dst);
                Egress::Flood
            }
            Some((port, _)) if self.state(port, now) == PortState::Forwarding => Egress::Port(port),
            Some(_) => Egress::Nowhere,
            None => Egress::Flood,
        }
    }

    /// The ports a flooded frame leaves by at `now`.
    pub fn forwarding_ports(&self, now: SimTime) -> impl Iterator<Item = usize> + '_ {
        (0..self.carrier.len()).filter(move |&p| self.state(p, now) == PortState::Forwarding)
    }

    /// The bond announces `mac` on `port` with `count` gratuitous ARPs, the first at `now`, then
    /// one every `every` (they replace any it had yet to send: Linux restarts `send_peer_notif`
    /// at each change of the active slave). Each is a frame from the bond: learned unless its
    /// port discards.
    pub fn announce(&mut self, port: usize, mac: Mac, now: SimTime, count: u32, every: SimTime) {
        self.stats.grat_arps += u64::from(count);
        if self.aware() {
            return;
        }
        self.announced.clear();
        let mut at = now;
        for _ in 0..count {
            self.announced.push_back((at, port, mac));
            at += every;
        }
        self.catch_up(now);
    }

    /// Learns from the gratuitous ARPs sent by `now`, at their times.
    fn catch_up(&mut self, now: SimTime) {
        while let Some(&(at, port, mac)) = self.announced.front().filter(|a| a.0 <= now) {
            self.announced.pop_front();
            if self.state(port, at) != PortState::Discarding {
                self.learn(port, mac, at);
            }
        }
    }

    /// A frame the bond sends on `port` only for the switch to learn `mac` from (balance-tlb's
    /// and -alb's learning packets, `alb_send_learning_packets`): learned unless the port discards.
    pub fn learning_frame(&mut self, port: usize, mac: Mac, now: SimTime) {
        if self.aware() {
            return;
        }
        self.catch_up(now);
        if self.state(port, now) != PortState::Discarding {
            self.learn(port, mac, now);
        }
    }

    /// The port `mac` is learned on, if any.
    pub fn learned(&self, mac: Mac) -> Option<usize> {
        self.table.get(&mac).map(|&(p, _)| p)
    }
}

/// Whether the bond passes a frame arriving on slave `port` up to its stack, given how it
/// takes frames in (`Scheduler::receive`), the mode's receive link `active`
/// (`Scheduler::rx_link`) and whether the frame is `addressed` to that slave's NIC: a frame
/// on an inactive slave is not delivered to the bond, except unicast in balance-alb
/// ([`Receive`] cites `bond_should_deliver_exact_match`), whose slaves each take only their
/// own address (`alb_set_slave_mac_addr` programs it into the NIC; every other mode's slaves
/// all hold the bond's, [`crate::network::SlaveMacs`]).
pub fn bond_accepts(receive: Receive, active: Option<usize>, port: usize, addressed: bool) -> bool {
    match receive {
        Receive::AnySlave => true,
        Receive::PerClient => addressed,
        Receive::ActiveSlave => active.is_none_or(|a| a == port),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOND: Mac = [0, 0x15, 0x17, 0xb0, 0x26, 0xad];

    fn secs(s: f64) -> SimTime {
        SimTime::from_secs_f64(s)
    }

    fn switch(spec: serde_json::Value, ports: usize) -> Switch {
        let spec: scenario::Switch = serde_json::from_value(spec).unwrap();
        Switch::new(&spec, spec.lag.unwrap_or(Lag::Static), ports)
    }

    #[test]
    fn the_default_switch_is_a_lag_hashing_layer2_3_over_the_ports_with_carrier() {
        let mut s = switch(serde_json::json!({}), 3);
        assert!(s.aware());
        // A client's flow, seen from the client (as the switch sees its frames to the bond).
        let network = scenario::Network::default();
        let clients = crate::network::Clients::new(&network, 1, 1);
        let request = crate::workload::Request { id: 0, client: 0, file_bytes: 1, arrival: SimTime::ZERO };
        let h = crate::network::flow_headers(&network, &clients, &[request], 1)[0].reversed();
        let hashed = hash::linux_xmit_hash(HashPolicy::Layer23, &h) as usize;
        assert_eq!(s.lag_port(&h, secs(0.0)), Some(hashed % 3));
        s.carrier(hashed % 3, false, secs(1.0));
        let left: Vec<usize> = (0..3).filter(|&p| p != hashed % 3).collect();
        assert_eq!(s.lag_port(&h, secs(0.0)), Some(left[hashed % 2]));
        // A LAG forwards whatever arrives on a member, learns nothing per port.
        assert!(s.ingress(0, BOND, secs(1.0)));
        assert_eq!(s.learned(BOND), None);
    }

    #[test]
    fn an_lacp_switch_distributes_to_a_returning_port_only_once_lacp_restarted_it() {
        // Link back at 5.03 s: the switch's state machines restart the port at 5.1 s and it
        // distributes 22 runs later, at 7.3 s; a static LAG takes it back at once.
        let network = scenario::Network::default();
        let clients = crate::network::Clients::new(&network, 64, 1);
        let requests: Vec<_> = (0..64)
            .map(|id| crate::workload::Request { id, client: id, file_bytes: 1, arrival: SimTime::ZERO })
            .collect();
        let flows = crate::network::flow_headers(&network, &clients, &requests, 1);
        let uses_port_1 = |s: &Switch, at: f64| flows.iter().any(|h| s.lag_port(&h.reversed(), secs(at)) == Some(1));
        for (lag, back_at) in [("lacp", 7.3), ("static", 5.03)] {
            let mut s = switch(serde_json::json!({"lag": lag}), 2);
            assert!(uses_port_1(&s, 0.0), "{lag}: both ports at the start");
            s.carrier(1, false, secs(4.0));
            s.carrier(1, true, secs(5.03));
            assert_eq!(uses_port_1(&s, 7.29), lag == "static", "{lag}: at 7.29 s");
            assert!(uses_port_1(&s, back_at), "{lag}: from {back_at}");
        }
        assert_eq!(crate::bond::lacp::rejoins_at(secs(5.1)), secs(7.3), "a link up on a run's instant restarts then");
    }

    #[test]
    fn an_unaware_switch_learns_moves_floods_and_ages() {
        let mut s = switch(serde_json::json!({"lag": "none", "ageing_s": 300.0}), 2);
        assert_eq!(s.egress(BOND, secs(0.0)), Egress::Flood);
        // balance-rr: the bond's MAC on port 0, 1, 0, 1, ...: every frame after the first moves it.
        for i in 0..10 {
            assert!(s.ingress(i % 2, BOND, secs(i as f64 * 1e-3)));
        }
        assert_eq!(s.stats.mac_moves, 9);
        assert_eq!(s.egress(BOND, secs(0.01)), Egress::Port(1));
        // Silent for longer than the ageing time: forgotten, flooded; a re-learn is no move.
        assert_eq!(s.egress(BOND, secs(0.009 + 300.001)), Egress::Flood);
        s.learn(0, BOND, secs(301.0));
        assert_eq!((s.learned(BOND), s.stats.mac_moves), (Some(0), 9));
        // The port's link goes: its entries go with it.
        s.carrier(0, false, secs(302.0));
        assert_eq!(s.egress(BOND, secs(302.0)), Egress::Flood);
        assert_eq!(s.forwarding_ports(secs(302.0)).collect::<Vec<_>>(), vec![1]);
    }

    #[test]
    fn a_recovered_non_edge_port_discards_then_learns_for_a_forward_delay_each() {
        let fd = 15.0;
        let mut s = switch(serde_json::json!({"lag": "none", "stp": "stp", "edge_ports": [1]}), 2);
        for port in 0..2 {
            s.carrier(port, false, secs(5.0));
            s.carrier(port, true, secs(10.0));
        }
        let state = |s: &Switch, port, t| s.state(port, secs(t));
        assert_eq!(state(&s, 0, 10.0 + fd - 1e-3), PortState::Discarding);
        assert_eq!(state(&s, 0, 10.0 + fd), PortState::Learning);
        assert_eq!(state(&s, 0, 10.0 + 2.0 * fd - 1e-3), PortState::Learning);
        assert_eq!(state(&s, 0, 10.0 + 2.0 * fd), PortState::Forwarding);
        // The edge port forwards at once.
        assert_eq!(state(&s, 1, 10.0), PortState::Forwarding);
        // Discarding: dropped and not learned; learning: dropped but learned.
        assert!(!s.ingress(0, BOND, secs(11.0)));
        assert_eq!(s.learned(BOND), None);
        assert!(!s.ingress(0, BOND, secs(26.0)));
        assert_eq!(s.learned(BOND), Some(0));
        assert_eq!(s.stats.drops_port, vec![2, 0]);
        // Learned on a port that does not forward yet: frames for it go nowhere.
        assert_eq!(s.egress(BOND, secs(26.0)), Egress::Nowhere);
        assert!(s.ingress(0, BOND, secs(40.0)));
        assert_eq!(s.egress(BOND, secs(40.0)), Egress::Port(0));
    }

    #[test]
    fn gratuitous_arps_teach_the_switch_at_their_times() {
        let mut s = switch(serde_json::json!({"lag": "none"}), 2);
        s.learn(1, BOND, secs(1.0));
        // Three ARPs on port 0 from 2 s, one every 100 ms: the first moves the entry at once.
        s.announce(0, BOND, secs(2.0), 3, secs(0.1));
        assert_eq!((s.learned(BOND), s.stats.mac_moves, s.stats.grat_arps), (Some(0), 1, 3));
        // A frame still draining from port 1 moves it back; the next ARP (2.1 s) moves it again.
        assert!(s.ingress(1, BOND, secs(2.05)));
        assert_eq!(s.egress(BOND, secs(2.1)), Egress::Port(0));
        assert_eq!(s.stats.mac_moves, 3);
        // A LAG counts them and learns nothing.
        let mut lag = switch(serde_json::json!({}), 2);
        lag.announce(0, BOND, secs(2.0), 2, secs(0.1));
        assert_eq!((lag.learned(BOND), lag.stats.grat_arps), (None, 2));
    }

    #[test]
    fn rstp_auto_edge_forwards_after_the_migrate_time() {
        let mut s = switch(serde_json::json!({"lag": "none", "stp": "rstp", "auto_edge": true}), 1);
        s.carrier(0, false, secs(5.0));
        s.carrier(0, true, secs(10.0));
        assert_eq!(s.state(0, secs(12.999)), PortState::Discarding);
        assert_eq!(s.state(0, secs(13.0)), PortState::Forwarding);
    }

    #[test]
    fn the_bond_takes_frames_only_on_its_active_slave_where_it_has_one() {
        assert!(bond_accepts(Receive::AnySlave, None, 1, true));
        assert!(bond_accepts(Receive::ActiveSlave, Some(1), 1, true));
        assert!(!bond_accepts(Receive::ActiveSlave, Some(1), 0, true));
        // balance-alb: any slave, but only the frames addressed to its own NIC.
        assert!(bond_accepts(Receive::PerClient, Some(0), 1, true));
        assert!(!bond_accepts(Receive::PerClient, Some(1), 1, false));
    }

    #[test]
    fn learning_frames_teach_a_port_unless_it_discards_and_a_lag_ignores_them() {
        let mut s = switch(serde_json::json!({"lag": "none"}), 2);
        s.learning_frame(1, BOND, secs(1.0));
        assert_eq!(s.learned(BOND), Some(1));
        s.carrier(0, false, secs(2.0));
        s.learning_frame(0, BOND, secs(2.5));
        assert_eq!((s.learned(BOND), s.stats.mac_moves), (Some(1), 0));
        let mut lag = switch(serde_json::json!({"lag": "static"}), 2);
        lag.learning_frame(1, BOND, secs(1.0));
        assert_eq!(lag.learned(BOND), None);
    }
}
