//! Bulk transfers with a fixed window: each flow keeps up to `window_pkts`
//! packets in flight and sends the next one as soon as one is delivered or
//! lost (after `ack_delay_us`). Lost packets are not resent: this is the
//! steady state of a transfer whose window the bond never fills, not TCP.

use super::{Cutter, Endpoint, Output};
use crate::packet::Packet;
use crate::scenario;
use crate::time::SimTime;

#[derive(Debug, Clone, Default)]
struct FlowTx {
    file_bytes: u64,
    packets: u32,
    next_seq: u32,
    in_flight: u32,
}

/// State of every flow's window.
#[derive(Debug, Clone)]
pub struct WindowSender {
    window: u32,
    ack_delay: SimTime,
    cutter: Cutter,
    flows: Vec<FlowTx>,
    unsent_flows: usize,
    /// Flows whose window may have room, in the order they got it.
    ready: std::collections::VecDeque<u32>,
}

impl WindowSender {
    /// The sender `config` describes, cut by `cutter`, for `flows` flows.
    pub fn new(config: &scenario::WindowSender, cutter: Cutter, flows: usize) -> WindowSender {
        WindowSender {
            window: config.window_pkts,
            ack_delay: SimTime::from_micros_f64(config.ack_delay_us),
            cutter,
            flows: vec![FlowTx::default(); flows],
            unsent_flows: 0,
            ready: std::collections::VecDeque::new(),
        }
    }

    /// Flow `flow` starts, for a file of `file_bytes`.
    pub fn admit(&mut self, flow: u32, file_bytes: u64) {
        let packets = self.cutter.packets(file_bytes) as u32;
        self.flows[flow as usize] = FlowTx { file_bytes, packets, next_seq: 0, in_flight: 0 };
        self.unsent_flows += 1;
    }

    /// The next packet of `flow` if its window has room, born at `now`.
    #[inline]
    pub fn next_packet(&mut self, flow: u32, now: SimTime) -> Option<Packet> {
        let f = &mut self.flows[flow as usize];
        if f.in_flight >= self.window || f.next_seq >= f.packets {
            return None;
        }
        let seq = f.next_seq;
        let bytes = self.cutter.packet_bytes(f.file_bytes, u64::from(seq));
        f.next_seq += 1;
        f.in_flight += 1;
        if f.next_seq == f.packets {
            self.unsent_flows -= 1;
        }
        Some(Packet::data(flow, seq, bytes, now))
    }

    /// A packet of `flow` was delivered or lost: its window slot is free.
    #[inline]
    pub fn release(&mut self, flow: u32) {
        let f = &mut self.flows[flow as usize];
        f.in_flight = f.in_flight.saturating_sub(1);
    }
}

impl Endpoint for WindowSender {
    fn open(&mut self, _now: SimTime, flow: u32, bytes: u64, _out: &mut Vec<Output>) {
        self.admit(flow, bytes);
        self.ready.push_back(flow);
    }

    /// A packet was delivered or lost: its slot frees `ack_delay` later (at once if zero).
    #[inline]
    fn on_resolved(&mut self, now: SimTime, packet: &Packet, out: &mut Vec<Output>) {
        if self.ack_delay == SimTime::ZERO {
            self.release(packet.flow);
            self.ready.push_back(packet.flow);
        } else {
            out.push(Output::Timer { at: now + self.ack_delay, token: u64::from(packet.flow) });
        }
    }

    fn on_timer(&mut self, _now: SimTime, token: u64, _out: &mut Vec<Output>) {
        let flow = token as u32;
        self.release(flow);
        self.ready.push_back(flow);
    }

    /// The next packet of the first flow whose window has room.
    #[inline]
    fn poll_transmit(&mut self, now: SimTime) -> Option<Packet> {
        while let Some(&flow) = self.ready.front() {
            if let Some(packet) = self.next_packet(flow, now) {
                // A flow whose window is now full (or that has sent all) leaves the line at
                // once rather than on the next call: the same order, one lookup fewer.
                let f = &self.flows[flow as usize];
                if f.in_flight >= self.window || f.next_seq >= f.packets {
                    self.ready.pop_front();
                }
                return Some(packet);
            }
            self.ready.pop_front();
        }
        None
    }

    /// True when every admitted flow has sent all its packets.
    fn hears_resolved(&self) -> bool {
        true
    }

    fn is_idle(&self) -> bool {
        self.unsent_flows == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sender(window: u32) -> WindowSender {
        let s = crate::Scenario::from_json(
            &serde_json::json!({"workload": {"requests": 1, "file_size": {"kind": "fixed", "bytes": 1}},
                "sender": {"kind": "window", "chunk_bytes": 100}, "bond": {"mode": "rr"}, "links": [{}]})
            .to_string(),
        )
        .unwrap();
        let config =
            scenario::WindowSender { chunk_bytes: 100, message_bytes: None, window_pkts: window, ack_delay_us: 0.0 };
        WindowSender::new(&config, Cutter::for_scenario(&s), 2)
    }

    #[test]
    fn window_limits_packets_in_flight() {
        let mut s = sender(2);
        s.admit(1, 450);
        let burst: Vec<u32> = std::iter::from_fn(|| s.next_packet(1, SimTime::ZERO)).map(|p| p.seq).collect();
        assert_eq!(burst, [0, 1]);
        s.release(1);
        let p = s.next_packet(1, SimTime(5)).unwrap();
        assert_eq!((p.seq, p.bytes, p.born), (2, 100, SimTime(5)));
        assert!(!s.is_idle());
        s.release(1);
        s.release(1);
        let rest: Vec<u32> = std::iter::from_fn(|| s.next_packet(1, SimTime::ZERO)).map(|p| p.bytes).collect();
        assert_eq!(rest, [100, 50]);
        assert!(s.is_idle());
    }
}
