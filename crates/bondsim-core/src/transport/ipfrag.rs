//! IPv4 fragmentation at the sending host and reassembly at the receiving one,
//! as Linux does them.
//!
//! * [`Fragmenter`]: `ip_do_fragment` (net/ipv4/ip_output.c) cuts a datagram
//!   larger than the MTU into fragments of at most MTU bytes, each with its own
//!   20-byte IP header; every fragment but the last carries a multiple of 8
//!   payload bytes (`if (len < left) len &= ~7`), offsets count 8-byte units and
//!   all but the last set `IP_MF`. They leave in order, and the bond places each
//!   on its own (each is an skb of its own).
//! * [`Reassembler`]: `ip_defrag` (net/ipv4/ip_fragment.c) over the queues of
//!   net/ipv4/inet_fragment.c. A queue per datagram (source, destination, IP id,
//!   protocol: here flow and datagram number) collects fragments in any order and
//!   hands the datagram on when the first and last fragments are in and the bytes
//!   between add up (`INET_FRAG_FIRST_IN | INET_FRAG_LAST_IN`, `meat == len`).
//!   A datagram is lost when
//!   - a fragment never comes: the queue expires `ipfrag_time` after it was made
//!     (`ip_expire`, counted in `ReasmTimeout`);
//!   - more than `ipfrag_max_dist` fragments from the same source arrived between
//!     two of its fragments (`ip_frag_too_far`): the queue drops what it holds
//!     and starts again (`ip_frag_reinit`), so the datagram can no longer complete;
//!   - fragment memory is over `ipfrag_high_thresh`: since Linux 4.17
//!     `inet_frag_find` refuses every fragment until memory falls below it; before
//!     (3.x, the seed's 3.11) `ip_defrag` first ran the evictor, destroying the
//!     least recently used queues until memory is under `ipfrag_low_thresh`
//!     (`inet_frag_evictor`; a queue moves to the back of the LRU list when a
//!     fragment joins it, `inet_frag_lru_move`).
//!
//! Memory is what Linux charges: each fragment's `skb->truesize` and each
//! queue's struct (`add_frag_mem_limit`). Exact duplicates are dropped
//! (`inet_frag_queue_insert`'s `IPFRAG_DUP`; 3.x trimmed them away); bondsim's
//! fragments never overlap otherwise.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use super::{Endpoint, Output};
use crate::packet::{Packet, IP_MF, UDP_HEADER_BYTES};
use crate::scenario::{IpFrag, Scenario};
use crate::time::SimTime;

pub use crate::packet::FragLoss;
use crate::report::{count, Declared, Report};

/// The summary figures a reassembling end reports (`delivered`, `dropped` and the rest count
/// datagrams then; `packets` and the links' counters count frames): the datagrams the
/// application lost, by first cause (a fragment dropped on the way, `ip_frag_too_far`,
/// fragment memory over `ipfrag_high_thresh`, a queue expired after `ipfrag_time`), then
/// Linux's reassembly counters (`ReasmReqds`, `ReasmOKs`, `ReasmTimeout`, queues reset by
/// `ip_frag_too_far`, queues evicted before 4.17, fragments refused since 4.17, the most
/// fragment memory held at once in bytes).
pub const FIGURES: &[Declared] = &[
    count("datagrams_lost_fragment_dropped"),
    count("datagrams_lost_max_dist"),
    count("datagrams_lost_high_thresh"),
    count("datagrams_lost_timeout"),
    count("reasm_fragments"),
    count("reasm_oks"),
    count("reasm_timeouts"),
    count("reasm_max_dist_resets"),
    count("reasm_evicted"),
    count("reasm_refused"),
    count("reasm_mem_peak_bytes"),
];

/// How the sender cuts datagrams (`ip_do_fragment`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fragmenter {
    /// IP payload bytes a packet may carry: MTU − IP header.
    room: u32,
    /// IP payload bytes of every fragment but the last: `room` rounded down to 8.
    per_fragment: u32,
}

impl Fragmenter {
    /// The scenario's fragmenter, if its datagrams are fragmented.
    pub fn for_scenario(scenario: &Scenario) -> Option<Fragmenter> {
        let ip_header = scenario.l3_header_bytes() - UDP_HEADER_BYTES;
        let room = scenario.mtu() - ip_header;
        scenario.fragments().then_some(Fragmenter { room, per_fragment: room & !7 })
    }

    /// The fragments of `datagram` (a UDP datagram of `datagram.bytes` payload), in
    /// the order they are sent: each carries its piece of the IP payload (UDP header
    /// + data) and the fragment field. A datagram that fits the MTU leaves whole.
    pub fn cut(&self, datagram: Packet) -> impl Iterator<Item = Packet> {
        let total = datagram.bytes + UDP_HEADER_BYTES;
        let per = self.per_fragment;
        let whole = total <= self.room;
        let count = if whole { 1 } else { total.div_ceil(per) };
        (0..count).map(move |k| {
            if whole {
                return datagram;
            }
            let offset = k * per;
            let bytes = per.min(total - offset);
            let more = if offset + bytes < total { u32::from(IP_MF) } else { 0 };
            Packet { bytes, ack: more | (offset / 8), ..datagram }
        })
    }
}

/// What the reassembly did, in Linux's counters' terms (`/proc/net/snmp` Ip: Reasm*).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ReasmStats {
    /// Fragments received (`ReasmReqds`).
    pub fragments: u64,
    /// Datagrams reassembled (`ReasmOKs`).
    pub oks: u64,
    /// Queues that expired (`ReasmTimeout`).
    pub timeouts: u64,
    /// Queues reset by `ip_frag_too_far`.
    pub max_dist_resets: u64,
    /// Queues destroyed by the evictor (kernels before 4.17).
    pub evicted: u64,
    /// Fragments refused over `ipfrag_high_thresh` (since 4.17).
    pub refused: u64,
    /// Most fragment memory held at once, bytes.
    pub mem_peak_bytes: u64,
}

type Key = (u32, u32);

#[derive(Debug, Clone)]
struct Queue {
    /// Offsets of the fragments it holds.
    offsets: Vec<u32>,
    meat: u32,
    len: u32,
    first_in: bool,
    last_in: bool,
    /// The source's fragment count when its latest fragment came (`qp->rid`).
    rid: u32,
    /// Truesize of the fragments it holds.
    held: u64,
    expires: SimTime,
    lru: u64,
    born: SimTime,
}

/// The receiving host's reassembly: the client end of a fragmenting `cbr` run.
#[derive(Debug, Clone)]
pub struct Reassembler {
    config: IpFrag,
    timeout: SimTime,
    queues: FxHashMap<Key, Queue>,
    /// Queues by last use (`lru_list`), oldest first.
    lru: BTreeMap<u64, Key>,
    next_lru: u64,
    mem: u64,
    /// The source's fragment counter (`inet_peer->rid`): every flow comes from the server's address.
    peer_rid: u32,
    stats: ReasmStats,
}

impl Reassembler {
    /// A reassembler with the host's settings `config`.
    pub fn new(config: &IpFrag) -> Reassembler {
        Reassembler {
            config: config.clone(),
            timeout: SimTime::from_secs_f64(config.ipfrag_time),
            queues: FxHashMap::default(),
            lru: BTreeMap::new(),
            next_lru: 0,
            mem: 0,
            peer_rid: 0,
            stats: ReasmStats::default(),
        }
    }

    /// The datagram `key` will not be reassembled (the receiver counts each datagram once).
    fn report_lost(key: Key, born: SimTime, cause: FragLoss, out: &mut Vec<Output>) {
        out.push(Output::Lost(Packet::data(key.0, key.1, 0, born), cause));
    }

    /// Destroys a queue (`inet_frag_kill` + the memory it held).
    fn destroy(&mut self, key: Key) -> Queue {
        let q = self.queues.remove(&key).expect("a live queue");
        self.lru.remove(&q.lru);
        self.mem -= q.held + u64::from(self.config.queue_bytes);
        q
    }

    /// The evictor of kernels before 4.17 (`inet_frag_evictor`): over `high_thresh`,
    /// destroy the least recently used queues until memory is under `low_thresh`.
    fn evict(&mut self, low: u64, out: &mut Vec<Output>) {
        if self.mem <= self.config.ipfrag_high_thresh {
            return;
        }
        while self.mem > low {
            let Some((_, &key)) = self.lru.iter().next() else { break };
            let q = self.destroy(key);
            self.stats.evicted += 1;
            Self::report_lost(key, q.born, FragLoss::HighThresh, out);
        }
    }

    fn touch(&mut self, key: Key) {
        let q = self.queues.get_mut(&key).expect("a live queue");
        self.lru.remove(&q.lru);
        q.lru = self.next_lru;
        self.lru.insert(self.next_lru, key);
        self.next_lru += 1;
    }

    fn arm(key: Key, at: SimTime, out: &mut Vec<Output>) {
        out.push(Output::Timer { at, token: u64::from(key.0) << 32 | u64::from(key.1) });
    }
}

impl Endpoint for Reassembler {
    fn open(&mut self, _now: SimTime, _flow: u32, _bytes: u64, _out: &mut Vec<Output>) {}

    fn on_packet(&mut self, now: SimTime, p: Packet, out: &mut Vec<Output>) {
        if !p.is_fragment() {
            out.push(Output::Deliver(p));
            return;
        }
        self.stats.fragments += 1;
        let key = (p.flow, p.seq);
        match self.config.ipfrag_low_thresh {
            // ip_defrag (3.x): "Start by cleaning up the memory."
            Some(low) => self.evict(low, out),
            // inet_frag_find (4.17+): no queue at all over the threshold.
            None if self.mem > self.config.ipfrag_high_thresh => {
                self.stats.refused += 1;
                Self::report_lost(key, p.born, FragLoss::HighThresh, out);
                return;
            }
            None => {}
        }
        if !self.queues.contains_key(&key) {
            // inet_frag_alloc charges the queue; inet_frag_intern arms its timer once.
            self.mem += u64::from(self.config.queue_bytes);
            let q = Queue {
                offsets: Vec::new(),
                meat: 0,
                len: 0,
                first_in: false,
                last_in: false,
                rid: 0,
                held: 0,
                expires: now + self.timeout,
                lru: 0,
                born: p.born,
            };
            self.queues.insert(key, q);
            Self::arm(key, now + self.timeout, out);
        }
        let max_dist = self.config.ipfrag_max_dist;
        let q = self.queues.get_mut(&key).expect("just made");
        if max_dist > 0 {
            // ip_frag_too_far: the source's counter moved on by more than max_dist
            // since this queue's previous fragment.
            let start = q.rid;
            self.peer_rid = self.peer_rid.wrapping_add(1);
            q.rid = self.peer_rid;
            if !q.offsets.is_empty() && self.peer_rid.wrapping_sub(start) > max_dist {
                // ip_frag_reinit: free what it holds, start again, re-arm the timer.
                self.mem -= q.held;
                let (rid, lru, born) = (q.rid, q.lru, q.born);
                *q = Queue {
                    offsets: Vec::new(),
                    meat: 0,
                    len: 0,
                    first_in: false,
                    last_in: false,
                    rid,
                    held: 0,
                    expires: now + self.timeout,
                    lru,
                    born,
                };
                Self::arm(key, now + self.timeout, out);
                self.stats.max_dist_resets += 1;
                Self::report_lost(key, born, FragLoss::MaxDist, out);
            }
        }
        let q = self.queues.get_mut(&key).expect("live");
        let offset = p.frag_offset();
        if q.offsets.contains(&offset) {
            return; // an exact duplicate (IPFRAG_DUP)
        }
        let end = offset + p.bytes;
        // ip_frag_queue: the last fragment fixes the length; others may only extend it.
        if !p.more_fragments() {
            q.last_in = true;
            q.len = end;
        } else if end > q.len {
            q.len = end;
        }
        q.first_in |= offset == 0;
        q.offsets.push(offset);
        q.meat += p.bytes;
        q.held += u64::from(self.config.truesize_bytes);
        self.mem += u64::from(self.config.truesize_bytes);
        self.stats.mem_peak_bytes = self.stats.mem_peak_bytes.max(self.mem);
        if q.first_in && q.last_in && q.meat == q.len {
            // ip_frag_reasm: the datagram goes up whole, the queue's memory is freed.
            let q = self.destroy(key);
            self.stats.oks += 1;
            out.push(Output::Deliver(Packet { bytes: q.len - UDP_HEADER_BYTES, ack: 0, ..p }));
            return;
        }
        self.touch(key);
    }

    fn on_timer(&mut self, now: SimTime, token: u64, out: &mut Vec<Output>) {
        let key = ((token >> 32) as u32, token as u32);
        // A completed, evicted or re-armed queue's earlier timer finds nothing to do.
        if self.queues.get(&key).is_some_and(|q| q.expires == now) {
            let q = self.destroy(key);
            self.stats.timeouts += 1;
            Self::report_lost(key, q.born, FragLoss::Timeout, out);
        }
    }

    fn poll_transmit(&mut self, _now: SimTime) -> Option<Packet> {
        None
    }

    /// Idle once no queue waits: an incomplete queue keeps the run going until it expires.
    fn is_idle(&self) -> bool {
        self.queues.is_empty()
    }

    fn report(&mut self, r: &mut Report) {
        r.application_counts_datagrams();
        let lost = |cause| r.datagrams_lost(cause);
        let s = &self.stats;
        let counts = [
            lost(FragLoss::Dropped),
            lost(FragLoss::MaxDist),
            lost(FragLoss::HighThresh),
            lost(FragLoss::Timeout),
            s.fragments,
            s.oks,
            s.timeouts,
            s.max_dist_resets,
            s.evicted,
            s.refused,
            s.mem_peak_bytes,
        ];
        // In `FIGURES`' order.
        for (figure, n) in FIGURES.iter().zip(counts) {
            r.add(figure.name, n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn scenario(extra: serde_json::Value) -> Scenario {
        let mut doc = serde_json::json!({
            "workload": {"requests": 1, "file_size": {"kind": "fixed", "bytes": 100_000}},
            "sender": {"kind": "cbr", "rate_mbps": 100.0, "chunk_bytes": 3000},
            "network": {"protocol": "udp"},
            "bond": {"mode": "balance-rr"},
            "links": [{"count": 2, "rate_mbps": 100.0}],
        });
        for (k, v) in extra.as_object().unwrap() {
            doc[k] = v.clone();
        }
        Scenario::from_json(&doc.to_string()).unwrap()
    }

    /// The fragments of datagram `seq` (3000 payload bytes: 3008 of IP payload).
    fn fragments(seq: u32) -> Vec<Packet> {
        let f = Fragmenter::for_scenario(&scenario(serde_json::json!({}))).unwrap();
        f.cut(Packet::data(0, seq, 3000, SimTime::ZERO)).collect()
    }

    /// Feeds `packets` at 1 ms intervals; returns the outputs.
    fn feed(r: &mut Reassembler, packets: &[Packet]) -> Vec<Output> {
        let mut out = Vec::new();
        for (i, p) in packets.iter().enumerate() {
            r.on_packet(SimTime(i as u64 * MS), *p, &mut out);
        }
        out
    }

    fn delivered(out: &[Output]) -> Vec<(u32, u32)> {
        out.iter().filter_map(|o| if let Output::Deliver(p) = o { Some((p.seq, p.bytes)) } else { None }).collect()
    }

    fn lost(out: &[Output]) -> Vec<(u32, FragLoss)> {
        out.iter().filter_map(|o| if let Output::Lost(p, c) = o { Some((p.seq, *c)) } else { None }).collect()
    }

    #[test]
    fn a_datagram_over_the_mtu_is_cut_as_ip_do_fragment_cuts_it() {
        // 3008 bytes of IP payload, 1480 per fragment on a 1500-byte MTU: 1480 + 1480 + 48.
        let f = fragments(0);
        let pieces: Vec<(u32, u32, bool)> = f.iter().map(|p| (p.frag_offset(), p.bytes, p.more_fragments())).collect();
        assert_eq!(pieces, [(0, 1480, true), (1480, 1480, true), (2960, 48, false)]);
        assert!(f.iter().all(|p| p.is_fragment() && p.l3_bytes(28) <= 1500));
        assert_eq!(f[0].l3_bytes(28), 1500, "IP header + 1480 (the UDP header travels in the first)");
        // 1472 payload bytes fit a 1500-byte MTU whole; 1473 do not.
        let fr = Fragmenter::for_scenario(&scenario(serde_json::json!({}))).unwrap();
        let whole: Vec<Packet> = fr.cut(Packet::data(0, 0, 1472, SimTime::ZERO)).collect();
        assert_eq!((whole.len(), whole[0].is_fragment()), (1, false));
        let cut: Vec<u32> = fr.cut(Packet::data(0, 0, 1473, SimTime::ZERO)).map(|p| p.bytes).collect();
        assert_eq!(cut, [1480, 1]);
    }

    #[test]
    fn fragments_in_any_order_reassemble_into_the_datagram() {
        let f = fragments(0);
        for order in [[0, 1, 2], [2, 1, 0], [1, 2, 0], [2, 0, 1]] {
            let mut r = Reassembler::new(&IpFrag::default());
            let out = feed(&mut r, &order.map(|i| f[i]));
            assert_eq!(delivered(&out), [(0, 3000)], "order {order:?}");
            assert!(r.is_idle(), "the queue is gone once the datagram is whole");
            assert_eq!(r.mem, 0, "its memory is freed");
            assert_eq!(r.stats.oks, 1);
        }
    }

    #[test]
    fn a_missing_fragment_loses_the_datagram_when_its_queue_expires() {
        let f = fragments(0);
        let mut r = Reassembler::new(&IpFrag::default());
        let mut out = feed(&mut r, &[f[0], f[2]]);
        assert!(delivered(&out).is_empty());
        assert!(!r.is_idle(), "an incomplete queue waits");
        let timer =
            out.iter().find_map(|o| if let Output::Timer { at, token } = o { Some((*at, *token)) } else { None });
        let (at, token) = timer.unwrap();
        assert_eq!(at, SimTime::from_secs_f64(30.0), "ipfrag_time after the queue was made, not extended");
        out.clear();
        r.on_timer(at, token, &mut out);
        assert_eq!(lost(&out), [(0, FragLoss::Timeout)]);
        assert_eq!((r.stats.timeouts, r.mem), (1, 0));
        assert!(r.is_idle());
    }

    #[test]
    fn more_than_max_dist_fragments_between_two_of_a_datagram_reset_its_queue() {
        // Datagram 0's first fragment, then `gap` other whole datagrams' fragments, then its others.
        let run = |gap: u32| {
            let f0 = fragments(0);
            let mut packets = vec![f0[0]];
            for seq in 1..=gap / 3 {
                packets.extend(fragments(seq));
            }
            packets.extend(&f0[1..]);
            let mut r = Reassembler::new(&IpFrag::default());
            let out = feed(&mut r, &packets);
            (delivered(&out).iter().any(|&(s, _)| s == 0), lost(&out), r.stats.max_dist_resets)
        };
        // 63 fragments between: the counter moves by 64 = max_dist, not more: reassembled.
        assert_eq!(run(63), (true, vec![], 0));
        // 66 between: more than 64: the queue starts again and the datagram is lost.
        assert_eq!(run(66), (false, vec![(0, FragLoss::MaxDist)], 1));
        // ipfrag_max_dist = 0 disables the check.
        let f0 = fragments(0);
        let mut packets = vec![f0[0]];
        (1..=30).for_each(|s| packets.extend(fragments(s)));
        packets.extend(&f0[1..]);
        let mut r = Reassembler::new(&IpFrag { ipfrag_max_dist: 0, ..IpFrag::default() });
        assert!(delivered(&feed(&mut r, &packets)).iter().any(|&(s, _)| s == 0));
    }

    /// `n` datagrams each missing its last fragment (so their queues stay), then one whole datagram.
    fn fill_then_whole(config: &IpFrag, n: u32) -> (Reassembler, Vec<Output>) {
        let mut packets = Vec::new();
        for seq in 0..n {
            packets.extend(&fragments(seq)[..2]);
        }
        packets.extend(fragments(n));
        let mut r = Reassembler::new(&IpFrag { ipfrag_max_dist: 0, ..config.clone() });
        let out = feed(&mut r, &packets);
        (r, out)
    }

    /// Memory an incomplete queue of two fragments holds: 2 truesizes and the queue.
    const PER_QUEUE: u64 = 2 * 2944 + 200;

    #[test]
    fn over_high_thresh_current_kernels_refuse_every_fragment() {
        // The check is `mem > high_thresh` before each fragment (inet_frag_find). With room for
        // exactly 10 incomplete queues, after 9 a whole datagram's three fragments each find
        // memory at or under the threshold (the last one finds exactly 10 × PER_QUEUE).
        let config = IpFrag { ipfrag_high_thresh: 10 * PER_QUEUE, ..IpFrag::default() };
        let (r, out) = fill_then_whole(&config, 9);
        assert_eq!(delivered(&out), [(9, 3000)]);
        assert_eq!(r.stats.refused, 0);
        // After 10 its first fragment still passes (memory equals the threshold), the other two are refused.
        let (r, out) = fill_then_whole(&config, 10);
        assert!(delivered(&out).is_empty(), "over the threshold even a complete datagram is refused");
        // Each refused fragment reports its datagram (the receiver counts a datagram once).
        assert_eq!(lost(&out), [(10, FragLoss::HighThresh); 2]);
        assert_eq!((r.stats.refused, r.stats.evicted), (2, 0));
        assert_eq!(r.stats.mem_peak_bytes, 10 * PER_QUEUE + 200 + 2944);
    }

    #[test]
    fn over_high_thresh_older_kernels_evict_the_oldest_queues_down_to_low_thresh() {
        let low = 30_000;
        let config = IpFrag { ipfrag_high_thresh: 10 * PER_QUEUE, ipfrag_low_thresh: Some(low), ..IpFrag::default() };
        // The 11th queue's first fragment brings memory over the threshold; its second runs
        // the evictor, which frees the least recently used queues (0, 1, ...) until memory is
        // at most low_thresh.
        let over = 10 * PER_QUEUE + 200 + 2944;
        let evicted = (over - low).div_ceil(PER_QUEUE) as u32;
        assert_eq!(evicted, 6);
        let (r, out) = fill_then_whole(&config, 11);
        assert_eq!(delivered(&out), [(11, 3000)], "the evictor made room: the new datagram passes");
        let expect: Vec<(u32, FragLoss)> = (0..evicted).map(|s| (s, FragLoss::HighThresh)).collect();
        assert_eq!(lost(&out), expect);
        assert_eq!((r.stats.evicted, r.stats.refused), (u64::from(evicted), 0));
        assert_eq!(r.queues.len(), 11 - evicted as usize, "the newer incomplete queues stay");
    }
}
