//! What a run produces: a summary and columnar per-request and per-link tables.

use serde::Serialize;

/// Everything a run reports.
#[derive(Debug, Clone, Serialize)]
pub struct RunResult {
    /// Whole-run figures.
    pub summary: Summary,
    /// One row per request (flow).
    pub requests: RequestTable,
    /// One row per link.
    pub links: LinkTable,
}

/// Whole-run figures. Everything but `wall_s` is a pure function of the scenario.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// The scenario's name.
    pub scenario: String,
    /// The scheduler, as `name[non-default params]`.
    pub scheduler: String,
    /// The scenario seed.
    pub seed: u64,
    /// Number of links.
    pub link_count: usize,
    /// Number of requests.
    pub requests: u32,
    /// Packets the sender handed to the bond.
    pub packets: u64,
    /// Packets that reached a client.
    pub delivered: u64,
    /// Packets the bond had no usable link for.
    pub dropped: u64,
    /// Delivered packets that were in order (thesis rule).
    pub in_order: u64,
    /// Delivered packets that were out of order.
    pub out_of_order: u64,
    /// `out_of_order / delivered`.
    pub ooo_fraction: f64,
    /// Time of the last delivery, seconds.
    pub makespan_s: f64,
    /// Events the engine processed.
    pub events: u64,
    /// Wall-clock time of the run, seconds (the only non-deterministic figure).
    pub wall_s: f64,
    /// Per-link packet counts.
    pub links: Vec<LinkSummary>,
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
    /// Packets delivered.
    pub received: Vec<u32>,
    /// Packets delivered in order.
    pub in_order: Vec<u32>,
    /// Packets delivered out of order.
    pub out_of_order: Vec<u32>,
    /// Arrival at the server, seconds.
    pub arrival_s: Vec<f64>,
    /// Last delivery, seconds (null if nothing was delivered).
    pub finish_s: Vec<Option<f64>>,
}

/// Per-link results, one column per field.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LinkTable {
    /// Link id.
    pub link: Vec<usize>,
    /// Link name.
    pub name: Vec<String>,
    /// Packets sent.
    pub packets_sent: Vec<u64>,
    /// Payload bytes sent.
    pub bytes_sent: Vec<u64>,
    /// Send opportunities (paced links: wake-ups).
    pub polls: Vec<u64>,
    /// Share of send opportunities used.
    pub utilisation: Vec<f64>,
    /// Longest transmit queue, packets.
    pub max_queue_pkts: Vec<u32>,
}

impl RunResult {
    /// The result as JSON (tables as `{column: [values]}`).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("results always serialise")
    }
}
