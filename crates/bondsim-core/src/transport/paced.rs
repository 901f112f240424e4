//! The thesis's scheduler loop (`scheduler.py`, `process()`), exactly.
//!
//! Every tick it takes up to `packets_per_tick` packets, one per queued
//! request in turn: `request = queue[next_req]`, one chunk of it goes to the
//! bond, and `next_req = (next_req + 1) % len(queue)`. A request whose last
//! (short, possibly empty) chunk was sent leaves the queue first, so the
//! request that slides into its slot is skipped this round — the appendix
//! does the same. A file of S bytes is `S / chunk + 1` packets.

use super::{Cutter, Endpoint, Output};
use crate::packet::Packet;
use crate::scenario;
use crate::time::SimTime;

#[derive(Debug, Clone)]
struct Active {
    flow: u32,
    next_seq: u32,
    packets: u32,
    file_bytes: u64,
}

impl Active {
    fn bytes_of(&self, cutter: &Cutter, seq: u32) -> u32 {
        cutter.packet_bytes(self.file_bytes, u64::from(seq))
    }
}

/// The paced sender's request queue and round-robin position.
#[derive(Debug, Clone)]
pub struct PacedSender {
    packets_per_tick: u32,
    tick: SimTime,
    cutter: Cutter,
    queue: Vec<Active>,
    next_req: usize,
    /// Flows not yet opened: the loop runs until all have opened and been sent.
    unopened: usize,
    /// Packets the queued requests have left to send.
    queued_packets: u64,
    /// Packets this tick may still hand over (made one by one as the world asks).
    budget: u32,
}

impl PacedSender {
    /// The loop `config` describes, cut by `cutter`, for `flows` flows.
    pub fn new(config: &scenario::PacedSender, cutter: Cutter, flows: usize) -> PacedSender {
        PacedSender {
            packets_per_tick: config.packets_per_tick,
            tick: SimTime::from_millis_f64(config.tick_ms),
            cutter,
            queue: Vec::new(),
            next_req: 0,
            unopened: flows,
            queued_packets: 0,
            budget: 0,
        }
    }

    /// Appends request `flow` for a file of `file_bytes` to the request queue.
    pub fn admit(&mut self, flow: u32, file_bytes: u64) {
        let packets = self.cutter.packets(file_bytes) as u32;
        self.queue.push(Active { flow, next_seq: 0, packets, file_bytes });
        self.queued_packets += u64::from(packets);
    }

    /// The loop's next packet at `now`: one chunk of the request in turn.
    fn next(&mut self, now: SimTime) -> Option<Packet> {
        let req = self.queue.get_mut(self.next_req)?;
        let last = req.next_seq + 1 == req.packets;
        let packet = Packet::data(req.flow, req.next_seq, req.bytes_of(&self.cutter, req.next_seq), now);
        req.next_seq += 1;
        self.queued_packets -= 1;
        if last {
            self.queue.remove(self.next_req);
            if self.queue.is_empty() {
                self.next_req = 0;
                return Some(packet);
            }
        }
        // `(next_req + 1) % len`, without the division when it does not wrap (most packets).
        let next = self.next_req + 1;
        self.next_req = if next < self.queue.len() { next } else { next % self.queue.len() };
        Some(packet)
    }

    /// One tick at `now`: hands up to `packets_per_tick` packets to `emit`.
    pub fn tick(&mut self, now: SimTime, mut emit: impl FnMut(Packet)) {
        for _ in 0..self.packets_per_tick {
            match self.next(now) {
                Some(packet) => emit(packet),
                None => break,
            }
        }
    }
}

impl Endpoint for PacedSender {
    fn start(&mut self, now: SimTime, out: &mut Vec<Output>) {
        out.push(Output::Timer { at: now, token: 0 });
    }

    fn open(&mut self, _now: SimTime, flow: u32, bytes: u64, _out: &mut Vec<Output>) {
        self.admit(flow, bytes);
        self.unopened -= 1;
    }

    /// The loop's tick: hand this tick's packets to the bond, then come back a tick later
    /// unless every request has arrived and this tick sends the last of them.
    fn on_timer(&mut self, now: SimTime, _token: u64, out: &mut Vec<Output>) {
        self.budget = self.packets_per_tick;
        let sends_all = self.queued_packets <= u64::from(self.packets_per_tick);
        if !(sends_all && self.unopened == 0) {
            out.push(Output::Timer { at: now + self.tick, token: 0 });
        }
    }

    fn poll_transmit(&mut self, now: SimTime) -> Option<Packet> {
        if self.budget == 0 {
            return None;
        }
        self.budget -= 1;
        let packet = self.next(now);
        if packet.is_none() {
            self.budget = 0;
        }
        packet
    }

    fn is_idle(&self) -> bool {
        self.queue.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sender(per_tick: u32, chunk: u32) -> PacedSender {
        let config = scenario::PacedSender { chunk_bytes: chunk, tick_ms: 20.0, packets_per_tick: per_tick };
        PacedSender::new(&config, thesis(chunk), 3)
    }

    fn thesis(chunk: u32) -> Cutter {
        let s = crate::Scenario::from_json(
            &serde_json::json!({"workload": {"requests": 1, "file_size": {"kind": "fixed", "bytes": 1}},
                "sender": {"chunk_bytes": chunk}, "bond": {"mode": "rr"}, "links": [{}]})
            .to_string(),
        )
        .unwrap();
        Cutter::for_scenario(&s)
    }

    fn drain(sender: &mut PacedSender, ticks: usize) -> Vec<Vec<(u32, u32, u32)>> {
        (0..ticks)
            .map(|_| {
                let mut out = Vec::new();
                sender.tick(SimTime::ZERO, |p| out.push((p.flow, p.seq, p.bytes)));
                out
            })
            .collect()
    }

    #[test]
    fn one_packet_per_request_in_turn_with_short_last_chunk() {
        let mut s = sender(4, 1000);
        s.admit(0, 2500); // 3 packets: 1000, 1000, 500
        s.admit(1, 1000); // 2 packets: 1000, 0
        let ticks = drain(&mut s, 2);
        assert_eq!(ticks[0], [(0, 0, 1000), (1, 0, 1000), (0, 1, 1000), (1, 1, 0)]);
        assert_eq!(ticks[1], [(0, 2, 500)]);
        assert!(s.is_idle());
    }

    #[test]
    fn finished_request_makes_its_successor_wait_a_turn_as_in_the_appendix() {
        let mut s = sender(3, 10);
        s.admit(0, 0); // 1 packet
        s.admit(1, 10); // 2 packets
        s.admit(2, 10); // 2 packets
                        // Request 0 leaves after its packet; request 1 slides into slot 0 and
                        // next_req moves on to slot 1 (request 2).
        let ticks = drain(&mut s, 2);
        assert_eq!(ticks[0], [(0, 0, 0), (2, 0, 10), (1, 0, 10)]);
        assert_eq!(ticks[1], [(2, 1, 0), (1, 1, 0)]);
    }
}
