//! The packet as it travels from sender to receiver.

use crate::time::SimTime;

/// One packet: a chunk of a flow's file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packet {
    /// The flow (request) it belongs to.
    pub flow: u32,
    /// Its position in the flow, from 0 (the thesis's chunk number).
    pub seq: u32,
    /// Payload bytes.
    pub bytes: u32,
    /// When the sender handed it to the bond.
    pub born: SimTime,
    /// Position among every packet the bond sent (the order a resequencing receiver restores).
    pub bond_seq: u64,
}
