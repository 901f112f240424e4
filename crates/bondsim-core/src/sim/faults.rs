//! Faults and monitors: carrier changes (the wire's, the NIC's report, silent failures),
//! the bond's verdicts and what they tell the switch, 802.3ad's LACPDUs, the ARP monitor,
//! the scheduler's and balance-tlb/-alb's periodic work.

use super::*;

impl World {
    /// After an active-backup failover the bond notifies its peers on the new active
    /// slave `port` (`bond_change_active_slave` sets `send_peer_notif`; `bond_should_notify_peers`
    /// lets one gratuitous ARP out per `peer_notif_delay`, [`Notice::NotifyPeers`]): an unaware switch learns the
    /// bond's MAC on that port from each, the first at the failover. The ARPs are counted
    /// (`grat_arps_sent`), not carried on the link (a 60-byte frame beside the data).
    pub(super) fn notify_peers(&mut self, now: SimTime, port: usize) {
        let mac = self.bond.headers[0].src_mac;
        self.switch.announce(port, mac, now, self.num_grat_arp, self.peer_notif_every);
    }

    pub(super) fn schedule_random_failure(&mut self, id: usize, now: SimTime, up_now: bool) {
        let Some((spec, rng)) = &mut self.failure_rngs[id] else { return };
        let mean = if up_now { spec.mtbf_s } else { spec.mttr_s };
        let after = Exp::new(1.0 / mean).expect("validated mean > 0").sample(rng);
        let at = now + SimTime::from_secs_f64(after).max(SimTime(1));
        self.events.schedule(at, Event::of(Target::Carrier(id as u32), CarrierChange::Wire { up: !up_now }));
    }

    /// Link `id`'s carrier changes ([`CarrierChange`]).
    pub(super) fn carrier_change(&mut self, now: SimTime, id: usize, change: CarrierChange) {
        match change {
            CarrierChange::Wire { up } => self.carrier(now, id, up),
            CarrierChange::Nic { up } => self.nic_carrier(now, id, up),
            CarrierChange::Silent { up } => self.silent_failure(now, id, up),
        }
    }

    pub(super) fn carrier(&mut self, now: SimTime, id: usize, up: bool) {
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
            // (What the host released already, on the wire, is not released again.)
            let lost = self.links[id].carrier_down(now);
            for (k, packet) in lost.packets.into_iter().enumerate() {
                if packet.is_arp() {
                    continue; // a missed probe
                }
                self.in_flight -= 1;
                if k >= lost.released {
                    self.freed(now, &packet);
                }
                self.copy_lost(now, packet, DropCause::LinkDown);
            }
            let lost = self.reverse[id].as_mut().map(|r| r.carrier_down(now)).unwrap_or_default();
            for (k, packet) in lost.packets.into_iter().enumerate() {
                if packet.is_arp() {
                    continue;
                }
                self.in_flight -= 1;
                if k >= lost.released {
                    self.release(now, Side::Client, &packet);
                }
            }
        }
        self.switch.carrier(id, up, now);
        match self.carrier_latency[id] {
            SimTime::ZERO => self.nic_carrier(now, id, up),
            latency => {
                self.events.schedule(now + latency, Event::of(Target::Carrier(id as u32), CarrierChange::Nic { up }))
            }
        }
        self.schedule_random_failure(id, now, up);
        self.refresh_view(id, now);
        self.trace_link_event(now, id);
    }

    /// A silent failure of link `id` starts or ends (`up`): the port itself drops frames
    /// (`fault::SilentPorts`); here only the failover measures' window opens or closes.
    pub(super) fn silent_failure(&mut self, now: SimTime, id: usize, up: bool) {
        if let Some(log) = self.failover.as_deref_mut() {
            match up {
                true => log.up(now, id),
                false => log.down(now, id, "silent", &self.receiver),
            }
        }
    }

    /// Link `id`'s NIC reports its carrier `up`, `carrier_latency_ms` after the change
    /// ([`Bond::nic_carrier`]); the monitor's commits go into the queue.
    pub(super) fn nic_carrier(&mut self, now: SimTime, id: usize, up: bool) {
        for (link, commit) in self.bond.nic_carrier(now, id, up) {
            self.events.schedule(commit.at, Event::new(Target::Monitor(link as u32), u64::from(commit.generation)));
        }
    }

    /// Records link `id`'s carrier and the monitor's verdict after a change (`[trace]`).
    pub(super) fn trace_link_event(&mut self, now: SimTime, id: usize) {
        if let Some(trace) = &mut self.trace {
            trace.link_event(now, id, self.links[id].carrier(), self.bond.views[id].up);
        }
    }

    pub(super) fn commit(&mut self, now: SimTime, id: usize, generation: u32) {
        if self.bond.commit(id, generation) {
            self.apply_verdict(now, id);
        }
    }

    /// The bond's verdict on link `id` ([`Bond::verdict`]: every monitor's at once) changed:
    /// the failover measures and the trace record it, the bond's scheduler and receive links
    /// follow ([`Bond::link_changed`]) and what it tells the world is done ([`World::notice`]).
    pub(super) fn apply_verdict(&mut self, now: SimTime, id: usize) {
        if self.subflows > 0 {
            // No bond carries MPTCP's subflows, and nothing in Linux's MPTCP reacts to a carrier
            // change (the in-kernel path manager has no netdev hook): its subflows learn of a
            // failure from their own timers (benchmarks/results/mptcp-kernel-rules.md, 3.4).
            return;
        }
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
    pub(super) fn notice(&mut self, now: SimTime, notice: Notice) {
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
    pub(super) fn move_active_mac(&mut self, now: SimTime, new: usize) {
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
    pub(super) fn learning_packets(&mut self, now: SimTime) {
        for slave in 0..self.links.len() {
            self.learning_frame(now, slave);
        }
        self.events.schedule(now + LP_INTERVAL, Event::new(Target::Learning, 0));
    }

    /// One learning packet (`alb_send_lp_vid`: a frame from and to the slave's own address) on
    /// `slave`: an unaware switch learns the address on its port, unless a silent failure drops it.
    pub(super) fn learning_frame(&mut self, now: SimTime, slave: usize) {
        if self.switch.aware() || self.silent.drops(slave, now, true) {
            return;
        }
        self.switch.learning_frame(slave, self.slave_macs.of(slave), now);
    }

    /// 802.3ad: link `id`'s LACPDUs stopped (`leaves`) or came back ([`SilentPorts::lacp_outages`]).
    pub(super) fn lacp(&mut self, now: SimTime, id: usize, change: LacpChange) {
        let out = self.bond.lacp(id, change == LacpChange::Leaves);
        self.switch.lacp(id, out);
        self.apply_verdict(now, id);
    }

    /// One run of the ARP monitor: inspect and commit, then probe every target
    /// (`bond_activebackup_arp_mon`, `bond_loadbalance_arp_mon`).
    pub(super) fn arp_tick(&mut self, now: SimTime) {
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
    pub(super) fn arp_at_switch(&mut self, now: SimTime, id: usize, packet: Packet) {
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
    pub(super) fn arp_to_host(&mut self, now: SimTime, id: usize, packet: Packet) {
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
    pub(super) fn arp_heard(&mut self, now: SimTime, id: usize, frame: Received) {
        let Some((arp, _)) = self.bond.arp.as_ref() else { return };
        let active = if arp.mode() == ArpMode::ActiveBackup { self.bond.active_slave(now) } else { None };
        if let Some((arp, _)) = self.bond.arp.as_mut() {
            arp.received(id, now, frame, active);
        }
    }

    pub(super) fn scheduler_tick(&mut self, now: SimTime) {
        if let Some(next) = self.bond.tick(now) {
            self.events.schedule(next, Event::new(Target::Scheduler, 0));
        }
    }
}
