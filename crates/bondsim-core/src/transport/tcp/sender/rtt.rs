//! The RTT estimator and the RTO (net/ipv4/tcp_input.c: `tcp_ack_update_rtt`,
//! `tcp_rtt_estimator`, `tcp_set_rto`; include/net/inet_connection_sock.h:
//! `inet_csk_rto_backoff`).

use super::*;

pub(super) fn rtt_of(now: SimTime, sent: SimTime) -> SimTime {
    SimTime(now.0.saturating_sub(sent.0))
}

impl Conn {
    /// The smoothed RTT, once there is one (`srtt_us >> 3`, kept to the eighth of a µs).
    pub(super) fn srtt(&self) -> Option<SimTime> {
        (self.srtt_us != 0).then_some(SimTime(self.srtt_us * 125))
    }

    /// One RTT sample: `rtt` (the oldest segment's) for SRTT and the RTO, `ca_rtt` (the newest
    /// one's) for the minimum RTT. `tcp_rtt_estimator` then `tcp_set_rto`
    /// (`net/ipv4/tcp_input.c`), in whole µs as Linux keeps them. RFC 6298 §2's gains (1/8 for
    /// SRTT, 1/4 for the deviation) with Linux's twists: a sample below SRTT moves the
    /// deviation up with gain 1/32 only ("like Eifel it also prevents growth of rto"); the
    /// RTO's variance term `rttvar_us` is the largest deviation of the round trip, floored at
    /// `tcp_rto_min` and, once a round trip ends (`snd_una` passes `rtt_seq`), decayed by a
    /// quarter of its excess over that round's largest. RTO = SRTT + `rttvar_us`, at most
    /// `TCP_RTO_MAX` (`tcp_bound_rto`); the first sample gives 3 × RTT, or RTT + `tcp_rto_min`.
    pub(super) fn rtt_sample(&mut self, config: &TcpConfig, rtt: SimTime, ca_rtt: SimTime) {
        let rto_min_us = config.rto_min.0 / 1_000;
        let sample = (rtt.0 / 1_000).max(1); // Linux measures in microseconds, at least 1
        if self.srtt_us != 0 {
            let mut m = sample as i64 - (self.srtt_us >> 3) as i64; // the error in the estimate
            let srtt = self.srtt_us as i64 + m; // 7/8 SRTT + 1/8 the sample
            let quarter = (self.mdev_us >> 2) as i64;
            if m < 0 {
                m = -m - quarter;
                if m > 0 {
                    m >>= 3;
                }
            } else {
                m -= quarter;
            }
            self.mdev_us = (self.mdev_us as i64 + m) as u64; // 3/4 mdev + 1/4 |error|
            if self.mdev_us > self.mdev_max_us {
                self.mdev_max_us = self.mdev_us;
                self.rttvar_us = self.rttvar_us.max(self.mdev_max_us);
            }
            if self.snd_una > self.rtt_seq {
                if self.mdev_max_us < self.rttvar_us {
                    self.rttvar_us -= (self.rttvar_us - self.mdev_max_us) >> 2;
                }
                self.rtt_seq = self.snd_nxt;
                self.mdev_max_us = rto_min_us;
            }
            self.srtt_us = srtt.max(1) as u64;
        } else {
            self.srtt_us = sample << 3;
            self.mdev_us = sample << 1; // "make sure rto = 3*rtt"
            self.rttvar_us = self.mdev_us.max(rto_min_us);
            self.mdev_max_us = self.rttvar_us;
            self.rtt_seq = self.snd_nxt;
        }
        self.w.srtt_us = self.srtt_us; // the copy the congestion controls read (`Window::srtt_us`)
        self.rto = SimTime(((self.srtt_us >> 3) + self.rttvar_us) * 1_000).min(config.rto_max);
        let ca_rtt = ca_rtt.max(SimTime(1_000));
        self.min_rtt = Some(self.min_rtt.map_or(ca_rtt, |m| m.min(ca_rtt)));
    }

    /// The RTO with its exponential backoff (`inet_csk_rto_backoff`).
    pub(super) fn backed_off_rto(&self, config: &TcpConfig) -> SimTime {
        SimTime(self.rto.0.saturating_mul(1 << self.backoff.min(20))).min(config.rto_max)
    }
}

impl Conn {
    /// The ACK's RTT sample (`tcp_clean_rtx_queue` → `tcp_ack_update_rtt`): the oldest newly
    /// ACKed original, but not when the ACK also covers a retransmitted segment (Karn's rule:
    /// `if (likely(first_ackt) && !(flag & FLAG_RETRANS_DATA_ACKED))`; after a timeout the
    /// originals ACKed with the retransmission left before it, and their sample would hold the
    /// whole timeout); else the oldest newly SACKed original (`sack_rtt_us`), else the timestamp
    /// echo if data was ACKed (`tcp_rtt_tsopt_us`). A valid sample resets the backoff. The
    /// congestion control and the minimum RTT take the newest (S)ACKed original instead
    /// (`ca_rtt_us` from `last_ackt`, or `last_sackt` when the ACK SACKed any: `rs->rtt_us`,
    /// `tcp_update_rtt_min(sk, ca_rtt_us, flag)`), which is returned (none without a sample).
    pub(super) fn ack_update_rtt(&mut self, config: &TcpConfig, a: &Ack) -> Option<SimTime> {
        let acked_rtt = !a.retrans_data_acked && !a.old_ack;
        let seq_rtt = a.first_ackt.filter(|_| acked_rtt).or(a.first_sackt.filter(|_| !a.old_ack));
        let ca_sent = if a.first_sackt.is_some() { a.last_sackt } else { a.last_ackt.filter(|_| acked_rtt) };
        let (rtt, ca_rtt) = match seq_rtt {
            Some(first) => (Some(rtt_of(a.now, first)), ca_sent.map(|t| rtt_of(a.now, t))),
            None => {
                // (At least one tick: `tcp_rtt_tsopt_us`'s `if (!delta) delta = min`, 3.x's
                // `tcp_rtt_estimator`'s `if (m == 0) m = 1`.)
                let ts = (a.una_advanced && a.ts_ecr != 0)
                    .then(|| rtt_of(a.now, self.ts.ts_time(a.ts_ecr)).max(self.ts.tick));
                (ts, ts)
            }
        };
        let rtt = rtt?;
        self.rtt_sample(config, rtt, ca_rtt.unwrap_or(rtt));
        self.backoff = 0;
        ca_rtt
    }
}
