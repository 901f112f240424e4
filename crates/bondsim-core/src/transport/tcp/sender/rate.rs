//! Delivery-rate sampling (net/ipv4/tcp_rate.c, Linux 4.9 on: `tcp_rate_skb_sent`,
//! `tcp_rate_skb_delivered`, `tcp_rate_gen`, `tcp_rate_check_app_limited`): every
//! transmission is stamped with the connection's delivered count and when it was reached; an
//! ACK's sample is the segments delivered since the latest-sent segment it delivers left,
//! over the longer of the send and the ACK intervals. A rate-based control reads it through
//! `CongestionControl::cong_control`. Times are kept in nanoseconds where Linux keeps
//! microseconds.

use super::*;

/// `tx.delivered_mstamp` of a segment already counted by a SACK (Linux zeroes it).
pub(super) const NO_STAMP: SimTime = SimTime(u64::MAX);

/// A transmission's rate stamps (`TCP_SKB_CB(skb)->tx`; its `delivered` is the segment's own,
/// which RACK reads too). Kept beside the scoreboard only while the control samples rates, so
/// the loss-based controls' scoreboard stays as small as before.
#[derive(Debug, Clone, Copy)]
pub(super) struct TxStamp {
    /// `tx.first_tx_mstamp`: when the send interval this transmission closes began.
    pub(super) first_tx: SimTime,
    /// `tx.delivered_mstamp`: when `delivered` was reached ([`NO_STAMP`] once SACKed).
    pub(super) delivered_at: SimTime,
    /// `tx.is_app_limited`.
    pub(super) app_limited: bool,
}

/// `tcp_skb_sent_after(t1, t2, seq1, seq2)`: sent later, or at the same time with a higher end.
fn sent_after(t1: SimTime, t2: SimTime, seq1: u32, seq2: u32) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

impl Conn {
    /// `tcp_rate_skb_sent`: the stamps of segment `seq`'s transmission at `now` (with
    /// `packets_out` as before it: the first after the pipe emptied starts a new interval); a new
    /// segment's are added, a retransmission's replace its last ones.
    #[inline(always)] // (the test in line, the work out of it: the loss-based controls only test)
    pub(super) fn rate_skb_sent(&mut self, now: SimTime, seq: u32) {
        if self.sampling {
            self.rate_skb_stamp(now, seq);
        }
    }

    #[inline(never)]
    fn rate_skb_stamp(&mut self, now: SimTime, seq: u32) {
        let packets_out = self.packets_out();
        let i = seq.checked_sub(self.snd_una).map(|i| i as usize);
        let r = self.rates.as_mut().expect("a sampling control has its rates");
        if packets_out == 0 {
            r.first_tx_mstamp = now;
            r.delivered_mstamp = now;
        }
        let stamp =
            TxStamp { first_tx: r.first_tx_mstamp, delivered_at: r.delivered_mstamp, app_limited: r.app_limited != 0 };
        match i {
            Some(i) if i < r.tx_stamps.len() => r.tx_stamps[i] = stamp,
            _ => r.tx_stamps.push_back(stamp),
        }
    }

    /// The stamps of the oldest segment out, which the cumulative ACK takes off the scoreboard
    /// (kept while sampling only: see [`Conn::rate_skb_sent`]).
    #[inline(never)]
    pub(super) fn rate_pop_stamp(&mut self) -> Option<TxStamp> {
        self.rates.as_mut().and_then(|r| r.tx_stamps.pop_front())
    }

    /// `tcp_rate_skb_delivered`: segment `seq` (`s`, as it was sent) is delivered; the sample
    /// follows the latest sent of the segments an ACK delivers. The caller clears the stamp of
    /// a segment SACKed, so that its cumulative ACK counts nothing twice.
    #[inline(never)] // (kept out of `tcp_ack`'s loops, which the loss-based controls run without it)
    pub(super) fn rate_skb_delivered(&mut self, s: &Seg, st: &TxStamp, seq: u32, rs: &mut RateSample) {
        if st.delivered_at == NO_STAMP {
            return;
        }
        let r = self.rates.as_mut().expect("a sampling control has its rates");
        if rs.prior_delivered == 0 || sent_after(s.sent, r.first_tx_mstamp, seq + 1, rs.last_end_seq) {
            rs.prior_delivered = s.delivered;
            rs.prior_mstamp = Some(st.delivered_at);
            rs.is_app_limited = st.app_limited;
            rs.is_retrans = s.marks & (EVER_RETRANS | RETRANS_OUT) != 0;
            rs.last_end_seq = seq + 1;
            // The next interval starts at this send; this one's send interval ends there.
            r.first_tx_mstamp = s.sent;
            rs.snd_interval = s.sent.saturating_sub(st.first_tx);
        }
    }

    /// `tcp_rate_gen`, after the ACK's deliveries (`delivered`) and losses (`lost`) are counted:
    /// the sample's delivered count and interval, invalid (`None`) without a prior stamp or
    /// shorter than the minimum RTT; the connection's latest rate (`rate_delivered` /
    /// `rate_interval`) follows it unless an application-limited sample is slower.
    #[inline(never)]
    pub(super) fn rate_gen(&mut self, now: SimTime, delivered: u32, lost: u32, rs: &mut RateSample) {
        let conn_delivered = self.delivered;
        let min_rtt = self.min_rtt;
        let r = self.rates.as_mut().expect("a sampling control has its rates");
        if r.app_limited != 0 && conn_delivered > r.app_limited {
            r.app_limited = 0;
        }
        if delivered > 0 {
            r.delivered_mstamp = now;
        }
        rs.acked_sacked = delivered;
        rs.losses = lost;
        let Some(prior_mstamp) = rs.prior_mstamp else {
            (rs.delivered, rs.interval) = (None, None);
            return;
        };
        let sample = conn_delivered - rs.prior_delivered;
        rs.delivered = Some(sample);
        rs.rcv_interval = now.saturating_sub(prior_mstamp);
        let interval = rs.snd_interval.max(rs.rcv_interval);
        // `tcp_min_rtt` (~0U before any sample): an interval below it is not a rate.
        if min_rtt.is_none_or(|m| interval < m) {
            rs.interval = None;
            return;
        }
        rs.interval = Some(interval);
        if !rs.is_app_limited
            || u128::from(sample) * u128::from(r.rate_interval.0)
                >= u128::from(r.rate_delivered) * u128::from(interval.0)
        {
            r.rate_delivered = sample;
            r.rate_interval = interval;
            r.rate_app_limited = rs.is_app_limited;
        }
    }

    /// `tcp_rate_check_app_limited`, as the application writes (`tcp_sendmsg`) with `unsent`
    /// segments written and not yet sent: less than a segment to send, nothing below TCP, room
    /// in the window and no loss to repair mark the connection application-limited until what
    /// is in flight now is delivered. (Only a control that samples rates reads the mark: for the
    /// others there is nothing to set.)
    pub(super) fn rate_check_app_limited(&mut self, config: &TcpConfig, unsent: u32) {
        if self.rates.is_none() {
            return;
        }
        if unsent == 0
            && self.wmem < truesize(config.mss, 1)
            && self.in_flight() < self.w.cwnd
            && self.lost_out <= self.retrans_out
        {
            let mark = (self.delivered + self.in_flight()).max(1);
            self.rates.as_mut().expect("checked").app_limited = mark;
        }
    }

    /// The `tcp_sock` fields a control with `cong_control` reads beyond the ACK's sample, copied
    /// into its window (`Window::delivered` and the rest) before it runs.
    pub(super) fn rate_window(&mut self) {
        self.w.delivered = self.delivered;
        self.w.packets_in_flight = self.in_flight();
        self.w.min_rtt = self.min_rtt;
        self.w.wstamp = self.wstamp();
        let r = self.rates.as_deref();
        self.w.delivered_mstamp = r.map_or(SimTime::ZERO, |r| r.delivered_mstamp);
        self.w.app_limited = r.map_or(0, |r| r.app_limited);
    }

    /// `tcp_cong_control`'s `icsk_ca_ops->cong_control(sk, rs)`: the control sets the window and
    /// the pacing rate; `tp->app_limited`, which it may write (BBR's PROBE_RTT), comes back.
    #[inline(never)]
    pub(super) fn rate_cong_control(&mut self, rs: &RateSample) -> bool {
        self.rate_window();
        let own = self.cc.cong_control(&mut self.w, rs);
        self.rates.as_mut().expect("a sampling control has its rates").app_limited = self.w.app_limited;
        own
    }
}
