//! Random delays: a rate link's extra wire delay per frame, a paced link's late wake-ups.

use rand::RngExt;
use rand_distr::{Distribution, Exp, Normal};

use crate::rng::Rng;
use crate::scenario::Jitter;
use crate::time::SimTime;

/// Draws the delays a [`Jitter`] describes.
#[derive(Debug, Clone)]
pub(super) enum JitterSampler {
    Uniform(f64),
    Exponential(Exp<f64>),
    Normal(Normal<f64>),
    Choice(Vec<SimTime>),
}

impl JitterSampler {
    /// The sampler of `spec` (already checked: its parameter is positive).
    pub(super) fn new(spec: &Jitter) -> JitterSampler {
        match spec {
            Jitter::Uniform { max_us } => JitterSampler::Uniform(max_us * 1e-6),
            Jitter::Exponential { mean_us } => JitterSampler::Exponential(Exp::new(1e6 / mean_us).expect("validated")),
            Jitter::Normal { sd_us } => JitterSampler::Normal(Normal::new(0.0, sd_us * 1e-6).expect("validated")),
            Jitter::Choice { values_us } => {
                JitterSampler::Choice(values_us.iter().map(|&us| SimTime::from_micros_f64(us)).collect())
            }
        }
    }

    /// One delay, drawn from `rng`.
    pub(super) fn sample(&self, rng: &mut Rng) -> SimTime {
        let secs = match self {
            JitterSampler::Choice(values) => {
                // Each equally likely (a draw in [0, 1) scaled to an index).
                let k = ((rng.random::<f64>() * values.len() as f64) as usize).min(values.len() - 1);
                return values[k];
            }
            JitterSampler::Uniform(max) => rng.random::<f64>() * max,
            JitterSampler::Exponential(d) => d.sample(rng),
            JitterSampler::Normal(d) => d.sample(rng).abs(),
        };
        SimTime::from_secs_f64(secs)
    }
}
