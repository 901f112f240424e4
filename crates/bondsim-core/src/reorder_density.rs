//! RFC 5236 reorder density (RD): the distribution of packet displacements.
//!
//! Provisional: displacement = receive index − sequence number, a lost packet
//! taking its receive index when it is declared lost.

use std::collections::BTreeMap;

/// Displacement threshold DT: displacements beyond ±DT are counted at ±(DT+1).
pub const DT: i64 = 8;

/// Counts of displacements, one flow or summed over flows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReorderDensity {
    receive_index: i64,
    counts: BTreeMap<i64, u64>,
}

impl ReorderDensity {
    /// Packet `seq` arrived.
    pub fn arrive(&mut self, seq: u32) {
        let d = (self.receive_index - i64::from(seq)).clamp(-DT - 1, DT + 1);
        *self.counts.entry(d).or_default() += 1;
        self.receive_index += 1;
    }

    /// Packet `seq` is lost.
    pub fn lose(&mut self, _seq: u32) {
        self.receive_index += 1;
    }

    /// The counts with nothing left pending.
    pub fn flushed(&self) -> ReorderDensity {
        self.clone()
    }

    /// Adds `other`'s counts.
    pub fn add(&mut self, other: &ReorderDensity) {
        for (&d, &n) in &other.counts {
            *self.counts.entry(d).or_default() += n;
        }
    }

    /// (displacement, share) for every displacement seen, in order.
    pub fn fractions(&self) -> Vec<(i64, f64)> {
        let total: u64 = self.counts.values().sum();
        self.counts.iter().map(|(&d, &n)| (d, n as f64 / total as f64)).collect()
    }
}
