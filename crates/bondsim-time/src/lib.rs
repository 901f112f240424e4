//! Simulated time: integer nanoseconds, so that runs are bit-identical everywhere.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// `x.round() as u64` (to nearest, halves away from zero; saturating, NaN → 0), bit for bit,
/// without the call: `f64::round` is a library routine on x86-64 before SSE4.1, and time
/// conversions run several times per packet. The truncating cast is one instruction, and
/// `x - trunc(x)` is exact (the fraction of a double is a double), so the halfway test is exact.
#[inline]
pub fn round_u64(x: f64) -> u64 {
    let whole = x as u64;
    if x - whole as f64 >= 0.5 {
        whole.saturating_add(1)
    } else {
        whole
    }
}

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
        SimTime(round_u64(secs * 1e9))
    }

    /// This span stretched by `factor` (unchanged at exactly 1; rounded to the nanosecond otherwise).
    pub fn scaled(self, factor: f64) -> SimTime {
        if factor == 1.0 {
            self
        } else {
            SimTime(round_u64(self.0 as f64 * factor))
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

/// An `Option<SimTime>` in 8 bytes (`Option<SimTime>` takes 16): `SimTime::MAX`, about 584 years,
/// stands for none, so a time held there reads back as none (a deadline at the end of time, which
/// never comes). For state kept once per connection, where the 8 bytes count (issue 40: a flow's
/// weight).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MaybeTime(u64);

impl MaybeTime {
    /// No time.
    pub const NONE: MaybeTime = MaybeTime(u64::MAX);

    /// `at` (none if it is `SimTime::MAX`).
    #[inline]
    pub const fn some(at: SimTime) -> MaybeTime {
        MaybeTime(at.0)
    }

    #[inline]
    pub fn get(self) -> Option<SimTime> {
        (self.0 != u64::MAX).then_some(SimTime(self.0))
    }

    #[inline]
    pub fn is_none(self) -> bool {
        self.0 == u64::MAX
    }
}

impl Default for MaybeTime {
    fn default() -> MaybeTime {
        MaybeTime::NONE
    }
}

impl From<Option<SimTime>> for MaybeTime {
    fn from(t: Option<SimTime>) -> MaybeTime {
        t.map_or(MaybeTime::NONE, MaybeTime::some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_u64_is_round_then_cast_bit_for_bit() {
        let edges = [
            0.0,
            -0.0,
            0.49999999999999994,
            0.5,
            1.5,
            2.5,
            -0.4,
            -0.5,
            -7.5,
            4503599627370495.5,
            4503599627370497.0,
            9007199254740993.0,
            9.223372036854775e18,
            1.8446744073709552e19,
            1e300,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MIN_POSITIVE,
        ];
        // And a spread of ordinary values: every scale, halves and their neighbours.
        let mut x = 0x9e3779b97f4a7c15u64;
        let spread = (0..100_000).map(|k| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = (x >> 11) as f64 / (1u64 << 53) as f64 * 10f64.powi(k % 20);
            if k % 3 == 0 {
                v.trunc() + 0.5
            } else {
                v
            }
        });
        for v in edges.into_iter().chain(spread) {
            for w in [v, f64::from_bits(v.to_bits().wrapping_add(1)), f64::from_bits(v.to_bits().wrapping_sub(1))] {
                assert_eq!(round_u64(w), w.round() as u64, "{w:e}");
            }
        }
    }

    #[test]
    fn conversions_round_to_nearest_nanosecond() {
        assert_eq!(SimTime::from_millis_f64(20.0), SimTime(20_000_000));
        assert_eq!(SimTime::from_millis_f64(0.082e3), SimTime(82_000_000));
        assert_eq!(SimTime::from_secs_f64(1.5e-9), SimTime(2));
        assert_eq!(SimTime::from_micros_f64(1.0), SimTime(1_000));
        assert_eq!(SimTime(1_500_000_000).as_secs_f64(), 1.5);
    }

    #[test]
    fn maybe_time_holds_every_time_but_max_and_none() {
        for t in [SimTime::ZERO, SimTime(1), SimTime(u64::MAX - 1)] {
            assert_eq!(MaybeTime::some(t).get(), Some(t));
            assert_eq!(MaybeTime::from(Some(t)).get(), Some(t));
        }
        assert_eq!(MaybeTime::NONE.get(), None);
        assert_eq!(MaybeTime::default().get(), None);
        assert!(MaybeTime::from(None).is_none());
        assert_eq!(std::mem::size_of::<MaybeTime>(), 8);
        assert!(MaybeTime::some(SimTime::MAX).is_none(), "the end of time reads as none");
    }
}
