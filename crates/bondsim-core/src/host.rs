//! A receiving host's CPU and receive queue (`[host]`, issue 38), sans-IO: frames in, the time the
//! CPU has handled each out. The rules and their sources are on [`crate::scenario::Host`].
//!
//! One CPU handles the host's frames one at a time, in arrival order: a frame waits in the receive
//! queue (the backlog of the `netif_rx` path, or a NAPI NIC's ring), is dropped when the queue is
//! full, and reaches the stack when its CPU time has passed. What the host sends costs the CPU too:
//! a send while a frame is being handled delays the next one (the CPU's `debt`), a send while it is
//! idle keeps it busy from now.

use std::collections::VecDeque;

use crate::packet::Packet;
use crate::report::{count, real, Declared, Report};
use crate::scenario;
use crate::time::SimTime;

/// The figures the hosts report (only when `[host]` is on; `null` otherwise).
pub const FIGURES: &[Declared] =
    &[count("host_rx_frames"), count("host_drops"), count("host_queue_max"), real("host_cpu_busy_max")];

/// Where frames wait for the CPU, and when one is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Limit {
    /// The `netif_rx` path: `enqueue_to_backlog` drops when `input_pkt_queue` holds more than this
    /// many (net/core/dev.c, 6.18: `qlen > max_backlog`); `process_backlog` splices the input queue
    /// into its process queue whenever that empties.
    Backlog(usize),
    /// A NAPI NIC's ring of this many descriptors; the frame being handled still holds its own.
    Ring(usize),
}

/// What became of a frame the host received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// The receive queue was full: dropped.
    Dropped,
    /// It waits behind others; the CPU is busy.
    Queued,
    /// The CPU took it at once: it is handled at this time.
    Handled(SimTime),
}

/// One receiving host.
#[derive(Debug, Clone)]
pub struct RxHost {
    per_packet_ns: f64,
    per_byte_ns: f64,
    tx_ns: u64,
    limit: Limit,
    /// The backlog's `input_pkt_queue`, or the ring.
    input: VecDeque<Packet>,
    /// The backlog's `process_queue` (empty on a ring).
    process: VecDeque<Packet>,
    /// The frame the CPU is handling.
    serving: Option<Packet>,
    /// When the CPU is free of what it sent (while idle).
    free_at: SimTime,
    /// CPU time owed to sends made while a frame was being handled.
    debt_ns: u64,
    frames: u64,
    drops: u64,
    busy_ns: u64,
    queue_max: usize,
}

impl RxHost {
    /// A host as `[host]` describes it.
    pub fn new(host: &scenario::Host) -> RxHost {
        let limit = match host.rx_ring {
            Some(ring) => Limit::Ring(ring as usize),
            None => Limit::Backlog(host.netdev_max_backlog as usize),
        };
        RxHost {
            per_packet_ns: host.rx_packet_us * 1e3,
            per_byte_ns: host.rx_byte_ns,
            tx_ns: (host.tx_packet_us * 1e3).round() as u64,
            limit,
            input: VecDeque::new(),
            process: VecDeque::new(),
            serving: None,
            free_at: SimTime::ZERO,
            debt_ns: 0,
            frames: 0,
            drops: 0,
            busy_ns: 0,
            queue_max: 0,
        }
    }

    /// A frame arrives at `now`.
    pub fn arrive(&mut self, now: SimTime, packet: Packet) -> Admit {
        let full = match self.limit {
            Limit::Backlog(max) => self.input.len() > max,
            Limit::Ring(ring) => self.input.len() + usize::from(self.serving.is_some()) >= ring,
        };
        if full {
            self.drops += 1;
            return Admit::Dropped;
        }
        self.input.push_back(packet);
        self.queue_max = self.queue_max.max(self.input.len() + self.process.len());
        match self.start(now) {
            Some(at) => Admit::Handled(at),
            None => Admit::Queued,
        }
    }

    /// The CPU has handled its frame (at the time [`RxHost::arrive`] or [`RxHost::start`] gave):
    /// it goes up the stack. Call [`RxHost::start`] after the
    /// stack has run, so that what it sent delays the next frame.
    pub fn complete(&mut self, now: SimTime) -> Packet {
        let done = self.serving.take().expect("a completion for a frame being handled");
        self.free_at = now + SimTime(std::mem::take(&mut self.debt_ns));
        self.frames += 1;
        done
    }

    /// The host sends a frame (an ACK) at `now`.
    pub fn sent(&mut self, now: SimTime) {
        self.busy_ns += self.tx_ns;
        if self.serving.is_some() {
            self.debt_ns += self.tx_ns;
        } else {
            self.free_at = self.free_at.max(now) + SimTime(self.tx_ns);
        }
    }

    /// If the CPU is idle and a frame waits, it takes the next one: the time it is handled.
    pub fn start(&mut self, now: SimTime) -> Option<SimTime> {
        if self.serving.is_some() {
            return None;
        }
        if self.process.is_empty() && matches!(self.limit, Limit::Backlog(_)) {
            std::mem::swap(&mut self.process, &mut self.input);
        }
        let next = if self.process.is_empty() { self.input.pop_front() } else { self.process.pop_front() }?;
        let cost = (self.per_packet_ns + self.per_byte_ns * f64::from(next.bytes)).round() as u64;
        self.busy_ns += cost;
        self.serving = Some(next);
        Some(self.free_at.max(now) + SimTime(cost))
    }

    /// Reports the hosts' figures ([`FIGURES`]) over a run of `duration_s`.
    pub fn report(hosts: &[RxHost], duration_s: f64, r: &mut Report) {
        if hosts.is_empty() {
            return;
        }
        for h in hosts {
            r.add("host_rx_frames", h.frames);
            r.add("host_drops", h.drops);
            r.max("host_queue_max", h.queue_max as u64);
        }
        let busiest = hosts.iter().map(|h| h.busy_ns).max().unwrap_or(0);
        r.first("host_cpu_busy_max", if duration_s > 0.0 { busiest as f64 * 1e-9 / duration_s } else { 0.0 });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(rx_packet_us: f64, tx_packet_us: f64, backlog: u32, ring: Option<u32>) -> RxHost {
        RxHost::new(&scenario::Host {
            rx_packet_us,
            rx_byte_ns: 0.5,
            tx_packet_us,
            netdev_max_backlog: backlog,
            rx_ring: ring,
        })
    }

    fn frame(seq: u32) -> Packet {
        Packet::data(0, seq, 1000, SimTime::ZERO)
    }

    #[test]
    fn each_frame_costs_its_packet_and_byte_time_one_after_another() {
        let mut h = host(10.0, 0.0, 1000, None);
        // 10 µs + 0.5 ns × 1000 B = 10.5 µs each.
        assert_eq!(h.arrive(SimTime(0), frame(0)), Admit::Handled(SimTime(10_500)));
        assert_eq!(h.arrive(SimTime(1), frame(1)), Admit::Queued);
        assert_eq!(h.complete(SimTime(10_500)), frame(0));
        assert_eq!(h.start(SimTime(10_500)), Some(SimTime(21_000)));
        assert_eq!(h.complete(SimTime(21_000)), frame(1));
        assert_eq!(h.start(SimTime(21_000)), None);
    }

    #[test]
    fn an_ack_sent_while_handling_delays_the_next_frame_and_one_sent_idle_delays_an_arrival() {
        let mut h = host(10.0, 4.0, 1000, None);
        h.arrive(SimTime(0), frame(0));
        h.arrive(SimTime(0), frame(1));
        h.sent(SimTime(5_000));
        h.complete(SimTime(10_500));
        assert_eq!(h.start(SimTime(10_500)), Some(SimTime(10_500 + 4_000 + 10_500)));
        h.complete(SimTime(25_000));
        h.sent(SimTime(30_000));
        assert_eq!(h.arrive(SimTime(31_000), frame(2)), Admit::Handled(SimTime(34_000 + 10_500)));
    }

    #[test]
    fn the_backlog_drops_past_netdev_max_backlog_and_refills_while_its_process_queue_drains() {
        // Backlog 2: the input queue takes a frame while it holds 2 or fewer (qlen > 2 drops).
        let mut h = host(10.0, 0.0, 2, None);
        let admits: Vec<Admit> = (0..5).map(|i| h.arrive(SimTime(0), frame(i))).collect();
        assert!(matches!(admits[0], Admit::Handled(_)));
        assert_eq!(&admits[1..], [Admit::Queued, Admit::Queued, Admit::Queued, Admit::Dropped]);
        // The next frame splices all three into the process queue: the input takes three more.
        h.complete(SimTime(10_500));
        h.start(SimTime(10_500));
        let later: Vec<Admit> = (5..9).map(|i| h.arrive(SimTime(10_600), frame(i))).collect();
        assert_eq!(later, [Admit::Queued, Admit::Queued, Admit::Queued, Admit::Dropped]);
        assert_eq!(h.queue_max, 5);
    }

    #[test]
    fn a_ring_holds_its_descriptors_the_frame_being_handled_among_them() {
        let mut h = host(10.0, 0.0, 1000, Some(3));
        let admits: Vec<Admit> = (0..4).map(|i| h.arrive(SimTime(0), frame(i))).collect();
        assert_eq!(&admits[1..], [Admit::Queued, Admit::Queued, Admit::Dropped]);
        h.complete(SimTime(10_500));
        assert!(h.start(SimTime(10_500)).is_some());
        // Frame 1 is being handled and frame 2 waits: one descriptor is free.
        assert_eq!(h.arrive(SimTime(10_600), frame(9)), Admit::Queued);
        assert_eq!(h.arrive(SimTime(10_600), frame(10)), Admit::Dropped);
        assert_eq!(h.drops, 2);
    }
}
