//! Loss detection before RACK (net/ipv4/tcp_input.c as Linux 3.x ran it, `tcp_recovery` 0):
//! dupthresh (RFC 6675 `IsLost`: `tcp_mark_head_lost`, `tcp_update_scoreboard`), FACK
//! (`tcp_fack`, before 4.15), lost retransmissions (`tcp_mark_lost_retrans`, before 4.4), RFC
//! 5827 early retransmit (3.5-4.10: `tcp_pause_early_retransmit`,
//! `tcp_resume_early_retransmit`) and RFC 4653 NCR (`tcp_time_to_recover`'s Trick#4). Forward
//! retransmission, also of that era, is an output rule ([`output`](super::output)).

use super::*;

/// What `tcp_time_to_recover`'s rules after its first two (which the scoreboard's marking
/// covers: a segment marked lost, or the duplicate ACKs above the reordering degree) decide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum EarlyRecovery {
    /// Not yet.
    No,
    /// Now (NCR, or early retransmit with no delay).
    Now,
    /// Early retransmit, after this delay (`tcp_pause_early_retransmit`).
    After(SimTime),
}

impl Conn {
    /// Without RACK: RFC 6675 §4 `IsLost` — a segment with `reordering` SACKed
    /// segments above it is lost (Linux `tcp_mark_head_lost` / `tcp_update_scoreboard`).
    /// `dupack`: the ACK is a duplicate (`is_dupack`: nothing moved forward, no data, no larger
    /// window, not an old ACK).
    /// In Loss the kernel marks nothing this way (`tcp_fastretrans_alert` returns after
    /// `tcp_process_loss`; without RACK `tcp_identify_packet_loss` does nothing either).
    pub(super) fn dupthresh_detect_loss(&mut self, dupack: bool) -> u32 {
        if self.state == CaState::Loss {
            return 0;
        }
        if self.fack_on {
            return self.fack_detect_loss(dupack);
        }
        if self.sacked_out < self.reordering {
            return 0;
        }
        let mut newly_lost = 0;
        let mut sacked_above = 0;
        let mut seq = self.fack;
        while seq > self.snd_una {
            seq -= 1;
            let marks = self.seg(seq).marks;
            if marks & SACKED != 0 {
                sacked_above += 1;
            } else if sacked_above >= self.reordering {
                if marks & LOST != 0 {
                    break; // everything below was judged before
                }
                newly_lost += u32::from(self.mark_head_lost(seq));
            }
        }
        newly_lost
    }

    /// FACK (Linux before 4.15, `net.ipv4.tcp_fack`): `fackets_out`, the segments from the
    /// lowest unacknowledged to the highest SACKed, SACKed or not, counts as the duplicate
    /// ACKs; above the reordering degree it is time to recover (`tcp_dupack_heuristics`,
    /// `tcp_time_to_recover`) and the first `fackets_out - reordering` segments not SACKed are
    /// lost (`tcp_update_scoreboard` → `tcp_mark_head_lost`, `tcp_skb_mark_lost`: one
    /// already lost, retransmitted or not, stays as it is). In Recovery a duplicate ACK marks
    /// at least the head (`do_lost = is_dupack || ...`, and `if (lost <= 0) lost = 1`).
    pub(super) fn fack_detect_loss(&mut self, dupack: bool) -> u32 {
        let fackets_out = self.fack.saturating_sub(self.snd_una);
        let head_on_dupack = dupack && self.state == CaState::Recovery;
        if fackets_out <= self.reordering && !head_on_dupack {
            return 0;
        }
        let lost = fackets_out.saturating_sub(self.reordering).max(1);
        let mut newly_lost = 0;
        for seq in self.snd_una..(self.snd_una + lost).min(self.snd_nxt) {
            newly_lost += u32::from(self.mark_head_lost(seq));
        }
        newly_lost
    }

    /// FACK's test for lost retransmissions (Linux before 4.4, `tcp_mark_lost_retrans`, run on
    /// every SACK in Recovery): a retransmission still in flight is lost once a segment sent after
    /// it is SACKed (the highest SACK beyond the `snd_nxt` it left at); it is marked lost again and
    /// sent again, where without it only the timeout would repair it.
    pub(super) fn mark_lost_retrans(&mut self) -> u32 {
        if !self.fack_on || self.retrans_out == 0 {
            if let Some(r) = self.repair.as_mut() {
                r.retrans_at.clear();
            }
            return 0;
        }
        if self.state != CaState::Recovery {
            return 0;
        }
        let mut newly_lost = 0;
        let mut kept = VecDeque::with_capacity(self.rp().retrans_at.len());
        let mut retrans_at = self.repair.as_mut().map(|r| std::mem::take(&mut r.retrans_at)).unwrap_or_default();
        while let Some((seq, nxt)) = retrans_at.pop_front() {
            if seq < self.snd_una || self.seg(seq).marks & RETRANS_OUT == 0 {
                continue; // ACKed, SACKed or already judged
            }
            if self.fack > nxt {
                self.mark_lost(seq);
                newly_lost += 1;
            } else {
                kept.push_back((seq, nxt));
            }
        }
        if let Some(r) = self.repair.as_mut() {
            r.retrans_at = kept;
        }
        newly_lost
    }

    /// `tcp_update_scoreboard(sk, fast_rexmit = 1)` on entering recovery in Recovery state: FACK
    /// marks the first max(fackets_out − reordering, 1) segments; dupthresh what it marks, else the
    /// head (`tcp_mark_head_lost(sk, 1, 1)`).
    pub(super) fn mark_on_entry(&mut self) -> u32 {
        let mut newly_lost = self.dupthresh_detect_loss(true);
        if !self.fack_on && self.sacked_out < self.reordering && self.snd_una < self.snd_nxt {
            newly_lost += u32::from(self.mark_head_lost(self.snd_una));
        }
        newly_lost
    }

    /// Linux 3.x's ways into recovery with no segment marked lost (`tcp_time_to_recover` after
    /// Trick#1 and #2, which the marking before covers), judged after an ACK in Open or Disorder:
    /// * NCR (RFC 4653, "Trick#4"): no more segments out than the reordering degree, at least
    ///   half of them and `tcp_reordering` SACKed, and nothing new to send: recover now;
    /// * early retransmit (RFC 5827, "Trick#6"): no retransmission out, fewer than 4 segments
    ///   out, at least one SACKed and one not, and nothing new to send: recover, at once
    ///   or after max(SRTT/4, 2 ms) in jiffies (`tcp_pause_early_retransmit`: not if there is no
    ///   RTT yet or the pending timer fires first).
    ///
    /// The pause is judged against the retransmission timer's deadline as the kernel has it after
    /// this ACK (`icsk_timeout`; [`Conn::rto_before_recovery`]).
    pub(super) fn early_recovery(
        &self,
        config: &TcpConfig,
        now: SimTime,
        una_advanced: bool,
        old_ack: bool,
    ) -> EarlyRecovery {
        let packets_out = self.packets_out();
        if config.ncr
            && packets_out <= self.reordering
            && self.sacked_out >= (packets_out / 2).max(config.reordering)
            && !self.may_send_now()
        {
            return EarlyRecovery::Now;
        }
        let Some(floor) = config.early_retransmit else { return EarlyRecovery::No };
        if !self.do_early_retrans
            || self.retrans_out > 0
            || self.sacked_out == 0
            || packets_out < self.sacked_out + 1
            || packets_out >= 4
            || self.may_send_now()
        {
            return EarlyRecovery::No;
        }
        if floor == SimTime::ZERO || self.srtt_us == 0 {
            return EarlyRecovery::Now;
        }
        // `max(usecs_to_jiffies(tp->srtt_us >> 5), msecs_to_jiffies(2))`: SRTT/4 (`srtt_us` is 8 × SRTT).
        let delay = bondsim_bond::monitor::usecs_to_jiffies(self.srtt_us >> 5, config.hz).max(floor);
        match self.rto_before_recovery(config, now, una_advanced, old_ack) {
            Some(at) if at > now + delay => EarlyRecovery::After(delay),
            _ => EarlyRecovery::Now,
        }
    }

    /// The retransmission timer's deadline when `tcp_fastretrans_alert` runs for an ACK: an ACK
    /// that advanced snd_una re-armed it a whole RTO from now (`tcp_clean_rtx_queue`); any other
    /// ACK in the window turned a pending early retransmit or loss probe back into the RTO
    /// (`tcp_ack`: `tcp_rearm_rto`); an old ACK left it as it was.
    pub(super) fn rto_before_recovery(
        &self,
        config: &TcpConfig,
        now: SimTime,
        una_advanced: bool,
        old_ack: bool,
    ) -> Option<SimTime> {
        let deadline = self.timer.deadline();
        if old_ack || self.packets_out() == 0 {
            deadline
        } else if una_advanced {
            Some(now + self.backed_off_rto(config))
        } else if deadline.is_some() && self.pending_rearmed_by_ack(config) {
            Some(self.rearmed_rto(config, now))
        } else {
            deadline
        }
    }

    /// Whether an ACK in the window turns the pending timer back into the RTO (3.x `tcp_ack`:
    /// `if (icsk_pending == ICSK_TIME_EARLY_RETRANS || icsk_pending == ICSK_TIME_LOSS_PROBE)
    /// tcp_rearm_rto(sk)`): a pending early retransmit, or a loss probe of 3.10's TLP (`tlp_timeout`
    /// "linux-3.10"; today's kernels leave a probe pending on an ACK that ACKs nothing).
    pub(super) fn pending_rearmed_by_ack(&self, config: &TcpConfig) -> bool {
        match self.timer_kind {
            TimerKind::EarlyRetrans => true,
            TimerKind::LossProbe => config.era.tlp.rearmed_by_ack,
            TimerKind::Rto | TimerKind::ReoTimeout | TimerKind::Handshake => false,
        }
    }

    /// `tcp_rearm_rto` from a pending early retransmit or loss probe (Linux 3.11/3.13): the RTO
    /// of the head's last send, or a whole RTO from now once that has passed.
    pub(super) fn rearmed_rto(&self, config: &TcpConfig, now: SimTime) -> SimTime {
        let rto = self.backed_off_rto(config);
        let at = self.seg(self.snd_una).sent + rto;
        if at > now {
            at
        } else {
            now + rto
        }
    }
}

impl TcpSender {
    /// The delayed early retransmit's timer fired (`tcp_resume_early_retransmit`): the RTO is
    /// re-armed, and, early retransmit still on, recovery starts with the head marked lost
    /// (`tcp_update_scoreboard(sk, 1)`) and retransmitted, which runs the RTO from now.
    pub(super) fn on_early_retrans(&mut self, flow: u32, now: SimTime, out: &mut Vec<Output>) {
        let (config, stats) = (&self.config, &mut self.stats);
        let Some(c) = self.conns[flow as usize].as_mut().filter(|c| !c.done && c.packets_out() > 0) else { return };
        let at = if c.do_early_retrans && matches!(c.state, CaState::Open | CaState::Disorder) {
            c.enter_recovery(config, stats);
            c.mark_on_entry();
            now + c.backed_off_rto(config)
        } else {
            c.rearmed_rto(config, now)
        };
        Self::arm(c, flow, TimerKind::Rto, at, out);
        self.ready.push_back(flow);
    }
}
