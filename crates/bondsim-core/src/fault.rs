//! Link faults that keep the carrier: silent ports (`links.N.failures.K.kind = "silent"`)
//! and what they do to 802.3ad's LACPDUs.
//!
//! A silent port (a switch port "suspended", an upstream not ready) keeps its carrier, so
//! the NIC and miimon see nothing, while frames crossing it in the failed direction are
//! dropped: all of them (`drop = 1`) or each with probability `drop`, drawn from the stream
//! `links.{id}.silent`. A frame is judged when it reaches the far end of the wire (it took
//! its transmit time, as a frame the switch port discards does). `out` is host to switch
//! (the bond's frames on the forward link), `in` switch to host (the reverse link).

use rand::RngExt;

use crate::bond::lacpdu;
use crate::rng::{self, Rng};
use crate::scenario::{Failure, FailureKind, Flapping, Scenario};
use crate::time::SimTime;

/// One silent failure of a link.
#[derive(Debug, Clone)]
struct Silent {
    from: SimTime,
    until: SimTime,
    drop: f64,
    direction: crate::scenario::FailureDirection,
}

impl Silent {
    fn covers(&self, now: SimTime, outgoing: bool) -> bool {
        now >= self.from && now < self.until && self.direction.drops(outgoing)
    }
}

/// A uniform random offset in [0, `jitter_ms`) ms from the stream `name` of `seed` (none
/// drawn, zero, without jitter): a failure falls at any phase of the monitor's period, and a
/// sweep over `seed` is a Monte Carlo of failure instants.
fn jitter(seed: u64, name: &str, jitter_ms: f64) -> SimTime {
    if jitter_ms <= 0.0 {
        return SimTime::ZERO;
    }
    let u: f64 = rng::stream(seed, name).random();
    SimTime::from_millis_f64(u * jitter_ms)
}

/// When a scheduled failure (`links.{link}.failures.{k}`) happens in a run of `seed`:
/// `down_s` and `up_s` moved by the same offset ([`jitter`], stream
/// `links.{link}.failures.{k}.jitter`).
pub fn failure_instants(failure: &Failure, seed: u64, link: usize, k: usize) -> (SimTime, Option<SimTime>) {
    let offset = jitter(seed, &format!("links.{link}.failures.{k}.jitter"), failure.jitter_ms);
    (SimTime::from_secs_f64(failure.down_s) + offset, failure.up_s.map(|up| SimTime::from_secs_f64(up) + offset))
}

/// Every loss of carrier of a flapping link (`links.{link}.flapping`) in a run of `seed`, as
/// (down, up) instants: the whole train moved by one offset ([`jitter`], stream
/// `links.{link}.flapping.jitter`).
pub fn flapping_instants(flap: &Flapping, seed: u64, link: usize) -> impl Iterator<Item = (SimTime, SimTime)> + '_ {
    let offset = jitter(seed, &format!("links.{link}.flapping.jitter"), flap.jitter_ms);
    flap.windows().map(move |(down, up)| (SimTime::from_secs_f64(down) + offset, SimTime::from_secs_f64(up) + offset))
}

/// Every link's silent failures.
#[derive(Debug, Clone)]
pub struct SilentPorts {
    links: Vec<Vec<Silent>>,
    rngs: Vec<Rng>,
}

impl SilentPorts {
    /// The silent failures of `scenario`'s links.
    pub fn new(scenario: &Scenario) -> SilentPorts {
        let links: Vec<Vec<Silent>> = scenario
            .each_link()
            .map(|(id, spec)| {
                (spec.base.failures.iter().enumerate().filter(|(_, f)| f.kind == FailureKind::Silent))
                    .map(|(k, f)| {
                        let (from, until) = failure_instants(f, scenario.seed, id, k);
                        Silent { from, until: until.unwrap_or(SimTime::MAX), drop: f.drop, direction: f.direction }
                    })
                    .collect()
            })
            .collect();
        let rngs = (0..links.len()).map(|id| rng::stream(scenario.seed, &format!("links.{id}.silent"))).collect();
        SilentPorts { links, rngs }
    }

    /// Whether any link has a silent failure.
    pub fn any(&self) -> bool {
        self.links.iter().any(|l| !l.is_empty())
    }

    /// Whether link `id` drops a frame reaching the far end at `now`, sent by the bond's host
    /// (`outgoing`) or to it. A fractional `drop` draws one number per frame in the failure.
    #[inline]
    pub fn drops(&mut self, id: usize, now: SimTime, outgoing: bool) -> bool {
        let Some(s) = self.links[id].iter().find(|s| s.covers(now, outgoing)) else { return false };
        s.drop >= 1.0 || self.rngs[id].random::<f64>() < s.drop
    }

    /// The times link `id` leaves its 802.3ad aggregator (+1) or comes back (−1) because
    /// LACPDUs are lost (`lacp_rate` fast or slow, [`lacpdu::outages`]): the partner's LACPDUs
    /// in the `in` direction and the bond's own in the `out` direction (the partner's timer then
    /// runs out the same way and it stops aggregating the port). Each direction's transmit
    /// phase is uniform over the period (streams `links.{id}.lacpdu_in` / `_out`); fractional
    /// drops draw from `links.{id}.lacpdu_in_drop` / `_out_drop`.
    pub fn lacp_outages(&self, id: usize, seed: u64, fast: bool) -> Vec<(SimTime, i32)> {
        let windows = &self.links[id];
        if windows.is_empty() {
            return Vec::new();
        }
        let (period, timeout) = lacpdu::rate(fast);
        // Past the last failure (or, for one that never ends, a million periods into it) no LACPDU is lost.
        let last = windows.iter().map(|w| w.until).max().unwrap_or(SimTime::ZERO);
        let until = if last == SimTime::MAX {
            let start = windows.iter().map(|w| w.from).max().unwrap_or(SimTime::ZERO);
            SimTime(start.0.saturating_add(period.0.saturating_mul(1_000_000)))
        } else {
            last
        };
        let mut changes = Vec::new();
        for (outgoing, name) in [(false, "in"), (true, "out")] {
            let mut phase_rng = rng::stream(seed, &format!("links.{id}.lacpdu_{name}"));
            let phase = SimTime((phase_rng.random::<f64>() * period.0 as f64) as u64);
            let mut drop_rng = rng::stream(seed, &format!("links.{id}.lacpdu_{name}_drop"));
            let lost = |t: SimTime| {
                windows
                    .iter()
                    .find(|w| w.covers(t, outgoing))
                    .is_some_and(|w| w.drop >= 1.0 || drop_rng.random::<f64>() < w.drop)
            };
            for (leave, back) in lacpdu::outages(period, timeout, phase, until, lost) {
                changes.push((leave, 1));
                if let Some(back) = back {
                    changes.push((back, -1));
                }
            }
        }
        changes
    }
}
