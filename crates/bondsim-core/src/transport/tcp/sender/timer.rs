//! The retransmission timer, which Linux multiplexes by `icsk_pending` (net/ipv4/tcp_timer.c:
//! `tcp_retransmit_timer`, `retransmits_timed_out`, `tcp_model_timeout`; tcp_output.c:
//! `tcp_set_xmit_timer`'s parts `tcp_schedule_loss_probe` / `tcp_rearm_rto`,
//! `tcp_send_loss_probe`; tcp_input.c: `tcp_enter_loss`), and the timer after an ACK.

use super::*;

/// `tcp_model_timeout(sk, boundary, TCP_RTO_MIN)` (net/ipv4/tcp_timer.c): how long `boundary`
/// timeouts take when the first fires after `TCP_RTO_MIN` (200 ms, whatever this connection's
/// RTO) and each doubles it up to `rto_max`. `retransmits_timed_out` gives a connection up once
/// that long has passed since its first retransmission: 924.6 s for `tcp_retries2` = 15 and 120 s.
pub(super) fn model_timeout(boundary: u32, rto_max: SimTime) -> SimTime {
    const TCP_RTO_MIN: u64 = 200_000_000;
    let linear_backoff_thresh = (rto_max.0 / TCP_RTO_MIN).max(1).ilog2();
    SimTime(if boundary <= linear_backoff_thresh {
        ((2u64 << boundary) - 1) * TCP_RTO_MIN
    } else {
        (((2u64 << linear_backoff_thresh) - 1) * TCP_RTO_MIN)
            .saturating_add(u64::from(boundary - linear_backoff_thresh).saturating_mul(rto_max.0))
    })
}

/// `TCP_DELACK_MAX` (include/net/tcp.h: `HZ / 5`), the longest a receiver delays an ACK.
pub(super) const DELACK_MAX: SimTime = SimTime(200_000_000);

/// What the connection's one retransmission timer is armed for (Linux
/// multiplexes them on `icsk_retransmit_timer` by `icsk_pending`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TimerKind {
    Rto,
    LossProbe,
    ReoTimeout,
    /// Delayed early retransmit (`ICSK_TIME_EARLY_RETRANS`, Linux 3.5 to 4.10).
    EarlyRetrans,
    /// The handshake segment's retransmission (the request socket's `rsk_timer`).
    Handshake,
}

impl TcpSender {
    pub(super) fn arm(c: &mut Conn, flow: u32, kind: TimerKind, at: SimTime, out: &mut Vec<Output>) {
        c.timer_kind = kind;
        if c.timer.arm(at) {
            out.push(Output::Timer { at: c.timer.at(), token: timer_token(flow, c.timer.generation()) });
        }
    }

    /// `tcp_set_xmit_timer`: a loss probe if one may be sent, else the RTO
    /// (`tcp_schedule_loss_probe`, `tcp_rearm_rto`). Called when data was ACKed
    /// or is about to be sent at `now` (the world asks for it at this instant),
    /// so the deadline counts from `now` as Linux's does.
    pub(super) fn set_xmit_timer(config: &TcpConfig, c: &mut Conn, flow: u32, now: SimTime, out: &mut Vec<Output>) {
        if c.packets_out() == 0 && c.snd_nxt >= c.written {
            c.timer.cancel();
            return;
        }
        let rto_at = now + c.backed_off_rto(config);
        if config.tlp && config.sack && c.state == CaState::Open && c.tlp_high_seq.is_none() {
            if let Some(srtt) = c.srtt() {
                // PTO = 2·SRTT, plus `tcp_rto_min` when exactly one segment is out (the receiver
                // may be delaying its ACK), else plus TCP_TIMEOUT_MIN (2 ms); never after the RTO.
                // Linux schedules it after the segments leave (`tcp_write_xmit`); a write from
                // idle arms it before they do, counting the segments the windows let out now.
                let out_now = match c.packets_out() {
                    0 => (c.written - c.snd_nxt).min(c.w.cwnd).min(c.wnd_end.saturating_sub(c.snd_nxt)),
                    n => n,
                };
                if out_now > 0 {
                    let pto = match config.era.tlp.floor {
                        None => {
                            let extra = if out_now == 1 { config.rto_min } else { SimTime(2_000_000) };
                            SimTime(2 * srtt.0) + extra
                        }
                        // Linux 3.10's first TLP: `max(2·rtt, [1.5·rtt + TCP_DELACK_MAX with one
                        // segment out,] msecs_to_jiffies(10))`.
                        Some(floor) => {
                            let one_out = if out_now == 1 { SimTime(srtt.0 * 3 / 2) + DELACK_MAX } else { SimTime(0) };
                            SimTime(2 * srtt.0).max(one_out).max(floor)
                        }
                    };
                    return Self::arm(c, flow, TimerKind::LossProbe, (now + pto).min(rto_at), out);
                }
            }
        }
        Self::arm(c, flow, TimerKind::Rto, rto_at, out);
    }

    /// The connection is given up (ETIMEDOUT): what it holds goes, the application hears of it.
    pub(super) fn give_up(&mut self, flow: u32, out: &mut Vec<Output>) {
        let c = self.conns[flow as usize].as_mut().expect("open");
        c.done = true;
        c.timer.cancel();
        c.segs = VecDeque::new();
        if let Some(r) = c.rates.as_mut() {
            r.tx_stamps = VecDeque::new();
        }
        self.active -= 1;
        self.stats.aborted += 1;
        out.push(Output::Aborted(flow));
    }

    /// The retransmission timer fired (`tcp_retransmit_timer` → `tcp_enter_loss`).
    pub(super) fn on_rto(&mut self, flow: u32, now: SimTime, out: &mut Vec<Output>) {
        let config = &self.config;
        let Some(c) = self.conns[flow as usize].as_mut().filter(|c| !c.done && c.packets_out() > 0) else { return };
        self.stats.rtos += 1;
        self.stats.rto_at.push(now);
        // `tcp_write_timeout` → `retransmits_timed_out`, before this timeout retransmits: after a
        // timeout since snd_una last moved (`icsk_retransmits`), the connection is given up
        // (ETIMEDOUT) once the first retransmission (`retrans_stamp`) is `tcp_model_timeout` old,
        // 924.6 s: 15 timeouts from 200 ms, more from a shorter RTO, fewer from a longer one.
        // Without a stamp 3.x took the head's last send; today's kernels keep no such fallback
        // (a stamp is always set by then: `tcp_retransmit_skb` sets it, `tcp_try_undo_loss`
        // resets the count), nor does the model need it but as a guard.
        let first = c.rp().retrans_stamp.unwrap_or_else(|| c.seg(c.snd_una).sent);
        if c.timeouts > 0 && now.saturating_sub(first) >= model_timeout(config.retries2, config.rto_max) {
            return self.give_up(flow, out);
        }
        c.w.now = now;
        // `tcp_enter_loss`: a new reduction (ssthresh from the algorithm, undo state) unless
        // one is under way: not again in fast recovery, nor on a repeated timeout.
        let first_timeout = c.state == CaState::Loss && c.backoff == 0;
        if matches!(c.state, CaState::Open | CaState::Disorder) || c.snd_una >= c.high_seq || first_timeout {
            let (ssthresh, cwnd) = (c.current_ssthresh(), c.w.cwnd);
            let r = c.rp_mut();
            (r.prior_ssthresh, r.prior_cwnd) = (ssthresh, cwnd);
            c.w.ssthresh = c.cc.ssthresh(&c.w);
            c.cc.cwnd_event(&mut c.w, CaEvent::Loss);
            c.init_undo();
        }
        // Until 3.15 every timeout set the marker afresh (after `tcp_clear_retrans_partial`:
        // `undo_retrans` 0) and the walk of the write queue up to `tcp_send_head` voided it at a
        // segment retransmitted before: `TCPCB_RETRANS` (ever) in 3.10-3.13, `TCPCB_SACKED_RETRANS`
        // (in flight) in 3.14-3.15.
        let void_if = match config.era.undo.loss_voids_undo_at {
            VoidUndoAt::Never => None,
            VoidUndoAt::EverRetransmitted => Some(EVER_RETRANS),
            VoidUndoAt::RetransmissionInFlight => Some(RETRANS_OUT),
        };
        if let Some(mask) = void_if {
            let retransmitted = (c.snd_una..c.snd_nxt).any(|seq| c.seg(seq).marks & mask != 0);
            let marker = if retransmitted { None } else { Some(c.snd_una) };
            let r = c.rp_mut();
            (r.undo_marker, r.undo_retrans) = (marker, 0);
        }
        // Everything not SACKed is lost; retransmissions in flight are forgotten.
        for seq in c.snd_una..c.snd_nxt {
            let s = c.seg_mut(seq);
            if s.marks & SACKED == 0 {
                let newly = s.marks & LOST == 0;
                s.marks = (s.marks | LOST) & !RETRANS_OUT;
                c.lost_out += u32::from(newly);
            }
        }
        c.retrans_out = 0;
        if let Some(r) = c.repair.as_mut() {
            r.retrans_at.clear();
        }
        c.retrans_hint = c.snd_una;
        // `tcp_enter_loss` resets the reordering degree it cannot trust: a timeout in Open or
        // Disorder after as many SACKs as the initial degree (not one in Recovery or Loss).
        if matches!(c.state, CaState::Open | CaState::Disorder) && c.sacked_out >= config.reordering {
            c.reordering = c.reordering.min(config.reordering);
        }
        // `tcp_enter_loss`: F-RTO judges a timeout that starts a recovery, or a repeated one.
        c.frto = config.frto && (c.state != CaState::Loss || c.backoff > 0);
        c.high_seq = c.snd_nxt;
        c.tlp_high_seq = None;
        c.w.cwnd_cnt = 0;
        c.set_state(CaState::Loss);
        c.w.cwnd = c.in_flight() + 1;
        // Exponential backoff (`inet_csk_rto_backoff`, at most TCP_RTO_MAX).
        c.backoff += 1;
        c.timeouts += 1;
        let at = now + c.backed_off_rto(config);
        Self::arm(c, flow, TimerKind::Rto, at, out);
        let seq = c.snd_una;
        let p = Self::retransmit(c, &mut self.stats, flow, seq, now, &self.cutter, Resend::Lost);
        self.urgent.push_back(p);
        self.ready.push_back(flow);
    }

    /// The loss-probe timer fired (`tcp_send_loss_probe`): new data if the
    /// receiver's window allows, else the highest segment again.
    pub(super) fn on_loss_probe(&mut self, flow: u32, now: SimTime, out: &mut Vec<Output>) {
        let Some(c) = self.conns[flow as usize].as_mut().filter(|c| !c.done && c.packets_out() > 0) else { return };
        let probe = if c.snd_nxt < c.written && c.snd_nxt < c.wnd_end {
            c.tlp_retrans = false;
            let p = self.send_new(flow, now);
            let c = self.conns[flow as usize].as_mut().expect("open");
            c.pace_after_send(now, u64::from(p.bytes), 1);
            self.sent(flow); // `tcp_write_xmit(sk, mss, TCP_NAGLE_OFF, 2, ..)`
            p
        } else {
            c.tlp_retrans = true;
            let seq = c.snd_nxt - 1;
            // 3.10-3.13's `__tcp_retransmit_skb` marks nothing; 3.14 on, `TCPCB_EVER_RETRANS`.
            let ever_retrans = self.config.era.undo.probe_marks_ever_retrans;
            Self::retransmit(c, &mut self.stats, flow, seq, now, &self.cutter, Resend::Probe { ever_retrans })
        };
        self.stats.tlp_probes += 1;
        let c = self.conns[flow as usize].as_mut().expect("open");
        c.tlp_high_seq = Some(c.snd_nxt);
        let at = now + c.backed_off_rto(&self.config);
        Self::arm(c, flow, TimerKind::Rto, at, out);
        self.urgent.push_back(probe);
    }
}

impl TcpSender {
    /// The timer after an ACK (`tcp_ack`): RACK's reordering timeout if this ACK's loss
    /// detection armed one (`tcp_rack_mark_lost` clears FLAG_SET_XMIT_TIMER), else TLP / RTO when
    /// data was ACKed (FLAG_SET_XMIT_TIMER is set only by `tcp_clean_rtx_queue`). An ACK that
    /// ACKs nothing leaves a pending reordering timeout alone: under broadcast every segment
    /// brings D-SACKs of its extra copies, and re-arming the RTO on each of them kept RACK from
    /// ever marking a hole lost. A delayed early retransmit (or a 3.10-era loss probe) pending is
    /// cancelled by any ACK in the window (`tcp_ack` → `tcp_rearm_rto`: the RTO of the head's
    /// send), which may pause it again; an old ACK leaves it pending.
    pub(super) fn ack_set_timer(
        config: &TcpConfig,
        c: &mut Conn,
        flow: u32,
        a: &Ack,
        alert: &Alert,
        out: &mut Vec<Output>,
    ) {
        let now = a.now;
        let rearm_pending = c.timer.deadline().is_some() && c.pending_rearmed_by_ack(config);
        if let Some(wait) = alert.reo_wait {
            let rto_at = now + c.backed_off_rto(config);
            Self::arm(c, flow, TimerKind::ReoTimeout, (now + wait + REO_SLACK).min(rto_at), out);
        } else if let Some(at) = alert.early_retrans_at {
            Self::arm(c, flow, TimerKind::EarlyRetrans, at, out);
        } else if rearm_pending && !a.una_advanced && !a.old_ack && c.packets_out() > 0 {
            // (3.x's `tcp_schedule_loss_probe` after it would probe again only in Open, which an ACK
            // that ACKs nothing leaves only without SACKs: not re-armed here.)
            let at = c.rearmed_rto(config, now);
            Self::arm(c, flow, TimerKind::Rto, at, out);
        } else if a.una_advanced || c.timer.deadline().is_none() {
            Self::set_xmit_timer(config, c, flow, now, out);
        }
    }
}
