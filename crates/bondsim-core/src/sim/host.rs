//! The machines (`[host]`, `[server_host]`, [`crate::host`]): a frame that reached a machine's wire
//! waits for its CPU before it goes up the stack, or is dropped by a full receive queue; what the
//! machine sends costs its CPU too. Without either section the world holds no machine and none of
//! this runs.

use super::*;
use crate::host::{Admit, RxHost};
use crate::report::Report;

/// The clients' machines (one per client, or one they share) and the server's, each a CPU and a
/// receive queue.
#[derive(Debug, Default)]
pub(super) struct Hosts {
    /// The clients' machines first, then the server's if it has one (and its application's CPU after
    /// it, `app_own_cpu`).
    machines: Vec<RxHost>,
    /// How many of `machines` are the clients' (0 without `[host]`).
    clients: usize,
    /// The clients share one machine (`host.shared`).
    shared: bool,
    /// The server has a machine (`[server_host]`): `machines[clients]`.
    server: bool,
    /// The server's application writes on a CPU of its own (`server_host.app_own_cpu`):
    /// `machines[clients + 1]`.
    app_own_cpu: bool,
}

impl Hosts {
    /// The machines `scenario` describes for the clients of `requests`.
    pub(super) fn new(scenario: &Scenario, requests: &[Request]) -> Hosts {
        let ts = scenario.sender.tcp().map(|t| transport::tcp::TsTicks::of(t.ts_clock, scenario.bond.hz));
        let (host, shared) = (&scenario.host, scenario.host.shared);
        let clients = match (host.is_off(), shared) {
            (true, _) => 0,
            (false, true) => 1,
            (false, false) => requests.iter().map(|r| r.client as usize + 1).max().unwrap_or(0),
        };
        let server = !scenario.server_host.is_off();
        let mut machines = vec![RxHost::new(host, ts); clients];
        if server {
            machines.push(RxHost::new(&scenario.server_host, ts));
        }
        if scenario.server_host.app_own_cpu {
            // A CPU that only writes: the server's write cost, none of its frames'.
            let writer = scenario::Host { write_us: scenario.server_host.write_us, ..scenario::Host::default() };
            machines.push(RxHost::new(&writer, ts));
        }
        Hosts { machines, clients, shared, server, app_own_cpu: scenario.server_host.app_own_cpu }
    }

    /// The clients have machines (`[host]`).
    #[inline(always)]
    pub(super) fn clients_on(&self) -> bool {
        self.clients > 0
    }

    /// The server has a machine (`[server_host]`).
    #[inline(always)]
    pub(super) fn server_on(&self) -> bool {
        self.server
    }

    /// The machine of client `client`.
    fn of_client(&self, client: usize) -> usize {
        if self.shared {
            0
        } else {
            client
        }
    }

    fn of_server(&self) -> usize {
        self.clients
    }

    /// The CPU the server's application writes on: its machine's, or one of its own.
    fn of_app(&self) -> usize {
        self.of_server() + usize::from(self.app_own_cpu)
    }

    fn is_server(&self, machine: usize) -> bool {
        self.server && machine == self.of_server()
    }

    /// Reports the clients' machines' figures and the server's ([`crate::host::FIGURES`]).
    pub(super) fn report(&self, duration_s: f64, r: &mut Report) {
        RxHost::report(&self.machines[..self.clients], "host_", duration_s, r);
        RxHost::report(&self.machines[self.clients..], "server_host_", duration_s, r);
    }
}

impl World {
    /// The machine of the client of wire flow `flow`.
    fn client_machine(&self, flow: u32) -> usize {
        self.hosts.of_client(self.requests[self.request_of(flow) as usize].client as usize)
    }

    /// A frame reached a client's machine: into its receive queue, or dropped there.
    pub(super) fn host_receive(&mut self, now: SimTime, packet: Packet) {
        let machine = self.client_machine(packet.flow);
        match self.hosts.machines[machine].arrive(now, packet) {
            Admit::Dropped => self.copy_lost(now, packet, DropCause::HostQueue),
            admit => self.host_admitted(machine, admit),
        }
    }

    /// A frame reached the server's machine (an ACK, a ping-pong's token, an upload's data): into
    /// its receive queue, or dropped there (counted in `server_host_drops`; TCP repairs it).
    pub(super) fn server_host_receive(&mut self, now: SimTime, packet: Packet) {
        let machine = self.hosts.of_server();
        match self.hosts.machines[machine].arrive(now, packet) {
            Admit::Dropped => {}
            admit => self.host_admitted(machine, admit),
        }
    }

    fn host_admitted(&mut self, machine: usize, admit: Admit) {
        self.in_flight += 1;
        if let Admit::Handled(at) = admit {
            self.events.schedule(at, Event::new(Target::Host(machine as u32), 0));
        }
    }

    /// Machine `machine`'s CPU has handled its work: what it finished goes up the stack, then the next.
    pub(super) fn host_done(&mut self, now: SimTime, machine: usize) {
        let mut up = std::mem::take(&mut self.host_up);
        self.hosts.machines[machine].complete(now, &mut up);
        let server = self.hosts.is_server(machine);
        for skb in up.drain(..) {
            self.in_flight -= skb.len() as u64;
            match (skb.as_slice(), server) {
                ([packet], false) => self.up_the_stack(now, packet),
                (segments, false) => self.up_the_stack_merged(now, segments),
                (segments, true) => self.up_the_server_stack(now, segments),
            }
        }
        self.host_up = up;
        if let Some(flow) = self.hosts.machines[machine].take_written() {
            self.with_end(now, Side::Server, |end, out| end.app_write(now, flow, out));
        }
        if let Some(at) = self.hosts.machines[machine].start(now) {
            self.events.schedule(at, Event::new(Target::Host(machine as u32), 0));
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

    /// An skb (a frame, or a GRO skb of an upload's segments) goes up the server's stack.
    fn up_the_server_stack(&mut self, now: SimTime, segments: &[Packet]) {
        match segments {
            [packet] => self.server_stack(now, *packet),
            _ => {
                if self.app_side == Side::Server {
                    segments.iter().for_each(|p| self.wire_arrival(now, p));
                }
                self.with_end(now, Side::Server, |end, out| end.on_merged(now, segments, out));
            }
        }
    }

    /// The server's application of `flow` would write: the write waits for the server's CPU
    /// (`server_host.write_us`), then goes to the sender ([`Endpoint::app_write`], from `host_done`).
    pub(super) fn app_wants_write(&mut self, now: SimTime, flow: u32) {
        let machine = self.hosts.of_app();
        if let Some(at) = self.hosts.machines[machine].wants_write(now, flow) {
            self.events.schedule(at, Event::new(Target::Host(machine as u32), 0));
        }
    }

    /// A client sends a frame: its machine's CPU pays for it.
    #[inline]
    pub(super) fn host_sent(&mut self, now: SimTime, flow: u32) {
        if self.hosts.clients_on() {
            let machine = self.client_machine(flow);
            self.hosts.machines[machine].sent(now);
        }
    }

    /// The server sends a frame: its machine's CPU pays for it.
    #[inline(always)]
    pub(super) fn server_host_sent(&mut self, now: SimTime) {
        if self.hosts.server_on() {
            let machine = self.hosts.of_server();
            self.hosts.machines[machine].sent(now);
        }
    }
}
