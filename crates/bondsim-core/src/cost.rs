//! What a run will cost, estimated from its scenario before anything is built (issue 39): the
//! packets it sends, the events it processes, the memory it holds and the time it takes. The
//! front refuses a run (or sweep) whose estimate is above its budget unless told to go on
//! (`--force`, `force=True`), saying the estimate.
//!
//! The estimate counts the requests (or a ping-pong's tokens) and their packets from the
//! workload's mean file size, bounded by what the links can carry before `stop_s`; events and
//! time from the sender's measured events per packet and events per second; memory from the
//! tables kept per request and the traces asked for. The coefficients were measured on the
//! development machine (2 cores, release build, 2026-11-29, `bondsim run NAME --json`'s `events`,
//! `packets` and `wall_s`; `/usr/bin/time`'s peak resident size for `thesis` with 10^5 and 4·10^5
//! requests): an estimate within a small factor, meant to catch runs of hours or of tens of
//! gigabytes, not to predict seconds.

use crate::scenario::{Scenario, Sender, Workload};
use crate::transport::Cutter;
use crate::workload::mean_file_bytes;
use serde::Serialize;

/// A run's estimated cost.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Cost {
    /// Requests (or ping-pong tokens) the run serves.
    pub requests: f64,
    /// Packets it sends, data and acknowledgements.
    pub packets: f64,
    /// Events the engine processes.
    pub events: f64,
    /// Memory it holds at its peak, bytes.
    pub memory_bytes: f64,
    /// Wall-clock time, seconds.
    pub seconds: f64,
}

/// Events per data packet and events per second, by sender (measured: `thesis` 1.25 and 14 M/s,
/// `league` 2.0 and 23 M/s, `tcp_rr` 3.7 and 4.6 M/s, `mptcp` 3.2 and 4.8 M/s; `cbr` taken as
/// `window`, whose datagrams go one way as its do).
fn per_packet(sender: &Sender) -> (f64, f64) {
    match sender {
        Sender::Paced(_) => (1.25, 14e6),
        Sender::Window(_) | Sender::Cbr(_) => (2.0, 23e6),
        Sender::Tcp(_) => (3.7, 4.6e6),
        Sender::Mptcp(_) => (3.2, 4.8e6),
    }
}

/// Memory per request (its row in every per-request table and its state while open), bytes:
/// `thesis`'s peak grew by 1.86 kB per request from 10^5 requests, 1.75 kB from 4·10^5.
const BYTES_PER_REQUEST: f64 = 1_900.0;
/// Memory of a run with nothing in it (the interpreter, the engine): `thesis`'s 100 requests.
const BASE_BYTES: f64 = 20e6;
/// A row of the packet trace, of a link-trace bucket, of the TCP trace (their columns' widths).
const PACKET_ROW_BYTES: f64 = 48.0;
const BUCKET_ROW_BYTES: f64 = 64.0;

impl Scenario {
    /// This scenario's run, estimated ([`Cost`]).
    pub fn cost(&self) -> Cost {
        let cutter = Cutter::for_scenario(self);
        let (requests, data_packets) = match &self.workload {
            Workload::Requests(w) => {
                let mean = mean_file_bytes(&w.file_size);
                let per = cutter.packets(mean.ceil() as u64).max(1) as f64;
                (f64::from(w.requests), f64::from(w.requests) * per)
            }
            Workload::PingPong(p) => {
                let tokens = f64::from(p.pairs) * f64::from(p.rounds) * 2.0;
                (tokens, tokens * cutter.packets(p.token_bytes).max(1) as f64)
            }
        };
        // What the links can carry before `stop_s`, if the run has one.
        let chunk_bits = f64::from(self.chunk_bytes()) * 8.0;
        let capacity: f64 = self.each_link().map(|(_, l)| l.model.rate_bps(chunk_bits)).sum();
        let data_packets = match self.stop_s {
            Some(stop) => data_packets.min(capacity * stop / chunk_bits),
            None => data_packets,
        };
        let (events_per_packet, events_per_second) = per_packet(&self.sender);
        let events = data_packets * events_per_packet;
        let acks = if matches!(self.sender, Sender::Tcp(_) | Sender::Mptcp(_)) { 0.5 } else { 0.0 };
        let trace_rows = f64::from(self.trace.packets) * PACKET_ROW_BYTES
            + self.trace.link_ms.map_or(0.0, |_| f64::from(self.trace.link_buckets) * BUCKET_ROW_BYTES);
        Cost {
            requests,
            packets: data_packets * (1.0 + acks),
            events,
            memory_bytes: BASE_BYTES + requests * BYTES_PER_REQUEST + trace_rows,
            seconds: events / events_per_second,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::Scenario;

    fn scenario(extra: serde_json::Value) -> Scenario {
        let mut s = serde_json::json!({
            "workload": {"requests": 100, "file_size": {"kind": "fixed", "bytes": 144_800}},
            "sender": {"kind": "tcp"},
            "bond": {"mode": "balance-rr"},
            "links": [{"rate_mbps": 100}, {"rate_mbps": 100}],
        });
        for (k, v) in extra.as_object().unwrap() {
            s[k] = v.clone();
        }
        Scenario::from_json(&s.to_string()).unwrap()
    }

    #[test]
    fn the_estimate_counts_packets_and_grows_with_requests() {
        let s = scenario(serde_json::json!({}));
        let c = s.cost();
        // 100 files of 100 segments (MSS 1448), and half as many ACKs.
        assert_eq!((c.requests, c.packets), (100.0, 15_000.0));
        assert_eq!(c.events, 10_000.0 * super::per_packet(&s.sender).0);
        let big = scenario(
            serde_json::json!({"workload": {"requests": 10_000_000, "file_size": {"kind": "fixed", "bytes": 1000}}}),
        )
        .cost();
        assert!(big.memory_bytes > 15e9, "10^7 requests hold about 19 GB: {}", big.memory_bytes);
    }

    #[test]
    fn a_stop_bounds_the_packets_by_what_the_links_carry() {
        let s = scenario(
            serde_json::json!({"stop_s": 0.1, "workload": {"requests": 1, "file_size": {"kind": "fixed", "bytes": 1_000_000_000}}}),
        );
        let c = s.cost();
        // 200 Mbit/s for 0.1 s: 20 Mbit, 1,726 segments of 1,448 bytes.
        let segments = 200e6 * 0.1 / (1448.0 * 8.0);
        assert!((c.events - segments * super::per_packet(&s.sender).0).abs() < 1.0, "{c:?}");
    }

    #[test]
    fn the_specweb_mean_weighs_each_file_by_its_popularity() {
        let w = serde_json::json!({"requests": 1000, "file_size": {"kind": "zipfset"}});
        let c = scenario(serde_json::json!({"workload": w})).cost();
        // SPECweb99's mean file is about 15 kB: 11 segments of 1,448 bytes per request.
        assert!((10_000.0..=13_000.0).contains(&(c.packets / 1.5)), "{c:?}");
    }
}
