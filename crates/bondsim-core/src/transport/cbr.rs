//! Constant bit rate: each flow sends a packet, then waits for the time its
//! payload takes at `rate_mbps`, whatever happens to its packets (an iperf
//! UDP stream). A datagram larger than the MTU leaves as IP fragments
//! ([`Fragmenter`]), one packet each.

use super::ipfrag::Fragmenter;
use super::{Cutter, Endpoint, Output};
use crate::packet::Packet;
use crate::scenario;
use crate::time::SimTime;

#[derive(Debug, Clone, Default)]
struct FlowTx {
    file_bytes: u64,
    packets: u32,
    next_seq: u32,
}

/// State of every flow's stream.
#[derive(Debug, Clone)]
pub struct CbrSender {
    /// Each flow's payload rate, bits/s.
    rate_bps: Vec<f64>,
    cutter: Cutter,
    fragmenter: Option<Fragmenter>,
    flows: Vec<FlowTx>,
    unsent_flows: usize,
    /// The packets (a datagram, or its fragments) a wake-up made, until the world takes them.
    due: std::collections::VecDeque<Packet>,
}

impl CbrSender {
    /// The sender `config` describes, cut by `cutter` (and into fragments by
    /// `fragmenter`, if given), for `flows` flows.
    pub fn new(
        config: &scenario::CbrSender,
        cutter: Cutter,
        fragmenter: Option<Fragmenter>,
        flows: usize,
    ) -> CbrSender {
        CbrSender {
            rate_bps: (0..flows).map(|k| config.rate_of(k) * 1e6).collect(),
            cutter,
            fragmenter,
            flows: vec![FlowTx::default(); flows],
            unsent_flows: 0,
            due: std::collections::VecDeque::new(),
        }
    }

    /// `flow` sends its next packet now and arms the timer for the one after.
    fn wake(&mut self, now: SimTime, flow: u32, out: &mut Vec<Output>) {
        let (packet, next) = self.next_packet(flow, now);
        if let Some(at) = next {
            out.push(Output::Timer { at, token: u64::from(flow) });
        }
        match self.fragmenter {
            Some(f) => self.due.extend(f.cut(packet)),
            None => self.due.push_back(packet),
        }
    }

    /// Flow `flow` starts, for a file of `file_bytes`.
    pub fn admit(&mut self, flow: u32, file_bytes: u64) {
        let packets = self.cutter.packets(file_bytes) as u32;
        self.flows[flow as usize] = FlowTx { file_bytes, packets, next_seq: 0 };
        self.unsent_flows += 1;
    }

    /// The next packet of `flow`, born at `now`, and when the one after it is due.
    pub fn next_packet(&mut self, flow: u32, now: SimTime) -> (Packet, Option<SimTime>) {
        let f = &mut self.flows[flow as usize];
        let seq = f.next_seq;
        let bytes = self.cutter.packet_bytes(f.file_bytes, u64::from(seq));
        f.next_seq += 1;
        let next = if f.next_seq < f.packets {
            Some(now + SimTime::from_secs_f64(f64::from(bytes.max(1)) * 8.0 / self.rate_bps[flow as usize]))
        } else {
            self.unsent_flows -= 1;
            None
        };
        (Packet::data(flow, seq, bytes, now), next)
    }
}

impl Endpoint for CbrSender {
    fn open(&mut self, now: SimTime, flow: u32, bytes: u64, out: &mut Vec<Output>) {
        self.admit(flow, bytes);
        self.wake(now, flow, out);
    }

    fn on_timer(&mut self, now: SimTime, token: u64, out: &mut Vec<Output>) {
        self.wake(now, token as u32, out);
    }

    fn poll_transmit(&mut self, _now: SimTime) -> Option<Packet> {
        self.due.pop_front()
    }

    /// True when every admitted flow has sent all its packets.
    fn is_idle(&self) -> bool {
        self.unsent_flows == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_are_spaced_by_their_time_at_the_rate() {
        let s = crate::Scenario::from_json(
            &serde_json::json!({"workload": {"requests": 1, "file_size": {"kind": "fixed", "bytes": 1}},
                "sender": {"kind": "cbr", "rate_mbps": 8.0, "chunk_bytes": 1000}, "bond": {"mode": "rr"}, "links": [{}]})
            .to_string(),
        )
        .unwrap();
        let config =
            scenario::CbrSender { chunk_bytes: 1000, message_bytes: None, rate_mbps: 8.0, flow_rates_mbps: vec![] };
        let mut c = CbrSender::new(&config, Cutter::for_scenario(&s), None, 1);
        c.admit(0, 2500);
        let (p, next) = c.next_packet(0, SimTime::ZERO);
        assert_eq!((p.seq, next), (0, Some(SimTime(1_000_000)))); // 8000 bits at 8 Mbit/s
        let (_, next) = c.next_packet(0, SimTime(1_000_000));
        assert_eq!(next, Some(SimTime(2_000_000)));
        let (p, next) = c.next_packet(0, SimTime(2_000_000));
        assert_eq!((p.bytes, next), (500, None));
        assert!(c.is_idle());
    }
}
