//! The transport's two ends and the application: their outputs carried out, packets handed
//! to the fabric, TX completions, the oracle, deliveries and losses.

use super::*;

impl World {
    /// Carries out what an endpoint asked for, in order.
    pub(super) fn drain(&mut self, now: SimTime, side: Side, out: &mut Vec<Output>) {
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
                Output::Writable(flow) => self.app_wants_write(now, flow),
            }
        }
    }

    /// Runs `f` on one end, carries out its outputs, then puts on the fabric,
    /// one by one, the packets it wants to send.
    pub(super) fn with_end(&mut self, now: SimTime, side: Side, f: impl FnOnce(&mut End, &mut Vec<Output>)) {
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
        // The timers those sends asked for (a paced TCP connection's next departure).
        match side {
            Side::Server => self.server.poll_timers(now, &mut self.outbox),
            Side::Client => self.client.poll_timers(now, &mut self.outbox),
        }
        if !self.outbox.is_empty() {
            let mut out = std::mem::take(&mut self.outbox);
            self.drain(now, side, &mut out);
            self.outbox = out;
        }
        self.polling[side as usize] = nested;
        if !nested {
            self.tell_freed(now, side);
        }
    }

    pub(super) fn arrive(&mut self, now: SimTime, Arrivals { first, count }: Arrivals) {
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
    pub(super) fn deliver_app(&mut self, now: SimTime, packet: &Packet) {
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
    pub(super) fn flow_may_have_ended(&mut self, now: SimTime, flow: u32, had_ended: bool) {
        if self.next_request.is_empty() || had_ended || !self.receiver.flows()[flow as usize].resolved() {
            return;
        }
        let client = self.requests[flow as usize].client as usize;
        let next = self.next_request[client];
        if (next as usize) < self.requests.len() {
            self.requests[next as usize].arrival = now;
            self.next_request[client] = next.saturating_add(self.next_request.len() as u32);
            self.events.schedule(now, Event::of(Target::Arrivals, Arrivals { first: next, count: 1 }));
        }
    }

    #[inline(always)]
    pub(super) fn endpoint_timer(&mut self, now: SimTime, side: Side, token: u64) {
        self.with_end(now, side, |end, out| end.on_timer(now, token, out));
    }

    /// Tells one end of the releases that waited while it was handing packets over.
    pub(super) fn tell_freed(&mut self, now: SimTime, side: Side) {
        while let Some(packet) = self.freed_later[side as usize].pop() {
            self.with_end(now, side, |end, out| end.on_tx_done(now, &packet, out));
        }
    }

    /// The server's buffer of `packet` is released: sent by its link (TX completion),
    /// or dropped below the transport. Feeds TCP small queues (`tcp_wfree`).
    #[inline(always)]
    pub(super) fn freed(&mut self, now: SimTime, packet: &Packet) {
        // (Tested in this order, the common case — nobody listens — costs one test.)
        if self.hears_tx_done[Side::Server as usize]
            && (self.copies.is_empty() || !self.copies.contains_key(&packet.bond_seq))
        {
            self.release(now, Side::Server, packet);
        }
    }

    /// `side`'s buffer of `packet` is released. While that end is handing packets
    /// over, the news waits until it is done.
    pub(super) fn release(&mut self, now: SimTime, side: Side, packet: &Packet) {
        if !self.hears_tx_done[side as usize] {
            return;
        }
        if self.polling[side as usize] {
            self.freed_later[side as usize].push(*packet);
            return;
        }
        self.with_end(now, side, |end, out| end.on_tx_done(now, packet, out));
    }

    /// Tells the server's end that `packet` is resolved, in the order packets resolve.
    pub(super) fn tell_resolved(&mut self, now: SimTime, packet: &Packet) {
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
    pub(super) fn copy_lost(&mut self, now: SimTime, packet: Packet, cause: DropCause) {
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

    /// The packet the bond numbered `bond_seq` will never arrive: a resequencer hands on what
    /// waited for it.
    pub(super) fn skip_in_resequencer(&mut self, now: SimTime, bond_seq: u64) {
        if let Some(reseq) = &mut self.resequencer {
            for p in reseq.skip(bond_seq) {
                self.with_end(now, Side::Client, |end, out| end.on_packet(now, p, out));
            }
        }
    }

    /// `packet` will never arrive.
    pub(super) fn lose(&mut self, now: SimTime, packet: Packet, cause: DropCause) {
        if let Some(log) = self.failover.as_deref_mut() {
            log.lost(cause);
        }
        if cause == DropCause::NoLink {
            self.drops_no_link += 1;
        }
        if self.reliable {
            // The transport will send it again: lost on the wire, not at the application.
            self.skip_in_resequencer(now, packet.bond_seq);
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
}
