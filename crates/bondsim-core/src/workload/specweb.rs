//! The SPECweb99 static file set, as SPEC's client draws it.
//!
//! 4 classes of 9 files; file `i` of class `c` is `(i + 1) × 1024 × 10^c / 10`
//! bytes (102 B … 921 B, 1 KiB … 9 KiB, 10 KiB … 90 KiB, 100 KiB … 900 KiB).
//! A class is chosen with probabilities 35/50/14/1 %, then a file by Zipf
//! (α = 1) rank over the fixed popularity order `4, 3, 5, 2, 6, 1, 7, 8, 0`
//! (`FILE_ORDER` in SPEC's client, as kept by the Singularity port and SEDA's
//! `HttpLoad.java`): file 4 is the most popular at 35.4 %. Directories only
//! change file contents, not sizes, so they are not modelled.

use rand::RngExt;

use crate::rng::Rng;
use crate::scenario::{FileSize, Popularity};

/// Probability of each class (SPECweb96/99: 35 %, 50 %, 14 %, 1 %).
pub const CLASS_PROBABILITY: [f64; 4] = [0.35, 0.50, 0.14, 0.01];

/// File indices from most to least popular within a class.
pub const FILE_ORDER: [u8; 9] = [4, 3, 5, 2, 6, 1, 7, 8, 0];

/// Size of file `index` (0–8) of `class` (0–3), bytes.
pub fn file_bytes(class: u8, index: u8) -> u64 {
    1024 * 10u64.pow(u32::from(class)) * (u64::from(index) + 1) / 10
}

/// Probability of file `index` within its class: Zipf(1) over its popularity rank.
pub fn file_probability(index: u8) -> f64 {
    let harmonic: f64 = (1..=9).map(|r| 1.0 / f64::from(r)).sum();
    let rank = FILE_ORDER.iter().position(|&i| i == index).expect("index 0-8");
    1.0 / (rank as f64 + 1.0) / harmonic
}

/// Draws file sizes from (part of) the SPECweb99 set.
#[derive(Debug, Clone)]
pub struct SizeSampler {
    sizes: Vec<u64>,
    cumulative: Vec<f64>,
}

impl SizeSampler {
    /// The sampler for `spec`, if it is a `zipfset`.
    pub fn for_spec(spec: &FileSize) -> Option<SizeSampler> {
        let FileSize::Zipfset { classes, popularity } = spec else {
            return None;
        };
        let mut classes = classes.clone();
        classes.sort_unstable();
        classes.dedup();
        let mut sizes = Vec::new();
        let mut weights = Vec::new();
        for &class in &classes {
            for index in 0..9u8 {
                sizes.push(file_bytes(class, index));
                weights.push(match popularity {
                    Popularity::Uniform => 1.0,
                    Popularity::Specweb => CLASS_PROBABILITY[usize::from(class)] * file_probability(index),
                });
            }
        }
        let total: f64 = weights.iter().sum();
        let mut acc = 0.0;
        let cumulative = weights
            .iter()
            .map(|w| {
                acc += w / total;
                acc
            })
            .collect();
        Some(SizeSampler { sizes, cumulative })
    }

    /// The mean file size, bytes (each file's size by its probability).
    pub fn mean(&self) -> f64 {
        let mut before = 0.0;
        self.sizes
            .iter()
            .zip(&self.cumulative)
            .map(|(&size, &c)| {
                let p = c - before;
                before = c;
                size as f64 * p
            })
            .sum()
    }

    /// One file size.
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        let u: f64 = rng.random();
        let i = self.cumulative.partition_point(|&c| c <= u).min(self.sizes.len() - 1);
        self.sizes[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng;

    #[test]
    fn sizes_match_specweb_table() {
        assert_eq!((0..9).map(|i| file_bytes(0, i)).collect::<Vec<_>>(), [102, 204, 307, 409, 512, 614, 716, 819, 921]);
        assert_eq!(file_bytes(1, 0), 1024);
        assert_eq!(file_bytes(2, 8), 92_160);
        assert_eq!(file_bytes(3, 0), 102_400);
        assert_eq!(file_bytes(3, 8), 921_600);
        // One directory of 36 files: about 4.88 MiB, as the thesis says of its zipfset.
        let dir: u64 = (0..4).flat_map(|c| (0..9).map(move |i| file_bytes(c, i))).sum();
        assert!((dir as f64 / 1048576.0 - 4.88).abs() < 0.005, "{dir}");
    }

    #[test]
    fn popularity_follows_class_mix_and_zipf_order() {
        assert!((file_probability(4) - 0.3535).abs() < 1e-3);
        assert!((file_probability(0) - 0.0393).abs() < 1e-3);
        let total: f64 = (0..9).map(file_probability).sum();
        assert!((total - 1.0).abs() < 1e-12);
        let spec = FileSize::Zipfset { classes: vec![0, 1, 2, 3], popularity: Popularity::Specweb };
        let sampler = SizeSampler::for_spec(&spec).unwrap();
        let mut r = rng::stream(1, "t");
        let n = 200_000;
        let draws: Vec<u64> = (0..n).map(|_| sampler.sample(&mut r)).collect();
        let share = |pred: &dyn Fn(u64) -> bool| draws.iter().filter(|&&b| pred(b)).count() as f64 / n as f64;
        assert!((share(&|b| b < 1024) - 0.35).abs() < 0.005);
        assert!((share(&|b| (1024..10240).contains(&b)) - 0.50).abs() < 0.005);
        assert!((share(&|b| b >= 102_400) - 0.01).abs() < 0.002);
        assert!((share(&|b| b == 5120) - 0.50 * 0.3535).abs() < 0.005);
        // Mean response size ≈ 14.7 KB (SPECweb99's known mean of the static mix).
        let mean = draws.iter().sum::<u64>() as f64 / n as f64;
        assert!((mean - 14_727.0).abs() < 600.0, "{mean}");
    }

    #[test]
    fn restricted_uniform_covers_only_chosen_classes() {
        let spec = FileSize::Zipfset { classes: vec![3], popularity: Popularity::Uniform };
        let sampler = SizeSampler::for_spec(&spec).unwrap();
        let mut r = rng::stream(1, "t");
        let mut seen: Vec<u64> = (0..5000).map(|_| sampler.sample(&mut r)).collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen, (0..9).map(|i| file_bytes(3, i)).collect::<Vec<_>>());
    }
}
