//! What a run produces: a summary and columnar per-request and per-link tables.

use arrow_array::RecordBatch;
use serde::Serialize;

use crate::columnar::Columnar;

use crate::link::LinkStats;
use crate::receiver::{Receiver, WireTap};
use crate::report::{nearest_rank, Figure, Figures, Reported, Tables};
use crate::switch::SwitchStats;
use crate::time::SimTime;
use crate::workload::Request;

/// Everything a run reports.
#[derive(Debug, Clone, Serialize)]
pub struct RunResult {
    /// Whole-run figures.
    pub summary: Summary,
    /// One row per request (flow).
    pub requests: RequestTable,
    /// One row per link.
    pub links: LinkTable,
    /// The tables the components reported (`tcp_trace`: TCP connections sampled every
    /// `sender.trace_ms`, when asked for), by name.
    #[serde(flatten)]
    pub tables: Tables,
    /// Each link's load, queue and state per time bucket (`trace.link_ms`), when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_trace: Option<crate::trace::LinkTrace>,
    /// Every change of a link's carrier and the monitor's verdict (with `trace.link_ms`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_events: Option<crate::trace::LinkEvents>,
    /// The first packets' schedule (`trace.packets`), when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub packet_trace: Option<crate::trace::PacketTrace>,
    /// One row per failure of a link (runs whose links can fail; `failover.rs`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failovers: Option<crate::failover::FailoverTable>,
}

/// Whole-run figures. Everything but `wall_s` is a pure function of the scenario.
///
/// The simulator and the emulator (`bondsim-emu`) both fill it. A field that is an `Option`
/// left out of the JSON when `None` is one the emulator cannot measure (the simulator always
/// sets it); the components' own figures are in `figures`, in their declared order.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    /// The scenario's name.
    pub scenario: String,
    /// The scheduler, as `name[non-default params]`.
    pub scheduler: String,
    /// The scenario seed.
    pub seed: u64,
    /// Number of links.
    pub link_count: usize,
    /// Number of requests (flows).
    pub requests: u32,
    /// Packets the server's end handed to the bond: its data and its pure ACKs (in an upload, its
    /// ACKs only).
    pub packets: u64,
    /// Distinct data packets that reached the receiving application (the clients', or in an upload
    /// the server's).
    pub delivered: u64,
    /// Packets lost on the way (every copy dropped; for TCP, which repairs drops, the
    /// segments a connection that was given up never delivered).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dropped: Option<u64>,
    /// Extra copies received (broadcast).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duplicates: Option<u64>,
    /// Packets still on their way when the run stopped (`stop_s`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undelivered: Option<u64>,
    /// Delivered packets in order (thesis rule).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub in_order: Option<u64>,
    /// Delivered packets out of order (thesis rule = RFC 4737 reordered), at the
    /// application's delivery point (after a resequencing receiver, if any).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub out_of_order: Option<u64>,
    /// Packets that reached the clients' wire out of order (the same rule, before any resequencing).
    pub wire_out_of_order: u64,
    /// `wire_out_of_order` over the distinct packets that reached the clients' wire.
    pub wire_ooo_fraction: f64,
    /// Packets the clients sent back to the server (acknowledgements).
    pub reverse_packets: u64,
    /// Of those, how many reached the server.
    pub reverse_delivered: u64,
    /// `out_of_order / delivered`: the thesis's share, and RFC 4737's reordered ratio.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ooo_fraction: Option<f64>,
    /// Mean RFC 4737 reordering extent of the reordered packets.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reorder_extent_mean: Option<f64>,
    /// Largest RFC 4737 reordering extent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reorder_extent_max: Option<u64>,
    /// RFC 5236 reorder density: share of packets at each displacement
    /// (receive index − expected index; ±17 = beyond the threshold of 16).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reorder_density: Option<Vec<DensityBin>>,
    /// Copies dropped because a transmit queue was full.
    pub drops_queue_full: u64,
    /// Copies dropped because their link had lost its carrier.
    pub drops_link_down: u64,
    /// Copies lost on the wire at random (rate links' `loss` / `loss_model`; forward direction).
    pub drops_random: u64,
    /// Copies dropped by silently failed ports (`failures.K.kind = "silent"`; forward direction).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drops_silent: Option<u64>,
    /// Copies dropped by the full queue of a line beyond the NIC (`links.N.downstream`; forward
    /// direction).
    #[serde(default)]
    pub drops_downstream: u64,
    /// Packets dropped because the bond had no usable link.
    pub drops_no_link: u64,
    /// The miimon period in force, ms: `bond.miimon`, or the 100 ms Linux forces in 802.3ad,
    /// balance-tlb and balance-alb when it is 0 (`bond_check_params`), in whole jiffies of
    /// `bond.hz` as the checks run (miimon 1 ms: 4 ms at HZ 250).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub miimon_ms: Option<f64>,
    /// ARP requests the ARP monitor sent (not in the application's figures).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arp_probes_sent: Option<u64>,
    /// ARP replies that reached the bond.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arp_replies: Option<u64>,
    /// Copies the bond sent that the switch dropped at the port (spanning tree: `switch.stp`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drops_switch_port: Option<u64>,
    /// Times the switch's MAC table moved a MAC to another port (`switch.lag = "none"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub switch_mac_moves: Option<u64>,
    /// Frames towards the bond the switch flooded (destination unknown or aged out).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub switch_flooded: Option<u64>,
    /// Frames towards the bond the switch dropped (learned on a port that does not forward).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub switch_drops_to_bond: Option<u64>,
    /// Frames towards the bond that arrived on a slave the bond does not receive on (dropped by it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bond_drops_inactive_slave: Option<u64>,
    /// Gratuitous ARPs the bond sent after active-backup failovers (`bond.num_grat_arp`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grat_arps_sent: Option<u64>,
    /// Time of the last delivery, seconds.
    pub makespan_s: f64,
    /// Time the rates below are taken over: `stop_s` if the run was stopped, else until the
    /// fabric emptied (the makespan, or later if extra copies were still on the wire).
    pub duration_s: f64,
    /// Sum of the links' nominal speeds, bits/s.
    pub capacity_bps: f64,
    /// Bits the links put on the wire (frame overhead included) per second.
    pub throughput_bps: f64,
    /// Distinct payload bits delivered per second (from `measure_from_s`, when set).
    pub goodput_bps: f64,
    /// `throughput_bps / capacity_bps`.
    pub utilisation: f64,
    /// Jain's fairness index of the links' loads (wire bits over capacity); 1 = perfectly even.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jain_index: Option<f64>,
    /// Largest link load over the mean link load.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_mean_ratio: Option<f64>,
    /// Delivery delay (sender to client), microseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay_mean_us: Option<f64>,
    /// Median delivery delay, microseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay_p50_us: Option<f64>,
    /// 90th percentile delivery delay, microseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay_p90_us: Option<f64>,
    /// 99th percentile delivery delay, microseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay_p99_us: Option<f64>,
    /// 99.9th percentile delivery delay, microseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay_p999_us: Option<f64>,
    /// Largest delivery delay, microseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay_max_us: Option<f64>,
    /// Requests whose every packet was delivered (the whole file reached the client).
    pub flows_complete: u32,
    /// Requests that lost packets on the way (every copy dropped) and so never completed
    /// (a reliable transport such as TCP resends what is lost: its flows lose none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flows_with_loss: Option<u32>,
    /// Most packets a resequencing receiver held at once (schedulers that resequence).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reseq_max_held: Option<Option<u64>>,
    /// Flow completion time (arrival of the request to delivery of its last byte) over
    /// complete flows: mean, median and 99th percentile, seconds.
    pub fct_mean_s: Option<f64>,
    /// Median flow completion time, seconds.
    pub fct_p50_s: Option<f64>,
    /// 99th-percentile flow completion time, seconds.
    pub fct_p99_s: Option<f64>,
    /// What the components reported ([`declared_figures`]), in their declared order; the emulator's own figures.
    #[serde(flatten)]
    pub figures: Figures,
    /// `link_events` stopped at its row limit (only with `trace.link_ms`; absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_truncated: Option<bool>,
    /// Events the engine processed (an idle paced link's wake-ups run outside the event
    /// queue and are not among them: `sim::World::idle_polls_before`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub events: Option<u64>,
    /// Wall-clock time of the run, seconds (the only non-deterministic figure).
    pub wall_s: f64,
    /// Per-link packet counts.
    pub links: Vec<LinkSummary>,
}

/// Every component's declared figures, in the summary's order: the transport's ends
/// (`transport::FIGURES`), the failover measures, the receiving hosts.
pub fn declared_figures() -> Vec<&'static [crate::report::Declared]> {
    crate::transport::FIGURES.iter().copied().chain([crate::failover::FIGURES, crate::host::FIGURES]).collect()
}

impl Summary {
    /// A summary with every figure there is (each `Option` set, every declared figure listed):
    /// what [`crate::columnar::summary_schema`] reads the figures' names and types from.
    pub fn full() -> Summary {
        let mut figures = Figures::default();
        for declared in declared_figures().into_iter().flatten() {
            figures.push(declared.name, Figure::None);
        }
        Summary {
            dropped: Some(0),
            duplicates: Some(0),
            undelivered: Some(0),
            in_order: Some(0),
            out_of_order: Some(0),
            ooo_fraction: Some(0.0),
            reorder_extent_mean: Some(0.0),
            reorder_extent_max: Some(0),
            reorder_density: Some(Vec::new()),
            drops_silent: Some(0),
            miimon_ms: Some(0.0),
            arp_probes_sent: Some(0),
            arp_replies: Some(0),
            drops_switch_port: Some(0),
            switch_mac_moves: Some(0),
            switch_flooded: Some(0),
            switch_drops_to_bond: Some(0),
            bond_drops_inactive_slave: Some(0),
            grat_arps_sent: Some(0),
            jain_index: Some(0.0),
            max_mean_ratio: Some(0.0),
            delay_mean_us: Some(0.0),
            delay_p50_us: Some(0.0),
            delay_p90_us: Some(0.0),
            delay_p99_us: Some(0.0),
            delay_p999_us: Some(0.0),
            delay_max_us: Some(0.0),
            flows_with_loss: Some(0),
            reseq_max_held: Some(Some(0)),
            fct_mean_s: Some(0.0),
            fct_p50_s: Some(0.0),
            fct_p99_s: Some(0.0),
            figures,
            trace_truncated: Some(false),
            events: Some(0),
            ..Summary::default()
        }
    }

    /// The reported count `name` (`None`: not reported in this run, or not a count).
    pub fn count(&self, name: &str) -> Option<u64> {
        self.figures.get(name).and_then(Figure::count)
    }

    /// The reported real number `name` (`None`: not reported in this run, or not a real).
    pub fn real(&self, name: &str) -> Option<f64> {
        self.figures.get(name).and_then(Figure::real)
    }

    /// The reported flag `name` (`None`: not reported in this run, or not a flag).
    pub fn flag(&self, name: &str) -> Option<bool> {
        self.figures.get(name).and_then(Figure::flag)
    }
}

/// One displacement of the reorder density.
#[derive(Debug, Clone, Serialize)]
pub struct DensityBin {
    /// Displacement (positive: arrived late).
    pub displacement: i64,
    /// Share of packets with it.
    pub fraction: f64,
}

/// A link's line in the summary.
#[derive(Debug, Clone, Serialize)]
pub struct LinkSummary {
    /// Link id.
    pub link: usize,
    /// Link name.
    pub name: String,
    /// Packets sent.
    pub packets_sent: u64,
}

/// Per-request results, one column per field.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RequestTable {
    /// Request number.
    pub request: Vec<u32>,
    /// Client that asked.
    pub client: Vec<u32>,
    /// Requested file size.
    pub file_bytes: Vec<u64>,
    /// Packets the file was cut into.
    pub packets: Vec<u32>,
    /// Distinct packets delivered.
    pub received: Vec<u32>,
    /// Packets delivered in order.
    pub in_order: Vec<u32>,
    /// Packets delivered out of order.
    pub out_of_order: Vec<u32>,
    /// Extra copies received.
    pub duplicates: Vec<u32>,
    /// Packets lost.
    pub lost: Vec<u32>,
    /// Largest RFC 4737 reordering extent.
    pub max_extent: Vec<u64>,
    /// Arrival at the server, seconds (null: a closed loop's request that was never asked
    /// for, because an earlier request of its client never ended).
    pub arrival_s: Vec<Option<f64>>,
    /// Last delivery, seconds (null if nothing was delivered).
    pub finish_s: Vec<Option<f64>>,
    /// Times consecutive packets of the flow took different links (0: one path).
    pub link_switches: Vec<u32>,
    /// The link the flow's last packet took (null for broadcast or dropped-only flows).
    pub last_link: Vec<Option<u32>>,
    /// The link the client's traffic to the server arrives on, where the mode decides it.
    pub rx_link: Vec<Option<usize>>,
}

/// Per-link results, one column per field.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LinkTable {
    /// Link id.
    pub link: Vec<usize>,
    /// Link name.
    pub name: Vec<String>,
    /// `paced` or `rate`.
    pub kind: Vec<&'static str>,
    /// Nominal speed, bits/s.
    pub capacity_bps: Vec<f64>,
    /// Packets sent.
    pub packets_sent: Vec<u64>,
    /// Payload bytes sent.
    pub bytes_sent: Vec<u64>,
    /// Bytes on the wire, frame overhead included (paced links: payload).
    pub wire_bytes: Vec<u64>,
    /// Time spent sending, seconds (rate links).
    pub busy_s: Vec<f64>,
    /// Share of the run the link was busy (paced links: share of wake-ups that sent).
    pub utilisation: Vec<f64>,
    /// Longest transmit queue, packets.
    pub max_queue_pkts: Vec<u32>,
    /// Packets dropped with a full queue.
    pub drops_queue_full: Vec<u64>,
    /// Packets dropped for lack of carrier.
    pub drops_link_down: Vec<u64>,
    /// Frames lost on the wire at random (`loss`, `loss_model`; counted in `packets_sent` too).
    pub drops_random: Vec<u64>,
    /// Frames dropped by a silently failed port (counted in `packets_sent` too).
    pub drops_silent: Vec<u64>,
    /// Frames dropped by the full queue of the line beyond the NIC (`downstream`; counted in
    /// `packets_sent` too).
    #[serde(default)]
    pub drops_downstream: Vec<u64>,
    /// Carrier losses.
    pub failures: Vec<u64>,
    /// Wake-ups (paced links).
    pub polls: Vec<u64>,
    /// Packets the link carried from the clients to the server.
    pub reverse_packets_sent: Vec<u64>,
    /// Packets lost on the way back (full queue, no carrier, lost on the wire).
    pub reverse_drops: Vec<u64>,
    /// Frames the link carried that its switch port dropped (spanning tree: `switch.stp`).
    pub drops_switch_port: Vec<u64>,
}

/// What a link reports at the end of a run.
#[derive(Debug, Clone)]
pub struct LinkReport {
    /// Its name.
    pub name: String,
    /// `paced` or `rate`.
    pub kind: &'static str,
    /// Nominal speed, bits/s (paced links: payload bits per period).
    pub capacity_bps: f64,
    /// Bytes it put on the wire (`Link::wire_bytes`: paced links, payload).
    pub wire_bytes: u64,
    /// The forward direction's counters.
    pub stats: LinkStats,
    /// The reverse direction's counters.
    pub reverse: LinkStats,
}

/// What the components of a run report: the result is built from these alone.
pub struct Reports<'a> {
    /// The scenario's name.
    pub name: &'a str,
    /// Its seed.
    pub seed: u64,
    /// The scheduler's label.
    pub scheduler: String,
    /// The workload's requests.
    pub requests: &'a [Request],
    /// The metrics at the application's delivery point.
    pub receiver: &'a Receiver,
    /// The metrics at the clients' wire.
    pub wire: &'a WireTap,
    /// Per flow: last link and link switches.
    pub paths: &'a [(u32, u32)],
    /// Per flow: the link the client's traffic arrives on, where the mode decides it.
    pub rx_links: Vec<Option<usize>>,
    /// Every link's report, by id.
    pub links: Vec<LinkReport>,
    /// Packets the server handed to the bond.
    pub sent: u64,
    /// Packets dropped for want of a usable link.
    pub drops_no_link: u64,
    /// What the switch counted.
    pub switch: SwitchStats,
    /// Packets the clients sent back.
    pub reverse_sent: u64,
    /// Of those, how many reached the server.
    pub reverse_arrived: u64,
    /// When `stop_s` ended the run, if it did.
    pub stopped_at: Option<SimTime>,
    /// When the run ended (the last event it processed).
    pub ended_at: SimTime,
    /// Events processed.
    pub events: u64,
    /// Most packets a resequencing receiver held at once.
    pub reseq_max_held: Option<u64>,
    /// What the components reported (the transport's ends, the failover measures).
    pub reported: Reported,
    /// The transport repairs losses itself (`Endpoint::reliable`): what the application has not
    /// received is what it wrote and has not received, whatever the bond sent.
    pub reliable: bool,
    /// The `[trace]` tables (empty unless asked for).
    pub trace: crate::trace::TraceTables,
    /// The failover measures (runs whose links can fail).
    pub failovers: Option<crate::failover::FailoverTable>,
    /// The miimon period in force, ms (Linux forces 100 ms in 802.3ad, balance-tlb and balance-alb).
    pub miimon_ms: f64,
    /// ARP monitor requests sent.
    pub arp_probes_sent: u64,
    /// ARP monitor replies received.
    pub arp_replies: u64,
}

impl RunResult {
    /// The result as JSON (tables as `{column: [values]}`).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("results always serialise")
    }

    /// The summary as JSON.
    pub fn summary_json(&self) -> String {
        serde_json::to_string(&self.summary).expect("summaries always serialise")
    }

    /// Every table the run has, by name, as Arrow record batches ([`crate::columnar`]: the schemas
    /// of [`crate::columnar::schemas`]), in the order of the JSON's.
    pub fn batches(&self) -> Vec<(&'static str, RecordBatch)> {
        let mut out = vec![("requests", self.requests.batch()), ("links", self.links.batch())];
        out.extend(self.tables.0.iter().map(|(name, t)| (*name, t.batch().clone())));
        let traces = [
            ("link_trace", self.link_trace.as_ref().map(Columnar::batch)),
            ("link_events", self.link_events.as_ref().map(Columnar::batch)),
            ("packet_trace", self.packet_trace.as_ref().map(Columnar::batch)),
            ("failovers", self.failovers.as_ref().map(Columnar::batch)),
        ];
        out.extend(traces.into_iter().filter_map(|(name, b)| Some((name, b?))));
        out
    }
}

crate::columnar!(RequestTable: request, client, file_bytes, packets, received, in_order, out_of_order, duplicates,
    lost, max_extent, arrival_s, finish_s, link_switches, last_link, rx_link);
crate::columnar!(LinkTable: link, name, kind, capacity_bps, packets_sent, bytes_sent, wire_bytes, busy_s,
    utilisation, max_queue_pkts, drops_queue_full, drops_link_down, drops_random, drops_silent, drops_downstream,
    failures, polls, reverse_packets_sent, reverse_drops, drops_switch_port);

/// Jain's fairness index of `x`: `(Σx)² / (n Σx²)`, 1 when all are equal (or all zero).
pub fn jain_index(x: &[f64]) -> f64 {
    let sum: f64 = x.iter().sum();
    let squares: f64 = x.iter().map(|v| v * v).sum();
    if squares == 0.0 {
        1.0
    } else {
        sum * sum / (x.len() as f64 * squares)
    }
}

/// Builds the result of a run from its components' reports.
pub fn build(reports: Reports, wall_s: f64) -> RunResult {
    let rx = reports.receiver;
    let makespan_s = rx.last_delivery.as_secs_f64();
    // Rates count every bit the links put on the wire, so they are taken over the whole run:
    // broadcast's slow link still sends copies after the last first copy arrived.
    let duration_s = reports.stopped_at.unwrap_or(reports.ended_at).as_secs_f64();
    let per_s = |x: f64| if duration_s > 0.0 { x / duration_s } else { 0.0 };

    let mut requests = RequestTable::default();
    for (r, flow) in reports.requests.iter().zip(rx.flows()) {
        requests.request.push(r.id);
        requests.client.push(r.client);
        requests.file_bytes.push(r.file_bytes);
        requests.packets.push(flow.packets());
        requests.received.push(flow.received);
        requests.in_order.push(flow.in_order);
        requests.out_of_order.push(flow.out_of_order());
        requests.duplicates.push(flow.duplicates);
        requests.lost.push(flow.lost);
        requests.max_extent.push(u64::from(flow.max_extent));
        requests.arrival_s.push((r.arrival != crate::workload::PENDING).then(|| r.arrival.as_secs_f64()));
        requests.finish_s.push((flow.received > 0).then(|| flow.last_at.as_secs_f64()));
    }
    requests.link_switches = reports.paths.iter().map(|p| p.1).collect();
    requests.last_link = reports.paths.iter().map(|p| (p.0 != u32::MAX).then_some(p.0)).collect();
    requests.rx_link = reports.rx_links;

    let mut links = LinkTable::default();
    let mut loads = Vec::new();
    let mut wire_bits = 0.0;
    let (mut queue_full, mut link_down, mut random, mut silent, mut downstream) = (0, 0, 0, 0, 0);
    for (id, link) in reports.links.iter().enumerate() {
        let s = &link.stats;
        let capacity = link.capacity_bps;
        let paced = link.kind == "paced";
        links.link.push(id);
        links.name.push(link.name.clone());
        links.kind.push(link.kind);
        links.capacity_bps.push(capacity);
        links.packets_sent.push(s.packets_sent);
        links.bytes_sent.push(s.bytes_sent);
        let wire = link.wire_bytes;
        links.wire_bytes.push(wire);
        links.busy_s.push(s.busy_ns as f64 / 1e9);
        links.utilisation.push(match paced {
            true if s.polls > 0 => s.packets_sent as f64 / s.polls as f64,
            true => 0.0,
            false => per_s(s.busy_ns as f64 / 1e9).min(1.0),
        });
        links.max_queue_pkts.push(s.max_queue_pkts);
        links.drops_queue_full.push(s.drops_queue_full);
        links.drops_link_down.push(s.drops_link_down);
        links.drops_random.push(s.drops_random);
        links.drops_silent.push(s.drops_silent);
        links.drops_downstream.push(s.drops_downstream);
        links.failures.push(s.failures);
        links.polls.push(s.polls);
        links.reverse_packets_sent.push(link.reverse.packets_sent);
        let r = &link.reverse;
        links
            .reverse_drops
            .push(r.drops_queue_full + r.drops_link_down + r.drops_random + r.drops_silent + r.drops_downstream);
        links.drops_switch_port.push(reports.switch.drops_port.get(id).copied().unwrap_or(0));
        wire_bits += wire as f64 * 8.0;
        loads.push(wire as f64 * 8.0 / capacity);
        queue_full += s.drops_queue_full;
        link_down += s.drops_link_down;
        random += s.drops_random;
        silent += s.drops_silent;
        downstream += s.drops_downstream;
    }
    let capacity_bps: f64 = links.capacity_bps.iter().sum();
    let mean_load = loads.iter().sum::<f64>() / loads.len() as f64;
    let max_load = loads.iter().cloned().fold(0.0, f64::max);

    let delay = &rx.delay_ns();
    let us = |ns: u64| ns as f64 / 1e3;
    let quantile = |q: f64| if delay.is_empty() { 0.0 } else { us(delay.value_at_quantile(q)) };
    let reordered = rx.delivered - rx.in_order;
    let sum_extent: u64 = rx.flows().iter().map(|f| f.sum_extent).sum();
    let mut fct: Vec<f64> = reports
        .requests
        .iter()
        .zip(rx.flows())
        .filter(|(_, f)| f.complete())
        .map(|(r, f)| (f.last_at.0.saturating_sub(r.arrival.0)) as f64 / 1e9)
        .collect();
    fct.sort_by(f64::total_cmp);
    let fct_at = |q: f64| nearest_rank(&fct, q).copied();
    // A reliable transport resends what the wire lost: what is not delivered yet is what the
    // application wrote and has not received, not what the bond sent.
    let datagrams = || rx.flows().iter().map(|f| u64::from(f.packets())).sum::<u64>();
    let undelivered = if reports.reliable {
        datagrams() - rx.delivered
    } else if reports.reported.counts_datagrams {
        // The bond sent fragments; the application counts datagrams.
        datagrams() - rx.delivered - rx.lost
    } else {
        reports.sent - rx.delivered - rx.lost
    };

    let summary = Summary {
        scenario: reports.name.to_string(),
        scheduler: reports.scheduler,
        seed: reports.seed,
        link_count: reports.links.len(),
        requests: reports.requests.len() as u32,
        packets: reports.sent,
        delivered: rx.delivered,
        dropped: Some(rx.lost),
        duplicates: Some(rx.duplicates),
        undelivered: Some(undelivered),
        in_order: Some(rx.in_order),
        out_of_order: Some(reordered),
        wire_out_of_order: reports.wire.out_of_order,
        wire_ooo_fraction: if reports.wire.arrived == 0 {
            0.0
        } else {
            reports.wire.out_of_order as f64 / reports.wire.arrived as f64
        },
        reverse_packets: reports.reverse_sent,
        reverse_delivered: reports.reverse_arrived,
        ooo_fraction: Some(if rx.delivered == 0 { 0.0 } else { reordered as f64 / rx.delivered as f64 }),
        reorder_extent_mean: Some(if reordered == 0 { 0.0 } else { sum_extent as f64 / reordered as f64 }),
        reorder_extent_max: Some(rx.flows().iter().map(|f| u64::from(f.max_extent)).max().unwrap_or(0)),
        reorder_density: Some(
            rx.density
                .fractions()
                .into_iter()
                .map(|(displacement, fraction)| DensityBin { displacement, fraction })
                .collect(),
        ),
        drops_queue_full: queue_full,
        drops_link_down: link_down,
        drops_random: random,
        drops_silent: Some(silent),
        drops_downstream: downstream,
        drops_no_link: reports.drops_no_link,
        miimon_ms: Some(reports.miimon_ms),
        arp_probes_sent: Some(reports.arp_probes_sent),
        arp_replies: Some(reports.arp_replies),
        drops_switch_port: Some(reports.switch.drops_port.iter().sum()),
        switch_mac_moves: Some(reports.switch.mac_moves),
        switch_flooded: Some(reports.switch.flooded),
        switch_drops_to_bond: Some(reports.switch.drops_to_bond),
        bond_drops_inactive_slave: Some(reports.switch.drops_inactive_slave),
        grat_arps_sent: Some(reports.switch.grat_arps),
        makespan_s,
        duration_s,
        capacity_bps,
        throughput_bps: per_s(wire_bits),
        goodput_bps: {
            // Counted from `measure_from_s`: the warm-up is left out of both bytes and time.
            let span = duration_s - rx.measure_from.as_secs_f64();
            if span > 0.0 {
                rx.measured_bytes as f64 * 8.0 / span
            } else {
                0.0
            }
        },
        utilisation: if capacity_bps > 0.0 { per_s(wire_bits) / capacity_bps } else { 0.0 },
        jain_index: Some(jain_index(&loads)),
        max_mean_ratio: Some(if mean_load > 0.0 { max_load / mean_load } else { 1.0 }),
        delay_mean_us: Some(if delay.is_empty() { 0.0 } else { delay.mean() / 1e3 }),
        delay_p50_us: Some(quantile(0.5)),
        delay_p90_us: Some(quantile(0.9)),
        delay_p99_us: Some(quantile(0.99)),
        delay_p999_us: Some(quantile(0.999)),
        delay_max_us: Some(us(delay.max())),
        flows_complete: rx.flows().iter().filter(|f| f.complete()).count() as u32,
        flows_with_loss: Some(rx.flows().iter().filter(|f| f.lost > 0).count() as u32),
        reseq_max_held: Some(reports.reseq_max_held),
        fct_mean_s: (!fct.is_empty()).then(|| fct.iter().sum::<f64>() / fct.len() as f64),
        fct_p50_s: fct_at(0.5),
        fct_p99_s: fct_at(0.99),
        figures: reports.reported.figures,
        trace_truncated: reports.trace.link_events.as_ref().map(|_| reports.trace.truncated),
        events: Some(reports.events),
        wall_s,
        links: links
            .link
            .iter()
            .zip(&links.name)
            .zip(&links.packets_sent)
            .map(|((&link, name), &packets_sent)| LinkSummary { link, name: name.clone(), packets_sent })
            .collect(),
    };
    let trace = reports.trace;
    RunResult {
        summary,
        requests,
        links,
        tables: reports.reported.tables,
        link_trace: trace.link_trace,
        link_events: trace.link_events,
        packet_trace: trace.packet_trace,
        failovers: reports.failovers,
    }
}

#[cfg(test)]
mod tests {
    use super::jain_index;

    #[test]
    fn jain_index_is_one_when_even_and_one_over_n_when_all_on_one() {
        assert_eq!(jain_index(&[3.0, 3.0, 3.0]), 1.0);
        assert!((jain_index(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
        assert_eq!(jain_index(&[0.0, 0.0]), 1.0);
    }
}
