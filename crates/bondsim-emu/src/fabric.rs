//! The emulated bond and its links, sans-IO: real IP packets in, each with the time
//! it is due at the far end out. The real-time loop (`crate::run`) feeds it what it
//! reads from the TUN devices and writes what it hands back when the time comes; the
//! tests drive it with made-up times.
//!
//! Nothing here is new model code. The bond is the simulator's [`Bond`] driver, built as
//! the simulator builds it (`registry::resolve(mode, options)`, `bondsim_core::sim`): its
//! scheduler, its link monitor ([`Monitor`]: miimon, updelay, downdelay) fed by the
//! emulated carrier, its verdicts and its flows' receive links. Every link is
//! the simulator's own [`RateLink`] (rate, frame overhead, per-frame cost, drop-tail
//! `txqueuelen` queue, delay, jitter, random loss from its named stream, slowdowns) and
//! its reverse direction is [`RateLink::mirror`], and a client's
//! packet takes the link the simulator's peer picks (the mode's `rx_link`, else the
//! switch's own hash over its members, `World::peer_link`). Only the
//! clock differs: events run when their time has come on the host's monotonic clock.
//!
//! MPTCP (`sender.kind = "mptcp"`): no bond places a packet. Each client has an address per
//! subflow's link ([`subflow_ips`]), and a packet takes the link of its client-side address,
//! both ways (server to client: the destination; client to server: the source), as the
//! model's `World::dispatch` and `World::peer_link` put subflow `i` on link `i`
//! (`World::subflows`); a link without carrier drops what it is given, both ways.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use bondsim_core::bond::driver::Bond;
use bondsim_core::bond::monitor::{self, Monitor};
use bondsim_core::bond::FlowKey;
use bondsim_core::bond::{registry, BondView, PacketInfo, Pick};
use bondsim_core::fault;
use bondsim_core::host::{Admit, HostCounts, RxHost};
use bondsim_core::link::{Enqueued, LinkStats, RateLink, Sent};
use bondsim_core::network::{self, Clients, FlowHeaders, ETH_P_IP};
use bondsim_core::packet::Packet;
use bondsim_core::scenario::{LinkModel, Scenario};
use bondsim_core::sim::bond_context;
use bondsim_core::switch::Switch;
use bondsim_core::time::SimTime;
use bondsim_core::{Error, Result};
use rustc_hash::FxHashMap;

/// The network whose addresses give MPTCP's extra subflows their client addresses:
/// 198.18.0.0/15, RFC 2544's benchmarking range (no client's or server's default address is in it).
pub const SUBFLOW_NET: [u8; 2] = [198, 18];

/// MPTCP: each client's address on each subflow's link, `[client][link]`, for the
/// `scenario.mptcp_subflows()` first links (empty for another sender). Link 0 carries the
/// initial subflow from the client's own address (`clients.ips`); link `i` >= 1 the subflow
/// from 198.18.`i`.`client + 1` ([`SUBFLOW_NET`]), an address the client's namespace holds on
/// its TUN device with a `subflow` endpoint (`crate::realtime`). Refused, naming the field,
/// when one of them is a client's or the server's own address.
pub fn subflow_ips(scenario: &Scenario, clients: &Clients) -> Result<Vec<Vec<[u8; 4]>>> {
    let subflows = scenario.mptcp_subflows() as usize;
    if subflows == 0 {
        return Ok(Vec::new());
    }
    let server = network::parse_ip("network.server_ip", &scenario.network.server_ip)?;
    let plan: Vec<Vec<[u8; 4]>> = clients
        .ips
        .iter()
        .enumerate()
        .map(|(c, &own)| {
            std::iter::once(own)
                .chain((1..subflows).map(|i| [SUBFLOW_NET[0], SUBFLOW_NET[1], i as u8, (c + 1) as u8]))
                .collect()
        })
        .collect();
    for (c, addrs) in plan.iter().enumerate() {
        for (link, a) in addrs.iter().enumerate().skip(1) {
            let taken = if *a == server {
                Some("network.server_ip")
            } else if clients.ips.contains(a) {
                Some("network.client_ips")
            } else {
                None
            };
            if let Some(field) = taken {
                return Err(Error::scenario(
                    field,
                    format!(
                        "the emulator gives client {c}'s MPTCP subflow on link {link} the address {} \
                         (198.18.LINK.CLIENT+1), and {field} holds it: choose another address there",
                        std::net::Ipv4Addr::from(*a)
                    ),
                ));
            }
        }
    }
    Ok(plan)
}

/// Where a packet is going.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dest {
    /// The server's TUN device.
    Server,
    /// Client `n`'s TUN device.
    Client(usize),
}

/// Each client's NIC under `[host]`: the model's receiving host with no CPU cost and no GRO (the
/// kernel's GRO merges behind the TUN device, `crate::clients`); none without `[host]`.
fn client_nics(scenario: &Scenario, clients: usize) -> Vec<RxHost> {
    if scenario.host.is_off() {
        return Vec::new();
    }
    let nic = bondsim_core::scenario::Host { gro: false, ..scenario.host.clone() };
    vec![RxHost::new(&nic, None); clients]
}

/// A packet to write to `dest`'s TUN device at `due`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// When the emulated link delivers it (the model's time).
    pub due: SimTime,
    /// Whose TUN device it goes to.
    pub dest: Dest,
    /// The IP packet.
    pub bytes: Vec<u8>,
    /// The forward link that carried it (None: a reverse link, to the server).
    pub link: Option<usize>,
    /// Its bytes on that link's wire (IP packet, padding and frame overhead).
    pub wire_bytes: u64,
}

/// A flow's packet the bond put on one link: the flow as the kernel's steering program keys it
/// (`crate::steer::flow_key`) and the link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placed {
    /// The client's address.
    pub dst_ip: [u8; 4],
    /// The server's port.
    pub src_port: u16,
    /// The client's port.
    pub dst_port: u16,
    /// The link.
    pub link: usize,
}

/// The fields of an IPv4 packet the bond reads.
#[derive(Debug, Clone, Copy)]
struct Parsed {
    src: [u8; 4],
    dst: [u8; 4],
    proto: u8,
    src_port: u16,
    dst_port: u16,
    /// TCP sequence number (0 for other protocols).
    seq: u32,
    /// Transport payload bytes (TCP data; 0 for a pure ACK).
    payload: u32,
}

/// Reads an IPv4 packet's addresses, ports and TCP payload length (etherparse).
fn parse(bytes: &[u8]) -> Option<Parsed> {
    let ip = etherparse::Ipv4HeaderSlice::from_slice(bytes).ok()?;
    let rest = bytes.get(ip.slice().len()..usize::from(ip.total_len()).min(bytes.len()))?;
    let (src_port, dst_port, seq, payload) = match ip.protocol() {
        etherparse::IpNumber::TCP => {
            let tcp = etherparse::TcpHeaderSlice::from_slice(rest).ok()?;
            let payload = (rest.len() - tcp.slice().len()) as u32;
            (tcp.source_port(), tcp.destination_port(), tcp.sequence_number(), payload)
        }
        etherparse::IpNumber::UDP => {
            let udp = etherparse::UdpHeaderSlice::from_slice(rest).ok()?;
            (udp.source_port(), udp.destination_port(), 0, (rest.len() - 8) as u32)
        }
        _ => (0, 0, 0, rest.len() as u32),
    };
    Some(Parsed { src: ip.source(), dst: ip.destination(), proto: ip.protocol().0, src_port, dst_port, seq, payload })
}

/// What the emulator knows of one flow (a 5-tuple from the server's side).
#[derive(Debug, Clone, Default)]
pub struct FlowStats {
    /// The client it belongs to.
    pub client: usize,
    /// Data packets (TCP payload) the bond took from the server.
    pub packets: u64,
    /// Distinct data segments written to the client (first copies: a segment that arrives
    /// again, retransmitted or copied, counts once).
    pub delivered: u64,
    /// Of those, arrived below the highest sequence number the flow had arrived at: the
    /// simulator's wire tap rule (`receiver::WireTap`, RFC 4737 reordering by sequence number;
    /// a UDP datagram's number is its place in the flow at the bond).
    pub out_of_order: u64,
    /// Times consecutive data packets took different links.
    pub link_switches: u32,
    /// The link the last data packet took.
    pub last_link: Option<usize>,
    /// Its number in the bond ([`Bond::add_flow`]: the bond keeps its receive link, [`Fabric::rx_link`]).
    index: usize,
    /// One past the highest sequence number arrived so far.
    highest_end: Option<u32>,
    /// One past the highest sequence number the bond took (TCP; the packet trace's retransmissions).
    highest_sent: Option<u32>,
    /// Sequence numbers of the segments arrived so far.
    seen: rustc_hash::FxHashSet<u32>,
}

/// A frame in the fabric: its bytes and where it goes.
#[derive(Debug)]
struct Frame {
    bytes: Vec<u8>,
    dest: Dest,
    /// The flow and the data segment's sequence range (data from the server only).
    flow: Option<(FlowKey, u32, u32)>,
    /// Its row in the packet trace, if traced.
    row: Option<usize>,
}

/// The first `trace.packets` data packets the bond took, as the simulator's `packet_trace`
/// (`trace::PacketTrace`); `flow` is the order of the flow's first packet here (the run's
/// result maps it to the request), `seq` the packet's place in its flow at the bond.
#[derive(Debug, Default)]
pub struct PacketTrace {
    /// The rows.
    pub rows: bondsim_core::trace::PacketTrace,
    /// Rows to record in all.
    limit: usize,
    /// Each traced flow's key, by its `flow` number.
    pub flows: Vec<FlowKey>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    ForwardTxDone(usize, u32),
    ForwardArrive(usize, u32),
    ReverseTxDone(usize, u32),
    ReverseArrive(usize, u32),
    Carrier(usize, bool),
    Commit(usize, u32),
    Tick,
    /// Client `n`'s NIC (`[host]`) has finished with a frame: it goes to the TUN device.
    Host(usize),
}

/// The bond, its links both ways, and the packets on them.
pub struct Fabric {
    /// The bond (the simulator's driver: scheduler, monitor, the flows' receive links).
    bond: Bond,
    forward: Vec<RateLink>,
    reverse: Vec<RateLink>,
    /// Each link's carrier (both directions).
    carrier: Vec<bool>,
    /// The switch between the links and the clients (LAG-aware only: `crate::check`).
    switch: Switch,
    /// Link names, by id.
    pub names: Vec<String>,
    events: BinaryHeap<Reverse<(SimTime, u64, Event)>>,
    order: u64,
    frames: FxHashMap<u64, Frame>,
    next_frame: u64,
    header_bytes: u32,
    server_mac: network::Mac,
    server_ip: [u8; 4],
    router_mac: Option<network::Mac>,
    vlan: Option<u16>,
    clients: Clients,
    /// MPTCP: the (client, link) of each client-side address ([`subflow_ips`]); empty for
    /// another sender, whose packets the bond places.
    subflow_links: FxHashMap<[u8; 4], (usize, usize)>,
    /// MPTCP: the run's scheduler, `mptcp NAME` (as the model's result names it).
    mptcp_label: Option<String>,
    /// Flows seen, by 5-tuple (server to client).
    pub flows: FxHashMap<FlowKey, FlowStats>,
    /// The first data packets' schedule (`trace.packets`).
    pub trace: PacketTrace,
    /// Packets the bond had no usable link for.
    pub drops_no_link: u64,
    /// Packets of an unknown address or protocol (neither the server's nor a client's).
    pub foreign: u64,
    /// Packets the server handed to the bond.
    pub packets: u64,
    /// Each client's NIC under `[host]` (none without): the model's receiving host at no CPU cost,
    /// whose polls let the frames go to the client's TUN device (`crate::clients`).
    nics: Vec<RxHost>,
    /// The frames the clients' NICs hold, by frame number.
    at_nic: FxHashMap<u64, Delivery>,
    /// Packets the clients sent back.
    pub reverse_packets: u64,
    /// Of those, how many reached the server.
    pub reverse_delivered: u64,
}

impl Fabric {
    /// The bond of `scenario` (rate links only: `crate::check` says so first) for `clients`.
    pub fn new(scenario: &Scenario, clients: Clients) -> Result<Fabric> {
        let resolved = registry::resolve(&scenario.bond.mode, &scenario.bond.options)?;
        let mut forward = Vec::new();
        let mut names = Vec::new();
        let mut events = BinaryHeap::new();
        let mut order = 0;
        for (id, spec) in scenario.each_link() {
            let LinkModel::Rate(model) = &spec.model else {
                return Err(bondsim_core::Error::scenario(
                    format!("links.{id}.kind"),
                    "the emulator emulates rate links only",
                ));
            };
            forward.push(RateLink::new(scenario, spec, model, id));
            names.push(spec.link_name(id));
            // Carrier failures only (`crate::check`), at the model's instants (jitter included).
            for (k, f) in spec.base.failures.iter().enumerate() {
                let (down, up) = fault::failure_instants(f, scenario.seed, id, k);
                events.push(Reverse((down, order, Event::Carrier(id, false))));
                order += 1;
                if let Some(up) = up {
                    events.push(Reverse((up, order, Event::Carrier(id, true))));
                    order += 1;
                }
            }
        }
        let reverse = forward.iter().enumerate().map(|(id, l)| l.mirror(scenario.seed, id)).collect();
        let views = forward.iter().map(|l| l.view(SimTime::ZERO, true)).collect();
        let monitor = Monitor::new(
            monitor::miimon_in_force(resolved.info.name, scenario.bond.miimon),
            scenario.bond.updelay,
            scenario.bond.downdelay,
            scenario.bond.hz,
            forward.len(),
        );
        let bond = Bond::new(&resolved, &bond_context(scenario), monitor, None, views, Vec::new())?;
        let n = &scenario.network;
        let subflow_links = subflow_ips(scenario, &clients)?
            .into_iter()
            .enumerate()
            .flat_map(|(c, addrs)| addrs.into_iter().enumerate().map(move |(link, a)| (a, (c, link))))
            .collect();
        let fabric_clients = clients.ips.len();
        let mut fabric = Fabric {
            bond,
            switch: Switch::new(&scenario.switch, scenario.lag(), forward.len()),
            carrier: vec![true; forward.len()],
            forward,
            reverse,
            names,
            events,
            order,
            frames: FxHashMap::default(),
            next_frame: 0,
            header_bytes: scenario.l3_header_bytes(),
            server_mac: network::parse_mac("network.server_mac", &n.server_mac)?,
            server_ip: network::parse_ip("network.server_ip", &n.server_ip)?,
            router_mac: n.router_mac.as_deref().map(|m| network::parse_mac("network.router_mac", m)).transpose()?,
            vlan: n.vlan,
            clients,
            subflow_links,
            mptcp_label: match &scenario.sender {
                bondsim_core::scenario::Sender::Mptcp(m) => Some(format!("mptcp {}", m.mptcp.mptcp_scheduler)),
                _ => None,
            },
            flows: FxHashMap::default(),
            trace: PacketTrace { limit: scenario.trace.packets as usize, ..PacketTrace::default() },
            drops_no_link: 0,
            foreign: 0,
            packets: 0,
            nics: client_nics(scenario, fabric_clients),
            at_nic: FxHashMap::default(),
            reverse_packets: 0,
            reverse_delivered: 0,
        };
        if let Some(every) = fabric.bond.scheduler.tick_interval() {
            fabric.schedule(every, Event::Tick);
        }
        Ok(fabric)
    }

    fn schedule(&mut self, at: SimTime, event: Event) {
        self.events.push(Reverse((at, self.order, event)));
        self.order += 1;
    }

    /// The scheduler's label (its name and non-default parameters), for the result; an MPTCP
    /// run's is its packet scheduler's, `mptcp NAME`, as the model's (no bond places a packet).
    pub fn scheduler_label(&self) -> &str {
        self.mptcp_label.as_deref().unwrap_or(&self.bond.label)
    }

    /// The link `flow`'s client sends to the server on, where the mode decides it (`rx_link`).
    pub fn rx_link(&self, flow: &FlowStats) -> Option<usize> {
        self.bond.rx_links[flow.index]
    }

    /// When the next event is due, if any.
    pub fn next_deadline(&self) -> Option<SimTime> {
        self.events.peek().map(|Reverse((at, _, _))| *at)
    }

    /// Counters of the forward (bond to clients) links.
    pub fn forward_stats(&self) -> impl Iterator<Item = &LinkStats> {
        self.forward.iter().map(|l| &l.stats)
    }

    /// Counters of the reverse (clients to bond) links.
    pub fn reverse_stats(&self) -> impl Iterator<Item = &LinkStats> {
        self.reverse.iter().map(|l| &l.stats)
    }

    /// Nominal rate of each link, bits/s.
    pub fn rates_bps(&self) -> Vec<f64> {
        self.forward.iter().map(RateLink::rate_bps).collect()
    }

    /// Client `n`'s address.
    pub fn client_ip(&self, n: usize) -> [u8; 4] {
        self.clients.ips[n]
    }

    /// MPTCP: the link a subflow from client-side address `ip` takes (None: not a subflow's address).
    pub fn subflow_link(&self, ip: [u8; 4]) -> Option<usize> {
        self.subflow_links.get(&ip).map(|&(_, link)| link)
    }

    /// The client whose address `ip` is, and under MPTCP the link of the subflow it is the
    /// client-side address of.
    fn client_of(&self, ip: [u8; 4]) -> Option<(usize, Option<usize>)> {
        if self.subflow_links.is_empty() {
            return self.clients.ips.iter().position(|&c| c == ip).map(|c| (c, None));
        }
        self.subflow_links.get(&ip).map(|&(c, link)| (c, Some(link)))
    }

    /// The headers the bond's hashes read for a packet from the server to `client`.
    fn headers(&self, p: &Parsed, client: usize) -> FlowHeaders {
        FlowHeaders {
            src_mac: self.server_mac,
            dst_mac: self.router_mac.unwrap_or(self.clients.macs[client]),
            src_ip: p.src,
            dst_ip: p.dst,
            src_port: p.src_port,
            dst_port: p.dst_port,
            ip_proto: p.proto,
            vlan: self.vlan,
            ethertype: ETH_P_IP,
        }
    }

    fn store(&mut self, frame: Frame) -> Packet {
        let id = self.next_frame;
        self.next_frame += 1;
        let l3 = frame.bytes.len() as u32;
        self.frames.insert(id, frame);
        // The link model counts an IP packet as payload + the scenario's header bytes
        // (`Packet::l3_bytes`): give it the real packet's length that way.
        Packet { bytes: l3.saturating_sub(self.header_bytes), bond_seq: id, ..Packet::default() }
    }

    /// The server's TUN device gave the bond `bytes` at `now`. Every event due by then runs
    /// first (what it delivers goes to `out`): a link never starts sending a packet before
    /// the bond had it, however late the caller is. Returns the flow and the link the bond
    /// picked, when it picked one link.
    pub fn from_server(&mut self, now: SimTime, bytes: Vec<u8>, out: &mut Vec<Delivery>) -> Option<Placed> {
        self.take(now, bytes, None, out)
    }

    /// The kernel's queue of link `link` let `bytes` go at `now` (kernel queues,
    /// `crate::steer`: the mode ran in the kernel, the link's queue and rate were a qdisc's):
    /// it goes on that link's wire, with its bookkeeping as [`Fabric::from_server`]'s.
    pub fn from_kernel_queue(&mut self, now: SimTime, link: usize, bytes: Vec<u8>, out: &mut Vec<Delivery>) {
        self.take(now, bytes, Some(link), out);
    }

    fn take(&mut self, now: SimTime, bytes: Vec<u8>, picked: Option<usize>, out: &mut Vec<Delivery>) -> Option<Placed> {
        self.advance(now, out);
        let Some(p) = parse(&bytes).filter(|p| p.src == self.server_ip) else {
            self.foreign += 1;
            return None;
        };
        let Some((client, subflow_link)) = self.client_of(p.dst) else {
            self.foreign += 1;
            return None;
        };
        self.packets += 1;
        let headers = self.headers(&p, client);
        let key = headers.key();
        if !self.flows.contains_key(&key) {
            // A new flow: the mode may decide where its client's packets come back (as
            // `World::arrive` asks the bond when a request arrives). What the bond would tell
            // the switch is moot: the emulator's is LAG-aware (`crate::check`).
            let index = self.bond.add_flow(headers);
            self.bond.flow_arrived(now, index, &mut Vec::new());
            self.flows.insert(key, FlowStats { client, index, ..FlowStats::default() });
        }
        let segment = (p.payload > 0).then(|| {
            let flow = self.flows.get_mut(&key).expect("inserted");
            flow.packets += 1;
            if p.proto == etherparse::IpNumber::UDP.0 {
                // A datagram has no sequence number on the wire: its number is its place in
                // its flow as the bond took it (one socket's datagrams leave in the order sent).
                let n = (flow.packets - 1) as u32;
                (n, n.wrapping_add(1))
            } else {
                (p.seq, p.seq.wrapping_add(p.payload))
            }
        });
        let l3_bytes = bytes.len() as u32;
        let info = PacketInfo { bytes: l3_bytes.saturating_sub(self.header_bytes), l3_bytes, headers: &headers };
        let pick = match (picked, subflow_link) {
            (Some(id), _) => Pick::Link(id),
            // An MPTCP subflow is bound to its link: no bond places it (`World::dispatch`).
            (None, Some(link)) => Pick::Link(link),
            (None, None) => self.bond.scheduler.pick(&info, &BondView { now, links: &self.bond.views }),
        };
        let targets: Vec<usize> = match pick {
            Pick::Link(id) => vec![id],
            Pick::All => (0..self.forward.len()).filter(|&id| self.bond.views[id].can_tx()).collect(),
            Pick::Drop => Vec::new(),
        };
        if targets.is_empty() {
            self.drops_no_link += 1;
            return None;
        }
        let placed = (targets.len() == 1).then(|| Placed {
            dst_ip: p.dst,
            src_port: p.src_port,
            dst_port: p.dst_port,
            link: targets[0],
        });
        if let (Some(_), Some(flow)) = (segment, self.flows.get_mut(&key)) {
            if targets.len() == 1 {
                if flow.last_link.is_some_and(|l| l != targets[0]) {
                    flow.link_switches += 1;
                }
                flow.last_link = Some(targets[0]);
            }
        }
        let flow = segment.map(|(seq, end)| (key, seq, end));
        let row = flow.and_then(|(key, seq, _)| self.trace_row(now, key, seq, &targets));
        if let Some((key, _, end)) = flow {
            let stats = self.flows.get_mut(&key).expect("inserted");
            if stats.highest_sent.is_none_or(|h| (end.wrapping_sub(h) as i32) > 0) {
                stats.highest_sent = Some(end);
            }
        }
        let last = targets.len() - 1;
        let mut bytes = Some(bytes);
        for (i, id) in targets.into_iter().enumerate() {
            let copy = if i == last { bytes.take().expect("once") } else { bytes.clone().expect("kept") };
            self.enqueue(now, id, true, Frame { bytes: copy, dest: Dest::Client(client), flow, row });
            self.forward[id].refresh_view(now, &mut self.bond.views[id]);
        }
        placed
    }

    /// A row of the packet trace for a data packet of flow `key` (sequence number `seq`)
    /// the bond sends on `targets` at `now`, while there is room.
    fn trace_row(&mut self, now: SimTime, key: FlowKey, seq: u32, targets: &[usize]) -> Option<usize> {
        let t = &mut self.trace;
        let rows = &mut t.rows;
        if rows.packet.len() >= t.limit {
            return None;
        }
        let flow = t.flows.iter().position(|&k| k == key).unwrap_or_else(|| {
            t.flows.push(key);
            t.flows.len() - 1
        });
        let stats = &self.flows[&key];
        // TCP: a segment below what the flow already sent is a retransmission.
        let retransmit = key.ip_proto == etherparse::IpNumber::TCP.0
            && stats.highest_sent.is_some_and(|h| (seq.wrapping_sub(h) as i32) < 0);
        rows.packet.push(rows.packet.len() as u64);
        rows.flow.push(flow as u32);
        rows.seq.push((stats.packets - 1) as u32);
        rows.retransmit.push(retransmit);
        rows.handshake.push(false); // (data only: the kernel's handshake is not traced)
        rows.link.push((targets.len() == 1).then(|| targets[0] as u32));
        rows.sent_s.push(now.as_secs_f64());
        rows.left_s.push(None);
        rows.arrived_s.push(None);
        rows.out_of_order.push(false);
        Some(rows.packet.len() - 1)
    }

    /// Hands `frame` to link `id` (forward: the bond's side; else the clients' side) at `now`.
    fn enqueue(&mut self, now: SimTime, id: usize, forward: bool, frame: Frame) {
        let packet = self.store(frame);
        let link = if forward { &mut self.forward[id] } else { &mut self.reverse[id] };
        match link.enqueue(now, &packet) {
            Enqueued::Started(done) => {
                let epoch = link.epoch();
                let event = if forward { Event::ForwardTxDone(id, epoch) } else { Event::ReverseTxDone(id, epoch) };
                self.schedule(done, event);
            }
            Enqueued::Waiting => {}
            // Counted in the link's drops.
            Enqueued::Dropped(_) => {
                self.frames.remove(&packet.bond_seq);
            }
        }
    }

    /// The link the switch sends a client's packet on (`World::peer_link`, a LAG-aware
    /// switch): the mode's receive link where it decides one and its carrier is there, else
    /// the switch's own hash (`switch.hash`) over the members ([`Switch::lag_port`]).
    fn peer_link(&self, now: SimTime, rx_link: Option<usize>, headers: &FlowHeaders) -> Option<usize> {
        if let Some(link) = rx_link.filter(|&l| self.carrier[l]) {
            return Some(link);
        }
        self.switch.lag_port(headers, now)
    }

    /// Client `client`'s TUN device gave `bytes` at `now` (towards the server); events due by
    /// then run first, as in [`Fabric::from_server`].
    pub fn from_client(&mut self, now: SimTime, client: usize, bytes: Vec<u8>, out: &mut Vec<Delivery>) {
        self.advance(now, out);
        let Some(p) = parse(&bytes).filter(|p| p.dst == self.server_ip) else {
            self.foreign += 1;
            return;
        };
        if !self.subflow_links.is_empty() {
            // MPTCP: the subflow's own link, by the client's address, while it has carrier
            // (`World::peer_link`); a packet from an address of no subflow is not ours.
            let Some((_, Some(link))) = self.client_of(p.src) else {
                self.foreign += 1;
                return;
            };
            self.reverse_packets += 1;
            if self.carrier[link] {
                self.enqueue(now, link, false, Frame { bytes, dest: Dest::Server, flow: None, row: None });
            }
            return;
        }
        self.reverse_packets += 1;
        // The flow as the server sees it, and the headers the switch hashes (the client's own).
        let from_server = Parsed { src: p.dst, dst: p.src, src_port: p.dst_port, dst_port: p.src_port, ..p };
        let server_side = self.headers(&from_server, client);
        let rx_link = self.flows.get(&server_side.key()).and_then(|f| self.rx_link(f));
        let Some(id) = self.peer_link(now, rx_link, &server_side.reversed()) else { return };
        self.enqueue(now, id, false, Frame { bytes, dest: Dest::Server, flow: None, row: None });
    }

    /// Runs every event due at or before `now`, each at its own time, and appends what
    /// reaches a TUN device to `out`.
    pub fn advance(&mut self, now: SimTime, out: &mut Vec<Delivery>) {
        while let Some(&Reverse((at, _, event))) = self.events.peek() {
            if at > now {
                break;
            }
            self.events.pop();
            self.run(at, event, out);
        }
    }

    fn tx_done(&mut self, at: SimTime, id: usize, epoch: u32, forward: bool) {
        let link = if forward { &mut self.forward[id] } else { &mut self.reverse[id] };
        if link.epoch() != epoch {
            return;
        }
        let Sent { packet, arrival, next } = link.tx_done(at);
        if let Some(row) = self.frames.get(&packet.bond_seq).and_then(|f| f.row) {
            self.trace.rows.left_s[row].get_or_insert(at.as_secs_f64());
        }
        if let Some(done) = next {
            let event = if forward { Event::ForwardTxDone(id, epoch) } else { Event::ReverseTxDone(id, epoch) };
            self.schedule(done, event);
        }
        match arrival {
            Ok(arrival) => {
                let event = if forward { Event::ForwardArrive(id, epoch) } else { Event::ReverseArrive(id, epoch) };
                self.schedule(arrival, event);
            }
            // Lost on the wire (counted in the link's drops_random).
            Err(_) => {
                self.frames.remove(&packet.bond_seq);
            }
        }
        if forward {
            self.forward[id].refresh_view(at, &mut self.bond.views[id]);
        }
    }

    fn arrive(&mut self, at: SimTime, id: usize, epoch: u32, forward: bool, out: &mut Vec<Delivery>) {
        let link = if forward { &mut self.forward[id] } else { &mut self.reverse[id] };
        if link.epoch() != epoch {
            return;
        }
        let packet = link.arrive();
        let Some(frame) = self.frames.remove(&packet.bond_seq) else { return };
        if let Some((key, seq, end)) = frame.flow {
            let flow = self.flows.get_mut(&key).expect("a flow of a sent packet");
            if flow.seen.insert(seq) {
                flow.delivered += 1;
                // Sequence numbers wrap (RFC 9293 §3.4): compare by their difference.
                let late = matches!(flow.highest_end, Some(h) if (seq.wrapping_sub(h) as i32) < 0);
                if late {
                    flow.out_of_order += 1;
                } else {
                    flow.highest_end = Some(end);
                }
                if let Some(row) = frame.row {
                    self.trace.rows.arrived_s[row] = Some(at.as_secs_f64());
                    self.trace.rows.out_of_order[row] = late;
                }
            }
        }
        if frame.dest == Dest::Server {
            self.reverse_delivered += 1;
        }
        let wire_bytes = self.bond.views[id].wire_bytes(frame.bytes.len() as u32);
        let delivery =
            Delivery { due: at, dest: frame.dest, link: forward.then_some(id), wire_bytes, bytes: frame.bytes };
        match delivery.dest {
            Dest::Client(client) if !self.nics.is_empty() => self.nic_arrive(at, client, packet.bond_seq, delivery),
            _ => out.push(delivery),
        }
    }

    fn carrier(&mut self, at: SimTime, id: usize, up: bool) {
        if self.carrier[id] == up {
            return;
        }
        self.carrier[id] = up;
        self.switch.carrier(id, up, at);
        if up {
            self.forward[id].carrier_up();
            self.reverse[id].carrier_up();
        } else {
            for link in [&mut self.forward[id], &mut self.reverse[id]] {
                for packet in link.carrier_down(at).packets {
                    self.frames.remove(&packet.bond_seq);
                }
            }
        }
        self.forward[id].refresh_view(at, &mut self.bond.views[id]);
        // The NIC reports it at once (no `carrier_latency_ms` here): the bond's monitor and
        // scheduler hear of it as in the model ([`Bond::nic_carrier`]).
        for (link, commit) in self.bond.nic_carrier(at, id, up) {
            self.schedule(commit.at, Event::Commit(link, commit.generation));
        }
    }

    fn run(&mut self, at: SimTime, event: Event, out: &mut Vec<Delivery>) {
        match event {
            Event::ForwardTxDone(id, epoch) => self.tx_done(at, id, epoch, true),
            Event::ReverseTxDone(id, epoch) => self.tx_done(at, id, epoch, false),
            Event::ForwardArrive(id, epoch) => self.arrive(at, id, epoch, true, out),
            Event::ReverseArrive(id, epoch) => self.arrive(at, id, epoch, false, out),
            Event::Carrier(id, up) => self.carrier(at, id, up),
            Event::Commit(id, generation) => {
                if self.bond.commit(id, generation) {
                    self.apply_verdict(at, id);
                }
            }
            Event::Tick => {
                if let Some(next) = self.bond.tick(at) {
                    self.schedule(next, Event::Tick);
                }
            }
            Event::Host(client) => self.nic_done(at, client, out),
        }
    }

    /// `delivery`, frame `id`, reached client `client`'s NIC at `at` (`[host]`): it waits there for
    /// the NIC's poll, or is dropped by a full ring (or backlog), as in the model.
    fn nic_arrive(&mut self, at: SimTime, client: usize, id: u64, delivery: Delivery) {
        let packet = Packet { bond_seq: id, ..Packet::default() };
        match self.nics[client].arrive(at, packet) {
            Admit::Dropped => {}
            Admit::Queued => {
                self.at_nic.insert(id, delivery);
            }
            Admit::Handled(done) => {
                self.at_nic.insert(id, delivery);
                self.schedule(done, Event::Host(client));
            }
        }
    }

    /// Client `client`'s NIC has handled a frame at `at`: it goes to the TUN device now, and the
    /// NIC takes the next one.
    fn nic_done(&mut self, at: SimTime, client: usize, out: &mut Vec<Delivery>) {
        let mut up = Vec::new();
        self.nics[client].complete(at, &mut up);
        for packet in up.iter().flatten() {
            if let Some(mut delivery) = self.at_nic.remove(&packet.bond_seq) {
                delivery.due = at;
                out.push(delivery);
            }
        }
        if let Some(done) = self.nics[client].start(at) {
            self.schedule(done, Event::Host(client));
        }
    }

    /// The clients' NICs' counts, summed (frames and drops; the most frames one held at once), under
    /// `[host]`.
    pub fn nic_counts(&self) -> Option<HostCounts> {
        (!self.nics.is_empty()).then(|| {
            self.nics.iter().map(RxHost::counts).fold(HostCounts::default(), |a, c| HostCounts {
                frames: a.frames + c.frames,
                skbs: a.skbs + c.skbs,
                drops: a.drops + c.drops,
                queue_max: a.queue_max.max(c.queue_max),
            })
        })
    }

    /// The monitor's verdict on link `id` changed: the bond applies it as in the model
    /// ([`Bond::verdict`], [`Bond::link_changed`]: the scheduler hears of it, the receive links
    /// follow, and when the last link up went down the bonding driver makes a link waiting out
    /// its updelay active at once). What it would tell the switch is moot: a LAG-aware switch
    /// learns no address and hears no gratuitous ARP.
    fn apply_verdict(&mut self, now: SimTime, id: usize) {
        if self.bond.verdict(id).is_none() {
            return;
        }
        self.forward[id].refresh_view(now, &mut self.bond.views[id]);
        if let Some(back) = self.bond.link_changed(now, id, &mut Vec::new()) {
            self.apply_verdict(now, back);
        }
    }

    /// Adds the kernel's queue drops of each forward link (kernel queues, `crate::steer`) to
    /// the link's `drops_queue_full`.
    pub fn count_queue_drops(&mut self, drops: &[u64]) {
        for (link, n) in self.forward.iter_mut().zip(drops) {
            link.stats.drops_queue_full += n;
        }
    }

    /// Frames on the links (queued, being sent, or on the wire), both ways, and at the clients' NICs.
    pub fn in_flight(&self) -> usize {
        self.frames.len() + self.at_nic.len()
    }

    /// Whether the bond's monitor sees link `id` up.
    pub fn monitor_up(&self, id: usize) -> bool {
        self.bond.views[id].up
    }
}
