//! Slowdowns: the factor by which a link's send times are stretched over time.

use rand_distr::{Distribution, Exp};

use crate::rng::{self, Rng};
use crate::scenario::{Intermittent, LinkBase};
use crate::time::SimTime;

/// The factor by which a link's send time is stretched at a given moment:
/// uniform × every window in force × the intermittent phase.
#[derive(Debug, Clone)]
pub struct Slowdown {
    uniform: f64,
    windows: Vec<(SimTime, SimTime, f64)>,
    intermittent: Option<IntermittentState>,
}

#[derive(Debug, Clone)]
struct IntermittentState {
    slow_factor: f64,
    slow_mean: f64,
    normal_mean: f64,
    random: Option<Rng>,
    in_slow: bool,
    phase_end: SimTime,
}

impl IntermittentState {
    fn new(spec: &Intermittent, rng: Rng) -> IntermittentState {
        let mut state = IntermittentState {
            slow_factor: spec.slowdown,
            slow_mean: spec.slow_s,
            normal_mean: spec.normal_s,
            random: spec.random.then_some(rng),
            in_slow: false,
            phase_end: SimTime::ZERO,
        };
        state.phase_end = state.phase_length(false);
        state
    }

    /// Length of the next phase (at least 1 ns, so time always moves on).
    fn phase_length(&mut self, slow: bool) -> SimTime {
        let mean = if slow { self.slow_mean } else { self.normal_mean };
        let secs = match &mut self.random {
            Some(rng) => Exp::new(1.0 / mean).expect("validated mean > 0").sample(rng),
            None => mean,
        };
        SimTime::from_secs_f64(secs).max(SimTime(1))
    }

    /// The factor at `now`; queries must come in non-decreasing time order.
    fn factor_at(&mut self, now: SimTime) -> f64 {
        while now >= self.phase_end {
            self.in_slow = !self.in_slow;
            let length = self.phase_length(self.in_slow);
            self.phase_end += length;
        }
        if self.in_slow {
            self.slow_factor
        } else {
            1.0
        }
    }
}

impl Slowdown {
    /// No slowdown at all.
    pub fn none() -> Slowdown {
        Slowdown { uniform: 1.0, windows: Vec::new(), intermittent: None }
    }

    /// The slowdown schedule of link `id` described by `spec`.
    pub fn new(spec: &LinkBase, seed: u64, id: usize) -> Slowdown {
        Slowdown {
            uniform: spec.slowdown,
            windows: spec
                .slow_windows
                .iter()
                .map(|w| (SimTime::from_secs_f64(w.start_s), SimTime::from_secs_f64(w.end_s), w.slowdown))
                .collect(),
            intermittent: spec
                .intermittent
                .as_ref()
                .map(|im| IntermittentState::new(im, rng::stream(seed, &format!("links.{id}.intermittent")))),
        }
    }

    /// The factor, when it is the same at all times (no windows, no intermittent slowdown).
    pub fn constant(&self) -> Option<f64> {
        (self.windows.is_empty() && self.intermittent.is_none()).then_some(self.uniform)
    }

    /// The factor at `now` (queries in non-decreasing time order).
    pub fn factor_at(&mut self, now: SimTime) -> f64 {
        let mut factor = self.uniform;
        for &(start, end, f) in &self.windows {
            if start <= now && now < end {
                factor *= f;
            }
        }
        if let Some(im) = &mut self.intermittent {
            factor *= im.factor_at(now);
        }
        factor
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::SlowWindow;

    #[test]
    fn windows_and_uniform_slowdowns_multiply() {
        let s = LinkBase {
            slowdown: 2.0,
            slow_windows: vec![SlowWindow { start_s: 1.0, end_s: 2.0, slowdown: 3.0 }],
            ..LinkBase::default()
        };
        let mut slow = Slowdown::new(&s, 1, 0);
        assert_eq!(slow.factor_at(SimTime::from_secs_f64(0.5)), 2.0);
        assert_eq!(slow.factor_at(SimTime::from_secs_f64(1.0)), 6.0);
        assert_eq!(slow.factor_at(SimTime::from_secs_f64(2.0)), 2.0);
    }

    #[test]
    fn intermittent_alternates_normal_then_slow() {
        let s = LinkBase {
            intermittent: Some(Intermittent { slow_s: 1.0, normal_s: 2.0, slowdown: 4.0, random: false }),
            ..LinkBase::default()
        };
        let mut slow = Slowdown::new(&s, 1, 0);
        let at = |x: f64| SimTime::from_secs_f64(x);
        let got: Vec<f64> = [0.0, 1.9, 2.0, 2.9, 3.0, 4.9, 5.0].iter().map(|&t| slow.factor_at(at(t))).collect();
        assert_eq!(got, [1.0, 1.0, 4.0, 4.0, 1.0, 1.0, 4.0]);
    }

    #[test]
    fn random_intermittent_spends_its_mean_share_slow() {
        let s = LinkBase {
            intermittent: Some(Intermittent { slow_s: 1.0, normal_s: 3.0, slowdown: 4.0, random: true }),
            ..LinkBase::default()
        };
        let mut slow = Slowdown::new(&s, 9, 0);
        let samples = 200_000;
        let slow_share =
            (0..samples).filter(|k| slow.factor_at(SimTime::from_millis_f64(*k as f64 * 10.0)) > 1.0).count() as f64
                / samples as f64;
        // Mean slow 1 s out of a 4 s cycle; 2000 s of samples hold ~500 cycles.
        assert!((slow_share - 0.25).abs() < 0.04, "slow share {slow_share}");
    }
}
