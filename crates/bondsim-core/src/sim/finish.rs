//! The run's result, built from each component's report.

use super::*;
use crate::failover::Timeouts;
use crate::report::Report;

impl World {
    /// Each component reports what it did; the result is built from the reports.
    pub(super) fn finish(mut self, scenario: &Scenario, wall_s: f64) -> RunResult {
        let end = self.stopped_at.unwrap_or(self.events.now());
        let declared = result::declared_figures();
        let mut report = Report::new(&declared, end.as_secs_f64(), self.receiver.datagrams_lost);
        self.server.report(&mut report);
        self.client.report(&mut report);
        self.hosts.report(end.as_secs_f64(), &mut report);
        let timeouts = report.instants_of("rto_at").map(|rto_at| Timeouts {
            rto_at,
            spurious_rto_at: report.instants_of("spurious_rto_at").unwrap_or_default(),
        });
        let failovers = self.failover.take().map(|log| log.finish(end, &self.link_names, &self.receiver, timeouts));
        if let Some(table) = &failovers {
            table.report(&mut report);
        }
        let trace = self.trace.take().map(|t| t.finish(end, &self.links, &self.bond.views)).unwrap_or_default();
        let links = self
            .links
            .iter()
            .zip(&self.reverse)
            .zip(self.link_names)
            .map(|((link, reverse), name)| LinkReport {
                name,
                kind: link.kind(),
                capacity_bps: link.capacity_bps(),
                wire_bytes: link.wire_bytes(),
                stats: link.stats_at(end),
                reverse: reverse.as_ref().map(|r| r.stats_at(end)).unwrap_or_default(),
            })
            .collect();
        result::build(
            Reports {
                name: &scenario.name,
                seed: scenario.seed,
                // An MPTCP run's packets are placed by its scheduler, not the bond's.
                scheduler: match &scenario.sender {
                    crate::scenario::Sender::Mptcp(m) => format!("mptcp {}", m.mptcp.mptcp_scheduler),
                    _ => self.bond.label,
                },
                requests: &self.requests,
                receiver: &self.receiver,
                wire: &self.wire,
                paths: &self.paths,
                // (Per request; an MPTCP connection's traffic comes back on each subflow's link.)
                rx_links: if self.subflows > 0 { vec![None; self.requests.len()] } else { self.bond.rx_links },
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
                reported: report.finish(),
                reliable: self.reliable,
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
