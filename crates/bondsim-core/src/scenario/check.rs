//! Value checks shared by every part: durations, rates, factors, probabilities, counts.

use super::*;
use bondsim_time::SimTime;

/// Longest time a scenario may name: a year, far beyond any useful run and
/// far inside the nanosecond clock's 584-year range.
pub(super) const MAX_SECONDS: f64 = 365.0 * 86_400.0;

/// `value` must be a finite number > 0 (factors, rates).
pub(crate) fn positive(path: &str, value: f64) -> Result<()> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(Error::scenario(path, format!("must be a number > 0, got {value}")))
    }
}

/// `value` must be a link or flow rate in Mbit/s: (0, 10^7] (up to 10 Tbit/s).
pub(crate) fn rate_mbps(path: &str, value: f64) -> Result<()> {
    if value.is_finite() && value > 0.0 && value <= 1e7 {
        Ok(())
    } else {
        Err(Error::scenario(path, format!("must be a rate in Mbit/s, > 0 and at most 1e7, got {value}")))
    }
}

/// `value` must be a speed factor in (0, 10^6].
pub(crate) fn factor(path: &str, value: f64) -> Result<()> {
    if value.is_finite() && value > 0.0 && value <= 1e6 {
        Ok(())
    } else {
        Err(Error::scenario(path, format!("must be a factor > 0 and at most 1e6, got {value}")))
    }
}

/// `value` (in units of `unit_s` seconds) must be a duration in (0, one year],
/// or [0, one year] if `zero_ok`; one that is not zero must be at least a nanosecond
/// once rounded to the clock (a period of 0 ns would stop time).
pub(crate) fn duration(path: &str, value: f64, unit_s: f64, zero_ok: bool) -> Result<()> {
    let low_ok = if zero_ok { value >= 0.0 } else { value > 0.0 };
    if !(value.is_finite() && low_ok && value * unit_s <= MAX_SECONDS) {
        let low = if zero_ok { ">= 0" } else { "> 0" };
        return Err(Error::scenario(path, format!("must be a duration {low} and at most a year, got {}", num(value))));
    }
    if value > 0.0 && nanos(value, unit_s) == 0 {
        let unit = match unit_s {
            1.0 => "s",
            1e-3 => "ms",
            1e-6 => "us",
            _ => "units",
        };
        let allowed = if zero_ok { "0 or at least 1 ns" } else { "at least 1 ns" };
        return Err(Error::scenario(
            path,
            format!(
                "must be {allowed} (simulated time counts whole nanoseconds), got {} {unit}, which rounds to 0 ns",
                num(value)
            ),
        ));
    }
    Ok(())
}

/// A trace's sampling period, ms: a duration of at least 1 µs (that floor checked first, so a
/// value below it is not told "at least 1 ns").
pub(super) fn trace_period(path: &str, every_ms: f64) -> Result<()> {
    if every_ms.is_finite() && every_ms > 0.0 && every_ms < 1e-3 {
        return Err(Error::scenario(path, format!("must be at least 0.001 (1 µs), got {}", num(every_ms))));
    }
    duration(path, every_ms, 1e-3, false)
}

/// `value` in units of `unit_s` seconds as the simulator's clock holds it, in nanoseconds
/// (the same conversions the links and transports use, so the check and the run agree).
pub(super) fn nanos(value: f64, unit_s: f64) -> u64 {
    let time = match unit_s {
        1.0 => SimTime::from_secs_f64(value),
        1e-3 => SimTime::from_millis_f64(value),
        1e-6 => SimTime::from_micros_f64(value),
        _ => SimTime::from_secs_f64(value * unit_s),
    };
    time.as_nanos()
}

/// A number as a user would write it: `1e-7` rather than `0.0000001`.
pub(super) fn num(value: f64) -> String {
    if value != 0.0 && value.is_finite() && !(1e-4..1e15).contains(&value.abs()) {
        format!("{value:e}")
    } else {
        format!("{value}")
    }
}

/// `value` must be a probability: in [0, 1], or [0, 1) unless `one_ok`.
pub(crate) fn probability(path: &str, value: f64, one_ok: bool) -> Result<()> {
    let high_ok = if one_ok { value <= 1.0 } else { value < 1.0 };
    if value.is_finite() && value >= 0.0 && high_ok {
        Ok(())
    } else {
        let range = if one_ok { "[0, 1]" } else { "[0, 1)" };
        Err(Error::scenario(path, format!("must be in {range}, got {value}")))
    }
}

/// `value` must be at least `min`.
pub(crate) fn at_least(path: &str, value: u64, min: u64) -> Result<()> {
    if value >= min {
        Ok(())
    } else {
        Err(Error::scenario(path, format!("must be >= {min}, got {value}")))
    }
}
