//! Linux's TCP metrics cache (net/ipv4/tcp_metrics.c: `tcp_update_metrics`,
//! `tcp_init_metrics`, `tcpm_check_stamp`).

use super::*;

/// A destination's entry in Linux's TCP metrics cache (net/ipv4/tcp_metrics.c, keyed by the
/// destination's address): what the connections that closed leave the next ones. Its RTT and
/// RTT variance seed only a connection's first RTO when above the handshake's sample
/// (`tcp_init_metrics`: `crtt > tp->srtt_us`), and its cwnd only clamps a locked route: neither
/// is kept.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Metrics {
    /// `TCP_METRIC_SSTHRESH` (0: none).
    pub(super) ssthresh: u32,
    /// `TCP_METRIC_REORDERING` (0: none).
    pub(super) reordering: u32,
    /// `tcpm_stamp`: the last update.
    pub(super) stamp: SimTime,
}

/// `TCP_METRICS_TIMEOUT`: an entry not updated for an hour is reset (`tcpm_check_stamp`).
pub(super) const TCP_METRICS_TIMEOUT: SimTime = SimTime(3_600_000_000_000);

/// `TCP_INFINITE_SSTHRESH`: a threshold at or above it has never been set (initial slow start).
pub(super) const TCP_INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

impl Metrics {
    /// The entry as `tcp_get_metrics` finds it at `now`: reset to the route's (none) when stale.
    pub(super) fn fresh(&mut self, now: SimTime) -> &mut Metrics {
        if now.saturating_sub(self.stamp) > TCP_METRICS_TIMEOUT {
            *self = Metrics { stamp: now, ..Metrics::default() };
        }
        self
    }

    /// `tcp_init_metrics`: a new connection starts from the cached threshold (when kept) and
    /// reordering degree; 3.x also turned FACK and early retransmit off for it, as for
    /// reordering seen (`tcp_disable_fack`, `tcp_disable_early_retrans`).
    pub(super) fn init(&mut self, config: &TcpConfig, c: &mut Conn, now: SimTime) {
        let m = self.fresh(now);
        if config.ssthresh_metrics && m.ssthresh != 0 {
            c.w.ssthresh = m.ssthresh;
        }
        if m.reordering != 0 && c.reordering != m.reordering {
            c.fack_on = false;
            c.do_early_retrans = false;
            c.reordering = m.reordering;
        }
    }

    /// `tcp_update_metrics`, as a connection closes. Nothing when it timed out last (`icsk_backoff`)
    /// or has no RTT: its RTT estimate is then dropped, which the model does not keep. In initial
    /// slow start a kept threshold only grows to half the window; in congestion avoidance in Open
    /// it becomes the larger of half the window and the threshold; else (slow start after a
    /// reduction, or not Open) a kept threshold grows to the connection's, and so does the
    /// reordering degree, if the connection raised its own.
    pub(super) fn update(&mut self, config: &TcpConfig, c: &Conn, now: SimTime) {
        if !config.metrics_save || c.backoff > 0 || c.srtt_us == 0 {
            return;
        }
        let m = self.fresh(now);
        let (cwnd, ssthresh) = (c.w.cwnd, c.w.ssthresh);
        let keep = config.ssthresh_metrics;
        if ssthresh >= TCP_INFINITE_SSTHRESH {
            if keep && m.ssthresh != 0 && cwnd >> 1 > m.ssthresh {
                m.ssthresh = cwnd >> 1;
            }
        } else if cwnd >= ssthresh && c.state == CaState::Open {
            if keep {
                m.ssthresh = (cwnd >> 1).max(ssthresh);
            }
        } else {
            if keep && m.ssthresh != 0 && ssthresh > m.ssthresh {
                m.ssthresh = ssthresh;
            }
            if m.reordering < c.reordering && c.reordering != config.reordering {
                m.reordering = c.reordering;
            }
        }
        m.stamp = now;
    }
}
