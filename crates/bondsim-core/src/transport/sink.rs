//! The client end of the paced, window and cbr transports: every packet that
//! reaches it goes to the application at once (no reassembly, no
//! acknowledgements), so the delivery point is the arrival point.

use super::{Endpoint, Output};
use crate::packet::Packet;
use crate::time::SimTime;

/// Hands every arriving packet to the application.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sink;

impl Endpoint for Sink {
    fn open(&mut self, _now: SimTime, _flow: u32, _bytes: u64, _out: &mut Vec<Output>) {}

    fn on_packet(&mut self, _now: SimTime, packet: Packet, out: &mut Vec<Output>) {
        out.push(Output::Deliver(packet));
    }

    fn poll_transmit(&mut self, _now: SimTime) -> Option<Packet> {
        None
    }

    fn is_idle(&self) -> bool {
        true
    }
}
