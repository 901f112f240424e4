//! A line beyond the NIC (`links.N.downstream`): a drop-tail FIFO with its own bit rate and
//! delay, outside the host (a DSL or LTE line behind a router, a slower switch port).
//!
//! Frames reach it in the order the NIC's wire delivers them, and nothing else touches it, so
//! each frame's fate is known when it reaches the line: it waits behind the frames still there,
//! takes its own transmit time at the line's rate, then the line's delay. No event is needed.

use std::collections::VecDeque;

use crate::scenario::Downstream;
use crate::time::SimTime;

/// The line's state: when each frame in it is out.
#[derive(Debug, Clone)]
pub struct Line {
    rate_bps: f64,
    delay: SimTime,
    queue_packets: usize,
    /// When each frame in the line (waiting or being sent) is out, oldest first.
    out_at: VecDeque<SimTime>,
}

impl Line {
    /// The line `spec` describes.
    pub fn new(spec: &Downstream) -> Line {
        Line {
            rate_bps: spec.rate_mbps * 1e6,
            delay: SimTime::from_micros_f64(spec.delay_us),
            queue_packets: spec.queue_packets as usize,
            out_at: VecDeque::new(),
        }
    }

    /// A frame of `wire_bytes` reaches the line at `at` (no earlier than the frame before it):
    /// when it reaches the far end, or `None` when the line's queue is full (drop-tail; the
    /// frame being sent counts in it, as in a link's `txqueuelen`).
    pub fn pass(&mut self, at: SimTime, wire_bytes: u64) -> Option<SimTime> {
        while self.out_at.front().is_some_and(|&out| out <= at) {
            self.out_at.pop_front();
        }
        if self.out_at.len() >= self.queue_packets {
            return None;
        }
        let start = self.out_at.back().map_or(at, |&busy| busy.max(at));
        let out = start + SimTime::from_secs_f64(wire_bytes as f64 * 8.0 / self.rate_bps);
        self.out_at.push_back(out);
        Some(out + self.delay)
    }

    /// The same line, empty (the reverse direction's).
    pub fn fresh(&self) -> Line {
        Line { out_at: VecDeque::new(), ..self.clone() }
    }

    /// The carrier went: what the line held is lost with the link's wire.
    pub fn clear(&mut self) {
        self.out_at.clear();
    }

    /// Its one-way delay.
    pub fn delay(&self) -> SimTime {
        self.delay
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(queue_packets: u32) -> Line {
        Line::new(&Downstream { rate_mbps: 8.0, delay_us: 100.0, queue_packets })
    }

    #[test]
    fn frames_wait_behind_each_other_then_take_the_delay() {
        // 1000 bytes at 8 Mbit/s: 1 ms each.
        let mut l = line(10);
        assert_eq!(l.pass(SimTime::ZERO, 1000), Some(SimTime(1_100_000)));
        assert_eq!(l.pass(SimTime(200_000), 1000), Some(SimTime(2_100_000)));
        // An idle line sends at once.
        assert_eq!(l.pass(SimTime(5_000_000), 1000), Some(SimTime(6_100_000)));
    }

    #[test]
    fn a_full_line_drops_until_a_frame_is_out() {
        let mut l = line(2);
        assert!(l.pass(SimTime::ZERO, 1000).is_some());
        assert!(l.pass(SimTime::ZERO, 1000).is_some());
        assert_eq!(l.pass(SimTime(999_999), 1000), None);
        // The first is out at 1 ms: room for one.
        assert_eq!(l.pass(SimTime(1_000_000), 1000), Some(SimTime(3_100_000)));
    }
}
