//! Sending (net/ipv4/tcp_output.c): what goes next (`tcp_write_xmit`,
//! `tcp_xmit_retransmit_queue`, `tcp_retransmit_skb`, forward retransmission before 4.11),
//! segmentation offload's size (`tcp_tso_autosize`), the pacing rate
//! (`tcp_update_pacing_rate`, tcp_input.c), TCP small queues (`tcp_small_queue_check`), Nagle
//! (`tcp_nagle_test`) and the send event (`tcp_event_data_sent`).

use super::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Resend {
    /// A segment marked lost (`tcp_retransmit_skb`).
    Lost,
    /// Forward retransmission in recovery, neither lost nor SACKed (`TCPCB_SACKED_RETRANS` alone).
    Forward,
    /// A loss probe (`tcp_send_loss_probe` → `__tcp_retransmit_skb`): `ever_retrans` whether the
    /// kernel marks the segment `TCPCB_EVER_RETRANS` (3.14 on).
    Probe { ever_retrans: bool },
}

/// The memory a buffer of `segments` segments of `mss` bytes holds (`skb->truesize`):
/// its payload plus the `sk_buff` and `skb_shared_info` structures and the header
/// room Linux reserves (`SKB_TRUESIZE`, `MAX_TCP_HEADER`; about 900 bytes on x86-64).
pub(super) fn truesize(mss: u32, segments: u32) -> u64 {
    u64::from(mss) * u64::from(segments) + 896
}

/// The memory one packet of a buffer accounts for: its payload, and the buffer's
/// overhead on its first (or only) packet.
pub(super) fn packet_truesize(p: &Packet) -> u64 {
    u64::from(p.bytes) + if p.gso == 1 { 0 } else { 896 }
}

impl Conn {
    /// `tcp_may_send_now`: new data the windows let out now (`tcp_snd_test`: a segment
    /// waiting, room in cwnd, and in the receiver's window).
    pub(super) fn may_send_now(&self) -> bool {
        self.snd_nxt < self.written && self.in_flight() < self.w.cwnd && self.snd_nxt < self.wnd_end
    }

    /// `tcp_event_data_sent`: the first data after the pipe emptied restarts the
    /// congestion control's clock (`CA_EVENT_TX_START`); `lsndtime` is the last send.
    pub(super) fn data_sent(&mut self, now: SimTime) {
        self.w.now = now;
        if self.in_flight() == 0 {
            if self.sampling {
                self.rate_window();
            }
            self.cc.cwnd_event(&mut self.w, CaEvent::TxStart);
        }
        self.w.lsndtime = now;
    }

    /// `tcp_tso_autosize` (`net/ipv4/tcp_output.c`): about 1 ms of data at the
    /// pacing rate (`sk_pacing_rate >> sk_pacing_shift`, shift 10), plus
    /// `gso_max_size >> (min_rtt_us >> tcp_tso_rtt_log)` (log 9: a full 64 KB on
    /// paths under 512 µs), at most `gso_max_size` (64 KB), at least
    /// `tcp_min_tso_segs` (2) segments. The pacing rate is
    /// `tcp_update_pacing_rate`'s: `mss · max(cwnd, packets_out) / srtt`, ×2 in slow
    /// start and ×1.2 after (`tcp_pacing_ss_ratio`, `tcp_pacing_ca_ratio`);
    /// unlimited before the first RTT sample.
    pub(super) fn tso_autosize(&self, config: &TcpConfig) -> u32 {
        self.tso_autosize_at(config, self.pacing_rate(config))
    }

    /// [`Conn::tso_autosize`] at the pacing rate `rate` the caller has already computed
    /// ([`Conn::pacing_rate`]).
    fn tso_autosize_at(&self, config: &TcpConfig, rate: Option<f64>) -> u32 {
        const GSO_MAX_SIZE: u64 = 65_536;
        let mss = u64::from(config.mss);
        let bytes = match (rate, self.min_rtt) {
            (Some(rate), Some(min_rtt)) => {
                let shift = (min_rtt.0 / 1_000) >> 9;
                let extra = if shift < 64 { GSO_MAX_SIZE >> shift } else { 0 };
                ((rate / 1024.0) as u64).saturating_add(extra).min(GSO_MAX_SIZE)
            }
            _ => GSO_MAX_SIZE,
        };
        (bytes / mss).max(2) as u32
    }

    /// `tcp_update_pacing_rate`, bytes per second (none before the first RTT sample): 200%
    /// of cwnd·mss/srtt while cwnd is below half of ssthresh ("approaching end of slow start
    /// ... should slow down" above it), else 120%.
    /// A control that paces sets the rate itself (`w.pacing_rate`, as BBR sets `sk_pacing_rate`;
    /// none while it is 0).
    pub(super) fn pacing_rate(&self, config: &TcpConfig) -> Option<f64> {
        if self.paced {
            return (self.w.pacing_rate > 0).then_some(self.w.pacing_rate as f64);
        }
        self.pacing_rate_at(config, if self.w.cwnd < self.w.ssthresh / 2 { 2.0 } else { 1.2 })
    }

    /// `tcp_update_skb_after_send` (with `__tcp_transmit_skb`'s `tcp_wstamp_ns =
    /// max(tcp_wstamp_ns, tcp_clock_cache)`): a paced connection's next buffer may leave once
    /// this one's `bytes` have gone at the pacing rate, less up to half of that for the time
    /// the connection was late (`credit`); the first 10 segments go unpaced.
    pub(super) fn pace_after_send(&mut self, now: SimTime, bytes: u64, segments: u32) {
        let rate = self.w.pacing_rate;
        let Some(p) = self.pacing.as_mut().filter(|_| self.paced) else { return };
        let prior = p.wstamp;
        p.wstamp = p.wstamp.max(now);
        p.data_segs_out += segments;
        if rate > 0 && rate != u64::MAX && p.data_segs_out >= 10 {
            let len_ns = (u128::from(bytes) * 1_000_000_000 / u128::from(rate)) as u64;
            let credit = p.wstamp.0 - prior.0;
            p.wstamp = SimTime(p.wstamp.0 + len_ns - (len_ns / 2).min(credit));
        }
    }

    /// `ratio` times `mss · max(cwnd, packets_out) / srtt`, bytes per second (none before the
    /// first RTT sample).
    pub(super) fn pacing_rate_at(&self, config: &TcpConfig, ratio: f64) -> Option<f64> {
        let srtt = self.srtt()?;
        let window = f64::from(self.w.cwnd.max(self.packets_out()));
        Some(f64::from(config.mss) * window / srtt.as_secs_f64().max(1e-9) * ratio)
    }

    /// `tcp_small_queue_check`: too much of this connection is already queued below
    /// TCP. The limit is `max(2 · truesize, pacing_rate >> 10)` (two buffers, or about
    /// 1 ms of data), at most `tcp_limit_output_bytes`, doubled for retransmissions;
    /// a connection with at most one buffer unacknowledged always sends.
    ///
    /// 3.12 to 3.18 (`sender.small_queues = "linux-3.12"`): the limit is
    /// `max(tcp_limit_output_bytes, sk_pacing_rate >> 10)`, the pacing rate always 200% of
    /// `mss · max(cwnd, packets_out) / srtt`, and retransmissions are never held
    /// (`tcp_xmit_retransmit_queue` has no such check). Before 3.6 (`sender.small_queues =
    /// "linux-3.5"`) nothing is held.
    ///
    /// Both compare `sk_wmem_alloc`, which `sk_alloc` starts at 1 (`refcount_set(&sk->sk_wmem_alloc,
    /// 1)`, `net/core/sock.c`: the socket's own reference), with the limit: two buffers of the
    /// limit's `2 · truesize` already exceed it, so two wait below TCP, not three.
    pub(super) fn small_queue_full(&self, config: &TcpConfig, retransmit: bool) -> bool {
        let wmem_alloc = self.wmem + 1;
        if config.era.tsq == TsqLimit::Off {
            return false;
        }
        if config.era.tsq == TsqLimit::Floored {
            if retransmit {
                return false;
            }
            let rate = self.pacing_rate_at(config, 2.0).unwrap_or(f64::INFINITY);
            let limit = ((rate / 1024.0).min(u64::MAX as f64) as u64).max(config.limit_output_bytes);
            return wmem_alloc > limit;
        }
        if self.packets_out() <= 1 {
            return false;
        }
        // (The rate is computed once, for the buffer's size too.)
        let rate = self.pacing_rate(config);
        let buffer = truesize(config.mss, if config.gso { self.tso_autosize_at(config, rate) } else { 1 });
        let rate = rate.unwrap_or(f64::INFINITY);
        let limit = ((rate / 1024.0) as u64).max(2 * buffer).min(config.limit_output_bytes) << u64::from(retransmit);
        wmem_alloc > limit
    }
}

impl TcpSender {
    /// The next segment `flow` may send now: a lost one first, then new data
    /// (`tcp_xmit_retransmit_queue`, `tcp_write_xmit`).
    pub(super) fn next_segment(&mut self, flow: u32, now: SimTime) -> Option<Packet> {
        let config = &self.config;
        let c = self.conns[flow as usize].as_mut().filter(|c| !c.done)?;
        if c.xmit_failed {
            return None; // (`tcp_write_xmit` broke off at the host's refusal: an ACK or a timer calls it again)
        }
        if c.burst_left > 0 {
            // The rest of an offload buffer, room for it was taken when it was cut.
            c.burst_left -= 1;
            SendRecord::record_new_data(c, None);
            let mut p = self.send_new(flow, now);
            p.gso = 1;
            self.sent(flow);
            return Some(p);
        }
        // `tcp_pacing_check`, first in `tcp_write_xmit`'s and `tcp_xmit_retransmit_queue`'s loops:
        // a paced connection whose next departure is later waits for its pacing timer.
        if let Some(p) = c.pacing.as_mut().filter(|p| c.paced && p.wstamp > now) {
            if p.timer.arm(p.wstamp) {
                self.pacing_due.push(flow);
            }
            return None;
        }
        if c.in_flight() >= c.w.cwnd {
            c.cwnd_validate(true); // `tcp_write_xmit`: `is_cwnd_limited |= in_flight >= cwnd`
            return None;
        }
        // Retransmit the first lost segment not yet retransmitted.
        let retransmit_held = c.lost_out > 0 && c.small_queue_full(config, true);
        c.throttled |= retransmit_held;
        if c.lost_out > 0 && !retransmit_held && !c.frto_new_data {
            let mut seq = c.retrans_hint.max(c.snd_una);
            while seq < c.snd_nxt {
                let marks = c.seg(seq).marks;
                if marks & LOST != 0 && marks & (RETRANS_OUT | SACKED) == 0 {
                    break;
                }
                seq += 1;
            }
            c.retrans_hint = seq;
            if seq < c.snd_nxt {
                // (`tcp_xmit_retransmit_queue` leaves `tcp_cwnd_validate` to `tcp_write_xmit`.)
                c.record_resend(seq, now);
                return Some(Self::retransmit(c, &mut self.stats, flow, seq, now, &self.cutter, Resend::Lost));
            }
        }
        // Linux before 4.11's forward retransmission (`tcp_xmit_retransmit_queue` past the lost
        // segments, `tcp_can_forward_retransmit`): in Recovery, when no new data may go, the
        // segments below the highest SACK neither SACKed nor already sent again go again.
        if config.forward_retransmit
            && c.state == CaState::Recovery
            && !c.frto_new_data
            && !c.may_send_now()
            && !c.small_queue_full(config, true)
        {
            let from = c.fwd_hint.max(c.snd_una);
            let found = (from..c.fack.min(c.snd_nxt)).find(|&q| c.seg(q).marks & (SACKED | RETRANS_OUT) == 0);
            c.fwd_hint = found.unwrap_or(c.fack.min(c.snd_nxt)).max(from);
            if let Some(seq) = found {
                c.record_resend(seq, now);
                return Some(Self::retransmit(c, &mut self.stats, flow, seq, now, &self.cutter, Resend::Forward));
            }
        }
        let limit = config.sndbuf_segments;
        if c.snd_nxt >= c.written
            || c.snd_nxt >= c.wnd_end
            || c.packets_out() >= limit
            || (c.state == CaState::Recovery && c.lost_out > c.retrans_out)
        {
            return None;
        }
        if c.small_queue_full(config, false) {
            c.throttled = true;
            return None;
        }
        // With segmentation offload one buffer carries as many segments as
        // `tcp_tso_autosize` allows and the windows have room for (`tcp_write_xmit`:
        // `tso_segs` bounded by the cwnd quota and the send window).
        let segments = if config.gso {
            let room = (c.w.cwnd - c.in_flight())
                .min(limit - c.packets_out())
                .min(c.written - c.snd_nxt)
                .min(c.wnd_end - c.snd_nxt);
            c.tso_autosize(config).min(room).clamp(1, 255)
        } else {
            1
        };
        // Nagle (`tcp_nagle_test` → `tcp_nagle_check`, Minshall's variant, `tcp_output.c`): a
        // buffer smaller than one MSS waits while data is in flight and the last sub-MSS
        // segment sent is unacknowledged (`tcp_minshall_check`: snd_una < snd_sml ≤ snd_nxt),
        // unless TCP_NODELAY, or the buffer carries the FIN (the application's last write).
        let last = c.snd_nxt + segments - 1;
        let last_bytes = c.last_bytes(&self.cutter, config.mss, segments);
        let partial = segments == 1 && last_bytes < config.mss;
        let fin = last + 1 == c.total;
        if partial && !fin && !config.nodelay && c.packets_out() > 0 && c.snd_una < c.snd_sml && c.snd_sml <= c.snd_nxt
        {
            return None;
        }
        SendRecord::record_new_data(c, Some(c.wstamp().max(now)));
        // `tcp_minshall_update`: a buffer that ends in a sub-MSS segment moves snd_sml.
        if last_bytes < config.mss {
            c.snd_sml = last + 1;
        }
        c.burst_left = segments - 1;
        if c.paced {
            let bytes = c.buffer_bytes(&self.cutter, config.mss, segments);
            c.pace_after_send(now, bytes, segments);
        }
        let mut p = self.send_new(flow, now);
        if segments > 1 {
            p.gso = segments as u8;
        }
        self.sent(flow);
        Some(p)
    }

    /// A segment of `flow` left: `tcp_cwnd_validate` with whether the window is now full.
    pub(super) fn sent(&mut self, flow: u32) {
        let c = self.conns[flow as usize].as_mut().expect("open");
        let limited = c.in_flight() >= c.w.cwnd;
        c.cwnd_validate(limited);
    }

    /// Sends segment `seq` again: a lost one, a forward retransmission (`forward`: neither lost nor
    /// SACKed, in flight twice as the kernel counts it, `TCPCB_SACKED_RETRANS`), or a probe.
    pub(super) fn retransmit(
        c: &mut Conn,
        stats: &mut TcpStats,
        flow: u32,
        seq: u32,
        now: SimTime,
        cutter: &Cutter,
        how: Resend,
    ) -> Packet {
        let forward = how == Resend::Forward;
        c.data_sent(now);
        c.rate_skb_sent(now, seq);
        let delivered = c.delivered;
        c.resent_end = c.resent_end.max(seq + 1);
        let s = c.seg_mut(seq);
        let was_lost = s.marks & LOST != 0;
        s.sent = now;
        s.delivered = delivered;
        if was_lost || forward {
            // `tcp_retransmit_skb`: `TCPCB_RETRANS`, counted in `retrans_out` and `undo_retrans`,
            // and the first retransmission's time kept.
            s.marks = (s.marks | EVER_RETRANS | RETRANS_OUT) & !DSACKED;
            c.retrans_out += 1;
            let (fack_on, snd_nxt) = (c.fack_on, c.snd_nxt);
            let r = c.rp_mut();
            if fack_on {
                // One mark per segment, as the skb's one `ack_seq`: the latest retransmission's.
                r.retrans_at.retain(|&(q, _)| q != seq);
                r.retrans_at.push_back((seq, snd_nxt));
            }
            if r.undo_retrans < 0 {
                r.undo_retrans = 0;
            }
            r.undo_retrans += 1;
            r.retrans_stamp.get_or_insert(now);
        } else {
            // A probe of a segment not marked lost (`tcp_send_loss_probe` → `__tcp_retransmit_skb`,
            // not `tcp_retransmit_skb`): `TCPCB_EVER_RETRANS` at most, not in flight twice, no
            // undo count, no stamp.
            let mark = if how == (Resend::Probe { ever_retrans: false }) { PROBED } else { EVER_RETRANS };
            s.marks = (s.marks | mark) & !DSACKED;
        }
        stats.retransmits += 1;
        c.retransmits += 1;
        if matches!(c.state, CaState::Recovery | CaState::Cwr) {
            c.prr_out += 1; // (`if (tcp_in_cwnd_reduction(sk)) tp->prr_out += ...`)
        }
        let (bytes, psh) = c.segment_bytes(cutter, seq);
        let mut p = Packet { flags: if psh { Packet::PSH } else { 0 }, ..Packet::data(flow, seq, bytes, now) };
        c.pace_after_send(now, u64::from(p.bytes), 1);
        p.flags |= Packet::RETRANSMIT;
        p.ts_ecr = c.ts_recent;
        p
    }

    pub(super) fn send_new(&mut self, flow: u32, now: SimTime) -> Packet {
        let c = self.conns[flow as usize].as_mut().expect("open");
        c.data_sent(now);
        let seq = c.snd_nxt;
        let (bytes, psh) = match c.stream.as_mut() {
            Some(st) => st.cut(self.config.mss),
            None => c.segment_bytes(&self.cutter, seq),
        };
        c.rate_skb_sent(now, seq);
        c.snd_nxt += 1;
        c.segs.push_back(Seg { sent: now, delivered: c.delivered, marks: 0 });
        if matches!(c.state, CaState::Recovery | CaState::Cwr) {
            c.prr_out += 1; // (`if (tcp_in_cwnd_reduction(sk)) tp->prr_out += ...`)
        }
        self.stats.segments_sent += 1;
        let mut p = Packet { flags: if psh { Packet::PSH } else { 0 }, ..Packet::data(flow, seq, bytes, now) };
        p.ts_ecr = c.ts_recent;
        p
    }
}

/// What one send changed that the host's refusal of it takes back: `__tcp_transmit_skb` returns
/// `NET_XMIT_DROP` (a qdisc of the host, or a bonded slave's, dropped the skb: `dev_queue_xmit`'s
/// verdict comes back through `bond_dev_queue_xmit`), and Linux (6.x, `tcp_output.c`) then
/// skips what follows a successful transmit: for new data `tcp_event_new_data_sent` (snd_nxt,
/// the retransmission queue, `packets_out`) and `tcp_minshall_update`; for a retransmission
/// `tcp_retransmit_skb`'s marks and counts (`TCPCB_RETRANS`, `retrans_out`, `total_retrans`,
/// `retrans_stamp`, `undo_retrans`); for both `tcp_update_skb_after_send` (the pacing step) and
/// `tcp_rate_skb_sent`. What runs before the transmit stays: `tcp_event_data_sent`,
/// `data_segs_out`, `tcp_wstamp_ns` brought up to the clock. Plain data, written at every send
/// (a retransmission's larger part is [`Resent`], written at retransmissions only).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct SendRecord {
    kind: SentKind,
    seq: u32,
    snd_sml: u32,
    prr_out: u32,
    /// The pacing clock as the transmit left it (when `paced_here`; else a buffer's later
    /// segment, paced with its first).
    wstamp: SimTime,
    paced_here: bool,
}

/// What the last send of `tcp_write_xmit` / `tcp_xmit_retransmit_queue` was.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) enum SentKind {
    /// None to take back (a timer's send, or none yet).
    #[default]
    None,
    New,
    Resend,
}

/// A retransmission's segment, rate stamp and the counts it moved, before it.
#[derive(Debug, Clone)]
pub(super) struct Resent {
    seg: Seg,
    stamp: Option<TxStamp>,
    retrans_out: u32,
    undo_retrans: i64,
    retrans_stamp: Option<SimTime>,
    /// `retrans_at` (kept only with FACK, Linux before 4.11).
    retrans_at: Option<VecDeque<(u32, u32)>>,
}

impl SendRecord {
    /// Before new data (segment `snd_nxt`) goes; `wstamp`: the pacing clock brought up to now,
    /// for a connection that paces (else left as it was: nothing to restore).
    #[inline(always)]
    pub(super) fn record_new_data(c: &mut Conn, wstamp: Option<SimTime>) {
        let r = &mut c.last_send;
        r.kind = SentKind::New;
        r.seq = c.snd_nxt;
        r.snd_sml = c.snd_sml;
        r.prr_out = c.prr_out;
        r.paced_here = c.paced && wstamp.is_some();
        if r.paced_here {
            r.wstamp = wstamp.unwrap_or_default();
        }
    }
}

impl Conn {
    /// Records segment `seq`'s retransmission, before it goes ([`SendRecord`], [`Resent`]).
    pub(super) fn record_resend(&mut self, seq: u32, now: SimTime) {
        let resent = Resent {
            seg: *self.seg(seq),
            stamp: self.rates.as_ref().and_then(|r| r.tx_stamps.get((seq - self.snd_una) as usize).copied()),
            retrans_out: self.retrans_out,
            undo_retrans: self.rp().undo_retrans,
            retrans_stamp: self.rp().retrans_stamp,
            retrans_at: self.fack_on.then(|| self.rp().retrans_at.clone()),
        };
        match &mut self.resent {
            Some(kept) => **kept = resent,
            None => self.resent = Some(Box::new(resent)),
        }
        self.last_send = SendRecord {
            kind: SentKind::Resend,
            seq,
            snd_sml: self.snd_sml,
            prr_out: self.prr_out,
            wstamp: self.wstamp().max(now),
            paced_here: true,
        };
    }
}

impl TcpSender {
    /// The host's own queue refused `packet`, the send just polled ([`SendRecord`]): it is taken
    /// back as if never sent, the connection enters CWR (`tcp_enter_cwr`, from
    /// `__tcp_transmit_skb`) and sends nothing more until an ACK or a timer. With nothing left
    /// in flight the zero-window probe timer would restart it (`tcp_check_probe_timer`, at
    /// `tcp_probe0_base`: the RTO, at least 200 ms): armed here as the retransmission timer,
    /// whose firing calls it again. False when it is not the last send of `tcp_write_xmit` /
    /// `tcp_xmit_retransmit_queue` (a timer's retransmission or probe): then it is lost.
    pub(super) fn take_back(&mut self, now: SimTime, packet: &Packet, out: &mut Vec<Output>) -> bool {
        let Some(c) = self.conns[packet.flow as usize].as_mut() else { return false };
        let r = std::mem::take(&mut c.last_send);
        let kind = if packet.retransmit() { SentKind::Resend } else { SentKind::New };
        if r.kind != kind || r.seq != packet.seq {
            return false;
        }
        match kind {
            SentKind::New => {
                debug_assert_eq!(r.seq + 1, c.snd_nxt, "new data is the last sent");
                c.snd_nxt -= 1;
                c.segs.pop_back();
                if let Some(st) = c.stream.as_mut() {
                    st.uncut();
                }
                if let Some(rates) = c.rates.as_mut() {
                    rates.tx_stamps.truncate((r.seq - c.snd_una) as usize);
                }
                c.burst_left = 0;
                self.stats.segments_sent -= 1;
            }
            _ => {
                let back = c.resent.take().expect("recorded with the resend");
                *c.seg_mut(r.seq) = back.seg;
                if let Some(stamp) = back.stamp {
                    c.rates.as_mut().expect("a stamp was kept").tx_stamps[(r.seq - c.snd_una) as usize] = stamp;
                }
                c.retrans_out = back.retrans_out;
                let rp = c.rp_mut();
                (rp.undo_retrans, rp.retrans_stamp) = (back.undo_retrans, back.retrans_stamp);
                if let Some(at) = back.retrans_at {
                    rp.retrans_at = at;
                }
                c.retrans_hint = c.retrans_hint.min(r.seq);
                c.fwd_hint = c.fwd_hint.min(r.seq);
                self.stats.retransmits -= 1;
                c.retransmits -= 1;
            }
        }
        c.snd_sml = r.snd_sml;
        c.prr_out = r.prr_out;
        if let Some(p) = c.pacing.as_mut().filter(|_| r.paced_here) {
            p.wstamp = r.wstamp;
        }
        c.enter_cwr(&self.config);
        c.xmit_failed = true;
        self.stats.xmit_drops += 1;
        if c.packets_out() == 0 {
            let at = now + c.backed_off_rto(&self.config).max(self.config.rto_min);
            Self::arm(c, packet.flow, TimerKind::Rto, at, out);
        }
        true
    }
}
