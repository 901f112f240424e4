//! Reorder density (RD, RFC 5236): the distribution of packets' displacement
//! from their original position, normalised by the number of packets.
//!
//! As in the RFC authors' algorithm (`D = RI - S`), a packet's displacement
//! is its receive position minus its position in the flow as sent, neither
//! counting lost packets: `D < 0` is an early packet, `D > 0` a late one
//! (arrivals 1 6 7 2 3 4 5 8 give 0 −4 −4 2 2 2 2 0). The RFC infers losses
//! from its displacement threshold DT and discards displacements beyond it;
//! a simulator knows which packets were lost, so bondsim counts them out
//! exactly and keeps every packet, counting displacements beyond ±DT at
//! ±(DT + 1) so the tails stay visible.

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
