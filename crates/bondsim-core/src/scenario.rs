//! THE scenario schema: every knob of a run, defined once.
//!
//! A scenario arrives as JSON (the Python front loads TOML and applies
//! `--set` overrides first). Unknown keys, wrong types and impossible values
//! are errors naming the field path, e.g. `links.1.period_ms: must be > 0`.
//! File references (`trace_file`, a directory of files) are resolved by the
//! front into inline data, so the core never touches the file system.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::time::SimTime;

/// One simulation run: what is requested, how it is sent, over which bond.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Free-text name shown in outputs.
    #[serde(default)]
    pub name: String,
    /// Seed of every random stream of the run.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// End the run at this time, seconds, even if work remains (default: when all is delivered).
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_s: Option<f64>,
    /// Count goodput (`goodput_bps`) from this time, seconds: a warm-up left out of it (a closed
    /// loop's connections starting together, a bond before its first rebalance). Default 0.
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measure_from_s: Option<f64>,
    /// The run's guard: a run that has processed this many events without finishing stops
    /// with an error naming this field, so that no scenario can keep a run going for ever.
    #[serde(default = "default_max_events")]
    pub max_events: u64,
    /// What the clients do: request files (the default), or exchange tokens (`kind = "pingpong"`).
    pub workload: Workload,
    /// How the server turns requests into packets.
    #[serde(default)]
    pub sender: Sender,
    /// Addresses and headers the packets carry (what the hash policies read).
    #[serde(default, deserialize_with = "table")]
    pub network: Network,
    /// The receiving host's IP reassembly (used when datagrams are fragmented).
    #[serde(default, deserialize_with = "table")]
    pub ipfrag: IpFrag,
    /// The bond: its mode (scheduler), link monitor and the mode's options.
    #[serde(deserialize_with = "table")]
    pub bond: Bond,
    /// The bonded links, in order (link ids are positions after `count` expansion).
    pub links: Vec<LinkSpec>,
    /// Time series recorded for reports (`bondsim report`): off unless asked for.
    #[serde(default, skip_serializing_if = "Trace::is_off", deserialize_with = "table")]
    pub trace: Trace,
    /// The switch between the bond's links and the clients (default: a LAG hashing layer2+3
    /// over the ports with carrier, static or for a bond in 802.3ad running LACP,
    /// [`Scenario::lag`]; written without it).
    #[serde(default, skip_serializing_if = "Switch::is_default", deserialize_with = "table")]
    pub switch: Switch,
}

/// How the switch treats the ports the bond's links plug into.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Lag {
    /// A static link aggregation (802.3ad without LACP, IEEE 802.1AX-2014 §6): one
    /// bridge port; the members are the ports with carrier.
    #[default]
    Static,
    /// An LACP aggregation (IEEE 802.1AX-2014 §6.4): as static, and a member also leaves
    /// while its LACPDUs time out (`bond.lacp_rate`, `switch::Switch::lacp`).
    Lacp,
    /// No aggregation: every port a bridge port of its own, MAC learning per port
    /// (IEEE 802.1Q-2018 §8.7), flooding of unknown destinations (§8.8).
    #[serde(rename = "none")]
    Unaware,
}

/// The spanning tree protocol the switch runs on its ports (without a LAG: each port
/// of the bond its own bridge port).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Stp {
    /// No spanning tree: a port forwards the instant it has carrier.
    #[default]
    #[serde(rename = "none")]
    Off,
    /// IEEE 802.1D-1998 STP: a port that comes up listens, then learns, for
    /// `forward_delay_s` each before it forwards.
    Stp,
    /// IEEE 802.1D-2004 §17 RSTP: a designated port that gets no agreement (a host sends
    /// no BPDUs) discards, then learns, for `forward_delay_s` each (`fdWhile`, §17.29.3);
    /// with `auto_edge` it becomes an edge port after the edge delay (§17.25, §17.20.4).
    Rstp,
}

/// The switch between the bond and its peers (`[switch]`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Switch {
    /// `static` | `lacp` (LAG-aware) or `none` (unaware: MAC learning per port). Left out:
    /// `lacp` when the bond runs 802.3ad (the partner it needs), else `static`
    /// ([`Scenario::lag`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lag: Option<Lag>,
    /// The switch's own hash for frames towards the bond over a LAG's members
    /// (a Linux `xmit_hash_policy` name; switches offer the same L2 / L2+L3 / L3+L4 choices).
    pub hash: String,
    /// Spanning tree on the bond's ports: `none`, `stp`, `rstp` (only without a LAG: a
    /// LAG is one bridge port, its members join it without a port state change).
    pub stp: Stp,
    /// Bridge Forward Delay, seconds (IEEE 802.1D-2004 Table 17-1: default 15).
    pub forward_delay_s: f64,
    /// Links (by id) whose switch ports are edge ports (`AdminEdgePort`): forwarding at once.
    pub edge_ports: Vec<usize>,
    /// RSTP's `AutoEdge` (IEEE 802.1D-2004 §17.13): a port that hears no BPDU for the
    /// edge delay (MigrateTime, 3 s, on a point-to-point link: §17.20.4) becomes an edge port.
    pub auto_edge: bool,
    /// MAC address ageing time, seconds (IEEE 802.1D-2004 Table 7-5: recommended 300).
    pub ageing_s: f64,
}

impl Default for Switch {
    fn default() -> Switch {
        Switch {
            lag: None,
            hash: "layer2+3".into(),
            stp: Stp::Off,
            forward_delay_s: 15.0,
            edge_ports: Vec::new(),
            auto_edge: false,
            ageing_s: 300.0,
        }
    }
}

impl Switch {
    /// Whether this is the default switch (a scenario is then written without `switch`).
    pub fn is_default(&self) -> bool {
        *self == Switch::default()
    }
}

/// What a run records over time, for reports: each link's load, queue and state
/// (`link_trace`, `link_events`) and the first packets' schedule (`packet_trace`).
/// Nothing is recorded by default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Trace {
    /// Width of the time buckets of the link trace, milliseconds (each link's bytes
    /// on the wire, utilisation, queue and state per bucket). Off when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_ms: Option<f64>,
    /// Most buckets each link keeps: past it, adjacent buckets merge in pairs and the
    /// width doubles, so a long run's trace covers it whole in bounded memory.
    #[serde(default = "default_link_buckets")]
    pub link_buckets: u32,
    /// Record the schedule of the first this many packets the bond is handed (which
    /// link, when sent, when they left the link and reached the client; 0: none).
    #[serde(default)]
    pub packets: u32,
}

fn default_link_buckets() -> u32 {
    10_000
}

/// Most packets [`Trace::packets`] may ask for (one row each, held for the whole run).
pub const MAX_TRACE_PACKETS: u32 = 1_000_000;
/// Most buckets [`Trace::link_buckets`] may ask for per link.
pub const MAX_TRACE_BUCKETS: u32 = 1_000_000;

impl Default for Trace {
    fn default() -> Trace {
        Trace { link_ms: None, link_buckets: default_link_buckets(), packets: 0 }
    }
}

impl Trace {
    /// Whether nothing is recorded (and the scenario is written without `trace`).
    pub fn is_off(&self) -> bool {
        self.link_ms.is_none() && self.packets == 0 && self.link_buckets == default_link_buckets()
    }
}

fn default_seed() -> u64 {
    1
}

/// The default [`Scenario::max_events`]: 40 times the largest run in the repository (the
/// engine benchmark's 10^7 packets take about 2.5·10^7 events; TCP takes a few events per
/// segment), reached after a minute or two at the engine's 10–20 million events per second.
pub const DEFAULT_MAX_EVENTS: u64 = 1_000_000_000;

fn default_max_events() -> u64 {
    DEFAULT_MAX_EVENTS
}

/// What the clients do, chosen by `kind`: `requests` (the default: clients ask the
/// server for files) or `pingpong` (client/server pairs bounce a token back and forth).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(try_from = "serde_json::Map<String, serde_json::Value>")]
pub enum Workload {
    /// Clients request files from the server.
    Requests(Requests),
    /// Client/server pairs exchange a token over TCP (a request/response workload).
    PingPong(PingPong),
}

impl Workload {
    /// Every kind with its fields, for errors naming a field of another kind.
    const KINDS: &'static [(&'static str, &'static [&'static str])] = &[
        ("requests", &["clients", "requests", "clients_in_turn", "arrivals", "file_size", "direction"]),
        ("pingpong", &["pairs", "token_bytes", "rounds"]),
    ];
}

impl TryFrom<serde_json::Map<String, serde_json::Value>> for Workload {
    type Error = String;

    fn try_from(mut map: serde_json::Map<String, serde_json::Value>) -> std::result::Result<Self, String> {
        let kind = take_kind(&mut map, "requests", Workload::KINDS)?;
        let fields = Workload::KINDS.iter().find(|(k, _)| *k == kind).expect("checked").1;
        if let Some(key) = map.keys().find(|key| !fields.contains(&key.as_str())) {
            let other = Workload::KINDS.iter().find(|(_, f)| f.contains(&key.as_str()));
            let message = match other {
                Some((owner, _)) => format!("only for kind = \"{owner}\", not \"{kind}\""),
                None => format!("unknown field `{key}`, expected one of `kind`, {}", quoted(fields)),
            };
            return Err(nested(key, message));
        }
        let body = serde_json::Value::Object(map);
        Ok(if kind == "pingpong" { Workload::PingPong(part(body)?) } else { Workload::Requests(part(body)?) })
    }
}

/// A request workload prints as before (no `kind`); a ping-pong one with its `kind`.
impl Serialize for Workload {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Tagged<'a> {
            kind: &'static str,
            #[serde(flatten)]
            body: &'a PingPong,
        }
        match self {
            Workload::Requests(r) => r.serialize(s),
            Workload::PingPong(p) => Tagged { kind: "pingpong", body: p }.serialize(s),
        }
    }
}

/// `workload.kind = "pingpong"`: `pairs` client/server pairs, each its own TCP
/// connection, bounce a token of `token_bytes` back and forth `rounds` times. The
/// server's end writes the first token; each end writes the next one as soon as it has
/// read the whole token from the other (seed 001's producer/consumer pairs, Fig. 5).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PingPong {
    /// Client/server pairs (one client each).
    #[serde(default = "default_pairs")]
    pub pairs: u32,
    /// Bytes of one token (one `send()` of the application).
    pub token_bytes: u64,
    /// Exchanges per pair: the server's token out and the client's back.
    #[serde(default = "default_rounds")]
    pub rounds: u32,
}

fn default_pairs() -> u32 {
    1
}

fn default_rounds() -> u32 {
    100
}

/// The requests: how many, from how many clients, when, for which file sizes.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Requests {
    /// Number of clients; each request comes from one drawn uniformly.
    #[serde(default = "default_clients")]
    pub clients: u32,
    /// Total number of requests.
    pub requests: u32,
    /// Request `i` comes from client `i % clients` instead of a random one.
    #[serde(default)]
    pub clients_in_turn: bool,
    /// When requests arrive.
    #[serde(default)]
    pub arrivals: Arrivals,
    /// Size of the file each request asks for.
    pub file_size: FileSize,
    /// Which way the files go: `download` (the server sends them out through the bond,
    /// the default) or `upload` (each client sends its file to the server: the data
    /// comes in through the switch, which places it on a port, and the bond carries the
    /// server's ACKs; iperf from the clients, the thesis's Table 2). TCP only.
    #[serde(default)]
    pub direction: Direction,
}

/// Which way a request's file travels.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// From the server, out through the bond, to the client.
    #[default]
    Download,
    /// From the client, in through the switch and the bond, to the server.
    Upload,
}

fn default_clients() -> u32 {
    10
}

/// When requests reach the server's request queue.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Arrivals {
    /// All requests are queued at time zero (the thesis's experiments). (A variant with no
    /// fields rather than a unit one: serde then refuses a stray field, as for the others.)
    AtStart {},
    /// `size` requests every `every_s` seconds, the first batch at zero (the
    /// appendix's `generate()`: 4999 requests every 5 s).
    Batches { size: u32, every_s: f64 },
    /// A Poisson process of `rate_per_s` requests per second.
    Poisson { rate_per_s: f64 },
    /// A closed loop: each client keeps `active` requests outstanding and asks
    /// again as soon as one ends (flexiclient's `-active`; the thesis's §4.4
    /// web test ran 64 per client). Request `i` comes from client `i % clients`.
    Closed { active: u32 },
}

impl Default for Arrivals {
    fn default() -> Self {
        Arrivals::AtStart {}
    }
}

/// The file size of each request.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum FileSize {
    /// Every file has `bytes` bytes.
    Fixed { bytes: u64 },
    /// Uniform integer in `[min_bytes, max_bytes]`.
    Uniform { min_bytes: u64, max_bytes: u64 },
    /// The SPECweb99 file set: 4 classes of 9 files (0.1–0.9 KB … 100–900 KB).
    Zipfset {
        /// Classes to draw from (0–3); the class mix is renormalised over them.
        #[serde(default = "all_classes")]
        classes: Vec<u8>,
        /// `specweb` (SPECweb99 class mix and Zipf file popularity) or `uniform`.
        #[serde(default)]
        popularity: Popularity,
    },
    /// One of these sizes, uniformly at random (a directory of real files
    /// is turned into this list by the front).
    List { bytes: Vec<u64> },
}

fn all_classes() -> Vec<u8> {
    vec![0, 1, 2, 3]
}

/// How files of the SPECweb99 set are chosen.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Popularity {
    /// SPECweb99's class mix and Zipf popularity within each class.
    #[default]
    Specweb,
    /// Every file of the chosen classes equally likely.
    Uniform,
}

/// The server side that turns requests into packets: one of the registered
/// transports, chosen by `kind` (default `paced`). Fields of another kind are
/// errors; unset fields of this kind get their defaults (set here, once).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[serde(try_from = "serde_json::Map<String, serde_json::Value>")]
pub enum Sender {
    /// The thesis model: a periodic loop hands packets to the bond; a file of S
    /// bytes is `S / chunk + 1` packets (the last short, possibly empty).
    Paced(PacedSender),
    /// Bulk transfer: each flow keeps `window_pkts` packets in flight.
    Window(WindowSender),
    /// Constant bit rate per flow (an iperf UDP stream).
    Cbr(CbrSender),
    /// TCP, as Linux's: each file is one connection.
    Tcp(TcpSender),
}

/// `kind = "paced"`: the thesis's scheduler loop.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PacedSender {
    /// Payload bytes per packet.
    #[serde(default = "default_chunk_bytes")]
    pub chunk_bytes: u32,
    /// Period of the loop, milliseconds (appendix: 20).
    #[serde(default = "default_tick_ms")]
    pub tick_ms: f64,
    /// Packets taken per tick, one per queued request in turn (appendix: 4).
    #[serde(default = "default_packets_per_tick")]
    pub packets_per_tick: u32,
}

/// `kind = "window"`: each flow keeps a window of packets in flight, released on delivery.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WindowSender {
    /// Payload bytes per packet.
    #[serde(default = "default_chunk_bytes")]
    pub chunk_bytes: u32,
    /// Application write size, bytes: each write is cut into packets of at most
    /// `chunk_bytes` and never merged with the next (default: the whole file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_bytes: Option<u32>,
    /// Packets a flow may have sent but not yet delivered.
    #[serde(default = "default_window_pkts")]
    pub window_pkts: u32,
    /// Time for a delivery to free its window slot, microseconds.
    #[serde(default)]
    pub ack_delay_us: f64,
}

/// `kind = "cbr"`: each flow sends at a constant rate, whatever happens to its packets.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CbrSender {
    /// Payload bytes per packet.
    #[serde(default = "default_chunk_bytes")]
    pub chunk_bytes: u32,
    /// Application write size, bytes (as for `window`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_bytes: Option<u32>,
    /// Payload rate of each flow, Mbit/s (required).
    pub rate_mbps: f64,
    /// Per-flow rates instead, Mbit/s: flow `k` sends at `flow_rates_mbps[k % len]`
    /// (iperf streams of different `-b`; empty: every flow at `rate_mbps`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flow_rates_mbps: Vec<f64>,
}

impl CbrSender {
    /// Payload rate of flow `flow`, Mbit/s.
    pub fn rate_of(&self, flow: usize) -> f64 {
        if self.flow_rates_mbps.is_empty() {
            self.rate_mbps
        } else {
            self.flow_rates_mbps[flow % self.flow_rates_mbps.len()]
        }
    }
}

/// The receiving host's IPv4 reassembly (`net/ipv4/ip_fragment.c`,
/// `net/ipv4/inet_fragment.c`), with the sysctls' names and defaults
/// (`Documentation/networking/ip-sysctl.rst`). It matters only when datagrams
/// are fragmented: a `cbr` sender of UDP whose `chunk_bytes` + 28 exceed the MTU.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct IpFrag {
    /// `net.ipv4.ipfrag_time`, seconds: a queue not completed this long after it
    /// was created is destroyed (`ip_expire`; `IP_FRAG_TIME` = 30 s). Linux does not
    /// extend it per fragment (`ipv4_frags_init_net`: "RFC791 is wrong proposing to
    /// prolongate timer each fragment arrival").
    #[serde(default = "default_ipfrag_time")]
    pub ipfrag_time: f64,
    /// `net.ipv4.ipfrag_max_dist` (default 64; 0 disables): when more than this many
    /// fragments from the same source arrived between two fragments of one queue,
    /// the queue's fragments are dropped and it starts again (`ip_frag_too_far`,
    /// `ip_frag_reinit`).
    #[serde(default = "default_ipfrag_max_dist")]
    pub ipfrag_max_dist: u32,
    /// `net.ipv4.ipfrag_high_thresh`, bytes of fragment memory (skb truesize plus
    /// each queue's struct): 4 MiB in 3.x (`ipv4_frags_init_net`: 4 * 1024 * 1024)
    /// and today.
    #[serde(default = "default_ipfrag_high_thresh")]
    pub ipfrag_high_thresh: u64,
    /// `net.ipv4.ipfrag_low_thresh`: unset (the default) is Linux since 4.17, where
    /// over `ipfrag_high_thresh` every fragment is refused (`inet_frag_find` returns
    /// NULL) until queues complete or expire, and this sysctl is obsolete. Set, it
    /// is the older kernels' evictor (3.11, the seed's: 3 MiB): over `high_thresh`
    /// the least recently used queues are destroyed until memory is below it
    /// (`ip_evictor` → `inet_frag_evictor`, called on every fragment by `ip_defrag`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipfrag_low_thresh: Option<u64>,
    /// Memory a received fragment holds (`skb->truesize`): 2944 for a 1500-byte frame
    /// in `ipv4_frags_init_net`'s comment ("1500 truesize == 2944"); the driver's
    /// receive buffer decides it, so it is a knob.
    #[serde(default = "default_frag_truesize")]
    pub truesize_bytes: u32,
    /// Memory of one queue (`sizeof(struct ipq)`, 200 in the same comment), charged
    /// when the queue is made (`inet_frag_alloc`: `add_frag_mem_limit(q, f->qsize)`).
    #[serde(default = "default_ipq_bytes")]
    pub queue_bytes: u32,
}

impl Default for IpFrag {
    fn default() -> IpFrag {
        IpFrag {
            ipfrag_time: default_ipfrag_time(),
            ipfrag_max_dist: default_ipfrag_max_dist(),
            ipfrag_high_thresh: default_ipfrag_high_thresh(),
            ipfrag_low_thresh: None,
            truesize_bytes: default_frag_truesize(),
            queue_bytes: default_ipq_bytes(),
        }
    }
}

fn default_ipfrag_time() -> f64 {
    30.0
}
fn default_ipfrag_max_dist() -> u32 {
    64
}
fn default_ipfrag_high_thresh() -> u64 {
    4 * 1024 * 1024
}
fn default_frag_truesize() -> u32 {
    2944
}
fn default_ipq_bytes() -> u32 {
    200
}

/// `kind = "tcp"`: a model of Linux's TCP; field names are Linux's sysctl names
/// where Linux has one (`Documentation/networking/ip-sysctl.rst`), with its defaults.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TcpSender {
    /// Payload bytes per segment (default: the smallest link MTU − IP/TCP headers − 12
    /// bytes of timestamp option: 1448 on a 1500-byte MTU).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mss: Option<u32>,
    /// `net.ipv4.tcp_congestion_control`.
    #[serde(default = "default_cc")]
    pub tcp_congestion_control: String,
    /// HyStart in CUBIC (the `tcp_cubic` module's `hystart`, on by default).
    #[serde(default = "yes")]
    pub hystart: bool,
    /// Initial congestion window, segments (Linux: 10, RFC 6928).
    #[serde(default = "default_initial_cwnd")]
    pub initial_cwnd: u32,
    /// `net.ipv4.tcp_reordering`: initial reordering degree (duplicate-ACK threshold).
    #[serde(default = "default_reordering")]
    pub tcp_reordering: u32,
    /// `net.ipv4.tcp_max_reordering`.
    #[serde(default = "default_max_reordering")]
    pub tcp_max_reordering: u32,
    /// `net.ipv4.tcp_recovery` (include/net/tcp.h): bit 0x1 enables RACK loss detection, 0x2
    /// keeps its reordering window static, 0x4 keeps the window once dupthresh segments are SACKed.
    #[serde(default = "default_recovery")]
    pub tcp_recovery: u32,
    /// `net.ipv4.tcp_early_retrans`: 3 or 4 enable tail loss probes; with `early_retransmit`, 1 to 3
    /// also pick its form (0 and 4: none).
    #[serde(default = "default_early_retrans")]
    pub tcp_early_retrans: u32,
    /// How the tail loss probe's timeout is reckoned (`tcp_schedule_loss_probe`): `current`
    /// (Linux since its µs patch of late 2023: 2·SRTT + 2 ms, or + `rto_min_ms` with one segment
    /// out) or `linux-3.10` (TLP as it came, in 3.10, until a 2017 patch: the larger of 2·SRTT and
    /// `msecs_to_jiffies(10)`, on the bond's `hz`; with one segment out at least 1.5·SRTT +
    /// `TCP_DELACK_MAX`, 200 ms). The kernels between (2·SRTT + 2 jiffies) are not modelled.
    #[serde(default)]
    pub tlp_timeout: TlpTimeout,
    /// `net.ipv4.tcp_fack`: forward-acknowledgement loss detection (FACK), without RACK only.
    /// Linux's default until 4.11 (commit 94bdc9785a11 turned it off), removed in 4.15
    /// (713bafea9292): a segment is lost once a SACKed one lies `tcp_reordering` or more
    /// segments above it, whether those between are SACKed or not (`tcp_dupack_heuristics`,
    /// `tcp_update_scoreboard`), so one SACK can start fast recovery; turned off for the
    /// connection once reordering is detected (`tcp_update_reordering` → `tcp_disable_fack`).
    #[serde(default)]
    pub tcp_fack: bool,
    /// RFC 5827 early retransmit as Linux 3.5 to 4.10 ran it (eed530b6c676; removed in 4.11 by
    /// bec41a11dd3d), without RACK only: with fewer than 4 segments out, at least one SACKed and one not, none
    /// retransmitted and nothing new the windows let out (`tcp_time_to_recover`'s Trick#6), recovery
    /// starts at once (`tcp_early_retrans` = 1) or after max(SRTT/4, 2 ms) in jiffies of the bond's
    /// `hz` (2 and 3, the RFC's mitigation A.3: `tcp_pause_early_retransmit`, unless the RTO comes
    /// first); 0 and 4 leave it off. Off for the connection once it sees reordering
    /// (`tcp_update_reordering` → `tcp_disable_early_retrans`), and from the start unless
    /// `tcp_reordering` is 3 (`tcp_enable_early_retrans`).
    #[serde(default)]
    pub early_retransmit: bool,
    /// Linux's entry to recovery before 4a7f60094411 ("tcp: remove RFC4653 NCR", 2017), without
    /// RACK only: with no more segments out than the reordering degree, at least half of them and
    /// `tcp_reordering` SACKed, and nothing new the windows let out (`tcp_time_to_recover`'s
    /// Trick#4), a raised degree does not hold recovery back.
    #[serde(default)]
    pub ncr: bool,
    /// Linux's forward retransmission before 4.11 (840a3cbe8969 "tcp: remove forward retransmit
    /// feature"), without RACK only: in Recovery, once the lost segments are sent again and no
    /// new data may go (`tcp_can_forward_retransmit`), the segments below the highest SACK that
    /// are neither SACKed nor sent again already go again, as cwnd allows
    /// (`tcp_xmit_retransmit_queue`).
    #[serde(default)]
    pub forward_retransmit: bool,
    /// Whether a timeout may be undone (`tcp_enter_loss`'s undo marker), by kernel era: `current`
    /// (Linux's rule after 3.15, read in 3.18's source: a timeout that starts a new reduction sets the
    /// marker, `tcp_init_undo`, and a repeated one keeps it), `linux-3.13` (3.10 to 3.13, and the
    /// kernels before: every timeout sets the marker to `snd_una` and voids it when a segment not
    /// yet acknowledged was ever retransmitted, `TCPCB_RETRANS`, so no second timeout is undone
    /// by timestamps or D-SACKs, F-RTO's undo aside; that era's loss probe marked nothing, as
    /// `__tcp_retransmit_skb` set `TCPCB_EVER_RETRANS` only from 3.14) or `linux-3.15` (3.14 and
    /// 3.15: voided only while a retransmission is in flight, `TCPCB_SACKED_RETRANS`). The era also
    /// says whether an ACK that carries a D-SACK is news to `tcp_fastretrans_alert` (today's
    /// `FLAG_CA_ALERT` holds `FLAG_DSACKING_ACK`; 3.x's did not, so in Open a D-SACK on an ACK that
    /// moves snd_una on undid only at the next dubious ACK), and whether the timeout's undo
    /// (`tcp_try_undo_loss`) is tried on every ACK in Loss (3.10 to 3.18) or only on one that moves
    /// snd_una (today's). The two older rules are modelled without RACK only.
    #[serde(default)]
    pub undo: UndoEra,
    /// TCP small queues (`tcp_small_queue_check`) by kernel era: `current` (today's: about 1 ms of
    /// data, `max(2 buffers, pacing rate >> 10)`, at most `tcp_limit_output_bytes`, doubled for a
    /// retransmission, which waits too) or `linux-3.12` (3.12 to 3.18, read in 3.13's and 3.18's
    /// `tcp_write_xmit`: at least `tcp_limit_output_bytes`, 128 KB then, or the pacing rate (200%
    /// of cwnd·mss/srtt) >> 10; retransmissions never wait). 3.6 to 3.11 held at a fixed
    /// `tcp_limit_output_bytes`, the same below 0.5 Gbit/s of pacing; 3.12-3.15 kept SRTT in
    /// jiffies, which the model does not.
    #[serde(default)]
    pub small_queues: SmallQueues,
    /// `net.ipv4.tcp_frto`: F-RTO spurious-timeout detection (RFC 5682; Linux's 2 is
    /// the SACK-enhanced version, 0 turns it off).
    #[serde(default = "default_frto")]
    pub tcp_frto: u32,
    /// `net.ipv4.tcp_sack` (only `true` is modelled: Linux's default).
    #[serde(default = "yes")]
    pub tcp_sack: bool,
    /// `net.ipv4.tcp_dsack`.
    #[serde(default = "yes")]
    pub tcp_dsack: bool,
    /// Delayed ACKs at the receiver (false: an ACK per segment, as `TCP_QUICKACK`).
    #[serde(default = "yes")]
    pub delayed_ack: bool,
    /// `TCP_NODELAY`: send sub-MSS segments at once. Off by default, as on Linux: Nagle's
    /// algorithm (Minshall's variant, `tcp_nagle_check`) holds a small segment while an
    /// earlier small one is unacknowledged. Only application writes smaller than the
    /// connection's stream (a `pingpong` token) make such segments.
    #[serde(default)]
    pub nodelay: bool,
    /// Minimum retransmission timeout, ms (the `rto_min` route option; `TCP_RTO_MIN`).
    #[serde(default = "default_rto_min_ms")]
    pub rto_min_ms: f64,
    /// `net.ipv4.tcp_retries2`: a connection whose retransmissions go unanswered is given up at
    /// the first timeout as long after its first retransmission as this many timeouts take when
    /// the first fires after 200 ms and each doubles it up to 120 s (`tcp_model_timeout`): 924.6 s
    /// for Linux's 15; operators lower it (RFC 1122 §4.2.3.5 asks for at least 100 s) to drop
    /// dead connections sooner.
    #[serde(default = "default_retries2")]
    pub tcp_retries2: u32,
    /// `net.ipv4.tcp_moderate_rcvbuf`: receive-buffer autotuning.
    #[serde(default = "yes")]
    pub tcp_moderate_rcvbuf: bool,
    /// `net.ipv4.tcp_rmem`: min, default, max receive buffer, bytes.
    #[serde(default = "default_tcp_rmem")]
    pub tcp_rmem: [u64; 3],
    /// `net.ipv4.tcp_wmem`: min, default, max send buffer, bytes.
    #[serde(default = "default_tcp_wmem")]
    pub tcp_wmem: [u64; 3],
    /// How ACKs return: `links` (reverse links, picked by the switch's hash) or
    /// `ideal` (after the chosen link's propagation delay, no queue, no loss).
    #[serde(default)]
    pub ack_path: AckPath,
    /// Segmentation offload (TSO/GSO): the stack hands the bond buffers of up to
    /// 64 KB sized by `tcp_tso_autosize`, and balance-rr stripes per buffer. Off
    /// by default, as on a TUN path; real NICs have it on.
    #[serde(default)]
    pub gso: bool,
    /// `net.ipv4.tcp_limit_output_bytes`: the most a connection keeps queued below
    /// TCP (TCP small queues; 4 MiB since Linux 6.16, 1 MiB before).
    #[serde(default = "default_limit_output_bytes")]
    pub tcp_limit_output_bytes: u64,
    /// `net.ipv4.tcp_no_metrics_save`: off (Linux's default), a connection that closes leaves its
    /// destination's entry in the TCP metrics cache (`tcp_update_metrics`) what it learnt, which
    /// the next connection to that client starts from (`tcp_init_metrics`): its reordering degree,
    /// and its slow-start threshold unless `tcp_no_ssthresh_metrics_save`.
    #[serde(default)]
    pub tcp_no_metrics_save: bool,
    /// `net.ipv4.tcp_no_ssthresh_metrics_save`: on (Linux's default since 5.6), the cache keeps no
    /// slow-start threshold; off (3.x, which had no such switch), a connection starts with the
    /// threshold the ones before it left, and so leaves slow start early.
    #[serde(default = "yes")]
    pub tcp_no_ssthresh_metrics_save: bool,
    /// Record every open connection's cwnd, ssthresh, RTT, flight and state this
    /// often, milliseconds (the `tcp_trace` table; at most a million rows). Off
    /// when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_ms: Option<f64>,
}

fn default_limit_output_bytes() -> u64 {
    4 << 20
}

/// Declares an enum of kernel eras read from its name only (a plain string; serde's enum forms
/// would say "expected unit" of a table), its first variant the default, and a wrong name
/// answered with the names allowed ([`by_name`]).
macro_rules! named_enum {
    ($(#[$meta:meta])* pub enum $name:ident {
        $(#[$first_meta:meta])* $first:ident = $first_text:literal,
        $($(#[$vmeta:meta])* $variant:ident = $text:literal,)*
    }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
        #[serde(try_from = "String")]
        pub enum $name {
            $(#[$first_meta])*
            #[default]
            #[serde(rename = $first_text)]
            $first,
            $($(#[$vmeta])* #[serde(rename = $text)] $variant,)*
        }

        impl TryFrom<String> for $name {
            type Error = String;

            fn try_from(name: String) -> std::result::Result<Self, String> {
                by_name(&name, &[($first_text, $name::$first), $(($text, $name::$variant)),*])
            }
        }
    };
}

named_enum! {
    /// The tail loss probe's timeout rule, by kernel era ([`TcpSender::tlp_timeout`]).
    pub enum TlpTimeout {
        /// 2·SRTT + `TCP_TIMEOUT_MIN_US` (2 ms), or + `rto_min` with one segment out.
        Current = "current",
        /// max(2·SRTT, 10 ms in whole jiffies), with one segment out at least 1.5·SRTT + 200 ms.
        Linux310 = "linux-3.10",
    }
}

named_enum! {
    /// The kernel era of the undo rules ([`TcpSender::undo`]).
    pub enum UndoEra {
        /// Today's Linux (a new reduction's timeout sets the undo marker; a repeated one keeps it).
        Current = "current",
        /// Linux 3.10 to 3.13 (every timeout sets it, void if a segment out was ever retransmitted).
        Linux313 = "linux-3.13",
        /// Linux 3.14 and 3.15 (every timeout sets it, void while a retransmission is in flight).
        Linux315 = "linux-3.15",
    }
}

named_enum! {
    /// TCP small queues' rule by kernel era ([`TcpSender::small_queues`]).
    pub enum SmallQueues {
        /// Today's: about 1 ms of data, at most `tcp_limit_output_bytes`; retransmissions wait too.
        Current = "current",
        /// 3.12 to 3.18: at least `tcp_limit_output_bytes`; retransmissions never wait.
        Linux312 = "linux-3.12",
    }
}

/// The value named `name` in `names`, else an error listing the names ("expected "a", "b" or
/// "c", got ...") for an enum read from its name only.
fn by_name<T: Copy>(name: &str, names: &[(&str, T)]) -> std::result::Result<T, String> {
    if let Some(&(_, value)) = names.iter().find(|(n, _)| *n == name) {
        return Ok(value);
    }
    let quoted: Vec<String> = names.iter().map(|(n, _)| format!("{n:?}")).collect();
    let (last, rest) = quoted.split_last().expect("at least one name");
    let list = if rest.is_empty() { last.clone() } else { format!("{} or {last}", rest.join(", ")) };
    Err(format!("expected {list}, got {name:?}"))
}

/// How a client's ACKs reach the server.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum AckPath {
    /// Through the reverse links: rate, queue and delay, as data.
    #[default]
    Links,
    /// After the link's propagation delay only (isolates the forward path).
    Ideal,
}

fn yes() -> bool {
    true
}
fn default_cc() -> String {
    "cubic".to_string()
}
fn default_initial_cwnd() -> u32 {
    10
}
fn default_reordering() -> u32 {
    3
}
fn default_max_reordering() -> u32 {
    300
}
fn default_recovery() -> u32 {
    1
}
fn default_early_retrans() -> u32 {
    3
}
fn default_frto() -> u32 {
    2
}
fn default_retries2() -> u32 {
    15
}

fn default_rto_min_ms() -> f64 {
    200.0
}
fn default_tcp_rmem() -> [u64; 3] {
    [4096, 131_072, 6_291_456]
}
fn default_tcp_wmem() -> [u64; 3] {
    [4096, 16_384, 4_194_304]
}

/// The timestamp option's bytes in every TCP header (RFC 7323, padded).
pub const TCP_TIMESTAMP_BYTES: u32 = 12;

fn default_chunk_bytes() -> u32 {
    1024
}
fn default_tick_ms() -> f64 {
    20.0
}
fn default_packets_per_tick() -> u32 {
    4
}
fn default_window_pkts() -> u32 {
    64
}

impl Default for Sender {
    fn default() -> Self {
        Sender::Paced(from_defaults())
    }
}

impl Sender {
    /// Every kind with its fields, for errors naming a field of another kind.
    const KINDS: &'static [(&'static str, &'static [&'static str])] = &[
        ("paced", &["chunk_bytes", "tick_ms", "packets_per_tick"]),
        ("window", &["chunk_bytes", "message_bytes", "window_pkts", "ack_delay_us"]),
        ("cbr", &["chunk_bytes", "message_bytes", "rate_mbps", "flow_rates_mbps"]),
        (
            "tcp",
            &[
                "mss",
                "tcp_congestion_control",
                "hystart",
                "initial_cwnd",
                "tcp_reordering",
                "tcp_max_reordering",
                "tcp_recovery",
                "tcp_early_retrans",
                "tlp_timeout",
                "tcp_fack",
                "early_retransmit",
                "ncr",
                "forward_retransmit",
                "undo",
                "small_queues",
                "tcp_frto",
                "tcp_sack",
                "tcp_dsack",
                "delayed_ack",
                "nodelay",
                "rto_min_ms",
                "tcp_retries2",
                "tcp_moderate_rcvbuf",
                "tcp_rmem",
                "tcp_wmem",
                "ack_path",
                "gso",
                "tcp_limit_output_bytes",
                "tcp_no_metrics_save",
                "tcp_no_ssthresh_metrics_save",
                "trace_ms",
            ],
        ),
    ];

    /// The kind's name.
    pub fn kind(&self) -> &'static str {
        match self {
            Sender::Paced(_) => "paced",
            Sender::Window(_) => "window",
            Sender::Cbr(_) => "cbr",
            Sender::Tcp(_) => "tcp",
        }
    }

    /// The field that sets [`Sender::chunk_bytes`]: TCP's is its MSS.
    pub fn chunk_field(&self) -> &'static str {
        match self {
            Sender::Tcp(_) => "sender.mss",
            _ => "sender.chunk_bytes",
        }
    }

    /// Payload bytes per packet.
    pub fn chunk_bytes(&self) -> u32 {
        match self {
            Sender::Paced(s) => s.chunk_bytes,
            Sender::Window(s) => s.chunk_bytes,
            Sender::Cbr(s) => s.chunk_bytes,
            Sender::Tcp(s) => s.mss.expect("derived when the scenario is loaded"),
        }
    }

    /// Application write size, if the kind has one.
    pub fn message_bytes(&self) -> Option<u32> {
        match self {
            Sender::Paced(_) => None,
            Sender::Window(s) => s.message_bytes,
            Sender::Cbr(s) => s.message_bytes,
            Sender::Tcp(_) => None,
        }
    }
}

impl TryFrom<serde_json::Map<String, serde_json::Value>> for Sender {
    type Error = String;

    fn try_from(mut map: serde_json::Map<String, serde_json::Value>) -> std::result::Result<Self, String> {
        let kind = take_kind(&mut map, "paced", Sender::KINDS)?;
        let fields = Sender::KINDS.iter().find(|(k, _)| *k == kind).expect("checked").1;
        for key in map.keys() {
            if !fields.contains(&key.as_str()) {
                let owners: Vec<String> = Sender::KINDS
                    .iter()
                    .filter(|(_, f)| f.contains(&key.as_str()))
                    .map(|(k, _)| format!("\"{k}\""))
                    .collect();
                let message = if owners.is_empty() {
                    format!("unknown field `{key}`, expected one of `kind`, {}", quoted(fields))
                } else {
                    format!("only for kind = {}, not \"{kind}\"", owners.join(" or "))
                };
                return Err(nested(key, message));
            }
        }
        let body = serde_json::Value::Object(map);
        Ok(match kind.as_str() {
            "paced" => Sender::Paced(part(body)?),
            "window" => Sender::Window(part(body)?),
            "tcp" => Sender::Tcp(part(body)?),
            _ => Sender::Cbr(part(body)?),
        })
    }
}

/// The transport protocol of the flows (it sets the ports' meaning and header size).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    /// TCP over IPv4: 40 header bytes.
    #[default]
    Tcp,
    /// UDP over IPv4: 28 header bytes.
    Udp,
}

impl Protocol {
    /// IPv4 + transport header bytes: 20 + 20 for TCP, 20 + 8 for UDP.
    pub fn header_bytes(self) -> u32 {
        match self {
            Protocol::Tcp => 40,
            Protocol::Udp => 28,
        }
    }
}

/// Addresses: the server (sender) and its clients, as the hash policies see them.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Network {
    /// Transport protocol.
    pub protocol: Protocol,
    /// IPv4 + transport header bytes per packet (default: 40 for tcp, 28 for udp).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub header_bytes: Option<u32>,
    /// The bond's MAC address (source of every frame).
    pub server_mac: String,
    /// The server's IPv4 address.
    pub server_ip: String,
    /// The server's port (source port of every flow).
    pub server_port: u16,
    /// Client MAC addresses by client number; clients beyond the list get
    /// random locally administered ones from the seed.
    pub client_macs: Vec<String>,
    /// Client IPv4 addresses by client number; clients beyond the list get 10.1.x.y in turn.
    pub client_ips: Vec<String>,
    /// Clients behind a router: every frame goes to this MAC.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub router_mac: Option<String>,
    /// 802.1Q VLAN id of every frame (adds 4 bytes per frame).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vlan: Option<u16>,
}

impl Default for Network {
    fn default() -> Self {
        Network {
            protocol: Protocol::Tcp,
            header_bytes: None,
            server_mac: "00:15:17:b0:26:ad".into(),
            server_ip: "10.0.0.1".into(),
            server_port: 8000,
            client_macs: Vec::new(),
            client_ips: Vec::new(),
            router_mac: None,
            vlan: None,
        }
    }
}

/// The bond: `mode` names a registered scheduler (`bondsim schedulers`), with
/// parameters either in brackets (`"flowlet[gap_us=500]"`) or as keys here;
/// `miimon`, `updelay` and `downdelay` configure the link monitor of every mode.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Bond {
    /// Scheduler name, optionally with `[key=value,...]` parameters.
    pub mode: String,
    /// Link monitor period, milliseconds (Linux default 100; 0 = no monitoring:
    /// the bond never notices a failure).
    #[serde(default = "default_miimon")]
    pub miimon: f64,
    /// Time a link must be back before the bond uses it, ms (rounded down to a multiple of miimon).
    #[serde(default)]
    pub updelay: f64,
    /// Time a link must be gone before the bond stops using it, ms (rounded down to a multiple of miimon).
    #[serde(default)]
    pub downdelay: f64,
    /// The ARP monitor's period, ms (0 = off; exclusive with `miimon`, as in Linux).
    #[serde(default)]
    pub arp_interval: f64,
    /// The IPv4 addresses the ARP monitor probes (at most 16, Linux's `BOND_MAX_ARP_TARGETS`).
    #[serde(default)]
    pub arp_ip_target: Vec<String>,
    /// Which ARP traffic counts as a sign of life (Linux's `arp_validate`).
    #[serde(default)]
    pub arp_validate: ArpValidate,
    /// Whether one target answering (`any`) or every target (`all`) keeps a link up
    /// (Linux's `arp_all_targets`: active-backup's monitor only; `slave_last_rx` then takes the
    /// oldest validated ARP of the targets, so a slave that does not validate is failed).
    #[serde(default)]
    pub arp_all_targets: ArpAllTargets,
    /// ARP monitor intervals without a sign of life before a link is failed (Linux's
    /// `arp_missed_max`, 1 to 255).
    #[serde(default = "default_arp_missed_max")]
    pub arp_missed_max: u32,
    /// 802.3ad: how often the partner sends LACPDUs (`slow`: every 30 s, `fast`: every
    /// second) and so how soon a silent partner times out (90 s, 3 s).
    #[serde(default)]
    pub lacp_rate: LacpRate,
    /// teamd's link watch (`teamd:*` modes), replacing miimon (libteam `teamd_link_watch.c`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_watch: Option<LinkWatch>,
    /// Gratuitous ARPs the bond sends on the new active slave after an active-backup
    /// failover (Linux `num_grat_arp` / `num_unsol_na`, default 1, at most 255;
    /// `bond_change_active_slave` sets `send_peer_notif`). An unaware switch learns the
    /// bond's MAC on the new port from the first one.
    #[serde(default = "default_num_grat_arp")]
    pub num_grat_arp: u32,
    /// Interval between those ARPs, ms (Linux `peer_notif_delay`: 0 = one per miimon period;
    /// `bond_should_notify_peers` sends every `max(1, peer_notif_delay / miimon)` ticks).
    #[serde(default)]
    pub peer_notif_delay: f64,
    /// The kernel's timer tick rate (`CONFIG_HZ`: 100, 250, 300 or 1000). The miimon and ARP
    /// monitors re-arm `msecs_to_jiffies(interval)` jiffies ahead, so their intervals round up
    /// to whole jiffies (`monitor::jiffies_period`: miimon 1 ms checks every 4 ms at 250). 1000
    /// (Fedora, RHEL, Ubuntu from 24.10) keeps every whole-ms interval as set; Debian's and
    /// older Ubuntus' kernels run at 250. teamd's link watches are timers of their own (ms);
    /// TCP's timers stay exact (only `sender.tlp_timeout = "linux-3.10"`'s floor counts jiffies).
    #[serde(default = "default_hz")]
    pub hz: u32,
    /// The scheduler's parameters, checked against its declaration.
    #[serde(flatten)]
    pub options: BTreeMap<String, serde_json::Value>,
}

fn default_miimon() -> f64 {
    100.0
}

fn default_hz() -> u32 {
    1000
}

fn default_arp_missed_max() -> u32 {
    2
}

/// Linux's `arp_validate` values (Documentation/networking/bonding.rst): which slaves
/// validate ARP traffic (`active`, `backup`, `all`), and whether the others count only
/// ARP frames (`filter*`) or any frame (`none`, `active`, `backup`).
/// Current Linux accepts it in every mode that runs the ARP monitor (bonding.rst: "validated in
/// any mode that supports arp monitoring"); older kernels took it in active-backup only. The
/// model is current Linux's: no mode is refused for it.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum ArpValidate {
    /// Any frame received counts.
    #[default]
    None,
    /// The active slave counts only validated ARP; the others any frame.
    Active,
    /// Backup slaves count only validated ARP; the active any frame.
    Backup,
    /// Every slave counts only validated ARP.
    All,
    /// Every slave counts only ARP frames, unvalidated.
    Filter,
    /// `filter`, and the active slave validates.
    FilterActive,
    /// `filter`, and backup slaves validate.
    FilterBackup,
}

/// Linux's `arp_all_targets`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum ArpAllTargets {
    /// A link is up if any target answers.
    #[default]
    Any,
    /// A link is up only if every target answers.
    All,
}

/// A teamd link watch (`link_watch.name` in teamd's JSON configuration).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "name", rename_all = "snake_case", deny_unknown_fields)]
pub enum LinkWatch {
    /// `ethtool`: the port's carrier as the kernel reports it (at once, by netlink), a change
    /// taking effect after `delay_up` / `delay_down` ms.
    Ethtool {
        /// ms a link must be back before the port is used.
        #[serde(default)]
        delay_up: f64,
        /// ms a link must be gone before the port is dropped.
        #[serde(default)]
        delay_down: f64,
    },
    /// `arp_ping`: an ARP request to `target_host` on every port every `interval` ms; a port is
    /// down after more than `missed_max` intervals without a reply, up at the first reply.
    ArpPing {
        /// ms between requests.
        interval: f64,
        /// Intervals without a reply a port survives (teamd's default 3).
        #[serde(default = "default_teamd_missed_max")]
        missed_max: u32,
        /// The IPv4 address probed.
        target_host: String,
    },
}

fn default_teamd_missed_max() -> u32 {
    3
}

/// Linux's `lacp_rate`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum LacpRate {
    /// LACPDUs every 30 s, timeout 90 s.
    #[default]
    Slow,
    /// LACPDUs every second, timeout 3 s.
    Fast,
}

fn default_num_grat_arp() -> u32 {
    1
}

/// One bonded link (or `count` identical ones): what every link has, and its
/// model chosen by `kind` — `paced` (the thesis's interface, one send per
/// `period_ms`) or `rate` (bit rate, transmit queue, wire). `kind` may be left
/// out: a link with `rate_mbps` is then a rate link, any other a paced one.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(try_from = "serde_json::Map<String, serde_json::Value>")]
pub struct LinkSpec {
    /// What every kind of link has.
    #[serde(flatten)]
    pub base: LinkBase,
    /// The link's model and its own fields.
    #[serde(flatten)]
    pub model: LinkModel,
}

/// The fields every link has, whatever its kind.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct LinkBase {
    /// Number of identical links this entry stands for.
    pub count: u32,
    /// Label used in outputs (default `linkN`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Uniform slowdown: send times are multiplied by this (2 = half speed).
    pub slowdown: f64,
    /// Extra slowdowns over time windows.
    pub slow_windows: Vec<SlowWindow>,
    /// Intermittent on/off slowdowns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intermittent: Option<Intermittent>,
    /// Carrier lost at `down_s`, back at `up_s` (never, if absent).
    pub failures: Vec<Failure>,
    /// Carrier lost and restored at random: exponential up and down times.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub random_failures: Option<RandomFailures>,
    /// How much later than the physical change the NIC reports a carrier change, ms (0 =
    /// at once). The bond's miimon reads `netif_carrier_ok` (`use_carrier = 1`), which the
    /// driver sets from its link-status-change interrupt or watchdog: e1000e, igb and igc
    /// run their watchdog one jiffy after the LSC interrupt (`mod_timer(&adapter->watchdog_timer,
    /// jiffies + 1)` in `e1000_intr`/`igb_msix_other`) and it calls `netif_carrier_off`; the PHY
    /// may take longer still to declare the link down (IEEE 802.3 §40.4.2.5 leaves it to the
    /// implementer; Jay Vosburgh on the e1000 list, 2012-12-21: "the link down detection using
    /// netif_carrier_ok() is always about 350 msec" with an e1000e). Packets in flight are
    /// lost at the physical instant all the same.
    pub carrier_latency_ms: f64,
    /// Repeated short losses of carrier.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flapping: Option<Flapping>,
}

impl Default for LinkBase {
    fn default() -> Self {
        LinkBase {
            count: 1,
            name: None,
            slowdown: 1.0,
            slow_windows: Vec::new(),
            intermittent: None,
            failures: Vec::new(),
            random_failures: None,
            carrier_latency_ms: 0.0,
            flapping: None,
        }
    }
}

/// A link's model.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LinkModel {
    /// The thesis's interface: one send opportunity per period.
    Paced(PacedModel),
    /// A real link: bit rate, queue, wire.
    Rate(RateModel),
}

/// `kind = "paced"`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PacedModel {
    /// Time between sends, ms (the thesis's slow interface: 82).
    #[serde(default = "default_period_ms")]
    pub period_ms: f64,
    /// Replayed send timing, seconds between successive sends (one per send,
    /// cycling). The front fills it from `trace_file`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_intervals_s: Option<Vec<f64>>,
}

/// `kind = "rate"`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RateModel {
    /// Bit rate, Mbit/s (required).
    pub rate_mbps: f64,
    /// Bytes added to each frame on the wire: preamble 8 + Ethernet header 14 + FCS 4 + gap 12 = 38.
    #[serde(default = "default_overhead_bytes")]
    pub overhead_bytes: u32,
    /// Largest IP packet, bytes; packets never exceed it.
    #[serde(default = "default_mtu")]
    pub mtu: u32,
    /// Propagation delay, microseconds.
    #[serde(default)]
    pub delay_us: f64,
    /// Fixed cost per frame (NIC/driver), microseconds.
    #[serde(default)]
    pub per_packet_us: f64,
    /// Random extra delay per packet; a link never reorders its own packets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter: Option<Jitter>,
    /// Transmit queue length, packets (drop-tail; Linux default 1000).
    #[serde(default = "default_txqueuelen")]
    pub txqueuelen: u32,
    /// Probability in [0, 1) that a frame is lost on the wire, each frame
    /// independently (Bernoulli; ns-3's `RateErrorModel` with `ErrorUnit =
    /// packet`, netem's `loss random PERCENT` without correlation). A lost frame
    /// takes its transmit time on the link, as a corrupted one does, and never
    /// arrives. 0 (the default) draws no random number at all.
    #[serde(default)]
    pub loss: f64,
    /// Bursty loss instead of `loss` (giving both is an error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_model: Option<LossModel>,
}

/// A frame-loss process with memory: losses that come in bursts.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LossModel {
    /// The Gilbert–Elliott two-state Markov chain.
    GilbertElliott(GilbertElliott),
}

/// `kind = "gilbert_elliott"`: a two-state (good / bad) Markov chain stepped
/// once per frame, losing each frame with the probability of the state it is
/// sent in (E. N. Gilbert, "Capacity of a burst-noise channel", Bell Syst.
/// Tech. J. 39, 1960; E. O. Elliott, "Estimates of error rates for codes on
/// burst-noise channels", Bell Syst. Tech. J. 42, 1963). With the defaults
/// `loss_good = 0`, `loss_bad = 1` it is Gilbert's model (every frame sent in
/// the bad state is lost), the parameterisation of G. Hasslinger and
/// O. Hohlfeld, "The Gilbert-Elliott model for packet loss in real time
/// services on the Internet", MMB 2008. RFC 3611 §4.7.2 (RTCP XR burst
/// metrics: burst and gap density and duration) describes measured loss in
/// the same burst / gap terms.
///
/// Long-run loss rate: `π_bad·loss_bad + π_good·loss_good`, with `π_bad = p / (p + r)`,
/// `π_good = r / (p + r)`; the bad state lasts `1/r` frames on average (the mean
/// burst length when `loss_bad = 1`, `loss_good = 0`), the good state `1/p`.
///
/// Linux netem's `loss gemodel P R 1-H 1-K` (percentages) is the same chain:
/// `p = P/100`, `r = R/100`, `loss_bad = (1-H)/100`, `loss_good = (1-K)/100`
/// (netem's `h` and `k` are the probabilities of *delivering* a frame in the
/// bad and good state; iproute2 passes `1-h` and `1-k`, the loss probabilities,
/// and `sch_netem.c`'s `loss_gilb_ell` draws the transition, then the loss with
/// the probability of the state the frame was sent in, starting in the good
/// state, as here). netem's defaults differ: `R` defaults to `1 - P` there, and
/// is required here. ns-3's `BurstErrorModel` is not this chain: it starts a
/// burst with probability `BurstRate` and draws its length from `BurstSize`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GilbertElliott {
    /// P(good → bad) per frame, in [0, 1].
    pub p: f64,
    /// P(bad → good) per frame, in (0, 1] (the bad state lasts 1/r frames on average).
    pub r: f64,
    /// Loss probability of a frame sent in the good state, in [0, 1).
    #[serde(default)]
    pub loss_good: f64,
    /// Loss probability of a frame sent in the bad state, in [0, 1].
    #[serde(default = "default_loss_bad")]
    pub loss_bad: f64,
}

fn default_loss_bad() -> f64 {
    1.0
}

fn default_period_ms() -> f64 {
    20.0
}
fn default_overhead_bytes() -> u32 {
    38
}
fn default_mtu() -> u32 {
    1500
}
fn default_txqueuelen() -> u32 {
    1000
}

impl LinkSpec {
    /// The name of link `id` (its place after `count` expansion), as the outputs, the captures and
    /// `bond.primary` know it: `name`, or `name` and the id when the spec makes several links, else
    /// `link` and the id.
    pub fn link_name(&self, id: usize) -> String {
        match (&self.base.name, self.base.count) {
            (Some(name), 1) => name.clone(),
            (Some(name), _) => format!("{name}{id}"),
            (None, _) => format!("link{id}"),
        }
    }

    /// Every kind with its own fields.
    const KINDS: &'static [(&'static str, &'static [&'static str])] = &[
        ("paced", &["period_ms", "trace_intervals_s"]),
        (
            "rate",
            &[
                "rate_mbps",
                "overhead_bytes",
                "mtu",
                "delay_us",
                "per_packet_us",
                "jitter",
                "txqueuelen",
                "loss",
                "loss_model",
            ],
        ),
    ];
    /// The fields of [`LinkBase`].
    const BASE: &'static [&'static str] = &[
        "count",
        "name",
        "slowdown",
        "slow_windows",
        "intermittent",
        "failures",
        "random_failures",
        "carrier_latency_ms",
        "flapping",
    ];

    /// A paced link of `period_ms` (the thesis's interface).
    pub fn paced(period_ms: f64) -> LinkSpec {
        LinkSpec {
            base: LinkBase::default(),
            model: LinkModel::Paced(PacedModel { period_ms, trace_intervals_s: None }),
        }
    }

    /// A rate link of `rate_mbps` with every other field at its default.
    pub fn rate(rate_mbps: f64) -> LinkSpec {
        let mut model: RateModel = from_defaults_with("rate_mbps", rate_mbps.into());
        model.rate_mbps = rate_mbps;
        LinkSpec { base: LinkBase::default(), model: LinkModel::Rate(model) }
    }

    /// The kind's name.
    pub fn kind(&self) -> &'static str {
        match self.model {
            LinkModel::Paced(_) => "paced",
            LinkModel::Rate(_) => "rate",
        }
    }
}

impl TryFrom<serde_json::Map<String, serde_json::Value>> for LinkSpec {
    type Error = String;

    fn try_from(mut map: serde_json::Map<String, serde_json::Value>) -> std::result::Result<Self, String> {
        let inferred = if map.contains_key("rate_mbps") { "rate" } else { "paced" };
        let kind = take_kind(&mut map, inferred, LinkSpec::KINDS)?;
        let own = LinkSpec::KINDS.iter().find(|(k, _)| *k == kind).expect("checked").1;
        let mut base = serde_json::Map::new();
        for key in LinkSpec::BASE {
            if let Some(value) = map.remove(*key) {
                base.insert((*key).to_string(), value);
            }
        }
        for key in map.keys() {
            if !own.contains(&key.as_str()) {
                let other = LinkSpec::KINDS.iter().find(|(_, f)| f.contains(&key.as_str()));
                let message = match other {
                    Some((other, _)) => {
                        format!("is a {other}-link field (kind = \"{other}\"), and this link is kind = \"{kind}\"")
                    }
                    None => format!(
                        "unknown field `{key}`, expected one of `kind`, {}, {}",
                        quoted(own),
                        quoted(LinkSpec::BASE)
                    ),
                };
                return Err(nested(key, message));
            }
        }
        let body = serde_json::Value::Object(map);
        let model = match kind.as_str() {
            "paced" => LinkModel::Paced(part(body)?),
            _ => LinkModel::Rate(part(body)?),
        };
        Ok(LinkSpec { base: part(serde_json::Value::Object(base))?, model })
    }
}

/// Separates a nested field path from its message in errors raised inside a
/// `try_from` (serde reports them at the enclosing value; [`Scenario::from_json`]
/// joins both paths).
const PATH_SEP: char = '\u{1f}';

fn nested(path: &str, message: impl std::fmt::Display) -> String {
    format!("{path}{PATH_SEP}{message}")
}

fn quoted(fields: &[&str]) -> String {
    fields.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", ")
}

/// Removes `kind` from `map` (or takes `default`); it must be one of `kinds`.
fn take_kind(
    map: &mut serde_json::Map<String, serde_json::Value>,
    default: &str,
    kinds: &[(&str, &[&str])],
) -> std::result::Result<String, String> {
    let names: Vec<&str> = kinds.iter().map(|(k, _)| *k).collect();
    match map.remove("kind") {
        None => Ok(default.to_string()),
        Some(serde_json::Value::String(kind)) if names.contains(&kind.as_str()) => Ok(kind),
        Some(other) => Err(nested("kind", format!("unknown kind {other}, expected one of {}", quoted(&names)))),
    }
}

/// Deserialises one part of a tagged value, keeping the path of a nested error.
fn part<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> std::result::Result<T, String> {
    serde_path_to_error::deserialize(value).map_err(|err| nested(&dotted(err.path()), err.into_inner()))
}

/// A part of the scenario that is a table of fields. serde's derive also reads a struct from a list
/// of its fields in order (`trace = [5, 2, 100]`, `switch = []`), which no scenario file means.
fn table<'de, D, T>(d: D) -> std::result::Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    use serde::de::Error as _;
    let value = serde_json::Value::deserialize(d)?;
    let got = match &value {
        serde_json::Value::Object(_) => return part(value).map_err(D::Error::custom),
        serde_json::Value::Array(_) => "a list",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Null => "null",
    };
    Err(D::Error::custom(format!("invalid type: {got}, expected a table of fields")))
}

/// A value with every field at its default (the serde attributes are the one place defaults are set).
fn from_defaults<T: serde::de::DeserializeOwned>() -> T {
    serde_json::from_value(serde_json::Value::Object(serde_json::Map::new())).expect("every field has a default")
}

/// Like [`from_defaults`] for a value with one required field.
fn from_defaults_with<T: serde::de::DeserializeOwned>(key: &str, value: serde_json::Value) -> T {
    let mut map = serde_json::Map::new();
    map.insert(key.to_string(), value);
    serde_json::from_value(serde_json::Value::Object(map)).expect("every other field has a default")
}

/// A slowdown factor applied from `start_s` (inclusive) to `end_s` (exclusive).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SlowWindow {
    /// Window start, seconds.
    pub start_s: f64,
    /// Window end, seconds.
    pub end_s: f64,
    /// Factor on send times during the window.
    pub slowdown: f64,
}

/// Alternating slow and normal phases, starting with a normal phase.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Intermittent {
    /// Length of each slow phase (mean length if `random`), seconds.
    pub slow_s: f64,
    /// Length of each normal phase (mean length if `random`), seconds.
    pub normal_s: f64,
    /// Factor on send times during slow phases.
    pub slowdown: f64,
    /// Draw phase lengths from exponential distributions with these means.
    #[serde(default)]
    pub random: bool,
}

/// Random extra delay per packet on a rate link.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Jitter {
    /// Uniform in `[0, max_us]`.
    Uniform { max_us: f64 },
    /// Exponential with mean `mean_us`.
    Exponential { mean_us: f64 },
    /// Normal with standard deviation `sd_us`, folded at zero (|N(0, sd)|).
    Normal { sd_us: f64 },
}

/// One failure of a link: a loss of carrier (`kind = "carrier"`), or a port that keeps its
/// carrier but passes nothing, or only part of its traffic (`kind = "silent"`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Failure {
    /// When the failure starts, seconds.
    pub down_s: f64,
    /// When it ends, seconds (never, if absent).
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub up_s: Option<f64>,
    /// A uniform random offset in [0, jitter_ms) ms, drawn from the stream
    /// `links.{i}.failures.{k}.jitter`, added to `down_s` and `up_s` alike (the failure
    /// lasts as long): the failure falls at any phase of the monitor's period, and a sweep
    /// over `seed` is a Monte Carlo of failure instants. 0 = exactly at `down_s`.
    #[serde(default)]
    pub jitter_ms: f64,
    /// What fails.
    #[serde(default)]
    pub kind: FailureKind,
    /// `silent`: the fraction of frames the port drops (1 = everything), each frame
    /// independently, from the stream `links.{id}.silent`.
    #[serde(default = "default_drop")]
    pub drop: f64,
    /// `silent`: which direction drops: `both`, `out` (host to switch: the bond's
    /// transmissions) or `in` (switch to host: what the bond receives).
    #[serde(default)]
    pub direction: FailureDirection,
}

fn default_drop() -> f64 {
    1.0
}

/// What a [`Failure`] breaks.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// The carrier goes (the NIC reports link down; miimon sees it).
    #[default]
    Carrier,
    /// The carrier stays, frames are dropped: a switch port "suspended", an upstream
    /// not ready. Only monitors that look at traffic (the ARP monitor, LACPDUs) see it.
    Silent,
}

/// The direction a silent failure drops, seen from the bond's host.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum FailureDirection {
    /// Both directions.
    #[default]
    Both,
    /// Host to switch (the forward link: data, ARP probes).
    Out,
    /// Switch to host (the reverse link: ACKs, ARP replies, LACPDUs).
    In,
}

impl FailureDirection {
    /// Whether frames the bond sends (`outgoing`) or receives are dropped.
    pub fn drops(self, outgoing: bool) -> bool {
        match self {
            FailureDirection::Both => true,
            FailureDirection::Out => outgoing,
            FailureDirection::In => !outgoing,
        }
    }
}

/// Repeated short losses of carrier: `count` times, the carrier goes for `down_ms`
/// and comes back for `up_ms`, starting at `start_s`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Flapping {
    /// When the first loss of carrier starts, seconds.
    pub start_s: f64,
    /// How long each loss lasts, ms.
    pub down_ms: f64,
    /// How long the carrier stays between two losses, ms.
    pub up_ms: f64,
    /// Number of losses.
    pub count: u32,
    /// A uniform random offset in [0, jitter_ms) ms added to every instant (stream
    /// `links.{i}.flapping.jitter`), as a failure's `jitter_ms`. 0 = exactly at `start_s`.
    #[serde(default)]
    pub jitter_ms: f64,
}

impl Flapping {
    /// Every (down, up) pair of instants, seconds.
    pub fn windows(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        let cycle = (self.down_ms + self.up_ms) / 1e3;
        (0..self.count).map(move |k| {
            let down = self.start_s + f64::from(k) * cycle;
            (down, down + self.down_ms / 1e3)
        })
    }
}

/// Losses of carrier a `flapping` train may have (each is two events queued at the start).
pub const MAX_FLAPS: u32 = 1_000_000;

/// A link that fails and recovers at random.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RandomFailures {
    /// Mean time between failures (time up), seconds.
    pub mtbf_s: f64,
    /// Mean time to repair (time down), seconds.
    pub mttr_s: f64,
}

impl Scenario {
    /// Parses and checks a scenario given as JSON text; unset fields of the
    /// chosen kinds get their defaults (so the result prints every value in force).
    pub fn from_json(text: &str) -> Result<Scenario> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let mut scenario: Scenario = serde_path_to_error::deserialize(de).map_err(|err| {
            let mut path = dotted(err.path());
            let mut message = err.into_inner().to_string();
            // serde_json appends " at line L column C": positions in generated JSON mean nothing to a user.
            if let Some(cut) = message.rfind(" at line ") {
                message.truncate(cut);
            }
            // An error inside a tagged part (`sender`, a link) carries its own path.
            if let Some((inner, rest)) = message.split_once(PATH_SEP) {
                if !inner.is_empty() {
                    path = if path.is_empty() { inner.to_string() } else { format!("{path}.{inner}") };
                }
                message = rest.to_string();
            }
            if let Some(field) = field_at_fault(text, &path, &message) {
                path = field;
            }
            Error::scenario(path, in_users_words(message))
        })?;
        scenario.fill_derived_defaults();
        scenario.validate()?;
        Ok(scenario)
    }

    /// The scenario as JSON with every default filled in.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a scenario always serialises")
    }

    /// The one default that depends on another field: the header size follows the protocol.
    fn fill_derived_defaults(&mut self) {
        let tcp_options = if matches!(self.sender, Sender::Tcp(_)) { TCP_TIMESTAMP_BYTES } else { 0 };
        let n = &mut self.network;
        // TCP's segments carry the timestamp option in every header (RFC 7323): 52 bytes.
        n.header_bytes.get_or_insert(n.protocol.header_bytes() + tcp_options);
        let header = self.l3_header_bytes();
        let mtu = self.mtu();
        if let Sender::Tcp(t) = &mut self.sender {
            // The MSS a 1500-byte MTU gives with timestamps: 1500 − 52 = 1448.
            t.mss.get_or_insert(mtu.saturating_sub(header).max(1));
        }
    }

    /// Checks values that types alone cannot (positive periods, ranges, names).
    pub fn validate(&self) -> Result<()> {
        if let Some(stop) = self.stop_s {
            duration("stop_s", stop, 1.0, false)?;
        }
        if let Some(from) = self.measure_from_s {
            duration("measure_from_s", from, 1.0, true)?;
            if self.stop_s.is_some_and(|stop| from >= stop) {
                return Err(Error::scenario(
                    "measure_from_s",
                    format!("must be before stop_s ({} s), got {} s", num(self.stop_s.unwrap_or(0.0)), num(from)),
                ));
            }
        }
        at_least("max_events", self.max_events, 1)?;
        self.validate_trace()?;
        self.validate_workload()?;
        self.validate_sender()?;
        self.validate_network()?;
        self.validate_links()?;
        self.validate_ipfrag()?;
        self.validate_switch()?;
        self.validate_bond()
    }

    /// The switch's kind of LAG: `switch.lag`, or when left out an LACP aggregation for a bond
    /// in 802.3ad (Linux's 802.3ad needs an LACP partner: without one every port is an
    /// aggregator of its own and one carries the traffic, `ad_port_selection_logic`) and a
    /// static one for every other mode.
    pub fn lag(&self) -> Lag {
        self.switch.lag.unwrap_or_else(|| {
            let lacp = crate::bond::registry::resolve(&self.bond.mode, &self.bond.options)
                .is_ok_and(|r| r.info.name == "802.3ad");
            if lacp {
                Lag::Lacp
            } else {
                Lag::Static
            }
        })
    }

    fn validate_switch(&self) -> Result<()> {
        let s = &self.switch;
        if !crate::bond::hash::POLICY_NAMES.contains(&s.hash.as_str()) {
            let names = crate::bond::hash::POLICY_NAMES.join(", ");
            return Err(Error::scenario("switch.hash", format!("must be one of {names}, got {:?}", s.hash)));
        }
        duration("switch.forward_delay_s", s.forward_delay_s, 1.0, true)?;
        duration("switch.ageing_s", s.ageing_s, 1.0, false)?;
        let links = self.link_count();
        if let Some(bad) = s.edge_ports.iter().find(|&&p| p >= links) {
            return Err(Error::scenario(
                "switch.edge_ports",
                format!("names link ids 0..{}, got {bad}", links.saturating_sub(1)),
            ));
        }
        if s.stp != Stp::Off && self.lag() != Lag::Unaware {
            return Err(Error::scenario(
                "switch.stp",
                "applies to the bond's ports only without a LAG (switch.lag = \"none\"): a LAG is one bridge port",
            ));
        }
        if s.auto_edge && s.stp != Stp::Rstp {
            return Err(Error::scenario("switch.auto_edge", "is RSTP's: set switch.stp = \"rstp\""));
        }
        Ok(())
    }

    fn validate_ipfrag(&self) -> Result<()> {
        let f = &self.ipfrag;
        duration("ipfrag.ipfrag_time", f.ipfrag_time, 1.0, false)?;
        at_least("ipfrag.truesize_bytes", u64::from(f.truesize_bytes), 1)?;
        if let Some(low) = f.ipfrag_low_thresh {
            if low > f.ipfrag_high_thresh {
                return Err(Error::scenario(
                    "ipfrag.ipfrag_low_thresh",
                    format!("must be at most ipfrag_high_thresh ({}), got {low}", f.ipfrag_high_thresh),
                ));
            }
        }
        // An IPv4 datagram is at most 65535 bytes (RFC 791 §3.1 Total Length).
        let datagram = u64::from(self.chunk_bytes()) + u64::from(self.l3_header_bytes());
        if self.fragments() && datagram > 65535 {
            return Err(Error::scenario(
                "sender.chunk_bytes",
                format!("a UDP datagram is at most 65535 bytes with its headers, got {datagram}"),
            ));
        }
        Ok(())
    }

    fn validate_trace(&self) -> Result<()> {
        let t = &self.trace;
        if let Some(every) = t.link_ms {
            trace_period("trace.link_ms", every)?;
        }
        // Pairs of buckets merge: at least two, and an even number so that every bucket has a partner.
        if t.link_buckets < 2 || t.link_buckets > MAX_TRACE_BUCKETS || t.link_buckets % 2 == 1 {
            return Err(Error::scenario(
                "trace.link_buckets",
                format!("must be an even number from 2 to {MAX_TRACE_BUCKETS}, got {}", t.link_buckets),
            ));
        }
        if t.packets > MAX_TRACE_PACKETS {
            return Err(Error::scenario(
                "trace.packets",
                format!("at most {MAX_TRACE_PACKETS} (one row each, held for the whole run), got {}", t.packets),
            ));
        }
        Ok(())
    }

    fn validate_workload(&self) -> Result<()> {
        let w = match &self.workload {
            Workload::Requests(w) => w,
            Workload::PingPong(p) => return self.validate_pingpong(p),
        };
        at_least("workload.clients", u64::from(w.clients), 1)?;
        at_least("workload.requests", u64::from(w.requests), 1)?;
        // Each request is a flow and each client a pair of addresses, with state for the whole run.
        for (field, value) in [("workload.requests", w.requests), ("workload.clients", w.clients)] {
            if value > MAX_FLOWS {
                return Err(Error::scenario(
                    field,
                    format!("at most {MAX_FLOWS} in one run (each has state for the whole run), got {value}"),
                ));
            }
        }
        let requests = f64::from(w.requests);
        match &w.arrivals {
            Arrivals::AtStart {} => {}
            Arrivals::Batches { size, every_s } => {
                at_least("workload.arrivals.size", u64::from(*size), 1)?;
                duration("workload.arrivals.every_s", *every_s, 1.0, false)?;
                let last = f64::from(w.requests.div_ceil(*size) - 1) * every_s;
                if last > MAX_SECONDS {
                    return Err(Error::scenario(
                        "workload.arrivals.every_s",
                        format!("the last batch would arrive after {} s, more than a year", num(last)),
                    ));
                }
            }
            Arrivals::Closed { active } => at_least("workload.arrivals.active", u64::from(*active), 1)?,
            Arrivals::Poisson { rate_per_s } => {
                positive("workload.arrivals.rate_per_s", *rate_per_s)?;
                if requests / rate_per_s > MAX_SECONDS {
                    return Err(Error::scenario(
                        "workload.arrivals.rate_per_s",
                        format!(
                            "{} requests at {} per second would take {} s to arrive on average, more than a year",
                            w.requests,
                            num(*rate_per_s),
                            num(requests / rate_per_s)
                        ),
                    ));
                }
            }
        }
        if w.direction == Direction::Upload {
            match &self.sender {
                Sender::Tcp(t) if t.ack_path == AckPath::Ideal => {
                    return Err(Error::scenario(
                        "sender.ack_path",
                        "\"ideal\" idealises the clients' return path, which carries an upload's data: \
                         use \"links\" with workload.direction = \"upload\"",
                    ));
                }
                Sender::Tcp(_) => {}
                _ => {
                    return Err(Error::scenario(
                        "workload.direction",
                        format!(
                            "\"upload\" needs sender.kind = \"tcp\" (the clients send through their TCP stacks), \
                             not \"{}\"",
                            self.sender.kind()
                        ),
                    ));
                }
            }
        }
        match &w.file_size {
            FileSize::Fixed { .. } => {}
            FileSize::Uniform { min_bytes, max_bytes } => {
                if min_bytes > max_bytes {
                    return Err(Error::scenario(
                        "workload.file_size.max_bytes",
                        format!("must be >= min_bytes ({min_bytes}), got {max_bytes}"),
                    ));
                }
            }
            FileSize::Zipfset { classes, .. } => {
                if classes.is_empty() {
                    return Err(Error::scenario("workload.file_size.classes", "must name at least one class (0-3)"));
                }
                if let Some(bad) = classes.iter().position(|&c| c > 3) {
                    return Err(Error::scenario(
                        format!("workload.file_size.classes.{bad}"),
                        format!("SPECweb99 classes are 0, 1, 2 and 3, got {}", classes[bad]),
                    ));
                }
            }
            FileSize::List { bytes } => {
                if bytes.is_empty() {
                    return Err(Error::scenario("workload.file_size.bytes", "must hold at least one size"));
                }
            }
        }
        Ok(())
    }

    fn validate_pingpong(&self, p: &PingPong) -> Result<()> {
        at_least("workload.pairs", u64::from(p.pairs), 1)?;
        if p.pairs > MAX_FLOWS {
            return Err(Error::scenario(
                "workload.pairs",
                format!("at most {MAX_FLOWS} in one run (each has state for the whole run), got {}", p.pairs),
            ));
        }
        at_least("workload.token_bytes", p.token_bytes, 1)?;
        at_least("workload.rounds", u64::from(p.rounds), 1)?;
        let Sender::Tcp(t) = &self.sender else {
            return Err(Error::scenario(
                "workload.kind",
                format!("\"pingpong\" runs over TCP: set sender.kind = \"tcp\" (got \"{}\")", self.sender.kind()),
            ));
        };
        if t.ack_path == AckPath::Ideal {
            return Err(Error::scenario(
                "sender.ack_path",
                "must be \"links\" with workload.kind = \"pingpong\": the clients' tokens travel the reverse links",
            ));
        }
        // Both directions of a pair are one flow of `rounds` tokens, each cut into segments.
        let segments = u64::from(p.rounds) * p.token_bytes.div_ceil(u64::from(self.chunk_bytes()));
        if segments > u64::from(u32::MAX) {
            return Err(Error::scenario(
                "workload.rounds",
                format!("rounds × segments per token must be at most {}, got {segments}", u32::MAX),
            ));
        }
        Ok(())
    }

    fn validate_sender(&self) -> Result<()> {
        at_least(self.sender.chunk_field(), u64::from(self.sender.chunk_bytes()), 1)?;
        if let Some(message) = self.sender.message_bytes() {
            at_least("sender.message_bytes", u64::from(message), 1)?;
        }
        match &self.sender {
            Sender::Paced(s) => {
                duration("sender.tick_ms", s.tick_ms, 1e-3, false)?;
                at_least("sender.packets_per_tick", u64::from(s.packets_per_tick), 1)?;
            }
            Sender::Window(s) => {
                at_least("sender.window_pkts", u64::from(s.window_pkts), 1)?;
                duration("sender.ack_delay_us", s.ack_delay_us, 1e-6, true)?;
            }
            Sender::Cbr(s) => {
                let rates = std::iter::once(("sender.rate_mbps".to_string(), s.rate_mbps)).chain(
                    s.flow_rates_mbps.iter().enumerate().map(|(i, &r)| (format!("sender.flow_rates_mbps.{i}"), r)),
                );
                for (path, rate) in rates {
                    rate_mbps(&path, rate)?;
                    let bits = f64::from(s.chunk_bytes) * 8.0;
                    if bits / (rate * 1e6) > MAX_SECONDS {
                        return Err(Error::scenario(
                            path,
                            format!("at {} Mbit/s a packet of chunk_bytes is sent less than once a year", num(rate)),
                        ));
                    }
                    if SimTime::from_secs_f64(bits / (rate * 1e6)).as_nanos() == 0 {
                        return Err(Error::scenario(
                            path,
                            format!(
                                "at {} Mbit/s a packet of chunk_bytes ({}) is sent every 0 ns \
                                 (simulated time counts whole nanoseconds): at most {} Mbit/s",
                                num(rate),
                                s.chunk_bytes,
                                num((bits * 2e3).floor())
                            ),
                        ));
                    }
                }
            }
            Sender::Tcp(t) => {
                if crate::transport::tcp::cc::build(&t.tcp_congestion_control, t.hystart).is_none() {
                    return Err(Error::scenario(
                        "sender.tcp_congestion_control",
                        format!(
                            "unknown congestion control {:?}, expected one of {}",
                            t.tcp_congestion_control,
                            crate::transport::tcp::cc::NAMES.join(", ")
                        ),
                    ));
                }
                if !t.tcp_sack {
                    // Linux negotiates SACK by default; RACK, TLP and D-SACK need it.
                    return Err(Error::scenario(
                        "sender.tcp_sack",
                        "TCP without SACK (RFC 6582 NewReno recovery) is not modelled yet; leave it true",
                    ));
                }
                at_least("sender.initial_cwnd", u64::from(t.initial_cwnd), 1)?;
                at_least("sender.tcp_reordering", u64::from(t.tcp_reordering), 1)?;
                // Linux takes 0 to 4 (net/ipv4/sysctl_net_ipv4.c: extra1 = SYSCTL_ZERO, extra2 = SYSCTL_FOUR).
                if t.tcp_early_retrans > 4 {
                    return Err(Error::scenario(
                        "sender.tcp_early_retrans",
                        format!("Linux takes 0 to 4 (3 or 4: tail loss probes), got {}", t.tcp_early_retrans),
                    ));
                }
                for (field, on, what) in [
                    ("sender.tcp_fack", t.tcp_fack, "FACK"),
                    ("sender.early_retransmit", t.early_retransmit, "early retransmit"),
                    ("sender.ncr", t.ncr, "NCR"),
                    ("sender.forward_retransmit", t.forward_retransmit, "forward retransmission"),
                    ("sender.undo", t.undo != UndoEra::Current, "a 3.x undo rule"),
                ] {
                    if on && t.tcp_recovery & 1 != 0 {
                        return Err(Error::scenario(
                            field,
                            format!("{what} is modelled without RACK only (Linux 3.x); set tcp_recovery = 0 with it"),
                        ));
                    }
                }
                // net/ipv4/sysctl_net_ipv4.c: tcp_recovery is a bitmap of 0x1, 0x2 and 0x4;
                // tcp_frto is 0 (off), 1 (RFC 5682's basic F-RTO) or 2 (its SACK variant).
                if t.tcp_recovery > 7 {
                    return Err(Error::scenario(
                        "sender.tcp_recovery",
                        format!(
                            "takes the bits 0x1 (RACK), 0x2 (static window), 0x4 (no dupthresh): 0 to 7, got {}",
                            t.tcp_recovery
                        ),
                    ));
                }
                if t.tcp_frto > 2 {
                    return Err(Error::scenario(
                        "sender.tcp_frto",
                        format!("Linux takes 0 (off), 1 or 2 (F-RTO, RFC 5682), got {}", t.tcp_frto),
                    ));
                }
                if t.tcp_max_reordering < t.tcp_reordering {
                    return Err(Error::scenario(
                        "sender.tcp_max_reordering",
                        format!("must be >= tcp_reordering ({}), got {}", t.tcp_reordering, t.tcp_max_reordering),
                    ));
                }
                duration("sender.rto_min_ms", t.rto_min_ms, 1e-3, false)?;
                if let Some(every) = t.trace_ms {
                    trace_period("sender.trace_ms", every)?;
                }
                at_least("sender.tcp_limit_output_bytes", t.tcp_limit_output_bytes, 1)?;
                for (name, mem) in [("tcp_rmem", t.tcp_rmem), ("tcp_wmem", t.tcp_wmem)] {
                    if !(mem[0] <= mem[1] && mem[1] <= mem[2]) || mem[2] < 2 * u64::from(self.chunk_bytes()) {
                        return Err(Error::scenario(
                            format!("sender.{name}"),
                            format!(
                                "must be min <= default <= max with max at least two segments ({} bytes), got {mem:?}",
                                2 * self.chunk_bytes()
                            ),
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    fn validate_network(&self) -> Result<()> {
        let n = &self.network;
        if matches!(self.sender, Sender::Tcp(_)) && n.protocol == Protocol::Udp {
            return Err(Error::scenario(
                "network.protocol",
                "a tcp sender's segments are TCP; \"udp\" is for the paced, window and cbr senders",
            ));
        }
        crate::network::parse_mac("network.server_mac", &n.server_mac)?;
        crate::network::parse_ip("network.server_ip", &n.server_ip)?;
        for (i, mac) in n.client_macs.iter().enumerate() {
            crate::network::parse_mac(&format!("network.client_macs.{i}"), mac)?;
        }
        for (i, ip) in n.client_ips.iter().enumerate() {
            crate::network::parse_ip(&format!("network.client_ips.{i}"), ip)?;
        }
        if let Some(mac) = &n.router_mac {
            crate::network::parse_mac("network.router_mac", mac)?;
        }
        if let Some(vlan) = n.vlan {
            if !(1..=4094).contains(&vlan) {
                return Err(Error::scenario("network.vlan", format!("a VLAN id is 1 to 4094, got {vlan}")));
            }
        }
        let header = n.header_bytes.unwrap_or(0);
        if header > 1000 {
            return Err(Error::scenario("network.header_bytes", format!("must be at most 1000, got {header}")));
        }
        Ok(())
    }

    fn validate_links(&self) -> Result<()> {
        if self.links.is_empty() {
            return Err(Error::scenario("links", "a bond needs at least one link"));
        }
        let packet = u64::from(self.chunk_bytes()) + u64::from(self.l3_header_bytes());
        for (i, link) in self.links.iter().enumerate() {
            let p = |field: &str| format!("links.{i}.{field}");
            let base = &link.base;
            at_least(&p("count"), u64::from(base.count), 1)?;
            factor(&p("slowdown"), base.slowdown)?;
            for (k, win) in base.slow_windows.iter().enumerate() {
                let q = |field: &str| format!("links.{i}.slow_windows.{k}.{field}");
                duration(&q("start_s"), win.start_s, 1.0, true)?;
                factor(&q("slowdown"), win.slowdown)?;
                duration(&q("end_s"), win.end_s, 1.0, false)?;
                if win.end_s <= win.start_s {
                    return Err(Error::scenario(
                        q("end_s"),
                        format!("must be > start_s ({}), got {}", win.start_s, win.end_s),
                    ));
                }
            }
            if let Some(im) = &base.intermittent {
                duration(&p("intermittent.slow_s"), im.slow_s, 1.0, false)?;
                duration(&p("intermittent.normal_s"), im.normal_s, 1.0, false)?;
                factor(&p("intermittent.slowdown"), im.slowdown)?;
            }
            duration(&p("carrier_latency_ms"), base.carrier_latency_ms, 1e-3, true)?;
            let mut back_up_at = 0.0_f64;
            for (k, failure) in base.failures.iter().enumerate() {
                let q = |field: &str| format!("links.{i}.failures.{k}.{field}");
                duration(&q("down_s"), failure.down_s, 1.0, true)?;
                duration(&q("jitter_ms"), failure.jitter_ms, 1e-3, true)?;
                if failure.down_s < back_up_at {
                    return Err(Error::scenario(
                        q("down_s"),
                        format!(
                            "failures must be in time order: this one starts before the last ended ({back_up_at} s, \
                             the previous failure's up_s plus its jitter_ms)"
                        ),
                    ));
                }
                match failure.up_s {
                    Some(up) => {
                        duration(&q("up_s"), up, 1.0, false)?;
                        if up <= failure.down_s {
                            return Err(Error::scenario(q("up_s"), format!("must be > down_s ({})", failure.down_s)));
                        }
                        // With jitter the failure may end up to `jitter_ms` later.
                        back_up_at = up + failure.jitter_ms / 1e3;
                    }
                    None if k + 1 < base.failures.len() => {
                        return Err(Error::scenario(q("up_s"), "only the last failure may last for ever"));
                    }
                    None => {}
                }
                if failure.kind == FailureKind::Silent {
                    if !(failure.drop > 0.0 && failure.drop <= 1.0) {
                        return Err(Error::scenario(
                            q("drop"),
                            format!("must be a fraction in (0, 1] (1 = the port passes nothing), got {}", failure.drop),
                        ));
                    }
                } else if failure.drop != 1.0 || failure.direction != FailureDirection::Both {
                    let field = if failure.drop != 1.0 { "drop" } else { "direction" };
                    return Err(Error::scenario(
                        q(field),
                        "applies to kind = \"silent\" only (a lost carrier stops both directions entirely)",
                    ));
                }
            }
            if let Some(flap) = &base.flapping {
                duration(&p("flapping.start_s"), flap.start_s, 1.0, true)?;
                duration(&p("flapping.down_ms"), flap.down_ms, 1e-3, false)?;
                duration(&p("flapping.up_ms"), flap.up_ms, 1e-3, false)?;
                at_least(&p("flapping.count"), u64::from(flap.count), 1)?;
                if flap.count > MAX_FLAPS {
                    return Err(Error::scenario(
                        p("flapping.count"),
                        format!(
                            "must be at most {MAX_FLAPS} (every loss of carrier and its return are scheduled \
                             when the run starts; for a link that fails without end use random_failures), got {}",
                            flap.count
                        ),
                    ));
                }
                let end_s = flap.start_s + f64::from(flap.count) * (flap.down_ms + flap.up_ms) / 1e3;
                if end_s > MAX_SECONDS {
                    return Err(Error::scenario(
                        p("flapping.count"),
                        format!("the last loss would end at {} s, more than a year into the run", num(end_s)),
                    ));
                }
                duration(&p("flapping.jitter_ms"), flap.jitter_ms, 1e-3, true)?;
                if !base.failures.is_empty() || base.random_failures.is_some() {
                    return Err(Error::scenario(
                        p("flapping"),
                        "give one of failures, random_failures or flapping on a link, not several",
                    ));
                }
            }
            if let Some(random) = &base.random_failures {
                duration(&p("random_failures.mtbf_s"), random.mtbf_s, 1.0, false)?;
                duration(&p("random_failures.mttr_s"), random.mttr_s, 1.0, false)?;
                if !base.failures.is_empty() {
                    return Err(Error::scenario(p("random_failures"), "give failures or random_failures, not both"));
                }
            }
            match &link.model {
                LinkModel::Paced(m) => {
                    duration(&p("period_ms"), m.period_ms, 1e-3, false)?;
                    let (shrink, stretch) = (factor_extremes(base, i, true), factor_extremes(base, i, false));
                    stays_positive(&p("period_ms"), "the period", nanos(m.period_ms, 1e-3), &shrink)?;
                    stays_within_a_year(&p("period_ms"), "the period", nanos(m.period_ms, 1e-3), &stretch)?;
                    if let Some(trace) = &m.trace_intervals_s {
                        if trace.is_empty() {
                            return Err(Error::scenario(p("trace_intervals_s"), "a trace needs at least one interval"));
                        }
                        for (k, &v) in trace.iter().enumerate() {
                            let q = format!("links.{i}.trace_intervals_s.{k}");
                            duration(&q, v, 1.0, false)?;
                            stays_positive(&q, "the interval", nanos(v, 1.0), &shrink)?;
                            stays_within_a_year(&q, "the interval", nanos(v, 1.0), &stretch)?;
                        }
                    }
                }
                LinkModel::Rate(m) => {
                    rate_mbps(&p("rate_mbps"), m.rate_mbps)?;
                    if m.overhead_bytes > 10_000 {
                        return Err(Error::scenario(
                            p("overhead_bytes"),
                            format!("must be at most 10000, got {}", m.overhead_bytes),
                        ));
                    }
                    if !(68..=65535).contains(&m.mtu) {
                        return Err(Error::scenario(p("mtu"), format!("an IPv4 MTU is 68 to 65535, got {}", m.mtu)));
                    }
                    if packet > u64::from(m.mtu) && !self.fragments() {
                        return Err(Error::scenario(
                            self.sender.chunk_field(),
                            format!(
                                "{} payload + {} header bytes exceed links.{i}.mtu ({}); only UDP datagrams of a \
                                 cbr sender (network.protocol = \"udp\") are fragmented",
                                self.chunk_bytes(),
                                self.l3_header_bytes(),
                                m.mtu
                            ),
                        ));
                    }
                    duration(&p("delay_us"), m.delay_us, 1e-6, true)?;
                    duration(&p("per_packet_us"), m.per_packet_us, 1e-6, true)?;
                    if let Some(jitter) = &m.jitter {
                        let (field, value) = match jitter {
                            Jitter::Uniform { max_us } => ("max_us", *max_us),
                            Jitter::Exponential { mean_us } => ("mean_us", *mean_us),
                            Jitter::Normal { sd_us } => ("sd_us", *sd_us),
                        };
                        duration(&p(&format!("jitter.{field}")), value, 1e-6, false)?;
                    }
                    // The smallest frame (an empty packet, padded to Ethernet's minimum) must take a
                    // nanosecond at least, or frames would leave the link in no time at all.
                    let frame = u64::from(self.l3_header_bytes().max(crate::bond::MIN_ETHERNET_PAYLOAD))
                        + u64::from(m.overhead_bytes);
                    let bits = frame as f64 * 8.0;
                    let tx = nanos(m.per_packet_us, 1e-6) + SimTime::from_secs_f64(bits / (m.rate_mbps * 1e6)).0;
                    if tx == 0 {
                        return Err(Error::scenario(
                            p("rate_mbps"),
                            format!(
                                "at {} Mbit/s the smallest frame ({frame} bytes on the wire) takes 0 ns \
                                 (simulated time counts whole nanoseconds): at most {} Mbit/s, or set per_packet_us",
                                num(m.rate_mbps),
                                num((bits * 2e3).floor())
                            ),
                        ));
                    }
                    stays_positive(&p("rate_mbps"), "the smallest frame", tx, &factor_extremes(base, i, true))?;
                    // ... and the largest (a full packet) at most a year, or the clock would overflow.
                    let largest = (packet.max(u64::from(crate::bond::MIN_ETHERNET_PAYLOAD))
                        + u64::from(m.overhead_bytes)) as f64
                        * 8.0;
                    let secs = m.per_packet_us * 1e-6 + largest / (m.rate_mbps * 1e6);
                    if secs > MAX_SECONDS {
                        return Err(Error::scenario(
                            p("rate_mbps"),
                            format!(
                                "at {} Mbit/s a full frame takes {} s, more than a year",
                                num(m.rate_mbps),
                                num(secs)
                            ),
                        ));
                    }
                    let stretch = factor_extremes(base, i, false);
                    stays_within_a_year(&p("rate_mbps"), "a full frame", SimTime::from_secs_f64(secs).0, &stretch)?;
                    at_least(&p("txqueuelen"), u64::from(m.txqueuelen), 1)?;
                    probability(&p("loss"), m.loss, false)?;
                    if let Some(model) = &m.loss_model {
                        if m.loss != 0.0 {
                            return Err(Error::scenario(p("loss_model"), "give loss or loss_model, not both"));
                        }
                        match model {
                            LossModel::GilbertElliott(ge) => {
                                probability(&p("loss_model.p"), ge.p, true)?;
                                probability(&p("loss_model.r"), ge.r, true)?;
                                if ge.r == 0.0 {
                                    return Err(Error::scenario(
                                        p("loss_model.r"),
                                        "must be > 0: with r = 0 the bad state never ends",
                                    ));
                                }
                                probability(&p("loss_model.loss_good"), ge.loss_good, false)?;
                                probability(&p("loss_model.loss_bad"), ge.loss_bad, true)?;
                            }
                        }
                    }
                }
            }
        }
        let links: u64 = self.links.iter().map(|l| u64::from(l.base.count)).sum();
        if links > 4096 {
            return Err(Error::scenario("links", format!("at most 4096 links in a bond, got {links}")));
        }
        // A name is a link's identity in every output (rows, capture files, failovers) and in
        // `bond.primary`: two links of one name could not be told apart. (Checked once the number
        // of links is known to be bounded.)
        let mut named = rustc_hash::FxHashMap::default();
        let mut id = 0;
        for (i, spec) in self.links.iter().enumerate() {
            for _ in 0..spec.base.count {
                let name = spec.link_name(id);
                if let Some(other) = named.insert(name.clone(), id) {
                    return Err(Error::scenario(
                        format!("links.{i}.name"),
                        format!("gives link {id} the name `{name}`, which link {other} has; link names must differ"),
                    ));
                }
                id += 1;
            }
        }
        Ok(())
    }

    fn validate_bond(&self) -> Result<()> {
        let b = &self.bond;
        // The bonding driver takes these as integers of milliseconds (`bond_opts`: BOND_OPT_*
        // values are u64; the module parameters are `int`).
        for (path, value) in [
            ("bond.miimon", b.miimon),
            ("bond.updelay", b.updelay),
            ("bond.downdelay", b.downdelay),
            ("bond.peer_notif_delay", b.peer_notif_delay),
            ("bond.arp_interval", b.arp_interval),
        ] {
            duration(path, value, 1e-3, true)?;
            if value.fract() != 0.0 {
                return Err(Error::scenario(
                    path,
                    format!("must be a whole number of milliseconds, as Linux takes it, got {}", num(value)),
                ));
            }
        }
        let hz_choices = bondsim_bond::monitor::HZ_CHOICES;
        if !hz_choices.contains(&b.hz) {
            let choices = hz_choices.map(|hz| hz.to_string()).join(", ");
            return Err(Error::scenario("bond.hz", format!("must be a kernel's CONFIG_HZ ({choices}), got {}", b.hz)));
        }
        if b.num_grat_arp > 255 {
            return Err(Error::scenario(
                "bond.num_grat_arp",
                format!("must be 0 to 255 (Linux), got {}", b.num_grat_arp),
            ));
        }
        if b.miimon == 0.0 {
            for (field, value) in
                [("updelay", b.updelay), ("downdelay", b.downdelay), ("peer_notif_delay", b.peer_notif_delay)]
            {
                if value > 0.0 {
                    return Err(Error::scenario(
                        format!("bond.{field}"),
                        "needs the link monitor: set bond.miimon > 0",
                    ));
                }
            }
        }
        if !(1..=255).contains(&b.arp_missed_max) {
            return Err(Error::scenario(
                "bond.arp_missed_max",
                format!("must be an integer from 1 to 255 (Linux's range), got {}", b.arp_missed_max),
            ));
        }
        // Linux's BOND_MAX_ARP_TARGETS, and bond_is_ip_target_ok: no 0.0.0.0, broadcast or multicast.
        if b.arp_ip_target.len() > 16 {
            return Err(Error::scenario(
                "bond.arp_ip_target",
                format!("at most 16 targets, got {}", b.arp_ip_target.len()),
            ));
        }
        for (k, target) in b.arp_ip_target.iter().enumerate() {
            // `bond_is_ip_target_ok`: `!ipv4_is_lbcast(addr) && !ipv4_is_zeronet(addr)`.
            let ok = target.parse::<std::net::Ipv4Addr>().is_ok_and(|ip| !ip.is_broadcast() && ip.octets()[0] != 0);
            if !ok {
                return Err(Error::scenario(
                    format!("bond.arp_ip_target.{k}"),
                    format!("must be an IPv4 address outside 0.0.0.0/8 and not 255.255.255.255 (Linux's bond_is_ip_target_ok), got `{target}`"),
                ));
            }
        }
        match &b.link_watch {
            Some(LinkWatch::Ethtool { delay_up, delay_down }) => {
                duration("bond.link_watch.delay_up", *delay_up, 1e-3, true)?;
                duration("bond.link_watch.delay_down", *delay_down, 1e-3, true)?;
            }
            Some(LinkWatch::ArpPing { interval, target_host, .. }) => {
                duration("bond.link_watch.interval", *interval, 1e-3, false)?;
                if !target_host.parse::<std::net::Ipv4Addr>().is_ok_and(|ip| !ip.is_unspecified() && !ip.is_broadcast())
                {
                    return Err(Error::scenario(
                        "bond.link_watch.target_host",
                        format!("must be a unicast IPv4 address, got `{target_host}`"),
                    ));
                }
            }
            None => {}
        }
        if b.arp_interval > 0.0 {
            if b.miimon > 0.0 {
                // bond_option_arp_interval_set: "ARP monitoring cannot be used with MII monitoring.
                // Disabling MII monitoring" (and bond_option_miimon_set the other way round).
                return Err(Error::scenario(
                    "bond.arp_interval",
                    format!(
                        "Linux runs one link monitor: setting arp_interval disables miimon and setting miimon \
                         disables the ARP monitor (bond_option_arp_interval_set / bond_option_miimon_set); \
                         set bond.miimon = 0 to use the ARP monitor (miimon is {})",
                        num(b.miimon)
                    ),
                ));
            }
            if b.arp_ip_target.is_empty() {
                // bond_check_params: "arp_interval module parameter specified without providing an
                // arp_ip_target parameter, arp_interval was reset to 0".
                return Err(Error::scenario(
                    "bond.arp_ip_target",
                    "the ARP monitor (arp_interval > 0) needs at least one target: Linux turns it off \
                     without one (bond_check_params)",
                ));
            }
        }
        Ok(())
    }

    /// Number of links after expanding `count`.
    pub fn link_count(&self) -> usize {
        self.links.iter().map(|l| l.base.count as usize).sum()
    }

    /// Payload bytes per packet.
    pub fn chunk_bytes(&self) -> u32 {
        self.sender.chunk_bytes()
    }

    /// Whether the clients send the files (`workload.direction = "upload"`).
    pub fn upload(&self) -> bool {
        matches!(&self.workload, Workload::Requests(w) if w.direction == Direction::Upload)
    }

    /// IPv4 + transport header bytes per packet, plus the VLAN tag if any.
    /// The bond's MTU: its smallest link's (Linux gives a bond's slaves the bond's MTU;
    /// the thesis's paced interface has none and counts as Ethernet's 1500).
    pub fn mtu(&self) -> u32 {
        self.links
            .iter()
            .filter_map(|l| match &l.model {
                LinkModel::Rate(m) => Some(m.mtu),
                LinkModel::Paced(_) => None,
            })
            .min()
            .unwrap_or(default_mtu())
    }

    /// Whether datagrams are cut into IP fragments: a `cbr` sender of UDP whose
    /// datagrams (payload + headers) exceed the MTU (`ip_finish_output` →
    /// `ip_fragment` when `skb->len > mtu`).
    pub fn fragments(&self) -> bool {
        matches!(self.sender, Sender::Cbr(_))
            && self.network.protocol == Protocol::Udp
            && self.chunk_bytes() + self.l3_header_bytes() > self.mtu()
    }

    pub fn l3_header_bytes(&self) -> u32 {
        self.network.header_bytes.unwrap_or(self.network.protocol.header_bytes())
            + if self.network.vlan.is_some() { 4 } else { 0 }
    }

    /// Every link spec, once per link (after `count` expansion), with its id.
    pub fn each_link(&self) -> impl Iterator<Item = (usize, &LinkSpec)> {
        self.links.iter().flat_map(|spec| std::iter::repeat_n(spec, spec.base.count as usize)).enumerate()
    }
}

/// Formats a serde path as `a.b.3.c`, the form `--set` takes.
/// A serde error in the words of a scenario file: Rust's type names out, a hint where the value
/// was typed as another kind (TOML's and `--set`'s: `1` is a number, `"1"` a string).
fn in_users_words(message: String) -> String {
    let mut message = message;
    if let Some(at) = message.find("expected struct ") {
        // `expected struct Trace`: a table of that part's fields.
        let end = message[at + 16..].find(|c: char| !c.is_alphanumeric()).map_or(message.len(), |e| at + 16 + e);
        message.replace_range(at..end, "expected a table of fields");
    }
    if message.starts_with("invalid type: integer") && message.ends_with("expected a string") {
        message.push_str(" (a name is a string: put it in quotes)");
    }
    if message == "invalid type: map, expected a sequence" {
        // `--set links.0.failures.0.down_s=1` where the scenario has no `failures` makes a table.
        message.push_str(" (give the list whole, in [ ]: an index in --set reaches into a list already there)");
    }
    if message.starts_with("invalid type: floating point")
        && (message.contains("expected u") || message.contains("expected i"))
    {
        message.push_str(" (a whole number is wanted; one beyond 64 bits reads as a float)");
    }
    message
}

/// The field of a tagged table that a bad value is in. serde's derive reads an internally tagged
/// enum (`file_size`, `arrivals`, `jitter`, `loss_model`) whole before its variant, so an invalid
/// value inside is reported at the table (`workload.file_size`); the field at fault is the one
/// whose removal makes that error go (`workload.file_size.bytes`). Only on an error, and only for
/// a value of the wrong type or range (an unknown field is already named in its message).
fn field_at_fault(text: &str, path: &str, message: &str) -> Option<String> {
    if !(message.starts_with("invalid value") || message.starts_with("invalid type")) {
        return None;
    }
    let doc: serde_json::Value = serde_json::from_str(text).ok()?;
    let pointer: String =
        path.split('.').map(|key| format!("/{}", key.replace('~', "~0").replace('/', "~1"))).collect();
    let table = doc.pointer(&pointer)?.as_object()?;
    if !table.contains_key("kind") {
        return None;
    }
    let key = table.keys().filter(|key| *key != "kind").find(|key| {
        let mut trial = doc.clone();
        if let Some(t) = trial.pointer_mut(&pointer).and_then(|v| v.as_object_mut()) {
            t.remove(key.as_str());
        }
        serde_json::from_value::<Scenario>(trial).map_or_else(|err| !err.to_string().contains(message), |_| true)
    })?;
    Some(format!("{path}.{key}"))
}

fn dotted(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let parts: Vec<String> = path
        .iter()
        .filter_map(|seg| match seg {
            Segment::Seq { index } => Some(index.to_string()),
            Segment::Map { key } => Some(key.clone()),
            Segment::Enum { variant } => Some(variant.clone()),
            Segment::Unknown => None,
        })
        .collect();
    parts.join(".")
}

/// Most requests (flows), and most clients, one run may have.
const MAX_FLOWS: u32 = 10_000_000;

/// Packet captures of a run (`bondsim run --pcap DIR`, `bondsim.run(..., pcap=...)`): not a
/// part of the scenario (they observe a run and change none of its figures), but checked
/// like one, its errors naming `pcap.<field>`. What each file holds: [`crate::capture`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaptureOptions {
    /// Directory the pcapng files go to (created if missing; files of the same names are replaced).
    pub dir: std::path::PathBuf,
    /// Write whole frames, the payload as zero bytes; by default only the headers are
    /// written (each frame's original length is recorded either way).
    #[serde(default)]
    pub payload: bool,
    /// Most frames one file takes; later frames are left out of it.
    #[serde(default)]
    pub max_packets: Option<u64>,
    /// Frames before this simulated time, in seconds, are left out.
    #[serde(default)]
    pub start_s: f64,
    /// Frames from this simulated time on, in seconds, are left out.
    #[serde(default)]
    pub stop_s: Option<f64>,
}

impl CaptureOptions {
    /// Parses and checks capture options given as JSON (errors name `pcap.<field>`).
    pub fn from_json(text: &str) -> Result<CaptureOptions> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let options: CaptureOptions = serde_path_to_error::deserialize(de).map_err(|err| {
            let path = dotted(err.path());
            let mut message = err.into_inner().to_string();
            if let Some(cut) = message.rfind(" at line ") {
                message.truncate(cut);
            }
            Error::scenario(if path.is_empty() { "pcap".to_string() } else { format!("pcap.{path}") }, message)
        })?;
        options.validate()?;
        Ok(options)
    }

    /// Checks the fields.
    pub fn validate(&self) -> Result<()> {
        if self.dir.as_os_str().is_empty() {
            return Err(Error::scenario("pcap.dir", "must name a directory"));
        }
        if let Some(n) = self.max_packets {
            at_least("pcap.max_packets", n, 1)?;
        }
        duration("pcap.start_s", self.start_s, 1.0, true)?;
        if let Some(stop) = self.stop_s {
            duration("pcap.stop_s", stop, 1.0, false)?;
            if stop <= self.start_s {
                return Err(Error::scenario(
                    "pcap.stop_s",
                    format!("must be after pcap.start_s = {}, got {}", num(self.start_s), num(stop)),
                ));
            }
        }
        Ok(())
    }
}

/// Longest time a scenario may name: a year, far beyond any useful run and
/// far inside the nanosecond clock's 584-year range.
const MAX_SECONDS: f64 = 365.0 * 86_400.0;

/// `value` must be a finite number > 0 (factors, rates).
pub(crate) fn positive(path: &str, value: f64) -> Result<()> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(Error::scenario(path, format!("must be a number > 0, got {value}")))
    }
}

/// `value` must be a link or flow rate in Mbit/s: (0, 10^7] (up to 10 Tbit/s).
pub(crate) fn rate_mbps(path: &str, value: f64) -> Result<()> {
    if value.is_finite() && value > 0.0 && value <= 1e7 {
        Ok(())
    } else {
        Err(Error::scenario(path, format!("must be a rate in Mbit/s, > 0 and at most 1e7, got {value}")))
    }
}

/// `value` must be a speed factor in (0, 10^6].
pub(crate) fn factor(path: &str, value: f64) -> Result<()> {
    if value.is_finite() && value > 0.0 && value <= 1e6 {
        Ok(())
    } else {
        Err(Error::scenario(path, format!("must be a factor > 0 and at most 1e6, got {value}")))
    }
}

/// `value` (in units of `unit_s` seconds) must be a duration in (0, one year],
/// or [0, one year] if `zero_ok`; one that is not zero must be at least a nanosecond
/// once rounded to the clock (a period of 0 ns would stop time).
pub(crate) fn duration(path: &str, value: f64, unit_s: f64, zero_ok: bool) -> Result<()> {
    let low_ok = if zero_ok { value >= 0.0 } else { value > 0.0 };
    if !(value.is_finite() && low_ok && value * unit_s <= MAX_SECONDS) {
        let low = if zero_ok { ">= 0" } else { "> 0" };
        return Err(Error::scenario(path, format!("must be a duration {low} and at most a year, got {}", num(value))));
    }
    if value > 0.0 && nanos(value, unit_s) == 0 {
        let unit = match unit_s {
            1.0 => "s",
            1e-3 => "ms",
            1e-6 => "us",
            _ => "units",
        };
        let allowed = if zero_ok { "0 or at least 1 ns" } else { "at least 1 ns" };
        return Err(Error::scenario(
            path,
            format!(
                "must be {allowed} (simulated time counts whole nanoseconds), got {} {unit}, which rounds to 0 ns",
                num(value)
            ),
        ));
    }
    Ok(())
}

/// A trace's sampling period, ms: a duration of at least 1 µs (that floor checked first, so a
/// value below it is not told "at least 1 ns").
fn trace_period(path: &str, every_ms: f64) -> Result<()> {
    if every_ms.is_finite() && every_ms > 0.0 && every_ms < 1e-3 {
        return Err(Error::scenario(path, format!("must be at least 0.001 (1 µs), got {}", num(every_ms))));
    }
    duration(path, every_ms, 1e-3, false)
}

/// `value` in units of `unit_s` seconds as the simulator's clock holds it, in nanoseconds
/// (the same conversions the links and transports use, so the check and the run agree).
fn nanos(value: f64, unit_s: f64) -> u64 {
    let time = match unit_s {
        1.0 => SimTime::from_secs_f64(value),
        1e-3 => SimTime::from_millis_f64(value),
        1e-6 => SimTime::from_micros_f64(value),
        _ => SimTime::from_secs_f64(value * unit_s),
    };
    time.as_nanos()
}

/// A number as a user would write it: `1e-7` rather than `0.0000001`.
fn num(value: f64) -> String {
    if value != 0.0 && value.is_finite() && !(1e-4..1e15).contains(&value.abs()) {
        format!("{value:e}")
    } else {
        format!("{value}")
    }
}

/// The factors a link's send times can be stretched by at the extremes (uniform × windows ×
/// the intermittent phase), each with the field that brings it: below 1 (`shrink`, the smallest
/// factors reachable) or above 1 (`stretch`, the largest). A period or frame time that rounds to
/// 0 ns, or grows past a year, under one of them names that field.
fn factor_extremes(base: &LinkBase, i: usize, shrink: bool) -> Vec<(String, f64)> {
    let mut out = vec![(String::new(), 1.0)];
    let mut f = 1.0;
    let mut push = |path: String, factor: f64| {
        if (shrink && factor < 1.0) || (!shrink && factor > 1.0) {
            f *= factor;
            out.push((path, f));
        }
    };
    push(format!("links.{i}.slowdown"), base.slowdown);
    for (k, win) in base.slow_windows.iter().enumerate() {
        push(format!("links.{i}.slow_windows.{k}.slowdown"), win.slowdown);
    }
    if let Some(im) = &base.intermittent {
        push(format!("links.{i}.intermittent.slowdown"), im.slowdown);
    }
    out
}

/// Whether a span of `ns` nanoseconds stays within a year under every factor of `factors`
/// (the clock would overflow soon after); the error names the span's field or the factor.
fn stays_within_a_year(path: &str, what: &str, ns: u64, factors: &[(String, f64)]) -> Result<()> {
    for (field, factor) in factors {
        let secs = ns as f64 * factor / 1e9;
        if secs <= MAX_SECONDS {
            continue;
        }
        return Err(if field.is_empty() {
            Error::scenario(path, format!("{what} would take {} s, more than a year", num(secs)))
        } else {
            Error::scenario(
                field.as_str(),
                format!(
                    "with send times scaled by {} here, {what} ({path}) would take {} s, more than a year",
                    num(*factor),
                    num(secs)
                ),
            )
        });
    }
    Ok(())
}

/// Whether a span of `ns` nanoseconds keeps at least 1 ns under every factor of `factors`;
/// the error names the span's own field (`path`) or the factor that shrinks it to nothing.
fn stays_positive(path: &str, what: &str, ns: u64, factors: &[(String, f64)]) -> Result<()> {
    for (field, factor) in factors {
        if SimTime(ns).scaled(*factor).as_nanos() > 0 {
            continue;
        }
        return Err(if field.is_empty() {
            Error::scenario(path, format!("{what} would take 0 ns (simulated time counts whole nanoseconds)"))
        } else {
            Error::scenario(
                field.as_str(),
                format!(
                    "with send times scaled by {} here, {what} ({path}, {ns} ns) would take 0 ns; \
                     simulated time counts whole nanoseconds",
                    num(*factor)
                ),
            )
        });
    }
    Ok(())
}

/// `value` must be a probability: in [0, 1], or [0, 1) unless `one_ok`.
pub(crate) fn probability(path: &str, value: f64, one_ok: bool) -> Result<()> {
    let high_ok = if one_ok { value <= 1.0 } else { value < 1.0 };
    if value.is_finite() && value >= 0.0 && high_ok {
        Ok(())
    } else {
        let range = if one_ok { "[0, 1]" } else { "[0, 1)" };
        Err(Error::scenario(path, format!("must be in {range}, got {value}")))
    }
}

/// `value` must be at least `min`.
pub(crate) fn at_least(path: &str, value: u64, min: u64) -> Result<()> {
    if value >= min {
        Ok(())
    } else {
        Err(Error::scenario(path, format!("must be >= {min}, got {value}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> serde_json::Value {
        serde_json::json!({
            "workload": {"requests": 10, "file_size": {"kind": "fixed", "bytes": 102400}},
            "bond": {"mode": "rr"},
            "links": [{}, {"period_ms": 82}, {"count": 2}]
        })
    }

    fn error_of(v: serde_json::Value) -> (String, String) {
        match Scenario::from_json(&v.to_string()) {
            Err(Error::Scenario { path, message }) => (path, message),
            other => panic!("expected a scenario error, got {other:?}"),
        }
    }

    #[test]
    fn defaults_fill_in() {
        let s = Scenario::from_json(&base().to_string()).unwrap();
        assert_eq!(s.seed, 1);
        assert_eq!(s.sender, Sender::Paced(PacedSender { chunk_bytes: 1024, tick_ms: 20.0, packets_per_tick: 4 }));
        let Workload::Requests(w) = &s.workload else { panic!("requests by default") };
        assert_eq!(w.clients, 10);
        assert_eq!(w.arrivals, Arrivals::AtStart {});
        assert_eq!(s.link_count(), 4);
        assert_eq!(s.links[1], LinkSpec::paced(82.0));
        assert_eq!(s.links[0], LinkSpec::paced(20.0));
        assert_eq!(s.bond.miimon, 100.0);
        assert_eq!(s.network.header_bytes, Some(40));
    }

    #[test]
    fn unknown_key_names_its_table_and_allowed_keys() {
        let mut v = base();
        v["links"][1]["perod_ms"] = 5.into();
        let (path, msg) = error_of(v);
        assert_eq!(path, "links.1.perod_ms");
        assert!(msg.contains("unknown field `perod_ms`") && msg.contains("period_ms"), "{msg}");
    }

    #[test]
    fn wrong_type_names_field() {
        let mut v = base();
        v["sender"] = serde_json::json!({"tick_ms": "fast"});
        let (path, msg) = error_of(v);
        assert_eq!(path, "sender.tick_ms");
        assert!(msg.contains("invalid type"), "{msg}");
    }

    #[test]
    fn impossible_values_name_field() {
        let mut v = base();
        v["links"][0]["period_ms"] = 0.into();
        assert_eq!(error_of(v).0, "links.0.period_ms");
        let mut v = base();
        v["workload"]["file_size"] = serde_json::json!({"kind": "uniform", "min_bytes": 9, "max_bytes": 3});
        assert_eq!(error_of(v).0, "workload.file_size.max_bytes");
        let mut v = base();
        v["links"] = serde_json::json!([]);
        assert_eq!(error_of(v).0, "links");
    }

    #[test]
    fn kinds_are_tagged_and_fields_of_another_kind_are_named() {
        let mut v = base();
        v["links"][0] = serde_json::json!({"rate_mbps": 100, "jitter": {"kind": "uniform", "max_us": "x"}});
        let (path, msg) = error_of(v);
        assert_eq!(path, "links.0.jitter.max_us", "the field of the tagged table, not the table");
        assert!(msg.contains("invalid type"), "{msg}");
        for (at, table, field) in [
            ("workload", serde_json::json!({"kind": "fixed", "bytes": -1}), "file_size.bytes"),
            (
                "workload",
                serde_json::json!({"kind": "uniform", "min_bytes": 1, "max_bytes": "9"}),
                "file_size.max_bytes",
            ),
            ("workload", serde_json::json!({"kind": "poisson", "rate_per_s": true}), "arrivals.rate_per_s"),
        ] {
            let mut v = base();
            let name = field.split('.').next().unwrap();
            v[at][name] = table;
            let (path, msg) = error_of(v);
            assert_eq!(path, format!("{at}.{field}"), "{msg}");
            assert!(msg.contains("invalid"), "{msg}");
        }
        let mut v = base();
        v["links"][1]["delay_us"] = 5.into();
        let (path, msg) = error_of(v);
        assert_eq!(path, "links.1.delay_us");
        assert!(msg.contains("kind = \"rate\""), "{msg}");
        let mut v = base();
        v["links"][0] = serde_json::json!({"kind": "rate", "period_ms": 5});
        assert_eq!(error_of(v).0, "links.0.period_ms");
        let mut v = base();
        v["links"][0] = serde_json::json!({"kind": "rate"});
        let (path, msg) = error_of(v);
        assert_eq!(path, "links.0");
        assert!(msg.contains("missing field `rate_mbps`"), "{msg}");
        let mut v = base();
        v["links"][0] = serde_json::json!({"kind": "optical"});
        let (path, msg) = error_of(v);
        assert_eq!(path, "links.0.kind");
        assert!(msg.contains("`paced`, `rate`"), "{msg}");
        let mut v = base();
        v["sender"] = serde_json::json!({"kind": "window", "tick_ms": 5});
        assert_eq!(error_of(v), ("sender.tick_ms".into(), "only for kind = \"paced\", not \"window\"".into()));
        let mut v = base();
        v["sender"] = serde_json::json!({"kind": "cbr"});
        assert!(error_of(v).1.contains("missing field `rate_mbps`"));
    }

    #[test]
    fn the_checked_scenario_names_every_kind_and_default() {
        let mut v = base();
        v["links"][0] = serde_json::json!({"rate_mbps": 100});
        v["sender"] = serde_json::json!({"kind": "window"});
        let s = Scenario::from_json(&v.to_string()).unwrap();
        let json: serde_json::Value = serde_json::from_str(&s.to_json()).unwrap();
        assert_eq!(json["links"][0]["kind"], "rate");
        assert_eq!(json["links"][0]["txqueuelen"], 1000);
        assert_eq!(json["links"][1]["kind"], "paced");
        assert_eq!(json["sender"]["window_pkts"], 64);
        assert_eq!(json["sender"]["kind"], "window");
        // What it prints parses back to the same scenario.
        assert_eq!(Scenario::from_json(&s.to_json()).unwrap().to_json(), s.to_json());
    }

    #[test]
    fn loss_is_a_probability_and_the_loss_model_a_table() {
        let with = |link: serde_json::Value| {
            let mut v = base();
            v["links"][0] = link;
            v
        };
        let s = Scenario::from_json(&with(serde_json::json!({"rate_mbps": 100})).to_string()).unwrap();
        let LinkModel::Rate(m) = &s.links[0].model else { panic!() };
        assert_eq!((m.loss, &m.loss_model), (0.0, &None));
        let json: serde_json::Value = serde_json::from_str(&s.to_json()).unwrap();
        assert_eq!(json["links"][0]["loss"], 0.0);
        for bad in [1.5, 1.0, -0.1] {
            let (path, msg) = error_of(with(serde_json::json!({"rate_mbps": 100, "loss": bad})));
            assert_eq!((path.as_str(), msg), ("links.0.loss", format!("must be in [0, 1), got {bad}")));
        }
        // NaN and infinity are not JSON: the front turns them into strings, or they come as numbers that overflow.
        assert!(error_of(with(serde_json::json!({"rate_mbps": 100, "loss": "nan"}))).1.contains("invalid type"));
        assert!(probability("x", f64::NAN, true).is_err() && probability("x", f64::INFINITY, true).is_err());
        let ge = serde_json::json!({"kind": "gilbert_elliott", "p": 0.01, "r": 0.3});
        let s =
            Scenario::from_json(&with(serde_json::json!({"rate_mbps": 100, "loss_model": ge})).to_string()).unwrap();
        let LinkModel::Rate(m) = &s.links[0].model else { panic!() };
        assert_eq!(
            m.loss_model,
            Some(LossModel::GilbertElliott(GilbertElliott { p: 0.01, r: 0.3, loss_good: 0.0, loss_bad: 1.0 }))
        );
        assert_eq!(Scenario::from_json(&s.to_json()).unwrap().to_json(), s.to_json());
        let (path, msg) = error_of(with(serde_json::json!({"rate_mbps": 100, "loss": 0.1, "loss_model": ge})));
        assert_eq!(path, "links.0.loss_model");
        assert!(msg.contains("loss") && msg.contains("loss_model") && msg.contains("not both"), "{msg}");
        for (field, value, says) in [
            ("p", 1.5, "must be in [0, 1], got 1.5"),
            ("r", 0.0, "must be > 0"),
            ("r", -1.0, "must be in [0, 1], got -1"),
            ("loss_good", 1.0, "must be in [0, 1), got 1"),
            ("loss_bad", 2.0, "must be in [0, 1], got 2"),
        ] {
            let mut model = ge.clone();
            model[field] = value.into();
            let (path, msg) = error_of(with(serde_json::json!({"rate_mbps": 100, "loss_model": model})));
            assert_eq!(path, format!("links.0.loss_model.{field}"));
            assert!(msg.starts_with(says), "{field}: {msg}");
        }
        let (path, msg) =
            error_of(with(serde_json::json!({"rate_mbps": 100, "loss_model": {"kind": "gilbert_elliott", "p": 0.1}})));
        assert_eq!(path, "links.0.loss_model");
        assert!(msg.contains("missing field `r`"), "{msg}");
        let (path, msg) = error_of(with(serde_json::json!({"rate_mbps": 100, "loss_model": {"kind": "bursty"}})));
        assert!(path.starts_with("links.0.loss_model") && msg.contains("gilbert_elliott"), "{path}: {msg}");
        let (path, msg) = error_of(with(serde_json::json!({"period_ms": 5, "loss": 0.1})));
        assert_eq!(path, "links.0.loss");
        assert!(msg.contains("kind = \"rate\""), "{msg}");
    }

    #[test]
    fn every_arrivals_kind_refuses_a_stray_field_and_at_start_keeps_its_form() {
        for (kind, extra) in [("at_start", "bogus"), ("at_start", "rate_per_s"), ("poisson", "size")] {
            let mut v = base();
            v["workload"]["arrivals"] = serde_json::json!({"kind": kind, "rate_per_s": 5.0});
            v["workload"]["arrivals"][extra] = 5.into();
            let (path, msg) = error_of(v);
            assert!(path.starts_with("workload.arrivals"), "{path}: {msg}");
            assert!(msg.contains("unknown field"), "{msg}");
        }
        let at_start = serde_json::to_value(Arrivals::default()).unwrap();
        assert_eq!(at_start, serde_json::json!({"kind": "at_start"}));
        let v: Arrivals = serde_json::from_value(at_start).unwrap();
        assert_eq!(v, Arrivals::AtStart {});
    }

    #[test]
    fn a_flapping_train_is_bounded_in_count_and_length() {
        let flapping = |count: u64, up_ms: f64| {
            let mut v = base();
            v["links"][1]["flapping"] =
                serde_json::json!({"start_s": 0.1, "down_ms": 1, "up_ms": up_ms, "count": count});
            v
        };
        Scenario::from_json(&flapping(u64::from(MAX_FLAPS), 1.0).to_string()).unwrap();
        let (path, msg) = error_of(flapping(u64::from(u32::MAX), 1.0));
        assert_eq!(path, "links.1.flapping.count");
        assert!(msg.starts_with("must be at most 1000000") && msg.ends_with("got 4294967295"), "{msg}");
        // Each period is within a year, the train is not.
        let (path, msg) = error_of(flapping(1000, 86_400_000.0));
        assert_eq!(path, "links.1.flapping.count");
        assert!(msg.contains("more than a year"), "{msg}");
    }

    #[test]
    fn durations_that_round_to_zero_nanoseconds_are_errors_naming_the_field() {
        let with = |path: &[&str], value: serde_json::Value| {
            let mut v = base();
            let mut node = &mut v;
            for key in &path[..path.len() - 1] {
                node = match key.parse::<usize>() {
                    Ok(i) => &mut node[i],
                    Err(_) => &mut node[*key],
                };
            }
            node[path[path.len() - 1]] = value;
            v
        };
        for tiny in [1e-7, 1e-300, 4e-7] {
            let (path, msg) = error_of(with(&["links", "1", "period_ms"], tiny.into()));
            assert_eq!(path, "links.1.period_ms");
            assert!(msg.contains("at least 1 ns") && msg.contains("rounds to 0 ns"), "{msg}");
        }
        let (_, msg) = error_of(with(&["links", "1", "period_ms"], 1e-7.into()));
        assert!(msg.contains("got 1e-7 ms"), "{msg}");
        // One nanosecond is the clock's tick: allowed.
        Scenario::from_json(&with(&["links", "1", "period_ms"], 1e-6.into()).to_string()).unwrap();
        let mut v = base();
        v["sender"] = serde_json::json!({"tick_ms": 1e-9});
        assert_eq!(error_of(v).0, "sender.tick_ms");
        let mut v = base();
        v["sender"] = serde_json::json!({"kind": "window", "ack_delay_us": 1e-4});
        let (path, msg) = error_of(v);
        assert_eq!(path, "sender.ack_delay_us");
        assert!(msg.starts_with("must be 0 or at least 1 ns"), "{msg}");
        let mut v = base();
        v["sender"] = serde_json::json!({"kind": "window", "ack_delay_us": 0});
        Scenario::from_json(&v.to_string()).unwrap();
        let mut v = base();
        v["bond"]["miimon"] = 1e-7.into();
        assert_eq!(error_of(v).0, "bond.miimon");
        // Linux's monitor intervals and delays are whole milliseconds.
        for field in ["miimon", "updelay", "downdelay", "peer_notif_delay", "arp_interval"] {
            let mut v = base();
            v["bond"]["miimon"] = 10.into();
            v["bond"][field] = 2.5.into();
            let (path, msg) = error_of(v);
            assert_eq!(path, format!("bond.{field}"));
            assert!(msg.contains("whole number of milliseconds") && msg.contains("2.5"), "{msg}");
        }
        // The tick rate is one a kernel can be built with.
        let mut v = base();
        v["bond"]["hz"] = 200.into();
        let (path, msg) = error_of(v);
        assert_eq!(path, "bond.hz");
        assert!(msg.contains("100, 250, 300, 1000") && msg.contains("200"), "{msg}");
        // A slowdown factor that shrinks a 1 ns period to nothing names the factor.
        let mut v = base();
        v["links"][0] = serde_json::json!({"period_ms": 1e-6, "slowdown": 0.1});
        let (path, msg) = error_of(v);
        assert_eq!(path, "links.0.slowdown");
        assert!(msg.contains("links.0.period_ms") && msg.contains("0 ns"), "{msg}");
        let mut v = base();
        v["links"][0] =
            serde_json::json!({"period_ms": 1e-6, "slow_windows": [{"start_s": 0, "end_s": 1, "slowdown": 0.2}]});
        assert_eq!(error_of(v).0, "links.0.slow_windows.0.slowdown");
        let mut v = base();
        v["links"][0] = serde_json::json!({"trace_intervals_s": [0.01, 1e-12]});
        assert_eq!(error_of(v).0, "links.0.trace_intervals_s.1");
    }

    #[test]
    fn spans_stretched_past_a_year_are_errors() {
        let mut v = base();
        v["links"][0] = serde_json::json!({"rate_mbps": 1e-300});
        let (path, msg) = error_of(v);
        assert_eq!(path, "links.0.rate_mbps");
        assert!(msg.contains("a full frame takes") && msg.contains("more than a year"), "{msg}");
        let mut v = base();
        v["links"][0] = serde_json::json!({"period_ms": 3e10, "slowdown": 1e6});
        let (path, msg) = error_of(v);
        assert_eq!(path, "links.0.slowdown");
        assert!(msg.contains("links.0.period_ms") && msg.contains("more than a year"), "{msg}");
        let mut v = base();
        v["links"][0] = serde_json::json!({"rate_mbps": 1e-4, "slowdown": 1e6});
        assert_eq!(error_of(v).0, "links.0.slowdown");
        let mut v = base();
        v["links"][0] = serde_json::json!({"period_ms": 20, "slowdown": 1e6});
        Scenario::from_json(&v.to_string()).unwrap(); // 20000 s a packet: slow, but within a year
    }

    #[test]
    fn rates_so_high_that_a_frame_takes_no_time_are_errors() {
        let mut v = base();
        v["links"][0] = serde_json::json!({"rate_mbps": 1e7});
        let (path, msg) = error_of(v);
        assert_eq!(path, "links.0.rate_mbps");
        assert!(msg.contains("takes 0 ns") && msg.contains("at most"), "{msg}");
        // 100 Gbit/s is fine, and so is a very fast link with a per-frame cost.
        for link in
            [serde_json::json!({"rate_mbps": 1e5}), serde_json::json!({"rate_mbps": 1e7, "per_packet_us": 0.01})]
        {
            let mut v = base();
            v["links"][0] = link;
            Scenario::from_json(&v.to_string()).unwrap();
        }
        let mut v = base();
        v["links"][0] = serde_json::json!({"rate_mbps": 1e5, "slowdown": 1e-3});
        assert_eq!(error_of(v).0, "links.0.slowdown");
        let mut v = base();
        v["sender"] = serde_json::json!({"kind": "cbr", "rate_mbps": 1e7, "chunk_bytes": 1});
        let (path, msg) = error_of(v);
        assert_eq!(path, "sender.rate_mbps");
        assert!(msg.contains("every 0 ns"), "{msg}");
        let mut v = base();
        v["sender"] = serde_json::json!({"kind": "cbr", "rate_mbps": 1e-300});
        assert!(error_of(v).1.contains("less than once a year"));
    }

    #[test]
    fn workloads_too_large_to_hold_or_to_arrive_within_a_year_are_errors() {
        for field in ["requests", "clients"] {
            let mut v = base();
            v["workload"][field] = u32::MAX.into();
            let (path, msg) = error_of(v);
            assert_eq!(path, format!("workload.{field}"));
            assert!(msg.starts_with("at most 10000000 in one run"), "{msg}");
        }
        let mut v = base();
        v["workload"]["arrivals"] = serde_json::json!({"kind": "poisson", "rate_per_s": 1e-300});
        let (path, msg) = error_of(v);
        assert_eq!(path, "workload.arrivals.rate_per_s");
        assert!(msg.contains("more than a year"), "{msg}");
        let mut v = base();
        v["workload"]["arrivals"] = serde_json::json!({"kind": "batches", "size": 1, "every_s": 3e7});
        assert_eq!(error_of(v).0, "workload.arrivals.every_s");
        let mut v = base();
        v["workload"]["arrivals"] = serde_json::json!({"kind": "batches", "size": 10, "every_s": 3e7});
        Scenario::from_json(&v.to_string()).unwrap(); // one batch: all at time zero
    }

    #[test]
    fn the_run_guard_is_a_field_with_a_default() {
        let s = Scenario::from_json(&base().to_string()).unwrap();
        assert_eq!(s.max_events, DEFAULT_MAX_EVENTS);
        let json: serde_json::Value = serde_json::from_str(&s.to_json()).unwrap();
        assert_eq!(json["max_events"], DEFAULT_MAX_EVENTS);
        let mut v = base();
        v["max_events"] = 0.into();
        assert_eq!(error_of(v).0, "max_events");
    }

    fn pingpong() -> serde_json::Value {
        let mut v = base();
        v["workload"] = serde_json::json!({"kind": "pingpong", "token_bytes": 512});
        v["sender"] = serde_json::json!({"kind": "tcp"});
        v
    }

    #[test]
    fn pingpong_defaults_and_round_trip() {
        let s = Scenario::from_json(&pingpong().to_string()).unwrap();
        assert_eq!(s.workload, Workload::PingPong(PingPong { pairs: 1, token_bytes: 512, rounds: 100 }));
        let Sender::Tcp(t) = &s.sender else { panic!("tcp") };
        assert!(!t.nodelay, "Nagle is on by default, as on Linux");
        let again = Scenario::from_json(&s.to_json()).unwrap();
        assert_eq!(again.workload, s.workload, "to_json names the kind");
        // A request workload prints as before, without a kind.
        let r = Scenario::from_json(&base().to_string()).unwrap();
        assert!(serde_json::from_str::<serde_json::Value>(&r.to_json()).unwrap()["workload"].get("kind").is_none());
    }

    #[test]
    fn pingpong_errors_name_the_field() {
        let mut v = pingpong();
        v["workload"]["token_bytes"] = 0.into();
        assert_eq!(error_of(v).0, "workload.token_bytes");
        let mut v = pingpong();
        v["workload"]["file_size"] = serde_json::json!({"kind": "fixed", "bytes": 1});
        let (path, msg) = error_of(v);
        assert_eq!(path, "workload.file_size");
        assert!(msg.contains("only for kind = \"requests\""), "{msg}");
        let mut v = pingpong();
        v["sender"] = serde_json::json!({"kind": "window"});
        let (path, msg) = error_of(v);
        assert_eq!(path, "workload.kind");
        assert!(msg.contains("sender.kind = \"tcp\""), "{msg}");
        let mut v = pingpong();
        v["sender"]["ack_path"] = "ideal".into();
        assert_eq!(error_of(v).0, "sender.ack_path");
        let mut v = pingpong();
        v["workload"]["kind"] = "pingping".into();
        let (path, msg) = error_of(v);
        assert_eq!(path, "workload.kind");
        assert!(msg.contains("`requests`, `pingpong`"), "{msg}");
        let mut v = pingpong();
        v["workload"].as_object_mut().unwrap().remove("token_bytes");
        let (path, msg) = error_of(v);
        assert_eq!(path, "workload");
        assert!(msg.contains("missing field `token_bytes`"), "{msg}");
    }

    #[test]
    fn missing_field_is_named() {
        let mut v = base();
        v["workload"].as_object_mut().unwrap().remove("requests");
        let (path, msg) = error_of(v);
        assert_eq!(path, "workload");
        assert!(msg.contains("missing field `requests`"), "{msg}");
    }
}
