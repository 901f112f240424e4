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
    /// The requests clients make.
    pub workload: Workload,
    /// How the server turns requests into packets.
    #[serde(default)]
    pub sender: Sender,
    /// Addresses and headers the packets carry (what the hash policies read).
    #[serde(default)]
    pub network: Network,
    /// The bond: its mode (scheduler), link monitor and the mode's options.
    pub bond: Bond,
    /// The bonded links, in order (link ids are positions after `count` expansion).
    pub links: Vec<LinkSpec>,
}

fn default_seed() -> u64 {
    1
}

/// The requests: how many, from how many clients, when, for which file sizes.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workload {
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
}

fn default_clients() -> u32 {
    10
}

/// When requests reach the server's request queue.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Arrivals {
    /// All requests are queued at time zero (the thesis's experiments).
    #[default]
    AtStart,
    /// `size` requests every `every_s` seconds, the first batch at zero (the
    /// appendix's `generate()`: 4999 requests every 5 s).
    Batches { size: u32, every_s: f64 },
    /// A Poisson process of `rate_per_s` requests per second.
    Poisson { rate_per_s: f64 },
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

/// The server side that turns requests into packets. Fields that belong to
/// another `kind` are errors; unset fields of this kind get their defaults.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Sender {
    /// `paced` (the thesis loop), `window` (each flow keeps a window of packets
    /// in flight, released on delivery: a bulk transfer) or `cbr` (each flow
    /// sends at a constant rate, like an iperf UDP stream).
    pub kind: SenderKind,
    /// Payload bytes per packet (default 1024).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chunk_bytes: Option<u32>,
    /// paced: period of the loop, milliseconds (appendix: 20).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tick_ms: Option<f64>,
    /// paced: packets taken per tick, one per queued request in turn (appendix: 4).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub packets_per_tick: Option<u32>,
    /// window/cbr: application write size, bytes: each write is cut into packets
    /// of at most `chunk_bytes` and never merged with the next (default: the whole file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_bytes: Option<u32>,
    /// window: packets a flow may have sent but not yet delivered (default 64).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_pkts: Option<u32>,
    /// window: time for a delivery to free its window slot, microseconds (default 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ack_delay_us: Option<f64>,
    /// cbr: payload rate of each flow, Mbit/s (required).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_mbps: Option<f64>,
}

/// Which sender model runs.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SenderKind {
    /// The thesis model: a periodic loop hands packets to the bond; a file of S
    /// bytes is `S / chunk + 1` packets (the last short, possibly empty).
    #[default]
    Paced,
    /// Bulk transfer: each flow keeps `window_pkts` packets in flight.
    Window,
    /// Constant bit rate per flow.
    Cbr,
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
    /// The scheduler's parameters, checked against its declaration.
    #[serde(flatten)]
    pub options: BTreeMap<String, serde_json::Value>,
}

fn default_miimon() -> f64 {
    100.0
}

/// One bonded link (or `count` identical ones). A link with `rate_mbps` is a
/// rate link (bit rate, transmit queue, wire); otherwise it is the thesis's
/// paced interface (one send per `period_ms`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct LinkSpec {
    /// Number of identical links this entry stands for.
    pub count: u32,
    /// Label used in outputs (default `linkN`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// paced: time between sends, ms (default 20; the thesis's slow interface: 82).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub period_ms: Option<f64>,
    /// paced: replayed send timing, seconds between successive sends (one per
    /// send, cycling). The front fills it from `trace_file`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_intervals_s: Option<Vec<f64>>,
    /// rate: bit rate, Mbit/s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_mbps: Option<f64>,
    /// rate: bytes added to each frame on the wire: preamble 8 + Ethernet header 14 + FCS 4 + gap 12 = 38.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overhead_bytes: Option<u32>,
    /// rate: largest IP packet, bytes (default 1500); packets never exceed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mtu: Option<u32>,
    /// rate: propagation delay, microseconds (default 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay_us: Option<f64>,
    /// rate: fixed cost per frame (NIC/driver), microseconds (default 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per_packet_us: Option<f64>,
    /// rate: random extra delay per packet; a link never reorders its own packets.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jitter: Option<Jitter>,
    /// rate: transmit queue length, packets (drop-tail; Linux default 1000).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub txqueuelen: Option<u32>,
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
}

impl Default for LinkSpec {
    fn default() -> Self {
        LinkSpec {
            count: 1,
            name: None,
            period_ms: None,
            trace_intervals_s: None,
            rate_mbps: None,
            overhead_bytes: None,
            mtu: None,
            delay_us: None,
            per_packet_us: None,
            jitter: None,
            txqueuelen: None,
            slowdown: 1.0,
            slow_windows: Vec::new(),
            intermittent: None,
            failures: Vec::new(),
            random_failures: None,
        }
    }
}

impl LinkSpec {
    /// True for a rate link, false for a paced (thesis) one.
    pub fn is_rate(&self) -> bool {
        self.rate_mbps.is_some()
    }
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

/// One loss of carrier.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Failure {
    /// When the carrier goes, seconds.
    pub down_s: f64,
    /// When it comes back, seconds (never, if absent).
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub up_s: Option<f64>,
}

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
            let path = dotted(err.path());
            let message = err.into_inner().to_string();
            // serde_json appends " at line L column C": positions in generated JSON mean nothing to a user.
            let message = match message.rfind(" at line ") {
                Some(cut) => message[..cut].to_string(),
                None => message,
            };
            Error::scenario(path, message)
        })?;
        scenario.normalize()?;
        scenario.validate()?;
        Ok(scenario)
    }

    /// The scenario as JSON with every default filled in.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a scenario always serialises")
    }

    /// Fills the defaults of the chosen sender and link kinds; rejects fields of another kind.
    fn normalize(&mut self) -> Result<()> {
        let s = &mut self.sender;
        let kind = s.kind;
        let name = match kind {
            SenderKind::Paced => "paced",
            SenderKind::Window => "window",
            SenderKind::Cbr => "cbr",
        };
        let only = |set: bool, field: &str, kinds: &str| -> Result<()> {
            if set {
                Err(Error::scenario(format!("sender.{field}"), format!("only for kind = {kinds}, not \"{name}\"")))
            } else {
                Ok(())
            }
        };
        s.chunk_bytes.get_or_insert(1024);
        match kind {
            SenderKind::Paced => {
                s.tick_ms.get_or_insert(20.0);
                s.packets_per_tick.get_or_insert(4);
            }
            SenderKind::Window => {
                s.window_pkts.get_or_insert(64);
                s.ack_delay_us.get_or_insert(0.0);
            }
            SenderKind::Cbr => {
                if s.rate_mbps.is_none() {
                    return Err(Error::scenario(
                        "sender.rate_mbps",
                        "kind = \"cbr\" needs rate_mbps (Mbit/s per flow)",
                    ));
                }
            }
        }
        let paced = kind == SenderKind::Paced;
        only(!paced && s.tick_ms.is_some(), "tick_ms", "\"paced\"")?;
        only(!paced && s.packets_per_tick.is_some(), "packets_per_tick", "\"paced\"")?;
        only(paced && s.message_bytes.is_some(), "message_bytes", "\"window\" or \"cbr\"")?;
        only(kind != SenderKind::Window && s.window_pkts.is_some(), "window_pkts", "\"window\"")?;
        only(kind != SenderKind::Window && s.ack_delay_us.is_some(), "ack_delay_us", "\"window\"")?;
        only(kind != SenderKind::Cbr && s.rate_mbps.is_some(), "rate_mbps", "\"cbr\"")?;

        let n = &mut self.network;
        n.header_bytes.get_or_insert(match n.protocol {
            Protocol::Tcp => 40,
            Protocol::Udp => 28,
        });

        for (i, link) in self.links.iter_mut().enumerate() {
            let wrong = |set: bool, field: &str, kind: &str| -> Result<()> {
                if set {
                    let why = if kind == "rate" {
                        "is a rate-link field: give the link rate_mbps, or remove it"
                    } else {
                        "is a paced-link field, and this link has rate_mbps"
                    };
                    Err(Error::scenario(format!("links.{i}.{field}"), why))
                } else {
                    Ok(())
                }
            };
            if link.is_rate() {
                wrong(link.period_ms.is_some(), "period_ms", "paced")?;
                wrong(link.trace_intervals_s.is_some(), "trace_intervals_s", "paced")?;
                link.overhead_bytes.get_or_insert(38);
                link.mtu.get_or_insert(1500);
                link.delay_us.get_or_insert(0.0);
                link.per_packet_us.get_or_insert(0.0);
                link.txqueuelen.get_or_insert(1000);
            } else {
                wrong(link.overhead_bytes.is_some(), "overhead_bytes", "rate")?;
                wrong(link.mtu.is_some(), "mtu", "rate")?;
                wrong(link.delay_us.is_some(), "delay_us", "rate")?;
                wrong(link.per_packet_us.is_some(), "per_packet_us", "rate")?;
                wrong(link.jitter.is_some(), "jitter", "rate")?;
                wrong(link.txqueuelen.is_some(), "txqueuelen", "rate")?;
                link.period_ms.get_or_insert(20.0);
            }
        }
        Ok(())
    }

    /// Checks values that types alone cannot (positive periods, ranges, names).
    pub fn validate(&self) -> Result<()> {
        if let Some(stop) = self.stop_s {
            duration("stop_s", stop, 1.0, false)?;
        }
        self.validate_workload()?;
        self.validate_sender()?;
        self.validate_network()?;
        self.validate_links()?;
        self.validate_bond()
    }

    fn validate_workload(&self) -> Result<()> {
        let w = &self.workload;
        at_least("workload.clients", u64::from(w.clients), 1)?;
        at_least("workload.requests", u64::from(w.requests), 1)?;
        match &w.arrivals {
            Arrivals::AtStart => {}
            Arrivals::Batches { size, every_s } => {
                at_least("workload.arrivals.size", u64::from(*size), 1)?;
                duration("workload.arrivals.every_s", *every_s, 1.0, false)?;
            }
            Arrivals::Poisson { rate_per_s } => positive("workload.arrivals.rate_per_s", *rate_per_s)?,
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

    fn validate_sender(&self) -> Result<()> {
        let s = &self.sender;
        let chunk = self.chunk_bytes();
        at_least("sender.chunk_bytes", u64::from(chunk), 1)?;
        if let Some(tick) = s.tick_ms {
            duration("sender.tick_ms", tick, 1e-3, false)?;
        }
        if let Some(per_tick) = s.packets_per_tick {
            at_least("sender.packets_per_tick", u64::from(per_tick), 1)?;
        }
        if let Some(message) = s.message_bytes {
            at_least("sender.message_bytes", u64::from(message), 1)?;
        }
        if let Some(window) = s.window_pkts {
            at_least("sender.window_pkts", u64::from(window), 1)?;
        }
        if let Some(ack) = s.ack_delay_us {
            duration("sender.ack_delay_us", ack, 1e-6, true)?;
        }
        if let Some(rate) = s.rate_mbps {
            rate_mbps("sender.rate_mbps", rate)?;
        }
        let largest = crate::workload::max_file_bytes(&self.workload.file_size);
        let packets = crate::sender::Cutter::for_scenario(self).packets(largest);
        if packets > u64::from(u32::MAX) {
            return Err(Error::scenario(
                "workload.file_size",
                format!("a file may be cut into at most {} packets, the largest here needs {packets}", u32::MAX),
            ));
        }
        Ok(())
    }

    fn validate_network(&self) -> Result<()> {
        let n = &self.network;
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
            at_least(&p("count"), u64::from(link.count), 1)?;
            if let Some(period) = link.period_ms {
                duration(&p("period_ms"), period, 1e-3, false)?;
            }
            if let Some(rate) = link.rate_mbps {
                rate_mbps(&p("rate_mbps"), rate)?;
            }
            if let Some(overhead) = link.overhead_bytes {
                if overhead > 10_000 {
                    return Err(Error::scenario(p("overhead_bytes"), format!("must be at most 10000, got {overhead}")));
                }
            }
            if let Some(mtu) = link.mtu {
                if !(68..=65535).contains(&mtu) {
                    return Err(Error::scenario(p("mtu"), format!("an IPv4 MTU is 68 to 65535, got {mtu}")));
                }
                if packet > u64::from(mtu) {
                    return Err(Error::scenario(
                        "sender.chunk_bytes",
                        format!(
                            "{} payload + {} header bytes exceed links.{i}.mtu ({mtu}); fragmentation is not modelled",
                            self.chunk_bytes(),
                            self.l3_header_bytes()
                        ),
                    ));
                }
            }
            if let Some(delay) = link.delay_us {
                duration(&p("delay_us"), delay, 1e-6, true)?;
            }
            if let Some(cost) = link.per_packet_us {
                duration(&p("per_packet_us"), cost, 1e-6, true)?;
            }
            if let Some(jitter) = &link.jitter {
                let (field, value) = match jitter {
                    Jitter::Uniform { max_us } => ("max_us", *max_us),
                    Jitter::Exponential { mean_us } => ("mean_us", *mean_us),
                    Jitter::Normal { sd_us } => ("sd_us", *sd_us),
                };
                duration(&p(&format!("jitter.{field}")), value, 1e-6, false)?;
            }
            if let Some(queue) = link.txqueuelen {
                at_least(&p("txqueuelen"), u64::from(queue), 1)?;
            }
            factor(&p("slowdown"), link.slowdown)?;
            for (k, win) in link.slow_windows.iter().enumerate() {
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
            if let Some(im) = &link.intermittent {
                duration(&p("intermittent.slow_s"), im.slow_s, 1.0, false)?;
                duration(&p("intermittent.normal_s"), im.normal_s, 1.0, false)?;
                factor(&p("intermittent.slowdown"), im.slowdown)?;
            }
            if let Some(trace) = &link.trace_intervals_s {
                if trace.is_empty() {
                    return Err(Error::scenario(p("trace_intervals_s"), "a trace needs at least one interval"));
                }
                for (k, &v) in trace.iter().enumerate() {
                    duration(&format!("links.{i}.trace_intervals_s.{k}"), v, 1.0, false)?;
                }
            }
            let mut back_up_at = 0.0_f64;
            for (k, failure) in link.failures.iter().enumerate() {
                let q = |field: &str| format!("links.{i}.failures.{k}.{field}");
                duration(&q("down_s"), failure.down_s, 1.0, true)?;
                if failure.down_s < back_up_at {
                    return Err(Error::scenario(
                        q("down_s"),
                        format!(
                            "failures must be in time order: this one starts before the last ended ({back_up_at} s)"
                        ),
                    ));
                }
                match failure.up_s {
                    Some(up) => {
                        duration(&q("up_s"), up, 1.0, false)?;
                        if up <= failure.down_s {
                            return Err(Error::scenario(q("up_s"), format!("must be > down_s ({})", failure.down_s)));
                        }
                        back_up_at = up;
                    }
                    None if k + 1 < link.failures.len() => {
                        return Err(Error::scenario(q("up_s"), "only the last failure may last for ever"));
                    }
                    None => {}
                }
            }
            if let Some(random) = &link.random_failures {
                duration(&p("random_failures.mtbf_s"), random.mtbf_s, 1.0, false)?;
                duration(&p("random_failures.mttr_s"), random.mttr_s, 1.0, false)?;
                if !link.failures.is_empty() {
                    return Err(Error::scenario(p("random_failures"), "give failures or random_failures, not both"));
                }
            }
        }
        let links: u64 = self.links.iter().map(|l| u64::from(l.count)).sum();
        if links > 4096 {
            return Err(Error::scenario("links", format!("at most 4096 links in a bond, got {links}")));
        }
        Ok(())
    }

    fn validate_bond(&self) -> Result<()> {
        let b = &self.bond;
        duration("bond.miimon", b.miimon, 1e-3, true)?;
        duration("bond.updelay", b.updelay, 1e-3, true)?;
        duration("bond.downdelay", b.downdelay, 1e-3, true)?;
        if b.miimon == 0.0 {
            for (field, value) in [("updelay", b.updelay), ("downdelay", b.downdelay)] {
                if value > 0.0 {
                    return Err(Error::scenario(
                        format!("bond.{field}"),
                        "needs the link monitor: set bond.miimon > 0",
                    ));
                }
            }
        }
        let resolved = crate::bond::registry::resolve(&self.bond.mode, &self.bond.options)?;
        resolved.build(&self.bond_context())?;
        Ok(())
    }

    /// What the bond's scheduler is built with: its links' names and speeds, the seed.
    pub fn bond_context(&self) -> crate::bond::BuildContext {
        let chunk_bits = f64::from(self.chunk_bytes()) * 8.0;
        let links = self
            .each_link()
            .map(|(id, spec)| crate::bond::LinkInfo {
                name: crate::link::link_name(spec, id),
                rate_bps: match (spec.rate_mbps, spec.period_ms) {
                    (Some(mbps), _) => mbps * 1e6,
                    (None, period) => chunk_bits / (period.unwrap_or(20.0) / 1e3),
                },
            })
            .collect();
        crate::bond::BuildContext { links, seed: self.seed }
    }

    /// Number of links after expanding `count`.
    pub fn link_count(&self) -> usize {
        self.links.iter().map(|l| l.count as usize).sum()
    }

    /// Payload bytes per packet.
    pub fn chunk_bytes(&self) -> u32 {
        self.sender.chunk_bytes.unwrap_or(1024)
    }

    /// IPv4 + transport header bytes per packet, plus the VLAN tag if any.
    pub fn l3_header_bytes(&self) -> u32 {
        self.network.header_bytes.unwrap_or(40) + if self.network.vlan.is_some() { 4 } else { 0 }
    }

    /// Every link spec, once per link (after `count` expansion), with its id.
    pub fn each_link(&self) -> impl Iterator<Item = (usize, &LinkSpec)> {
        self.links.iter().flat_map(|spec| std::iter::repeat_n(spec, spec.count as usize)).enumerate()
    }
}

/// Formats a serde path as `a.b.3.c`, the form `--set` takes.
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
/// or [0, one year] if `zero_ok`.
pub(crate) fn duration(path: &str, value: f64, unit_s: f64, zero_ok: bool) -> Result<()> {
    let low_ok = if zero_ok { value >= 0.0 } else { value > 0.0 };
    if value.is_finite() && low_ok && value * unit_s <= MAX_SECONDS {
        Ok(())
    } else {
        let low = if zero_ok { ">= 0" } else { "> 0" };
        Err(Error::scenario(path, format!("must be a duration {low} and at most a year, got {value}")))
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
        assert_eq!((s.chunk_bytes(), s.sender.tick_ms, s.sender.packets_per_tick), (1024, Some(20.0), Some(4)));
        assert_eq!(s.sender.window_pkts, None);
        assert_eq!(s.workload.clients, 10);
        assert_eq!(s.workload.arrivals, Arrivals::AtStart);
        assert_eq!(s.link_count(), 4);
        assert_eq!(s.links[1].period_ms, Some(82.0));
        assert_eq!(s.links[0].period_ms, Some(20.0));
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
    fn missing_field_is_named() {
        let mut v = base();
        v["workload"].as_object_mut().unwrap().remove("requests");
        let (path, msg) = error_of(v);
        assert_eq!(path, "workload");
        assert!(msg.contains("missing field `requests`"), "{msg}");
    }
}
