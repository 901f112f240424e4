//! The NICs' receive interrupts (`links.N.rx_coalesce_us`): each link's NIC at either end raises at
//! most one receive interrupt per interval, so a frame that arrives sooner after the last one waits
//! for the next, and goes up with every frame that arrived meanwhile. As the e1000's interrupt
//! throttling (`ITR`: "the minimum inter-interrupt interval", `InterruptThrottleRate` in interrupts
//! a second, drivers/net/e1000/e1000_param.c and e1000_main.c's `e1000_configure_rx`, Linux 2.5.66
//! to 6.x) and `ethtool -C rx-usecs` of the drivers that map it to that register. A frame that finds
//! no interrupt pending and the interval over since the last raises one at once. Without the field
//! none of this runs.

use super::*;

/// The receiving NIC of one link at one end.
#[derive(Debug, Default)]
struct Gate {
    interval: SimTime,
    /// When its last interrupt was raised (none yet).
    last: Option<SimTime>,
    /// The frames waiting for its next interrupt, in arrival order (one is pending while any waits).
    held: Vec<Packet>,
}

/// Which end of a link a frame reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum End {
    /// The client's NIC (the data of a download).
    Client = 0,
    /// The server's (its ACKs, an upload's data).
    Server = 1,
}

/// What a NIC does with a frame that reached it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pass {
    /// It raises an interrupt: the frame goes up now.
    Now,
    /// It holds the frame for its next interrupt: at this time, to be scheduled, when the frame is
    /// the first to wait (none: one is pending already).
    Held(Option<SimTime>),
}

/// Every link's two receiving NICs.
#[derive(Debug, Default)]
pub(super) struct NicIrqs {
    gates: Vec<[Gate; 2]>,
}

impl NicIrqs {
    /// The NICs of `scenario`'s links; none when no link throttles its interrupts.
    pub(super) fn new(scenario: &Scenario) -> NicIrqs {
        let intervals: Vec<f64> = scenario.each_link().map(|(_, l)| l.model.rx_coalesce_us()).collect();
        if intervals.iter().all(|&us| us == 0.0) {
            return NicIrqs::default();
        }
        let gate = |us: f64| Gate { interval: SimTime((us * 1e3).round() as u64), ..Gate::default() };
        NicIrqs { gates: intervals.iter().map(|&us| [gate(us), gate(us)]).collect() }
    }

    /// Some link throttles its interrupts.
    #[inline(always)]
    pub(super) fn on(&self) -> bool {
        !self.gates.is_empty()
    }

    /// `packet` reaches link `link`'s NIC at `end` at `now`.
    fn arrive(&mut self, now: SimTime, link: usize, end: End, packet: Packet) -> Pass {
        let g = &mut self.gates[link][end as usize];
        if !g.held.is_empty() {
            g.held.push(packet);
            return Pass::Held(None);
        }
        match g.last.map(|last| last + g.interval).filter(|&next| next > now) {
            None => {
                g.last = Some(now);
                Pass::Now
            }
            Some(next) => {
                g.held.push(packet);
                Pass::Held(Some(next))
            }
        }
    }

    /// Link `link`'s NIC at `end` raises its interrupt at `now`: the frames it held, in order.
    fn interrupt(&mut self, now: SimTime, link: usize, end: End) -> Vec<Packet> {
        let g = &mut self.gates[link][end as usize];
        g.last = Some(now);
        std::mem::take(&mut g.held)
    }
}

impl World {
    /// A frame of link `link` reached its NIC at `end`: true if it goes up now, false if the NIC holds
    /// it for its next interrupt (then [`World::nic_interrupt`] hands it on).
    #[inline(always)]
    pub(super) fn nic_passes(&mut self, now: SimTime, link: usize, end: End, packet: &Packet) -> bool {
        !self.nics.on() || self.nic_gate(now, link, end, packet)
    }

    /// [`World::nic_passes`] where some NIC throttles (out of line: the frame path without it is a
    /// test of one length).
    #[inline(never)]
    fn nic_gate(&mut self, now: SimTime, link: usize, end: End, packet: &Packet) -> bool {
        match self.nics.arrive(now, link, end, *packet) {
            Pass::Now => true,
            Pass::Held(at) => {
                self.in_flight += 1;
                if let Some(at) = at {
                    self.events.schedule(at, Event::new(Target::NicIrq(link as u32), end as u64));
                }
                false
            }
        }
    }

    /// Link `link`'s NIC at the end `token` names raises its interrupt: what it held goes on.
    pub(super) fn nic_interrupt(&mut self, now: SimTime, link: usize, token: u64) {
        let end = if token == End::Server as u64 { End::Server } else { End::Client };
        for packet in self.nics.interrupt(now, link, end) {
            self.in_flight -= 1;
            match end {
                End::Client => self.nic_to_client(now, &packet),
                End::Server => self.nic_to_server(now, packet),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gates(us: f64) -> NicIrqs {
        let gate = || Gate { interval: SimTime((us * 1e3) as u64), ..Gate::default() };
        NicIrqs { gates: vec![[gate(), gate()]] }
    }

    #[test]
    fn a_frame_waits_for_the_next_interrupt_and_takes_those_that_came_meanwhile() {
        let mut n = gates(500.0);
        let p = |seq| Packet::data(0, seq, 100, SimTime::ZERO);
        assert_eq!(n.arrive(SimTime(0), 0, End::Client, p(0)), Pass::Now, "the first raises one at once");
        assert_eq!(n.arrive(SimTime(100_000), 0, End::Client, p(1)), Pass::Held(Some(SimTime(500_000))));
        assert_eq!(n.arrive(SimTime(200_000), 0, End::Client, p(2)), Pass::Held(None), "one interrupt pending");
        assert_eq!(n.arrive(SimTime(300_000), 0, End::Server, p(9)), Pass::Now, "the other end's NIC is its own");
        let up: Vec<u32> = n.interrupt(SimTime(500_000), 0, End::Client).iter().map(|p| p.seq).collect();
        assert_eq!(up, [1, 2]);
        assert_eq!(n.arrive(SimTime(900_000), 0, End::Client, p(3)), Pass::Held(Some(SimTime(1_000_000))));
        n.interrupt(SimTime(1_000_000), 0, End::Client);
        assert_eq!(n.arrive(SimTime(1_600_000), 0, End::Client, p(4)), Pass::Now, "the interval is over: at once");
    }
}
