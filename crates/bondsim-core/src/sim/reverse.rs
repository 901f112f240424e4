//! The reverse path: the port the switch sends a client's frame to the bond on, the reverse
//! links (or the ideal return path), the server.

use super::*;

impl World {
    /// A client's packet reached the server over link `id`: an ACK, or an upload's data (past the wire
    /// tap). The link's NIC may hold it for its next interrupt (`links.N.rx_coalesce_us`); with
    /// `[server_host]` it waits for the server's CPU then.
    pub(super) fn arrived_at_server(&mut self, now: SimTime, id: usize, packet: Packet) {
        self.reverse_arrived += 1;
        if self.nic_passes(now, id, nic::End::Server, &packet) {
            self.nic_to_server(now, packet);
        }
    }

    /// The server's NIC hands `packet` on: to its machine's CPU, or up its stack.
    pub(super) fn nic_to_server(&mut self, now: SimTime, packet: Packet) {
        if self.hosts.server_on() {
            self.server_host_receive(now, packet);
        } else {
            self.server_stack(now, packet);
        }
    }

    /// A client's packet goes up the server's stack.
    pub(super) fn server_stack(&mut self, now: SimTime, packet: Packet) {
        if self.app_side == Side::Server && packet.is_data() {
            self.wire_arrival(now, &packet);
        }
        self.with_end(now, Side::Server, |end, out| end.on_packet(now, packet, out));
    }

    /// The link the peer (the switch) sends a client's packet of `flow` to the server on.
    /// A LAG-aware switch: the mode's receive link where it decides one (active-backup,
    /// tlb, alb), otherwise the switch's hash over the members with carrier. An unaware
    /// switch: the port its MAC table says, or a flood (`unaware_peer_link`).
    pub(super) fn peer_link(&mut self, now: SimTime, flow: usize) -> Option<usize> {
        if self.subflows > 0 {
            // An MPTCP subflow's packets come back over its own link, while it has carrier.
            let link = transport::mptcp::split_flow(flow as u32, self.subflows).1 as usize;
            return Some(link).filter(|&l| self.links[l].carrier());
        }
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
    pub(super) fn client_dst_mac(&self, flow: usize) -> network::Mac {
        match (self.bond.own_macs(), self.bond.rx_links[flow]) {
            (true, Some(link)) if self.bond.scheduler.receive() == Receive::PerClient => self.slave_macs.of(link),
            _ => self.slave_macs.bond(),
        }
    }

    /// An unaware switch sends a frame for the bond's MAC (balance-alb: the MAC of the client's
    /// receive slave) to the port it learned it on, or floods it when unknown; the bond keeps it
    /// only if it arrives on a slave it receives on (`switch::bond_accepts`). Of a flood's copies the model carries the one the bond
    /// keeps; the others are counted (`switch_flooded`), not carried.
    pub(super) fn unaware_peer_link(&mut self, now: SimTime, flow: usize) -> Option<usize> {
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

    /// Puts a client's packet (an acknowledgement) on the fabric towards the server.
    pub(super) fn send_back(&mut self, now: SimTime, packet: Packet) {
        self.reverse_sent += 1;
        self.host_sent(now, packet.flow);
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
            self.arrived_at_server(now, id, packet);
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

    pub(super) fn reverse_tx_done(&mut self, now: SimTime, id: usize, epoch: u32) {
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
        } else if arrival.is_err() {
            return; // an ARP frame lost on the wire: a missed probe, not a packet in flight
        }
        match arrival {
            Ok(arrival) => {
                self.events.schedule(arrival, Event::new(Target::ReverseDeliver(id as u32), u64::from(epoch)))
            }
            // Lost on the wire or the line: gone (counted in the reverse link's drops; no oracle on
            // the way back).
            Err(_) => self.in_flight -= 1,
        }
    }

    pub(super) fn reverse_deliver(&mut self, now: SimTime, id: usize, epoch: u32) {
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
        self.arrived_at_server(now, id, packet);
    }

    pub(super) fn ideal_ack(&mut self, now: SimTime, id: usize) {
        let queues = self.ideal_acks.as_mut().expect("ideal ack path");
        let (at, packet) = queues[id].pop_front().expect("one event per ACK");
        debug_assert_eq!(at, now);
        self.in_flight -= 1;
        self.arrived_at_server(now, id, packet);
    }
}
