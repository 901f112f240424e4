//! The thesis's paced model as a bare event loop: the peer bondsim's thesis shapes are measured
//! against (issue 40: "≥ 50% of the bare-loop peer's speed, same events, same results").
//!
//!     bare_thesis PACKETS SHAPE MODE      (SHAPE: balanced | thesis; MODE: rr | lb)
//!
//! The same system as `benchmarks/ns3/thesis.cc` and the `balanced` / `thesis` shapes of
//! `benches/engine.rs`: 100 requests of (PACKETS / 100) packets; a scheduler tick every 20 ms
//! takes 4 packets round-robin over the requests still queued and hands each to an interface
//! (rr: the next in turn; lb: the one with the fewest queued, lowest index on ties); each
//! interface sends one queued packet per period (20 ms; interface 1 at 82 ms in `thesis`). A
//! packet is out of order when its request already delivered a later one.
//!
//! Nothing of bondsim is used: a `BinaryHeap` of (time, insertion order, what), integer
//! nanoseconds. It processes the events bondsim's engine does: an interface with nothing queued
//! schedules no wake-up (bondsim runs idle links' polls outside its queue); a packet queued on an
//! idle interface wakes it at its next period boundary after now, where its skipped polls would
//! have found it. At equal times the interfaces run before the tick (insertion order, as bondsim,
//! ns-3 and SimPy do), so the out-of-order count and the events equal bondsim's. No delivery
//! metrics beyond that count. Prints one JSON line, with the peak resident memory.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::time::Instant;

const MS: u64 = 1_000_000;
const REQUESTS: usize = 100;
const PER_TICK: usize = 4;

/// What an event wakes: interface `i`, or the scheduler's tick.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum What {
    Interface(usize),
    Tick,
}

struct Model {
    lb: bool,
    periods: Vec<u64>,
    ifaces: Vec<VecDeque<(u32, u32)>>,
    /// Whether interface `i` has a wake-up in the heap.
    armed: Vec<bool>,
    queue: Vec<(u32, u32)>,
    next_req: usize,
    next_iface: usize,
    packets_per_file: u32,
    high: Vec<i64>,
    total: u64,
    delivered: u64,
    in_order: u64,
    last: u64,
    /// Every interface polls every period, idle or not (as ns-3's program does): a check of the
    /// skipping rule (`every` as a fourth argument), same results, more events.
    every_poll: bool,
    heap: BinaryHeap<Reverse<(u64, u64, What)>>,
    inserted: u64,
    events: u64,
}

impl Model {
    fn schedule(&mut self, at: u64, what: What) {
        self.heap.push(Reverse((at, self.inserted, what)));
        self.inserted += 1;
    }

    fn pick(&mut self) -> usize {
        if !self.lb {
            let i = self.next_iface;
            self.next_iface = (i + 1) % self.ifaces.len();
            return i;
        }
        (1..self.ifaces.len()).fold(0, |best, i| if self.ifaces[i].len() < self.ifaces[best].len() { i } else { best })
    }

    fn interface(&mut self, now: u64, i: usize) {
        let Some((req, seq)) = self.ifaces[i].pop_front() else {
            if self.every_poll {
                self.schedule(now + self.periods[i], What::Interface(i));
            } else {
                self.armed[i] = false;
            }
            return;
        };
        let high = &mut self.high[req as usize];
        if i64::from(seq) > *high {
            *high = i64::from(seq);
            self.in_order += 1;
        }
        self.delivered += 1;
        self.last = now;
        if self.ifaces[i].is_empty() && !self.every_poll {
            self.armed[i] = false; // idle: its polls are skipped until a packet comes
        } else {
            self.schedule(now + self.periods[i], What::Interface(i));
        }
    }

    fn tick(&mut self, now: u64) {
        for _ in 0..PER_TICK {
            if self.queue.is_empty() {
                break;
            }
            let i = self.pick();
            let (req, seq) = self.queue[self.next_req];
            self.ifaces[i].push_back((req, seq));
            self.queue[self.next_req].1 = seq + 1;
            if !self.armed[i] {
                // its next poll: the first period boundary after now (it polled at now, if on one)
                self.armed[i] = true;
                let period = self.periods[i];
                self.schedule((now / period + 1) * period, What::Interface(i));
            }
            if seq + 1 == self.packets_per_file {
                self.queue.remove(self.next_req);
                if self.queue.is_empty() {
                    break;
                }
            }
            self.next_req = (self.next_req + 1) % self.queue.len();
        }
        if !self.queue.is_empty() {
            self.schedule(now + 20 * MS, What::Tick);
        }
    }

    fn run(&mut self) {
        while let Some(Reverse((now, _, what))) = self.heap.pop() {
            self.events += 1;
            match what {
                What::Interface(i) => self.interface(now, i),
                What::Tick => self.tick(now),
            }
            if self.delivered == self.total {
                break;
            }
        }
    }
}

/// The process's peak resident memory, KiB (`VmHWM` of /proc/self/status).
fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let packets = args.get(1).map_or(1_000_000.0, |a| a.parse::<f64>().expect("PACKETS: a number")) as u64;
    let shape = args.get(2).map_or("balanced", String::as_str);
    let mode = args.get(3).map_or("rr", String::as_str);
    assert!(matches!(shape, "balanced" | "thesis"), "SHAPE: balanced or thesis");
    assert!(matches!(mode, "rr" | "lb"), "MODE: rr or lb");
    let packets_per_file = (packets / REQUESTS as u64) as u32;
    let slow = if shape == "thesis" { 82 } else { 20 };
    let periods = vec![20 * MS, slow * MS, 20 * MS, 20 * MS];
    let mut m = Model {
        lb: mode == "lb",
        every_poll: args.get(4).is_some_and(|a| a == "every"),
        ifaces: vec![VecDeque::new(); periods.len()],
        armed: vec![true; periods.len()],
        periods,
        queue: (0..REQUESTS as u32).map(|r| (r, 0)).collect(),
        next_req: 0,
        next_iface: 0,
        packets_per_file,
        high: vec![-1; REQUESTS],
        total: REQUESTS as u64 * u64::from(packets_per_file),
        delivered: 0,
        in_order: 0,
        last: 0,
        heap: BinaryHeap::new(),
        inserted: 0,
        events: 0,
    };
    let started = Instant::now();
    // Interfaces first, then the scheduler: at each instant the interfaces send before the tick.
    for i in 0..m.periods.len() {
        m.schedule(0, What::Interface(i));
    }
    m.schedule(0, What::Tick);
    m.run();
    let wall = started.elapsed().as_secs_f64();
    println!(
        "{{\"shape\": \"{shape}\", \"mode\": \"{mode}\", \"packets\": {}, \"events\": {}, \"wall_s\": {wall:.6}, \
         \"packets_per_s\": {:.0}, \"out_of_order\": {}, \"makespan_s\": {:.9}, \"peak_rss_kib\": {}}}",
        m.total,
        m.events,
        m.total as f64 / wall,
        m.total - m.in_order,
        m.last as f64 / 1e9,
        peak_rss_kib()
    );
}
