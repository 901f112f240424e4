//! The clients' side: per-flow delivery counts and the thesis's in-order rule.
//!
//! A packet is in order iff its sequence number is higher than every one seen
//! before for its flow; the first packet of a flow is in order (client.py's
//! `send`: 1, 2, 5, 3, 4 → 1, 2 and 5 in order). State is per flow, never per
//! packet.

use crate::time::SimTime;

/// Delivery state of one flow.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlowRx {
    /// Highest sequence number seen, plus one (0: nothing seen yet).
    high_plus_one: u32,
    /// Packets received.
    pub received: u32,
    /// Packets received in order.
    pub in_order: u32,
    /// Time of the first delivery.
    pub first_at: Option<SimTime>,
    /// Time of the latest delivery.
    pub last_at: SimTime,
}

impl FlowRx {
    /// Packets received out of order.
    pub fn out_of_order(&self) -> u32 {
        self.received - self.in_order
    }
}

/// Every flow's delivery state, indexed by flow id.
#[derive(Debug, Clone, Default)]
pub struct Receiver {
    flows: Vec<FlowRx>,
    /// Packets delivered, all flows.
    pub delivered: u64,
    /// Packets delivered in order, all flows.
    pub in_order: u64,
    /// Time of the latest delivery.
    pub last_delivery: SimTime,
}

impl Receiver {
    /// A receiver for `flows` flows.
    pub fn new(flows: usize) -> Receiver {
        Receiver { flows: vec![FlowRx::default(); flows], ..Receiver::default() }
    }

    /// Records the arrival of packet `seq` of `flow` at `now`; returns whether it was in order.
    pub fn deliver(&mut self, now: SimTime, flow: u32, seq: u32) -> bool {
        let rx = &mut self.flows[flow as usize];
        rx.received += 1;
        rx.first_at.get_or_insert(now);
        rx.last_at = now;
        let in_order = seq >= rx.high_plus_one;
        if in_order {
            rx.in_order += 1;
            rx.high_plus_one = seq + 1;
            self.in_order += 1;
        }
        self.delivered += 1;
        self.last_delivery = now;
        in_order
    }

    /// Per-flow state, indexed by flow id.
    pub fn flows(&self) -> &[FlowRx] {
        &self.flows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thesis_in_order_rule() {
        let mut rx = Receiver::new(1);
        let got: Vec<bool> = [1, 2, 5, 3, 4].iter().map(|&s| rx.deliver(SimTime::ZERO, 0, s)).collect();
        assert_eq!(got, [true, true, true, false, false]);
        assert_eq!((rx.flows()[0].in_order, rx.flows()[0].out_of_order()), (3, 2));
    }

    #[test]
    fn first_packet_is_in_order_whatever_its_number() {
        let mut rx = Receiver::new(2);
        assert!(rx.deliver(SimTime::ZERO, 1, 7));
        assert!(!rx.deliver(SimTime::ZERO, 1, 0));
        assert!(rx.deliver(SimTime(5), 0, 0));
        assert_eq!(rx.delivered, 3);
        assert_eq!(rx.in_order, 2);
        assert_eq!(rx.last_delivery, SimTime(5));
    }
}
