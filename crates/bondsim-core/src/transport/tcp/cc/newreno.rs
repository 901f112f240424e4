//! NewReno's window rules: RFC 5681 §3.1 (slow start, congestion avoidance,
//! `ssthresh = max(FlightSize / 2, 2·SMSS)`), with RFC 6582's recovery
//! handled by the connection. Linux's `tcp_reno_cong_avoid`,
//! `tcp_reno_ssthresh` and `tcp_reno_undo_cwnd` (`net/ipv4/tcp_cong.c`): Linux
//! halves the congestion window rather than the flight size.

use super::{CongestionControl, Window};

/// NewReno (Linux: `reno`).
#[derive(Debug, Clone, Copy, Default)]
pub struct NewReno;

impl CongestionControl for NewReno {
    fn name(&self) -> &'static str {
        "reno"
    }

    /// `tcp_reno_ssthresh`: `max(snd_cwnd >> 1, 2)`.
    fn ssthresh(&mut self, w: &Window) -> u32 {
        (w.cwnd >> 1).max(2)
    }

    /// `tcp_reno_cong_avoid`: nothing unless window-limited; slow start below
    /// `ssthresh`, then one segment per window of acked segments.
    fn cong_avoid(&mut self, w: &mut Window, acked: u32) {
        if !w.cwnd_limited {
            return;
        }
        let mut acked = acked;
        if w.in_slow_start() {
            acked = w.slow_start(acked);
            if acked == 0 {
                return;
            }
        }
        let cwnd = w.cwnd;
        w.cong_avoid_ai(cwnd, acked);
    }

    /// `tcp_reno_undo_cwnd`: `max(snd_cwnd, prior_cwnd)`.
    fn undo_cwnd(&mut self, w: &Window, prior_cwnd: u32) -> u32 {
        w.cwnd.max(prior_cwnd)
    }

    /// Rate halving's floor: half of ssthresh (2.6.32's `tcp_reno_min_cwnd`, net/ipv4/tcp_cong.c:
    /// "Lower bound on congestion window with halving", `snd_ssthresh/2`).
    fn min_cwnd(&self, w: &Window) -> u32 {
        w.ssthresh / 2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(cwnd: u32, ssthresh: u32) -> Window {
        Window::new(cwnd, ssthresh)
    }

    #[test]
    fn slow_start_doubles_per_window_then_stops_at_ssthresh() {
        let mut w = window(10, 15);
        NewReno.cong_avoid(&mut w, 10);
        // 5 segments reach ssthresh; the other 5 feed congestion avoidance (5 of 15 for +1).
        assert_eq!((w.cwnd, w.cwnd_cnt), (15, 5));
    }

    #[test]
    fn congestion_avoidance_adds_one_segment_per_window() {
        let mut w = window(20, 10);
        for _ in 0..19 {
            NewReno.cong_avoid(&mut w, 1);
        }
        assert_eq!(w.cwnd, 20);
        NewReno.cong_avoid(&mut w, 1);
        assert_eq!(w.cwnd, 21);
    }

    #[test]
    fn an_application_limited_window_does_not_grow() {
        let mut w = window(10, 100);
        w.cwnd_limited = false;
        NewReno.cong_avoid(&mut w, 10);
        assert_eq!(w.cwnd, 10);
    }

    #[test]
    fn loss_halves_the_window_with_a_floor_of_two() {
        assert_eq!(NewReno.ssthresh(&window(40, 100)), 20);
        assert_eq!(NewReno.ssthresh(&window(3, 100)), 2);
    }
}
