//! The world of one run and its event loop.
//!
//! ```text
//!  requests ──▶ sender ──▶ scheduler ──▶ link 0 ─┐
//!  (workload)   paced/     (bond)        link 1 ─┼──▶ receiver (per-flow order,
//!               window/cbr   ▲           link … ─┘    delay, reordering metrics)
//!                            └── monitor (miimon) ◀── carrier failures
//! ```
//!
//! Start-up mirrors `bondingSimulator.py`: at time zero the first requests
//! arrive, every link wakes once, then the scheduler ticks; afterwards equal
//! times keep that order because the engine runs equal-time events FIFO.

use std::collections::HashMap;
use std::time::Instant;

use rand_distr::{Distribution, Exp};

use crate::bond::monitor::Monitor;
use crate::bond::registry;
use crate::bond::{BondView, LinkView, PacketInfo, Pick, Scheduler};
use crate::engine::EventQueue;
use crate::error::{Error, Result};
use crate::link::{link_name, DropCause, Enqueued, Link};
use crate::network::{self, FlowHeaders};
use crate::packet::Packet;
use crate::receiver::{Receiver, Resequencer};
use crate::result::{self, RunResult};
use crate::rng::{self, Rng};
use crate::scenario::{RandomFailures, Scenario, SenderKind};
use crate::sender::{CbrSender, Cutter, PacedSender, WindowSender};
use crate::time::SimTime;
use crate::workload::{self, Request};

/// How often (in events) the progress callback is called.
const PROGRESS_EVERY: u64 = 1 << 18;

/// Where a run stands, for progress bars.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    /// Packets delivered or lost so far.
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
    /// Requests `first..first + count` reach the server.
    Arrive { first: u32, count: u32 },
    /// The paced sender's loop.
    Tick,
    /// A paced link wakes up to send.
    Poll(u32),
    /// A rate link finished putting its head packet on the wire.
    TxDone { link: u32, epoch: u32 },
    /// The oldest packet on `link`'s wire reaches the receiver.
    Deliver { link: u32, epoch: u32 },
    /// A constant-rate flow sends its next packet.
    Wake(u32),
    /// A window slot of this flow is free again (after the ack delay).
    Ack(u32),
    /// A link's carrier goes (`up = false`) or comes back.
    Carrier { link: u32, up: bool },
    /// The monitor commits its verdict on a link.
    Commit { link: u32, generation: u32 },
    /// The scheduler's periodic work.
    SchedulerTick,
    /// `stop_s` is reached.
    Stop,
}

enum SenderState {
    Paced { sender: PacedSender, tick: SimTime },
    Window(WindowSender),
    Cbr(CbrSender),
}

impl SenderState {
    fn is_idle(&self) -> bool {
        match self {
            SenderState::Paced { sender, .. } => sender.is_idle(),
            SenderState::Window(s) => s.is_idle(),
            SenderState::Cbr(s) => s.is_idle(),
        }
    }
}

/// Runs `scenario` to completion.
pub fn run(scenario: &Scenario) -> Result<RunResult> {
    run_with_progress(scenario, &mut |_| true)
}

/// Runs `scenario`, calling `progress` now and then; it returns `false` to stop the run.
pub fn run_with_progress(scenario: &Scenario, progress: &mut dyn FnMut(&Progress) -> bool) -> Result<RunResult> {
    scenario.validate()?;
    let started = Instant::now();
    let mut world = World::build(scenario)?;
    world.run(progress)?;
    Ok(world.finish(scenario, started.elapsed().as_secs_f64()))
}

/// Per-copy bookkeeping of a packet sent on several links (broadcast).
#[derive(Debug, Clone, Copy)]
struct Copies {
    left: u32,
    delivered: bool,
}

/// Everything one run holds.
pub(crate) struct World {
    events: EventQueue<Event>,
    pub(crate) requests: Vec<Request>,
    pub(crate) headers: Vec<FlowHeaders>,
    pub(crate) rx_links: Vec<Option<usize>>,
    /// Per flow: the link its latest packet took (`u32::MAX`: none yet) and how often that changed.
    pub(crate) paths: Vec<(u32, u32)>,
    arrived: u32,
    sender: SenderState,
    l3_header: u32,
    pub(crate) scheduler: Box<dyn Scheduler>,
    pub(crate) scheduler_label: String,
    pub(crate) links: Vec<Link>,
    pub(crate) link_names: Vec<String>,
    views: Vec<LinkView>,
    monitor: Monitor,
    failure_rngs: Vec<Option<(RandomFailures, Rng)>>,
    pub(crate) receiver: Receiver,
    resequencer: Option<Resequencer>,
    copies: HashMap<u64, Copies>,
    /// Scratch space for the packets of one paced tick.
    batch: Vec<Packet>,
    pub(crate) total_packets: u64,
    pub(crate) sent: u64,
    next_bond_seq: u64,
    in_flight: u64,
    pub(crate) drops_no_link: u64,
    pub(crate) stopped_at: Option<SimTime>,
}

impl World {
    fn build(scenario: &Scenario) -> Result<World> {
        let seed = scenario.seed;
        let cutter = Cutter::for_scenario(scenario);
        let requests = workload::generate(&scenario.workload, seed);
        let clients = network::Clients::new(&scenario.network, scenario.workload.clients, seed);
        let headers = network::flow_headers(&scenario.network, &clients, &requests, seed);
        let packets_per_flow: Vec<u32> = requests.iter().map(|r| cutter.packets(r.file_bytes) as u32).collect();
        let total_packets = packets_per_flow.iter().map(|&p| u64::from(p)).sum();

        let mut links = Vec::new();
        let mut link_names = Vec::new();
        let mut failure_rngs = Vec::new();
        let mut events = EventQueue::new();
        // Scheduled failures first: at equal times a carrier change precedes everything else.
        for (id, spec) in scenario.each_link() {
            links.push(Link::new(scenario, spec, id));
            link_names.push(link_name(spec, id));
            for failure in &spec.failures {
                events.schedule(SimTime::from_secs_f64(failure.down_s), Event::Carrier { link: id as u32, up: false });
                if let Some(up) = failure.up_s {
                    events.schedule(SimTime::from_secs_f64(up), Event::Carrier { link: id as u32, up: true });
                }
            }
            failure_rngs.push(
                spec.random_failures.clone().map(|r| (r, rng::stream(seed, &format!("links.{id}.random_failures")))),
            );
        }
        let monitor = Monitor::new(scenario.bond.miimon, scenario.bond.updelay, scenario.bond.downdelay, links.len());
        let views = links.iter().map(|l| l.view(SimTime::ZERO, true)).collect();
        let resolved = registry::resolve(&scenario.bond.mode, &scenario.bond.options)?;
        let scheduler = resolved.build(&scenario.bond_context())?;
        let resequencer = scheduler.resequences().then(Resequencer::default);

        let sender = match scenario.sender.kind {
            SenderKind::Paced => SenderState::Paced {
                sender: PacedSender::new(scenario.sender.packets_per_tick.unwrap_or(4), cutter),
                tick: SimTime::from_millis_f64(scenario.sender.tick_ms.unwrap_or(20.0)),
            },
            SenderKind::Window => SenderState::Window(WindowSender::new(
                scenario.sender.window_pkts.unwrap_or(64),
                SimTime::from_micros_f64(scenario.sender.ack_delay_us.unwrap_or(0.0)),
                cutter,
                requests.len(),
            )),
            SenderKind::Cbr => {
                SenderState::Cbr(CbrSender::new(scenario.sender.rate_mbps.expect("validated"), cutter, requests.len()))
            }
        };

        // Arrivals grouped by time; at time zero they precede the links' and the sender's first turn.
        let mut first = 0;
        while first < requests.len() {
            let at = requests[first].arrival;
            let count = requests[first..].iter().take_while(|r| r.arrival == at).count();
            events.schedule(at, Event::Arrive { first: first as u32, count: count as u32 });
            first += count;
        }
        for (id, link) in links.iter().enumerate() {
            if matches!(link, Link::Paced(_)) {
                events.schedule(SimTime::ZERO, Event::Poll(id as u32));
            }
        }
        if matches!(sender, SenderState::Paced { .. }) {
            events.schedule(SimTime::ZERO, Event::Tick);
        }
        if let Some(every) = scheduler.tick_interval() {
            events.schedule(every, Event::SchedulerTick);
        }
        if let Some(stop) = scenario.stop_s {
            events.schedule(SimTime::from_secs_f64(stop), Event::Stop);
        }

        let mut world = World {
            events,
            rx_links: vec![None; requests.len()],
            paths: vec![(u32::MAX, 0); requests.len()],
            receiver: Receiver::new(&packets_per_flow),
            requests,
            headers,
            arrived: 0,
            sender,
            l3_header: scenario.l3_header_bytes(),
            scheduler,
            scheduler_label: resolved.label(),
            links,
            link_names,
            views,
            monitor,
            failure_rngs,
            resequencer,
            copies: HashMap::new(),
            batch: Vec::new(),
            total_packets,
            sent: 0,
            next_bond_seq: 0,
            in_flight: 0,
            drops_no_link: 0,
            stopped_at: None,
        };
        for id in 0..world.links.len() {
            world.schedule_random_failure(id, SimTime::ZERO, true);
        }
        Ok(world)
    }

    fn is_done(&self) -> bool {
        self.arrived as usize == self.requests.len() && self.sender.is_idle() && self.in_flight == 0
    }

    fn run(&mut self, progress: &mut dyn FnMut(&Progress) -> bool) -> Result<()> {
        while let Some((now, event)) = self.events.pop() {
            match event {
                Event::Arrive { first, count } => self.arrive(now, first, count),
                Event::Tick => self.tick(now),
                Event::Poll(id) => self.poll(now, id as usize),
                Event::TxDone { link, epoch } => self.tx_done(now, link as usize, epoch),
                Event::Deliver { link, epoch } => self.deliver(now, link as usize, epoch),
                Event::Wake(flow) => self.wake(now, flow),
                Event::Ack(flow) => self.ack(now, flow),
                Event::Carrier { link, up } => self.carrier(now, link as usize, up),
                Event::Commit { link, generation } => self.commit(now, link as usize, generation),
                Event::SchedulerTick => self.scheduler_tick(now),
                Event::Stop => {
                    self.stopped_at = Some(now);
                    break;
                }
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
            done_packets: self.receiver.delivered + self.receiver.lost,
            total_packets: self.total_packets,
            now: self.events.now(),
            events: self.events.processed(),
        }
    }

    pub(crate) fn events_processed(&self) -> u64 {
        self.events.processed()
    }

    fn refresh_view(&mut self, id: usize, now: SimTime) {
        self.links[id].refresh_view(now, &mut self.views[id]);
    }

    fn arrive(&mut self, now: SimTime, first: u32, count: u32) {
        for flow in first..first + count {
            let r = &self.requests[flow as usize];
            let file = r.file_bytes;
            self.rx_links[flow as usize] =
                self.scheduler.rx_link(&self.headers[flow as usize], &BondView { now, links: &self.views });
            match &mut self.sender {
                SenderState::Paced { sender, .. } => sender.admit(flow, file),
                SenderState::Window(s) => {
                    s.admit(flow, file);
                    self.pump_window(now, flow);
                }
                SenderState::Cbr(s) => {
                    s.admit(flow, file);
                    self.wake(now, flow);
                }
            }
        }
        self.arrived += count;
    }

    fn tick(&mut self, now: SimTime) {
        let SenderState::Paced { sender, tick } = &mut self.sender else { return };
        let tick = *tick;
        let mut batch = std::mem::take(&mut self.batch);
        sender.tick(now, |packet| batch.push(packet));
        let again = !(sender.is_idle() && self.arrived as usize == self.requests.len());
        for packet in batch.drain(..) {
            self.dispatch(now, packet);
        }
        self.batch = batch;
        if again {
            self.events.schedule(now + tick, Event::Tick);
        }
    }

    fn pump_window(&mut self, now: SimTime, flow: u32) {
        loop {
            let SenderState::Window(s) = &mut self.sender else { return };
            let Some(packet) = s.next_packet(flow, now) else { return };
            self.dispatch(now, packet);
        }
    }

    fn wake(&mut self, now: SimTime, flow: u32) {
        let SenderState::Cbr(s) = &mut self.sender else { return };
        let (packet, next) = s.next_packet(flow, now);
        if let Some(at) = next {
            self.events.schedule(at, Event::Wake(flow));
        }
        self.dispatch(now, packet);
    }

    fn ack(&mut self, now: SimTime, flow: u32) {
        if let SenderState::Window(s) = &mut self.sender {
            s.release(flow);
            self.pump_window(now, flow);
        }
    }

    /// A packet of `flow` is resolved (first delivery, or lost for good): free its window slot.
    fn resolved(&mut self, now: SimTime, flow: u32) {
        if let SenderState::Window(s) = &mut self.sender {
            let delay = s.ack_delay();
            if delay == SimTime::ZERO {
                s.release(flow);
                self.pump_window(now, flow);
            } else {
                self.events.schedule(now + delay, Event::Ack(flow));
            }
        }
    }

    /// Hands a packet from the sender to the bond.
    fn dispatch(&mut self, now: SimTime, mut packet: Packet) {
        self.sent += 1;
        packet.bond_seq = self.next_bond_seq;
        self.next_bond_seq += 1;
        let flow = packet.flow as usize;
        let info =
            PacketInfo { bytes: packet.bytes, l3_bytes: packet.bytes + self.l3_header, headers: &self.headers[flow] };
        match self.scheduler.pick(&info, &BondView { now, links: &self.views }) {
            Pick::Link(id) => {
                let path = &mut self.paths[flow];
                if path.0 != id as u32 {
                    path.1 += u32::from(path.0 != u32::MAX);
                    path.0 = id as u32;
                }
                self.enqueue(now, id, packet);
            }
            Pick::All => {
                let targets: Vec<usize> = (0..self.links.len()).filter(|&id| self.views[id].up).collect();
                if targets.is_empty() {
                    self.lose(now, packet, DropCause::NoLink);
                    return;
                }
                if targets.len() > 1 {
                    self.copies.insert(packet.bond_seq, Copies { left: targets.len() as u32, delivered: false });
                }
                for id in targets {
                    self.enqueue(now, id, packet);
                }
            }
            Pick::Drop => self.lose(now, packet, DropCause::NoLink),
        }
    }

    fn enqueue(&mut self, now: SimTime, id: usize, packet: Packet) {
        self.in_flight += 1;
        match self.links[id].enqueue(now, packet) {
            Enqueued::Started(done) => {
                let Link::Rate(link) = &self.links[id] else { unreachable!("paced links never start at enqueue") };
                let epoch = link.epoch();
                self.events.schedule(done, Event::TxDone { link: id as u32, epoch });
            }
            Enqueued::Waiting => {}
            Enqueued::Dropped(cause) => {
                self.in_flight -= 1;
                self.copy_lost(now, packet, cause);
            }
        }
        self.refresh_view(id, now);
    }

    fn poll(&mut self, now: SimTime, id: usize) {
        let Link::Paced(link) = &mut self.links[id] else { return };
        let (sent, next) = link.poll(now);
        self.events.schedule(next, Event::Poll(id as u32));
        self.refresh_view(id, now);
        if let Some(packet) = sent {
            self.in_flight -= 1;
            self.arrived_at_receiver(now, packet);
        }
    }

    fn tx_done(&mut self, now: SimTime, id: usize, epoch: u32) {
        let Link::Rate(link) = &mut self.links[id] else { return };
        if link.epoch() != epoch {
            return; // the carrier went while this packet was being sent
        }
        let (packet, arrival, next) = link.tx_done(now);
        if let Some(done) = next {
            self.events.schedule(done, Event::TxDone { link: id as u32, epoch });
        }
        // Packets reaching the receiver at one instant are taken in the order the bond sent them.
        let rank = packet.bond_seq << 12 | id as u64;
        self.events.schedule_ranked(arrival, rank, Event::Deliver { link: id as u32, epoch });
        self.refresh_view(id, now);
    }

    fn deliver(&mut self, now: SimTime, id: usize, epoch: u32) {
        let Link::Rate(link) = &mut self.links[id] else { return };
        if link.epoch() != epoch {
            return; // lost with the carrier, counted then
        }
        let packet = link.arrive();
        self.in_flight -= 1;
        self.arrived_at_receiver(now, packet);
    }

    /// A copy of `packet` reached the receiver side at `now`.
    fn arrived_at_receiver(&mut self, now: SimTime, packet: Packet) {
        if let Some(c) = (!self.copies.is_empty()).then(|| self.copies.get_mut(&packet.bond_seq)).flatten() {
            c.left -= 1;
            let first = !c.delivered;
            c.delivered = true;
            if c.left == 0 {
                self.copies.remove(&packet.bond_seq);
            }
            if !first {
                self.receiver.duplicate(packet.flow);
                return;
            }
        }
        self.hand_to_receiver(now, packet);
        self.resolved(now, packet.flow);
    }

    fn hand_to_receiver(&mut self, now: SimTime, packet: Packet) {
        match &mut self.resequencer {
            None => {
                self.receiver.deliver(now, &packet);
            }
            Some(reseq) => {
                for p in reseq.arrive(packet) {
                    self.receiver.deliver(now, &p);
                }
            }
        }
    }

    /// A copy of `packet` was dropped; the packet is lost once no copy is left.
    fn copy_lost(&mut self, now: SimTime, packet: Packet, cause: DropCause) {
        if let Some(c) = (!self.copies.is_empty()).then(|| self.copies.get_mut(&packet.bond_seq)).flatten() {
            c.left -= 1;
            let (left, delivered) = (c.left, c.delivered);
            if left == 0 {
                self.copies.remove(&packet.bond_seq);
            }
            if left > 0 || delivered {
                return;
            }
        }
        self.lose(now, packet, cause);
    }

    /// `packet` will never arrive.
    fn lose(&mut self, now: SimTime, packet: Packet, cause: DropCause) {
        if cause == DropCause::NoLink {
            self.drops_no_link += 1;
        }
        self.receiver.lost(&packet);
        if let Some(reseq) = &mut self.resequencer {
            for p in reseq.skip(packet.bond_seq) {
                self.receiver.deliver(now, &p);
            }
        }
        self.resolved(now, packet.flow);
    }

    fn schedule_random_failure(&mut self, id: usize, now: SimTime, up_now: bool) {
        let Some((spec, rng)) = &mut self.failure_rngs[id] else { return };
        let mean = if up_now { spec.mtbf_s } else { spec.mttr_s };
        let after = Exp::new(1.0 / mean).expect("validated mean > 0").sample(rng);
        let at = now + SimTime::from_secs_f64(after).max(SimTime(1));
        self.events.schedule(at, Event::Carrier { link: id as u32, up: !up_now });
    }

    fn carrier(&mut self, now: SimTime, id: usize, up: bool) {
        if self.links[id].carrier() == up {
            return;
        }
        if up {
            self.links[id].carrier_up();
        } else {
            for packet in self.links[id].carrier_down(now) {
                self.in_flight -= 1;
                self.copy_lost(now, packet, DropCause::LinkDown);
            }
        }
        let any_usable = (0..self.links.len()).any(|l| l != id && self.monitor.is_up(l));
        if let Some(commit) = self.monitor.carrier_changed(id, now, up, any_usable) {
            self.events.schedule(commit.at, Event::Commit { link: id as u32, generation: commit.generation });
        }
        self.schedule_random_failure(id, now, up);
        self.refresh_view(id, now);
    }

    fn commit(&mut self, now: SimTime, id: usize, generation: u32) {
        let carrier = self.links[id].carrier();
        if self.monitor.commit(id, generation, carrier) {
            self.views[id].up = carrier;
            self.refresh_view(id, now);
            self.scheduler.on_link_change(id, &BondView { now, links: &self.views });
        }
    }

    fn scheduler_tick(&mut self, now: SimTime) {
        self.scheduler.on_tick(&BondView { now, links: &self.views });
        if let Some(every) = self.scheduler.tick_interval() {
            self.events.schedule(now + every, Event::SchedulerTick);
        }
    }

    fn finish(self, scenario: &Scenario, wall_s: f64) -> RunResult {
        result::build(self, scenario, wall_s)
    }

    pub(crate) fn resequencer(&self) -> Option<&Resequencer> {
        self.resequencer.as_ref()
    }
}
