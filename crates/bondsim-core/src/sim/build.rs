//! The world of one run built from its scenario: requests, links, the bond and its monitors,
//! the transport's ends, the first events.

use super::*;

impl World {
    pub(super) fn build(scenario: &Scenario) -> Result<World> {
        let seed = scenario.seed;
        let cutter = transport::Cutter::for_scenario(scenario);
        let (requests, clients) = requests_of(scenario, &cutter)?;
        let clients = network::Clients::new(&scenario.network, clients, seed);
        let subflows = scenario.mptcp_subflows();
        let headers =
            network::subflow_headers(network::flow_headers(&scenario.network, &clients, &requests, seed), subflows);
        let packets_per_flow: Vec<u32> = requests.iter().map(|r| cutter.packets(r.file_bytes) as u32).collect();
        let total_packets = packets_per_flow.iter().map(|&p| u64::from(p)).sum();

        let mut events = EventQueue::new();
        let Links { links, reverse, names: link_names, failure_rngs } = Links::new(scenario, &mut events);
        let resolved = registry::resolve(&scenario.bond.mode, &scenario.bond.options)?;
        let (monitor, miimon_ms, arp) = link_monitors(scenario, resolved.info.name, &reverse)?;
        let silent = SilentPorts::new(scenario);
        schedule_lacp_outages(scenario, resolved.info.name, &silent, &mut events);
        let views = links.iter().map(|l| l.view(SimTime::ZERO, true)).collect();
        let bond = Bond::new(&resolved, &bond_context(scenario), monitor, arp, views, headers)?;
        let resequencer = bond.scheduler.resequences().then(Resequencer::default);
        let clients: Vec<u32> = requests.iter().map(|r| r.client).collect();
        let ends = transport::build(scenario, &clients);
        schedule_arrivals_and_polls(&requests, &links, &mut events);

        let hosts = host::Hosts::new(scenario, &requests);
        let mut world = World {
            hosts,
            host_up: Vec::new(),
            nics: nic::NicIrqs::new(scenario),
            events,
            paths: vec![(u32::MAX, 0); requests.len()],
            subflows,
            receiver: Receiver::new(&packets_per_flow),
            wire: WireTap::new(bond.headers.len()),
            next_request: closed_loop_next(scenario),
            requests,
            arrived: 0,
            server: ends.server,
            client: ends.client,
            outbox: Vec::new(),
            idle: IdleLinks::new(&links),
            lazy_polls: scenario.trace.link_ms.is_none(),
            fresh_views: true,
            plain_path: false,
            releases_at_enqueue: links.iter().any(|l| l.release() == Release::AtEnqueue),
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
            switch: Switch::new(&scenario.switch, scenario.lag(), scenario.link_count()),
            num_grat_arp: scenario.bond.num_grat_arp,
            peer_notif_every: peer_notif_every(&scenario.bond),
            slave_macs: network::SlaveMacs::new(
                network::parse_mac("network.server_mac", &scenario.network.server_mac)?,
                scenario.link_count(),
                bond.own_macs(),
            ),
            bond,
        };
        world.start(scenario);
        Ok(world)
    }

    /// The world's time zero, once it holds everything: the bond's first addresses and
    /// monitors, what the ends ask for first, the periodic work, the random failures.
    fn start(&mut self, scenario: &Scenario) {
        if self.bond.own_macs() {
            let mut notices = Vec::new();
            self.bond.follow_active_mac(&mut notices);
            for notice in notices {
                self.notice(SimTime::ZERO, notice);
            }
            // The learning packets come from the ALB timer, which `bond_open` starts only with
            // `tlb_dynamic_lb` or in balance-alb (its periodic work is the scheduler's tick, or RLB).
            let alb_timer =
                self.bond.scheduler.tick_interval().is_some() || self.bond.scheduler.receive() == Receive::PerClient;
            if alb_timer && !self.switch.aware() {
                self.events.schedule(LP_FIRST, Event::new(Target::Learning, 0));
            }
        }
        if self.bond.arp.is_some() {
            // bond_open queues the ARP monitor's work at once. (teamd's arp_ping starts its ports down.)
            self.events.schedule(SimTime::ZERO, Event::new(Target::ArpMonitor, 0));
            for id in 0..self.links.len() {
                self.apply_verdict(SimTime::ZERO, id);
            }
        }
        self.bond.start_notified(SimTime::ZERO);
        self.hears_resolved = self.server.hears_resolved();
        self.reliable = self.server.reliable() || self.client.reliable();
        self.hears_tx_done = [self.server.hears_tx_done(), self.client.hears_tx_done()];
        let can_fail = scenario
            .each_link()
            .any(|(_, s)| !s.base.failures.is_empty() || s.base.random_failures.is_some() || s.base.flapping.is_some());
        if can_fail {
            let log = FailoverLog::new(self.links.len(), self.requests.len(), self.reliable);
            self.failover = Some(Box::new(log));
        }
        self.plain_path = !self.silent.any() && self.switch.aware() && self.failover.is_none();
        self.fresh_views = self.bond.scheduler.reads_link_load() || self.trace.is_some();
        self.idle.may_freeze = self.lazy_polls
            && self.plain_path
            && self.trace.is_none()
            && self.resequencer.is_none()
            && self.next_request.is_empty()
            && matches!((&self.server, &self.client), (End::PacedSender(_), End::Sink(_)));
        let mut out = std::mem::take(&mut self.outbox);
        self.server.start(SimTime::ZERO, &mut out);
        self.drain(SimTime::ZERO, Side::Server, &mut out);
        self.client.start(SimTime::ZERO, &mut out);
        self.drain(SimTime::ZERO, Side::Client, &mut out);
        self.outbox = out;
        if let Some(every) = self.bond.scheduler.tick_interval() {
            self.events.schedule(every, Event::new(Target::Scheduler, 0));
        }
        if let Some(stop) = scenario.stop_s {
            self.events.schedule(SimTime::from_secs_f64(stop), Event::new(Target::Stop, 0));
        }
        for id in 0..self.links.len() {
            self.schedule_random_failure(id, SimTime::ZERO, true);
        }
        self.receiver.measure_from = SimTime::from_secs_f64(scenario.measure_from_s.unwrap_or(0.0));
    }
}

/// The workload's requests (all drawn up front) and the number of clients.
fn requests_of(scenario: &Scenario, cutter: &transport::Cutter) -> Result<(Vec<Request>, u32)> {
    Ok(match &scenario.workload {
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
            (workload::generate(w, scenario.seed), w.clients)
        }
        scenario::Workload::PingPong(p) => (workload::pingpong(p), p.pairs),
    })
}

/// The bond's links both ways, their names and their random failures' streams.
struct Links {
    links: Vec<Link>,
    reverse: Vec<ReverseLink>,
    names: Vec<String>,
    failure_rngs: Vec<Option<(RandomFailures, Rng)>>,
}

impl Links {
    /// Every link of `scenario`, its scheduled failures queued in `events`.
    fn new(scenario: &Scenario, events: &mut EventQueue<Event>) -> Links {
        let seed = scenario.seed;
        let mut all = Links { links: Vec::new(), reverse: Vec::new(), names: Vec::new(), failure_rngs: Vec::new() };
        // Scheduled failures first: at equal times a carrier change precedes everything else.
        for (id, spec) in scenario.each_link() {
            let link = Link::new(scenario, spec, id);
            all.reverse.push(link.mirror(seed, id));
            all.links.push(link);
            all.names.push(spec.link_name(id));
            let carrier = |change: CarrierChange| Event::of(Target::Carrier(id as u32), change);
            // Silent failures keep the carrier (`fault::SilentPorts`); flapping is carrier losses.
            for (k, failure) in spec.base.failures.iter().enumerate() {
                let (down, up) = fault::failure_instants(failure, seed, id, k);
                // Silent failures only mark the failover measures' window.
                let silent = failure.kind != scenario::FailureKind::Carrier;
                let change = |up| if silent { CarrierChange::Silent { up } } else { CarrierChange::Wire { up } };
                events.schedule(down, carrier(change(false)));
                if let Some(up) = up {
                    events.schedule(up, carrier(change(true)));
                }
            }
            for (down, up) in spec.base.flapping.iter().flat_map(|f| fault::flapping_instants(f, seed, id)) {
                events.schedule(down, carrier(CarrierChange::Wire { up: false }));
                events.schedule(up, carrier(CarrierChange::Wire { up: true }));
            }
            all.failure_rngs.push(
                spec.base
                    .random_failures
                    .clone()
                    .map(|r| (r, rng::stream(seed, &format!("links.{id}.random_failures")))),
            );
        }
        all
    }
}

/// 802.3ad: the times each link leaves its aggregator or comes back as LACPDUs are lost, only
/// where there are some (an 802.3ad bond with an LACP partner).
fn schedule_lacp_outages(scenario: &Scenario, mode: &str, silent: &SilentPorts, events: &mut EventQueue<Event>) {
    if mode != "802.3ad" || scenario.lag() != scenario::Lag::Lacp {
        return;
    }
    let fast = scenario.bond.lacp_rate == scenario::LacpRate::Fast;
    for id in 0..scenario.link_count() {
        for (at, change) in silent.lacp_outages(id, scenario.seed, fast) {
            let change = if change > 0 { LacpChange::Leaves } else { LacpChange::Returns };
            events.schedule(at, Event::of(Target::Lacp(id as u32), change));
        }
    }
}

/// Arrivals grouped by time; at time zero they precede the links' and the sender's first turn.
/// Then the first wake-up of every link that wakes ([`Link::wakes`]).
fn schedule_arrivals_and_polls(requests: &[Request], links: &[Link], events: &mut EventQueue<Event>) {
    let mut first = 0;
    while first < requests.len() && requests[first].arrival != workload::PENDING {
        let at = requests[first].arrival;
        let count = requests[first..].iter().take_while(|r| r.arrival == at).count();
        events.schedule(at, Event::of(Target::Arrivals, Arrivals { first: first as u32, count: count as u32 }));
        first += count;
    }
    for (id, link) in links.iter().enumerate() {
        if link.wakes() {
            events.schedule(SimTime::ZERO, Event::new(Target::Poll(id as u32), 0));
        }
    }
}

/// A closed loop's first held request per client (`workload.arrivals.kind = "closed"`); empty
/// for open arrivals.
fn closed_loop_next(scenario: &Scenario) -> Vec<u32> {
    match &scenario.workload {
        scenario::Workload::Requests(w) => match w.arrivals {
            scenario::Arrivals::Closed { active } => {
                (0..w.clients).map(|c| active.saturating_mul(w.clients).saturating_add(c)).collect()
            }
            _ => Vec::new(),
        },
        scenario::Workload::PingPong(_) => Vec::new(),
    }
}

/// What the bond's scheduler is built with: its links' names and speeds, the seed, whether the
/// switch answers LACP.
pub fn bond_context(scenario: &Scenario) -> crate::bond::BuildContext {
    let chunk_bits = f64::from(scenario.chunk_bytes()) * 8.0;
    let links = scenario
        .each_link()
        .map(|(id, spec)| crate::bond::LinkInfo { name: spec.link_name(id), rate_bps: spec.model.rate_bps(chunk_bits) })
        .collect();
    crate::bond::BuildContext { links, seed: scenario.seed, lacp_partner: scenario.lag() == scenario::Lag::Lacp }
}

/// Why ARP probing needs rate links.
const NO_RETURN_PATH: &str = "ARP probing needs rate links: the paced interface has no return path for the replies";

/// The bond's link monitors as Linux would run them in `mode`: miimon (forced to 100 ms
/// where Linux forces it, [`monitor::miimon_in_force`]) and the ARP monitor, which Linux
/// refuses in 802.3ad, balance-tlb and balance-alb. `reverse`: each link's return path (none: the
/// paced interface's, which ARP probing cannot use).
fn link_monitors(scenario: &Scenario, mode: &str, reverse: &[ReverseLink]) -> Result<(Monitor, f64, Arp)> {
    let b = &scenario.bond;
    let paced = reverse.iter().any(Option::is_none);
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
                (Monitor::ethtool(*delay_up, *delay_down, reverse.len()), 0.0, None)
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
                    reverse.len(),
                );
                (Monitor::new(0.0, 0.0, 0.0, b.hz, reverse.len()), 0.0, Some((ping, 1)))
            }
        });
    }
    let miimon = monitor::miimon_in_force(mode, b.miimon);
    let monitor = Monitor::new(miimon, b.updelay, b.downdelay, b.hz, reverse.len());
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
        reverse.len(),
    );
    Ok((monitor, miimon_ms, Some((arp, targets as u32))))
}

/// The spacing of the gratuitous ARPs after a failover: Linux keeps `peer_notif_delay` in
/// miimon ticks (`bond_option_peer_notif_delay_set`: the value over miimon, rounded down) and
/// `bond_should_notify_peers` sends one every `max(1, ticks)` ticks (of whole jiffies); 0 = one
/// per miimon period. Under the ARP monitor (`miimon = 0`, where Linux refuses a
/// `peer_notif_delay`) `bond_activebackup_arp_mon` sends one per ARP monitor tick.
pub(super) fn peer_notif_every(bond: &scenario::Bond) -> SimTime {
    if bond.miimon == 0.0 {
        return monitor::jiffies_period(bond.arp_interval, bond.hz);
    }
    let ticks = (bond.peer_notif_delay / bond.miimon).floor().max(1.0);
    SimTime(ticks as u64 * monitor::jiffies_period(bond.miimon, bond.hz).0)
}
