//! RACK-TLP (RFC 8985; net/ipv4/tcp_recovery.c: `tcp_rack_detect_loss`, `tcp_rack_advance`,
//! `tcp_rack_update_reo_wnd`, `tcp_rack_reo_timeout`; the probe's answer, `tcp_process_tlp_ack`,
//! in tcp_input.c).

use super::*;

/// Recoveries RACK's widened window lasts without a new D-SACK (`TCP_RACK_RECOVERY_THRESH`).
pub(super) const RACK_RECOVERY_THRESH: u32 = 16;

/// `tcp_rack_mark_lost` arms the reordering timer `TCP_TIMEOUT_MIN_US` (2 ms) late.
pub(super) const REO_SLACK: SimTime = SimTime(2_000_000);

/// RACK state (RFC 8985 §6.1; Linux `tp->rack`).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Rack {
    /// Send time and end of the most recently sent segment delivered so far.
    pub(super) mstamp: SimTime,
    pub(super) end_seq: u32,
    /// Its RTT.
    pub(super) rtt: SimTime,
    /// The reordering window in units of min_rtt/4 (`reo_wnd_steps`), raised on D-SACK.
    pub(super) reo_wnd_steps: u32,
    /// Recoveries left before the window falls back to one step (`reo_wnd_persist`).
    pub(super) reo_wnd_persist: u32,
    /// A D-SACK arrived since the window was last adjusted (`dsack_seen`).
    pub(super) dsack_seen: bool,
    /// The delivered count when the window was last widened (`last_delivered`): D-SACKs
    /// for data sent before then are the previous window's, not this one's.
    pub(super) last_delivered: u32,
    /// `rack.advanced`: a newer delivery was seen since loss detection last ran.
    pub(super) advanced: bool,
}

impl Conn {
    /// `tcp_rack_reo_wnd` (`net/ipv4/tcp_recovery.c`).
    pub(super) fn rack_reo_wnd(&self, config: &TcpConfig) -> SimTime {
        if self.reord_seen == 0 {
            // No reordering seen: be aggressive in recovery, or once dupthresh SACKs are in.
            if matches!(self.state, CaState::Recovery | CaState::Loss) {
                return SimTime::ZERO;
            }
            if self.sacked_out >= self.reordering && !config.no_dupthresh {
                return SimTime::ZERO;
            }
        }
        // min_rtt/4 per step, at most SRTT.
        let min_rtt = self.min_rtt.unwrap_or(SimTime::ZERO);
        let srtt = self.srtt().unwrap_or(SimTime::ZERO);
        SimTime((min_rtt.0 / 4) * u64::from(self.rack.reo_wnd_steps)).min(srtt)
    }

    /// `tcp_rack_update_reo_wnd` (tcp_recovery.c), after an ACK's deliveries are counted:
    /// `prior_delivered` is the rate sample's (0: the ACK delivered nothing, or only data sent
    /// before anything was delivered, and the window is left alone). A D-SACK widens the window
    /// by one step (min_rtt/4) at most once a round trip: one for data sent before the last
    /// widening is disregarded ("Disregard DSACK if a rtt has not passed since we adjusted
    /// reo_wnd"); with no D-SACK pending and no recovery left to persist, back to one step.
    pub(super) fn update_reo_wnd(&mut self, config: &TcpConfig, prior_delivered: u32) {
        if config.static_reo_wnd || prior_delivered == 0 {
            return;
        }
        if prior_delivered < self.rack.last_delivered {
            self.rack.dsack_seen = false;
        }
        if self.rack.dsack_seen {
            self.rack.reo_wnd_steps = (self.rack.reo_wnd_steps + 1).min(0xFF);
            self.rack.dsack_seen = false;
            self.rack.last_delivered = self.delivered;
            self.rack.reo_wnd_persist = RACK_RECOVERY_THRESH;
        } else if self.rack.reo_wnd_persist == 0 {
            self.rack.reo_wnd_steps = 1;
        }
    }

    /// `tcp_rack_advance`: segment `seq`, sent at `sent`, was delivered.
    pub(super) fn rack_advance(&mut self, now: SimTime, seq: u32, sent: SimTime, marks: u8) {
        let rtt = rtt_of(now, sent);
        // A retransmitted segment ACKed faster than min_rtt was answered by its original:
        // ambiguous, skip (RFC 8985 §6.2 step 2).
        if marks & EVER_RETRANS != 0 && self.min_rtt.is_some_and(|m| rtt < m) {
            return;
        }
        self.rack.advanced = true;
        self.rack.rtt = rtt;
        // `tcp_rack_sent_after`: later send time, or the same time and a higher sequence.
        if sent > self.rack.mstamp || (sent == self.rack.mstamp && seq + 1 > self.rack.end_seq) {
            self.rack.mstamp = sent;
            self.rack.end_seq = seq + 1;
        }
    }

    /// `tcp_rack_detect_loss`: marks lost every segment sent a reordering window
    /// before the newest delivered one; returns the marks made and, if some
    /// segment may still be lost, how long until it would be.
    pub(super) fn rack_detect_loss(&mut self, config: &TcpConfig, now: SimTime) -> (u32, Option<SimTime>) {
        let reo_wnd = self.rack_reo_wnd(config);
        let mut newly_lost = 0;
        let mut wait: Option<SimTime> = None;
        // Segments in sequence order; never-retransmitted ones were also sent in that order,
        // so the first of them sent after the newest delivered one ends the walk (Linux
        // walks its send-time-ordered list and stops at the same point).
        for seq in self.snd_una..self.snd_nxt {
            let s = *self.seg(seq);
            if s.marks & SACKED != 0 || (s.marks & LOST != 0 && s.marks & RETRANS_OUT == 0) {
                continue; // delivered, or lost and not yet retransmitted
            }
            if !self.before_newest(seq, s.sent) {
                if s.marks & EVER_RETRANS == 0 {
                    break;
                }
                continue;
            }
            // RFC 8985 §6.2 step 5: lost once RACK.rtt + reo_wnd has passed since it was sent.
            let deadline = s.sent.0 + self.rack.rtt.0 + reo_wnd.0;
            if deadline <= now.0 {
                self.mark_lost(seq);
                newly_lost += 1;
            } else {
                let left = SimTime(deadline - now.0);
                wait = Some(wait.map_or(left, |w| w.max(left)));
                if self.resent_end <= self.snd_una {
                    // Every segment out was sent once, in sequence order: those the walk would
                    // still meet before its end were sent no earlier than this one, so none is
                    // lost yet, and the last of them waits longest.
                    let last = self.last_before_newest(seq);
                    let left = SimTime(self.seg(last).sent.0 + self.rack.rtt.0 + reo_wnd.0 - now.0);
                    wait = Some(wait.map_or(left, |w| w.max(left)));
                    break;
                }
            }
        }
        (newly_lost, wait)
    }

    /// Segment `seq`, sent at `sent`, went before the newest delivered one:
    /// `tcp_rack_sent_after(rack.mstamp, skb time, rack.end_seq, skb end)`.
    #[inline]
    fn before_newest(&self, seq: u32, sent: SimTime) -> bool {
        sent < self.rack.mstamp || (sent == self.rack.mstamp && seq + 1 < self.rack.end_seq)
    }

    /// With send times in sequence order ([`Conn::resent_end`]), the last segment from `from` on
    /// that the walk of [`Conn::rack_detect_loss`] judges: sent before the newest delivered one
    /// (`tcp_rack_sent_after`), neither SACKed nor lost and not retransmitted. `from` is such a
    /// segment itself, so the answer is `from` when no later one is.
    fn last_before_newest(&self, from: u32) -> u32 {
        let before_newest = |seq: u32| self.before_newest(seq, self.seg(seq).sent);
        // The segments before the newest are a prefix. Its end is the newest delivered one
        // (`rack.end_seq - 1`, sent at `rack.mstamp`) when that one is still out; checked, and
        // else found by bisection.
        let (mut lo, mut hi) = (from + 1, self.snd_nxt);
        let end = self.rack.end_seq.saturating_sub(1).clamp(lo, hi);
        if before_newest(end - 1) && (end == hi || !before_newest(end)) {
            (lo, hi) = (end, end);
        }
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if before_newest(mid) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let mut last = lo - 1;
        while last > from {
            let marks = self.seg(last).marks;
            if marks & SACKED == 0 && (marks & LOST == 0 || marks & RETRANS_OUT != 0) {
                break;
            }
            last -= 1;
        }
        last
    }
}

impl TcpSender {
    /// RACK's reordering timer fired (`tcp_rack_reo_timeout`).
    pub(super) fn on_reo_timeout(&mut self, flow: u32, now: SimTime, out: &mut Vec<Output>) {
        let (config, stats) = (&self.config, &mut self.stats);
        let Some(c) = self.conns[flow as usize].as_mut().filter(|c| !c.done) else { return };
        let (lost, wait) = c.rack_detect_loss(config, now);
        if lost > 0 && matches!(c.state, CaState::Open | CaState::Disorder) {
            c.enter_recovery(config, stats);
            // `tcp_rack_reo_timeout`: room for the first retransmission at once.
            c.cwnd_reduction(1, 0, false);
        }
        if let Some(wait) = wait {
            let rto_at = now + c.backed_off_rto(&self.config);
            Self::arm(c, flow, TimerKind::ReoTimeout, (now + wait + REO_SLACK).min(rto_at), out);
        } else {
            Self::set_xmit_timer(&self.config, c, flow, now, out);
        }
        self.ready.push_back(flow);
    }
}

impl Conn {
    /// A tail loss probe answered (`tcp_process_tlp_ack`): a probe that repaired a loss (a
    /// retransmission ACKed, not D-SACKed) reduces the window once (CWR).
    pub(super) fn process_tlp_ack(&mut self, a: &Ack) {
        let Some(high) = self.tlp_high_seq.filter(|_| !a.old_ack) else { return };
        if a.ack >= high {
            self.tlp_high_seq = None;
            if self.tlp_retrans && !a.dsack_tlp && a.ack > high {
                self.init_cwnd_reduction();
                self.w.cwnd = self.w.ssthresh;
            }
        }
    }
}
