//! The world of one run and its event loop.
//!
//! ```text
//!  requests ──▶ sender ──▶ scheduler ──▶ link 0 ─┐
//!  (workload)   (ticks)    (bond)        link 1 ─┼──▶ receiver (per-flow order)
//!                                        link … ─┘
//! ```
//!
//! Start-up mirrors `bondingSimulator.py`: at time zero the first requests
//! arrive, every link wakes once, then the scheduler ticks; afterwards equal
//! times keep that order because the engine runs equal-time events FIFO.

use std::time::Instant;

use crate::bond::registry::{self, BuildContext};
use crate::bond::{BondView, LinkView, PacketInfo, Pick, Scheduler};
use crate::engine::EventQueue;
use crate::error::{Error, Result};
use crate::link::PacedLink;
use crate::packet::Packet;
use crate::receiver::Receiver;
use crate::result::{LinkSummary, LinkTable, RequestTable, RunResult, Summary};
use crate::scenario::Scenario;
use crate::sender::PacedSender;
use crate::time::SimTime;
use crate::workload::{self, Request};

/// How often (in events) the progress callback is called.
const PROGRESS_EVERY: u64 = 1 << 18;

/// Where a run stands, for progress bars.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    /// Packets delivered or dropped so far.
    pub done_packets: u64,
    /// Packets the whole run will send.
    pub total_packets: u64,
    /// Simulated time reached.
    pub now: SimTime,
    /// Events processed so far.
    pub events: u64,
}

#[derive(Debug, Clone, Copy)]
enum Event {
    /// Requests `first..first + count` reach the request queue.
    Arrive { first: u32, count: u32 },
    /// The sender's periodic loop.
    Tick,
    /// A link wakes up to send.
    Poll(u32),
}

/// Runs `scenario` to completion.
pub fn run(scenario: &Scenario) -> Result<RunResult> {
    run_with_progress(scenario, &mut |_| true)
}

/// Runs `scenario`, calling `progress` now and then; it returns `false` to stop the run.
pub fn run_with_progress(scenario: &Scenario, progress: &mut dyn FnMut(&Progress) -> bool) -> Result<RunResult> {
    scenario.validate()?;
    let started = Instant::now();
    let mut world = World::build(scenario);
    world.run(progress)?;
    Ok(world.finish(scenario, started.elapsed().as_secs_f64()))
}

struct World {
    events: EventQueue<Event>,
    requests: Vec<Request>,
    arrived: u32,
    tick: SimTime,
    sender: PacedSender,
    scheduler: Box<dyn Scheduler>,
    scheduler_label: String,
    links: Vec<PacedLink>,
    link_names: Vec<String>,
    views: Vec<LinkView>,
    receiver: Receiver,
    total_packets: u64,
    sent: u64,
    dropped: u64,
    in_flight: u64,
}

impl World {
    fn build(scenario: &Scenario) -> World {
        let seed = scenario.seed;
        let chunk = scenario.sender.chunk_bytes;
        let requests = workload::generate(&scenario.workload, seed);
        let total_packets = requests.iter().map(|r| PacedSender::packets_for(r.file_bytes, chunk)).sum();

        let mut links = Vec::new();
        let mut link_names = Vec::new();
        for spec in &scenario.links {
            for _ in 0..spec.count {
                let id = links.len();
                links.push(PacedLink::new(spec, seed, id, chunk));
                link_names.push(match (&spec.name, spec.count) {
                    (Some(name), 1) => name.clone(),
                    (Some(name), _) => format!("{name}{id}"),
                    (None, _) => format!("link{id}"),
                });
            }
        }
        let views = links.iter().map(|l| l.view(SimTime::ZERO)).collect();
        let resolved = registry::resolve(&scenario.bond, links.len()).expect("validated scenario");
        let scheduler = resolved.build(&BuildContext { links: links.len(), seed });

        let mut events = EventQueue::new();
        // Arrivals grouped by time; at time zero they precede the links' and the sender's first turn.
        let mut first = 0;
        while first < requests.len() {
            let at = requests[first].arrival;
            let count = requests[first..].iter().take_while(|r| r.arrival == at).count();
            events.schedule(at, Event::Arrive { first: first as u32, count: count as u32 });
            first += count;
        }
        for id in 0..links.len() {
            events.schedule(SimTime::ZERO, Event::Poll(id as u32));
        }
        events.schedule(SimTime::ZERO, Event::Tick);

        World {
            events,
            requests,
            arrived: 0,
            tick: scenario.tick(),
            sender: PacedSender::new(scenario.sender.packets_per_tick, chunk),
            scheduler,
            scheduler_label: resolved.label(),
            links,
            link_names,
            views,
            receiver: Receiver::new(scenario.workload.requests as usize),
            total_packets,
            sent: 0,
            dropped: 0,
            in_flight: 0,
        }
    }

    fn is_done(&self) -> bool {
        self.arrived as usize == self.requests.len() && self.sender.is_idle() && self.in_flight == 0
    }

    fn run(&mut self, progress: &mut dyn FnMut(&Progress) -> bool) -> Result<()> {
        while let Some((now, event)) = self.events.pop() {
            match event {
                Event::Arrive { first, count } => {
                    for r in &self.requests[first as usize..(first + count) as usize] {
                        self.sender.admit(r.id, r.file_bytes);
                    }
                    self.arrived += count;
                }
                Event::Tick => self.tick(now),
                Event::Poll(id) => self.poll(now, id as usize),
            }
            if self.is_done() {
                break;
            }
            if self.events.processed().is_multiple_of(PROGRESS_EVERY) && !progress(&self.progress()) {
                return Err(Error::Interrupted);
            }
        }
        Ok(())
    }

    fn progress(&self) -> Progress {
        Progress {
            done_packets: self.receiver.delivered + self.dropped,
            total_packets: self.total_packets,
            now: self.events.now(),
            events: self.events.processed(),
        }
    }

    fn tick(&mut self, now: SimTime) {
        let World { sender, scheduler, links, views, requests, sent, dropped, in_flight, .. } = self;
        sender.tick(now, |packet| {
            *sent += 1;
            let info = PacketInfo {
                flow: packet.flow,
                seq: packet.seq,
                bytes: packet.bytes,
                client: requests[packet.flow as usize].client,
            };
            match scheduler.pick(&info, &BondView { now, links: views }) {
                Pick::Link(id) => {
                    enqueue(&mut links[id], &mut views[id], now, packet);
                    *in_flight += 1;
                }
                Pick::All => {
                    for id in 0..links.len() {
                        if views[id].up {
                            enqueue(&mut links[id], &mut views[id], now, packet);
                            *in_flight += 1;
                        }
                    }
                }
                Pick::Drop => *dropped += 1,
            }
        });
        if !(self.sender.is_idle() && self.arrived as usize == self.requests.len()) {
            self.events.schedule(now + self.tick, Event::Tick);
        }
    }

    fn poll(&mut self, now: SimTime, id: usize) {
        let (sent, next) = self.links[id].poll(now);
        if let Some(packet) = sent {
            self.receiver.deliver(now, packet.flow, packet.seq);
            self.in_flight -= 1;
        }
        self.views[id] = self.links[id].view(now);
        self.events.schedule(next, Event::Poll(id as u32));
    }

    fn finish(self, scenario: &Scenario, wall_s: f64) -> RunResult {
        let rx = &self.receiver;
        let chunk = scenario.sender.chunk_bytes;
        let mut requests = RequestTable::default();
        for (r, flow) in self.requests.iter().zip(rx.flows()) {
            requests.request.push(r.id);
            requests.client.push(r.client);
            requests.file_bytes.push(r.file_bytes);
            requests.packets.push(PacedSender::packets_for(r.file_bytes, chunk) as u32);
            requests.received.push(flow.received);
            requests.in_order.push(flow.in_order);
            requests.out_of_order.push(flow.out_of_order());
            requests.arrival_s.push(r.arrival.as_secs_f64());
            requests.finish_s.push(flow.first_at.map(|_| flow.last_at.as_secs_f64()));
        }
        let mut links = LinkTable::default();
        for (id, (link, name)) in self.links.iter().zip(&self.link_names).enumerate() {
            let s = &link.stats;
            links.link.push(id);
            links.name.push(name.clone());
            links.packets_sent.push(s.packets_sent);
            links.bytes_sent.push(s.bytes_sent);
            links.polls.push(s.polls);
            links.utilisation.push(if s.polls == 0 { 0.0 } else { s.packets_sent as f64 / s.polls as f64 });
            links.max_queue_pkts.push(s.max_queue_pkts);
        }
        let delivered = rx.delivered;
        let summary = Summary {
            scenario: scenario.name.clone(),
            scheduler: self.scheduler_label,
            seed: scenario.seed,
            link_count: self.links.len(),
            requests: scenario.workload.requests,
            packets: self.sent,
            delivered,
            dropped: self.dropped,
            in_order: rx.in_order,
            out_of_order: delivered - rx.in_order,
            ooo_fraction: if delivered == 0 { 0.0 } else { (delivered - rx.in_order) as f64 / delivered as f64 },
            makespan_s: rx.last_delivery.as_secs_f64(),
            events: self.events.processed(),
            wall_s,
            links: links
                .link
                .iter()
                .zip(&links.name)
                .zip(&links.packets_sent)
                .map(|((&link, name), &packets_sent)| LinkSummary { link, name: name.clone(), packets_sent })
                .collect(),
        };
        RunResult { summary, requests, links }
    }
}

/// Queues `packet` on a link and refreshes the bond's view of it.
fn enqueue(link: &mut PacedLink, view: &mut LinkView, now: SimTime, packet: Packet) {
    link.enqueue(packet);
    *view = link.view(now);
}
