//! Time series a run records for reports, only when the scenario's `[trace]` asks:
//!
//! * `link_trace`: per link and time bucket of `trace.link_ms`, the bytes the link put on the
//!   wire, its utilisation (the share of the bucket it spent sending, each frame spread over its
//!   transmit time), its transmit queue (at the bucket's end and the longest within it),
//!   its carrier and the bond monitor's verdict. Buckets are recorded as time passes (no event is
//!   added: the world samples before it runs the first event past a bucket's end, when the state
//!   is still what events up to that end left) and decimated: when a link holds `trace.link_buckets`
//!   buckets, adjacent pairs merge and the width doubles, so memory stays bounded however long
//!   the run, the whole run covered at a coarser grain (as RRDtool's consolidation does).
//! * `link_events`: every change of a link's carrier and of the monitor's verdict, exactly when
//!   it happened (at most [`MAX_EVENT_ROWS`]; `trace_truncated` past that).
//! * `packet_trace`: the schedule of the first `trace.packets` packets the bond was handed, by
//!   bond order: the link it picked, when it was handed to the bond, when the link finished
//!   sending it, when its first copy reached the clients' wire and whether it arrived there out
//!   of order (the thesis's rule, Gupta 2010 §6.1, Figures 6 and 8).
//!
//! The world calls thin hooks ([`Tracer::sample`], [`Tracer::queue`], [`Tracer::sent`],
//! [`Tracer::left`], [`Tracer::arrived`], [`Tracer::link_event`]); nothing here changes what the
//! run does, so a traced run reports the same figures as an untraced one.

use serde::Serialize;

use crate::bond::LinkView;
use crate::link::Link;
use crate::packet::Packet;
use crate::scenario;
use crate::time::SimTime;

/// Rows `link_events` keeps at most (a link failing at random with a tiny `mtbf_s` could change
/// state without end); recording stops there and the summary says `trace_truncated`.
pub const MAX_EVENT_ROWS: usize = 1_000_000;

/// One link's figures in one time bucket.
#[derive(Debug, Clone, Copy, Default)]
struct Bucket {
    wire_bytes: u64,
    /// Bytes carried within the bucket, each frame's spread over its transmit time.
    carried_bytes: f64,
    queue_pkts: u32,
    queue_max_pkts: u32,
    carrier: bool,
    up: bool,
}

impl Bucket {
    /// The bucket covering `self` then `later`: bytes add up, the state is the later one's.
    fn merged(self, later: Bucket) -> Bucket {
        Bucket {
            wire_bytes: self.wire_bytes + later.wire_bytes,
            carried_bytes: self.carried_bytes + later.carried_bytes,
            queue_max_pkts: self.queue_max_pkts.max(later.queue_max_pkts),
            ..later
        }
    }
}

/// Per link and time bucket (`trace.link_ms`, decimated), one column per field.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LinkTrace {
    /// End of the bucket, seconds.
    pub t_s: Vec<f64>,
    /// Width of the bucket, seconds (the last one may be shorter: the run ended within it).
    pub width_s: Vec<f64>,
    /// The link.
    pub link: Vec<u32>,
    /// Bytes the link finished putting on the wire within the bucket, frame overhead
    /// included (paced links: payload), as in `links.wire_bytes`.
    pub wire_bytes: Vec<u64>,
    /// The share of the bucket the link spent sending: the bits it carried within the bucket,
    /// each frame's spread evenly over its transmit time (a paced link's packet over the period
    /// it used), over the link's nominal capacity times the bucket's width. At most 1 however
    /// narrow the bucket, unless the link sends faster than its nominal capacity (a `slowdown`
    /// below 1, or a paced link's `trace_intervals_s` shorter than its period).
    pub utilisation: Vec<f64>,
    /// Transmit queue at the bucket's end, packets.
    pub queue_pkts: Vec<u32>,
    /// Longest transmit queue within the bucket, packets.
    pub queue_max_pkts: Vec<u32>,
    /// Whether the link had its carrier at the bucket's end.
    pub carrier: Vec<bool>,
    /// Whether the bond's monitor held the link up at the bucket's end.
    pub up: Vec<bool>,
}

/// Every change of a link's carrier or of the monitor's verdict, one column per field.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LinkEvents {
    /// When, seconds.
    pub t_s: Vec<f64>,
    /// The link.
    pub link: Vec<u32>,
    /// Its carrier after the change.
    pub carrier: Vec<bool>,
    /// The monitor's verdict after the change.
    pub up: Vec<bool>,
}

/// The first `trace.packets` packets in the order the bond was handed them, one column per field.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PacketTrace {
    /// Position in the bond's order, from 0 (retransmissions are packets of their own).
    pub packet: Vec<u64>,
    /// The flow (request).
    pub flow: Vec<u32>,
    /// Its position in the flow.
    pub seq: Vec<u32>,
    /// A TCP retransmission.
    pub retransmit: Vec<bool>,
    /// The data sender's TCP handshake segment (a download's SYN-ACK, an upload's SYN), no data.
    pub handshake: Vec<bool>,
    /// The link the bond picked (null: every link, as broadcast does, or none).
    pub link: Vec<Option<u32>>,
    /// When the bond was handed it, seconds.
    pub sent_s: Vec<f64>,
    /// When its (first) link finished sending it, seconds (null: dropped before).
    pub left_s: Vec<Option<f64>>,
    /// When its first copy reached the clients' wire, seconds (null: lost, or still on its way).
    pub arrived_s: Vec<Option<f64>>,
    /// Whether it reached the clients' wire out of order (RFC 4737's rule, the thesis's).
    pub out_of_order: Vec<bool>,
}

crate::columnar!(LinkTrace: t_s, width_s, link, wire_bytes, utilisation, queue_pkts, queue_max_pkts, carrier, up);
crate::columnar!(LinkEvents: t_s, link, carrier, up);
crate::columnar!(PacketTrace: packet, flow, seq, retransmit, handshake, link, sent_s, left_s, arrived_s, out_of_order);

/// What a trace hands the result.
#[derive(Debug, Clone, Default)]
pub struct TraceTables {
    /// Link buckets (`trace.link_ms`).
    pub link_trace: Option<LinkTrace>,
    /// Carrier and monitor changes (with the link trace).
    pub link_events: Option<LinkEvents>,
    /// The first packets' schedule (`trace.packets`).
    pub packet_trace: Option<PacketTrace>,
    /// Whether `link_events` stopped at [`MAX_EVENT_ROWS`].
    pub truncated: bool,
}

/// The recorder of one run.
#[derive(Debug)]
pub struct Tracer {
    /// Bucket width now (doubles at each decimation); `None`: no link trace.
    width: Option<SimTime>,
    /// End of the bucket being filled.
    next: SimTime,
    max_buckets: usize,
    /// Completed buckets, bucket-major (`buckets[k * links + link]`).
    buckets: Vec<Bucket>,
    links: usize,
    /// Per link: wire bytes at the last bucket's end, longest queue in the bucket being filled.
    wire_before: Vec<u64>,
    carried_before: Vec<f64>,
    queue_max: Vec<u32>,
    events: LinkEvents,
    truncated: bool,
    packets: PacketTrace,
    packet_limit: u64,
}

fn secs(t: SimTime) -> f64 {
    t.as_secs_f64()
}

impl Tracer {
    /// A recorder for `links` links, or `None` when the scenario asks for nothing.
    pub fn new(spec: &scenario::Trace, links: usize) -> Option<Tracer> {
        if spec.link_ms.is_none() && spec.packets == 0 {
            return None;
        }
        let width = spec.link_ms.map(SimTime::from_millis_f64);
        Some(Tracer {
            width,
            next: width.unwrap_or(SimTime(u64::MAX)),
            max_buckets: spec.link_buckets as usize,
            buckets: Vec::new(),
            links,
            wire_before: vec![0; links],
            carried_before: vec![0.0; links],
            queue_max: vec![0; links],
            events: LinkEvents::default(),
            truncated: false,
            packets: PacketTrace::default(),
            packet_limit: u64::from(spec.packets),
        })
    }

    /// The end of the bucket being filled: the world calls [`Tracer::sample`] before it runs the
    /// first event past it.
    #[inline]
    pub fn next_sample(&self) -> SimTime {
        self.next
    }

    /// Closes every bucket that ended before `now`: buckets are `(k w, (k + 1) w]`, so the state
    /// is still what the bucket's end left (no event ran in between).
    pub fn sample(&mut self, now: SimTime, links: &[Link], views: &[LinkView]) {
        let Some(mut width) = self.width else { return };
        while self.next < now {
            self.close(self.next, links, views);
            if self.buckets.len() == self.max_buckets * self.links {
                self.decimate();
                width = SimTime(width.0 * 2);
                self.width = Some(width);
            }
            self.next += width;
        }
    }

    /// Closes the bucket that ends at `end` (no event ran since).
    fn close(&mut self, end: SimTime, links: &[Link], views: &[LinkView]) {
        for (id, (link, view)) in links.iter().zip(views).enumerate() {
            let wire = link.wire_bytes();
            let carried = link.carried_bytes_at(end);
            self.buckets.push(Bucket {
                wire_bytes: wire - self.wire_before[id],
                carried_bytes: carried - self.carried_before[id],
                queue_pkts: view.queue_len_pkts,
                queue_max_pkts: self.queue_max[id].max(view.queue_len_pkts),
                carrier: link.carrier(),
                up: view.up,
            });
            self.wire_before[id] = wire;
            self.carried_before[id] = carried;
            self.queue_max[id] = view.queue_len_pkts;
        }
    }

    /// Merges adjacent buckets in pairs: half as many, twice as wide, aligned as before
    /// (an even count of buckets, each `[k w, (k + 1) w)`).
    fn decimate(&mut self) {
        let n = self.links;
        let pairs = self.buckets.len() / (2 * n);
        for k in 0..pairs {
            for l in 0..n {
                self.buckets[k * n + l] = self.buckets[2 * k * n + l].merged(self.buckets[(2 * k + 1) * n + l]);
            }
        }
        self.buckets.truncate(pairs * n);
    }

    /// Link `id`'s queue changed to `len` packets.
    #[inline]
    pub fn queue(&mut self, id: usize, len: u32) {
        if self.width.is_some() {
            self.queue_max[id] = self.queue_max[id].max(len);
        }
    }

    /// A link's carrier or the monitor's verdict changed at `now`.
    pub fn link_event(&mut self, now: SimTime, id: usize, carrier: bool, up: bool) {
        if self.width.is_none() {
            return;
        }
        if self.events.t_s.len() >= MAX_EVENT_ROWS {
            self.truncated = true;
            return;
        }
        let e = &mut self.events;
        e.t_s.push(secs(now));
        e.link.push(id as u32);
        e.carrier.push(carrier);
        e.up.push(up);
    }

    /// The bond was handed `packet` at `now` and put it on `link` (`None`: every link, or none).
    #[inline]
    pub fn sent(&mut self, now: SimTime, packet: &Packet, link: Option<usize>) {
        if packet.bond_seq >= self.packet_limit {
            return;
        }
        let p = &mut self.packets;
        p.packet.push(packet.bond_seq);
        p.flow.push(packet.flow);
        p.seq.push(packet.seq);
        p.retransmit.push(packet.retransmit());
        p.handshake.push(packet.kind == crate::packet::Kind::Handshake);
        p.link.push(link.map(|l| l as u32));
        p.sent_s.push(secs(now));
        p.left_s.push(None);
        p.arrived_s.push(None);
        p.out_of_order.push(false);
    }

    /// A link finished sending `packet` at `now` (its first copy to do so counts).
    #[inline]
    pub fn left(&mut self, now: SimTime, packet: &Packet) {
        if let Some(left) = self.packets.left_s.get_mut(packet.bond_seq as usize) {
            left.get_or_insert(secs(now));
        }
    }

    /// The first copy of `packet` reached the clients' wire at `now`, out of order or not.
    #[inline]
    pub fn arrived(&mut self, now: SimTime, packet: &Packet, out_of_order: bool) {
        let i = packet.bond_seq as usize;
        if i < self.packets.arrived_s.len() {
            self.packets.arrived_s[i] = Some(secs(now));
            self.packets.out_of_order[i] = out_of_order;
        }
    }

    /// The tables, the last bucket closed at the run's end `end`.
    pub fn finish(mut self, end: SimTime, links: &[Link], views: &[LinkView]) -> TraceTables {
        let link_trace = self.width.map(|width| {
            let full = self.buckets.len() / self.links.max(1);
            // The bucket the run ended in, if it had begun.
            let begun = SimTime(self.next.0 - width.0);
            let last = (end > begun).then(|| {
                self.close(end, links, views);
                end
            });
            let mut table = LinkTrace::default();
            let ends = (1..=full as u64).map(|k| SimTime(width.0 * k)).chain(last);
            for (k, (t_end, row)) in ends.zip(self.buckets.chunks(self.links)).enumerate() {
                let start = SimTime(width.0 * k as u64);
                let w = secs(t_end) - secs(start);
                for (id, b) in row.iter().enumerate() {
                    let capacity = links[id].capacity_bps();
                    table.t_s.push(secs(t_end));
                    table.width_s.push(w);
                    table.link.push(id as u32);
                    table.wire_bytes.push(b.wire_bytes);
                    table.utilisation.push(if capacity > 0.0 && w > 0.0 {
                        b.carried_bytes * 8.0 / (capacity * w)
                    } else {
                        0.0
                    });
                    table.queue_pkts.push(b.queue_pkts);
                    table.queue_max_pkts.push(b.queue_max_pkts);
                    table.carrier.push(b.carrier);
                    table.up.push(b.up);
                }
            }
            table
        });
        let with_links = link_trace.is_some();
        TraceTables {
            link_trace,
            link_events: with_links.then_some(self.events),
            packet_trace: (self.packet_limit > 0).then_some(self.packets),
            truncated: self.truncated,
        }
    }
}
