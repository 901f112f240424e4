//! One connection's state (Linux's `struct tcp_sock`, include/linux/tcp.h, and the fields of
//! `inet_connection_sock` it uses), the segments it has out, and the counters every mechanism
//! reads (`tcp_packets_in_flight`, `tcp_cwnd_validate` / `tcp_is_cwnd_limited` of
//! net/ipv4/tcp_output.c and include/net/tcp.h).

use super::*;

/// One sent, unacknowledged segment.
#[derive(Debug, Clone, Copy)]
pub(super) struct Seg {
    /// Its latest transmission (`skb_mstamp`).
    pub(super) sent: SimTime,
    /// The connection's delivered count at that transmission (`tx.delivered`, tcp_rate.c
    /// `tcp_rate_skb_sent`).
    pub(super) delivered: u32,
    pub(super) marks: u8,
}

/// One connection.
#[derive(Debug)]
pub(super) struct Conn {
    pub(super) file_bytes: u64,
    /// Segments of the file.
    pub(super) total: u32,
    /// Segments the application has written so far (`write_seq`): `total` for a
    /// file written at once, less while a ping-pong waits for the peer's token; for a stream of
    /// messages, `snd_nxt` and the segments its unsent bytes make.
    pub(super) written: u32,
    /// A stream of messages' send queue ([`Stream`]); none for a file, cut by the [`Cutter`].
    pub(super) stream: Option<Box<Stream>>,
    /// One past the last sub-MSS segment sent (`snd_sml`, `tcp_minshall_update`).
    pub(super) snd_sml: u32,
    pub(super) snd_una: u32,
    pub(super) snd_nxt: u32,
    /// `[snd_una, snd_nxt)`.
    pub(super) segs: VecDeque<Seg>,
    /// One past the highest segment sent again ([`TcpSender::retransmit`] moved its `sent`); at
    /// or below `snd_una`, every segment out was sent once, in sequence order, so their send
    /// times never decrease along `segs` ([`Conn::rack_detect_loss`] relies on it).
    pub(super) resent_end: u32,
    pub(super) sacked_out: u32,
    pub(super) lost_out: u32,
    pub(super) retrans_out: u32,
    /// One past the highest SACKed segment (`tcp_highest_sack_seq`, "fack").
    pub(super) fack: u32,
    /// Lost segments below this were all retransmitted (`retransmit_skb_hint`).
    pub(super) retrans_hint: u32,
    pub(super) w: Window,
    pub(super) cc: Box<dyn CongestionControl>,
    pub(super) state: CaState,
    pub(super) high_seq: u32,
    pub(super) prr_out: u32,
    pub(super) reordering: u32,
    pub(super) reord_seen: u32,
    /// FACK loss detection still on (`tcp_is_fack`): configured, and no reordering seen.
    pub(super) fack_on: bool,
    /// Early retransmit still on (`tp->do_early_retrans`): configured, and no reordering seen.
    pub(super) do_early_retrans: bool,
    /// Below this, no segment is a forward retransmission's to send (each is SACKed or sent
    /// again already); back to snd_una when recovery starts.
    pub(super) fwd_hint: u32,
    /// `tcp_rtt_estimator`'s state in Linux's fixed point (µs): `srtt_us` is 8 × SRTT (0 before
    /// the first sample), `mdev_us` 4 × the mean deviation, `mdev_max_us` its largest value in
    /// the current round trip (at least `tcp_rto_min`), `rttvar_us` the variance term of the RTO,
    /// and `rtt_seq` the snd_nxt that ends the round trip.
    pub(super) srtt_us: u64,
    pub(super) mdev_us: u64,
    pub(super) mdev_max_us: u64,
    pub(super) rttvar_us: u64,
    pub(super) rtt_seq: u32,
    pub(super) rto: SimTime,
    pub(super) backoff: u32,
    /// Timeouts since snd_una last moved (`icsk_retransmits`).
    pub(super) timeouts: u32,
    /// The last ACK came with the peer's data (`snd_wl1` is that segment's start): the peer's next
    /// pure ACK, sent after it, has a later sequence number, so it updates the window
    /// (`tcp_may_update_window`'s `after(ack_seq, tp->snd_wl1)`).
    pub(super) after_peer_data: bool,
    pub(super) min_rtt: Option<SimTime>,
    pub(super) rack: Rack,
    /// Highest segment of a tail loss probe still unanswered (`tlp_high_seq`) and
    /// whether the probe was a retransmission (`tlp_retrans`).
    pub(super) tlp_high_seq: Option<u32>,
    pub(super) tlp_retrans: bool,
    pub(super) timer: Timer,
    pub(super) timer_kind: TimerKind,
    /// The last SACK blocks processed (Linux's `recv_sack_cache`).
    pub(super) sack_cache: [(u32, u32); 3],
    /// Segments of the current offload buffer still to hand over.
    pub(super) burst_left: u32,
    /// `tcp_cwnd_validate`'s record of the window in use: whether a send found the window full
    /// (`is_cwnd_limited`), else the most segments out (`max_packets_out`), kept until snd_una
    /// passes `cwnd_usage_seq` (the snd_nxt of when it was taken: one window).
    pub(super) is_cwnd_limited: bool,
    pub(super) max_packets_out: u32,
    pub(super) cwnd_usage_seq: u32,
    /// Bytes of its buffers below TCP: queued on or being sent by a link (`sk_wmem_alloc`).
    pub(super) wmem: u64,
    /// One past the last segment the receiver's window allows (`snd_una + snd_wnd`).
    pub(super) wnd_end: u32,
    /// The window the receiver last advertised, segments (`snd_wnd`).
    pub(super) snd_wnd: u32,
    /// `TS.Recent`: the receiver's latest timestamp, echoed in data (RFC 7323 §4.3).
    pub(super) ts_recent: u32,
    /// F-RTO is judging the latest timeout (`tp->frto`), and asks for new data now.
    pub(super) frto: bool,
    pub(super) frto_new_data: bool,
    /// TCP small queues held it back (`TSQ_THROTTLED`): a TX completion wakes it.
    pub(super) throttled: bool,
    /// The timestamp option's clock (`TcpConfig::ts`).
    pub(super) ts: TsTicks,
    /// The host's own queue refused its last send (`NET_XMIT_DROP`): `tcp_write_xmit` broke off,
    /// and it sends nothing more until an ACK or a timer calls it again.
    pub(super) xmit_failed: bool,
    /// What its last send from `tcp_write_xmit` / `tcp_xmit_retransmit_queue` changed, to take
    /// it back if the host's queue refuses it ([`TcpSender::take_back`]).
    pub(super) last_send: SendRecord,
    /// The last retransmission's record ([`Resent`]), kept for the next.
    pub(super) resent: Option<Box<Resent>>,
    /// Segments it retransmitted (`tp->total_retrans`).
    pub(super) retransmits: u32,
    /// Segments the receiver reported duplicated (`tp->dsack_dups`).
    pub(super) dsack_dups: u32,
    /// Segments delivered, ACKed or SACKed, each once (`tp->delivered`).
    pub(super) delivered: u32,
    /// The state of the repairs (undo, PRR, FACK's retransmissions, the retransmissions ACKed
    /// before a D-SACK): none until the first is needed ([`Repair`]).
    pub(super) repair: Option<Box<Repair>>,
    /// Delivery-rate sampling's state ([`Rates`]): only for a control that reads rate samples.
    pub(super) rates: Option<Box<Rates>>,
    /// The control reads rate samples (`CongestionControl::has_cong_control`): the sender takes
    /// them (set as the connection is established; `rates` is there from the start).
    pub(super) sampling: bool,
    /// The pacing clock ([`Pacing`]): only for a control that asks for pacing.
    pub(super) pacing: Option<Box<Pacing>>,
    /// The control asked for pacing (`sk_pacing_status == SK_PACING_NEEDED`; set as the
    /// connection is established; `pacing` is there from the start).
    pub(super) paced: bool,
    /// The handshake, until its last ACK arrives ([`Handshake`]); none after (and for a stream,
    /// which opens established).
    pub(super) handshake: Option<Handshake>,
    pub(super) done: bool,
}

/// Delivery-rate sampling's state (tcp_rate.c): the send interval's start (`first_tx_mstamp`),
/// when `delivered` last grew (`delivered_mstamp`), the delivered count that ends an
/// application-limited stretch (`app_limited`, 0: none), the latest rate (`rate_delivered`
/// segments over `rate_interval`, `rate_app_limited`), and each segment's rate stamps beside
/// `Conn::segs` (same index). Boxed in [`Conn::rates`] for a control that reads rate samples
/// (`CongestionControl::has_cong_control`: BBR) and absent for the others, which never read it:
/// a connection of theirs weighs 8 bytes of it instead of 72 (issue 40).
#[derive(Debug, Default)]
pub(super) struct Rates {
    pub(super) first_tx_mstamp: SimTime,
    pub(super) delivered_mstamp: SimTime,
    pub(super) app_limited: u32,
    pub(super) rate_delivered: u32,
    pub(super) rate_interval: SimTime,
    pub(super) rate_app_limited: bool,
    pub(super) tx_stamps: VecDeque<TxStamp>,
}

/// What a connection keeps only once something went wrong, boxed in [`Conn::repair`] at the
/// first write (a retransmission, a window reduction, a segment ACKed after being sent twice); until
/// then, all the life of most flows on a clean path, each reads as its initial value
/// ([`Repair::NONE`], through [`Conn::rp`]): 8 bytes a connection instead of 112 (issue 40).
/// The undo state of the latest reduction: `undo_marker` (the snd_una it began at) and
/// `undo_retrans` (retransmissions not yet D-SACKed as needless, -1: none counted); the send time
/// of the first retransmission not yet forgotten (`retrans_stamp`: set by `tcp_retransmit_skb`
/// when unset, never by a loss probe, cleared only where Linux clears it: `tcp_try_to_open` and
/// `tcp_try_undo_partial` once no retransmission is done or out, today's `tcp_enter_recovery` too,
/// `tcp_retrans_stamp_cleanup`, not by a new episode's undo state); the window and threshold to
/// restore (`prior_cwnd`, `prior_ssthresh`); PRR's count (`prr_delivered`). With FACK (Linux
/// before 4.11) the retransmissions in flight, each with `snd_nxt` when it left (the kernel keeps
/// it in the skb's `ack_seq`, `__tcp_retransmit_skb`), for [`Conn::mark_lost_retrans`]. The
/// retransmitted segments cumulatively ACKed before a D-SACK said their retransmission was
/// needless, in sequence order (`retx_acked`, for the spurious count only: Linux keeps nothing of
/// ACKed data).
#[derive(Debug, Clone)]
pub(super) struct Repair {
    pub(super) undo_marker: Option<u32>,
    pub(super) undo_retrans: i64,
    pub(super) retrans_stamp: Option<SimTime>,
    pub(super) prior_cwnd: u32,
    pub(super) prior_ssthresh: u32,
    pub(super) prr_delivered: u32,
    pub(super) retrans_at: VecDeque<(u32, u32)>,
    pub(super) retx_acked: VecDeque<u32>,
}

impl Repair {
    /// A connection's state before any repair.
    pub(super) const NONE: Repair = Repair {
        undo_marker: None,
        undo_retrans: -1,
        retrans_stamp: None,
        prior_cwnd: 0,
        prior_ssthresh: 0,
        prr_delivered: 0,
        retrans_at: VecDeque::new(),
        retx_acked: VecDeque::new(),
    };
}

/// What [`Conn::rp`] reads while a connection has no box.
static NO_REPAIR: Repair = Repair::NONE;

/// A paced connection's clock: each buffer leaves no earlier than `wstamp` (`tcp_wstamp_ns`, its
/// earliest departure time), the first 10 segments unpaced (`data_segs_out`); `timer` is the
/// pacing hrtimer. Boxed in [`Conn::pacing`] for a control that asks for pacing
/// (`CongestionControl::needs_pacing`: BBR), absent for the others (issue 40: a flow's weight).
#[derive(Debug, Default)]
pub(super) struct Pacing {
    pub(super) wstamp: SimTime,
    pub(super) data_segs_out: u32,
    pub(super) timer: Timer,
}

// A connection's weight (issue 40: at most 1 KB a flow, with the receiver's and the delivery
// metrics'): what is added here costs every flow of a run with 100,000 of them.
const _: () = assert!(std::mem::size_of::<Conn>() <= 560);

impl Conn {
    /// The repairs' state, to read ([`Repair::NONE`] while there is none).
    #[inline]
    pub(super) fn rp(&self) -> &Repair {
        self.repair.as_deref().unwrap_or(&NO_REPAIR)
    }

    /// The repairs' state, to write: boxed at the first write.
    #[inline]
    pub(super) fn rp_mut(&mut self) -> &mut Repair {
        self.repair.get_or_insert_with(|| Box::new(Repair::NONE))
    }

    /// `tcp_wstamp_ns` (zero for a connection that does not pace: nothing reads it).
    pub(super) fn wstamp(&self) -> SimTime {
        self.pacing.as_ref().map_or(SimTime::ZERO, |p| p.wstamp)
    }

    pub(super) fn seg(&self, seq: u32) -> &Seg {
        &self.segs[(seq - self.snd_una) as usize]
    }

    pub(super) fn seg_mut(&mut self, seq: u32) -> &mut Seg {
        &mut self.segs[(seq - self.snd_una) as usize]
    }

    pub(super) fn packets_out(&self) -> u32 {
        self.snd_nxt - self.snd_una
    }

    /// `tcp_packets_in_flight`: `packets_out - (sacked_out + lost_out) + retrans_out`.
    pub(super) fn in_flight(&self) -> u32 {
        (self.packets_out() + self.retrans_out).saturating_sub(self.sacked_out + self.lost_out)
    }

    /// `tcp_cwnd_validate`, after a send (or a send the window held back, `limited`): a window
    /// found full is remembered for the rest of the window, else the most segments out.
    pub(super) fn cwnd_validate(&mut self, limited: bool) {
        if self.snd_una >= self.cwnd_usage_seq
            || limited
            || (!self.is_cwnd_limited && self.packets_out() > self.max_packets_out)
        {
            self.is_cwnd_limited = limited;
            self.max_packets_out = self.packets_out();
            self.cwnd_usage_seq = self.snd_nxt;
        }
    }

    /// `tcp_is_cwnd_limited`: the window was full in the current window of data, or, in slow
    /// start, less than twice the most segments out ("ensure cwnd grows to twice what was ACKed").
    pub(super) fn is_cwnd_limited(&self) -> bool {
        self.is_cwnd_limited || (self.w.in_slow_start() && self.w.cwnd < 2 * self.max_packets_out)
    }

    /// `tcp_current_ssthresh`: at least 3/4 of the window.
    pub(super) fn current_ssthresh(&self) -> u32 {
        self.w.ssthresh.max((self.w.cwnd >> 1) + (self.w.cwnd >> 2))
    }

    pub(super) fn set_state(&mut self, state: CaState) {
        self.cc.set_state(&self.w, state);
        self.state = state;
    }
}

impl TcpSender {
    pub(super) fn new_conn(&self, flow: u32, file_bytes: u64, now: SimTime) -> Conn {
        let cc = self.congestion_control(flow);
        let (rates, pacing) = (cc.has_cong_control().then(Box::default), cc.needs_pacing().then(Box::default));
        let w = Window { cwnd: self.config.initial_cwnd, now, lsndtime: now, ..Window::new(0, u32::MAX) };
        let total = self.cutter.packets(file_bytes) as u32;
        let stream = match (self.cutter.coalesces(), self.cutter.message_bytes()) {
            (true, Some(message)) => Some(Box::new(Stream::new(message))),
            _ => None,
        };
        Conn {
            file_bytes,
            total,
            written: if stream.is_some() { 0 } else { total },
            stream,
            snd_sml: 0,
            snd_una: 0,
            snd_nxt: 0,
            segs: VecDeque::new(),
            resent_end: 0,
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            fack: 0,
            retrans_hint: 0,
            w,
            cc,
            state: CaState::Open,
            high_seq: 0,
            prr_out: 0,
            reordering: self.config.reordering,
            reord_seen: 0,
            fack_on: self.config.fack,
            do_early_retrans: self.config.early_retransmit.is_some(),
            fwd_hint: 0,
            srtt_us: 0,
            mdev_us: 0,
            mdev_max_us: 0,
            rttvar_us: 0,
            rtt_seq: 0,
            // RFC 6298 §2.1 / Linux `TCP_TIMEOUT_INIT`: 1 s before any RTT sample.
            rto: TCP_TIMEOUT_INIT,
            backoff: 0,
            timeouts: 0,
            after_peer_data: false,
            min_rtt: None,
            rack: Rack { reo_wnd_steps: 1, ..Rack::default() },
            tlp_high_seq: None,
            tlp_retrans: false,
            timer: Timer::default(),
            timer_kind: TimerKind::Rto,
            sack_cache: [(0, 0); 3],
            burst_left: 0,
            is_cwnd_limited: false,
            max_packets_out: 0,
            cwnd_usage_seq: 0,
            wmem: 0,
            // The SYN-ACK's window.
            wnd_end: (self.config.rwnd_initial / u64::from(self.config.mss)) as u32,
            snd_wnd: (self.config.rwnd_initial / u64::from(self.config.mss)) as u32,
            throttled: false,
            ts: self.config.ts,
            xmit_failed: false,
            last_send: SendRecord::default(),
            resent: None,
            ts_recent: 0,
            frto: false,
            frto_new_data: false,
            retransmits: 0,
            dsack_dups: 0,
            delivered: 0,
            repair: None,
            rates,
            sampling: false,
            pacing,
            paced: false,
            handshake: None,
            done: false,
        }
    }
}
