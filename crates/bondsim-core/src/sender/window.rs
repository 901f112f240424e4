//! Bulk transfers with a fixed window: each flow keeps up to `window_pkts`
//! packets in flight and sends the next one as soon as one is delivered or
//! lost (after `ack_delay_us`). Lost packets are not resent: this is the
//! steady state of a transfer whose window the bond never fills, not TCP.

use super::Cutter;
use crate::packet::Packet;
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
}

impl WindowSender {
    /// A sender with `window` packets per flow, for `flows` flows.
    pub fn new(window: u32, ack_delay: SimTime, cutter: Cutter, flows: usize) -> WindowSender {
        WindowSender { window, ack_delay, cutter, flows: vec![FlowTx::default(); flows], unsent_flows: 0 }
    }

    /// Time from a delivery to the freed window slot.
    pub fn ack_delay(&self) -> SimTime {
        self.ack_delay
    }

    /// Flow `flow` starts, for a file of `file_bytes`.
    pub fn admit(&mut self, flow: u32, file_bytes: u64) {
        let packets = self.cutter.packets(file_bytes) as u32;
        self.flows[flow as usize] = FlowTx { file_bytes, packets, next_seq: 0, in_flight: 0 };
        self.unsent_flows += 1;
    }

    /// The next packet of `flow` if its window has room, born at `now`.
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
        Some(Packet { flow, seq, bytes, born: now, bond_seq: 0 })
    }

    /// A packet of `flow` was delivered or lost: its window slot is free.
    pub fn release(&mut self, flow: u32) {
        let f = &mut self.flows[flow as usize];
        f.in_flight = f.in_flight.saturating_sub(1);
    }

    /// True when every admitted flow has sent all its packets.
    pub fn is_idle(&self) -> bool {
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
        WindowSender::new(window, SimTime::ZERO, Cutter::for_scenario(&s), 2)
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
