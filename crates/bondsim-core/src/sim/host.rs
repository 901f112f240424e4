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
        vec![RxHost::new(&scenario.host); clients]
    }

    /// The client whose host receives (or sends) a packet of wire flow `flow`.
    fn host_of(&self, flow: u32) -> usize {
        let request = if self.subflows > 0 { transport::mptcp::split_flow(flow, self.subflows).0 } else { flow };
        self.requests[request as usize].client as usize
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

    /// Client `client`'s CPU has handled its frame: up the stack, then the next frame.
    pub(super) fn host_done(&mut self, now: SimTime, client: usize) {
        let packet = self.hosts[client].complete(now);
        self.in_flight -= 1;
        self.up_the_stack(now, &packet);
        if let Some(at) = self.hosts[client].start(now) {
            self.events.schedule(at, Event::new(Target::Host(client as u32), 0));
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
