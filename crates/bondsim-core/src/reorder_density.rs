//! Reorder density (RD, RFC 5236): the distribution of packets' displacement
//! from their original position, normalised by the number of packets.
//!
//! A packet's displacement is `D = RI − E`: its receive index (position among
//! its flow's distinct arrivals, from 0) minus its expected index (its
//! position in the flow as sent, from 0, not counting packets that were
//! lost). `D > 0` is a late packet, `D < 0` an early one. RFC 5236 infers
//! losses with its displacement threshold DT; a simulator knows them, so
//! bondsim counts lost packets out exactly and uses DT only to bound the
//! histogram: displacements beyond ±DT are counted at ±(DT + 1).

/// Displacement threshold: the histogram spans −DT..=DT, plus one bin each side for beyond.
pub const DT: i64 = 16;

const BINS: usize = (2 * DT + 3) as usize;

/// Counts of displacements over every flow.
#[derive(Debug, Clone, PartialEq)]
pub struct ReorderDensity {
    counts: [u64; BINS],
}

impl Default for ReorderDensity {
    fn default() -> Self {
        ReorderDensity { counts: [0; BINS] }
    }
}

impl ReorderDensity {
    /// Records one packet's displacement.
    pub fn record(&mut self, displacement: i64) {
        let clamped = displacement.clamp(-DT - 1, DT + 1);
        self.counts[(clamped + DT + 1) as usize] += 1;
    }

    /// (displacement, share of packets) for every displacement seen, in order;
    /// ±(DT + 1) stand for "beyond the threshold".
    pub fn fractions(&self) -> Vec<(i64, f64)> {
        let total: u64 = self.counts.iter().sum();
        (0..BINS)
            .filter(|&i| self.counts[i] > 0)
            .map(|i| (i as i64 - DT - 1, self.counts[i] as f64 / total as f64))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_sum_to_one_and_far_displacements_share_an_end_bin() {
        let mut rd = ReorderDensity::default();
        for d in [0, 0, 0, 1, -1, 40, -40] {
            rd.record(d);
        }
        let f = rd.fractions();
        assert_eq!(f.iter().map(|(d, _)| *d).collect::<Vec<_>>(), [-DT - 1, -1, 0, 1, DT + 1]);
        assert!((f.iter().map(|(_, x)| x).sum::<f64>() - 1.0).abs() < 1e-12);
        assert!((f[2].1 - 3.0 / 7.0).abs() < 1e-12);
    }
}
