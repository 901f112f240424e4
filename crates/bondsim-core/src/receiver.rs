//! The clients' side: per-flow delivery, order and delay, streamed.
//!
//! * The thesis's rule (client.py's `send`): a packet is in order iff its
//!   sequence number is higher than every one seen before for its flow; the
//!   first packet is in order (1, 2, 5, 3, 4 → 1, 2 and 5 in order). This is
//!   exactly RFC 4737's "reordered" singleton (`s < NextExp`), so the two
//!   counts are one.
//! * RFC 4737 reordering extent: for a reordered packet at arrival position
//!   `i`, `e = i - j` where `j` is the earliest arrival with a higher sequence
//!   number.
//! * RFC 5236 reorder density: displacement = receive index − expected index,
//!   lost packets counted out (see [`crate::reorder_density`]).
//! * Delivery delay (sender to receiver), as a histogram (HdrHistogram).
//!
//! State is per flow and bounded by the reordering window, never per packet:
//! sequence numbers below the lowest one still outstanding are forgotten.

use std::collections::{BTreeMap, VecDeque};

use hdrhistogram::Histogram;

use crate::packet::FragLoss;
use crate::packet::Packet;
use crate::reorder_density::ReorderDensity;
use crate::time::SimTime;

/// The set of resolved (received or lost) sequence numbers of a flow,
/// remembered from the lowest unresolved one up: bit `off + i` of `bits` (word by
/// word, low bit first) is `base + i`. The window slides by moving `off` and dropping
/// whole words, never by shifting every word; `bits` is empty when nothing above
/// `base` is resolved (then `off` is 0).
#[derive(Debug, Clone, Default)]
struct SeqWindow {
    base: u32,
    off: u32,
    bits: VecDeque<u64>,
}

impl SeqWindow {
    fn contains(&self, seq: u32) -> bool {
        if seq < self.base {
            return true;
        }
        let pos = (seq - self.base) as usize + self.off as usize;
        self.bits.get(pos / 64).is_some_and(|w| w >> (pos % 64) & 1 == 1)
    }

    /// Marks `seq` resolved; returns false if it already was.
    #[inline(always)]
    fn insert(&mut self, seq: u32) -> bool {
        if seq == self.base && self.bits.is_empty() {
            self.base += 1; // the common case: the next number, no gap
            return true;
        }
        self.insert_with_gap(seq)
    }

    /// [`SeqWindow::insert`] while a gap is open (or opens now).
    #[inline(never)]
    fn insert_with_gap(&mut self, seq: u32) -> bool {
        if self.contains(seq) {
            return false;
        }
        let pos = (seq - self.base) as usize + self.off as usize;
        if self.bits.len() <= pos / 64 {
            self.bits.resize(pos / 64 + 1, 0);
        }
        self.bits[pos / 64] |= 1 << (pos % 64);
        if seq != self.base {
            // The lowest unresolved number still is: nothing to slide past (and the last word
            // holds a resolved number, so nothing to trim). The front word is not read, which a
            // late packet of a long gap would miss in the cache for.
            return true;
        }
        // Slide past every leading resolved number.
        while let Some(&word) = self.bits.front() {
            let resolved = (word >> self.off).trailing_ones();
            self.base += resolved;
            if self.off + resolved == 64 {
                self.bits.pop_front();
                self.off = 0;
                continue;
            }
            self.off += resolved;
            // Forget the numbers now below the base.
            self.bits[0] &= u64::MAX << self.off;
            break;
        }
        while self.bits.back() == Some(&0) {
            self.bits.pop_back();
        }
        if self.bits.is_empty() {
            self.off = 0;
        }
        true
    }
}

/// Delivery state of one flow. Laid out in declaration order on cache-line bounds: what every
/// delivery reads and writes fills the first two lines (flows' packets interleave, so each
/// delivery finds its flow's state cold: two lines to fetch, where the compiler's order spread
/// them over three or four), what only a reordered, duplicate or lost packet touches comes after.
#[derive(Debug, Clone, Default)]
#[repr(C, align(64))]
pub struct FlowRx {
    resolved: SeqWindow,
    next_exp: u32,
    /// Distinct packets received (and the next one's arrival position, from 0).
    pub received: u32,
    /// Packets received in order (thesis rule = RFC 4737 not reordered).
    pub in_order: u32,
    /// Lost packets numbered below the lowest unresolved number.
    lost_below_base: u32,
    /// Time of the latest delivery (meaningful once `received > 0`).
    pub last_at: SimTime,
    /// (sequence number, arrival position) of each arrival that raised the highest number so far
    /// past a number not yet received (a jump, which opened a gap): a late packet's first
    /// arrival with a higher number (RFC 4737's extent) is always the jump that skipped it, so
    /// the in-order arrivals that only follow on need no entry. (8 bytes a jump, kept while a gap
    /// below it stays open.)
    highs: VecDeque<(u32, u32)>,
    /// Lost packets numbered above it, ascending: none while there are none (the usual case; a
    /// flow weighs 8 bytes of it instead of 24).
    #[allow(clippy::box_collection)] // (the box is the point: 8 bytes here where a `Vec` takes 24)
    lost_pending: Option<Box<Vec<u32>>>,
    packets: u32,
    /// Copies of packets already received.
    pub duplicates: u32,
    /// Packets that never arrived (dropped on the way).
    pub lost: u32,
    /// Largest RFC 4737 reordering extent (a difference of arrival positions, which are `u32`).
    pub max_extent: u32,
    /// Sum of reordering extents (for the mean).
    pub sum_extent: u64,
}

// Every delivery's fields end within the second line (the standard library's `VecDeque` is 32
// bytes; were it to grow, this says so rather than slow down), and a flow's delivery state is two
// lines in all (issue 40: a flow's weight; every request of a run has one).
const _: () = assert!(std::mem::offset_of!(FlowRx, lost_pending) + 8 <= 128);
const _: () = assert!(std::mem::size_of::<FlowRx>() == 128);

impl FlowRx {
    /// Packets received out of order.
    pub fn out_of_order(&self) -> u32 {
        self.received - self.in_order
    }

    /// Packets the flow's file was cut into.
    pub fn packets(&self) -> u32 {
        self.packets
    }

    /// True once every packet arrived or was lost: the flow has ended.
    pub fn resolved(&self) -> bool {
        self.received + self.lost >= self.packets
    }

    /// True once every packet arrived: the whole file reached the client (a flow that lost
    /// packets has ended, but is not complete).
    pub fn complete(&self) -> bool {
        self.received >= self.packets
    }
}

/// Every flow's delivery state, indexed by flow id, and run-wide figures.
#[derive(Debug, Clone)]
pub struct Receiver {
    flows: Vec<FlowRx>,
    /// Distinct packets delivered, all flows.
    pub delivered: u64,
    /// Of those, delivered in order.
    pub in_order: u64,
    /// Packets lost, all flows.
    pub lost: u64,
    /// Duplicate copies received.
    pub duplicates: u64,
    /// Payload bytes delivered (distinct packets).
    pub payload_bytes: u64,
    /// Payload bytes delivered from `measure_from` on (the goodput's share).
    pub measured_bytes: u64,
    /// When the goodput starts counting (`measure_from_s`).
    pub measure_from: SimTime,
    /// Time of the latest delivery.
    pub last_delivery: SimTime,
    /// Delivery delay, nanoseconds ([`Receiver::delay_ns`]).
    delays: Delays,
    /// RFC 5236 displacement counts over all flows.
    pub density: ReorderDensity,
    /// Fragmented datagrams lost, by [`FragLoss`] cause.
    pub datagrams_lost: [u64; 4],
}

impl FlowRx {
    /// Lost packets numbered below `seq`. Every delivery asks, and almost always no loss is
    /// pending: that test is made in line, the search out of it.
    #[inline(always)]
    fn lost_below(&self, seq: u32) -> u32 {
        match &self.lost_pending {
            None => self.lost_below_base,
            Some(pending) => self.lost_below_pending(pending, seq),
        }
    }

    #[inline(never)]
    fn lost_below_pending(&self, pending: &[u32], seq: u32) -> u32 {
        self.lost_below_base + pending.partition_point(|&l| l < seq) as u32
    }

    /// Folds losses the window has moved past into the count (in line while none is pending,
    /// as [`FlowRx::lost_below`]).
    #[inline(always)]
    fn settle_losses(&mut self) {
        if self.lost_pending.is_some() {
            self.settle_pending_losses();
        }
    }

    #[inline(never)]
    fn settle_pending_losses(&mut self) {
        let base = self.resolved.base;
        let Some(pending) = self.lost_pending.as_mut() else { return };
        let settled = pending.partition_point(|&l| l < base);
        if settled > 0 {
            self.lost_below_base += settled as u32;
            pending.drain(..settled);
            if pending.is_empty() {
                self.lost_pending = None;
            }
        }
    }
}

/// The index of the first of `highs` (increasing numbers) numbered above `seq`, as
/// `partition_point` finds it, searched from the front: `highs` starts at the lowest
/// number still missing and a late packet is usually that one, so the answer is near
/// the front, and a search that doubles its step from there reads only what it needs
/// of a long list (a binary search over all of it misses the cache at every step).
fn first_above(highs: &VecDeque<(u32, u32)>, seq: u32) -> usize {
    let mut hi = 1;
    while hi < highs.len() && highs[hi].0 <= seq {
        hi *= 2;
    }
    // highs[hi / 2] <= seq was read (when hi > 1), highs[hi] > seq (when hi < len).
    let (mut lo, mut hi) = (hi / 2, hi.min(highs.len()));
    while lo < hi {
        let mid = (lo + hi) / 2;
        if highs[mid].0 <= seq {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Delivery delays in an HdrHistogram, recorded in runs of equal values: the packets a
/// paced link sends in one period often wait exactly as long as the packets before them
/// (the thesis's links poll at the sender's ticks), and a run costs one compare per packet
/// where an update of the histogram costs about 50 instructions. A histogram's counts,
/// total, minimum and maximum do not depend on the order values are recorded in, so
/// the figures are the same as with one `record` per packet.
#[derive(Debug, Clone)]
struct Delays {
    histogram: Histogram<u64>,
    /// The value of the run not yet recorded, and its length.
    last: u64,
    run: u64,
}

impl Default for Delays {
    fn default() -> Self {
        Delays { histogram: Histogram::new(3).expect("3 significant digits is valid"), last: 0, run: 0 }
    }
}

impl Delays {
    #[inline(always)]
    fn record(&mut self, ns: u64) {
        if ns == self.last {
            self.run += 1;
        } else {
            self.flush();
            self.last = ns;
            self.run = 1;
        }
    }

    #[inline(never)]
    fn flush(&mut self) {
        if self.run > 0 {
            // Saturate rather than fail on a delay beyond the histogram's range (centuries).
            let _ = self.histogram.record_n(self.last, self.run);
            self.run = 0;
        }
    }
}

impl Receiver {
    /// A receiver for flows of these packet counts.
    pub fn new(packets_per_flow: &[u32]) -> Receiver {
        Receiver {
            flows: packets_per_flow.iter().map(|&packets| FlowRx { packets, ..FlowRx::default() }).collect(),
            delivered: 0,
            in_order: 0,
            lost: 0,
            duplicates: 0,
            payload_bytes: 0,
            measured_bytes: 0,
            measure_from: SimTime::ZERO,
            last_delivery: SimTime::ZERO,
            delays: Delays::default(),
            density: ReorderDensity::default(),
            datagrams_lost: [0; 4],
        }
    }

    /// Delivery delays, nanoseconds, of every packet delivered so far.
    pub fn delay_ns(&self) -> Histogram<u64> {
        let mut delays = self.delays.clone();
        delays.flush();
        delays.histogram
    }

    /// Records the arrival of `packet` at `now`; returns whether it was in order
    /// (`None` for a duplicate).
    #[inline(always)]
    pub fn deliver(&mut self, now: SimTime, packet: &Packet) -> Option<bool> {
        let rx = &mut self.flows[packet.flow as usize];
        let seq = packet.seq;
        if !rx.resolved.insert(seq) {
            rx.duplicates += 1;
            self.duplicates += 1;
            return None;
        }
        let position = rx.received;
        rx.received += 1;
        rx.last_at = now;
        let in_order = seq >= rx.next_exp;
        if in_order {
            rx.in_order += 1;
            let jump = seq > rx.next_exp;
            rx.next_exp = seq + 1;
            if jump {
                // The numbers from next_exp to seq - 1 are missing: when one comes, this arrival is
                // the first above it.
                rx.highs.push_back((seq, position));
            } else if rx.resolved.bits.is_empty() && !rx.highs.is_empty() {
                // No gap open: nothing later can be reordered.
                rx.highs.clear();
            }
            self.in_order += 1;
        } else {
            // RFC 4737 extent: distance back to the first arrival with a higher number, the jump
            // that skipped `seq` (every arrival between with a higher number followed it on).
            let k = first_above(&rx.highs, seq);
            let extent = position - rx.highs[k].1;
            rx.max_extent = rx.max_extent.max(extent);
            rx.sum_extent += u64::from(extent);
        }
        // Forget the highs below the lowest missing number. Only when it moved on can there be new
        // ones, that is when `seq` was it (`seq` is resolved now: had it not been the lowest, the
        // lowest would still be below it); the front of a long list is not read for nothing.
        let base = rx.resolved.base;
        if seq < base {
            while rx.highs.len() > 1 && rx.highs[0].0 < base {
                rx.highs.pop_front();
            }
        }
        let expected = i64::from(seq) - i64::from(rx.lost_below(seq));
        self.density.record(i64::from(position) - expected);
        rx.settle_losses();
        self.delivered += 1;
        self.payload_bytes += u64::from(packet.bytes);
        if now >= self.measure_from {
            self.measured_bytes += u64::from(packet.bytes);
        }
        self.last_delivery = now;
        self.delays.record(now.saturating_sub(packet.born).as_nanos());
        Some(in_order)
    }

    /// The datagram of `packet` (a fragment, or what a reassembler reports) will never
    /// reach the application, for `cause`; counted once per datagram, under the first cause.
    pub fn lost_datagram(&mut self, packet: &Packet, cause: FragLoss) {
        if self.lost(packet) {
            self.datagrams_lost[cause as usize] += 1;
        }
    }

    /// `packet` will never arrive (every copy was dropped); false if it was already resolved.
    pub fn lost(&mut self, packet: &Packet) -> bool {
        let rx = &mut self.flows[packet.flow as usize];
        let new = rx.resolved.insert(packet.seq);
        if new {
            rx.lost += 1;
            self.lost += 1;
            let pending = rx.lost_pending.get_or_insert_with(Box::default);
            let at = pending.partition_point(|&l| l < packet.seq);
            pending.insert(at, packet.seq);
            rx.settle_losses();
        }
        new
    }

    /// The connection of `flow` was given up: what its application has not received
    /// never will be (counted lost, as packets whose every copy was dropped).
    pub fn abandon(&mut self, flow: u32) {
        let rx = &self.flows[flow as usize];
        let missing: Vec<u32> = (rx.resolved.base..rx.packets).filter(|&seq| !rx.resolved.contains(seq)).collect();
        for seq in missing {
            self.lost(&Packet { flow, seq, ..Packet::default() });
        }
    }

    /// A duplicate copy of a packet of `flow` arrived (broadcast's extra copies).
    pub fn duplicate(&mut self, flow: u32) {
        self.flows[flow as usize].duplicates += 1;
        self.duplicates += 1;
    }

    /// Per-flow state, indexed by flow id.
    pub fn flows(&self) -> &[FlowRx] {
        &self.flows
    }
}

/// The clients' wire: the order packets arrive in, before any resequencing
/// or reassembly (the thesis's rule: out of order unless the highest number of
/// its flow so far). Cheap on purpose: one number per flow.
#[derive(Debug, Clone, Default)]
pub struct WireTap {
    /// Per flow: one past the highest sequence number arrived so far.
    next: Vec<u32>,
    /// Distinct packets that arrived (first copies).
    pub arrived: u64,
    /// Of those, arrived below their flow's highest number so far.
    pub out_of_order: u64,
}

impl WireTap {
    /// A tap for `flows` flows.
    pub fn new(flows: usize) -> WireTap {
        WireTap { next: vec![0; flows], arrived: 0, out_of_order: 0 }
    }

    /// The first copy of `packet` arrived. A fragment is in order when its datagram
    /// is the flow's highest so far (the order of fragments within a datagram is
    /// reassembly's business, not counted here).
    pub fn arrive(&mut self, packet: &Packet) {
        let next = &mut self.next[packet.flow as usize];
        self.arrived += 1;
        if packet.seq >= *next {
            *next = packet.seq + 1;
        } else if !(packet.is_fragment() && packet.seq + 1 == *next) {
            self.out_of_order += 1;
        }
    }
}

/// A receive buffer that releases packets in the order the bond sent them
/// (the logical reception of striping protocols such as Adiseshu et al.'s
/// SRR): a packet waits until every packet the bond sent before it has
/// arrived or is known lost.
#[derive(Debug, Clone, Default)]
pub struct Resequencer {
    next: u64,
    held: BTreeMap<u64, Option<Packet>>,
    /// Most packets held at once.
    pub max_held: usize,
}

impl Resequencer {
    fn release(&mut self) -> Vec<Packet> {
        let mut out = Vec::new();
        while let Some(entry) = self.held.first_entry() {
            if *entry.key() != self.next {
                break;
            }
            if let Some(p) = entry.remove() {
                out.push(p);
            }
            self.next += 1;
        }
        out
    }

    /// `packet` arrived; returns the packets now released, in bond order.
    pub fn arrive(&mut self, packet: Packet) -> Vec<Packet> {
        self.held.insert(packet.bond_seq, Some(packet));
        self.max_held = self.max_held.max(self.held.len());
        self.release()
    }

    /// Packet `bond_seq` was lost: stop waiting for it.
    pub fn skip(&mut self, bond_seq: u64) -> Vec<Packet> {
        self.held.insert(bond_seq, None);
        self.release()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet(flow: u32, seq: u32) -> Packet {
        Packet { bond_seq: u64::from(seq), ..Packet::data(flow, seq, 100, SimTime::ZERO) }
    }

    #[test]
    fn extents_are_rfc_4737s_by_its_definition_whatever_the_order_and_the_losses() {
        // Arrival orders made by holding packets back a random few places, some lost: each late
        // arrival's extent is its distance back to the first earlier arrival with a higher number
        // (RFC 4737 §4.2.1), found here by reading every earlier arrival.
        let mut state = 12345u64;
        let mut next = |n: u64| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) % n
        };
        for _ in 0..200 {
            let n = 300;
            let mut order: Vec<(u64, u32)> = (0..n).map(|s| (u64::from(s) * 8 + next(40), s)).collect();
            order.sort();
            let mut rx = Receiver::new(&[n]);
            let (mut arrived, mut max, mut sum) = (Vec::new(), 0u64, 0u64);
            for &(_, s) in &order {
                if next(20) == 0 {
                    rx.lost(&packet(0, s));
                    continue;
                }
                if let Some(first) = arrived.iter().position(|&a| a > s) {
                    let extent = (arrived.len() - first) as u64;
                    max = max.max(extent);
                    sum += extent;
                }
                arrived.push(s);
                rx.deliver(SimTime::ZERO, &packet(0, s));
            }
            assert_eq!((u64::from(rx.flows()[0].max_extent), rx.flows()[0].sum_extent), (max, sum));
        }
    }

    #[test]
    fn the_search_from_the_front_finds_what_a_binary_search_finds() {
        // Every length up to 40, every query from below the first to above the last but one.
        for len in 1..40u32 {
            let highs: VecDeque<(u32, u32)> = (0..len).map(|i| (3 * i + 5, i)).collect();
            for seq in 0..3 * len + 3 {
                assert_eq!(first_above(&highs, seq), highs.partition_point(|&(s, _)| s <= seq), "{len} {seq}");
            }
        }
    }

    fn receive(seqs: &[u32]) -> Receiver {
        let mut rx = Receiver::new(&[seqs.len() as u32]);
        for &s in seqs {
            rx.deliver(SimTime::ZERO, &packet(0, s));
        }
        rx
    }

    #[test]
    fn thesis_in_order_rule() {
        let mut rx = Receiver::new(&[6]);
        let got: Vec<Option<bool>> =
            [1, 2, 5, 3, 4].iter().map(|&s| rx.deliver(SimTime::ZERO, &packet(0, s))).collect();
        assert_eq!(got, [Some(true), Some(true), Some(true), Some(false), Some(false)]);
        assert_eq!((rx.flows()[0].in_order, rx.flows()[0].out_of_order()), (3, 2));
    }

    #[test]
    fn first_packet_is_in_order_whatever_its_number() {
        let mut rx = Receiver::new(&[10, 1]);
        assert_eq!(rx.deliver(SimTime::ZERO, &packet(0, 7)), Some(true));
        assert_eq!(rx.deliver(SimTime::ZERO, &packet(0, 0)), Some(false));
        assert_eq!(rx.deliver(SimTime(5), &packet(1, 0)), Some(true));
        assert_eq!((rx.delivered, rx.in_order, rx.last_delivery), (3, 2, SimTime(5)));
    }

    #[test]
    fn rfc4737_extent() {
        // RFC 4737 §4.2 style example: 1 2 4 5 3: packet 3 arrives at position 4,
        // the first higher-numbered packet (4) arrived at position 2: extent 2.
        let rx = receive(&[1, 2, 4, 5, 3]);
        assert_eq!((rx.flows()[0].max_extent, rx.flows()[0].sum_extent), (2, 2));
        // 4 1 2 3: three late packets, extents 1, 2, 3.
        let rx = receive(&[4, 1, 2, 3]);
        assert_eq!((rx.flows()[0].max_extent, rx.flows()[0].sum_extent), (3, 6));
    }

    #[test]
    fn duplicates_are_counted_apart() {
        let rx = receive(&[0, 1, 1, 2, 0]);
        let f = &rx.flows()[0];
        assert_eq!((f.received, f.duplicates, f.in_order), (3, 2, 3));
    }

    #[test]
    fn window_holds_what_a_set_holds_whatever_the_order() {
        // Numbers 0..3000 in a scrambled order (blocks reversed, a stride through each,
        // repeats), against a plain set: the same answers, the base at the lowest missing.
        let mut w = SeqWindow::default();
        let mut set = std::collections::BTreeSet::new();
        let order = (0..3000u32).map(|i| (i / 300) * 300 + (i % 300) * 7 % 300).rev().chain([5, 2999, 1500]);
        for (k, seq) in order.enumerate() {
            assert_eq!(w.insert(seq), set.insert(seq), "insert {seq} (step {k})");
            let base = (0..).find(|n| !set.contains(n)).unwrap();
            assert_eq!(w.base, base);
            assert_eq!(w.bits.is_empty(), set.range(base..).next().is_none(), "step {k}");
            for probe in [seq.saturating_sub(65), seq, seq + 1, seq + 64, base, base + 63, base + 64] {
                assert_eq!(w.contains(probe), set.contains(&probe), "contains {probe} at step {k}");
            }
        }
    }

    #[test]
    fn window_forgets_what_is_below_the_lowest_outstanding_number() {
        let mut w = SeqWindow::default();
        for s in (0..500).rev() {
            assert!(w.insert(s));
        }
        assert_eq!((w.base, w.bits.len()), (500, 0));
        assert!(!w.insert(3));
        assert!(w.insert(700));
        assert!(w.contains(700) && !w.contains(699) && w.contains(499));
        // Memory follows the gap, not the packets delivered.
        let mut rx = Receiver::new(&[1_000_000]);
        for s in 0..100_000 {
            rx.deliver(SimTime::ZERO, &packet(0, s));
        }
        assert!(rx.flows()[0].resolved.bits.is_empty() && rx.flows()[0].highs.len() <= 2);
    }

    #[test]
    fn reorder_density_matches_the_published_example() {
        // Arrivals 1 6 7 2 3 4 5 8 (here from 0): displacements 0 -4 -4 2 2 2 2 0.
        let rx = receive(&[0, 5, 6, 1, 2, 3, 4, 7]);
        assert_eq!(rx.density.fractions(), [(-4, 0.25), (0, 0.25), (2, 0.5)]);
        // 1 3 4 5 6 2: 0 -1 -1 -1 -1 +4, and the displacements sum to zero without loss.
        let rx = receive(&[0, 2, 3, 4, 5, 1]);
        let f = rx.density.fractions();
        assert_eq!(f.iter().map(|(d, _)| *d).collect::<Vec<_>>(), [-1, 0, 4]);
        assert!(f.iter().map(|(d, x)| *d as f64 * x).sum::<f64>().abs() < 1e-12);
    }

    #[test]
    fn reorder_density_counts_displacements_with_losses_counted_out() {
        // RFC 5236 style example: sent 0..6, 2 lost, arrival 0 1 4 3 5: expected indices 0 1 _ 2 3 4.
        let mut rx = Receiver::new(&[6]);
        rx.deliver(SimTime::ZERO, &packet(0, 0));
        rx.deliver(SimTime::ZERO, &packet(0, 1));
        rx.lost(&packet(0, 2));
        for s in [4, 3, 5] {
            rx.deliver(SimTime::ZERO, &packet(0, s));
        }
        // RI: 0 1 2 3 4; E: 0 1 3 2 4 -> D: 0 0 -1 1 0.
        assert_eq!(rx.density.fractions(), [(-1, 0.2), (0, 0.6), (1, 0.2)]);
    }

    #[test]
    fn lost_packets_end_a_flow_but_leave_it_incomplete() {
        let mut rx = Receiver::new(&[3, 2]);
        rx.deliver(SimTime::ZERO, &packet(0, 0));
        rx.lost(&packet(0, 1));
        assert!(!rx.flows()[0].resolved());
        rx.deliver(SimTime::ZERO, &packet(0, 2));
        assert!(rx.flows()[0].resolved() && !rx.flows()[0].complete());
        assert_eq!((rx.lost, rx.flows()[0].lost), (1, 1));
        rx.deliver(SimTime::ZERO, &packet(1, 1));
        rx.deliver(SimTime::ZERO, &packet(1, 0));
        assert!(rx.flows()[1].resolved() && rx.flows()[1].complete());
    }

    #[test]
    fn delay_histogram_records_sender_to_receiver_time() {
        let mut rx = Receiver::new(&[2]);
        rx.deliver(SimTime(1_000_000), &packet(0, 0));
        rx.deliver(SimTime(3_000_000), &packet(0, 1));
        assert_eq!(rx.delay_ns().len(), 2);
        assert!((rx.delay_ns().max() as f64 - 3e6).abs() / 3e6 < 1e-3);
    }

    #[test]
    fn resequencer_restores_bond_order_and_skips_lost_packets() {
        let mut r = Resequencer::default();
        let order = |v: Vec<Packet>| v.iter().map(|p| p.bond_seq).collect::<Vec<_>>();
        assert_eq!(order(r.arrive(packet(0, 1))), Vec::<u64>::new());
        assert_eq!(order(r.arrive(packet(0, 3))), Vec::<u64>::new());
        assert_eq!(order(r.arrive(packet(0, 0))), [0, 1]);
        assert_eq!(order(r.skip(2)), [3]);
        assert_eq!(order(r.arrive(packet(0, 4))), [4]);
        assert_eq!(r.max_held, 3);
    }

    #[test]
    fn delays_recorded_in_runs_make_the_histogram_of_one_record_each() {
        // Runs, alternations, a zero and a value beyond the initial range, in a pseudo-random order.
        let mut values = vec![0u64, 0, 5, 5, 5, 20_000_000, 7, 20_000_000, 20_000_000, 1 << 50, 3];
        let mut x = 1u64;
        for _ in 0..2_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let v = [0, 1_000, 1_001, 20_000_000, x >> 40][(x >> 61) as usize % 5];
            values.extend(std::iter::repeat_n(v, 1 + (x >> 58) as usize % 3));
        }
        let mut direct = Histogram::<u64>::new(3).unwrap();
        let mut delays = Delays::default();
        for (i, &v) in values.iter().enumerate() {
            direct.record(v).unwrap();
            delays.record(v);
            if i == 100 {
                // Reading in the middle leaves the rest of the run to be counted once.
                let mut read = delays.clone();
                read.flush();
                assert_eq!(read.histogram.len(), 101);
            }
        }
        delays.flush();
        let h = &delays.histogram;
        assert_eq!((h.len(), h.min(), h.max()), (direct.len(), direct.min(), direct.max()));
        assert_eq!(h.len(), values.len() as u64);
        for q in [0.0, 0.1, 0.5, 0.9, 0.99, 1.0] {
            assert_eq!(h.value_at_quantile(q), direct.value_at_quantile(q), "quantile {q}");
        }
        assert_eq!(h.mean(), direct.mean());
    }
}
