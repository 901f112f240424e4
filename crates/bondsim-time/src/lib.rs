//! Simulated time: integer nanoseconds, so that runs are bit-identical everywhere.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// A point in (or span of) simulated time, in integer nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

impl SimTime {
    /// Time zero, the start of every run.
    pub const ZERO: SimTime = SimTime(0);
    /// The largest representable time (about 584 years).
    pub const MAX: SimTime = SimTime(u64::MAX);

    /// Nanoseconds since the start of the run.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// Converts a non-negative, finite number of seconds, rounding to the nearest nanosecond.
    pub fn from_secs_f64(secs: f64) -> SimTime {
        debug_assert!(secs.is_finite() && secs >= 0.0, "invalid time {secs}");
        SimTime((secs * 1e9).round() as u64)
    }

    /// This span stretched by `factor` (unchanged at exactly 1; rounded to the nanosecond otherwise).
    pub fn scaled(self, factor: f64) -> SimTime {
        if factor == 1.0 {
            self
        } else {
            SimTime((self.0 as f64 * factor).round() as u64)
        }
    }

    /// Converts milliseconds, rounding to the nearest nanosecond.
    pub fn from_millis_f64(ms: f64) -> SimTime {
        SimTime::from_secs_f64(ms / 1e3)
    }

    /// Converts microseconds, rounding to the nearest nanosecond.
    pub fn from_micros_f64(us: f64) -> SimTime {
        SimTime::from_secs_f64(us / 1e6)
    }

    /// This time in seconds (for reporting only; never fed back into the simulation).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }

    /// `self - other`, or zero if `other` is later.
    pub const fn saturating_sub(self, other: SimTime) -> SimTime {
        SimTime(self.0.saturating_sub(other.0))
    }
}

impl Add for SimTime {
    type Output = SimTime;
    fn add(self, rhs: SimTime) -> SimTime {
        SimTime(self.0 + rhs.0)
    }
}

impl AddAssign for SimTime {
    fn add_assign(&mut self, rhs: SimTime) {
        self.0 += rhs.0;
    }
}

impl Sub for SimTime {
    type Output = SimTime;
    fn sub(self, rhs: SimTime) -> SimTime {
        SimTime(self.0 - rhs.0)
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_round_to_nearest_nanosecond() {
        assert_eq!(SimTime::from_millis_f64(20.0), SimTime(20_000_000));
        assert_eq!(SimTime::from_millis_f64(0.082e3), SimTime(82_000_000));
        assert_eq!(SimTime::from_secs_f64(1.5e-9), SimTime(2));
        assert_eq!(SimTime::from_micros_f64(1.0), SimTime(1_000));
        assert_eq!(SimTime(1_500_000_000).as_secs_f64(), 1.5);
    }
}
