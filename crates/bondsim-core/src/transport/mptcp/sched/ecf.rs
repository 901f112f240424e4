//! ECF, Earliest Completion First (Lim, Nahum, Towsley, Gibbens, "ECF: An MPTCP Path Scheduler to
//! Manage Heterogeneous Paths", CoNEXT 2017, Algorithm 1), as multipath-tcp.org's mptcp_ecf.c
//! (v0.95) runs it: minRTT, except that when its pick is not the fastest subflow, it waits for
//! the fastest if that would finish the queued data sooner than the slow one would deliver a
//! window, with a hysteresis (`waiting`) against flapping.

use super::mptcp_org::{fastest, min_rtt};
use super::{Candidate, Meta, Push, Scheduler};

/// `mptcp_ecf_r_beta`: β = 1/4.
const R_BETA: u64 = 4;

/// ECF's state per connection (`ecfsched_cb.switching_margin`, the paper's `waiting`).
#[derive(Debug, Clone, Default)]
pub struct Ecf {
    waiting: u64,
}

impl Scheduler for Ecf {
    /// `ecf_get_available_subflow`: with `k` the data waiting at the connection level (at least
    /// a window of the fast subflow), wait for the fast subflow `f` if
    /// `srtt_f · (k + cwnd_f) < (1 + waiting·β)(srtt_s + δ) · cwnd_f` and the slow one `s`
    /// could not deliver `k` within two fast rounds: `srtt_s · k ≥ cwnd_s · (2·srtt_f + δ)`
    /// (windows in bytes; δ the larger of their RTT deviations, `rttvar_us / 2`).
    fn get_send(&mut self, subs: &mut [Candidate], meta: &Meta) -> Option<Push> {
        let best = min_rtt(subs)?;
        if let Some(fast) = fastest(subs).filter(|&f| f != best) {
            let (f, s, mss) = (&subs[fast], &subs[best], meta.mss);
            let (cwnd_f, srtt_f) = (u64::from(f.cwnd) * mss, f.srtt_us8 >> 3);
            let (cwnd_s, srtt_s) = (u64::from(s.cwnd) * mss, s.srtt_us8 >> 3);
            let delta = (f.rttvar_us >> 1).max(s.rttvar_us >> 1);
            let x_f = meta.unsent_bytes().max(cwnd_f);
            let lhs = u128::from(srtt_f) * u128::from(x_f + cwnd_f);
            let rhs = u128::from(cwnd_f) * u128::from(srtt_s + delta);
            if u128::from(R_BETA) * lhs < u128::from(R_BETA) * rhs + u128::from(self.waiting) * rhs {
                let x_s = meta.unsent_bytes().max(cwnd_s);
                if u128::from(srtt_s) * u128::from(x_s) >= u128::from(cwnd_s) * u128::from(2 * srtt_f + delta) {
                    self.waiting = 1;
                    return None;
                }
            } else {
                self.waiting = 0;
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
    fn little_data_waits_for_the_fast_subflow_much_data_uses_both() {
        // Fast: 10 ms, window 10 (full); slow: 100 ms, window 10.
        let mut s = [sub(10, 10, 10), sub(100, 10, 0)];
        let mut ecf = Ecf::default();
        let little = Meta { write_seq: 5, ..meta() };
        assert_eq!(ecf.get_send(&mut s, &little), None, "the fast one drains it in two rounds");
        assert_eq!(ecf.waiting, 1);
        let much = Meta { write_seq: 1000, ..meta() };
        assert_eq!(ecf.get_send(&mut s, &much).map(|p| p.sub), Some(1), "100 fast rounds of data");
        assert_eq!(ecf.waiting, 0);
    }

    #[test]
    fn waiting_widens_the_margin() {
        // Fast 10 ms, slow 30 ms, windows of 10 KB, 22 KB waiting: srtt_f·(k + w) = 10·32 against
        // srtt_s·w = 30·10. Without hysteresis 4·320 ≥ 4·300: the slow one is used. Waiting,
        // 4·320 < 4·300 + 300, and the slow one would take 30·22 ≥ 10·(2·10): wait.
        let mut s = [sub(10, 10, 10), sub(30, 10, 0)];
        let k = Meta { write_seq: 22, ..meta() };
        let mut ecf = Ecf { waiting: 0 };
        assert_eq!(ecf.get_send(&mut s, &k).map(|p| p.sub), Some(1));
        let mut ecf = Ecf { waiting: 1 };
        assert_eq!(ecf.get_send(&mut s, &k), None);
    }
}
