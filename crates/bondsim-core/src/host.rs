//! A receiving host's CPU and receive queue (`[host]`, issue 38), sans-IO: frames in, the time the
//! CPU has handled each out. The rules and their sources are on [`crate::scenario::Host`].
//!
//! One CPU handles the host's frames one at a time, in arrival order: a frame waits in the receive
//! queue (the backlog of the `netif_rx` path, or a NAPI NIC's ring), is dropped when the queue is
//! full, and reaches the stack when its CPU time has passed. What the host sends costs the CPU too:
//! a send while a frame is being handled delays the next one (the CPU's `debt`), a send while it is
//! idle keeps it busy from now.
//!
//! With GRO (`host.gro`, a NAPI ring only) the frames a poll takes are merged per flow before the
//! stack sees them: consecutive full segments with the same ACK and timestamps make one skb, which
//! costs the stack (`rx_skb_us`) once and TCP decides one ACK for ([`Gro`]).

use std::collections::VecDeque;

use crate::packet::{Kind, Packet};
use crate::report::{count, real, Declared, Report};
use crate::scenario;
use crate::time::SimTime;
use crate::transport::tcp::TsTicks;

/// The figures the machines report: the clients' (`host_*`, only with `[host]`) and the server's
/// (`server_host_*`, only with `[server_host]`); `null` otherwise. The clients' counts add up over
/// their machines; the queue and the CPU's busy share are the busiest machine's.
pub const FIGURES: &[Declared] = &[
    count("host_rx_frames"),
    count("host_rx_skbs"),
    count("host_drops"),
    count("host_queue_max"),
    real("host_cpu_busy_max"),
    count("server_host_rx_frames"),
    count("server_host_rx_skbs"),
    count("server_host_drops"),
    count("server_host_queue_max"),
    real("server_host_cpu_busy_max"),
];

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

/// What the CPU works on.
#[derive(Debug, Clone)]
enum Work {
    /// A frame from the receive queue: the driver's (and GRO's) part.
    Frame(Packet),
    /// An skb going up the stack.
    Skb(Vec<Packet>),
    /// One write of the application of this flow (process context: after the softirq's frames).
    Write(u32),
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

/// A host's counts ([`RxHost::counts`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HostCounts {
    /// Frames the CPU handled.
    pub frames: u64,
    /// Skbs that went up the stack (a frame each without GRO).
    pub skbs: u64,
    /// Frames the full receive queue dropped.
    pub drops: u64,
    /// The most frames that waited at once.
    pub queue_max: u64,
}

/// One receiving host.
#[derive(Debug, Clone)]
pub struct RxHost {
    per_packet_ns: f64,
    per_byte_ns: f64,
    tx_ns: u64,
    /// The stack's time per skb (a frame, or a GRO skb of several).
    skb_ns: u64,
    /// The least time between two of the NIC's receive interrupts (`rx-usecs`), so between the starts
    /// of two polls.
    coalesce: SimTime,
    /// When the last poll started, and whether it is still going (frames left in its queue).
    last_irq: SimTime,
    in_poll: bool,
    limit: Limit,
    /// GRO over each NAPI poll, when on.
    gro: Option<Gro>,
    /// Skbs flushed to the stack, waiting for the CPU (only while `skb_ns` > 0).
    ready: VecDeque<Vec<Packet>>,
    /// The backlog's `input_pkt_queue`, or the ring.
    input: VecDeque<Packet>,
    /// The backlog's `process_queue` (empty on a ring).
    process: VecDeque<Packet>,
    /// What the CPU is handling.
    serving: Option<Work>,
    /// When the CPU is free of what it sent (while idle).
    free_at: SimTime,
    /// CPU time owed to sends made while a frame was being handled.
    debt_ns: u64,
    /// CPU time per application write (`server_host.write_us`).
    write_ns: u64,
    /// The flows whose application waits to write, a write each, in the order they asked.
    writers: VecDeque<u32>,
    /// The write just handled, for the world to hand to the sender ([`RxHost::take_written`]).
    written: Option<u32>,
    frames: u64,
    skbs: u64,
    drops: u64,
    busy_ns: u64,
    queue_max: usize,
}

impl RxHost {
    /// A host as `[host]` describes it.
    /// `ts`: the TCP senders' timestamp clock (GRO merges only segments of one TSval); `None` for a
    /// transport that is not TCP, which GRO leaves alone.
    pub fn new(host: &scenario::Host, ts: Option<TsTicks>) -> RxHost {
        let limit = match host.rx_ring {
            Some(ring) => Limit::Ring(ring as usize),
            None => Limit::Backlog(host.netdev_max_backlog as usize),
        };
        RxHost {
            per_packet_ns: host.rx_packet_us * 1e3,
            per_byte_ns: host.rx_byte_ns,
            tx_ns: (host.tx_packet_us * 1e3).round() as u64,
            skb_ns: (host.rx_skb_us * 1e3).round() as u64,
            coalesce: SimTime((host.rx_coalesce_us * 1e3).round() as u64),
            last_irq: SimTime::ZERO,
            in_poll: false,
            limit,
            gro: ts.filter(|_| host.gro).map(|ts| Gro::new(host.napi_weight, ts)),
            ready: VecDeque::new(),
            input: VecDeque::new(),
            process: VecDeque::new(),
            serving: None,
            free_at: SimTime::ZERO,
            debt_ns: 0,
            write_ns: (host.write_us * 1e3).round() as u64,
            writers: VecDeque::new(),
            written: None,
            frames: 0,
            skbs: 0,
            drops: 0,
            busy_ns: 0,
            queue_max: 0,
        }
    }

    /// A frame arrives at `now`.
    pub fn arrive(&mut self, now: SimTime, packet: Packet) -> Admit {
        let full = match self.limit {
            Limit::Backlog(max) => self.input.len() > max,
            Limit::Ring(ring) => self.input.len() + usize::from(matches!(self.serving, Some(Work::Frame(_)))) >= ring,
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

    /// The CPU has handled its work (at the time [`RxHost::arrive`] or [`RxHost::start`] gave): the
    /// skbs that go up the stack now, in order, into `up` (none while GRO holds a frame, or while
    /// flushed skbs wait for the CPU). Call [`RxHost::start`] after the stack has run, so that what
    /// it sent delays the next work.
    pub fn complete(&mut self, now: SimTime, up: &mut Vec<Vec<Packet>>) {
        let done = self.serving.take().expect("a completion for work being handled");
        self.free_at = now + SimTime(std::mem::take(&mut self.debt_ns));
        let frame = match done {
            Work::Skb(skb) => {
                self.skbs += 1;
                return up.push(skb);
            }
            Work::Write(flow) => {
                self.written = Some(flow);
                return;
            }
            Work::Frame(frame) => frame,
        };
        self.frames += 1;
        let poll_over = self.input.is_empty() && self.process.is_empty();
        self.in_poll = !poll_over;
        let flushed = match self.gro.as_mut() {
            Some(gro) => gro.receive(frame, poll_over),
            None => vec![vec![frame]],
        };
        if self.skb_ns == 0 || self.gro.is_none() {
            // (Without GRO the frame's time included the stack's.)
            self.skbs += flushed.len() as u64;
            up.extend(flushed);
        } else {
            self.ready.extend(flushed);
        }
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

    /// The application of `flow` would write once: its write waits for the CPU. The time it is
    /// handled, if the CPU took it at once.
    pub fn wants_write(&mut self, now: SimTime, flow: u32) -> Option<SimTime> {
        self.writers.push_back(flow);
        self.start(now)
    }

    /// The flow whose write the CPU has just handled ([`RxHost::complete`]), once.
    pub fn take_written(&mut self) -> Option<u32> {
        self.written.take()
    }

    /// If the CPU is idle and work waits, it takes the next: the time it is handled. The receive
    /// path's work (a softirq) goes before the application's writes (a process); a write also goes
    /// while a new poll waits for its interrupt (`rx-usecs`), and once begun runs to its end.
    pub fn start(&mut self, now: SimTime) -> Option<SimTime> {
        if self.serving.is_some() {
            return None;
        }
        let mut begin = self.free_at.max(now);
        if !self.writers.is_empty() && self.ready.is_empty() {
            let frames_wait = !(self.input.is_empty() && self.process.is_empty());
            let irq_due = self.in_poll || begin >= self.last_irq + self.coalesce;
            if !(frames_wait && irq_due) {
                let flow = self.writers.pop_front().expect("a writer waits");
                self.busy_ns += self.write_ns;
                self.serving = Some(Work::Write(flow));
                return Some(begin + SimTime(self.write_ns));
            }
        }
        let (work, cost) = match self.ready.pop_front() {
            Some(skb) => (Work::Skb(skb), self.skb_ns),
            None => {
                let frame = self.next_frame()?;
                if !self.in_poll {
                    // A new poll: the NIC's interrupt comes no sooner than `rx-usecs` after the last.
                    begin = begin.max(self.last_irq + self.coalesce);
                    self.last_irq = begin;
                    self.in_poll = true;
                }
                let cost = self.per_packet_ns + self.per_byte_ns * f64::from(frame.bytes);
                // Without GRO every frame is an skb of its own: the stack's time comes with it.
                let skb = if self.gro.is_none() { self.skb_ns } else { 0 };
                (Work::Frame(frame), cost.round() as u64 + skb)
            }
        };
        self.busy_ns += cost;
        self.serving = Some(work);
        Some(begin + SimTime(cost))
    }

    /// The next frame from the receive queue (the backlog's process queue, refilled from its input
    /// queue when empty, or the ring).
    fn next_frame(&mut self) -> Option<Packet> {
        if self.process.is_empty() && matches!(self.limit, Limit::Backlog(_)) {
            std::mem::swap(&mut self.process, &mut self.input);
        }
        if self.process.is_empty() {
            self.input.pop_front()
        } else {
            self.process.pop_front()
        }
    }

    /// What the host has counted: frames handled and dropped, skbs up the stack, the most frames that
    /// waited at once.
    pub fn counts(&self) -> HostCounts {
        HostCounts { frames: self.frames, skbs: self.skbs, drops: self.drops, queue_max: self.queue_max as u64 }
    }

    /// Reports the figures ([`FIGURES`]) of `hosts` over a run of `duration_s`, under names that
    /// start with `prefix` (`host_` for the clients' machines, `server_host_` for the server's).
    pub fn report(hosts: &[RxHost], prefix: &str, duration_s: f64, r: &mut Report) {
        if hosts.is_empty() {
            return;
        }
        let name = |figure: &str| format!("{prefix}{figure}");
        for h in hosts {
            r.add(&name("rx_frames"), h.frames);
            r.add(&name("rx_skbs"), h.skbs);
            r.add(&name("drops"), h.drops);
            r.max(&name("queue_max"), h.queue_max as u64);
        }
        let busiest = hosts.iter().map(|h| h.busy_ns).max().unwrap_or(0);
        r.first(&name("cpu_busy_max"), if duration_s > 0.0 { busiest as f64 * 1e-9 / duration_s } else { 0.0 });
    }
}

/// GRO (net/core/gro.c, net/ipv4/tcp_offload.c; Linux 6.18) over a NAPI poll: the skbs it holds,
/// oldest first, one per flow, each a run of consecutive segments.
#[derive(Debug, Clone)]
struct Gro {
    held: Vec<Vec<Packet>>,
    /// Frames a poll takes before it ends (`dev_rx_weight`, the driver's NAPI weight: 64).
    weight: u32,
    /// Frames taken in this poll so far.
    polled: u32,
    /// The senders' timestamp clock.
    ts: TsTicks,
}

/// Most skbs GRO holds: `GRO_HASH_BUCKETS` (8) lists of `MAX_GRO_SKBS` (8) each (gro.c; past it the
/// list's oldest is flushed, `gro_flush_oldest`), taken as one list of 64 here.
const GRO_HELD_MAX: usize = 64;
/// A GRO skb stays under 64 KB (`GRO_LEGACY_MAX_SIZE`, `skb_gro_receive`: `p->len + len >=
/// gro_max_size` refuses the merge).
const GRO_MAX_BYTES: u32 = 65_536;

impl Gro {
    fn new(weight: u32, ts: TsTicks) -> Gro {
        Gro { held: Vec::new(), weight, polled: 0, ts }
    }

    /// `napi_gro_receive` for one frame of the poll, then the poll's end if it is over (`poll_over`:
    /// the queue is empty, `napi_complete_done` flushes everything; or the weight is spent, and
    /// `__napi_poll`'s `gro_flush_normal(&n->gro, HZ >= 1000)` flushes everything at HZ < 1000, as
    /// Debian's and Ubuntu's 250). The skbs that go up, in order.
    fn receive(&mut self, frame: Packet, poll_over: bool) -> Vec<Vec<Packet>> {
        let mut up = Vec::new();
        if frame.kind != Kind::Data {
            up.push(vec![frame]); // (a SYN-ACK: `tcp_gro_receive` flushes a SYN at once)
        } else {
            self.merge(frame, &mut up);
        }
        self.polled += 1;
        if poll_over || self.polled >= self.weight {
            self.polled = 0;
            up.append(&mut self.held);
        }
        up
    }

    /// `tcp_gro_receive`: the frame joins its flow's held skb when it follows it (its sequence
    /// next, its length at most the first segment's, the same ACK and options: TSecr, TSval on the
    /// sender's clock, and what rides in the SACK fields, an MPTCP subflow's DSS mapping); a
    /// shorter one joins and flushes it. Otherwise the held skb goes up
    /// and the frame is held in its place. A frame with PSH is never held: it joins and flushes
    /// its flow's skb, or goes up on its own (`out_check_final`: `flush |= flags & (... PSH ...)`;
    /// the skb it joined is `pp`, flushed; one not merged is marked `flush` and `dev_gro_receive`
    /// passes it up as it is, `GRO_NORMAL`).
    fn merge(&mut self, frame: Packet, up: &mut Vec<Vec<Packet>>) {
        let Some(i) = self.held.iter().position(|skb| skb[0].flow == frame.flow) else {
            if frame.psh() {
                return up.push(vec![frame]);
            }
            if self.held.len() >= GRO_HELD_MAX {
                up.push(self.held.remove(0));
            }
            return self.held.push(vec![frame]);
        };
        let ts = self.ts;
        let skb = &mut self.held[i];
        let (first, last) = (skb[0], skb[skb.len() - 1]);
        let bytes: u32 = skb.iter().map(|p| p.bytes).sum();
        let follows = frame.seq == last.seq + 1
            && frame.bytes <= first.bytes
            && frame.ack == first.ack
            && frame.ts_ecr == first.ts_ecr
            && (frame.sack_len, frame.sack) == (first.sack_len, first.sack)
            && ts.ts_of(frame.born) == ts.ts_of(first.born)
            && bytes + frame.bytes < GRO_MAX_BYTES;
        if follows {
            skb.push(frame);
            if frame.bytes < first.bytes || frame.psh() {
                up.push(self.held.remove(i));
            }
        } else if frame.psh() {
            up.push(self.held.remove(i));
            up.push(vec![frame]);
        } else {
            up.push(std::mem::replace(skb, vec![frame]));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(rx_packet_us: f64, tx_packet_us: f64, backlog: u32, ring: Option<u32>) -> RxHost {
        let spec = scenario::Host {
            rx_packet_us,
            rx_byte_ns: 0.5,
            tx_packet_us,
            netdev_max_backlog: backlog,
            rx_ring: ring,
            ..Default::default()
        };
        RxHost::new(&spec, Some(TsTicks::MS))
    }

    /// Completes the CPU's work at `now`: what went up, one skb each.
    fn complete(h: &mut RxHost, now: SimTime) -> Vec<Vec<Packet>> {
        let mut up = Vec::new();
        h.complete(now, &mut up);
        up
    }

    fn frame(seq: u32) -> Packet {
        Packet::data(0, seq, 1000, SimTime::ZERO)
    }

    #[test]
    fn the_applications_writes_wait_for_the_frames_and_run_while_a_poll_waits_for_its_interrupt() {
        let spec = scenario::Host { rx_packet_us: 10.0, write_us: 2.0, ..Default::default() };
        let mut h = RxHost::new(&spec, None);
        // A frame at 0 (10 µs); a write asked meanwhile waits, and a second frame too.
        assert_eq!(h.arrive(SimTime(0), frame(0)), Admit::Handled(SimTime(10_000)));
        assert_eq!(h.wants_write(SimTime(1_000), 7), None);
        assert_eq!(h.arrive(SimTime(2_000), frame(1)), Admit::Queued);
        assert_eq!(complete(&mut h, SimTime(10_000)).len(), 1);
        assert_eq!(h.start(SimTime(10_000)), Some(SimTime(20_000)), "the frame first (the softirq)");
        assert_eq!(complete(&mut h, SimTime(20_000)).len(), 1);
        assert_eq!(h.take_written(), None);
        assert_eq!(h.start(SimTime(20_000)), Some(SimTime(22_000)), "then the write, 2 µs");
        assert!(complete(&mut h, SimTime(22_000)).is_empty());
        assert_eq!(h.take_written(), Some(7));
        assert_eq!(h.take_written(), None, "told once");
        // With interrupt moderation a new poll begins 100 µs after the last began: a write asked
        // while a frame waits for that interrupt runs first.
        let spec = scenario::Host { rx_coalesce_us: 100.0, ..spec };
        let mut h = RxHost::new(&spec, None);
        assert_eq!(h.arrive(SimTime(0), frame(0)), Admit::Handled(SimTime(110_000)));
        complete(&mut h, SimTime(110_000));
        assert_eq!(h.arrive(SimTime(120_000), frame(1)), Admit::Handled(SimTime(210_000)));
        complete(&mut h, SimTime(210_000));
        h.input.push_back(frame(2)); // (waits for the interrupt at 300 µs)
        assert_eq!(h.wants_write(SimTime(250_000), 3), Some(SimTime(252_000)), "the write while the interrupt is due");
        complete(&mut h, SimTime(252_000));
        assert_eq!(h.take_written(), Some(3));
        assert_eq!(h.start(SimTime(252_000)), Some(SimTime(310_000)), "then the frame at its interrupt");
    }

    #[test]
    fn each_frame_costs_its_packet_and_byte_time_one_after_another() {
        let mut h = host(10.0, 0.0, 1000, None);
        // 10 µs + 0.5 ns × 1000 B = 10.5 µs each.
        assert_eq!(h.arrive(SimTime(0), frame(0)), Admit::Handled(SimTime(10_500)));
        assert_eq!(h.arrive(SimTime(1), frame(1)), Admit::Queued);
        assert_eq!(complete(&mut h, SimTime(10_500)), [vec![frame(0)]]);
        assert_eq!(h.start(SimTime(10_500)), Some(SimTime(21_000)));
        assert_eq!(complete(&mut h, SimTime(21_000)), [vec![frame(1)]]);
        assert_eq!(h.start(SimTime(21_000)), None);
    }

    #[test]
    fn an_ack_sent_while_handling_delays_the_next_frame_and_one_sent_idle_delays_an_arrival() {
        let mut h = host(10.0, 4.0, 1000, None);
        h.arrive(SimTime(0), frame(0));
        h.arrive(SimTime(0), frame(1));
        h.sent(SimTime(5_000));
        complete(&mut h, SimTime(10_500));
        assert_eq!(h.start(SimTime(10_500)), Some(SimTime(10_500 + 4_000 + 10_500)));
        complete(&mut h, SimTime(25_000));
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
        complete(&mut h, SimTime(10_500));
        h.start(SimTime(10_500));
        let later: Vec<Admit> = (5..9).map(|i| h.arrive(SimTime(10_600), frame(i))).collect();
        assert_eq!(later, [Admit::Queued, Admit::Queued, Admit::Queued, Admit::Dropped]);
        assert_eq!(h.queue_max, 5);
    }

    fn gro_host(weight: u32) -> RxHost {
        let spec = scenario::Host {
            rx_packet_us: 1.0,
            rx_byte_ns: 0.5,
            rx_skb_us: 10.0,
            gro: true,
            napi_weight: weight,
            rx_ring: Some(256),
            ..Default::default()
        };
        RxHost::new(&spec, Some(TsTicks::MS))
    }

    /// Runs the host's CPU from its first completion at `at` until it is idle: every skb that went
    /// up, as its segments' numbers.
    fn drain(h: &mut RxHost, mut at: SimTime) -> Vec<Vec<u32>> {
        let mut skbs = Vec::new();
        loop {
            for skb in complete(h, at) {
                skbs.push(skb.iter().map(|p| p.seq).collect());
            }
            match h.start(at) {
                Some(next) => at = next,
                None => return skbs,
            }
        }
    }

    #[test]
    fn gro_merges_a_polls_consecutive_segments_and_the_stack_pays_once_per_skb() {
        let mut h = gro_host(64);
        let Admit::Handled(first) = h.arrive(SimTime(0), frame(0)) else { panic!("an idle CPU takes it") };
        for seq in 1..5 {
            h.arrive(SimTime(0), frame(seq));
        }
        // Five frames at 1 µs + 0.5 ns x 1000 B each, then one skb up the stack at 10 µs.
        assert_eq!(drain(&mut h, first), [vec![0, 1, 2, 3, 4]]);
        assert_eq!((h.frames, h.skbs), (5, 1));
        assert_eq!(h.busy_ns, 5 * 1_500 + 10_000);
    }

    #[test]
    fn reordering_breaks_gro_runs_and_a_short_segment_or_the_polls_weight_ends_one() {
        let mut h = gro_host(64);
        let Admit::Handled(first) = h.arrive(SimTime(0), frame(0)) else { panic!("an idle CPU takes it") };
        let mut short = frame(4);
        short.bytes = 500;
        for p in [frame(2), frame(1), frame(3), short, frame(5)] {
            h.arrive(SimTime(0), p);
        }
        // 2 does not follow 0: 0 goes up and 2 is held; 1 does not follow 2: 2 goes up, 1 is held;
        // 3 does not follow 1 either; the short 4 joins 3 and flushes it; 5 waits for the poll's end.
        assert_eq!(drain(&mut h, first), [vec![0], vec![2], vec![1], vec![3, 4], vec![5]]);
        let mut h = gro_host(2);
        let Admit::Handled(first) = h.arrive(SimTime(0), frame(0)) else { panic!("an idle CPU takes it") };
        for seq in 1..4 {
            h.arrive(SimTime(0), frame(seq));
        }
        assert_eq!(drain(&mut h, first), [vec![0, 1], vec![2, 3]]);
    }

    #[test]
    fn a_segment_with_psh_is_never_held_it_ends_its_skb_or_goes_up_alone() {
        let pushed = |seq| Packet { flags: Packet::PSH, ..frame(seq) };
        let mut h = gro_host(64);
        let Admit::Handled(first) = h.arrive(SimTime(0), frame(0)) else { panic!("an idle CPU takes it") };
        // 1 (PSH) joins 0 and flushes it; 2 (PSH) has no skb to join: up alone; 3 is held; 5 (PSH)
        // does not follow 3: 3 goes up, then 5 alone; 6 waits for the poll's end.
        for p in [pushed(1), pushed(2), frame(3), pushed(5), frame(6)] {
            h.arrive(SimTime(0), p);
        }
        assert_eq!(drain(&mut h, first), [vec![0, 1], vec![2], vec![3], vec![5], vec![6]]);
    }

    #[test]
    fn a_ring_holds_its_descriptors_the_frame_being_handled_among_them() {
        let mut h = host(10.0, 0.0, 1000, Some(3));
        let admits: Vec<Admit> = (0..4).map(|i| h.arrive(SimTime(0), frame(i))).collect();
        assert_eq!(&admits[1..], [Admit::Queued, Admit::Queued, Admit::Dropped]);
        complete(&mut h, SimTime(10_500));
        assert!(h.start(SimTime(10_500)).is_some());
        // Frame 1 is being handled and frame 2 waits: one descriptor is free.
        assert_eq!(h.arrive(SimTime(10_600), frame(9)), Admit::Queued);
        assert_eq!(h.arrive(SimTime(10_600), frame(10)), Admit::Dropped);
        assert_eq!(h.drops, 2);
    }
}
