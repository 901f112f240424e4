//! ACK processing: `tcp_ack` (net/ipv4/tcp_input.c) as the short sequence of steps it is in
//! Linux, each a function of its own file: SACK tagging and the cumulative ACK
//! ([`scoreboard`](super::scoreboard): `tcp_sacktag_write_queue`, `tcp_clean_rtx_queue`), the
//! window update (`tcp_ack_update_window`), the RTT (`tcp_ack_update_rtt`, [`rtt`](super::rtt)),
//! the loss probe's answer (`tcp_process_tlp_ack`, [`rack`](super::rack)), the congestion state
//! machine (`tcp_fastretrans_alert`, [`recovery`](super::recovery)), the window
//! (`tcp_cong_control`, here) and the timer (`tcp_set_xmit_timer`, [`timer`](super::timer)).
//! The steps pass one [`Ack`] between them, as Linux passes its `flag` word and the locals
//! beside it; those that deliver segments also fill the delivery-rate sample (`sack_state.rate`).

use super::*;

/// What one ACK brought and what `tcp_ack`'s steps found in it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Ack {
    pub(super) now: SimTime,
    /// The cumulative ACK (`ack_seq`) and the timestamp it echoes.
    pub(super) ack: u32,
    pub(super) ts_ecr: u32,
    /// `tcp_highest_sack_seq` before the ACK (at least snd_una).
    pub(super) prior_fack: u32,
    pub(super) prior_snd_una: u32,
    /// `tcp_packets_in_flight` before the ACK.
    pub(super) prior_in_flight: u32,
    pub(super) prior_snd_wnd: u32,
    /// `sk_pacing_rate` as the last ACK's `tcp_cong_control` left it (HyStart reads it).
    pub(super) pacing_rate: u64,
    /// Segments newly ACKed or SACKed, and of them newly SACKed.
    pub(super) newly_acked_sacked: u32,
    /// Segments a valid D-SACK reports duplicated: "A spurious retransmission is delivered"
    /// (`tcp_dsack_seen` → `sack_delivered`, counted into `tp->delivered` by `tcp_ack`; since 4.9
    /// one per D-SACK, since 5.9 its segments). [`Ack::delivered`] adds them.
    pub(super) dsack_delivered: u32,
    pub(super) newly_sacked: u32,
    /// The rate sample's `prior_delivered`: the delivered count when the latest sent of the
    /// segments this ACK delivers left (`tcp_rate_skb_delivered`); 0 when it delivers none.
    pub(super) prior_delivered: u32,
    /// The oldest and the newest (S)ACKed originals' send times (`first_ackt`/`last_ackt`,
    /// `first_sackt`/`last_sackt`).
    pub(super) first_ackt: Option<SimTime>,
    pub(super) last_ackt: Option<SimTime>,
    pub(super) first_sackt: Option<SimTime>,
    pub(super) last_sackt: Option<SimTime>,
    /// The lowest segment delivered out of order (`tcp_check_sack_reordering`'s `low`), or `u32::MAX`.
    pub(super) reord: u32,
    /// The ACK carries SACK blocks (a D-SACK among them).
    pub(super) sack_blocks: bool,
    /// FLAG_DSACKING_ACK: its first block is a D-SACK (RFC 2883 §4).
    pub(super) dsack: bool,
    /// FLAG_DSACK_TLP: the D-SACK reports a tail loss probe's segment.
    pub(super) dsack_tlp: bool,
    /// FLAG_RETRANS_DATA_ACKED: the cumulative ACK covers a segment that was retransmitted.
    pub(super) retrans_data_acked: bool,
    /// FLAG_ORIG_SACK_ACKED: a never-retransmitted segment below high_seq was delivered.
    pub(super) orig_acked: bool,
    /// FLAG_SND_UNA_ADVANCED.
    pub(super) una_advanced: bool,
    /// Below snd_una (ACKs reordered on their way back): `tcp_ack`'s `old_ack` path.
    pub(super) old_ack: bool,
    /// `is_dupack` (`num_dupack` today).
    pub(super) is_dupack: bool,
    /// `tcp_ack_is_dubious`: `tcp_fastretrans_alert` runs.
    pub(super) alert: bool,
}

impl Ack {
    /// `tcp_ack`'s `delivered` (`tcp_newly_delivered`): what `tcp_rate_gen` and
    /// `tcp_cong_control` (PRR, `tcp_cong_avoid`) take: the segments newly ACKed or SACKed and
    /// those a D-SACK reports.
    pub(super) fn delivered(&self) -> u32 {
        self.newly_acked_sacked + self.dsack_delivered
    }
}

/// What `tcp_fastretrans_alert` found: the segments it marked lost, and the timers it wants.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Alert {
    pub(super) newly_lost: u32,
    /// RACK's reordering timeout, if a segment may still be judged lost.
    pub(super) reo_wait: Option<SimTime>,
    /// A delayed early retransmit (Linux 3.5-4.10).
    pub(super) early_retrans_at: Option<SimTime>,
}

impl TcpSender {
    /// Processes one ACK of `flow` (`tcp_ack`).
    /// `with_data`: the ACK came on a segment that carried data (`FLAG_DATA`: never a duplicate).
    pub(super) fn on_ack(&mut self, now: SimTime, ack: &Packet, with_data: bool, out: &mut Vec<Output>) {
        let flow = ack.flow;
        let config = &self.config;
        let stats = &mut self.stats;
        let Some(c) = self.conns[flow as usize].as_mut().filter(|c| !c.done) else { return };
        stats.acks_received += 1;
        c.xmit_failed = false; // (`tcp_data_snd_check` calls `tcp_write_xmit` again)
        let mut a = c.ack_begin(config, now, ack);
        // The delivery-rate sample (`sack_state.rate`), filled as segments are delivered; only
        // while the control samples rates (`Conn::sampling`). It is kept beside the `Ack` rather
        // than in it, and filled out of line (`rate_skb_delivered`), because the loss-based
        // controls never fill it: inside the `Ack` it cost them some 35 instructions on every ACK
        // all the same (its fields kept live through the scoreboard's loops).
        let mut rs = c.sampling.then(RateSample::default);
        c.sacktag_write_queue(config, stats, ack, &mut a, &mut rs);
        c.clean_rtx_queue(config, &mut a, &mut rs);
        c.ack_update_window(ack);
        if a.reord < a.prior_fack && config.sack {
            c.check_reordering(config, a.reord);
        }
        c.delivered += a.delivered();
        c.classify_ack(config, ack, with_data, &mut a);
        if !a.old_ack {
            c.update_reo_wnd(config, a.prior_delivered);
        }
        let ca_rtt = c.ack_update_rtt(config, &a);
        if !a.old_ack {
            c.pkts_acked(&a, ca_rtt);
        }
        c.process_tlp_ack(&a);
        let alert = c.fastretrans_alert(config, stats, &a);
        if let Some(rs) = rs.as_mut().filter(|_| !a.old_ack) {
            rs.rtt = ca_rtt;
            rs.prior_in_flight = a.prior_in_flight;
            c.rate_gen(now, a.delivered(), alert.newly_lost, rs);
        }
        c.cong_control(config, &a, rs.as_ref(), alert.newly_lost);
        if c.snd_una == c.total {
            if config.trace_every.is_some() {
                // The last sample: a connection ends between samples, with all of it acknowledged.
                trace_row(&mut self.trace, now, flow, c);
            }
            // It closes (the FIN exchange is not modelled): `tcp_update_metrics`.
            if config.metrics_save {
                let destination = Self::destination_of(&self.destination, flow);
                self.metrics.entry(destination).or_default().update(config, c, now);
            }
            // (Its state goes whole: nothing is left to close.)
            self.active -= 1;
            self.retire(flow);
            return;
        }
        // `tcp_check_space` after the ACK: a stream's writer that sleeps may wake.
        let wake = a.una_advanced && c.stream.is_some();
        Self::ack_set_timer(config, c, flow, &a, &alert, out);
        self.ready.push_back(flow);
        if wake {
            self.app_wakes(now, flow, out);
        }
    }
}

impl Conn {
    /// The state before the ACK that `tcp_ack` keeps (`prior_*`).
    fn ack_begin(&mut self, config: &TcpConfig, now: SimTime, ack: &Packet) -> Ack {
        self.w.now = now;
        self.frto_new_data = false;
        Ack {
            now,
            ack: ack.ack,
            ts_ecr: ack.ts_ecr,
            prior_fack: self.fack.max(self.snd_una),
            prior_snd_una: self.snd_una,
            prior_in_flight: self.in_flight(),
            prior_snd_wnd: self.snd_wnd,
            pacing_rate: self.pacing_rate(config).map_or(0, |r| r as u64),
            newly_acked_sacked: 0,
            newly_sacked: 0,
            prior_delivered: 0,
            first_ackt: None,
            last_ackt: None,
            first_sackt: None,
            last_sackt: None,
            reord: u32::MAX,
            sack_blocks: false,
            dsack: false,
            dsack_tlp: false,
            dsack_delivered: 0,
            retrans_data_acked: false,
            orig_acked: false,
            una_advanced: false,
            old_ack: false,
            is_dupack: false,
            alert: false,
        }
    }

    /// RFC 7323 §4.3's `TS.Recent` (echoed in the data that follows), and the window update
    /// (`tcp_ack_update_window`): the right edge the ACK allows.
    fn ack_update_window(&mut self, ack: &Packet) {
        self.ts_recent = self.ts_recent.max(self.ts.ts_of(ack.born));
        if ack.ack >= self.snd_una {
            self.wnd_end = self.wnd_end.max(ack.ack.saturating_add(ack.seq));
            self.snd_wnd = ack.seq;
        }
    }

    /// What kind of ACK this is: old, a duplicate, and whether it is dubious.
    fn classify_ack(&mut self, config: &TcpConfig, ack: &Packet, with_data: bool, a: &mut Ack) {
        // An ACK below snd_una (ACKs reordered on their way back) takes `tcp_ack`'s `old_ack`
        // path: its SACK blocks are tagged and `tcp_fastretrans_alert` runs, nothing else (no
        // RTT sample, RACK window update, loss-probe answer nor window growth or reduction).
        a.old_ack = ack.ack < a.prior_snd_una;
        // FLAG_NOT_DUP: the ACK moved snd_una, carried data, or updated the window
        // (`tcp_may_update_window`: a sequence number past the last update's, which only the peer's
        // data moves, or with the same one a larger window).
        let not_dup = a.una_advanced || with_data || self.after_peer_data || ack.seq > a.prior_snd_wnd;
        self.after_peer_data = with_data;
        // A D-SACK is news to today's kernels (in `FLAG_CA_ALERT`, and no duplicate:
        // `!(flag & (FLAG_SND_UNA_ADVANCED | FLAG_NOT_DUP | FLAG_DSACKING_ACK))`), not to 3.x's.
        let dsack_alert = a.dsack && config.era.undo.dsack_is_news;
        // `is_dupack` (`num_dupack` today): nothing moved forward, and not an old ACK (whose path
        // passes no duplicate).
        a.is_dupack = !a.old_ack && !not_dup && !dsack_alert;
        // Whether `tcp_fastretrans_alert` (the undos, loss detection, the congestion state
        // machine) runs. `tcp_ack_is_dubious`: outside Open, or for a duplicate, or for news
        // (`FLAG_CA_ALERT`: newly SACKed data, the D-SACK above; ECN is not modelled), so in
        // Open an ACK that only moves snd_una on skips it all. With nothing in flight before the
        // ACK (`no_queue`) only a D-SACK reaches it; an old ACK (below snd_una) only with SACK
        // blocks (`old_ack`).
        a.alert = if a.old_ack {
            a.sack_blocks
        } else if self.snd_nxt == a.prior_snd_una {
            a.dsack
        } else {
            !not_dup || a.newly_sacked > 0 || dsack_alert || self.state != CaState::Open
        };
    }

    /// The congestion control hears of the ACK (`tcp_ack` → `tcp_clean_rtx_queue` →
    /// `ca_ops->pkts_acked`), with the RTT sample it gives the control (`ca_rtt_us`).
    fn pkts_acked(&mut self, a: &Ack, ca_rtt: Option<SimTime>) {
        self.w.snd_nxt = u64::from(self.snd_nxt);
        self.w.pacing_rate = a.pacing_rate;
        let sample = AckSample { acked: a.newly_acked_sacked, rtt: ca_rtt, in_flight: a.prior_in_flight };
        self.cc.pkts_acked(&mut self.w, &sample);
    }

    /// The window (`tcp_cong_control`): a rate-based control's own (`cong_control`, with the
    /// ACK's rate sample `rs`), else PRR (or rate halving) in Recovery and CWR, else the control's
    /// growth (and, before 3.2, `tcp_moderate_cwnd`).
    fn cong_control(&mut self, config: &TcpConfig, a: &Ack, rs: Option<&RateSample>, newly_lost: u32) {
        if a.old_ack || rs.is_some_and(|rs| self.rate_cong_control(rs)) {
            // (none on the `old_ack` path; a control with `cong_control` set the window itself)
        } else if matches!(self.state, CaState::Recovery | CaState::Cwr) {
            // `tcp_in_cwnd_reduction`: PRR in CWR as in Recovery (rate halving before it).
            match config.era.reduction {
                Reduction::Prr => self.cwnd_reduction(a.delivered(), newly_lost, a.una_advanced),
                Reduction::RateHalving => self.cwnd_down(a.newly_acked_sacked > 0 || a.una_advanced || a.dsack),
            }
        } else {
            // `tcp_may_raise_cwnd`: with a raised reordering degree any forward progress
            // counts, otherwise only newly ACKed data.
            let may_raise = if self.reordering > config.reordering {
                a.una_advanced || a.newly_acked_sacked > 0
            } else {
                a.una_advanced
            };
            self.w.cwnd_limited = self.is_cwnd_limited();
            if may_raise && a.newly_acked_sacked > 0 {
                self.w.snd_nxt = u64::from(self.snd_nxt);
                self.cc.cong_avoid(&mut self.w, a.delivered());
            }
            self.moderate_cwnd(config, a);
        }
    }

    /// A subflow's connection closes with its MPTCP connection (the FIN exchange is not modelled):
    /// what it holds goes, the rest stays for the connection level to read. (A TCP flow's goes
    /// whole, [`TcpSender::retire`].)
    pub(super) fn close(&mut self) {
        self.done = true;
        self.timer.cancel();
        self.segs = VecDeque::new();
        if let Some(r) = self.rates.as_mut() {
            r.tx_stamps = VecDeque::new();
        }
        if let Some(r) = self.repair.as_mut() {
            r.retx_acked = VecDeque::new();
        }
    }
}
