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
//! transport's timer token): a component recognises its own stale events, and
//! adding a transport adds no event kind.
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
use crate::link::{DropCause, Enqueued, Link, RateLink, Sent};
use crate::network;
use crate::packet::{Kind, Packet};
use crate::receiver::{Receiver, Resequencer, WireTap};
use crate::result::{self, LinkReport, Reports, RunResult};
use crate::rng::{self, Rng};
use crate::scenario::{self, CaptureOptions, RandomFailures, Scenario};
use crate::switch::{self, Egress, Switch};
use crate::time::SimTime;
use crate::trace::Tracer;
use crate::transport::ipfrag::FragLoss;
use crate::transport::{self, End, Endpoint, Output};
use crate::workload::{self, Request};

/// No idle wake-up pending ([`World::idle_polls`]).
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
    /// Requests reach the server (token: `first << 32 | count`).
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
    /// [`Target::TxDone`] of a reverse (client-to-server) link.
    ReverseTxDone(u32),
    /// [`Target::Deliver`] of a reverse link.
    ReverseDeliver(u32),
    /// The ideal return path of a link delivers its oldest ACK.
    IdealAck(u32),
    /// A link's carrier goes (token 0) or comes back (1); the NIC reports that it went
    /// (2) or came back (3), `carrier_latency_ms` later; a silent failure starts (4) or ends (5).
    Carrier(u32),
    /// The monitor commits its verdict on a link (token: its generation).
    Monitor(u32),
    /// The ARP monitor's periodic run.
    ArpMonitor,
    /// 802.3ad takes a link out of its aggregator (token 1) or back (0): LACPDUs lost.
    Lacp(u32),
    /// The scheduler's periodic work.
    Scheduler,
    /// balance-tlb/-alb send learning packets on every slave (behind an unaware switch).
    Learning,
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

/// What the bond's scheduler is built with: its links' names and speeds, the seed, whether the
/// switch answers LACP.
pub fn bond_context(scenario: &Scenario) -> crate::bond::BuildContext {
    let chunk_bits = f64::from(scenario.chunk_bytes()) * 8.0;
    let links = scenario
        .each_link()
        .map(|(id, spec)| crate::bond::LinkInfo {
            name: spec.link_name(id),
            rate_bps: match &spec.model {
                scenario::LinkModel::Rate(m) => m.rate_mbps * 1e6,
                scenario::LinkModel::Paced(m) => chunk_bits / (m.period_ms / 1e3),
            },
        })
        .collect();
    crate::bond::BuildContext { links, seed: scenario.seed, lacp_partner: scenario.lag() == scenario::Lag::Lacp }
}

/// Why ARP probing needs rate links.
const NO_RETURN_PATH: &str = "ARP probing needs rate links: the paced interface has no return path for the replies";

/// The bond's link monitors as Linux would run them in `mode`: miimon (forced to 100 ms
/// where Linux forces it, [`monitor::miimon_in_force`]) and the ARP monitor, which Linux
/// refuses in 802.3ad, balance-tlb and balance-alb.
fn link_monitors(scenario: &Scenario, mode: &str, links: &[Link]) -> Result<(Monitor, f64, Arp)> {
    let b = &scenario.bond;
    let paced = links.iter().any(|l| matches!(l, Link::Paced(_)));
    if let Some(watch) = &b.link_watch {
        // teamd has no miimon: its link watch is the only monitor.
        if !mode.starts_with("teamd:") {
            return Err(Error::scenario(
                "bond.link_watch",
                format!(
                    "is teamd's: it needs a teamd mode (teamd:random, teamd:roundrobin, teamd:loadbalance), got {mode}"
                ),
            ));
        }
        // (After the mode: under a driver mode the link watch itself is what is out of place.)
        for (field, value) in [("updelay", b.updelay), ("downdelay", b.downdelay), ("arp_interval", b.arp_interval)] {
            if value > 0.0 {
                return Err(Error::scenario(
                    format!("bond.{field}"),
                    "is the bonding driver's: with a teamd link_watch, use its own delays (ethtool's \
                     delay_up / delay_down) or arp_ping",
                ));
            }
        }
        return Ok(match watch {
            scenario::LinkWatch::Ethtool { delay_up, delay_down } => {
                (Monitor::ethtool(*delay_up, *delay_down, links.len()), 0.0, None)
            }
            scenario::LinkWatch::ArpPing { interval, missed_max, .. } => {
                if paced {
                    return Err(Error::scenario("bond.link_watch", NO_RETURN_PATH));
                }
                let ping = ArpMonitor::new(
                    SimTime::from_millis_f64(*interval),
                    *missed_max,
                    1,
                    0,
                    false,
                    ArpMode::TeamdArpPing,
                    links.len(),
                );
                (Monitor::new(0.0, 0.0, 0.0, b.hz, links.len()), 0.0, Some((ping, 1)))
            }
        });
    }
    let miimon = monitor::miimon_in_force(mode, b.miimon);
    let monitor = Monitor::new(miimon, b.updelay, b.downdelay, b.hz, links.len());
    // The summary's period in force: in whole jiffies of `bond.hz`, as the checks run.
    let miimon_ms = monitor.period().as_nanos() as f64 / 1e6;
    if b.arp_interval == 0.0 {
        return Ok((monitor, miimon_ms, None));
    }
    if !monitor::mode_uses_arp(mode) {
        return Err(Error::scenario(
            "bond.arp_interval",
            format!(
                "Linux does not run the ARP monitor in {mode} (bond_mode_uses_arp; setting the mode turns it \
                 off and starts miimon, bond_option_mode_set): use bond.miimon"
            ),
        ));
    }
    if paced {
        return Err(Error::scenario("bond.arp_interval", NO_RETURN_PATH));
    }
    use scenario::ArpValidate as V;
    let validate = match b.arp_validate {
        V::None => 0,
        V::Active => arpmon::VALIDATE_ACTIVE,
        V::Backup => arpmon::VALIDATE_BACKUP,
        V::All => arpmon::VALIDATE_ACTIVE | arpmon::VALIDATE_BACKUP,
        V::Filter => arpmon::FILTER,
        V::FilterActive => arpmon::FILTER | arpmon::VALIDATE_ACTIVE,
        V::FilterBackup => arpmon::FILTER | arpmon::VALIDATE_BACKUP,
    };
    let arp_mode = if mode == "active-backup" { ArpMode::ActiveBackup } else { ArpMode::LoadBalance };
    let targets = b.arp_ip_target.len();
    let arp = ArpMonitor::new(
        // bond_arp_monitor re-arms msecs_to_jiffies(arp_interval) jiffies ahead.
        monitor::jiffies_period(b.arp_interval, b.hz),
        b.arp_missed_max,
        targets,
        validate,
        b.arp_all_targets == scenario::ArpAllTargets::All,
        arp_mode,
        links.len(),
    );
    Ok((monitor, miimon_ms, Some((arp, targets as u32))))
}

/// The spacing of the gratuitous ARPs after a failover: Linux keeps `peer_notif_delay` in
/// miimon ticks (`bond_option_peer_notif_delay_set`: the value over miimon, rounded down) and
/// `bond_should_notify_peers` sends one every `max(1, ticks)` ticks (of whole jiffies); 0 = one
/// per miimon period. Under the ARP monitor (`miimon = 0`, where Linux refuses a
/// `peer_notif_delay`) `bond_activebackup_arp_mon` sends one per ARP monitor tick.
fn peer_notif_every(bond: &scenario::Bond) -> SimTime {
    if bond.miimon == 0.0 {
        return monitor::jiffies_period(bond.arp_interval, bond.hz);
    }
    let ticks = (bond.peer_notif_delay / bond.miimon).floor().max(1.0);
    SimTime(ticks as u64 * monitor::jiffies_period(bond.miimon, bond.hz).0)
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
    arrived: u32,
    server: End,
    client: End,
    /// Scratch space for an endpoint's outputs.
    outbox: Vec<Output>,
    /// Idle paced links' next wake-ups, kept out of the event queue: per link, the key
    /// (`engine::key`) its poll has in the queue's order, or [`NO_POLL`] (not idle, or not
    /// paced); and the smallest of them with its link. See [`World::idle_polls_before`].
    idle_polls: Vec<u128>,
    next_idle_poll: u128,
    next_idle_link: usize,
    /// Per link, the time between its idle wake-ups in nanoseconds when it is always the same
    /// ([`PacedLink::idle_step`]), else 0.
    idle_steps: Vec<u64>,
    /// Whether idle links may be frozen once the run only drains (paced sender, sink, no
    /// trace, nothing between the links and the clients; see [`World::freeze_idle_links`]),
    /// and the frozen ones: per link, the key of its first wake-up not run.
    may_freeze: bool,
    frozen: Vec<(usize, u128)>,
    /// Idle wake-ups counted in bulk, whether counting in bulk is off, and (when a test asks
    /// for it with `Some`) the idle links' wake-up keys after each [`World::idle_polls_before`]:
    /// what the tests check the bulk path by.
    #[cfg(test)]
    bulk_idle_polls: u64,
    #[cfg(test)]
    bulk_off: bool,
    #[cfg(test)]
    idle_log: Option<Vec<Vec<u128>>>,
    /// Whether freezing is off, the links frozen, and the frozen links with a wake-up at the
    /// last event's time ([`World::settle_frozen`]): counted from their step, after the last
    /// event and before it; their first wake-up not run, after it and before it.
    #[cfg(test)]
    freeze_off: bool,
    #[cfg(test)]
    frozen_links: u64,
    #[cfg(test)]
    frozen_ties: [u64; 4],
    /// Whether a frame the bond sends meets nothing between its link and the clients: no
    /// silent port, a LAG-aware switch (which forwards every frame), no failover measures
    /// (`reach_switch` then skips all three; tested once, at build).
    plain_path: bool,
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
}

impl World {
    fn build(scenario: &Scenario) -> Result<World> {
        let seed = scenario.seed;
        let cutter = transport::Cutter::for_scenario(scenario);
        let (requests, clients) = match &scenario.workload {
            scenario::Workload::Requests(w) => {
                let largest = workload::max_file_bytes(&w.file_size);
                if cutter.packets(largest) > u64::from(u32::MAX) {
                    return Err(Error::scenario(
                        "workload.file_size",
                        format!(
                            "a file may be cut into at most {} packets, the largest here needs {}",
                            u32::MAX,
                            cutter.packets(largest)
                        ),
                    ));
                }
                (workload::generate(w, seed), w.clients)
            }
            scenario::Workload::PingPong(p) => (workload::pingpong(p), p.pairs),
        };
        let clients = network::Clients::new(&scenario.network, clients, seed);
        let headers = network::flow_headers(&scenario.network, &clients, &requests, seed);
        let packets_per_flow: Vec<u32> = requests.iter().map(|r| cutter.packets(r.file_bytes) as u32).collect();
        let total_packets = packets_per_flow.iter().map(|&p| u64::from(p)).sum();

        let mut links = Vec::new();
        let mut reverse = Vec::new();
        let mut link_names = Vec::new();
        let mut failure_rngs = Vec::new();
        let mut events = EventQueue::new();
        // Scheduled failures first: at equal times a carrier change precedes everything else.
        for (id, spec) in scenario.each_link() {
            let link = Link::new(scenario, spec, id);
            reverse.push(match &link {
                Link::Rate(l) => Some(l.mirror(seed, id)),
                Link::Paced(_) => None,
            });
            links.push(link);
            link_names.push(spec.link_name(id));
            // Silent failures keep the carrier (`fault::SilentPorts`); flapping is carrier losses.
            for (k, failure) in spec.base.failures.iter().enumerate() {
                let (down, up) = fault::failure_instants(failure, seed, id, k);
                // Silent failures only mark the failover measures' window (tokens 4 and 5).
                let token = if failure.kind == scenario::FailureKind::Carrier { 0 } else { 4 };
                events.schedule(down, Event::new(Target::Carrier(id as u32), token));
                if let Some(up) = up {
                    events.schedule(up, Event::new(Target::Carrier(id as u32), token + 1));
                }
            }
            for (down, up) in spec.base.flapping.iter().flat_map(|f| fault::flapping_instants(f, seed, id)) {
                events.schedule(down, Event::new(Target::Carrier(id as u32), 0));
                events.schedule(up, Event::new(Target::Carrier(id as u32), 1));
            }
            failure_rngs.push(
                spec.base
                    .random_failures
                    .clone()
                    .map(|r| (r, rng::stream(seed, &format!("links.{id}.random_failures")))),
            );
        }
        let resolved = registry::resolve(&scenario.bond.mode, &scenario.bond.options)?;
        let (monitor, miimon_ms, arp) = link_monitors(scenario, resolved.info.name, &links)?;
        let silent = SilentPorts::new(scenario);
        let lag = scenario.lag();
        // LACPDUs are lost only where there are some: an 802.3ad bond with an LACP partner.
        if resolved.info.name == "802.3ad" && lag == scenario::Lag::Lacp {
            let fast = scenario.bond.lacp_rate == scenario::LacpRate::Fast;
            for id in 0..links.len() {
                for (at, change) in silent.lacp_outages(id, seed, fast) {
                    events.schedule(at, Event::new(Target::Lacp(id as u32), u64::from(change > 0)));
                }
            }
        }
        let views = links.iter().map(|l| l.view(SimTime::ZERO, true)).collect();
        let bond = Bond::new(&resolved, &bond_context(scenario), monitor, arp, views, headers)?;
        let resequencer = bond.scheduler.resequences().then(Resequencer::default);
        let clients: Vec<u32> = requests.iter().map(|r| r.client).collect();
        let ends = transport::build(scenario, &clients);

        // Arrivals grouped by time; at time zero they precede the links' and the sender's first turn.
        let mut first = 0;
        while first < requests.len() && requests[first].arrival != workload::PENDING {
            let at = requests[first].arrival;
            let count = requests[first..].iter().take_while(|r| r.arrival == at).count();
            events.schedule(at, Event::new(Target::Arrivals, (first as u64) << 32 | count as u64));
            first += count;
        }
        for (id, link) in links.iter().enumerate() {
            if matches!(link, Link::Paced(_)) {
                events.schedule(SimTime::ZERO, Event::new(Target::Poll(id as u32), 0));
            }
        }

        let mut world = World {
            events,
            paths: vec![(u32::MAX, 0); requests.len()],
            receiver: Receiver::new(&packets_per_flow),
            wire: WireTap::new(requests.len()),
            next_request: match &scenario.workload {
                scenario::Workload::Requests(w) => match w.arrivals {
                    scenario::Arrivals::Closed { active } => {
                        (0..w.clients).map(|c| active.saturating_mul(w.clients).saturating_add(c)).collect()
                    }
                    _ => Vec::new(),
                },
                scenario::Workload::PingPong(_) => Vec::new(),
            },
            requests,
            arrived: 0,
            server: ends.server,
            client: ends.client,
            outbox: Vec::new(),
            idle_polls: vec![NO_POLL; scenario.link_count()],
            next_idle_poll: NO_POLL,
            next_idle_link: 0,
            idle_steps: links
                .iter()
                .map(|l| match l {
                    Link::Paced(link) => link.idle_step().map_or(0, |step| step.0),
                    Link::Rate(_) => 0,
                })
                .collect(),
            may_freeze: false,
            frozen: Vec::new(),
            #[cfg(test)]
            bulk_idle_polls: 0,
            #[cfg(test)]
            bulk_off: false,
            #[cfg(test)]
            idle_log: None,
            #[cfg(test)]
            freeze_off: false,
            #[cfg(test)]
            frozen_links: 0,
            #[cfg(test)]
            frozen_ties: [0; 4],
            lazy_polls: scenario.trace.link_ms.is_none(),
            fresh_views: true,
            plain_path: false,
            resolved: std::collections::VecDeque::new(),
            telling: false,
            hears_resolved: false,
            reliable: false,
            app_side: if scenario.upload() { Side::Server } else { Side::Client },
            gso_pick: Pick::Drop,
            hears_tx_done: [false; 2],
            polling: [false; 2],
            freed_later: [Vec::new(), Vec::new()],
            ideal_acks: match &scenario.sender {
                scenario::Sender::Tcp(t) if t.ack_path == scenario::AckPath::Ideal => {
                    Some(vec![std::collections::VecDeque::new(); scenario.link_count()])
                }
                _ => None,
            },
            l3_header: scenario.l3_header_bytes(),
            links,
            reverse,
            link_names,
            failure_rngs,
            resequencer,
            copies: rustc_hash::FxHashMap::default(),
            total_packets,
            sent: 0,
            next_bond_seq: 0,
            in_flight: 0,
            drops_no_link: 0,
            reverse_sent: 0,
            reverse_arrived: 0,
            stopped_at: None,
            capture: None,
            trace: Tracer::new(&scenario.trace, scenario.link_count()),
            carrier_latency: scenario
                .each_link()
                .map(|(_, spec)| SimTime::from_millis_f64(spec.base.carrier_latency_ms))
                .collect(),
            failover: None,
            silent,
            miimon_ms,
            switch: Switch::new(&scenario.switch, lag, scenario.link_count()),
            num_grat_arp: scenario.bond.num_grat_arp,
            peer_notif_every: peer_notif_every(&scenario.bond),
            slave_macs: network::SlaveMacs::new(
                network::parse_mac("network.server_mac", &scenario.network.server_mac)?,
                scenario.link_count(),
                bond.own_macs(),
            ),
            bond,
        };
        if world.bond.own_macs() {
            let mut notices = Vec::new();
            world.bond.follow_active_mac(&mut notices);
            for notice in notices {
                world.notice(SimTime::ZERO, notice);
            }
            // The learning packets come from the ALB timer, which `bond_open` starts only with
            // `tlb_dynamic_lb` or in balance-alb (its periodic work is the scheduler's tick, or RLB).
            let alb_timer =
                world.bond.scheduler.tick_interval().is_some() || world.bond.scheduler.receive() == Receive::PerClient;
            if alb_timer && !world.switch.aware() {
                world.events.schedule(LP_FIRST, Event::new(Target::Learning, 0));
            }
        }
        if world.bond.arp.is_some() {
            // bond_open queues the ARP monitor's work at once. (teamd's arp_ping starts its ports down.)
            world.events.schedule(SimTime::ZERO, Event::new(Target::ArpMonitor, 0));
            for id in 0..world.links.len() {
                world.apply_verdict(SimTime::ZERO, id);
            }
        }
        world.bond.start_notified(SimTime::ZERO);
        world.hears_resolved = world.server.hears_resolved();
        world.reliable = world.server.reliable() || world.client.reliable();
        world.hears_tx_done = [world.server.hears_tx_done(), world.client.hears_tx_done()];
        let can_fail = scenario
            .each_link()
            .any(|(_, s)| !s.base.failures.is_empty() || s.base.random_failures.is_some() || s.base.flapping.is_some());
        if can_fail {
            let log = FailoverLog::new(world.links.len(), world.requests.len(), world.reliable);
            world.failover = Some(Box::new(log));
        }
        world.plain_path = !world.silent.any() && world.switch.aware() && world.failover.is_none();
        world.fresh_views = world.bond.scheduler.reads_link_load() || world.trace.is_some();
        world.may_freeze = world.lazy_polls
            && world.plain_path
            && world.trace.is_none()
            && world.resequencer.is_none()
            && world.next_request.is_empty()
            && matches!((&world.server, &world.client), (End::PacedSender(_), End::Sink(_)));
        let mut out = std::mem::take(&mut world.outbox);
        world.server.start(SimTime::ZERO, &mut out);
        world.drain(SimTime::ZERO, Side::Server, &mut out);
        world.client.start(SimTime::ZERO, &mut out);
        world.drain(SimTime::ZERO, Side::Client, &mut out);
        world.outbox = out;
        if let Some(every) = world.bond.scheduler.tick_interval() {
            world.events.schedule(every, Event::new(Target::Scheduler, 0));
        }
        if let Some(stop) = scenario.stop_s {
            world.events.schedule(SimTime::from_secs_f64(stop), Event::new(Target::Stop, 0));
        }
        for id in 0..world.links.len() {
            world.schedule_random_failure(id, SimTime::ZERO, true);
        }
        world.receiver.measure_from = SimTime::from_secs_f64(scenario.measure_from_s.unwrap_or(0.0));
        Ok(world)
    }

    fn is_done(&self) -> bool {
        // (In this order: while packets are on the fabric, as after most events, one test.)
        self.in_flight == 0
            && self.arrived as usize == self.requests.len()
            && self.server.is_idle()
            && self.client.is_idle()
    }

    fn run(&mut self, progress: &mut dyn FnMut(&Progress) -> bool) -> Result<()> {
        self.run_events(progress)?;
        if !self.frozen.is_empty() {
            self.settle_frozen();
        }
        Ok(())
    }

    fn run_events(&mut self, progress: &mut dyn FnMut(&Progress) -> bool) -> Result<()> {
        loop {
            if self.next_idle_poll != NO_POLL {
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
                Target::Arrivals => self.arrive(now, (token >> 32) as u32, token as u32),
                Target::Server => self.endpoint_timer(now, Side::Server, token),
                Target::Client => self.endpoint_timer(now, Side::Client, token),
                Target::Poll(id) => self.poll(now, id as usize),
                Target::TxDone(id) => self.tx_done(now, id as usize, token as u32),
                Target::Deliver(id) => self.deliver(now, id as usize, token as u32),
                Target::ReverseTxDone(id) => self.reverse_tx_done(now, id as usize, token as u32),
                Target::ReverseDeliver(id) => self.reverse_deliver(now, id as usize, token as u32),
                Target::IdealAck(id) => self.ideal_ack(now, id as usize),
                Target::Carrier(id) if token >= 4 => self.silent_failure(now, id as usize, token == 5),
                Target::Carrier(id) if token >= 2 => self.nic_carrier(now, id as usize, token == 3),
                Target::Carrier(id) => self.carrier(now, id as usize, token == 1),
                Target::Monitor(id) => self.commit(now, id as usize, token as u32),
                Target::ArpMonitor => self.arp_tick(now),
                Target::Lacp(id) => self.lacp(now, id as usize, token == 1),
                Target::Scheduler => self.scheduler_tick(now),
                Target::Learning => self.learning_packets(now),
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

    /// Carries out what an endpoint asked for, in order.
    fn drain(&mut self, now: SimTime, side: Side, out: &mut Vec<Output>) {
        for output in out.drain(..) {
            match output {
                Output::Timer { at, token } => {
                    let target = if side == Side::Server { Target::Server } else { Target::Client };
                    self.events.schedule(at, Event::new(target, token));
                }
                // The metrics watch the receiving application's deliveries (a ping-pong
                // server's reads are counted by its application).
                Output::Deliver(packet) if side == self.app_side => self.deliver_app(now, &packet),
                Output::Deliver(_) => {}
                Output::Lost(packet, cause) => self.receiver.lost_datagram(&packet, cause),
                Output::Aborted(flow) => {
                    // A closed loop's client moves on to its next request, as after any error.
                    let ended = self.receiver.flows()[flow as usize].resolved();
                    self.receiver.abandon(flow);
                    if let Some(log) = self.failover.as_deref_mut() {
                        log.abandoned(now, flow as usize);
                    }
                    self.flow_may_have_ended(now, flow, ended);
                }
            }
        }
    }

    /// Runs `f` on one end, carries out its outputs, then puts on the fabric,
    /// one by one, the packets it wants to send.
    fn with_end(&mut self, now: SimTime, side: Side, f: impl FnOnce(&mut End, &mut Vec<Output>)) {
        match side {
            Side::Server => f(&mut self.server, &mut self.outbox),
            Side::Client => f(&mut self.client, &mut self.outbox),
        }
        if !self.outbox.is_empty() {
            let mut out = std::mem::take(&mut self.outbox);
            self.drain(now, side, &mut out);
            self.outbox = out;
        }
        let nested = std::mem::replace(&mut self.polling[side as usize], true);
        match side {
            Side::Server => loop {
                // The thesis's paced sender is asked once per packet of every tick: its call
                // inlines here (13 instructions and 2-3% of the time per packet of `balanced rr`);
                // other ends go through `End`.
                let packet = match &mut self.server {
                    End::PacedSender(s) => s.poll_transmit(now),
                    end => end.poll_transmit(now),
                };
                let Some(packet) = packet else { break };
                self.dispatch(now, packet);
            },
            Side::Client => {
                while let Some(packet) = self.client.poll_transmit(now) {
                    self.send_back(now, packet);
                }
            }
        }
        self.polling[side as usize] = nested;
        if !nested {
            self.tell_freed(now, side);
        }
    }

    fn arrive(&mut self, now: SimTime, first: u32, count: u32) {
        for flow in first..first + count {
            let file = self.requests[flow as usize].file_bytes;
            let mut notices = Vec::new();
            self.bond.flow_arrived(now, flow as usize, &mut notices);
            if let Some(log) = self.failover.as_deref_mut() {
                log.started(now, flow as usize);
            }
            for notice in notices {
                self.notice(now, notice);
            }
            // The receiving end opens first (its data can arrive at once on a paced link).
            let (first, second) = match self.app_side {
                Side::Client => (Side::Client, Side::Server),
                Side::Server => (Side::Server, Side::Client),
            };
            self.with_end(now, first, |end, out| end.open(now, flow, file, out));
            self.with_end(now, second, |end, out| end.open(now, flow, file, out));
        }
        self.arrived += count;
    }

    /// The application at the client receives `packet`.
    #[inline(always)]
    fn deliver_app(&mut self, now: SimTime, packet: &Packet) {
        let closed_loop = !self.next_request.is_empty();
        let ended = closed_loop && self.receiver.flows()[packet.flow as usize].resolved();
        let first = self.receiver.deliver(now, packet).is_some();
        if let Some(log) = self.failover.as_deref_mut().filter(|_| first) {
            log.delivered(now, packet);
        }
        if closed_loop {
            self.flow_may_have_ended(now, packet.flow, ended);
        }
    }

    /// In a closed loop, a client whose request just ended (every packet arrived or was lost)
    /// asks for its next one at once.
    fn flow_may_have_ended(&mut self, now: SimTime, flow: u32, had_ended: bool) {
        if self.next_request.is_empty() || had_ended || !self.receiver.flows()[flow as usize].resolved() {
            return;
        }
        let client = self.requests[flow as usize].client as usize;
        let next = self.next_request[client];
        if (next as usize) < self.requests.len() {
            self.requests[next as usize].arrival = now;
            self.next_request[client] = next.saturating_add(self.next_request.len() as u32);
            self.events.schedule(now, Event::new(Target::Arrivals, u64::from(next) << 32 | 1));
        }
    }

    #[inline(always)]
    fn endpoint_timer(&mut self, now: SimTime, side: Side, token: u64) {
        self.with_end(now, side, |end, out| end.on_timer(now, token, out));
    }

    /// Hands a packet from the server's end to the bond.
    #[inline(always)]
    fn dispatch(&mut self, now: SimTime, mut packet: Packet) {
        self.sent += 1;
        packet.bond_seq = self.next_bond_seq;
        self.next_bond_seq += 1;
        let flow = packet.flow as usize;
        // The rest of an offload buffer goes where its first segment went: the bond
        // (`bond_start_xmit`) places whole skbs, the NIC cuts them into frames.
        let pick = if packet.gso == 1 {
            self.gso_pick
        } else {
            // The bond sees the buffer's size: its segments and their headers.
            let segments = u32::from(packet.gso.max(1));
            let fragment_headers;
            let info = PacketInfo {
                bytes: packet.bytes * segments,
                l3_bytes: packet.l3_bytes(self.l3_header) * segments,
                headers: if packet.is_fragment() {
                    fragment_headers = self.bond.headers[flow].fragment();
                    &fragment_headers
                } else {
                    &self.bond.headers[flow]
                },
            };
            let pick = self.bond.scheduler.pick(&info, &BondView { now, links: &self.bond.views });
            self.gso_pick = pick;
            pick
        };
        if let Some(trace) = &mut self.trace {
            trace.sent(now, &packet, if let Pick::Link(id) = pick { Some(id) } else { None });
        }
        match pick {
            Pick::Link(id) => {
                if self.app_side == Side::Client {
                    self.note_path(flow, id);
                }
                self.enqueue(now, id, &packet);
            }
            Pick::All => {
                // bond_xmit_broadcast: every slave that `bond_slave_is_up` with `BOND_LINK_UP`.
                let targets: Vec<usize> = (0..self.links.len()).filter(|&id| self.bond.views[id].can_tx()).collect();
                if targets.is_empty() {
                    self.freed(now, &packet);
                    self.lose(now, packet, DropCause::NoLink);
                    return;
                }
                if targets.len() > 1 {
                    // Each copy is a clone of the sender's buffer: its own memory is the
                    // sender's no longer (copies are not tracked one by one).
                    self.freed(now, &packet);
                    self.copies.insert(packet.bond_seq, Copies { left: targets.len() as u32, delivered: false });
                }
                for id in targets {
                    self.enqueue(now, id, &packet);
                }
            }
            Pick::Drop => {
                self.freed(now, &packet);
                self.lose(now, packet, DropCause::NoLink);
            }
        }
    }

    /// The data of `flow` took link `id` (the bond's pick, or the switch's for an upload).
    fn note_path(&mut self, flow: usize, id: usize) {
        let path = &mut self.paths[flow];
        if path.0 != id as u32 {
            path.1 += u32::from(path.0 != u32::MAX);
            path.0 = id as u32;
        }
    }

    /// Tells one end of the releases that waited while it was handing packets over.
    fn tell_freed(&mut self, now: SimTime, side: Side) {
        while let Some(packet) = self.freed_later[side as usize].pop() {
            self.with_end(now, side, |end, out| end.on_tx_done(now, &packet, out));
        }
    }

    /// The server's buffer of `packet` is released: sent by its link (TX completion),
    /// or dropped below the transport. Feeds TCP small queues (`tcp_wfree`).
    #[inline(always)]
    fn freed(&mut self, now: SimTime, packet: &Packet) {
        // (Tested in this order, the common case — nobody listens — costs one test.)
        if self.hears_tx_done[Side::Server as usize]
            && (self.copies.is_empty() || !self.copies.contains_key(&packet.bond_seq))
        {
            self.release(now, Side::Server, packet);
        }
    }

    /// `side`'s buffer of `packet` is released. While that end is handing packets
    /// over, the news waits until it is done.
    fn release(&mut self, now: SimTime, side: Side, packet: &Packet) {
        if !self.hears_tx_done[side as usize] {
            return;
        }
        if self.polling[side as usize] {
            self.freed_later[side as usize].push(*packet);
            return;
        }
        self.with_end(now, side, |end, out| end.on_tx_done(now, packet, out));
    }

    /// Puts `packet` in link `id`'s queue. (By reference down to the queue's `push_back`: passed
    /// by value, the 64-byte packet was copied on the stack twice more per send.)
    #[inline(always)]
    fn enqueue(&mut self, now: SimTime, id: usize, packet: &Packet) {
        // The ARP monitor's probes are on the fabric but no part of the workload's traffic.
        let app = !packet.is_arp();
        self.in_flight += u64::from(app);
        match self.links[id].enqueue(now, packet) {
            Enqueued::Started(done) => {
                let Link::Rate(link) = &self.links[id] else { unreachable!("paced links never start at enqueue") };
                let token = u64::from(link.epoch());
                self.events.schedule(done, Event::new(Target::TxDone(id as u32), token));
            }
            // (Tested in this order, a run without idle paced links pays one test.)
            Enqueued::Waiting if self.next_idle_poll != NO_POLL && self.idle_polls[id] != NO_POLL => {
                self.wake_idle_link(id)
            }
            Enqueued::Waiting => {}
            Enqueued::Dropped(cause) if app => {
                self.in_flight -= 1;
                self.freed(now, packet);
                self.copy_lost(now, *packet, cause);
            }
            // A probe that cannot leave is a missed probe.
            Enqueued::Dropped(_) => {}
        }
        self.refresh_view(id, now);
    }

    fn poll(&mut self, now: SimTime, id: usize) {
        let Link::Paced(link) = &mut self.links[id] else { return };
        let (sent, next) = link.poll(now);
        if self.lazy_polls && sent.is_none() {
            // It had nothing to send: its next wake-up finds nothing either unless a packet
            // comes first, so it waits out of the queue, in the place it would have had in it.
            // (A link that just sent its last packet keeps its next wake-up in the queue: in
            // a steady flow the next packet comes before it, and one idle wake-up is cheaper
            // than taking it out and putting it back for every packet.)
            let key = engine::key(next, self.events.reserve());
            if !self.frozen.is_empty() {
                self.frozen.push((id, key)); // (the run only drains: it stays idle)
            } else {
                self.idle_polls[id] = key;
                if key < self.next_idle_poll {
                    (self.next_idle_poll, self.next_idle_link) = (key, id);
                }
            }
        } else {
            self.events.schedule(next, Event::new(Target::Poll(id as u32), 0));
        }
        self.refresh_view(id, now);
        if let Some(packet) = &sent {
            if let Some(c) = self.capture.as_deref_mut() {
                c.link_sent(now, id, packet, self.slave_macs.of(id));
            }
            if let Some(trace) = &mut self.trace {
                trace.left(now, packet);
            }
            self.in_flight -= 1;
            self.freed(now, packet);
            self.reach_switch(now, id, packet);
        }
    }

    /// Runs, in the queue's order, the idle paced links' wake-ups that come before the event
    /// of key `next`. The thesis's interface (`interface.py`) wakes every period whether or
    /// not it has something to send; a wake-up with nothing to send changes only the link's
    /// own counters and view (`PacedLink::poll` with an empty queue) and schedules the next
    /// one, so it runs here, outside the event queue, at its own time and in its place:
    /// each reserves the sequence number its successor would have taken, so every event
    /// keeps its place among those of its instant, and every figure stays as it was. Links
    /// idling at one fixed step are counted in bulk ([`World::skip_idle_polls_before`]), and
    /// once the run only drains, once at its end ([`World::freeze_idle_links`]).
    fn idle_polls_before(&mut self, next: u128) {
        #[cfg(test)]
        let bulk_off = self.bulk_off;
        #[cfg(not(test))]
        let bulk_off = false;
        while self.next_idle_poll < next {
            // (The bulk path's first test here: most runs of this loop wake one link once.)
            let step = self.idle_steps[self.next_idle_link];
            let twice = step != 0 && engine::key_time(self.next_idle_poll).0 + step < engine::key_time(next).0;
            if twice && !bulk_off && self.skip_idle_polls_before(next, step) {
                continue;
            }
            let (at, id) = (engine::key_time(self.next_idle_poll), self.next_idle_link);
            let Link::Paced(link) = &mut self.links[id] else { unreachable!("only paced links wait idle") };
            let (sent, following) = link.poll(at);
            debug_assert!(sent.is_none(), "an idle link sends nothing");
            self.idle_polls[id] = engine::key(following, self.events.reserve());
            self.refresh_idle_view(id, at);
            self.find_next_idle_poll();
        }
        #[cfg(test)]
        if let Some(log) = &mut self.idle_log {
            log.push(self.idle_polls.clone());
        }
    }

    /// Counts in bulk, without running them one by one, the idle wake-ups of the links that
    /// wake at the first idle link's fixed step `d` (`step`, [`PacedLink::idle_step`]), up to the
    /// first wake-up of another idle link or the event of key `next`, whichever comes first
    /// (the bound, at time `T`), where the first link wakes at least twice before it;
    /// returns whether it did (otherwise [`World::idle_polls_before`] runs the first
    /// wake-up alone).
    ///
    /// Why the result is the same as running them in the queue's order: with one step `d`,
    /// these links take turns in a fixed cycle. Each link's wake-up is due at most `d` after
    /// the last wake-up run, so the link just run (the first) comes back after all the
    /// others (on a tie in time, their sequence numbers are the older). In the order of their
    /// keys `L_0, …, L_{n-1}`, link `j` at time `t_j` therefore wakes `R_j = 1 +
    /// ⌊(T − t_j − 1) / d⌋` times before the bound (from its second wake-up its sequence
    /// number is newer than the bound's, so a wake-up at `T` itself comes after it), and its
    /// last wake-up is number `Σ_k min(R_k, R_j − 1) + j` of the `Σ_k R_k` run: the
    /// sequence number it reserves is that far from the first reserved. When they all wake at
    /// one time (the common case: links of one period fed by one sender), that is
    /// `n (R − 1) + j`.
    #[inline(never)]
    fn skip_idle_polls_before(&mut self, next: u128, step: u64) -> bool {
        if self.may_freeze && self.freeze_idle_links() {
            return true;
        }
        // One scan: the links at this step in the order of their keys (a few: an insertion sort
        // on the stack; with more than `BULK_LINKS` they run one by one), and the first key of
        // the others, which bounds the cycle. (Every idle link at this step is in the cycle: it
        // is due at most `d` after the first, before the bound.)
        let mut keys = [NO_POLL; BULK_LINKS];
        let mut ids = [0u32; BULK_LINKS];
        let (mut n, mut others) = (0, NO_POLL);
        for (id, (&key, &link_step)) in self.idle_polls.iter().zip(&self.idle_steps).enumerate() {
            if link_step != step {
                others = others.min(key);
            } else if key != NO_POLL {
                if n == BULK_LINKS {
                    return false;
                }
                let mut pos = n;
                while pos > 0 && keys[pos - 1] > key {
                    (keys[pos], ids[pos]) = (keys[pos - 1], ids[pos - 1]);
                    pos -= 1;
                }
                (keys[pos], ids[pos]) = (key, id as u32);
                n += 1;
            }
        }
        let (t0, end) = (engine::key_time(keys[0]).0, engine::key_time(next.min(others)).0);
        if t0 + step >= end {
            return false;
        }
        let mut wakes = [0u64; BULK_LINKS];
        let (mut count, mut at) = (0, u64::MAX);
        for j in 0..n {
            // (Links on one grid wake at the same times: one division for them all.)
            let t = engine::key_time(keys[j]).0;
            debug_assert!(t < end, "every link at this step is due before the bound");
            wakes[j] = if t == at { wakes[j - 1] } else { 1 + (end - t - 1) / step };
            at = t;
            count += wakes[j];
        }
        let first_seq = self.events.reserve_many(count);
        let one_time = at == t0;
        let mut first = others;
        for j in 0..n {
            let mine = wakes[j];
            let place = if one_time {
                n as u64 * (mine - 1) + j as u64
            } else {
                j as u64 + wakes[..n].iter().map(|&other| other.min(mine - 1)).sum::<u64>()
            };
            let id = ids[j] as usize;
            let last = SimTime(engine::key_time(keys[j]).0 + (mine - 1) * step);
            let Link::Paced(link) = &mut self.links[id] else { unreachable!("only paced links wait idle") };
            let following = link.skip_idle_polls(mine, last, SimTime(step));
            let key = engine::key(following, first_seq + place);
            self.idle_polls[id] = key;
            if key < first {
                (first, self.next_idle_link) = (key, id);
            }
            self.refresh_idle_view(id, last);
        }
        // The next idle wake-up: one of these, or else the others' first, found by a scan.
        if first < others {
            self.next_idle_poll = first;
        } else {
            self.find_next_idle_poll();
        }
        #[cfg(test)]
        {
            self.bulk_idle_polls += count;
        }
        true
    }

    /// Freezes the idle links when the run only drains, and returns whether it did: every
    /// request has arrived and the paced sender has sent everything, and all that waits in the
    /// queue is the wake-ups of links with packets left, each waking at a fixed step no other
    /// link has. Then no link is given a packet again, so the idle links stay idle to the end;
    /// their wake-ups change nothing but their own counts, which are made once, at the end
    /// ([`World::settle_frozen`]). (The sequence numbers they would have reserved are not:
    /// the events that remain keep their order among themselves.)
    fn freeze_idle_links(&mut self) -> bool {
        if self.arrived as usize != self.requests.len() || !self.server.is_idle() || self.capture.is_some() {
            return false;
        }
        #[cfg(test)]
        if self.freeze_off || self.idle_log.is_some() {
            return false; // (the key log compares keys: frozen links have none)
        }
        let steps = &self.idle_steps;
        let own_step = |id: usize| steps[id] != 0 && steps.iter().filter(|&&s| s == steps[id]).count() == 1;
        let drains = self.events.pending().all(|e| matches!(e.target, Target::Poll(id) if own_step(id as usize)));
        let idle_fixed = self.idle_polls.iter().zip(steps).all(|(&key, &step)| key == NO_POLL || step != 0);
        if !(drains && idle_fixed) {
            return false;
        }
        for (id, key) in self.idle_polls.iter_mut().enumerate() {
            if *key != NO_POLL {
                self.frozen.push((id, std::mem::replace(key, NO_POLL)));
            }
        }
        #[cfg(test)]
        {
            self.frozen_links += self.frozen.len() as u64;
        }
        (self.next_idle_poll, self.next_idle_link) = (NO_POLL, 0);
        true
    }

    /// Counts the frozen links' wake-ups ([`World::freeze_idle_links`]) before the last event
    /// run, at time `T`: the wake-up of a link at its own fixed step `d_L`, whose key was
    /// reserved by that link's wake-up `d_L` before. A frozen link wakes at each of its steps
    /// `d` from its first wake-up not run, at `t`, and the wake-ups before `T` come before the
    /// last event; one at `T` itself comes before it when its key is the older, that is when
    /// it was reserved first: by the link's wake-up at `T − d`, before `T − d_L` when
    /// `d > d_L` (the two steps differ). The last event's link is the one that woke at `T`
    /// with the least step: of the wake-ups run at `T`, the last holds the newest key, the one
    /// reserved last, at `T − d_L`.
    fn settle_frozen(&mut self) {
        let end = self.events.now().0;
        let last_step = (self.links.iter().zip(&self.idle_steps))
            .filter_map(|(link, &step)| match link {
                Link::Paced(link) if step != 0 && link.next_poll().0 == end + step => Some(step),
                _ => None,
            })
            .min()
            .expect("the last event is a wake-up of a link at a fixed step");
        for (id, key) in std::mem::take(&mut self.frozen) {
            let (t, step) = (engine::key_time(key).0, self.idle_steps[id]);
            if t > end {
                continue;
            }
            let on_grid = (end - t).is_multiple_of(step);
            let at_end = on_grid && step > last_step;
            #[cfg(test)]
            if on_grid {
                self.frozen_ties[2 * usize::from(t == end) + usize::from(at_end)] += 1;
            }
            let wakes = (end - t).div_ceil(step) + u64::from(at_end);
            if wakes > 0 {
                let at = SimTime(t + (wakes - 1) * step);
                let Link::Paced(link) = &mut self.links[id] else { unreachable!("only paced links wait idle") };
                link.skip_idle_polls(wakes, at, SimTime(step));
                self.refresh_idle_view(id, at);
            }
        }
    }

    /// The view of link `id` after an idle wake-up at `at` (its queue stays empty, so the
    /// trace's queue record, [`World::refresh_view`]'s other half, has nothing new).
    #[inline(always)]
    fn refresh_idle_view(&mut self, id: usize, at: SimTime) {
        if self.fresh_views {
            self.links[id].refresh_view(at, &mut self.bond.views[id]);
        }
    }

    /// Finds the first of the idle links' wake-ups.
    fn find_next_idle_poll(&mut self) {
        (self.next_idle_poll, self.next_idle_link) = (NO_POLL, 0);
        for (id, &key) in self.idle_polls.iter().enumerate() {
            if key < self.next_idle_poll {
                (self.next_idle_poll, self.next_idle_link) = (key, id);
            }
        }
    }

    /// A packet waits on idle paced link `id`: its pending wake-up goes into the event queue.
    fn wake_idle_link(&mut self, id: usize) {
        let key = std::mem::replace(&mut self.idle_polls[id], NO_POLL);
        let poll = Event::new(Target::Poll(id as u32), 0);
        self.events.schedule_reserved(engine::key_time(key), key as u64, poll);
        if key == self.next_idle_poll {
            self.find_next_idle_poll();
        }
    }

    /// Nothing else is scheduled: the idle links wake up in the queue again, as they would
    /// have (a run that never ends this way meets its guard, `max_events`).
    fn wake_idle_links(&mut self) {
        for id in 0..self.idle_polls.len() {
            if self.idle_polls[id] != NO_POLL {
                self.wake_idle_link(id);
            }
        }
    }

    fn tx_done(&mut self, now: SimTime, id: usize, epoch: u32) {
        let Link::Rate(link) = &mut self.links[id] else { return };
        if link.epoch() != epoch {
            return; // the carrier went while this packet was being sent
        }
        let Sent { packet, arrival, next } = link.tx_done(now);
        if let Some(c) = self.capture.as_deref_mut().filter(|_| !packet.is_arp()) {
            c.link_sent(now, id, &packet, self.slave_macs.of(id));
        }
        if let Some(done) = next {
            self.events.schedule(done, Event::new(Target::TxDone(id as u32), u64::from(epoch)));
        }
        if packet.is_arp() {
            // A probe on the wire reaches the switch, unless the wire loses it (a missed probe).
            if let Some(arrival) = arrival {
                let deliver = Event::new(Target::Deliver(id as u32), u64::from(epoch));
                self.events.schedule_ranked(arrival, id as u64, deliver);
            }
            return;
        }
        if let Some(trace) = &mut self.trace {
            trace.left(now, &packet);
        }
        self.freed(now, &packet);
        match arrival {
            Some(arrival) => {
                // Packets reaching the clients at one instant are taken in the order the bond sent them.
                let rank = packet.bond_seq << 12 | id as u64;
                let deliver = Event::new(Target::Deliver(id as u32), u64::from(epoch));
                self.events.schedule_ranked(arrival, rank, deliver);
                self.refresh_view(id, now);
            }
            None => {
                // Lost on the wire (counted by the link): known now, like a copy lost with the carrier.
                self.refresh_view(id, now);
                self.in_flight -= 1;
                self.copy_lost(now, packet, DropCause::Random);
            }
        }
    }

    fn deliver(&mut self, now: SimTime, id: usize, epoch: u32) {
        let Link::Rate(link) = &mut self.links[id] else { return };
        if link.epoch() != epoch {
            return; // lost with the carrier, counted then
        }
        let packet = link.arrive();
        if packet.is_arp() {
            self.arp_at_switch(now, id, packet);
            return;
        }
        self.in_flight -= 1;
        self.reach_switch(now, id, &packet);
    }

    /// A copy of `packet` reaches the switch port of link `id`: a silent failure of the port
    /// drops it (the switch never sees it), else the switch forwards it to the client or
    /// drops it there (a port that spanning tree keeps from forwarding).
    #[inline(always)]
    fn reach_switch(&mut self, now: SimTime, id: usize, packet: &Packet) {
        if !self.plain_path {
            if self.silent.drops(id, now, true) {
                self.links[id].record_drop(DropCause::Silent);
                self.copy_lost(now, *packet, DropCause::Silent);
                return;
            }
            if !self.switch.ingress(id, self.slave_macs.of(id), now) {
                self.copy_lost(now, *packet, DropCause::SwitchPort);
                return;
            }
            self.failover_arrival(now, id, packet);
        }
        self.arrived_at_client(now, id, packet);
    }

    /// A copy of `packet` reached the clients' wire over link `id` (the failover measures).
    fn failover_arrival(&mut self, now: SimTime, id: usize, packet: &Packet) {
        if let Some(log) = self.failover.as_deref_mut() {
            log.arrived(now, id, packet);
        }
    }

    /// A copy of `packet` reached the client's wire at `now`.
    #[inline(always)]
    fn arrived_at_client(&mut self, now: SimTime, id: usize, packet: &Packet) {
        if let Some(c) = self.capture.as_deref_mut() {
            c.client_received(now, packet, self.slave_macs.of(id));
        }
        if let Some(c) = (!self.copies.is_empty()).then(|| self.copies.get_mut(&packet.bond_seq)).flatten() {
            c.left -= 1;
            let first = !c.delivered;
            c.delivered = true;
            if c.left == 0 {
                self.copies.remove(&packet.bond_seq);
            }
            if !first {
                if packet.is_data() {
                    self.receiver.duplicate(packet.flow);
                }
                if self.reliable {
                    // A real receiver sees the extra copy (and TCP reports it as a D-SACK).
                    self.with_end(now, Side::Client, |end, out| end.on_packet(now, *packet, out));
                }
                return;
            }
        }
        if packet.is_data() {
            self.wire_arrival(now, packet);
        }
        match self.resequencer.as_mut() {
            // The sink's every packet goes to the application at once: deliver it without the round trip.
            None if matches!(self.client, End::Sink(_)) => self.deliver_app(now, packet),
            None => self.with_end(now, Side::Client, |end, out| end.on_packet(now, *packet, out)),
            Some(reseq) => {
                for p in reseq.arrive(*packet) {
                    self.with_end(now, Side::Client, |end, out| end.on_packet(now, p, out));
                }
            }
        }
        if self.hears_resolved {
            self.tell_resolved(now, packet);
        }
    }

    /// A data packet reached the receiving host's wire (the metrics' wire tap).
    #[inline]
    fn wire_arrival(&mut self, now: SimTime, packet: &Packet) {
        let before = self.wire.out_of_order;
        self.wire.arrive(packet);
        if let Some(trace) = &mut self.trace {
            trace.arrived(now, packet, self.wire.out_of_order > before);
        }
    }

    /// A client's packet reached the server: an ACK, or an upload's data (past the wire tap).
    fn arrived_at_server(&mut self, now: SimTime, packet: Packet) {
        self.reverse_arrived += 1;
        if self.app_side == Side::Server && packet.is_data() {
            self.wire_arrival(now, &packet);
        }
        self.with_end(now, Side::Server, |end, out| end.on_packet(now, packet, out));
    }

    /// Tells the server's end that `packet` is resolved, in the order packets resolve.
    fn tell_resolved(&mut self, now: SimTime, packet: &Packet) {
        if !self.hears_resolved {
            return;
        }
        if self.telling {
            self.resolved.push_back(*packet);
            return;
        }
        self.telling = true;
        self.with_end(now, Side::Server, |end, out| end.on_resolved(now, packet, out));
        while let Some(p) = self.resolved.pop_front() {
            self.with_end(now, Side::Server, |end, out| end.on_resolved(now, &p, out));
        }
        self.telling = false;
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
        if let Some(log) = self.failover.as_deref_mut() {
            log.lost(cause);
        }
        if cause == DropCause::NoLink {
            self.drops_no_link += 1;
        }
        if self.reliable {
            // The transport will send it again: lost on the wire, not at the application.
            if let Some(reseq) = &mut self.resequencer {
                for p in reseq.skip(packet.bond_seq) {
                    self.with_end(now, Side::Client, |end, out| end.on_packet(now, p, out));
                }
            }
            return;
        }
        if packet.is_fragment() {
            // Its datagram cannot be reassembled (the receiving host learns it when the queue expires).
            self.receiver.lost_datagram(&packet, FragLoss::Dropped);
        } else {
            let ended = self.receiver.flows()[packet.flow as usize].resolved();
            self.receiver.lost(&packet);
            self.flow_may_have_ended(now, packet.flow, ended);
        }
        if let Some(reseq) = &mut self.resequencer {
            for p in reseq.skip(packet.bond_seq) {
                self.with_end(now, Side::Client, |end, out| end.on_packet(now, p, out));
            }
        }
        self.tell_resolved(now, &packet);
    }

    /// The link the peer (the switch) sends a client's packet of `flow` to the server on.
    /// A LAG-aware switch: the mode's receive link where it decides one (active-backup,
    /// tlb, alb), otherwise the switch's hash over the members with carrier. An unaware
    /// switch: the port its MAC table says, or a flood (`unaware_peer_link`).
    fn peer_link(&mut self, now: SimTime, flow: usize) -> Option<usize> {
        if !self.switch.aware() {
            return self.unaware_peer_link(now, flow);
        }
        if let Some(link) = self.bond.rx_links[flow].filter(|&l| self.links[l].carrier()) {
            return Some(link);
        }
        self.switch.lag_port(&self.bond.headers[flow].reversed(), now)
    }

    /// The address the client of `flow` sends its frames to: the bond's, or in balance-alb the
    /// address of the slave the bond's ARP answer named (`rlb_arp_xmit` writes the assigned
    /// slave's `dev_addr`).
    fn client_dst_mac(&self, flow: usize) -> network::Mac {
        match (self.bond.own_macs(), self.bond.rx_links[flow]) {
            (true, Some(link)) if self.bond.scheduler.receive() == Receive::PerClient => self.slave_macs.of(link),
            _ => self.slave_macs.bond(),
        }
    }

    /// An unaware switch sends a frame for the bond's MAC (balance-alb: the MAC of the client's
    /// receive slave) to the port it learned it on, or floods it when unknown; the bond keeps it
    /// only if it arrives on a slave it receives on (`switch::bond_accepts`). Of a flood's copies the model carries the one the bond
    /// keeps; the others are counted (`switch_flooded`), not carried.
    fn unaware_peer_link(&mut self, now: SimTime, flow: usize) -> Option<usize> {
        let headers = self.bond.headers[flow];
        let receive = self.bond.scheduler.receive();
        let active = match receive {
            // alb keeps unicast on every slave; its rx_link assigns clients, which asking would change.
            Receive::PerClient => None,
            _ => self.bond.scheduler.rx_link(&headers, &BondView { now, links: &self.bond.views }),
        };
        let dst = self.client_dst_mac(flow);
        let macs = &self.slave_macs;
        let accepts = |p: usize| switch::bond_accepts(receive, active, p, macs.of(p) == dst);
        let kept = match self.switch.egress(dst, now) {
            Egress::Port(port) => Some(port).filter(|&p| accepts(p)),
            Egress::Flood => {
                self.switch.stats.flooded += 1;
                if self.switch.forwarding_ports(now).next().is_none() {
                    self.switch.stats.drops_to_bond += 1;
                    return None;
                }
                self.switch.forwarding_ports(now).find(|&p| accepts(p))
            }
            Egress::Nowhere => {
                self.switch.stats.drops_to_bond += 1;
                return None;
            }
        };
        if kept.is_none() {
            self.switch.stats.drops_inactive_slave += 1;
        }
        kept
    }

    /// After an active-backup failover the bond notifies its peers on the new active
    /// slave `port` (`bond_change_active_slave` sets `send_peer_notif`; `bond_should_notify_peers`
    /// lets one gratuitous ARP out per `peer_notif_delay`, [`Notice::NotifyPeers`]): an unaware switch learns the
    /// bond's MAC on that port from each, the first at the failover. The ARPs are counted
    /// (`grat_arps_sent`), not carried on the link (a 60-byte frame beside the data).
    fn notify_peers(&mut self, now: SimTime, port: usize) {
        let mac = self.bond.headers[0].src_mac;
        self.switch.announce(port, mac, now, self.num_grat_arp, self.peer_notif_every);
    }

    /// Puts a client's packet (an acknowledgement) on the fabric towards the server.
    fn send_back(&mut self, now: SimTime, packet: Packet) {
        self.reverse_sent += 1;
        if self.capture.is_some() {
            let dst = self.client_dst_mac(packet.flow as usize);
            self.capture.as_deref_mut().expect("a capture").client_sent(now, &packet, dst);
        }
        let Some(id) = self.peer_link(now, packet.flow as usize) else { return };
        if self.app_side == Side::Server && packet.is_data() {
            self.note_path(packet.flow as usize, id);
        }
        if let Some(queues) = self.ideal_acks.as_mut() {
            // The ideal return path: the link's propagation delay, no queue, no loss.
            let delay = self.reverse[id].as_ref().map_or(SimTime::ZERO, |l| l.delay());
            queues[id].push_back((now + delay, packet));
            self.in_flight += 1;
            self.events.schedule(now + delay, Event::new(Target::IdealAck(id as u32), 0));
            return;
        }
        let Some(link) = self.reverse[id].as_mut() else {
            // The paced model has no return path: the packet is at the server at once.
            self.release(now, Side::Client, &packet);
            self.arrived_at_server(now, packet);
            return;
        };
        match link.enqueue(now, &packet) {
            Enqueued::Started(done) => {
                let token = u64::from(link.epoch());
                self.events.schedule(done, Event::new(Target::ReverseTxDone(id as u32), token));
                self.in_flight += 1;
            }
            Enqueued::Waiting => self.in_flight += 1,
            // Counted in the reverse link's drops.
            Enqueued::Dropped(_) => self.release(now, Side::Client, &packet),
        }
    }

    fn reverse_tx_done(&mut self, now: SimTime, id: usize, epoch: u32) {
        let Some(link) = self.reverse[id].as_mut().filter(|l| l.epoch() == epoch) else { return };
        let Sent { packet, arrival, next } = link.tx_done(now);
        if self.capture.is_some() && !packet.is_arp() {
            let dst = self.client_dst_mac(packet.flow as usize);
            self.capture.as_deref_mut().expect("a capture").reverse_sent(now, id, &packet, dst);
        }
        if let Some(done) = next {
            self.events.schedule(done, Event::new(Target::ReverseTxDone(id as u32), u64::from(epoch)));
        }
        if !packet.is_arp() {
            self.release(now, Side::Client, &packet);
        } else if arrival.is_none() {
            return; // an ARP frame lost on the wire: a missed probe, not a packet in flight
        }
        match arrival {
            Some(arrival) => {
                self.events.schedule(arrival, Event::new(Target::ReverseDeliver(id as u32), u64::from(epoch)))
            }
            // Lost on the wire: gone (counted in the reverse link's drops; no oracle on the way back).
            None => self.in_flight -= 1,
        }
    }

    fn reverse_deliver(&mut self, now: SimTime, id: usize, epoch: u32) {
        let Some(link) = self.reverse[id].as_mut().filter(|l| l.epoch() == epoch) else { return };
        let packet = link.arrive();
        let frame = match packet.kind {
            Kind::ArpReply => Received::Reply(packet.flow as usize),
            Kind::ArpRequest => Received::Request(packet.flow as usize),
            _ => Received::Other,
        };
        if !packet.is_arp() {
            self.in_flight -= 1;
        }
        if self.silent.drops(id, now, false) {
            // The silent port dropped it on its way to the host (an ACK counts in the reverse drops).
            if let (Some(link), false) = (self.reverse[id].as_mut(), packet.is_arp()) {
                link.stats.record_drop(DropCause::Silent);
            }
            return;
        }
        self.arp_heard(now, id, frame);
        if packet.is_arp() {
            return;
        }
        self.arrived_at_server(now, packet);
    }

    fn ideal_ack(&mut self, now: SimTime, id: usize) {
        let queues = self.ideal_acks.as_mut().expect("ideal ack path");
        let (at, packet) = queues[id].pop_front().expect("one event per ACK");
        debug_assert_eq!(at, now);
        self.in_flight -= 1;
        self.arrived_at_server(now, packet);
    }

    fn schedule_random_failure(&mut self, id: usize, now: SimTime, up_now: bool) {
        let Some((spec, rng)) = &mut self.failure_rngs[id] else { return };
        let mean = if up_now { spec.mtbf_s } else { spec.mttr_s };
        let after = Exp::new(1.0 / mean).expect("validated mean > 0").sample(rng);
        let at = now + SimTime::from_secs_f64(after).max(SimTime(1));
        self.events.schedule(at, Event::new(Target::Carrier(id as u32), u64::from(!up_now)));
    }

    fn carrier(&mut self, now: SimTime, id: usize, up: bool) {
        if self.links[id].carrier() == up {
            return;
        }
        if let Some(log) = self.failover.as_deref_mut() {
            match up {
                true => log.up(now, id),
                false => log.down(now, id, "carrier", &self.receiver),
            }
        }
        if up {
            self.links[id].carrier_up();
            if let Some(reverse) = self.reverse[id].as_mut() {
                reverse.carrier_up();
            }
        } else {
            for packet in self.links[id].carrier_down(now) {
                if packet.is_arp() {
                    continue; // a missed probe
                }
                self.in_flight -= 1;
                self.freed(now, &packet);
                self.copy_lost(now, packet, DropCause::LinkDown);
            }
            let mut lost = self.reverse[id].as_mut().map(|r| r.carrier_down(now)).unwrap_or_default();
            lost.retain(|p| !p.is_arp());
            self.in_flight -= lost.len() as u64;
            for packet in lost {
                self.release(now, Side::Client, &packet);
            }
        }
        self.switch.carrier(id, up, now);
        match self.carrier_latency[id] {
            SimTime::ZERO => self.nic_carrier(now, id, up),
            latency => self.events.schedule(now + latency, Event::new(Target::Carrier(id as u32), 2 + u64::from(up))),
        }
        self.schedule_random_failure(id, now, up);
        self.refresh_view(id, now);
        self.trace_link_event(now, id);
    }

    /// A silent failure of link `id` starts or ends (`up`): the port itself drops frames
    /// (`fault::SilentPorts`); here only the failover measures' window opens or closes.
    fn silent_failure(&mut self, now: SimTime, id: usize, up: bool) {
        if let Some(log) = self.failover.as_deref_mut() {
            match up {
                true => log.up(now, id),
                false => log.down(now, id, "silent", &self.receiver),
            }
        }
    }

    /// Link `id`'s NIC reports its carrier `up`, `carrier_latency_ms` after the change
    /// ([`Bond::nic_carrier`]); the monitor's commits go into the queue.
    fn nic_carrier(&mut self, now: SimTime, id: usize, up: bool) {
        for (link, commit) in self.bond.nic_carrier(now, id, up) {
            self.events.schedule(commit.at, Event::new(Target::Monitor(link as u32), u64::from(commit.generation)));
        }
    }

    /// Records link `id`'s carrier and the monitor's verdict after a change (`[trace]`).
    fn trace_link_event(&mut self, now: SimTime, id: usize) {
        if let Some(trace) = &mut self.trace {
            trace.link_event(now, id, self.links[id].carrier(), self.bond.views[id].up);
        }
    }

    fn commit(&mut self, now: SimTime, id: usize, generation: u32) {
        if self.bond.commit(id, generation) {
            self.apply_verdict(now, id);
        }
    }

    /// The bond's verdict on link `id` ([`Bond::verdict`]: every monitor's at once) changed:
    /// the failover measures and the trace record it, the bond's scheduler and receive links
    /// follow ([`Bond::link_changed`]) and what it tells the world is done ([`World::notice`]).
    fn apply_verdict(&mut self, now: SimTime, id: usize) {
        let Some(up) = self.bond.verdict(id) else { return };
        if let Some(log) = self.failover.as_deref_mut() {
            log.verdict(now, id, up);
        }
        self.refresh_view(id, now);
        self.trace_link_event(now, id);
        let mut notices = Vec::new();
        let promoted = self.bond.link_changed(now, id, &mut notices);
        for notice in notices {
            self.notice(now, notice);
        }
        if let Some(back) = promoted {
            self.apply_verdict(now, back);
        }
    }

    /// Carries out what the bond told the world ([`Notice`]): the switch learns addresses and
    /// hears gratuitous ARPs.
    fn notice(&mut self, now: SimTime, notice: Notice) {
        match notice {
            Notice::ClientTaught { slave, .. } if !self.switch.aware() => self.learning_frame(now, slave),
            Notice::ClientTaught { .. } => {}
            Notice::NotifyPeers { port } => self.notify_peers(now, port),
            Notice::ActiveMac { slave } => self.move_active_mac(now, slave),
        }
    }

    /// balance-tlb/-alb: the new active slave `new` takes the bond's MAC address from the slave
    /// that held it ([`network::SlaveMacs::make_active`]), and the bond teaches the switch both
    /// addresses at once (`alb_fasten_mac_swap`: learning packets on each that can send).
    fn move_active_mac(&mut self, now: SimTime, new: usize) {
        let [holder, new] = self.slave_macs.make_active(new);
        // (One slave when it already held the address: its learning packets go once.)
        for slave in [holder, new].into_iter().skip(usize::from(holder == new)) {
            if self.bond.views[slave].can_tx() {
                self.learning_frame(now, slave);
            }
        }
    }

    /// balance-tlb/-alb's periodic learning packets (`bond_alb_monitor`: every slave, from its
    /// own address, each `lp_interval`); a slave without carrier sends nothing (its port discards).
    fn learning_packets(&mut self, now: SimTime) {
        for slave in 0..self.links.len() {
            self.learning_frame(now, slave);
        }
        self.events.schedule(now + LP_INTERVAL, Event::new(Target::Learning, 0));
    }

    /// One learning packet (`alb_send_lp_vid`: a frame from and to the slave's own address) on
    /// `slave`: an unaware switch learns the address on its port, unless a silent failure drops it.
    fn learning_frame(&mut self, now: SimTime, slave: usize) {
        if self.switch.aware() || self.silent.drops(slave, now, true) {
            return;
        }
        self.switch.learning_frame(slave, self.slave_macs.of(slave), now);
    }

    /// 802.3ad: link `id`'s LACPDUs stopped (`leaves`) or came back ([`SilentPorts::lacp_outages`]).
    fn lacp(&mut self, now: SimTime, id: usize, leaves: bool) {
        let out = self.bond.lacp(id, leaves);
        self.switch.lacp(id, out);
        self.apply_verdict(now, id);
    }

    /// One run of the ARP monitor: inspect and commit, then probe every target
    /// (`bond_activebackup_arp_mon`, `bond_loadbalance_arp_mon`).
    fn arp_tick(&mut self, now: SimTime) {
        let Some((arp, _)) = self.bond.arp.as_ref() else { return };
        let ab = arp.mode() == ArpMode::ActiveBackup;
        // The monitor reads the NICs' view of the carrier (`netif_carrier_ok`).
        let carrier = self.bond.nic_carrier.clone();
        let before = if ab { self.bond.active_slave(now) } else { None };
        let Some((arp, _)) = self.bond.arp.as_mut() else { return };
        for (id, _) in arp.inspect(now, before, &carrier) {
            self.apply_verdict(now, id);
        }
        let active = if ab { self.bond.active_slave(now) } else { None };
        let Some((arp, targets)) = self.bond.arp.as_mut() else { return };
        if let Some(a) = active.filter(|_| active != before) {
            arp.made_active(a, now);
        }
        let targets = *targets;
        let interval = arp.interval();
        for id in arp.probe(now, active, &carrier, targets as usize) {
            // A NIC without carrier sends nothing, nor does a dead wire carry it: the probe is
            // missed, not a drop of the workload's.
            if !carrier[id] || !self.links[id].carrier() {
                continue;
            }
            for target in 0..targets {
                self.enqueue(now, id, &Packet::arp(Kind::ArpRequest, target, now));
            }
        }
        self.events.schedule(now + interval, Event::new(Target::ArpMonitor, 0));
    }

    /// An ARP probe to `packet.flow` reached the switch on link `id` (unless the port is
    /// silent). The target answers; the reply goes where the switch sends the bond's traffic:
    /// in active-backup (no LAG) to the port it learnt the bond's MAC on, the one the request
    /// came in on (IEEE 802.1D learning), and the broadcast request is flooded to the other
    /// ports, where the backups hear it; with a LAG, [`World::peer_link`] picks the link.
    fn arp_at_switch(&mut self, now: SimTime, id: usize, packet: Packet) {
        if self.silent.drops(id, now, true) {
            return; // a missed probe (the drop counters are the workload's packets')
        }
        let target = packet.flow;
        let ab = self.bond.arp.as_ref().is_some_and(|(a, _)| a.mode() == ArpMode::ActiveBackup);
        let back = if ab {
            for other in (0..self.links.len()).filter(|&l| l != id) {
                self.arp_to_host(now, other, Packet::arp(Kind::ArpRequest, target, now));
            }
            Some(id)
        } else {
            self.peer_link(now, target as usize % self.bond.headers.len().max(1))
        };
        if let Some(back) = back {
            self.arp_to_host(now, back, Packet::arp(Kind::ArpReply, target, now));
        }
    }

    /// Puts an ARP frame on link `id`'s reverse direction (the ARP monitor needs rate links).
    fn arp_to_host(&mut self, now: SimTime, id: usize, packet: Packet) {
        if !self.links[id].carrier() {
            return; // the reverse direction shares the forward one's carrier
        }
        let Some(link) = self.reverse[id].as_mut() else { return };
        if let Enqueued::Started(done) = link.enqueue(now, &packet) {
            let token = u64::from(link.epoch());
            self.events.schedule(done, Event::new(Target::ReverseTxDone(id as u32), token));
        }
    }

    /// Link `id` received `frame`: a sign of life to the ARP monitor, if one runs.
    fn arp_heard(&mut self, now: SimTime, id: usize, frame: Received) {
        let Some((arp, _)) = self.bond.arp.as_ref() else { return };
        let active = if arp.mode() == ArpMode::ActiveBackup { self.bond.active_slave(now) } else { None };
        if let Some((arp, _)) = self.bond.arp.as_mut() {
            arp.received(id, now, frame, active);
        }
    }

    fn scheduler_tick(&mut self, now: SimTime) {
        if let Some(next) = self.bond.tick(now) {
            self.events.schedule(next, Event::new(Target::Scheduler, 0));
        }
    }

    /// Each component reports what it did; the result is built from the reports.
    fn finish(mut self, scenario: &Scenario, wall_s: f64) -> RunResult {
        let tcp_trace = self.server.tcp_trace().or_else(|| self.client.tcp_trace());
        let end = self.stopped_at.unwrap_or(self.events.now());
        let tcp = match (self.server.tcp_stats(), self.client.tcp_stats()) {
            (Some(mut server), Some(client)) => {
                server.merge(&client);
                Some(server)
            }
            (server, client) => server.or(client),
        };
        let failovers = self.failover.take().map(|log| log.finish(end, &self.link_names, &self.receiver, tcp.as_ref()));
        let trace = self.trace.take().map(|t| t.finish(end, &self.links, &self.bond.views)).unwrap_or_default();
        let links = self
            .links
            .iter()
            .zip(&self.reverse)
            .zip(self.link_names)
            .map(|((link, reverse), name)| LinkReport {
                name,
                kind: if matches!(link, Link::Paced(_)) { "paced" } else { "rate" },
                capacity_bps: link.capacity_bps(),
                stats: link.stats().clone(),
                reverse: reverse.as_ref().map(|r| r.stats.clone()).unwrap_or_default(),
            })
            .collect();
        result::build(
            Reports {
                name: &scenario.name,
                seed: scenario.seed,
                scheduler: self.bond.label,
                requests: &self.requests,
                receiver: &self.receiver,
                wire: &self.wire,
                paths: &self.paths,
                rx_links: self.bond.rx_links,
                links,
                sent: self.sent,
                drops_no_link: self.drops_no_link,
                switch: self.switch.stats,
                reverse_sent: self.reverse_sent,
                reverse_arrived: self.reverse_arrived,
                stopped_at: self.stopped_at,
                ended_at: self.events.now(),
                events: self.events.processed(),
                reseq_max_held: self.resequencer.as_ref().map(|r| r.max_held as u64),
                tcp,
                pingpong: self.server.pingpong_stats().map(|mut server| {
                    if let Some(client) = self.client.pingpong_stats() {
                        server.tokens += client.tokens;
                    }
                    server
                }),
                tcp_trace,
                reasm: self.client.reasm_stats(),
                trace,
                failovers,
                miimon_ms: self.miimon_ms,
                arp_probes_sent: self.bond.arp.as_ref().map_or(0, |(a, _)| a.probes_sent),
                arp_replies: self.bond.arp.as_ref().map_or(0, |(a, _)| a.replies),
            },
            wall_s,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::LinkStats;

    /// A client end that acknowledges every packet it gets, as TCP's receiver will.
    struct Acker(std::collections::VecDeque<Packet>);

    impl Endpoint for Acker {
        fn open(&mut self, _now: SimTime, _flow: u32, _bytes: u64, _out: &mut Vec<Output>) {}
        fn on_packet(&mut self, now: SimTime, packet: Packet, out: &mut Vec<Output>) {
            out.push(Output::Deliver(packet));
            self.0.push_back(Packet::ack(packet.flow, packet.seq + 1, now));
        }
        fn poll_transmit(&mut self, _now: SimTime) -> Option<Packet> {
            self.0.pop_front()
        }
        fn is_idle(&self) -> bool {
            self.0.is_empty()
        }
    }

    fn world(mode: &str, failures: serde_json::Value) -> World {
        world_with(mode, failures, 0.0)
    }

    /// Three 1 Gbit/s links (the last with `failures`), every one losing frames with probability `loss`.
    fn world_with(mode: &str, failures: serde_json::Value, loss: f64) -> World {
        world_of(serde_json::json!({
            "workload": {"requests": 8, "clients": 8, "file_size": {"kind": "fixed", "bytes": 144_800}},
            "sender": {"kind": "window", "window_pkts": 8, "chunk_bytes": 1448},
            "bond": {"mode": mode, "miimon": 1.0},
            "links": [{"count": 2, "rate_mbps": 1000.0, "delay_us": 50.0, "loss": loss},
                      {"rate_mbps": 1000.0, "delay_us": 50.0, "failures": failures, "loss": loss}],
        }))
    }

    #[test]
    fn gratuitous_arps_are_spaced_in_monitor_ticks_of_whole_jiffies() {
        let every = |bond: serde_json::Value| {
            let v = serde_json::json!({"workload": {"requests": 1, "file_size": {"kind": "fixed", "bytes": 1000}},
                "bond": bond, "links": [{"rate_mbps": 100.0}]});
            peer_notif_every(&Scenario::from_json(&v.to_string()).unwrap().bond)
        };
        let ms = |x: u64| SimTime(x * 1_000_000);
        let ab = |extra: serde_json::Value| {
            let mut bond = serde_json::json!({"mode": "active-backup"});
            bond.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            every(bond)
        };
        // miimon ticks: max(1, peer_notif_delay / miimon) of them, each msecs_to_jiffies(miimon).
        assert_eq!(ab(serde_json::json!({"miimon": 10})), ms(10));
        assert_eq!(ab(serde_json::json!({"miimon": 10, "hz": 250})), ms(12));
        assert_eq!(ab(serde_json::json!({"miimon": 10, "peer_notif_delay": 25, "hz": 250})), ms(24));
        // The ARP monitor: one per its tick (bond_activebackup_arp_mon), not all at once.
        let arp = serde_json::json!({"miimon": 0, "arp_interval": 10, "arp_ip_target": ["10.0.0.254"], "hz": 250});
        assert_eq!(ab(arp), ms(12));
    }

    /// The world of `scenario`, its clients acknowledging every packet.
    fn world_of(scenario: serde_json::Value) -> World {
        let scenario = Scenario::from_json(&scenario.to_string()).unwrap();
        let mut world = World::build(&scenario).unwrap();
        world.client = End::Custom(Box::new(Acker(Default::default())));
        world
    }

    /// The result of `scenario` with idle paced links waking outside the event queue
    /// (`lazy`), or in it every period as the thesis's interface does.
    fn result_of(scenario: &serde_json::Value, lazy: bool) -> RunResult {
        run_of(scenario, lazy, true).0
    }

    /// A run of `scenario`, idle wake-ups in the queue (`lazy` false) or outside it, idle links
    /// frozen when the run drains unless `freeze` is false; with the wake-ups counted in bulk,
    /// the links frozen and [`World::frozen_ties`].
    fn run_of(scenario: &serde_json::Value, lazy: bool, freeze: bool) -> (RunResult, u64, u64, [u64; 4]) {
        let scenario = Scenario::from_json(&scenario.to_string()).unwrap();
        let mut world = World::build(&scenario).unwrap();
        (world.lazy_polls, world.freeze_off) = (lazy, !freeze);
        world.run(&mut |_| true).unwrap();
        let (bulk, frozen, ties) = (world.bulk_idle_polls, world.frozen_links, world.frozen_ties);
        (world.finish(&scenario, 0.0), bulk, frozen, ties)
    }

    /// The idle links' wake-up keys (time and sequence number) before each event of a run of
    /// `scenario` with idle wake-ups outside the queue, counted in bulk or (`bulk_off`) one
    /// by one.
    fn idle_keys_of(scenario: &serde_json::Value, bulk_off: bool) -> Vec<Vec<u128>> {
        let scenario = Scenario::from_json(&scenario.to_string()).unwrap();
        let mut world = World::build(&scenario).unwrap();
        (world.bulk_off, world.idle_log) = (bulk_off, Some(Vec::new()));
        world.run(&mut |_| true).unwrap();
        world.idle_log.unwrap()
    }

    /// Every figure of a result but the event count (which idle links waking outside the
    /// queue lower).
    fn figures(r: &RunResult) -> serde_json::Value {
        let mut v = serde_json::to_value(r).unwrap();
        v["summary"]["events"] = 0.into();
        v
    }

    #[test]
    fn idle_paced_links_waking_outside_the_queue_move_no_figure_and_run_fewer_events() {
        // The thesis's links (one at 82 ms: the others go idle while it drains), and what an idle
        // wake-up touches: arrivals at any time, the bond reading idle times and slowdowns (lb),
        // slowdowns that change between wake-ups, trace intervals, a carrier failure.
        let thesis = |mode: &str, arrivals: serde_json::Value, link0: serde_json::Value| {
            serde_json::json!({
                "workload": {"requests": 30, "arrivals": arrivals,
                             "file_size": {"kind": "uniform", "min_bytes": 1000, "max_bytes": 30000}},
                "sender": {"kind": "paced", "tick_ms": 20, "packets_per_tick": 4, "chunk_bytes": 1024},
                "bond": {"mode": mode, "miimon": 10},
                "links": [link0, {"period_ms": 82, "trace_intervals_s": [0.05, 0.09, 0.02]},
                          {"period_ms": 20, "intermittent": {"slow_s": 0.3, "normal_s": 0.5, "slowdown": 2.5, "random": true}},
                          {"period_ms": 20, "slowdown": 1.5}],
            })
        };
        let poisson = serde_json::json!({"kind": "poisson", "rate_per_s": 20.0});
        let at_start = serde_json::json!({"kind": "at_start"});
        let plain = serde_json::json!({"period_ms": 20});
        let slowed = serde_json::json!({"period_ms": 20, "slow_windows": [{"start_s": 0.5, "end_s": 2.0, "slowdown": 3.0}],
                                        "failures": [{"down_s": 0.4, "up_s": 1.1}]});
        for (mode, arrivals, link0) in
            [("rr", &at_start, &plain), ("rr", &poisson, &slowed), ("lb", &poisson, &slowed), ("lb", &at_start, &plain)]
        {
            let eager = result_of(&thesis(mode, arrivals.clone(), link0.clone()), false);
            let lazy = result_of(&thesis(mode, arrivals.clone(), link0.clone()), true);
            let idle: u64 = eager.links.polls.iter().sum::<u64>() - eager.links.packets_sent.iter().sum::<u64>();
            assert!(idle > 100, "{mode}: the links idle ({idle} idle wake-ups)");
            assert!(lazy.summary.events < eager.summary.events, "{mode}: {} events", lazy.summary.events);
            assert_eq!(figures(&lazy), figures(&eager), "{mode} {arrivals}");
        }
    }

    #[test]
    fn idle_links_frozen_while_the_run_drains_move_no_figure() {
        // Once the sender has sent everything, the idle links are frozen and their wake-ups
        // counted at the end (`freeze_idle_links`, `settle_frozen`). Three links of every mix
        // of seven periods (ties in time everywhere: whole milliseconds with many common
        // multiples, against the sender's 20 ms tick), fed 2 and 3 packets a tick, under schedulers that share the packets
        // evenly, by load, by flow and all to one link: the last link to drain is sometimes the
        // slowest, sometimes not, sometimes drains soon after the sender stops; and a frozen
        // link's wake-up at the last event's time comes before it in some runs and after it in
        // others, both when it follows from its step and when it is the first one not run.
        let periods = [4.0, 10.0, 20.0, 25.0, 30.0, 60.0, 82.0];
        let mut cases: Vec<(&str, u32, Vec<f64>)> = Vec::new();
        for mode in ["rr", "lb", "xor", "active-backup"] {
            for i in 0..2 * periods.len().pow(3) {
                let mix = [i % 7, i / 7 % 7, i / 49 % 7].map(|p| periods[p]).to_vec();
                cases.push((mode, 2 + i as u32 / 343, mix));
            }
        }
        // Two links wake at the last event's time, and the last event is the one of the lesser
        // step: a frozen link's step lies between theirs.
        cases.push(("lb", 2, vec![60.0, 20.0, 4.0, 30.0]));
        cases.push(("lb", 2, vec![4.0, 60.0, 20.0, 30.0]));
        let (mut frozen, mut ties) = (0, [0; 4]);
        for (mode, per_tick, mix) in cases {
            let links: Vec<_> = mix.iter().map(|p| serde_json::json!({"period_ms": p})).collect();
            let s = serde_json::json!({
                "workload": {"requests": 12, "file_size": {"kind": "uniform", "min_bytes": 1000, "max_bytes": 30000}},
                "sender": {"kind": "paced", "tick_ms": 20, "packets_per_tick": per_tick, "chunk_bytes": 1024},
                "bond": {"mode": mode},
                "links": links,
            });
            let (lazy, _, links_frozen, run_ties) = run_of(&s, true, true);
            assert_eq!(figures(&lazy), figures(&result_of(&s, false)), "{mode} {per_tick} {mix:?}");
            frozen += links_frozen;
            ties.iter_mut().zip(run_ties).for_each(|(all, run)| *all += run);
        }
        assert!(frozen > 1000, "{frozen} links frozen");
        assert!(ties.iter().all(|&n| n > 0), "wake-ups at the last event's time: {ties:?}");
    }

    #[test]
    fn idle_wake_ups_counted_in_bulk_move_no_figure() {
        // Links that idle at one fixed step take turns in a cycle, and their wake-ups are
        // counted in bulk (`skip_idle_polls_before`). Ties in time everywhere: the sender ticks
        // at 20 ms, the links wake on the same 20 ms grid (a 10 ms period slowed 2 times is a
        // 20 ms step), a 30 ms link meets them every 60 ms (wake-ups of other steps send the
        // bulk path back to one by one), Poisson arrivals wake idle links between ticks, and
        // lb reads every link's idle time and queue.
        let scenario = |mode: &str, arrivals: serde_json::Value, last: serde_json::Value, files: u32| {
            serde_json::json!({
                "workload": {"requests": 40, "arrivals": arrivals,
                             "file_size": {"kind": "uniform", "min_bytes": 1000, "max_bytes": files}},
                "sender": {"kind": "paced", "tick_ms": 20, "packets_per_tick": 4, "chunk_bytes": 1024},
                "bond": {"mode": mode},
                "links": [{"period_ms": 20}, {"period_ms": 82}, {"period_ms": 10, "slowdown": 2.0}, last],
            })
        };
        let poisson = serde_json::json!({"kind": "poisson", "rate_per_s": 5.0});
        let at_start = serde_json::json!({"kind": "at_start"});
        let same = serde_json::json!({"period_ms": 20});
        let other = serde_json::json!({"period_ms": 30});
        for mode in ["rr", "lb", "xor"] {
            for (arrivals, last, files) in [
                (&at_start, &same, 60_000),
                (&poisson, &same, 20_000),
                (&poisson, &other, 20_000),
                (&at_start, &other, 60_000),
            ] {
                let s = scenario(mode, arrivals.clone(), last.clone(), files);
                let eager = result_of(&s, false);
                let (lazy, bulk, _, _) = run_of(&s, true, false);
                // (lb between Poisson arrivals: the sender ticks on and lb keeps the 82 ms link
                // short, so no link idles twice between events: they run one by one.)
                let ticking = mode == "lb" && arrivals == &poisson;
                assert!(bulk > 50 || ticking, "{mode} {arrivals} {last}: {bulk} wake-ups counted in bulk");
                assert_eq!(figures(&lazy), figures(&eager), "{mode} {arrivals} {last}");
                // Each wake-up also holds the very place in the order of its instant (the
                // sequence number) that it holds when run one by one.
                assert_eq!(idle_keys_of(&s, false), idle_keys_of(&s, true), "{mode} {arrivals} {last}");
            }
        }
    }

    /// One TCP-less transfer over three links behind an unaware switch (`switch.lag = "none"`),
    /// the bond sending `num_grat_arp` gratuitous ARPs after a failover.
    fn unaware_world(mode: &str, num_grat_arp: u32) -> World {
        world_of(serde_json::json!({
            "workload": {"requests": 1, "file_size": {"kind": "fixed", "bytes": 144_800}},
            "bond": {"mode": mode, "miimon": 1.0, "num_grat_arp": num_grat_arp},
            "links": [{"count": 3, "rate_mbps": 1000.0}],
            "switch": {"lag": "none"},
        }))
    }

    #[test]
    fn an_unaware_switch_floods_an_unknown_mac_and_the_bond_keeps_the_copy_on_a_slave_it_receives_on() {
        // Nothing sent yet: the switch does not know the bond's MAC and floods to every port.
        let mut rr = unaware_world("balance-rr", 1);
        assert_eq!(rr.peer_link(SimTime::ZERO, 0), Some(0), "every slave of balance-rr receives: the first copy");
        assert_eq!(rr.switch.stats.flooded, 1);
        let mut ab = unaware_world("active-backup[primary=link2]", 1);
        assert_eq!(ab.peer_link(SimTime::ZERO, 0), Some(2), "active-backup keeps only the active slave's copy");
        // The active slave's port without carrier: the flood reaches only inactive slaves, the bond drops it.
        ab.switch.carrier(2, false, SimTime::ZERO);
        assert_eq!(ab.peer_link(SimTime::ZERO, 0), None);
        assert_eq!((ab.switch.stats.flooded, ab.switch.stats.drops_inactive_slave), (2, 1));
    }

    /// Eight TCP transfers of 3 MB over four Gigabit links of a `mode` bond behind a switch of
    /// `lag`, run to the end; balance-tlb and -alb rebalance every 100 ms so that flows spread.
    fn tcp_behind(mode: &str, lag: &str) -> World {
        let scenario = Scenario::from_json(
            &serde_json::json!({
                "workload": {"requests": 8, "clients": 8, "file_size": {"kind": "fixed", "bytes": 3_000_000}},
                "sender": {"kind": "tcp"},
                "bond": {"mode": mode, "rebalance_interval_s": 0.1},
                "links": [{"count": 4, "rate_mbps": 1000.0, "delay_us": 10.0}],
                "switch": {"lag": lag},
            })
            .to_string(),
        )
        .unwrap();
        let mut w = World::build(&scenario).unwrap();
        w.run(&mut |_| true).unwrap();
        w
    }

    #[test]
    fn balance_tlb_and_alb_behind_an_unaware_switch_send_from_each_slaves_own_address() {
        for mode in ["balance-tlb", "balance-alb"] {
            let plain = tcp_behind(mode, "none");
            let sent: Vec<u64> = plain.links.iter().map(|l| l.stats().packets_sent).collect();
            assert!(sent.iter().filter(|&&n| n > 0).count() >= 3, "{mode}: flows spread over the slaves: {sent:?}");
            // The bond's address stays on the active slave's port, each other slave's on its own:
            // nothing moves, nothing is flooded or lost (with the bond's address on every frame the
            // switch moved it with each slave's frames and sent ACKs to slaves that drop them).
            let stats = &plain.switch.stats;
            assert_eq!((stats.mac_moves, stats.flooded, stats.drops_inactive_slave), (0, 0, 0), "{mode}");
            assert_eq!(plain.switch.learned(plain.slave_macs.bond()), Some(0), "{mode}");
            for slave in 1..4 {
                assert_eq!(plain.switch.learned(plain.slave_macs.of(slave)), Some(slave), "{mode}");
            }
            // So the clients' frames reach the bond as behind a LAG that knows the mode's receive links.
            let lag = tcp_behind(mode, "static");
            let figures =
                |w: &World| (w.receiver.delivered, w.receiver.last_delivery, w.reverse_sent, w.reverse_arrived);
            assert_eq!(figures(&plain), figures(&lag), "{mode}");
            let reverse =
                |w: &World| -> Vec<u64> { w.reverse.iter().map(|r| r.as_ref().unwrap().stats.packets_sent).collect() };
            assert_eq!(reverse(&plain), reverse(&lag), "{mode}");
            if mode == "balance-tlb" {
                assert_eq!(reverse(&plain)[1..], [0, 0, 0], "balance-tlb receives on its active slave only");
            } else {
                assert!(reverse(&plain).iter().all(|&n| n > 0), "balance-alb's clients send to their own slaves");
            }
        }
    }

    #[test]
    fn a_new_active_tlb_slave_takes_the_bonds_address_and_teaches_the_switch_at_once() {
        let mut w = unaware_world("balance-tlb", 0);
        let (bond, second) = (w.slave_macs.bond(), w.slave_macs.of(1));
        assert_eq!(w.switch.learned(bond), Some(0), "taught when the first slave became active");
        let t = SimTime::from_millis_f64(1.0);
        w.carrier(t, 0, false);
        while let Some((now, Event { target, token })) = w.events.pop() {
            if target == Target::Monitor(0) {
                w.commit(now, 0, token as u32);
                break;
            }
        }
        assert_eq!(w.bond.scheduler.active_link(), Some(1));
        // Slave 1 holds the bond's address now, slave 0 slave 1's (`alb_swap_mac_addr`), and the
        // switch learned the bond's on port 1 at the change; slave 0's port has no link.
        assert_eq!((w.slave_macs.of(1), w.slave_macs.of(0)), (bond, second));
        assert_eq!((w.switch.learned(bond), w.switch.learned(second)), (Some(1), None));
        // The ALB timer runs only with tlb_dynamic_lb or in balance-alb (`bond_open`): so do the
        // learning packets.
        let learns = |mode: &str| unaware_world(mode, 0).events.pending().any(|e| e.target == Target::Learning);
        assert!(!learns("balance-tlb[tlb_dynamic_lb=0]"));
        assert!(learns("balance-alb[tlb_dynamic_lb=0]"));
        // Learning packets: each slave's own address on its port, every second from 0.9 s.
        let mut w = unaware_world("balance-tlb", 0);
        assert_eq!(w.switch.learned(w.slave_macs.of(2)), None);
        while let Some((now, Event { target, .. })) = w.events.pop() {
            if target == Target::Learning {
                assert_eq!(now, SimTime::from_millis_f64(900.0));
                w.learning_packets(now);
                break;
            }
        }
        assert_eq!(w.switch.learned(w.slave_macs.of(2)), Some(2));
        assert!(w.events.pending().any(|e| e.target == Target::Learning));
    }

    /// Fails link 0 of an active-backup bond behind an unaware switch at 1 ms and runs the world's
    /// events until the monitor commits it (no traffic moves: the test skips the other events).
    fn fail_over(num_grat_arp: u32) -> World {
        let mut w = unaware_world("active-backup", num_grat_arp);
        let mac = w.bond.headers[0].src_mac;
        let t = SimTime::from_millis_f64(1.0);
        w.switch.learn(0, mac, t);
        w.carrier(t, 0, false);
        while let Some((now, Event { target, token })) = w.events.pop() {
            if target == Target::Monitor(0) {
                w.commit(now, 0, token as u32);
                break;
            }
        }
        w
    }

    #[test]
    fn gratuitous_arps_move_the_bonds_mac_to_the_new_active_port_at_the_failover() {
        let with = fail_over(2);
        let mac = with.bond.headers[0].src_mac;
        assert_eq!(with.bond.notified(), Some(1));
        assert_eq!(with.switch.learned(mac), Some(1), "learned on the new active slave's port at once");
        assert_eq!(with.switch.stats.grat_arps, 2);
        // Without them the entry went with port 0's link and nothing has taught the switch since.
        let without = fail_over(0);
        assert_eq!(without.switch.learned(mac), None);
        assert_eq!(without.switch.stats.grat_arps, 0);
    }

    #[test]
    fn acknowledgements_travel_the_reverse_links_picked_by_the_peer() {
        let mut w = world("balance-rr", serde_json::json!([]));
        w.run(&mut |_| true).unwrap();
        let reverse: Vec<u64> = w.reverse.iter().map(|r| r.as_ref().unwrap().stats.packets_sent).collect();
        assert_eq!((w.reverse_sent, w.reverse_arrived), (800, 800));
        assert_eq!(reverse.iter().sum::<u64>(), 800);
        // The switch hashes each flow (layer2+3 of the reversed headers) onto one link: 100 acks per flow.
        let expected: Vec<u64> =
            (0..3).map(|l| (0..8).filter(|&f| w.peer_link(SimTime::ZERO, f) == Some(l)).count() as u64 * 100).collect();
        assert_eq!(reverse, expected);
        assert!(expected[2] > 0, "some flows hash onto link 2 (so the failure test below means something)");
        // An acknowledgement takes a frame's time on the wire and the link's delay: it never arrives at once.
        assert!(w.events.now() > SimTime::from_micros_f64(100.0));
    }

    /// A server end that sends a fixed list of packets at once.
    struct Script(std::collections::VecDeque<Packet>);

    impl Endpoint for Script {
        fn open(&mut self, _now: SimTime, _flow: u32, _bytes: u64, _out: &mut Vec<Output>) {}
        fn poll_transmit(&mut self, _now: SimTime) -> Option<Packet> {
            self.0.pop_front()
        }
        fn is_idle(&self) -> bool {
            self.0.is_empty()
        }
    }

    #[test]
    fn an_offload_buffer_goes_whole_to_the_link_its_first_segment_took() {
        let sent = |gso: [u8; 5]| {
            let mut w = world("balance-rr", serde_json::json!([]));
            let packets = gso
                .iter()
                .enumerate()
                .map(|(k, &g)| Packet { gso: g, ..Packet::data(0, k as u32, 1448, SimTime::ZERO) });
            w.server = End::Custom(Box::new(Script(packets.collect())));
            w.hears_resolved = false;
            w.run(&mut |_| true).unwrap();
            w.links.iter().map(|l| l.stats().packets_sent).collect::<Vec<_>>()
        };
        // Round-robin places buffers: a buffer of 3, then two of their own.
        assert_eq!(sent([3, 1, 1, 0, 0]), [3, 1, 1]);
        // The same packets as buffers of one each: one per link in turn.
        assert_eq!(sent([0, 0, 0, 0, 0]), [2, 2, 1]);
    }

    #[test]
    fn the_peer_avoids_a_link_without_carrier_and_follows_the_modes_receive_link() {
        let mut w = world("balance-rr", serde_json::json!([{"down_s": 0.0}]));
        w.run(&mut |_| true).unwrap();
        let reverse: Vec<u64> = w.reverse.iter().map(|r| r.as_ref().unwrap().stats.packets_sent).collect();
        assert_eq!(reverse[2], 0, "no acknowledgement on the dead link: {reverse:?}");
        let mut w = world("active-backup", serde_json::json!([]));
        w.run(&mut |_| true).unwrap();
        let reverse: Vec<u64> = w.reverse.iter().map(|r| r.as_ref().unwrap().stats.packets_sent).collect();
        assert_eq!(reverse, [800, 0, 0], "active-backup receives on its active link");
    }

    #[test]
    fn frames_lost_on_the_wire_are_lost_packets_both_ways() {
        let mut w = world_with("balance-rr", serde_json::json!([]), 0.05);
        w.run(&mut |_| true).unwrap();
        assert!(w.is_done(), "the run ends with the fabric empty");
        assert_eq!(w.in_flight, 0);
        let forward: u64 = w.links.iter().map(|l| l.stats().drops_random).sum();
        let reverse: Vec<&LinkStats> = w.reverse.iter().map(|r| &r.as_ref().unwrap().stats).collect();
        let reverse_lost: u64 = reverse.iter().map(|s| s.drops_random).sum();
        // Forward: each lost frame is a lost packet (one copy each), the rest arrived.
        assert!(forward > 0);
        assert_eq!(w.receiver.lost, forward);
        assert_eq!(w.receiver.delivered + w.receiver.lost, w.sent);
        // Backward: every acknowledgement sent either reached the server or was lost on the wire.
        assert!(reverse_lost > 0, "the reverse direction loses frames too");
        assert_eq!(w.reverse_sent, w.reverse_arrived + reverse_lost);
        assert_eq!(w.reverse_sent, w.receiver.delivered, "one acknowledgement per delivered packet");
        assert_eq!(reverse.iter().map(|s| s.packets_sent).sum::<u64>(), w.reverse_sent);
    }

    #[test]
    fn a_closed_loop_client_asks_again_the_instant_a_request_ends() {
        // Two clients, one request outstanding each, over one link: each client's requests
        // follow one another, the next arriving when the previous one's last packet does.
        let scenario = Scenario::from_json(
            &serde_json::json!({
                "workload": {"requests": 6, "clients": 2, "arrivals": {"kind": "closed", "active": 1},
                             "file_size": {"kind": "fixed", "bytes": 14_480}},
                "sender": {"kind": "tcp"},
                "bond": {"mode": "balance-rr"},
                "links": [{"rate_mbps": 100.0, "delay_us": 50.0}],
            })
            .to_string(),
        )
        .unwrap();
        let result = run(&scenario).unwrap();
        let r = &result.requests;
        assert_eq!(result.summary.flows_complete, 6);
        assert_eq!(&r.arrival_s[..2], &[Some(0.0), Some(0.0)]);
        for i in 2..6 {
            assert_eq!(r.client[i], r.client[i - 2]);
            assert_eq!(r.arrival_s[i], r.finish_s[i - 2], "request {i} waits for request {}", i - 2);
        }
        // The client never has two requests open: each starts after its predecessor ended.
        assert!(r.arrival_s[4].unwrap() > r.arrival_s[2].unwrap());
    }

    #[test]
    fn goodput_counts_from_measure_from_s() {
        // Two files a second apart on one idle 100 Mbit/s link: over the whole run the goodput is
        // mostly the idle second; counted from the second file's arrival it is the transfer's own.
        let scenario = |from: Option<f64>| {
            let mut v = serde_json::json!({
                "workload": {"requests": 2, "clients": 1, "arrivals": {"kind": "batches", "size": 1, "every_s": 1.0},
                             "file_size": {"kind": "fixed", "bytes": 144_800}},
                "sender": {"kind": "tcp"},
                "bond": {"mode": "balance-rr"},
                "links": [{"rate_mbps": 100.0, "delay_us": 50.0}],
            });
            if let Some(from) = from {
                v["measure_from_s"] = serde_json::json!(from);
            }
            Scenario::from_json(&v.to_string()).unwrap()
        };
        let whole = run(&scenario(None)).unwrap();
        let late = run(&scenario(Some(1.0))).unwrap();
        let wire = 100e6 * 1448.0 / 1538.0;
        let transfer_s = whole.summary.duration_s - 1.0;
        let expected = 144_800.0 * 8.0 / transfer_s;
        assert!((late.summary.goodput_bps - expected).abs() < 1.0, "{} vs {expected}", late.summary.goodput_bps);
        assert!(late.summary.goodput_bps < wire && late.summary.goodput_bps > 0.5 * wire);
        assert!(whole.summary.goodput_bps < late.summary.goodput_bps / 5.0);
        let refused = Scenario::from_json(
            &serde_json::json!({"stop_s": 1.0, "measure_from_s": 1.0,
                "workload": {"requests": 1, "file_size": {"kind": "fixed", "bytes": 1}},
                "bond": {"mode": "balance-rr"}, "links": [{"rate_mbps": 100.0}]})
            .to_string(),
        );
        assert!(refused.unwrap_err().to_string().contains("measure_from_s"));
    }
}
