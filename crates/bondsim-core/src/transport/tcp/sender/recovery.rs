//! The congestion state machine (net/ipv4/tcp_input.c: `tcp_fastretrans_alert`,
//! `tcp_process_loss`, `tcp_enter_recovery`), the undos (`tcp_try_undo_partial`,
//! `tcp_try_undo_dsack`, `tcp_try_undo_recovery`, `tcp_try_undo_loss`,
//! `tcp_undo_cwnd_reduction`, `tcp_may_undo`, `tcp_packet_delayed`) and Proportional Rate
//! Reduction (RFC 6937; `tcp_init_cwnd_reduction`, `tcp_cwnd_reduction`,
//! `tcp_end_cwnd_reduction`), or before it (Linux 3.2) rate halving with its caps, read in
//! 2.6.32's tcp_input.c (`tcp_cwnd_down`, `tcp_complete_cwr`, `tcp_enter_cwr`,
//! `tcp_moderate_cwnd`).

use super::*;

impl Conn {
    /// `tcp_init_undo`.
    pub(super) fn init_undo(&mut self) {
        let (marker, retrans_out) = (self.snd_una, self.retrans_out);
        let r = self.rp_mut();
        r.undo_marker = Some(marker);
        r.undo_retrans = if retrans_out > 0 { i64::from(retrans_out) } else { -1 };
    }

    /// `tcp_any_retrans_done`: a retransmission is out, or the head segment was ever retransmitted.
    pub(super) fn any_retrans_done(&self) -> bool {
        self.retrans_out > 0 || (self.snd_una < self.snd_nxt && self.seg(self.snd_una).marks & EVER_RETRANS != 0)
    }

    /// Forgets the first retransmission's time once no retransmission is done or out
    /// (`if (!tcp_any_retrans_done(sk)) tp->retrans_stamp = 0;`).
    pub(super) fn forget_retrans_stamp(&mut self) {
        if self.rp().retrans_stamp.is_some() && !self.any_retrans_done() {
            self.rp_mut().retrans_stamp = None;
        }
    }

    /// `tcp_init_cwnd_reduction`: remember the window, take `ssthresh` from the algorithm.
    pub(super) fn init_cwnd_reduction(&mut self) {
        self.high_seq = self.snd_nxt;
        self.tlp_high_seq = None;
        self.w.cwnd_cnt = 0;
        let cwnd = self.w.cwnd;
        let r = self.rp_mut();
        r.prior_cwnd = cwnd;
        r.prr_delivered = 0;
        self.prr_out = 0;
        self.w.ssthresh = self.cc.ssthresh(&self.w);
    }

    /// `tcp_enter_recovery`. Today's kernels forget a stale first retransmission's time here
    /// (`tcp_retrans_stamp_cleanup`, 6.12 and the stable kernels since); 3.x did not. From CWR
    /// the window's reduction goes on (`if (!tcp_in_cwnd_reduction(sk))`): no second ssthresh.
    pub(super) fn enter_recovery(&mut self, config: &TcpConfig, stats: &mut TcpStats) {
        if config.era.undo.recovery_forgets_retrans_stamp {
            self.forget_retrans_stamp();
        }
        stats.fast_recoveries += 1;
        self.fwd_hint = self.snd_una;
        self.rp_mut().prior_ssthresh = 0;
        self.init_undo();
        if self.state != CaState::Cwr {
            self.rp_mut().prior_ssthresh = self.current_ssthresh();
            self.init_cwnd_reduction();
        }
        self.set_state(CaState::Recovery);
    }

    /// `tcp_enter_cwr` (`tcp_input.c`, 6.x): a local reason to reduce the window (here the host's
    /// own queue refusing a send, `__tcp_transmit_skb`): from Open or Disorder, the reduction
    /// starts (ssthresh from the control, PRR from the window now) with nothing to undo. Rate
    /// halving's starts at the segments in flight plus one (2.6.32's `tcp_enter_cwr`:
    /// `tp->snd_cwnd = min(tp->snd_cwnd, tcp_packets_in_flight(tp) + 1U)`).
    pub(super) fn enter_cwr(&mut self, config: &TcpConfig) {
        if let Some(r) = self.repair.as_mut() {
            r.prior_ssthresh = 0;
        }
        if matches!(self.state, CaState::Open | CaState::Disorder) {
            self.rp_mut().undo_marker = None;
            self.init_cwnd_reduction();
            if config.era.reduction == Reduction::RateHalving {
                self.w.cwnd = self.w.cwnd.min(self.in_flight() + 1);
            }
            self.set_state(CaState::Cwr);
        }
    }

    /// `tcp_cwnd_reduction`: Proportional Rate Reduction (RFC 6937 §3, Linux's form).
    pub(super) fn cwnd_reduction(&mut self, newly_acked_sacked: u32, newly_lost: u32, una_advanced: bool) {
        if newly_acked_sacked == 0 || self.rp().prior_cwnd == 0 {
            return;
        }
        self.rp_mut().prr_delivered += newly_acked_sacked;
        let (prior_cwnd, prr_delivered) = (self.rp().prior_cwnd, self.rp().prr_delivered);
        let in_flight = self.in_flight();
        let delta = i64::from(self.w.ssthresh) - i64::from(in_flight);
        let mut sndcnt: i64 = if delta < 0 {
            // Proportional part: ceil(ssthresh · prr_delivered / prior_cwnd) − prr_out.
            let dividend = u64::from(self.w.ssthresh) * u64::from(prr_delivered) + u64::from(prior_cwnd) - 1;
            (dividend / u64::from(prior_cwnd)) as i64 - i64::from(self.prr_out)
        } else {
            // Slow-start reduction bound (PRR-SSRB).
            let mut n = (i64::from(prr_delivered) - i64::from(self.prr_out)).max(i64::from(newly_acked_sacked));
            if una_advanced && newly_lost == 0 {
                n += 1;
            }
            n.min(delta)
        };
        // Force a fast retransmit upon entering fast recovery.
        sndcnt = sndcnt.max(if self.prr_out > 0 { 0 } else { 1 });
        self.w.cwnd = (i64::from(in_flight) + sndcnt).max(1) as u32;
    }

    /// Rate halving (2.6.32's `tcp_cwnd_down`, in Recovery and CWR before PRR): on an ACK that
    /// shows `progress` (`FLAG_ANY_PROGRESS | FLAG_DSACKING_ACK`: data newly ACKed or SACKed, or
    /// a D-SACK), every second one takes a segment off cwnd while it is above `tcp_cwnd_min` (the
    /// control's [`min_cwnd`](super::super::cc::CongestionControl::min_cwnd)), and each caps it
    /// at the segments in flight plus one. The count of ACKs is `snd_cwnd_cnt`, which a
    /// reduction's start zeroes.
    pub(super) fn cwnd_down(&mut self, progress: bool) {
        if !progress {
            return;
        }
        let decr = self.w.cwnd_cnt + 1;
        self.w.cwnd_cnt = decr & 1;
        if decr >> 1 > 0 && self.w.cwnd > self.cc.min_cwnd(&self.w) {
            self.w.cwnd -= decr >> 1;
        }
        self.w.cwnd = self.w.cwnd.min(self.in_flight() + 1);
    }

    /// `tcp_end_cwnd_reduction`: the window set to ssthresh, unless undone (no undo marker left).
    /// Rate halving's end (2.6.32's `tcp_complete_cwr`) keeps the window if below: `snd_cwnd =
    /// min(snd_cwnd, snd_ssthresh)`, after an undo too.
    pub(super) fn end_cwnd_reduction(&mut self, config: &TcpConfig) {
        // (`if (inet_csk(sk)->icsk_ca_ops->cong_control) return;`: such a control keeps its window.)
        if self.sampling {
            return;
        }
        match config.era.reduction {
            Reduction::Prr if self.w.ssthresh < u32::MAX && self.rp().undo_marker.is_some() => {
                self.w.cwnd = self.w.ssthresh
            }
            Reduction::Prr => {}
            Reduction::RateHalving => self.w.cwnd = self.w.cwnd.min(self.w.ssthresh),
        }
    }

    /// 2.6.32's `tcp_moderate_cwnd` (`era.moderates_cwnd`), "preventing bursts due to too big
    /// ACKs in dubious situations": a dubious ACK (`a.alert`) with segments out before it that
    /// leaves the connection in Open, Disorder (`tcp_try_to_open`) or Loss (`tcp_fastretrans_alert`,
    /// when `tcp_try_undo_loss` fails) caps cwnd at the segments in flight plus `tcp_max_burst`,
    /// the reordering degree. Called after the window's growth, which 2.6.32's `tcp_ack` made
    /// before `tcp_fastretrans_alert`.
    pub(super) fn moderate_cwnd(&mut self, config: &TcpConfig, a: &Ack) {
        if config.era.moderates_cwnd && a.alert && a.prior_snd_una < self.snd_nxt {
            self.w.cwnd = self.w.cwnd.min(self.in_flight() + self.reordering);
        }
    }

    /// `tcp_undo_cwnd_reduction(sk, unmark_loss)`: the reduction was needless. The timeout's
    /// and the partial undo unmark every loss (`unmark_loss`); the D-SACK and full-recovery undos
    /// keep the marks, so a loss still evident starts a new recovery on the same ACK
    /// ("reordering then loss", `tcp_fastretrans_alert`). Either way RACK looks again
    /// (`tp->rack.advanced = 1; /* Force RACK to re-exam losses */`).
    pub(super) fn undo_reduction(&mut self, stats: &mut TcpStats, unmark_loss: bool) {
        if unmark_loss {
            for seq in self.snd_una..self.snd_nxt {
                let s = self.seg_mut(seq);
                if s.marks & LOST != 0 {
                    s.marks &= !LOST;
                    self.lost_out -= 1;
                }
            }
            self.retrans_hint = self.snd_nxt;
        }
        self.rack.advanced = true;
        self.w.cwnd = self.cc.undo_cwnd(&self.w, self.rp().prior_cwnd);
        if self.rp().prior_ssthresh > self.w.ssthresh {
            self.w.ssthresh = self.rp().prior_ssthresh;
        }
        if let Some(r) = self.repair.as_mut() {
            r.undo_marker = None;
        }
        stats.undos += 1;
    }

    /// `tcp_packet_delayed`: the ACK echoes a timestamp older than the first
    /// retransmission, so the original was delivered (Eifel, RFC 3522); or nothing was
    /// retransmitted yet (no stamp: a fast retransmit held back by TCP small queues), so what
    /// advanced snd_una was delayed, not lost. 3.x (`!tp->retrans_stamp || ...`) and Linux since
    /// 6.12 answer so (its exceptions are a connection without SACK and SYN_SENT, neither
    /// modelled); 5.1 to 6.11 answered no.
    pub(super) fn packet_delayed(&self, ts_ecr: u32) -> bool {
        self.rp().retrans_stamp.is_none_or(|stamp| ts_ecr != 0 && ts_ecr < self.ts.ts_of(stamp))
    }

    /// `tcp_may_undo`: an undo marker is set, and every retransmission was D-SACKed as needless
    /// (`!tp->undo_retrans`) or the ACK shows the original delivered ([`Conn::packet_delayed`]).
    /// `tcp_try_undo_recovery` (a fast recovery's or a timeout's end) and `tcp_try_undo_loss` ask it.
    pub(super) fn may_undo(&self, ts_ecr: u32) -> bool {
        self.rp().undo_marker.is_some() && (self.rp().undo_retrans == 0 || self.packet_delayed(ts_ecr))
    }
}

impl Conn {
    /// `tcp_fastretrans_alert` for a dubious ACK (`a.alert`), and what of it runs for any ACK: the
    /// undos, the congestion state machine's exits, loss detection, and the entry into recovery.
    pub(super) fn fastretrans_alert(&mut self, config: &TcpConfig, stats: &mut TcpStats, a: &Ack) -> Alert {
        // Step D: in Open the first retransmission's time is forgotten, whatever is still marked
        // retransmitted (`tp->retrans_stamp = 0`), at each such ACK only.
        if let Some(r) = self.repair.as_mut().filter(|_| a.alert && self.state == CaState::Open) {
            r.retrans_stamp = None;
        }
        let hold_losses = self.try_undo_partial(config, stats, a);
        if a.alert && !hold_losses {
            self.try_undo_dsack(stats);
        }
        match self.state {
            CaState::Recovery if a.alert && self.snd_una >= self.high_seq => self.try_undo_recovery(config, stats, a),
            CaState::Loss if a.alert => self.process_loss(config, stats, a),
            // "CWR is to be held something *above* high_seq is ACKed" (`tcp_fastretrans_alert`, D).
            CaState::Cwr if a.alert && self.snd_una > self.high_seq => {
                self.end_cwnd_reduction(config);
                self.set_state(CaState::Open);
            }
            _ => {}
        }
        let mut found = Alert::default();
        if a.alert && !hold_losses {
            // (`tcp_try_undo_partial` returned, or `tcp_fastretrans_alert` did not run: no loss
            // detection on this ACK)
            self.identify_packet_loss(config, a, &mut found);
        }
        if a.alert && matches!(self.state, CaState::Open | CaState::Disorder | CaState::Cwr) {
            self.time_to_recover(config, stats, a, &mut found);
        }
        found
    }

    /// Partial undo (`tcp_try_undo_partial`, first in `tcp_fastretrans_alert`'s Recovery case):
    /// an ACK that advances snd_una but not past high_seq and echoes a timestamp older than
    /// the first retransmission was sent for original data, "rather than with a retransmit":
    /// evidence of reordering (`tcp_check_sack_reordering(sk, prior_snd_una, 1)`). With
    /// retransmissions still out Linux returns there: this ACK marks nothing more lost (nor
    /// tries the D-SACK undo), and true is returned; with none, the reduction is undone and the
    /// connection kept open (`tcp_try_keep_open`), RACK then judging this ACK's news afresh.
    fn try_undo_partial(&mut self, config: &TcpConfig, stats: &mut TcpStats, a: &Ack) -> bool {
        if self.state != CaState::Recovery
            || !a.una_advanced
            || self.snd_una >= self.high_seq
            || self.rp().undo_marker.is_none()
            || !self.packet_delayed(a.ts_ecr)
        {
            return false;
        }
        self.check_reordering(config, a.prior_snd_una);
        // (`tcp_update_reordering(sk, tcp_fackets_out(tp) + acked, 1)`: a metric above 0.)
        self.do_early_retrans = false;
        if self.retrans_out > 0 {
            return true;
        }
        self.forget_retrans_stamp();
        self.undo_reduction(stats, true);
        let keep = if self.sacked_out + self.lost_out > 0 || self.any_retrans_done() {
            CaState::Disorder
        } else {
            CaState::Open
        };
        self.set_state(keep);
        self.high_seq = self.snd_nxt;
        false
    }

    /// D-SACK undo (`tcp_try_undo_dsack`): every retransmission was needless.
    /// `tcp_fastretrans_alert` tries it in Recovery and in Open or Disorder (a late
    /// D-SACK after the recovery ended); in Loss only `tcp_try_undo_loss` undoes
    /// (`tcp_process_loss`). The ACK that ends a recovery undoes it in the state machine
    /// (`tcp_try_undo_recovery` runs first, step D of `tcp_fastretrans_alert`).
    fn try_undo_dsack(&mut self, stats: &mut TcpStats) {
        let ends_recovery = self.state == CaState::Recovery && self.snd_una >= self.high_seq;
        if ends_recovery
            || self.rp().undo_marker.is_none()
            || self.rp().undo_retrans != 0
            || !matches!(self.state, CaState::Open | CaState::Disorder | CaState::Recovery)
        {
            return;
        }
        // The window keeps its width one recovery longer.
        self.rack.reo_wnd_persist = (self.rack.reo_wnd_persist + 1).min(RACK_RECOVERY_THRESH);
        self.undo_reduction(stats, false);
        if self.state != CaState::Open {
            self.set_state(if self.sacked_out > 0 { CaState::Disorder } else { CaState::Open });
        }
    }

    /// The ACK that ends a fast recovery (`tcp_try_undo_recovery`, then Open): undone if the
    /// timestamps show the retransmissions needless, else the window set to ssthresh
    /// ([`Conn::end_cwnd_reduction`], which an undo leaves to rate halving alone).
    fn try_undo_recovery(&mut self, config: &TcpConfig, stats: &mut TcpStats, a: &Ack) {
        if self.may_undo(a.ts_ecr) {
            self.undo_reduction(stats, false);
        } else {
            // A recovery that was not undone counts toward the window's return to one
            // step (`else if (tp->rack.reo_wnd_persist) tp->rack.reo_wnd_persist--;`),
            // which `update_reo_wnd` makes at the next delivery.
            self.rack.reo_wnd_persist = self.rack.reo_wnd_persist.saturating_sub(1);
        }
        self.end_cwnd_reduction(config);
        self.set_state(CaState::Open);
    }

    /// `tcp_process_loss`: a timeout's undo, F-RTO (RFC 5682), and the end of Loss.
    fn process_loss(&mut self, config: &TcpConfig, stats: &mut TcpStats, a: &Ack) {
        let recovered = self.snd_una >= self.high_seq;
        let may_undo = self.may_undo(a.ts_ecr);
        // Today's `tcp_process_loss` tries the undo only on an ACK that moves snd_una
        // (`flag & FLAG_SND_UNA_ADVANCED && tcp_try_undo_loss(sk, false)`); 3.10-3.18's on
        // every ACK in Loss (`tcp_try_undo_loss` first in its F-RTO branch, and last).
        if (a.una_advanced || config.era.undo.undo_loss_on_any_ack) && may_undo {
            // `tcp_try_undo_loss`: the timestamps show the timeout needless.
            self.undo_reduction(stats, true);
            self.timeouts = 0; // (`inet_csk(sk)->icsk_retransmits = 0`)
            self.set_state(CaState::Open);
            return;
        }
        if self.frto && a.orig_acked {
            // F-RTO (RFC 5682 §3.1 step 3.b, SACK-enhanced): data never retransmitted
            // was delivered, so not everything was lost: the timeout was spurious.
            self.undo_reduction(stats, true);
            self.timeouts = 0;
            stats.spurious_rtos += 1;
            stats.spurious_rto_at.push(a.now);
            self.frto = false;
            self.set_state(CaState::Open);
            return;
        }
        if self.frto {
            if self.snd_nxt > self.high_seq {
                if a.newly_sacked > 0 || (!a.una_advanced && a.ack == self.snd_una) {
                    self.frto = false; // step 3.a: the loss was real
                }
            } else if a.una_advanced && !recovered {
                // Step 2.b: send new data rather than retransmit, if there is any.
                self.high_seq = self.snd_nxt;
                if self.snd_nxt < self.written && self.snd_nxt < self.wnd_end {
                    self.frto_new_data = true;
                } else {
                    self.frto = false;
                }
            }
        }
        if recovered && !self.frto_new_data {
            // `tcp_try_undo_recovery`, then back to Open: `tcp_may_undo`, as at the end
            // of a fast recovery (every retransmission D-SACKed, or the timestamps).
            if may_undo {
                self.undo_reduction(stats, false);
            } else {
                self.rack.reo_wnd_persist = self.rack.reo_wnd_persist.saturating_sub(1);
            }
            self.frto = false;
            self.set_state(CaState::Open);
        }
    }

    /// Loss detection (`tcp_identify_packet_loss`), after the state's exits and undos as in
    /// `tcp_fastretrans_alert`: the timeout's and the partial undo unmark every loss
    /// (`tcp_undo_cwnd_reduction`), every undo makes RACK look again, and what RACK finds on
    /// this same ACK must survive it (else a segment RACK already judged lost waits for a
    /// probe or the RTO). Without RACK, the scoreboard's rules ([`classic`](super::classic)).
    fn identify_packet_loss(&mut self, config: &TcpConfig, a: &Ack, found: &mut Alert) {
        match config.loss {
            LossDetection::Rack => {
                if self.rack.advanced {
                    self.rack.advanced = false;
                    let (n, wait) = self.rack_detect_loss(config, a.now);
                    found.newly_lost += n;
                    found.reo_wait = wait;
                }
            }
            LossDetection::Scoreboard => {
                found.newly_lost += self.mark_lost_retrans();
                found.newly_lost += self.dupthresh_detect_loss(a.is_dupack);
            }
            LossDetection::None => {}
        }
    }

    /// In Open, Disorder or CWR: recovery starts once a segment is marked lost, or by Linux 3.x's
    /// other ways into it without RACK ([`Conn::early_recovery`]: `tcp_time_to_recover`); else
    /// `tcp_try_to_open` → `tcp_try_keep_open` outside CWR (nothing is marked lost here).
    fn time_to_recover(&mut self, config: &TcpConfig, stats: &mut TcpStats, a: &Ack, found: &mut Alert) {
        let early = if self.lost_out > 0 || config.loss != LossDetection::Scoreboard {
            EarlyRecovery::No
        } else {
            self.early_recovery(config, a.now, a.una_advanced, a.old_ack)
        };
        if self.lost_out > 0 {
            self.enter_recovery(config, stats);
        } else if early == EarlyRecovery::Now {
            self.enter_recovery(config, stats);
            // `if (do_lost) tcp_update_scoreboard(sk, fast_rexmit)`: on a duplicate ACK, or one
            // whose SACKs reach beyond the reordering degree (`tcp_fackets_out(tp) > tp->reordering`).
            if a.is_dupack || (a.newly_sacked > 0 && self.fack.saturating_sub(self.snd_una) > self.reordering) {
                found.newly_lost += self.mark_on_entry();
            }
        } else {
            if let EarlyRecovery::After(delay) = early {
                found.early_retrans_at = Some(a.now + delay);
            }
            self.forget_retrans_stamp();
            let next = if self.sacked_out > 0 || self.any_retrans_done() { CaState::Disorder } else { CaState::Open };
            if next != self.state && self.state != CaState::Cwr {
                self.set_state(next);
            }
        }
    }
}
