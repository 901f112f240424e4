//! 802.3ad LACPDU timeouts (`lacp_rate`): when a port whose partner's LACPDUs stop
//! arriving leaves its aggregator, and when it comes back.
//!
//! The partner sends a LACPDU every `AD_FAST_PERIODIC_TIME` (1 s) when the actor asked for
//! the short timeout (`lacp_rate = fast`), else every `AD_SLOW_PERIODIC_TIME` (30 s); each
//! one received restarts the actor's `current_while` timer at `AD_SHORT_TIMEOUT_TIME` (3 s)
//! or `AD_LONG_TIMEOUT_TIME` (90 s) (`ad_rx_machine`, `drivers/net/bonding/bond_3ad.c`;
//! IEEE 802.1AX §6.4.12 Receive machine). When it runs out, the partner is no longer in sync
//! and the mux machine takes the port out of collecting/distributing: the bond stops using
//! it. The state machines run every `AD_TIMER_INTERVAL` (100 ms,
//! `bond_3ad_state_machine_handler`), and the timer is a count of their runs: a LACPDU sets
//! `sm_rx_timer_counter` to 30 (or 900) and each run decrements it (`ad_rx_machine`:
//! `if (port->sm_rx_timer_counter && !(--port->sm_rx_timer_counter))`), so it expires at the
//! 30th run after the LACPDU's arrival, 2.9–3.0 s after it; the mux machine, next in the
//! same run, takes the port out. A LACPDU that arrives again brings the port back at the
//! run after it arrives.
//!
//! The transmit instants have their own phase (the partner's periodic timer is not aligned
//! with anything the bond does), so a failure falls anywhere in the period. The instants are
//! computed, not simulated: the world schedules only the two events of each outage.

use crate::time::SimTime;

/// `AD_TIMER_INTERVAL`: the 802.3ad state machines' tick.
pub const TICK: SimTime = SimTime(100_000_000);

/// The LACPDU period and the `current_while` timeout of a `lacp_rate`.
pub fn rate(fast: bool) -> (SimTime, SimTime) {
    if fast {
        (SimTime::from_secs_f64(1.0), SimTime::from_secs_f64(3.0))
    } else {
        (SimTime::from_secs_f64(30.0), SimTime::from_secs_f64(90.0))
    }
}

/// The first run of the state machines at or after `t` (ns).
pub fn tick_at_or_after(t: u64) -> SimTime {
    SimTime(t.div_ceil(TICK.0) * TICK.0)
}

/// The run of the state machines at which a `timeout` started by a LACPDU received at `at`
/// expires: the `timeout / TICK`-th run after `at` (a LACPDU at a run's very instant is
/// taken after that run, which does not count).
fn expiry_tick(at: i128, timeout: SimTime) -> i128 {
    let tick = i128::from(TICK.0);
    (at.div_euclid(tick) + i128::from(timeout.0 / TICK.0)) * tick
}

/// The outages of a port whose LACPDUs are sent every `period` from `phase` (in
/// `[0, period)`): `lost(t)` says whether the LACPDU sent at `t` is lost; no LACPDU after
/// `until` is. Returns each outage as (leaves the aggregator, back or never).
pub fn outages(
    period: SimTime,
    timeout: SimTime,
    phase: SimTime,
    until: SimTime,
    mut lost: impl FnMut(SimTime) -> bool,
) -> Vec<(SimTime, Option<SimTime>)> {
    let mut out: Vec<(SimTime, Option<SimTime>)> = Vec::new();
    // The port is in sync at the start: the partner's previous LACPDU came one period before
    // its first in the run.
    let mut last = i128::from(phase.0) - i128::from(period.0);
    for k in 0u64.. {
        let t = phase.0 + k * period.0;
        let expiry = expiry_tick(last, timeout);
        let open = out.last().is_some_and(|o| o.1.is_none());
        if !open && expiry < i128::from(t) {
            out.push((SimTime(expiry.max(0) as u64), None));
        }
        if t > until.0 || !lost(SimTime(t)) {
            if let Some(o) = out.last_mut().filter(|o| o.1.is_none()) {
                o.1 = Some(tick_at_or_after(t));
            }
            last = i128::from(t);
            if t > until.0 {
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: f64) -> SimTime {
        SimTime::from_secs_f64(x)
    }

    #[test]
    fn a_silent_partner_is_noticed_two_to_three_periods_after_its_last_lacpdu() {
        for fast in [true, false] {
            let (period, timeout) = rate(fast);
            let p = period.as_secs_f64();
            for phase in [0.0, 0.25, 0.999] {
                let fail = 100.0 * p + 0.5 * p;
                let until = fail + 10.0 * p;
                let got = outages(period, timeout, s(phase * p), s(until), |t| t >= s(fail));
                assert_eq!(got.len(), 1);
                let (left, back) = got[0];
                let back = back.unwrap().as_secs_f64();
                assert!(back > until && back <= until + p + 0.1, "back with the first LACPDU after {until}: {back}");
                // The last LACPDU came at most one period before the failure: the timeout, a count of
                // 100 ms runs, runs out between 2 periods - 0.1 s and 3 periods after the failure.
                let detect = left.as_secs_f64() - fail;
                assert!(
                    detect > 2.0 * p - 0.1 - 1e-9 && detect <= 3.0 * p + 1e-9,
                    "fast={fast} phase={phase}: {detect}"
                );
            }
        }
    }

    #[test]
    fn the_timeout_is_a_count_of_the_state_machines_runs() {
        // A LACPDU at 9.05 s sets the counter to 30; the runs at 9.1, 9.2, ... count it down and the
        // 30th, at 12.0 s, expires it (not the first run at or after 9.05 + 3 s, 12.1 s).
        let (period, timeout) = rate(true);
        let got = outages(period, timeout, s(0.05), s(100.0), |t| t >= s(10.0) && t < s(20.0));
        assert_eq!(got, [(s(12.0), Some(s(20.1)))]);
    }

    #[test]
    fn a_gap_shorter_than_the_timeout_changes_nothing_and_the_port_returns_with_a_lacpdu() {
        let (period, timeout) = rate(true);
        // Two lost LACPDUs (at 10 s and 11 s): the one of 12 s arrives as the timer of 9 s runs out.
        assert!(outages(period, timeout, SimTime::ZERO, s(100.0), |t| t == s(10.0) || t == s(11.0)).is_empty());
        let got = outages(period, timeout, SimTime::ZERO, s(100.0), |t| t >= s(10.0) && t < s(20.0));
        // Last received at 9 s: out at 12 s; the LACPDU of 20 s brings it back.
        assert_eq!(got, [(s(12.0), Some(s(20.0)))]);
    }
}
