//! The world of one run and its event loop.
//!
//! ```text
//!  workload ─▶ server end ─▶ bond ─▶ forward link 0 ─┐            ┌─▶ resequencer? ─▶ client end ─▶ app
//!  (arrivals)  (transport)  (sched)  forward link … ─┼─▶ wire tap ┘                  (transport)   metrics
//!                  ▲                                  │
//!                  └───── reverse link … ◀── switch (switch.rs: LAG hash / rx_link, or MAC table) ◀── client end (ACKs)
//!                     monitors (miimon, ARP probes, LACPDUs) ◀── carrier / silent failures
//! ```
//!
//! Every event names the component it is for ([`Target`]) and carries a token
//! that component gave it (a link's epoch, the monitor's generation, a
//! transport's timer token, or one of its own typed events, [`Payload`]): a
//! component recognises its own stale events, and adding a transport, or a kind
//! of event to a component, adds no [`Target`].
//!
//! The world is split by concern: `build.rs` (the world from a scenario),
//! `ends.rs` (the transport's two ends and the application), `forward.rs` (bond to
//! clients), `reverse.rs` (clients to server, the switch's choice of port), `idle.rs`
//! (idle paced links waking outside the queue), `host.rs` (the machines: CPU and receive
//! queue), `faults.rs` (carrier, monitors, the
//! bond's verdicts and what they tell the switch), `finish.rs` (the result); here the
//! world itself and its event loop.
//!
//! Start-up mirrors `bondingSimulator.py`: at time zero the first requests
//! arrive, every link wakes once, then the sender's loop ticks; afterwards equal
//! times keep that order because the engine runs equal-time events FIFO.

use std::time::Instant;

use rand_distr::{Distribution, Exp};

use crate::bond::arpmon::{self, ArpMode, ArpMonitor, Received};
use crate::bond::driver::{Arp, Bond, Notice};
use crate::bond::monitor::{self, Monitor};
use crate::bond::registry;
use crate::bond::{BondView, PacketInfo, Pick, Receive};
use crate::capture::{self, Capture};
use crate::engine::{self, EventQueue};
use crate::error::{Error, Result};
use crate::failover::FailoverLog;
use crate::fault::{self, SilentPorts};
use crate::link::{DropCause, Enqueued, Link, RateLink, Release, Sent};
use crate::network;
use crate::packet::FragLoss;
use crate::packet::{Kind, Packet};
use crate::receiver::{Receiver, Resequencer, WireTap};
use crate::result::{self, LinkReport, Reports, RunResult};
use crate::rng::{self, Rng};
use crate::scenario::{self, CaptureOptions, RandomFailures, Scenario};
use crate::switch::{self, Egress, Switch};
use crate::time::SimTime;
use crate::trace::Tracer;
use crate::transport::{self, End, Endpoint, Output};
use crate::workload::{self, Request};

mod build;
mod ends;
mod faults;
mod finish;
mod forward;
mod host;
mod idle;
mod nic;
mod reverse;
#[cfg(test)]
mod tests;

pub use build::bond_context;
use idle::IdleLinks;

/// No idle wake-up pending ([`IdleLinks::polls`]).
const NO_POLL: u128 = u128::MAX;

/// The most idle links whose wake-ups are counted in bulk at once
/// ([`World::skip_idle_polls_before`]; with more, they run one by one).
const BULK_LINKS: usize = 8;

/// How often (in events) the progress callback is called.
const PROGRESS_EVERY: u64 = 1 << 18;

/// balance-tlb's and -alb's learning packets: every `lp_interval` (`BOND_ALB_DEFAULT_LP_INTERVAL`,
/// 1 s), from the `lp_interval × ALB_TIMER_TICKS_PER_SEC`-th run of the ALB timer (every 100 ms
/// from `bond_open`; the first run counts 1), so first 0.9 s after the start.
const LP_INTERVAL: SimTime = SimTime(1_000_000_000);
const LP_FIRST: SimTime = SimTime(900_000_000);

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

/// The component an event is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// Requests reach the server ([`Arrivals`]).
    Arrivals,
    /// A transport timer of the server's end (token: the endpoint's own).
    Server,
    /// A transport timer of the clients' end.
    Client,
    /// A paced forward (bond-side) link wakes to send (token 0).
    Poll(u32),
    /// A rate forward link finished putting its head packet on the wire (token: the
    /// link's epoch when it started: a carrier loss since makes the event stale).
    TxDone(u32),
    /// The oldest packet on a forward link's wire reaches the far end (token: epoch).
    Deliver(u32),
    /// A forward link's coalesced TX-completion interrupt frees what it sent since the last one
    /// (`tx_coalesce_us`, [`Release::Coalesced`]).
    TxIrq(u32),
    /// [`Target::TxDone`] of a reverse (client-to-server) link.
    ReverseTxDone(u32),
    /// [`Target::Deliver`] of a reverse link.
    ReverseDeliver(u32),
    /// The ideal return path of a link delivers its oldest ACK.
    IdealAck(u32),
    /// A link's carrier changes ([`CarrierChange`]).
    Carrier(u32),
    /// The monitor commits its verdict on a link (token: its generation).
    Monitor(u32),
    /// The ARP monitor's periodic run.
    ArpMonitor,
    /// 802.3ad takes a link out of its aggregator or back ([`LacpChange`]): LACPDUs lost.
    Lacp(u32),
    /// The scheduler's periodic work.
    Scheduler,
    /// balance-tlb/-alb send learning packets on every slave (behind an unaware switch).
    Learning,
    /// A machine has handled the frame its CPU took (`[host]`, `[server_host]`; the number: the machine).
    Host(u32),
    /// A link's NIC raises its throttled receive interrupt (`links.N.rx_coalesce_us`; token: the end,
    /// [`nic::End`]).
    NicIrq(u32),
    /// `stop_s` is reached.
    Stop,
}

#[derive(Debug, Clone, Copy)]
struct Event {
    target: Target,
    token: u64,
}

impl Event {
    fn new(target: Target, token: u64) -> Event {
        Event { target, token }
    }

    /// An event for `target` carrying one of its own typed events.
    fn of(target: Target, payload: impl Payload) -> Event {
        Event::new(target, payload.token())
    }
}

/// A component's own events, carried in an event's token: the component names the kinds of
/// event it takes in a type of its own, so that a new kind is a variant there, not a [`Target`]
/// (which names the component).
trait Payload: Copy {
    /// The token that carries it.
    fn token(self) -> u64;
    /// The payload `token` carries (one made by [`Payload::token`]).
    fn of(token: u64) -> Self;
}

/// What happens to a link's carrier ([`Target::Carrier`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CarrierChange {
    /// The carrier goes (`up` false) or comes back on the link itself.
    Wire { up: bool },
    /// The NIC reports that it went or came back, `carrier_latency_ms` later.
    Nic { up: bool },
    /// A silent failure (the carrier stays) starts (`up` false) or ends.
    Silent { up: bool },
}

impl Payload for CarrierChange {
    fn token(self) -> u64 {
        let (kind, up) = match self {
            CarrierChange::Wire { up } => (0, up),
            CarrierChange::Nic { up } => (1, up),
            CarrierChange::Silent { up } => (2, up),
        };
        kind << 1 | u64::from(up)
    }

    fn of(token: u64) -> Self {
        let up = token & 1 == 1;
        match token >> 1 {
            0 => CarrierChange::Wire { up },
            1 => CarrierChange::Nic { up },
            _ => CarrierChange::Silent { up },
        }
    }
}

/// 802.3ad takes a link out of its aggregator or back ([`Target::Lacp`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LacpChange {
    /// LACPDUs stopped: it leaves.
    Leaves,
    /// They came back: it returns.
    Returns,
}

impl Payload for LacpChange {
    fn token(self) -> u64 {
        u64::from(self == LacpChange::Leaves)
    }

    fn of(token: u64) -> Self {
        if token == 1 {
            LacpChange::Leaves
        } else {
            LacpChange::Returns
        }
    }
}

/// Requests `first..first + count` reach the server ([`Target::Arrivals`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Arrivals {
    first: u32,
    count: u32,
}

impl Payload for Arrivals {
    fn token(self) -> u64 {
        u64::from(self.first) << 32 | u64::from(self.count)
    }

    fn of(token: u64) -> Self {
        Arrivals { first: (token >> 32) as u32, count: token as u32 }
    }
}

/// Which end of the fabric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Server,
    Client,
}

/// Checks everything a run would check before it starts: the scheduler's options
/// against the bond's links (e.g. a `primary` that names no link), the workload's limits.
pub fn check(scenario: &Scenario) -> Result<()> {
    scenario.validate()?;
    World::build(scenario).map(drop)
}

/// Runs `scenario` to completion.
pub fn run(scenario: &Scenario) -> Result<RunResult> {
    run_with_progress(scenario, &mut |_| true)
}

/// Runs `scenario`, calling `progress` now and then; it returns `false` to stop the run.
pub fn run_with_progress(scenario: &Scenario, progress: &mut dyn FnMut(&Progress) -> bool) -> Result<RunResult> {
    run_with_capture(scenario, None, progress)
}

/// Runs `scenario` like [`run_with_progress`], writing packet captures if `capture` asks
/// for them ([`crate::capture`]; the result is the same with or without).
pub fn run_with_capture(
    scenario: &Scenario,
    capture: Option<&CaptureOptions>,
    progress: &mut dyn FnMut(&Progress) -> bool,
) -> Result<RunResult> {
    scenario.validate()?;
    let started = Instant::now();
    let mut world = World::build(scenario)?;
    if let Some(options) = capture {
        let links: Vec<capture::LinkInfo> = (world.links.iter().zip(&world.link_names).zip(&world.reverse))
            .map(|((link, name), reverse)| capture::LinkInfo {
                name,
                speed_bps: link.capacity_bps(),
                reverse: reverse.is_some(),
            })
            .collect();
        let c = Capture::new(options, scenario, &world.bond.label, &world.requests, &world.bond.headers, &links)?;
        world.capture = Some(Box::new(c));
    }
    // The guard: past `max_events` the run stops with an error naming the field (checked when
    // progress is reported, every PROGRESS_EVERY events, so the loop itself stays as it is).
    let mut over: Option<Progress> = None;
    let guarded = world.run(&mut |p| {
        if p.events >= scenario.max_events {
            over = Some(*p);
            return false;
        }
        progress(p)
    });
    match (guarded, over) {
        (Err(Error::Interrupted), Some(p)) => Err(over_budget(scenario, &p, "stopped")),
        // A run that ended between two checks past the budget is over it all the same.
        (Ok(()), _) if world.events.processed() > scenario.max_events => {
            Err(over_budget(scenario, &world.progress(), "ended"))
        }
        (outcome, _) => outcome,
    }?;
    if let Some(c) = world.capture.take() {
        c.finish()?;
    }
    Ok(world.finish(scenario, started.elapsed().as_secs_f64()))
}

/// The error of a run stopped by its guard, `max_events` (checked every [`PROGRESS_EVERY`]
/// events while it runs, and once more at its end: `how` it came to a halt, "stopped" by the
/// guard or "ended" on its own between two checks).
fn over_budget(scenario: &Scenario, p: &Progress, how: &str) -> Error {
    let share = if p.total_packets == 0 { 0.0 } else { p.done_packets as f64 / p.total_packets as f64 * 100.0 };
    Error::scenario(
        "max_events",
        format!(
            "the run took more than max_events = {} events ({how} at {} events, simulated time {:.3} s, \
             {share:.1}% of {} packets delivered or lost); raise max_events if it is meant to run this long",
            scenario.max_events,
            p.events,
            p.now.as_secs_f64(),
            p.total_packets,
        ),
    )
}

/// Per-copy bookkeeping of a packet sent on several links (broadcast).
#[derive(Debug, Clone, Copy)]
struct Copies {
    left: u32,
    delivered: bool,
}

/// The client-to-server direction of a link: a rate link's mirror (same speed,
/// wire, queue and random loss, the loss from its own stream; slowdowns and
/// jitter model the sending side and stay forward), or nothing for the thesis's paced interface, whose model has no
/// return traffic: what a client sends then reaches the server at once.
type ReverseLink = Option<RateLink>;

/// Everything one run holds.
struct World {
    events: EventQueue<Event>,
    requests: Vec<Request>,
    /// A closed loop's next held request per client (`workload.arrivals.kind = "closed"`),
    /// stepping by the number of clients; empty for open arrivals.
    next_request: Vec<u32>,
    /// Per flow: the link its latest packet took (`u32::MAX`: none yet) and how often that changed.
    paths: Vec<(u32, u32)>,
    /// MPTCP's subflows per connection (0 for other transports, whose packets the bond places):
    /// on the wire a subflow is a flow of its own ([`transport::mptcp::wire_flow`]), and subflow
    /// `i` of every connection goes over link `i` both ways, bound to its device.
    subflows: u32,
    arrived: u32,
    server: End,
    client: End,
    /// Scratch space for an endpoint's outputs.
    outbox: Vec<Output>,
    /// Idle paced links waking outside the event queue ([`IdleLinks`]).
    idle: IdleLinks,
    /// Whether a frame the bond sends meets nothing between its link and the clients: no
    /// silent port, a LAG-aware switch (which forwards every frame), no failover measures
    /// (`reach_switch` then skips all three; tested once, at build).
    plain_path: bool,
    /// Whether some link releases a frame as it is queued ([`Release::AtEnqueue`], `placement =
    /// "tun"`): only then does a queued packet ask its link (tested once, at build).
    releases_at_enqueue: bool,
    /// Whether idle paced links wake up outside the queue (not while `[trace]` samples
    /// the links at whatever events run).
    lazy_polls: bool,
    /// Whether the links' load in `views` (queue, idle time, slowdown) is kept up to date at
    /// each of their changes: the scheduler reads it ([`Scheduler::reads_link_load`]) or
    /// `[trace]` records the queues. Otherwise nothing reads it and it is left as it was.
    fresh_views: bool,
    /// Resolved packets whose news the server's end has yet to hear, and
    /// whether it is hearing some now (news that breaks while it is being
    /// told waits its turn instead of nesting: a window of drops would
    /// otherwise recurse once per packet).
    resolved: std::collections::VecDeque<Packet>,
    telling: bool,
    /// Whether the server's end listens to the oracle at all.
    hears_resolved: bool,
    /// Whether the transport repairs losses itself (TCP).
    reliable: bool,
    /// The end whose application receives the files: the clients', or the server's in an
    /// upload (`workload.direction = "upload"`: the clients send through the switch).
    app_side: Side,
    /// Where the bond put the latest offload buffer's first segment.
    gso_pick: Pick,
    /// Per side (server, client): whether the end wants to hear of TX completions (TCP
    /// small queues), whether it is handing packets over, and the releases that wait
    /// until it is done.
    hears_tx_done: [bool; 2],
    polling: [bool; 2],
    freed_later: [Vec<Packet>; 2],
    /// ACKs on the ideal return path (`ack_path = "ideal"`), per link, in arrival order.
    ideal_acks: Option<Vec<std::collections::VecDeque<(SimTime, Packet)>>>,
    l3_header: u32,
    /// The bond: scheduler, monitors, the NICs' carrier, the flows' headers and receive links.
    bond: Bond,
    links: Vec<Link>,
    reverse: Vec<ReverseLink>,
    link_names: Vec<String>,
    failure_rngs: Vec<Option<(RandomFailures, Rng)>>,
    /// The metrics at the application's delivery point.
    receiver: Receiver,
    /// The metrics at the clients' wire (before any resequencing).
    wire: WireTap,
    resequencer: Option<Resequencer>,
    copies: rustc_hash::FxHashMap<u64, Copies>,
    total_packets: u64,
    sent: u64,
    next_bond_seq: u64,
    /// Packets on the fabric (either direction).
    in_flight: u64,
    drops_no_link: u64,
    /// Packets the clients sent back, and how many of them reached the server.
    reverse_sent: u64,
    reverse_arrived: u64,
    stopped_at: Option<SimTime>,
    /// Packet captures, when asked for (the hooks cost one test of `None` otherwise).
    capture: Option<Box<Capture>>,
    /// Time series for reports (`[trace]`), when asked for.
    trace: Option<Tracer>,
    /// Per link: how late its NIC reports a carrier change (`carrier_latency_ms`; the carrier
    /// it reports is the bond's, [`Bond::nic_carrier`]).
    carrier_latency: Vec<SimTime>,
    /// The failover measures, when a link can fail (`failover.rs`).
    failover: Option<Box<FailoverLog>>,
    /// Silent port failures (`failures.K.kind = "silent"`).
    silent: SilentPorts,
    /// The miimon period in force, ms (Linux forces 100 ms in some modes).
    miimon_ms: f64,
    /// The switch between the links and the clients (`[switch]`).
    switch: Switch,
    /// Gratuitous ARPs after an active-backup failover (`bond.num_grat_arp`) and their spacing.
    num_grat_arp: u32,
    peer_notif_every: SimTime,
    /// Each slave's MAC address (balance-tlb/-alb keep one per slave and move the bond's to
    /// their active slave, [`network::SlaveMacs`]).
    slave_macs: network::SlaveMacs,
    /// The machines (`[host]`, `[server_host]`); none without them.
    hosts: host::Hosts,
    /// Scratch space for what a host's CPU sends up the stack.
    host_up: Vec<Vec<Packet>>,
    /// The links' NICs that throttle their receive interrupts (`links.N.rx_coalesce_us`); none without.
    nics: nic::NicIrqs,
}

impl World {
    fn is_done(&self) -> bool {
        // (In this order: while packets are on the fabric, as after most events, one test.)
        self.in_flight == 0
            && self.arrived as usize == self.requests.len()
            && self.server.is_idle()
            && self.client.is_idle()
    }

    fn run(&mut self, progress: &mut dyn FnMut(&Progress) -> bool) -> Result<()> {
        self.run_events(progress)?;
        if !self.idle.frozen.is_empty() {
            self.settle_frozen();
        }
        Ok(())
    }

    fn run_events(&mut self, progress: &mut dyn FnMut(&Progress) -> bool) -> Result<()> {
        loop {
            if self.idle.next_poll != NO_POLL {
                match self.events.next_key() {
                    Some(next) => self.idle_polls_before(next),
                    None => self.wake_idle_links(),
                }
            }
            let Some((now, Event { target, token })) = self.events.pop() else { break };
            if let Some(trace) = self.trace.as_mut().filter(|t| now > t.next_sample()) {
                trace.sample(now, &self.links, &self.bond.views);
            }
            match target {
                Target::Arrivals => self.arrive(now, Arrivals::of(token)),
                Target::Server => self.endpoint_timer(now, Side::Server, token),
                Target::Client => self.endpoint_timer(now, Side::Client, token),
                Target::Poll(id) => self.poll(now, id as usize),
                Target::TxDone(id) => self.tx_done(now, id as usize, token as u32),
                Target::Deliver(id) => self.deliver(now, id as usize, token as u32),
                Target::TxIrq(id) => self.tx_irq(now, id as usize),
                Target::ReverseTxDone(id) => self.reverse_tx_done(now, id as usize, token as u32),
                Target::ReverseDeliver(id) => self.reverse_deliver(now, id as usize, token as u32),
                Target::IdealAck(id) => self.ideal_ack(now, id as usize),
                Target::Carrier(id) => self.carrier_change(now, id as usize, CarrierChange::of(token)),
                Target::Monitor(id) => self.commit(now, id as usize, token as u32),
                Target::ArpMonitor => self.arp_tick(now),
                Target::Lacp(id) => self.lacp(now, id as usize, LacpChange::of(token)),
                Target::Scheduler => self.scheduler_tick(now),
                Target::Learning => self.learning_packets(now),
                Target::Host(machine) => self.host_done(now, machine as usize),
                Target::NicIrq(link) => self.nic_interrupt(now, link as usize, token),
                Target::Stop => {
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

    /// The request (the application's flow) a wire flow belongs to: an MPTCP subflow's connection.
    #[inline]
    fn request_of(&self, flow: u32) -> u32 {
        if self.subflows > 0 {
            transport::mptcp::split_flow(flow, self.subflows).0
        } else {
            flow
        }
    }

    #[inline(always)]
    fn refresh_view(&mut self, id: usize, now: SimTime) {
        if !self.fresh_views {
            return;
        }
        self.links[id].refresh_view(now, &mut self.bond.views[id]);
        if let Some(trace) = &mut self.trace {
            trace.queue(id, self.bond.views[id].queue_len_pkts);
        }
    }
}
