//! The paced link's transmit queue, 12 bytes a packet where a [`Packet`] takes 64.
//!
//! A queue grows with the run when the bond feeds a link faster than it sends (the thesis's
//! slow interface holds most of its packets until the end), so its entry is the run's memory.
//! What a paced sender's packet carries is its flow, its number, its size, its birth and its
//! number at the bond; all but the size are kept as differences from the packet queued before
//! it (the queue is a FIFO: the one taken out before it): the bond spreads flows' packets over
//! its links in turn, so neighbours in a queue are of nearby flows and numbers. A packet that
//! does not come back the same from that form (any other kind or field, a size or a
//! difference that does not fit) is kept whole beside the entries, in order, and its entry
//! says so. What comes out is always exactly what went in.

use std::collections::VecDeque;

use crate::packet::Packet;
use crate::time::SimTime;

/// One queued packet: a data packet's fields, or a mark that it is kept whole.
#[derive(Debug, Clone, Copy)]
struct Entry {
    /// Its flow and number less the previous packet's.
    flow_delta: i16,
    seq_delta: i16,
    /// Its birth less the previous packet's, nanoseconds.
    born_delta: i32,
    /// Its number at the bond less the previous packet's (at least 1); 0: kept whole.
    bond_delta: u16,
    bytes: u16,
}

const _: () = assert!(std::mem::size_of::<Entry>() == 12);

/// The whole-packet entry's mark.
const WHOLE: Entry = Entry { flow_delta: 0, seq_delta: 0, born_delta: 0, bond_delta: 0, bytes: 0 };

/// What the differences count from: the previous packet's flow, number, birth and number at
/// the bond.
#[derive(Debug, Clone, Copy, Default)]
struct Mark {
    flow: u32,
    seq: u32,
    born: SimTime,
    bond_seq: u64,
}

impl Mark {
    fn of(packet: &Packet) -> Mark {
        Mark { flow: packet.flow, seq: packet.seq, born: packet.born, bond_seq: packet.bond_seq }
    }
}

impl Entry {
    /// `packet` as an entry after a packet marked `prev`, if it comes back the same from it: a
    /// data packet with nothing set beyond what [`Packet::data`] and its bond number set, its
    /// size and differences in range.
    #[inline(always)]
    fn of(packet: &Packet, prev: Mark) -> Option<Entry> {
        let Packet { flow, seq, bytes, born, bond_seq, .. } = *packet;
        if *packet != (Packet { bond_seq, ..Packet::data(flow, seq, bytes, born) }) {
            return None;
        }
        Some(Entry {
            flow_delta: i16::try_from(flow.wrapping_sub(prev.flow) as i32).ok()?,
            seq_delta: i16::try_from(seq.wrapping_sub(prev.seq) as i32).ok()?,
            born_delta: i32::try_from(born.0.wrapping_sub(prev.born.0) as i64).ok()?,
            bond_delta: u16::try_from(bond_seq.wrapping_sub(prev.bond_seq)).ok().filter(|&d| d > 0)?,
            bytes: u16::try_from(bytes).ok()?,
        })
    }

    /// The packet this entry holds, after a packet marked `prev`.
    #[inline(always)]
    fn packet(self, prev: Mark) -> Packet {
        let born = SimTime(prev.born.0.wrapping_add_signed(i64::from(self.born_delta)));
        Packet {
            bond_seq: prev.bond_seq.wrapping_add(u64::from(self.bond_delta)),
            ..Packet::data(
                prev.flow.wrapping_add_signed(i32::from(self.flow_delta)),
                prev.seq.wrapping_add_signed(i32::from(self.seq_delta)),
                u32::from(self.bytes),
                born,
            )
        }
    }
}

/// A FIFO of packets, compact ([`Entry`]).
#[derive(Debug, Clone, Default)]
pub(super) struct PacketQueue {
    entries: VecDeque<Entry>,
    /// The packets kept whole, in order.
    whole: VecDeque<Packet>,
    /// The last packet put in, and the last taken out.
    tail: Mark,
    head: Mark,
}

impl PacketQueue {
    /// Puts `packet` at the tail.
    #[inline(always)]
    pub(super) fn push_back(&mut self, packet: &Packet) {
        let entry = Entry::of(packet, self.tail).unwrap_or_else(|| self.keep_whole(packet));
        self.tail = Mark::of(packet);
        self.entries.push_back(entry);
    }

    /// Keeps `packet` whole: returns its entry.
    #[inline(never)]
    fn keep_whole(&mut self, packet: &Packet) -> Entry {
        self.whole.push_back(*packet);
        WHOLE
    }

    /// Takes the head packet out.
    #[inline(always)]
    pub(super) fn pop_front(&mut self) -> Option<Packet> {
        let entry = self.entries.pop_front()?;
        let packet = match entry.bond_delta {
            0 => self.whole.pop_front().expect("a whole packet for each of its entries"),
            _ => entry.packet(self.head),
        };
        self.head = Mark::of(&packet);
        Some(packet)
    }

    /// Packets queued.
    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether none is.
    pub(super) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Takes every packet out, in order.
    pub(super) fn drain(&mut self) -> Vec<Packet> {
        std::iter::from_fn(|| self.pop_front()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Kind, SackBlock};

    #[test]
    fn what_comes_out_is_what_went_in_compact_or_whole() {
        let data =
            |flow, seq, bytes, born, bond_seq| Packet { bond_seq, ..Packet::data(flow, seq, bytes, SimTime(born)) };
        let packets = [
            data(3, 0, 1024, 0, 1),
            data(7, 9, 1024, 20_000_000, 5),
            data(3, 1, 17, 20_000_000, 9),
            // Born before the one ahead of it, a big size, a big step at the bond, a long wait.
            data(1, 2, 1024, 10, 10),
            data(1, 3, 70_000, 20, 11),
            data(1, 4, 1024, 30, 100_000),
            data(1, 5, 1024, 5_000_000_000, 100_001),
            // A flow and a number far from the packet's before (kept whole), then near it, lower.
            data(70_000, 6, 1024, 5_000_000_000, 100_002),
            data(70_000, 40_000, 1024, 5_000_000_000, 100_003),
            data(69_990, 39_990, 1024, 5_000_000_000, 100_004),
            // The same number at the bond twice (an ARP probe's 0 after data), other kinds, fields.
            Packet::arp(Kind::ArpRequest, 2, SimTime(7)),
            Packet::ack(4, 12, SimTime(8)),
            Packet { flags: Packet::RETRANSMIT, ..data(2, 6, 100, 9, 100_002) },
            Packet { sack_len: 1, sack: [SackBlock { start: 1, end: 2 }; 3], ..data(2, 7, 100, 9, 100_003) },
            data(2, 8, 1024, 9, 100_004),
        ];
        let mut q = PacketQueue::default();
        let mut out = Vec::new();
        for (i, p) in packets.iter().enumerate() {
            q.push_back(p);
            if i % 3 == 2 {
                out.extend(q.pop_front());
            }
        }
        assert_eq!(q.whole.len(), 8, "the packets with no compact form");
        out.extend(q.drain());
        assert!(q.is_empty());
        assert_eq!(out, packets);
    }
}
