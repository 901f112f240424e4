//! BLEST (Ferlin, Alay, Mehani, Boreli, "BLEST: Blocking Estimation-based MPTCP Scheduler for
//! Heterogeneous Networks", IFIP Networking 2016, §III), as multipath-tcp.org's mptcp_blest.c
//! (v0.95) runs it: minRTT, except that when its pick is not the fastest subflow, it estimates
//! how much the fastest would send while the slow one holds the next segment, and sends nothing
//! if that would not fit in the data-level window beside what the slow one holds.

use super::mptcp_org::{def_unavailable, fastest, min_rtt};
use super::{Candidate, Meta, Push, Scheduler};
use crate::time::SimTime;

/// λ in thousandths: its start, bounds and steps (mptcp_blest.c's module parameters `lambda`,
/// `min_lambda`, `max_lambda` in tenths, `dyn_lambda_good` / `dyn_lambda_bad` in thousandths).
const LAMBDA_START: i64 = 1_200;
const LAMBDA_MIN: i64 = 1_000;
const LAMBDA_MAX: i64 = 1_300;
const LAMBDA_GOOD: i64 = 10;
const LAMBDA_BAD: i64 = 40;

/// BLEST's state: per subflow the least and largest SRTT it saw (`blestsched_priv`, in
/// `srtt_us` units), per connection λ and when it last moved (`blestsched_cb`).
#[derive(Debug, Clone)]
pub struct Blest {
    min_srtt: Vec<u64>,
    max_srtt: Vec<u64>,
    lambda: i64,
    last_lambda_update: Option<SimTime>,
    /// Set by a meta-level retransmission for the receive buffer (not modelled: never set).
    retrans_flag: bool,
}

impl Blest {
    pub fn new(subflows: usize) -> Blest {
        Blest {
            min_srtt: vec![u64::MAX; subflows],
            max_srtt: vec![0; subflows],
            lambda: LAMBDA_START,
            last_lambda_update: None,
            retrans_flag: false,
        }
    }

    /// `blestsched_update_lambda`: at most once per `slow`'s least SRTT, λ grows after a
    /// retransmission and shrinks otherwise, within its bounds.
    fn update_lambda(&mut self, now: SimTime, slow: usize) {
        let last = *self.last_lambda_update.get_or_insert(now);
        let period = SimTime((self.min_srtt[slow] >> 3) * 1_000);
        if now.0 < last.0 + period.0 {
            return;
        }
        self.lambda += if std::mem::take(&mut self.retrans_flag) { LAMBDA_BAD } else { -LAMBDA_GOOD };
        self.lambda = self.lambda.clamp(LAMBDA_MIN, LAMBDA_MAX);
        self.last_lambda_update = Some(now);
    }

    /// `blestsched_estimate_linger_time`: how long a segment put on `s` now stays, from its
    /// SRTT range scaled by how full its window is, at least its SRTT (`srtt_us` units).
    fn linger_time(&self, i: usize, s: &Candidate) -> u64 {
        let (lo, hi) = (self.min_srtt[i], self.max_srtt[i]);
        let inflight = u64::from(s.in_flight) + 1;
        let cwnd = u64::from(s.cwnd.max(1));
        let estimate = if inflight >= u64::from(s.cwnd) { hi } else { lo + (hi - lo) * inflight / cwnd };
        s.srtt_us8.max(estimate)
    }

    /// `blestsched_estimate_bytes`: what the fast subflow `f` sends in `time8` (`srtt_us` units),
    /// as Reno would grow its window (doubling in the initial slow start), times λ.
    fn fast_bytes(&self, i: usize, f: &Candidate, time8: u64, mss: u64) -> u64 {
        let avg = (self.min_srtt[i] + self.max_srtt[i]) / 2;
        let rtts = time8.checked_div(avg).map_or(1, |n| n + 1); // (1 when avg is 0: "sanity")
        let cwnd = u64::from(f.cwnd);
        let packets = if f.ssthresh == u32::MAX {
            cwnd * ((1 << rtts.min(16)) - 1)
        } else {
            let ca_cwnd = cwnd.max(u64::from(f.ssthresh) + 1);
            (ca_cwnd + (rtts - 1) / 2) * rtts
        };
        packets * mss * self.lambda as u64 / 1_000
    }
}

impl Scheduler for Blest {
    /// `blest_get_available_subflow`.
    fn get_send(&mut self, subs: &mut [Candidate], meta: &Meta) -> Option<Push> {
        for (i, s) in subs.iter().enumerate().filter(|(_, s)| !def_unavailable(s)) {
            self.min_srtt[i] = self.min_srtt[i].min(s.srtt_us8);
            self.max_srtt[i] = self.max_srtt[i].max(s.srtt_us8);
        }
        let best = min_rtt(subs)?;
        if let Some(fast) = fastest(subs).filter(|&f| f != best) {
            self.update_lambda(meta.now, best);
            let linger = self.linger_time(best, &subs[best]);
            let fast_bytes = self.fast_bytes(fast, &subs[fast], linger, meta.mss);
            let slow_bytes = meta.mss + u64::from(subs[best].queued) * meta.mss;
            if fast_bytes > meta.snd_wnd_bytes().saturating_sub(slow_bytes) {
                return None;
            }
        }
        Some(Push::segment(best))
    }
}

#[cfg(test)]
mod tests {
    use super::super::mptcp_org::tests::{meta, sub};
    use super::*;

    #[test]
    fn the_slow_subflow_is_used_only_while_the_fast_ones_share_fits_in_the_window() {
        // Fast: 10 ms, window 10 (full), in congestion avoidance. Slow: 100 ms, empty. While a
        // segment lingers on the slow one (100 ms, 11 of the fast one's rounds) the fast one
        // sends (11 + 5) × 11 segments, × λ = 1.2: 211 KB.
        let mut s = [sub(10, 10, 10), sub(100, 10, 0)];
        s[0].ssthresh = 10;
        let mut b = Blest::new(2);
        let small = Meta { wnd_end: 50, ..meta() };
        assert_eq!(b.get_send(&mut s, &small), None, "211 KB would not fit in 50 KB");
        let large = Meta { wnd_end: 1000, ..meta() };
        assert_eq!(b.get_send(&mut s, &large).map(|p| p.sub), Some(1));
        s[0].in_flight = 0;
        assert_eq!(b.get_send(&mut s, &small).map(|p| p.sub), Some(0), "the fast one has room: minRTT");
    }

    #[test]
    fn the_estimate_follows_reno_and_lambda() {
        let mut b = Blest::new(1);
        b.min_srtt[0] = 80_000; // 10 ms
        b.max_srtt[0] = 80_000;
        let mut f = sub(10, 10, 0);
        // Initial slow start over 3 rounds: 10 + 20 + 40 segments, times λ = 1.2.
        assert_eq!(b.fast_bytes(0, &f, 2 * 80_000, 1000), 70 * 1000 * 12 / 10);
        f.ssthresh = 8;
        // Congestion avoidance from max(cwnd, ssthresh + 1) = 10: (10 + 1) × 3.
        assert_eq!(b.fast_bytes(0, &f, 2 * 80_000, 1000), 33 * 1000 * 12 / 10);
    }

    #[test]
    fn lambda_shrinks_once_per_round_to_its_floor_without_retransmissions() {
        let mut b = Blest::new(1);
        b.min_srtt[0] = 8_000; // 1 ms
        for ms in 0..100 {
            b.update_lambda(SimTime::from_millis_f64(f64::from(ms)), 0);
        }
        assert_eq!(b.lambda, LAMBDA_MIN, "from 1.2 by 0.01 a millisecond");
        b.retrans_flag = true;
        b.update_lambda(SimTime::from_millis_f64(200.0), 0);
        assert_eq!(b.lambda, LAMBDA_MIN + LAMBDA_BAD);
    }
}
