//! The receiving hosts (`[host]`, [`crate::host`]): a frame that reached a client's wire waits for
//! its host's CPU before it goes up the stack, or is dropped by a full receive queue; what the
//! client sends costs its CPU too. Without `[host]` the world holds no host and none of this runs.

use super::*;
use crate::host::{Admit, RxHost};

impl World {
    /// One host per client when `[host]` is on (the clients are numbered from 0), none otherwise.
    pub(super) fn hosts_for(scenario: &Scenario, requests: &[Request]) -> Vec<RxHost> {
        if scenario.host.is_off() {
            return Vec::new();
        }
        let clients = requests.iter().map(|r| r.client as usize + 1).max().unwrap_or(0);
        let ts = scenario.sender.tcp().map(|t| transport::tcp::TsTicks::of(t.ts_clock, scenario.bond.hz));
        vec![RxHost::new(&scenario.host, ts); clients]
    }

    /// The client whose host receives (or sends) a packet of wire flow `flow`.
    fn host_of(&self, flow: u32) -> usize {
        self.requests[self.request_of(flow) as usize].client as usize
    }

    /// A frame reached its client's host: into the receive queue, or dropped there.
    pub(super) fn host_receive(&mut self, now: SimTime, packet: Packet) {
        let client = self.host_of(packet.flow);
        match self.hosts[client].arrive(now, packet) {
            Admit::Dropped => self.copy_lost(now, packet, DropCause::HostQueue),
            Admit::Queued => self.in_flight += 1,
            Admit::Handled(at) => {
                self.in_flight += 1;
                self.events.schedule(at, Event::new(Target::Host(client as u32), 0));
            }
        }
    }

    /// Client `client`'s CPU has handled its work: what it finished goes up the stack, then the next.
    pub(super) fn host_done(&mut self, now: SimTime, client: usize) {
        let mut up = std::mem::take(&mut self.host_up);
        self.hosts[client].complete(now, &mut up);
        for skb in up.drain(..) {
            self.in_flight -= skb.len() as u64;
            match skb.as_slice() {
                [packet] => self.up_the_stack(now, packet),
                segments => self.up_the_stack_merged(now, segments),
            }
        }
        self.host_up = up;
        if let Some(at) = self.hosts[client].start(now) {
            self.events.schedule(at, Event::new(Target::Host(client as u32), 0));
        }
    }

    /// A GRO skb of several segments goes up: the wire tap sees each, the client's end one skb
    /// ([`Endpoint::on_merged`]). With broadcast's copies or a resequencer each goes up alone.
    fn up_the_stack_merged(&mut self, now: SimTime, segments: &[Packet]) {
        if !self.copies.is_empty() || self.resequencer.is_some() {
            return segments.iter().for_each(|p| self.up_the_stack(now, p));
        }
        for p in segments {
            self.wire_arrival(now, p);
        }
        self.with_end(now, Side::Client, |end, out| end.on_merged(now, segments, out));
        if self.hears_resolved {
            segments.iter().for_each(|p| self.tell_resolved(now, p));
        }
    }

    /// A client sends a frame: its host's CPU pays for it.
    #[inline]
    pub(super) fn host_sent(&mut self, now: SimTime, flow: u32) {
        if !self.hosts.is_empty() {
            let client = self.host_of(flow);
            self.hosts[client].sent(now);
        }
    }
}
