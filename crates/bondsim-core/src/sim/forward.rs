//! The forward path: the bond's pick, the links' queues and wires, the switch port, the
//! clients' wire.

use super::*;

impl World {
    /// Hands a packet from the server's end to the bond.
    #[inline(always)]
    pub(super) fn dispatch(&mut self, now: SimTime, mut packet: Packet) {
        self.sent += 1;
        self.server_host_sent(now);
        packet.bond_seq = self.next_bond_seq;
        self.next_bond_seq += 1;
        let flow = packet.flow as usize;
        // The rest of an offload buffer goes where its first segment went: the bond
        // (`bond_start_xmit`) places whole skbs, the NIC cuts them into frames.
        let pick = if packet.gso == 1 {
            self.gso_pick
        } else if self.subflows > 0 {
            // An MPTCP subflow is bound to its link's device: no bond places it.
            Pick::Link(transport::mptcp::split_flow(packet.flow, self.subflows).1 as usize)
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
                // (An MPTCP connection's subflows each keep to their link: it has no one path.)
                if self.app_side == Side::Client && self.subflows == 0 {
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
    pub(super) fn note_path(&mut self, flow: usize, id: usize) {
        let path = &mut self.paths[flow];
        if path.0 != id as u32 {
            path.1 += u32::from(path.0 != u32::MAX);
            path.0 = id as u32;
        }
    }

    /// Puts `packet` in link `id`'s queue. (By reference down to the queue's `push_back`: passed
    /// by value, the 64-byte packet was copied on the stack twice more per send.)
    #[inline(always)]
    pub(super) fn enqueue(&mut self, now: SimTime, id: usize, packet: &Packet) {
        // The ARP monitor's probes are on the fabric but no part of the workload's traffic.
        let app = !packet.is_arp();
        self.in_flight += u64::from(app);
        match self.links[id].enqueue(now, packet) {
            Enqueued::Started(done) => {
                let token = u64::from(self.links[id].epoch());
                self.events.schedule(done, Event::new(Target::TxDone(id as u32), token));
                if app && matches!(self.links[id].release(), Release::AtStart | Release::AtEnqueue) {
                    self.freed(now, packet);
                }
            }
            // (Tested in this order, a run without idle paced links pays one test.)
            Enqueued::Waiting if self.idle.next_poll != NO_POLL && self.idle.polls[id] != NO_POLL => {
                self.wake_idle_link(id)
            }
            Enqueued::Waiting if self.releases_at_enqueue => {
                if app && self.links[id].release() == Release::AtEnqueue {
                    self.freed(now, packet);
                }
            }
            Enqueued::Waiting => {}
            Enqueued::Dropped(cause) if app => {
                self.in_flight -= 1;
                self.freed(now, packet);
                if !(cause == DropCause::QueueFull && self.taken_back(now, id, packet)) {
                    self.copy_lost(now, *packet, cause);
                }
            }
            // A probe that cannot leave is a missed probe.
            Enqueued::Dropped(_) => {}
        }
        self.refresh_view(id, now);
    }

    /// A full queue of link `id` that the host counts (a `nic` or `shaper` rate link: the
    /// host's qdisc, or a bonded slave's) refused the server's `packet`: the send fails and the
    /// server's end hears it at once (`NET_XMIT_DROP`, which `bond_dev_queue_xmit` passes up from
    /// the slave's `dev_queue_xmit`, up to `__tcp_transmit_skb`; `Endpoint::unsent`). True when
    /// the end took it back; else (a broadcast copy, an upload's or a ping-pong's ends, a queue
    /// beyond TUN) it is lost as on a wire.
    #[inline(never)]
    fn taken_back(&mut self, now: SimTime, id: usize, packet: &Packet) -> bool {
        let host_queue = matches!(self.links[id], Link::Rate(_)) && self.links[id].release() != Release::AtEnqueue;
        if !host_queue || self.app_side != Side::Client || self.copies.contains_key(&packet.bond_seq) {
            return false;
        }
        let mut out = std::mem::take(&mut self.outbox);
        let taken = self.server.unsent(now, packet, &mut out);
        self.drain(now, Side::Server, &mut out);
        self.outbox = out;
        if taken {
            // Its number at the bond will never arrive: a resequencer stops waiting for it.
            self.skip_in_resequencer(now, packet.bond_seq);
        }
        taken
    }

    pub(super) fn poll(&mut self, now: SimTime, id: usize) {
        // (Only the links that wake are polled: `Target::Poll` is theirs.)
        let (sent, next) = self.links[id].poll(now);
        if self.lazy_polls && sent.is_none() {
            // It had nothing to send: its next wake-up finds nothing either unless a packet
            // comes first, so it waits out of the queue, in the place it would have had in it.
            // (A link that just sent its last packet keeps its next wake-up in the queue: in
            // a steady flow the next packet comes before it, and one idle wake-up is cheaper
            // than taking it out and putting it back for every packet.)
            let key = engine::key(next, self.events.reserve());
            if !self.idle.frozen.is_empty() {
                self.idle.frozen.push((id, key)); // (the run only drains: it stays idle)
            } else {
                self.idle.polls[id] = key;
                if key < self.idle.next_poll {
                    (self.idle.next_poll, self.idle.next_link) = (key, id);
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

    pub(super) fn tx_done(&mut self, now: SimTime, id: usize, epoch: u32) {
        // (`None`: the carrier went while this packet was being sent.)
        let Some((Sent { packet, arrival, next }, release)) = self.links[id].tx_done(now, epoch) else { return };
        if let Some(c) = self.capture.as_deref_mut().filter(|_| !packet.is_arp()) {
            c.link_sent(now, id, &packet, self.slave_macs.of(id));
        }
        if let Some(done) = next {
            self.events.schedule(done, Event::new(Target::TxDone(id as u32), u64::from(epoch)));
            if release == Release::AtStart {
                self.next_frame_started(now, id);
            }
        }
        if packet.is_arp() {
            // A probe on the wire reaches the switch, unless the wire loses it (a missed probe).
            if let Ok(arrival) = arrival {
                let deliver = Event::new(Target::Deliver(id as u32), u64::from(epoch));
                self.events.schedule_ranked(arrival, id as u64, deliver);
            }
            return;
        }
        if let Some(trace) = &mut self.trace {
            trace.left(now, &packet);
        }
        self.tx_completion(now, id, &packet, release);
        match arrival {
            Ok(arrival) => {
                // Packets reaching the clients at one instant are taken in the order the bond sent them.
                let rank = packet.bond_seq << 12 | id as u64;
                let deliver = Event::new(Target::Deliver(id as u32), u64::from(epoch));
                self.events.schedule_ranked(arrival, rank, deliver);
                self.refresh_view(id, now);
            }
            Err(cause) => {
                // Lost on the wire or by the line beyond (counted by the link): known now, like a
                // copy lost with the carrier.
                self.refresh_view(id, now);
                self.in_flight -= 1;
                self.copy_lost(now, packet, cause);
            }
        }
    }

    /// Link `id`, whose [`Release`] is `release`, sent `packet`'s last bit at `now`: the host
    /// frees it now, at the coalesced interrupt, or freed it already as the frame started.
    #[inline(always)]
    fn tx_completion(&mut self, now: SimTime, id: usize, packet: &Packet, release: Release) {
        match release {
            Release::AtEnd => self.freed(now, packet),
            Release::AtStart | Release::AtEnqueue => {}
            Release::Coalesced(after) => self.coalesced_completion(now, id, packet, after),
        }
    }

    /// [`World::tx_completion`] for a link whose release waits for the TX-completion interrupt,
    /// `after` the first completion since the last interrupt ([`Release::Coalesced`]). (Out of
    /// line, as is the interrupt: the common placement pays no code for them in the event loop.)
    #[inline(never)]
    fn coalesced_completion(&mut self, now: SimTime, id: usize, packet: &Packet, after: SimTime) {
        if self.links[id].completed(packet) {
            self.events.schedule(now + after, Event::new(Target::TxIrq(id as u32), 0));
        }
    }

    /// Link `id`, a shaper's ([`Release::AtStart`]), started its next frame at `now`: the shaper
    /// releases it to the NIC, and the host stops counting it.
    #[inline(never)]
    fn next_frame_started(&mut self, now: SimTime, id: usize) {
        if let Some(head) = self.links[id].head().filter(|p| !p.is_arp()).copied() {
            self.freed(now, &head);
        }
    }

    /// Link `id`'s coalesced TX-completion interrupt: the host frees every frame it sent since
    /// the last one (`tx_coalesce_us`; the frames' fate on the wire does not matter).
    #[inline(never)]
    pub(super) fn tx_irq(&mut self, now: SimTime, id: usize) {
        for packet in self.links[id].interrupt() {
            self.freed(now, &packet);
        }
    }

    pub(super) fn deliver(&mut self, now: SimTime, id: usize, epoch: u32) {
        // (`None`: lost with the carrier, counted then.)
        let Some(packet) = self.links[id].arrive(epoch) else { return };
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
    pub(super) fn reach_switch(&mut self, now: SimTime, id: usize, packet: &Packet) {
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
    pub(super) fn failover_arrival(&mut self, now: SimTime, id: usize, packet: &Packet) {
        // (The measures are per request: an MPTCP subflow's packet counts for its connection.)
        let flow = self.request_of(packet.flow);
        if let Some(log) = self.failover.as_deref_mut() {
            log.arrived(now, id, &Packet { flow, ..*packet });
        }
    }

    /// A copy of `packet` reached the client's wire at `now`.
    #[inline(always)]
    pub(super) fn arrived_at_client(&mut self, now: SimTime, id: usize, packet: &Packet) {
        if let Some(c) = self.capture.as_deref_mut() {
            c.client_received(now, packet, self.slave_macs.of(id));
        }
        if self.nic_passes(now, id, nic::End::Client, packet) {
            self.nic_to_client(now, packet);
        }
    }

    /// The client's NIC hands `packet` on: to its machine's CPU, or up the stack.
    #[inline(always)]
    pub(super) fn nic_to_client(&mut self, now: SimTime, packet: &Packet) {
        if !self.hosts.clients_on() {
            self.up_the_stack(now, packet);
        } else {
            self.host_receive(now, *packet);
        }
    }

    /// A copy of `packet` goes up the client's stack: the first copy of a broadcast, the wire tap,
    /// the resequencer if the bond has one, the client's end.
    #[inline(always)]
    pub(super) fn up_the_stack(&mut self, now: SimTime, packet: &Packet) {
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
    pub(super) fn wire_arrival(&mut self, now: SimTime, packet: &Packet) {
        let before = self.wire.out_of_order;
        self.wire.arrive(packet);
        if let Some(trace) = &mut self.trace {
            trace.arrived(now, packet, self.wire.out_of_order > before);
        }
    }
}
