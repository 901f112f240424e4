//! The TCP sender (the server's end): a SACK scoreboard, RACK-TLP loss
//! detection, fast recovery with Proportional Rate Reduction, the
//! retransmission timer with backoff, undo of needless reductions, and the
//! reordering degree, after Linux's `net/ipv4/tcp_input.c`,
//! `tcp_recovery.c`, `tcp_timer.c` and `tcp_output.c`. Each rule names the
//! function it follows.
//!
//! The application either writes a whole file at once (`open`), or writes it a
//! message at a time ([`TcpSender::write`], a `pingpong` token): sub-MSS segments
//! are then held by Nagle's algorithm unless `TCP_NODELAY` (`tcp_nagle_test`).
//! A message's last segment is cut at the message's end; Linux would coalesce it
//! with a later write if the application wrote again before it left (never in a
//! ping-pong, where the next write waits for the peer's answer).
//!
//! Not modelled (yet): the handshake: Linux's server takes an RTT sample from its SYN-ACK
//! (`tcp_synack_rtt_meas`) before any data, while here a connection starts
//! without SRTT or min_rtt, so a first flight lost whole waits for the 1 s
//! `TCP_TIMEOUT_INIT` (no loss probe without SRTT), where Linux would probe.

use std::collections::VecDeque;

use super::cc::{self, AckSample, CaEvent, CaState, CongestionControl, Window};
use super::{timer_token, Fired, TcpConfig, TcpStats, TcpTrace, Timer, TRACE_MAX_ROWS};
use crate::packet::{Kind, Packet};
use crate::scenario::{SmallQueues, UndoEra};
use crate::time::SimTime;
use crate::transport::{Cutter, Endpoint, Output};

/// Scoreboard marks (Linux's `TCPCB_*` sacked bits).
const SACKED: u8 = 1; // TCPCB_SACKED_ACKED
const LOST: u8 = 2; // TCPCB_LOST
const EVER_RETRANS: u8 = 4; // TCPCB_EVER_RETRANS / TCPCB_RETRANS
const RETRANS_OUT: u8 = 8; // TCPCB_SACKED_RETRANS: a retransmission is in flight
/// The model's own bookkeeping, no Linux bit: a D-SACK already counted its latest
/// retransmission spurious (`TcpStats::spurious_retransmits`).
const DSACKED: u8 = 16;
/// The model's own bookkeeping, no Linux bit: sent again as a loss probe that the kernel left
/// unmarked (3.10-3.13). Counts only in the model's tally of needless retransmissions.
const PROBED: u8 = 32;

/// Why a segment is sent again ([`TcpSender::retransmit`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Resend {
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
fn truesize(mss: u32, segments: u32) -> u64 {
    u64::from(mss) * u64::from(segments) + 896
}

/// The memory one packet of a buffer accounts for: its payload, and the buffer's
/// overhead on its first (or only) packet.
fn packet_truesize(p: &Packet) -> u64 {
    u64::from(p.bytes) + if p.gso == 1 { 0 } else { 896 }
}

/// `tcp_model_timeout(sk, boundary, TCP_RTO_MIN)` (net/ipv4/tcp_timer.c): how long `boundary`
/// timeouts take when the first fires after `TCP_RTO_MIN` (200 ms, whatever this connection's
/// RTO) and each doubles it up to `rto_max`. `retransmits_timed_out` gives a connection up once
/// that long has passed since its first retransmission: 924.6 s for `tcp_retries2` = 15 and 120 s.
fn model_timeout(boundary: u32, rto_max: SimTime) -> SimTime {
    const TCP_RTO_MIN: u64 = 200_000_000;
    let linear_backoff_thresh = (rto_max.0 / TCP_RTO_MIN).max(1).ilog2();
    SimTime(if boundary <= linear_backoff_thresh {
        ((2u64 << boundary) - 1) * TCP_RTO_MIN
    } else {
        (((2u64 << linear_backoff_thresh) - 1) * TCP_RTO_MIN)
            .saturating_add(u64::from(boundary - linear_backoff_thresh).saturating_mul(rto_max.0))
    })
}

/// A destination's entry in Linux's TCP metrics cache (net/ipv4/tcp_metrics.c, keyed by the
/// destination's address): what the connections that closed leave the next ones. Its RTT and
/// RTT variance seed only a connection's first RTO after the handshake, which the model does not
/// have, and its cwnd only clamps a locked route: neither is kept.
#[derive(Debug, Clone, Copy, Default)]
struct Metrics {
    /// `TCP_METRIC_SSTHRESH` (0: none).
    ssthresh: u32,
    /// `TCP_METRIC_REORDERING` (0: none).
    reordering: u32,
    /// `tcpm_stamp`: the last update.
    stamp: SimTime,
}

/// `TCP_METRICS_TIMEOUT`: an entry not updated for an hour is reset (`tcpm_check_stamp`).
const TCP_METRICS_TIMEOUT: SimTime = SimTime(3_600_000_000_000);

/// `TCP_INFINITE_SSTHRESH`: a threshold at or above it has never been set (initial slow start).
const TCP_INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

impl Metrics {
    /// The entry as `tcp_get_metrics` finds it at `now`: reset to the route's (none) when stale.
    fn fresh(&mut self, now: SimTime) -> &mut Metrics {
        if now.saturating_sub(self.stamp) > TCP_METRICS_TIMEOUT {
            *self = Metrics { stamp: now, ..Metrics::default() };
        }
        self
    }

    /// `tcp_init_metrics`: a new connection starts from the cached threshold (when kept) and
    /// reordering degree; 3.x also turned FACK and early retransmit off for it, as for
    /// reordering seen (`tcp_disable_fack`, `tcp_disable_early_retrans`).
    fn init(&mut self, config: &TcpConfig, c: &mut Conn, now: SimTime) {
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
    fn update(&mut self, config: &TcpConfig, c: &Conn, now: SimTime) {
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

/// Recoveries RACK's widened window lasts without a new D-SACK (`TCP_RACK_RECOVERY_THRESH`).
const RACK_RECOVERY_THRESH: u32 = 16;

/// `tcp_rack_mark_lost` arms the reordering timer `TCP_TIMEOUT_MIN_US` (2 ms) late.
const REO_SLACK: SimTime = SimTime(2_000_000);
/// `TCP_DELACK_MAX` (include/net/tcp.h: `HZ / 5`), the longest a receiver delays an ACK.
const DELACK_MAX: SimTime = SimTime(200_000_000);

/// One sent, unacknowledged segment.
#[derive(Debug, Clone, Copy)]
struct Seg {
    /// Its latest transmission (`skb_mstamp`).
    sent: SimTime,
    /// The connection's delivered count at that transmission (`tx.delivered`, tcp_rate.c
    /// `tcp_rate_skb_sent`).
    delivered: u32,
    marks: u8,
}

/// What the connection's one retransmission timer is armed for (Linux
/// multiplexes them on `icsk_retransmit_timer` by `icsk_pending`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TimerKind {
    Rto,
    LossProbe,
    ReoTimeout,
    /// Delayed early retransmit (`ICSK_TIME_EARLY_RETRANS`, Linux 3.5 to 4.10).
    EarlyRetrans,
}

/// What `tcp_time_to_recover`'s rules after its first two (which the scoreboard's marking
/// covers: a segment marked lost, or the duplicate ACKs above the reordering degree) decide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EarlyRecovery {
    /// Not yet.
    No,
    /// Now (NCR, or early retransmit with no delay).
    Now,
    /// Early retransmit, after this delay (`tcp_pause_early_retransmit`).
    After(SimTime),
}

/// RACK state (RFC 8985 §6.1; Linux `tp->rack`).
#[derive(Debug, Clone, Copy, Default)]
struct Rack {
    /// Send time and end of the most recently sent segment delivered so far.
    mstamp: SimTime,
    end_seq: u32,
    /// Its RTT.
    rtt: SimTime,
    /// The reordering window in units of min_rtt/4 (`reo_wnd_steps`), raised on D-SACK.
    reo_wnd_steps: u32,
    /// Recoveries left before the window falls back to one step (`reo_wnd_persist`).
    reo_wnd_persist: u32,
    /// A D-SACK arrived since the window was last adjusted (`dsack_seen`).
    dsack_seen: bool,
    /// The delivered count when the window was last widened (`last_delivered`): D-SACKs
    /// for data sent before then are the previous window's, not this one's.
    last_delivered: u32,
    /// `rack.advanced`: a newer delivery was seen since loss detection last ran.
    advanced: bool,
}

/// One connection.
#[derive(Debug)]
struct Conn {
    file_bytes: u64,
    /// Segments of the file.
    total: u32,
    /// Segments the application has written so far (`write_seq`): `total` for a
    /// file written at once, less while a ping-pong waits for the peer's token.
    written: u32,
    /// One past the last sub-MSS segment sent (`snd_sml`, `tcp_minshall_update`).
    snd_sml: u32,
    snd_una: u32,
    snd_nxt: u32,
    /// `[snd_una, snd_nxt)`.
    segs: VecDeque<Seg>,
    sacked_out: u32,
    lost_out: u32,
    retrans_out: u32,
    /// One past the highest SACKed segment (`tcp_highest_sack_seq`, "fack").
    fack: u32,
    /// Lost segments below this were all retransmitted (`retransmit_skb_hint`).
    retrans_hint: u32,
    w: Window,
    cc: Box<dyn CongestionControl>,
    state: CaState,
    high_seq: u32,
    prior_cwnd: u32,
    prior_ssthresh: u32,
    prr_delivered: u32,
    prr_out: u32,
    /// `undo_marker` (0 = none; segment numbers are stored plus one) and `undo_retrans`.
    undo_marker: Option<u32>,
    undo_retrans: i64,
    /// Send time of the first retransmission not yet forgotten (`retrans_stamp`): set by
    /// `tcp_retransmit_skb` when unset (never by a loss probe), cleared only where Linux clears it
    /// (`tcp_try_to_open` and `tcp_try_undo_partial` once no retransmission is done or out; today's
    /// `tcp_enter_recovery` too, `tcp_retrans_stamp_cleanup`), not by a new episode's undo state.
    retrans_stamp: Option<SimTime>,
    reordering: u32,
    reord_seen: u32,
    /// FACK loss detection still on (`tcp_is_fack`): configured, and no reordering seen.
    fack_on: bool,
    /// Early retransmit still on (`tp->do_early_retrans`): configured, and no reordering seen.
    do_early_retrans: bool,
    /// Below this, no segment is a forward retransmission's to send (each is SACKed or sent
    /// again already); back to snd_una when recovery starts.
    fwd_hint: u32,
    /// With FACK: retransmissions in flight, each with `snd_nxt` when it left (the kernel keeps
    /// it in the skb's `ack_seq`, `__tcp_retransmit_skb`), for [`Conn::mark_lost_retrans`].
    retrans_at: VecDeque<(u32, u32)>,
    /// `tcp_rtt_estimator`'s state in Linux's fixed point (µs): `srtt_us` is 8 × SRTT (0 before
    /// the first sample), `mdev_us` 4 × the mean deviation, `mdev_max_us` its largest value in
    /// the current round trip (at least `tcp_rto_min`), `rttvar_us` the variance term of the RTO,
    /// and `rtt_seq` the snd_nxt that ends the round trip.
    srtt_us: u64,
    mdev_us: u64,
    mdev_max_us: u64,
    rttvar_us: u64,
    rtt_seq: u32,
    rto: SimTime,
    backoff: u32,
    /// Timeouts since snd_una last moved (`icsk_retransmits`).
    timeouts: u32,
    /// The last ACK came with the peer's data (`snd_wl1` is that segment's start): the peer's next
    /// pure ACK, sent after it, has a later sequence number, so it updates the window
    /// (`tcp_may_update_window`'s `after(ack_seq, tp->snd_wl1)`).
    after_peer_data: bool,
    min_rtt: Option<SimTime>,
    rack: Rack,
    /// Highest segment of a tail loss probe still unanswered (`tlp_high_seq`) and
    /// whether the probe was a retransmission (`tlp_retrans`).
    tlp_high_seq: Option<u32>,
    tlp_retrans: bool,
    timer: Timer,
    timer_kind: TimerKind,
    /// The last SACK blocks processed (Linux's `recv_sack_cache`).
    sack_cache: [(u32, u32); 3],
    /// Segments of the current offload buffer still to hand over.
    burst_left: u32,
    /// `tcp_cwnd_validate`'s record of the window in use: whether a send found the window full
    /// (`is_cwnd_limited`), else the most segments out (`max_packets_out`), kept until snd_una
    /// passes `cwnd_usage_seq` (the snd_nxt of when it was taken: one window).
    is_cwnd_limited: bool,
    max_packets_out: u32,
    cwnd_usage_seq: u32,
    /// Bytes of its buffers below TCP: queued on or being sent by a link (`sk_wmem_alloc`).
    wmem: u64,
    /// One past the last segment the receiver's window allows (`snd_una + snd_wnd`).
    wnd_end: u32,
    /// The window the receiver last advertised, segments (`snd_wnd`).
    snd_wnd: u32,
    /// `TS.Recent`: the receiver's latest timestamp, echoed in data (RFC 7323 §4.3).
    ts_recent: u32,
    /// F-RTO is judging the latest timeout (`tp->frto`), and asks for new data now.
    frto: bool,
    frto_new_data: bool,
    /// TCP small queues held it back (`TSQ_THROTTLED`): a TX completion wakes it.
    throttled: bool,
    /// Segments it retransmitted (`tp->total_retrans`).
    retransmits: u32,
    /// Segments the receiver reported duplicated (`tp->dsack_dups`).
    dsack_dups: u32,
    /// Segments delivered, ACKed or SACKed, each once (`tp->delivered`).
    delivered: u32,
    /// Retransmitted segments cumulatively ACKed before a D-SACK said their
    /// retransmission was needless, in sequence order (for the spurious count only:
    /// Linux keeps nothing of ACKed data).
    retx_acked: VecDeque<u32>,
    done: bool,
}

/// The sending end of every flow.
#[derive(Debug)]
pub struct TcpSender {
    config: TcpConfig,
    cutter: Cutter,
    conns: Vec<Option<Conn>>,
    /// Flows that may have something to send, in the order they got it.
    ready: VecDeque<u32>,
    /// Flows opened and not yet fully acknowledged.
    active: usize,
    /// Flows not yet opened.
    unopened: usize,
    /// Probes and retransmissions due now, sent before any new data.
    urgent: VecDeque<Packet>,
    stats: TcpStats,
    trace: TcpTrace,
    /// Each flow's client, which keys the TCP metrics: the destination of a download, and for an
    /// upload the host that sends it (each client keeps its own entry for the one server); a flow
    /// of its own when not given ([`TcpSender::with_destinations`]).
    destination: Vec<u32>,
    /// The TCP metrics cache: an entry per destination a connection closed to.
    metrics: std::collections::HashMap<u32, Metrics>,
}

/// The token of the trace's sampling timer (no flow has it).
const TRACE_TOKEN: u64 = u64::MAX;

fn rtt_of(now: SimTime, sent: SimTime) -> SimTime {
    SimTime(now.0.saturating_sub(sent.0))
}

impl Conn {
    fn seg(&self, seq: u32) -> &Seg {
        &self.segs[(seq - self.snd_una) as usize]
    }

    fn seg_mut(&mut self, seq: u32) -> &mut Seg {
        &mut self.segs[(seq - self.snd_una) as usize]
    }

    fn packets_out(&self) -> u32 {
        self.snd_nxt - self.snd_una
    }

    /// `tcp_cwnd_validate`, after a send (or a send the window held back, `limited`): a window
    /// found full is remembered for the rest of the window, else the most segments out.
    fn cwnd_validate(&mut self, limited: bool) {
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
    fn is_cwnd_limited(&self) -> bool {
        self.is_cwnd_limited || (self.w.in_slow_start() && self.w.cwnd < 2 * self.max_packets_out)
    }

    /// `tcp_packets_in_flight`: `packets_out - (sacked_out + lost_out) + retrans_out`.
    fn in_flight(&self) -> u32 {
        (self.packets_out() + self.retrans_out).saturating_sub(self.sacked_out + self.lost_out)
    }

    /// The smoothed RTT, once there is one (`srtt_us >> 3`, kept to the eighth of a µs).
    fn srtt(&self) -> Option<SimTime> {
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
    fn rtt_sample(&mut self, config: &TcpConfig, rtt: SimTime, ca_rtt: SimTime) {
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
        self.rto = SimTime(((self.srtt_us >> 3) + self.rttvar_us) * 1_000).min(config.rto_max);
        let ca_rtt = ca_rtt.max(SimTime(1_000));
        self.min_rtt = Some(self.min_rtt.map_or(ca_rtt, |m| m.min(ca_rtt)));
    }

    /// The RTO with its exponential backoff (`inet_csk_rto_backoff`).
    fn backed_off_rto(&self, config: &TcpConfig) -> SimTime {
        SimTime(self.rto.0.saturating_mul(1 << self.backoff.min(20))).min(config.rto_max)
    }

    /// `tcp_rack_reo_wnd` (`net/ipv4/tcp_recovery.c`).
    fn rack_reo_wnd(&self, config: &TcpConfig) -> SimTime {
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
    fn update_reo_wnd(&mut self, config: &TcpConfig, prior_delivered: u32) {
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
    fn rack_advance(&mut self, now: SimTime, seq: u32, sent: SimTime, marks: u8) {
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
    fn rack_detect_loss(&mut self, config: &TcpConfig, now: SimTime) -> (u32, Option<SimTime>) {
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
            // `tcp_rack_sent_after(rack.mstamp, skb time, rack.end_seq, skb end)`.
            let before_newest =
                s.sent < self.rack.mstamp || (s.sent == self.rack.mstamp && seq + 1 < self.rack.end_seq);
            if !before_newest {
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
            }
        }
        (newly_lost, wait)
    }

    /// Marks segment `seq` lost as the head-marking of dupthresh and FACK does (`tcp_skb_mark_lost`):
    /// a segment SACKed or already lost stays as it is, and a forward retransmission in flight
    /// stays in flight (`TCPCB_SACKED_RETRANS` kept).
    fn mark_head_lost(&mut self, seq: u32) -> bool {
        let s = self.seg_mut(seq);
        if s.marks & (SACKED | LOST) != 0 {
            return false;
        }
        if s.marks & RETRANS_OUT == 0 {
            self.mark_lost(seq);
        } else {
            s.marks |= LOST;
            self.lost_out += 1;
        }
        true
    }

    /// Marks segment `seq` lost (`tcp_mark_skb_lost`); a retransmission in flight is lost too.
    fn mark_lost(&mut self, seq: u32) {
        let s = self.seg_mut(seq);
        let marks = s.marks;
        if marks & LOST != 0 && marks & RETRANS_OUT == 0 {
            return;
        }
        s.marks = (marks | LOST) & !RETRANS_OUT;
        if marks & RETRANS_OUT != 0 {
            self.retrans_out -= 1;
        }
        if marks & LOST == 0 {
            self.lost_out += 1;
        }
        self.retrans_hint = self.retrans_hint.min(seq);
    }

    /// Without RACK: RFC 6675 §4 `IsLost` — a segment with `reordering` SACKed
    /// segments above it is lost (Linux `tcp_mark_head_lost` / `tcp_update_scoreboard`).
    /// `dupack`: the ACK is a duplicate (`is_dupack`: nothing moved forward, no data, no larger
    /// window, not an old ACK).
    /// In Loss the kernel marks nothing this way (`tcp_fastretrans_alert` returns after
    /// `tcp_process_loss`; without RACK `tcp_identify_packet_loss` does nothing either).
    fn dupthresh_detect_loss(&mut self, dupack: bool) -> u32 {
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

    /// A D-SACK of `[start, end)` arrived, before the ACK's cumulative part is taken
    /// (`tcp_check_dsack` → `tcp_dsack_seen`, and `tcp_sacktag_one`'s D-SACK
    /// accounting); true when it reports the segment of a tail loss probe (`FLAG_DSACK_TLP`).
    fn on_dsack(&mut self, start: u32, end: u32, stats: &mut TcpStats) -> bool {
        let n = end.saturating_sub(start);
        if n == 0 {
            return false;
        }
        // `tcp_dsack_seen`: a one-segment D-SACK ending at `tlp_high_seq` is the probe's.
        let tlp = n == 1 && self.tlp_high_seq == Some(end);
        self.dsack_dups += n;
        stats.dsacks_received += u64::from(n);
        stats.spurious_retransmits += u64::from(self.count_spurious(start, end));
        // `tcp_dsack_seen`: "Skip the DSACK if dup segs weren't retransmitted by sender"
        // (`dsack_dups > total_retrans`, TCPDSACKIgnoredDubious). A broadcast bond sends
        // every segment on every link, so its receiver reports (links − 1) duplicates of
        // each: past the first few, all its D-SACKs are dubious to Linux, and none widens
        // RACK's window or counts toward an undo.
        if self.dsack_dups > self.retransmits {
            return tlp;
        }
        // RACK widens its window on D-SACKs once reordering was seen, not for a probe's.
        if self.reord_seen > 0 && !tlp {
            self.rack.dsack_seen = true;
        }
        if let Some(marker) = self.undo_marker.filter(|_| self.undo_retrans > 0) {
            let needless = if end <= self.snd_una {
                // `tcp_check_dsack`, below prior_snd_una and above undo_marker: "D-SACK for
                // already forgotten data... Do dumb counting." The scoreboard no longer says
                // whether it was retransmitted: the extra copies of a broadcast bond would
                // count here, were they not dubious already.
                if end > marker {
                    n
                } else {
                    0
                }
            } else {
                // `tcp_sacktag_one`: the block's segments above undo_marker that were
                // retransmitted (TCPCB_RETRANS).
                let (from, to) = (start.max(self.snd_una).max(marker), end.min(self.snd_nxt));
                (from..to).filter(|&q| self.seg(q).marks & EVER_RETRANS != 0).count() as u32
            };
            self.undo_retrans = (self.undo_retrans - i64::from(needless)).max(0);
        }
        tlp
    }

    /// Needless retransmissions among `[start, end)`, just D-SACKed: the model's own
    /// count (Linux has no such counter; it keeps nothing of ACKed data). A segment
    /// counts if it was retransmitted, at most once per retransmission; the duplicates
    /// a broadcast bond makes of segments never retransmitted count nothing (all its
    /// D-SACKs are in `dsacks_received`). The extra copies of a retransmission that
    /// was needed are D-SACKed too, so under broadcast this is an upper bound.
    fn count_spurious(&mut self, start: u32, end: u32) -> u32 {
        let mut n = 0;
        for seq in start..end {
            if (self.snd_una..self.snd_nxt).contains(&seq) {
                let s = self.seg_mut(seq);
                if s.marks & (EVER_RETRANS | PROBED) != 0 && s.marks & DSACKED == 0 {
                    s.marks |= DSACKED;
                    n += 1;
                }
            } else if let Ok(i) = self.retx_acked.binary_search(&seq) {
                self.retx_acked.remove(i);
                n += 1;
            }
        }
        n
    }

    /// FACK (Linux before 4.15, `net.ipv4.tcp_fack`): `fackets_out`, the segments from the
    /// lowest unacknowledged to the highest SACKed, SACKed or not, counts as the duplicate
    /// ACKs; above the reordering degree it is time to recover (`tcp_dupack_heuristics`,
    /// `tcp_time_to_recover`) and the first `fackets_out - reordering` segments not SACKed are
    /// lost (`tcp_update_scoreboard` → `tcp_mark_head_lost`, `tcp_skb_mark_lost`: one
    /// already lost, retransmitted or not, stays as it is). In Recovery a duplicate ACK marks
    /// at least the head (`do_lost = is_dupack || ...`, and `if (lost <= 0) lost = 1`).
    fn fack_detect_loss(&mut self, dupack: bool) -> u32 {
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

    /// `tcp_may_send_now`: new data the windows let out now (`tcp_snd_test`: a segment
    /// waiting, room in cwnd, and in the receiver's window).
    fn may_send_now(&self) -> bool {
        self.snd_nxt < self.written && self.in_flight() < self.w.cwnd && self.snd_nxt < self.wnd_end
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
    fn early_recovery(&self, config: &TcpConfig, now: SimTime, una_advanced: bool, old_ack: bool) -> EarlyRecovery {
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

    /// `tcp_rearm_rto` from a pending early retransmit or loss probe (Linux 3.11/3.13): the RTO
    /// of the head's last send, or a whole RTO from now once that has passed.
    fn rearmed_rto(&self, config: &TcpConfig, now: SimTime) -> SimTime {
        let rto = self.backed_off_rto(config);
        let at = self.seg(self.snd_una).sent + rto;
        if at > now {
            at
        } else {
            now + rto
        }
    }

    /// Whether an ACK in the window turns the pending timer back into the RTO (3.x `tcp_ack`:
    /// `if (icsk_pending == ICSK_TIME_EARLY_RETRANS || icsk_pending == ICSK_TIME_LOSS_PROBE)
    /// tcp_rearm_rto(sk)`): a pending early retransmit, or a loss probe of 3.10's TLP (`tlp_timeout`
    /// "linux-3.10"; today's kernels leave a probe pending on an ACK that ACKs nothing).
    fn pending_rearmed_by_ack(&self, config: &TcpConfig) -> bool {
        match self.timer_kind {
            TimerKind::EarlyRetrans => true,
            TimerKind::LossProbe => config.tlp_floor.is_some(),
            TimerKind::Rto | TimerKind::ReoTimeout => false,
        }
    }

    /// The retransmission timer's deadline when `tcp_fastretrans_alert` runs for an ACK: an ACK
    /// that advanced snd_una re-armed it a whole RTO from now (`tcp_clean_rtx_queue`); any other
    /// ACK in the window turned a pending early retransmit or loss probe back into the RTO
    /// (`tcp_ack`: `tcp_rearm_rto`); an old ACK left it as it was.
    fn rto_before_recovery(
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

    /// `tcp_update_scoreboard(sk, fast_rexmit = 1)` on entering recovery in Recovery state: FACK
    /// marks the first max(fackets_out − reordering, 1) segments; dupthresh what it marks, else the
    /// head (`tcp_mark_head_lost(sk, 1, 1)`).
    fn mark_on_entry(&mut self) -> u32 {
        let mut newly_lost = self.dupthresh_detect_loss(true);
        if !self.fack_on && self.sacked_out < self.reordering && self.snd_una < self.snd_nxt {
            newly_lost += u32::from(self.mark_head_lost(self.snd_una));
        }
        newly_lost
    }

    /// FACK's test for lost retransmissions (Linux before 4.4, `tcp_mark_lost_retrans`, run on
    /// every SACK in Recovery): a retransmission still in flight is lost once a segment sent after
    /// it is SACKed (the highest SACK beyond the `snd_nxt` it left at); it is marked lost again and
    /// sent again, where without it only the timeout would repair it.
    fn mark_lost_retrans(&mut self) -> u32 {
        if !self.fack_on || self.retrans_out == 0 {
            self.retrans_at.clear();
            return 0;
        }
        if self.state != CaState::Recovery {
            return 0;
        }
        let mut newly_lost = 0;
        let mut kept = VecDeque::with_capacity(self.retrans_at.len());
        while let Some((seq, nxt)) = self.retrans_at.pop_front() {
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
        self.retrans_at = kept;
        newly_lost
    }

    /// `tcp_check_sack_reordering`: a segment at `low` was delivered below the highest SACK.
    /// A degree raised turns FACK off (`tcp_update_reordering` → `tcp_disable_fack`); any
    /// reordering turns early retransmit off.
    fn check_reordering(&mut self, config: &TcpConfig, low: u32) {
        if low >= self.fack {
            return;
        }
        // (`if (metric > 0) tcp_disable_early_retrans(tp)`, whether or not the degree rises.)
        self.do_early_retrans = false;
        let metric = self.fack - low;
        if metric > self.reordering {
            self.reordering = metric.min(config.max_reordering);
            self.fack_on = false;
        }
        self.reord_seen += 1;
    }

    /// `tcp_event_data_sent`: the first data after the pipe emptied restarts the
    /// congestion control's clock (`CA_EVENT_TX_START`); `lsndtime` is the last send.
    fn data_sent(&mut self, now: SimTime) {
        self.w.now = now;
        if self.in_flight() == 0 {
            self.cc.cwnd_event(&self.w, CaEvent::TxStart);
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
    fn tso_autosize(&self, config: &TcpConfig) -> u32 {
        const GSO_MAX_SIZE: u64 = 65_536;
        let mss = u64::from(config.mss);
        let bytes = match (self.pacing_rate(config), self.min_rtt) {
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
    fn pacing_rate(&self, config: &TcpConfig) -> Option<f64> {
        self.pacing_rate_at(config, if self.w.cwnd < self.w.ssthresh / 2 { 2.0 } else { 1.2 })
    }

    /// `ratio` times `mss · max(cwnd, packets_out) / srtt`, bytes per second (none before the
    /// first RTT sample).
    fn pacing_rate_at(&self, config: &TcpConfig, ratio: f64) -> Option<f64> {
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
    /// (`tcp_xmit_retransmit_queue` has no such check).
    fn small_queue_full(&self, config: &TcpConfig, retransmit: bool) -> bool {
        if config.small_queues == SmallQueues::Linux312 {
            if retransmit {
                return false;
            }
            let rate = self.pacing_rate_at(config, 2.0).unwrap_or(f64::INFINITY);
            let limit = ((rate / 1024.0).min(u64::MAX as f64) as u64).max(config.limit_output_bytes);
            return self.wmem > limit;
        }
        if self.packets_out() <= 1 {
            return false;
        }
        let rate = self.pacing_rate(config).unwrap_or(f64::INFINITY);
        let buffer = truesize(config.mss, if config.gso { self.tso_autosize(config) } else { 1 });
        let limit = ((rate / 1024.0) as u64).max(2 * buffer).min(config.limit_output_bytes) << u64::from(retransmit);
        self.wmem > limit
    }

    /// `tcp_init_undo`.
    fn init_undo(&mut self) {
        self.undo_marker = Some(self.snd_una);
        self.undo_retrans = if self.retrans_out > 0 { i64::from(self.retrans_out) } else { -1 };
    }

    /// `tcp_any_retrans_done`: a retransmission is out, or the head segment was ever retransmitted.
    fn any_retrans_done(&self) -> bool {
        self.retrans_out > 0 || (self.snd_una < self.snd_nxt && self.seg(self.snd_una).marks & EVER_RETRANS != 0)
    }

    /// Forgets the first retransmission's time once no retransmission is done or out
    /// (`if (!tcp_any_retrans_done(sk)) tp->retrans_stamp = 0;`).
    fn forget_retrans_stamp(&mut self) {
        if !self.any_retrans_done() {
            self.retrans_stamp = None;
        }
    }

    /// `tcp_init_cwnd_reduction`: remember the window, take `ssthresh` from the algorithm.
    fn init_cwnd_reduction(&mut self) {
        self.high_seq = self.snd_nxt;
        self.tlp_high_seq = None;
        self.w.cwnd_cnt = 0;
        self.prior_cwnd = self.w.cwnd;
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.w.ssthresh = self.cc.ssthresh(&self.w);
    }

    fn set_state(&mut self, state: CaState) {
        self.cc.set_state(&self.w, state);
        self.state = state;
    }

    /// `tcp_enter_recovery`. Today's kernels forget a stale first retransmission's time here
    /// (`tcp_retrans_stamp_cleanup`, 6.12 and the stable kernels since); 3.x did not.
    fn enter_recovery(&mut self, config: &TcpConfig, stats: &mut TcpStats) {
        if config.undo == UndoEra::Current {
            self.forget_retrans_stamp();
        }
        stats.fast_recoveries += 1;
        self.fwd_hint = self.snd_una;
        self.prior_ssthresh = self.current_ssthresh();
        self.init_undo();
        self.init_cwnd_reduction();
        self.set_state(CaState::Recovery);
    }

    /// `tcp_current_ssthresh`: at least 3/4 of the window.
    fn current_ssthresh(&self) -> u32 {
        self.w.ssthresh.max((self.w.cwnd >> 1) + (self.w.cwnd >> 2))
    }

    /// `tcp_cwnd_reduction`: Proportional Rate Reduction (RFC 6937 §3, Linux's form).
    fn cwnd_reduction(&mut self, newly_acked_sacked: u32, newly_lost: u32, una_advanced: bool) {
        if newly_acked_sacked == 0 || self.prior_cwnd == 0 {
            return;
        }
        self.prr_delivered += newly_acked_sacked;
        let in_flight = self.in_flight();
        let delta = i64::from(self.w.ssthresh) - i64::from(in_flight);
        let mut sndcnt: i64 = if delta < 0 {
            // Proportional part: ceil(ssthresh · prr_delivered / prior_cwnd) − prr_out.
            let dividend = u64::from(self.w.ssthresh) * u64::from(self.prr_delivered) + u64::from(self.prior_cwnd) - 1;
            (dividend / u64::from(self.prior_cwnd)) as i64 - i64::from(self.prr_out)
        } else {
            // Slow-start reduction bound (PRR-SSRB).
            let mut n = (i64::from(self.prr_delivered) - i64::from(self.prr_out)).max(i64::from(newly_acked_sacked));
            if una_advanced && newly_lost == 0 {
                n += 1;
            }
            n.min(delta)
        };
        // Force a fast retransmit upon entering fast recovery.
        sndcnt = sndcnt.max(if self.prr_out > 0 { 0 } else { 1 });
        self.w.cwnd = (i64::from(in_flight) + sndcnt).max(1) as u32;
    }

    /// `tcp_end_cwnd_reduction`.
    fn end_cwnd_reduction(&mut self) {
        if self.w.ssthresh < u32::MAX && self.undo_marker.is_some() {
            self.w.cwnd = self.w.ssthresh;
        }
    }

    /// `tcp_undo_cwnd_reduction(sk, unmark_loss)`: the reduction was needless. The timeout's
    /// and the partial undo unmark every loss (`unmark_loss`); the D-SACK and full-recovery undos
    /// keep the marks, so a loss still evident starts a new recovery on the same ACK
    /// ("reordering then loss", `tcp_fastretrans_alert`). Either way RACK looks again
    /// (`tp->rack.advanced = 1; /* Force RACK to re-exam losses */`).
    fn undo_reduction(&mut self, stats: &mut TcpStats, unmark_loss: bool) {
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
        self.w.cwnd = self.cc.undo_cwnd(&self.w, self.prior_cwnd);
        if self.prior_ssthresh > self.w.ssthresh {
            self.w.ssthresh = self.prior_ssthresh;
        }
        self.undo_marker = None;
        stats.undos += 1;
    }

    /// `tcp_packet_delayed`: the ACK echoes a timestamp older than the first
    /// retransmission, so the original was delivered (Eifel, RFC 3522); or nothing was
    /// retransmitted yet (no stamp: a fast retransmit held back by TCP small queues), so what
    /// advanced snd_una was delayed, not lost. 3.x (`!tp->retrans_stamp || ...`) and Linux since
    /// 6.12 answer so (its exceptions are a connection without SACK and SYN_SENT, neither
    /// modelled); 5.1 to 6.11 answered no.
    fn packet_delayed(&self, ts_ecr: u32) -> bool {
        self.retrans_stamp.is_none_or(|stamp| ts_ecr != 0 && ts_ecr < super::ts_of(stamp))
    }

    /// `tcp_may_undo`: an undo marker is set, and every retransmission was D-SACKed as needless
    /// (`!tp->undo_retrans`) or the ACK shows the original delivered ([`Conn::packet_delayed`]).
    /// `tcp_try_undo_recovery` (a fast recovery's or a timeout's end) and `tcp_try_undo_loss` ask it.
    fn may_undo(&self, ts_ecr: u32) -> bool {
        self.undo_marker.is_some() && (self.undo_retrans == 0 || self.packet_delayed(ts_ecr))
    }
}

impl TcpSender {
    /// A sender for `flows` flows cut by `cutter` (chunk = MSS).
    pub fn new(config: TcpConfig, cutter: Cutter, flows: usize) -> TcpSender {
        TcpSender {
            config,
            cutter,
            conns: (0..flows).map(|_| None).collect(),
            ready: VecDeque::new(),
            active: 0,
            unopened: flows,
            urgent: VecDeque::new(),
            stats: TcpStats::default(),
            trace: TcpTrace::default(),
            destination: Vec::new(),
            metrics: std::collections::HashMap::new(),
        }
    }

    /// The sender with each flow's destination (`destination[flow]`, the client's number): the
    /// connections to one client share its entry in the TCP metrics cache.
    pub fn with_destinations(mut self, destination: Vec<u32>) -> TcpSender {
        self.destination = destination;
        self
    }

    fn destination_of(destination: &[u32], flow: u32) -> u32 {
        destination.get(flow as usize).copied().unwrap_or(flow)
    }

    /// Opens `flow` for a stream of `bytes` that the application will write a message
    /// at a time ([`TcpSender::write`]) rather than at once.
    pub fn open_stream(&mut self, now: SimTime, flow: u32, bytes: u64, out: &mut Vec<Output>) {
        self.open(now, flow, bytes, out);
        let c = self.conns[flow as usize].as_mut().expect("just opened");
        c.written = 0;
        c.timer.cancel();
    }

    /// The application writes the next `segments` segments of `flow`'s stream (`tcp_sendmsg`);
    /// they leave when the windows, TCP small queues and Nagle allow (`tcp_push`).
    pub fn write(&mut self, now: SimTime, flow: u32, segments: u32, out: &mut Vec<Output>) {
        let config = &self.config;
        let Some(c) = self.conns[flow as usize].as_mut().filter(|c| !c.done) else { return };
        c.written = (c.written + segments).min(c.total);
        // The first data after the connection went quiet starts the retransmission timer.
        if c.packets_out() == 0 {
            Self::set_xmit_timer(config, c, flow, now, out);
        }
        self.ready.push_back(flow);
    }

    /// The acknowledgement a data segment of the peer carried (`tcp_rcv_established`
    /// runs `tcp_ack` before queueing the data). The model's packet has no room for a
    /// window field beside the data's sequence number, so the window last advertised
    /// is applied from the new ACK (the receiver's window changes only when autotuning
    /// grows it, and its next pure ACK reports that).
    pub fn on_piggybacked_ack(&mut self, now: SimTime, data: &Packet, out: &mut Vec<Output>) {
        let Some(c) = self.conns[data.flow as usize].as_ref() else { return };
        let ack = Packet { kind: Kind::Ack, seq: c.snd_wnd, bytes: 0, ..*data };
        self.on_ack(now, &ack, true, out);
    }

    /// The trace recorded so far (empty unless `trace_ms` is set).
    pub fn take_trace(&mut self) -> Option<TcpTrace> {
        self.config.trace_every.map(|_| std::mem::take(&mut self.trace))
    }

    /// Samples every open connection (`sender.trace_ms`).
    fn sample(&mut self, now: SimTime) {
        for (flow, c) in self.conns.iter().enumerate() {
            let Some(c) = c.as_ref().filter(|c| !c.done) else { continue };
            if !trace_row(&mut self.trace, now, flow as u32, c) {
                return;
            }
        }
    }

    /// What the senders did so far.
    pub fn stats(&self) -> TcpStats {
        let mut s = self.stats.clone();
        for c in self.conns.iter().flatten() {
            s.reordering_sum += u64::from(c.reordering);
            s.reordering_max = s.reordering_max.max(c.reordering);
        }
        s
    }

    fn new_conn(&self, file_bytes: u64, now: SimTime) -> Conn {
        let cc = cc::build(&self.config.cc, self.config.hystart).expect("validated congestion control");
        let w = Window { cwnd: self.config.initial_cwnd, now, lsndtime: now, ..Window::new(0, u32::MAX) };
        let total = self.cutter.packets(file_bytes) as u32;
        Conn {
            file_bytes,
            total,
            written: total,
            snd_sml: 0,
            snd_una: 0,
            snd_nxt: 0,
            segs: VecDeque::new(),
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            fack: 0,
            retrans_hint: 0,
            w,
            cc,
            state: CaState::Open,
            high_seq: 0,
            prior_cwnd: 0,
            prior_ssthresh: 0,
            prr_delivered: 0,
            prr_out: 0,
            undo_marker: None,
            undo_retrans: -1,
            retrans_stamp: None,
            reordering: self.config.reordering,
            reord_seen: 0,
            fack_on: self.config.fack,
            do_early_retrans: self.config.early_retransmit.is_some(),
            fwd_hint: 0,
            retrans_at: VecDeque::new(),
            srtt_us: 0,
            mdev_us: 0,
            mdev_max_us: 0,
            rttvar_us: 0,
            rtt_seq: 0,
            // RFC 6298 §2.1 / Linux `TCP_TIMEOUT_INIT`: 1 s before any RTT sample.
            rto: SimTime::from_secs_f64(1.0),
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
            ts_recent: 0,
            frto: false,
            frto_new_data: false,
            retransmits: 0,
            dsack_dups: 0,
            delivered: 0,
            retx_acked: VecDeque::new(),
            done: false,
        }
    }

    fn arm(c: &mut Conn, flow: u32, kind: TimerKind, at: SimTime, out: &mut Vec<Output>) {
        c.timer_kind = kind;
        if c.timer.arm(at) {
            out.push(Output::Timer { at: c.timer.at(), token: timer_token(flow, c.timer.generation()) });
        }
    }

    /// `tcp_set_xmit_timer`: a loss probe if one may be sent, else the RTO
    /// (`tcp_schedule_loss_probe`, `tcp_rearm_rto`). Called when data was ACKed
    /// or is about to be sent at `now` (the world asks for it at this instant),
    /// so the deadline counts from `now` as Linux's does.
    fn set_xmit_timer(config: &TcpConfig, c: &mut Conn, flow: u32, now: SimTime, out: &mut Vec<Output>) {
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
                    let pto = match config.tlp_floor {
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

    /// Processes one ACK of `flow` (`tcp_ack`).
    /// `with_data`: the ACK came on a segment that carried data (`FLAG_DATA`: never a duplicate).
    fn on_ack(&mut self, now: SimTime, ack: &Packet, with_data: bool, out: &mut Vec<Output>) {
        let flow = ack.flow;
        let config = &self.config;
        let stats = &mut self.stats;
        let Some(c) = self.conns[flow as usize].as_mut().filter(|c| !c.done) else { return };
        stats.acks_received += 1;
        c.w.now = now;
        let prior_fack = c.fack.max(c.snd_una);
        let prior_snd_una = c.snd_una;
        let prior_in_flight = c.in_flight();
        let prior_snd_wnd = c.snd_wnd;
        // `sk_pacing_rate` as the last ACK's `tcp_cong_control` left it (HyStart reads it).
        let pacing_rate = c.pacing_rate(config).map_or(0, |r| r as u64);
        let mut newly_acked_sacked = 0u32;
        // The oldest and the newest (S)ACKed originals' send times (`first_ackt`/`last_ackt`,
        // `first_sackt`/`last_sackt`).
        let mut first_ackt: Option<SimTime> = None;
        let mut last_ackt: Option<SimTime> = None;
        let mut first_sackt: Option<SimTime> = None;
        let mut last_sackt: Option<SimTime> = None;
        // FLAG_RETRANS_DATA_ACKED: the cumulative ACK covers a segment that was retransmitted.
        let mut retrans_data_acked = false;
        let mut reord = u32::MAX;
        let mut dsack_tlp = false;
        // FLAG_ORIG_SACK_ACKED: a never-retransmitted segment below high_seq was delivered.
        let mut orig_acked = false;
        let mut newly_sacked = 0u32;
        // The rate sample's `prior_delivered`: the delivered count when the latest sent of the
        // segments this ACK delivers left (`tcp_rate_skb_delivered`); 0 when it delivers none.
        let mut prior_delivered = 0u32;
        c.frto_new_data = false;

        // D-SACK (RFC 2883 §4; `tcp_check_dsack`): a first block below the ACK, or inside the second.
        let blocks = ack.sack_blocks();
        let dsack = blocks.first().is_some_and(|b| {
            b.start < ack.ack || blocks.get(1).is_some_and(|b2| b.start >= b2.start && b.end <= b2.end)
        });
        if dsack {
            dsack_tlp = c.on_dsack(blocks[0].start, blocks[0].end, stats);
            // `tcp_sacktag_one`: a D-SACK of a retransmitted segment already SACKed says the
            // original arrived after data sent later: reordering, from the lowest such segment.
            let (start, end) = (blocks[0].start.max(c.snd_una), blocks[0].end.min(c.snd_nxt));
            if let Some(seq) = (start..end).find(|&q| c.seg(q).marks & (SACKED | EVER_RETRANS) == SACKED | EVER_RETRANS)
            {
                reord = reord.min(seq);
            }
        }

        // SACK blocks (`tcp_sacktag_write_queue`), skipping what the last ACK already said.
        if config.sack {
            let cache = c.sack_cache;
            let mut new_cache = [(0u32, 0u32); 3];
            for (i, b) in blocks.iter().enumerate().skip(usize::from(dsack)) {
                new_cache[i] = (b.start, b.end);
                let mut start = b.start.max(c.snd_una);
                let end = b.end.min(c.snd_nxt);
                for &(cs, ce) in &cache {
                    if cs <= start && start < ce {
                        start = ce;
                    }
                }
                let mut seq = start;
                while seq < end {
                    let s = *c.seg(seq);
                    if s.marks & SACKED == 0 {
                        let seg = c.seg_mut(seq);
                        seg.marks = (seg.marks | SACKED) & !LOST & !RETRANS_OUT;
                        c.sacked_out += 1;
                        if s.marks & LOST != 0 && s.marks & RETRANS_OUT == 0 {
                            c.lost_out -= 1;
                        }
                        if s.marks & RETRANS_OUT != 0 {
                            c.retrans_out -= 1;
                            if s.marks & LOST != 0 {
                                c.lost_out -= 1;
                            }
                        }
                        newly_acked_sacked += 1;
                        newly_sacked += 1;
                        prior_delivered = prior_delivered.max(s.delivered);
                        if s.marks & EVER_RETRANS == 0 {
                            orig_acked |= seq < c.high_seq;
                            first_sackt = Some(first_sackt.map_or(s.sent, |t: SimTime| t.min(s.sent)));
                            last_sackt = Some(last_sackt.map_or(s.sent, |t: SimTime| t.max(s.sent)));
                            if seq < prior_fack {
                                reord = reord.min(seq);
                            }
                        }
                        c.rack_advance(now, seq, s.sent, s.marks);
                        if seq + 1 > c.fack {
                            c.fack = seq + 1;
                        }
                    }
                    seq += 1;
                }
            }
            c.sack_cache = new_cache;
        }

        // `tcp_sacktag_write_queue` judges the reordering its SACKs show only outside Loss, or in a
        // Loss that may still be undone (`icsk_ca_state != TCP_CA_Loss || tp->undo_marker`).
        // (The model's timeout always keeps an undo marker, as Linux since 3.18; 3.10-3.15's
        // `tcp_enter_loss` dropped it when a segment had been retransmitted, which is not modelled.)
        if c.state == CaState::Loss && c.undo_marker.is_none() {
            reord = u32::MAX;
        }

        // Cumulative ACK (`tcp_clean_rtx_queue`).
        let una_advanced = ack.ack > c.snd_una && ack.ack <= c.snd_nxt;
        if una_advanced {
            c.timeouts = 0; // (`tcp_ack`: `icsk->icsk_retransmits = 0` as snd_una moves)
            while c.snd_una < ack.ack {
                let s = c.segs.pop_front().expect("within snd_nxt");
                let seq = c.snd_una;
                c.snd_una += 1;
                // `tcp_clean_rtx_queue`: any segment ever retransmitted (TCPCB_RETRANS),
                // SACKed or not, makes the ACK FLAG_RETRANS_DATA_ACKED.
                retrans_data_acked |= s.marks & EVER_RETRANS != 0;
                if s.marks & (EVER_RETRANS | PROBED) != 0 && s.marks & DSACKED == 0 {
                    c.retx_acked.push_back(seq);
                }
                if s.marks & SACKED != 0 {
                    c.sacked_out -= 1;
                    continue;
                }
                newly_acked_sacked += 1;
                prior_delivered = prior_delivered.max(s.delivered);
                if s.marks & LOST != 0 {
                    c.lost_out -= 1;
                }
                if s.marks & RETRANS_OUT != 0 {
                    c.retrans_out -= 1;
                }
                if s.marks & EVER_RETRANS == 0 {
                    orig_acked |= seq < c.high_seq;
                    first_ackt.get_or_insert(s.sent);
                    last_ackt = Some(s.sent);
                    reord = reord.min(seq);
                }
                c.rack_advance(now, seq, s.sent, s.marks);
            }
            c.retrans_hint = c.retrans_hint.max(c.snd_una);
            c.fack = c.fack.max(c.snd_una);
            // Duplicates of segments more than a send buffer below snd_una are no longer
            // looked for (keeps the record bounded).
            let horizon = c.snd_una.saturating_sub(config.sndbuf_segments);
            while c.retx_acked.front().is_some_and(|&q| q < horizon) {
                c.retx_acked.pop_front();
            }
            c.w.snd_una = u64::from(c.snd_una);
        }
        // RFC 7323 §4.3: echo the receiver's newest timestamp in the data that follows.
        c.ts_recent = c.ts_recent.max(super::ts_of(ack.born));
        // The window update (`tcp_ack_update_window`): the right edge the ACK allows.
        if ack.ack >= c.snd_una {
            c.wnd_end = c.wnd_end.max(ack.ack.saturating_add(ack.seq));
            c.snd_wnd = ack.seq;
        }
        if reord < prior_fack && config.sack {
            c.check_reordering(config, reord);
        }
        c.delivered += newly_acked_sacked;
        // An ACK below snd_una (ACKs reordered on their way back) takes `tcp_ack`'s `old_ack`
        // path: its SACK blocks are tagged and `tcp_fastretrans_alert` runs, nothing else (no
        // RTT sample, RACK window update, loss-probe answer nor window growth or reduction).
        let old_ack = ack.ack < prior_snd_una;
        // FLAG_NOT_DUP: the ACK moved snd_una, carried data, or updated the window
        // (`tcp_may_update_window`: a sequence number past the last update's, which only the peer's
        // data moves, or with the same one a larger window).
        let not_dup = una_advanced || with_data || c.after_peer_data || ack.seq > prior_snd_wnd;
        c.after_peer_data = with_data;
        // A D-SACK is news to today's kernels (in `FLAG_CA_ALERT`, and no duplicate:
        // `!(flag & (FLAG_SND_UNA_ADVANCED | FLAG_NOT_DUP | FLAG_DSACKING_ACK))`), not to 3.x's.
        let dsack_alert = dsack && config.undo == UndoEra::Current;
        // `is_dupack` (`num_dupack` today): nothing moved forward, and not an old ACK (whose path
        // passes no duplicate).
        let is_dupack = !old_ack && !not_dup && !dsack_alert;
        // Whether `tcp_fastretrans_alert` (the undos, loss detection, the congestion state
        // machine) runs. `tcp_ack_is_dubious`: outside Open, or for a duplicate, or for news
        // (`FLAG_CA_ALERT`: newly SACKed data, the D-SACK above; ECN is not modelled), so in
        // Open an ACK that only moves snd_una on skips it all. With nothing in flight before the
        // ACK (`no_queue`) only a D-SACK reaches it; an old ACK (below snd_una) only with SACK
        // blocks (`old_ack`).
        let alert = if old_ack {
            !blocks.is_empty()
        } else if c.snd_nxt == prior_snd_una {
            dsack
        } else {
            !not_dup || newly_sacked > 0 || dsack_alert || c.state != CaState::Open
        };
        if !old_ack {
            c.update_reo_wnd(config, prior_delivered);
        }

        // RTT (`tcp_clean_rtx_queue` → `tcp_ack_update_rtt`): the oldest newly ACKed
        // original, but not when the ACK also covers a retransmitted segment (Karn's rule:
        // `if (likely(first_ackt) && !(flag & FLAG_RETRANS_DATA_ACKED))`; after a timeout
        // the originals ACKed with the retransmission left before it, and their sample
        // would hold the whole timeout); else the oldest newly SACKed original
        // (`sack_rtt_us`), else the timestamp echo if data was ACKed (`tcp_rtt_tsopt_us`).
        // A valid sample resets the backoff. The congestion control and the minimum RTT take the
        // newest (S)ACKed original instead (`ca_rtt_us` from `last_ackt`, or `last_sackt` when the
        // ACK SACKed any: `rs->rtt_us`, `tcp_update_rtt_min(sk, ca_rtt_us, flag)`).
        let acked_rtt = !retrans_data_acked && !old_ack;
        let seq_rtt = first_ackt.filter(|_| acked_rtt).or(first_sackt.filter(|_| !old_ack));
        let ca_sent = if first_sackt.is_some() { last_sackt } else { last_ackt.filter(|_| acked_rtt) };
        let (rtt, ca_rtt) = match seq_rtt {
            Some(first) => (Some(rtt_of(now, first)), ca_sent.map(|t| rtt_of(now, t))),
            None => {
                let ts = (una_advanced && ack.ts_ecr != 0)
                    .then(|| rtt_of(now, super::ts_time(ack.ts_ecr)).max(SimTime(1_000_000)));
                (ts, ts)
            }
        };
        if let Some(rtt) = rtt {
            c.rtt_sample(config, rtt, ca_rtt.unwrap_or(rtt));
            c.backoff = 0;
        }
        if !old_ack {
            c.w.snd_nxt = u64::from(c.snd_nxt);
            c.w.pacing_rate = pacing_rate;
            let sample = AckSample {
                acked: newly_acked_sacked,
                rtt: ca_rtt.filter(|_| rtt.is_some()),
                in_flight: prior_in_flight,
            };
            c.cc.pkts_acked(&mut c.w, &sample);
        }

        // Tail loss probe answered (`tcp_process_tlp_ack`).
        if let Some(high) = c.tlp_high_seq.filter(|_| !old_ack) {
            if ack.ack >= high {
                c.tlp_high_seq = None;
                if c.tlp_retrans && !dsack_tlp && ack.ack > high {
                    // The probe repaired a loss: reduce the window once (CWR).
                    c.init_cwnd_reduction();
                    c.w.cwnd = c.w.ssthresh;
                }
            }
        }

        // Step D of `tcp_fastretrans_alert`: in Open the first retransmission's time is forgotten,
        // whatever is still marked retransmitted (`tp->retrans_stamp = 0`), at each such ACK only.
        if alert && c.state == CaState::Open {
            c.retrans_stamp = None;
        }

        // Partial undo (`tcp_try_undo_partial`, first in `tcp_fastretrans_alert`'s Recovery case):
        // an ACK that advances snd_una but not past high_seq and echoes a timestamp older than
        // the first retransmission was sent for original data, "rather than with a retransmit":
        // evidence of reordering (`tcp_check_sack_reordering(sk, prior_snd_una, 1)`). With
        // retransmissions still out Linux returns there: this ACK marks nothing more lost (nor
        // tries the D-SACK undo); with none, the reduction is undone and the connection kept
        // open (`tcp_try_keep_open`), RACK then judging this ACK's news afresh.
        let mut hold_losses = false;
        if c.state == CaState::Recovery
            && una_advanced
            && c.snd_una < c.high_seq
            && c.undo_marker.is_some()
            && c.packet_delayed(ack.ts_ecr)
        {
            c.check_reordering(config, prior_snd_una);
            // (`tcp_update_reordering(sk, tcp_fackets_out(tp) + acked, 1)`: a metric above 0.)
            c.do_early_retrans = false;
            if c.retrans_out > 0 {
                hold_losses = true;
            } else {
                c.forget_retrans_stamp();
                c.undo_reduction(stats, true);
                let keep = if c.sacked_out + c.lost_out > 0 || c.any_retrans_done() {
                    CaState::Disorder
                } else {
                    CaState::Open
                };
                c.set_state(keep);
                c.high_seq = c.snd_nxt;
            }
        }

        // D-SACK undo (`tcp_try_undo_dsack`): every retransmission was needless.
        // `tcp_fastretrans_alert` tries it in Recovery and in Open or Disorder (a late
        // D-SACK after the recovery ended); in Loss only `tcp_try_undo_loss` undoes, on
        // an ACK that advances snd_una (`tcp_process_loss`, below).
        // The ACK that ends a recovery undoes it in the state machine below
        // (`tcp_try_undo_recovery` runs first, step D of `tcp_fastretrans_alert`).
        let ends_recovery = c.state == CaState::Recovery && c.snd_una >= c.high_seq;
        if alert
            && !hold_losses
            && !ends_recovery
            && c.undo_marker.is_some()
            && c.undo_retrans == 0
            && matches!(c.state, CaState::Open | CaState::Disorder | CaState::Recovery)
        {
            // `tcp_try_undo_dsack`: the window keeps its width one recovery longer.
            c.rack.reo_wnd_persist = (c.rack.reo_wnd_persist + 1).min(RACK_RECOVERY_THRESH);
            c.undo_reduction(stats, false);
            if c.state != CaState::Open {
                c.set_state(if c.sacked_out > 0 { CaState::Disorder } else { CaState::Open });
            }
        }

        // The congestion state machine (`tcp_fastretrans_alert`).
        match c.state {
            CaState::Recovery if alert && c.snd_una >= c.high_seq => {
                // `tcp_try_undo_recovery`: undo if the timestamps show the retransmissions needless.
                if c.may_undo(ack.ts_ecr) {
                    c.undo_reduction(stats, false);
                } else {
                    c.end_cwnd_reduction();
                    // A recovery that was not undone counts toward the window's return to one
                    // step (`else if (tp->rack.reo_wnd_persist) tp->rack.reo_wnd_persist--;`),
                    // which `update_reo_wnd` makes at the next delivery.
                    c.rack.reo_wnd_persist = c.rack.reo_wnd_persist.saturating_sub(1);
                }
                c.set_state(CaState::Open);
            }
            CaState::Loss if alert => {
                // `tcp_process_loss`.
                let recovered = c.snd_una >= c.high_seq;
                let may_undo = c.may_undo(ack.ts_ecr);
                // Today's `tcp_process_loss` tries the undo only on an ACK that moves snd_una
                // (`flag & FLAG_SND_UNA_ADVANCED && tcp_try_undo_loss(sk, false)`); 3.10-3.18's on
                // every ACK in Loss (`tcp_try_undo_loss` first in its F-RTO branch, and last).
                if (una_advanced || config.undo != UndoEra::Current) && may_undo {
                    // `tcp_try_undo_loss`: the timestamps show the timeout needless.
                    c.undo_reduction(stats, true);
                    c.timeouts = 0; // (`inet_csk(sk)->icsk_retransmits = 0`)
                    c.set_state(CaState::Open);
                } else if c.frto && orig_acked {
                    // F-RTO (RFC 5682 §3.1 step 3.b, SACK-enhanced): data never retransmitted
                    // was delivered, so not everything was lost: the timeout was spurious.
                    c.undo_reduction(stats, true);
                    c.timeouts = 0;
                    stats.spurious_rtos += 1;
                    stats.spurious_rto_at.push(now);
                    c.frto = false;
                    c.set_state(CaState::Open);
                } else {
                    if c.frto {
                        if c.snd_nxt > c.high_seq {
                            if newly_sacked > 0 || (!una_advanced && ack.ack == c.snd_una) {
                                c.frto = false; // step 3.a: the loss was real
                            }
                        } else if una_advanced && !recovered {
                            // Step 2.b: send new data rather than retransmit, if there is any.
                            c.high_seq = c.snd_nxt;
                            if c.snd_nxt < c.written && c.snd_nxt < c.wnd_end {
                                c.frto_new_data = true;
                            } else {
                                c.frto = false;
                            }
                        }
                    }
                    if recovered && !c.frto_new_data {
                        // `tcp_try_undo_recovery`, then back to Open: `tcp_may_undo`, as at the end
                        // of a fast recovery (every retransmission D-SACKed, or the timestamps).
                        if may_undo {
                            c.undo_reduction(stats, false);
                        } else {
                            c.rack.reo_wnd_persist = c.rack.reo_wnd_persist.saturating_sub(1);
                        }
                        c.frto = false;
                        c.set_state(CaState::Open);
                    }
                }
            }
            _ => {}
        }
        // Loss detection (`tcp_identify_packet_loss`), after the state's exits and undos as
        // in `tcp_fastretrans_alert`: the timeout's and the partial undo unmark every loss
        // (`tcp_undo_cwnd_reduction`), every undo makes RACK look again, and what RACK finds on
        // this same ACK must survive it (else a segment RACK already judged lost waits for a
        // probe or the RTO).
        let mut newly_lost = 0;
        let mut reo_wait = None;
        if hold_losses || !alert {
            // (`tcp_try_undo_partial` returned, or `tcp_fastretrans_alert` did not run: no loss
            // detection on this ACK)
        } else if config.rack && config.sack {
            if c.rack.advanced {
                c.rack.advanced = false;
                let (n, wait) = c.rack_detect_loss(config, now);
                newly_lost += n;
                reo_wait = wait;
            }
        } else if config.sack {
            newly_lost += c.mark_lost_retrans();
            newly_lost += c.dupthresh_detect_loss(is_dupack);
        }
        // Linux 3.x's other ways into recovery (`Conn::early_recovery`), without RACK.
        let mut early_retrans_at = None;
        if alert && matches!(c.state, CaState::Open | CaState::Disorder) {
            let early = if c.lost_out > 0 || config.rack {
                EarlyRecovery::No
            } else {
                c.early_recovery(config, now, una_advanced, old_ack)
            };
            if c.lost_out > 0 {
                c.enter_recovery(config, stats);
            } else if early == EarlyRecovery::Now {
                c.enter_recovery(config, stats);
                // `if (do_lost) tcp_update_scoreboard(sk, fast_rexmit)`: on a duplicate ACK, or one
                // whose SACKs reach beyond the reordering degree (`tcp_fackets_out(tp) > tp->reordering`).
                if is_dupack || (newly_sacked > 0 && c.fack.saturating_sub(c.snd_una) > c.reordering) {
                    newly_lost += c.mark_on_entry();
                }
            } else {
                if let EarlyRecovery::After(delay) = early {
                    early_retrans_at = Some(now + delay);
                }
                // `tcp_try_to_open` → `tcp_try_keep_open` (nothing is marked lost here).
                c.forget_retrans_stamp();
                let next = if c.sacked_out > 0 || c.any_retrans_done() { CaState::Disorder } else { CaState::Open };
                if next != c.state {
                    c.set_state(next);
                }
            }
        }

        // The window (`tcp_cong_control`).
        if old_ack {
            // (none on the `old_ack` path)
        } else if c.state == CaState::Recovery {
            c.cwnd_reduction(newly_acked_sacked, newly_lost, una_advanced);
        } else {
            // `tcp_may_raise_cwnd`: with a raised reordering degree any forward progress
            // counts, otherwise only newly ACKed data.
            let may_raise =
                if c.reordering > config.reordering { una_advanced || newly_acked_sacked > 0 } else { una_advanced };
            c.w.cwnd_limited = c.is_cwnd_limited();
            if may_raise && newly_acked_sacked > 0 {
                c.w.snd_nxt = u64::from(c.snd_nxt);
                c.cc.cong_avoid(&mut c.w, newly_acked_sacked);
            }
        }

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
            c.done = true;
            c.timer.cancel();
            c.segs = VecDeque::new();
            c.retx_acked = VecDeque::new();
            self.active -= 1;
            return;
        }
        // Timers (`tcp_ack`): RACK's reordering timeout if this ACK's loss detection armed
        // one (`tcp_rack_mark_lost` clears FLAG_SET_XMIT_TIMER), else TLP / RTO when data
        // was ACKed (FLAG_SET_XMIT_TIMER is set only by `tcp_clean_rtx_queue`). An ACK
        // that ACKs nothing leaves a pending reordering timeout alone: under broadcast
        // every segment brings D-SACKs of its extra copies, and re-arming the RTO on each
        // of them kept RACK from ever marking a hole lost.
        // A delayed early retransmit (or a 3.10-era loss probe) pending is cancelled by any ACK in
        // the window (`tcp_ack` → `tcp_rearm_rto`: the RTO of the head's send), which may pause it
        // again; an old ACK leaves it pending.
        let rearm_pending = c.timer.deadline().is_some() && c.pending_rearmed_by_ack(config);
        if let Some(wait) = reo_wait {
            let rto_at = now + c.backed_off_rto(config);
            Self::arm(c, flow, TimerKind::ReoTimeout, (now + wait + REO_SLACK).min(rto_at), out);
        } else if let Some(at) = early_retrans_at {
            Self::arm(c, flow, TimerKind::EarlyRetrans, at, out);
        } else if rearm_pending && !una_advanced && !old_ack && c.packets_out() > 0 {
            // (3.x's `tcp_schedule_loss_probe` after it would probe again only in Open, which an ACK
            // that ACKs nothing leaves only without SACKs: not re-armed here.)
            let at = c.rearmed_rto(config, now);
            Self::arm(c, flow, TimerKind::Rto, at, out);
        } else if una_advanced || c.timer.deadline().is_none() {
            Self::set_xmit_timer(config, c, flow, now, out);
        }
        self.ready.push_back(flow);
    }

    /// The next segment `flow` may send now: a lost one first, then new data
    /// (`tcp_xmit_retransmit_queue`, `tcp_write_xmit`).
    fn next_segment(&mut self, flow: u32, now: SimTime) -> Option<Packet> {
        let config = &self.config;
        let c = self.conns[flow as usize].as_mut().filter(|c| !c.done)?;
        if c.burst_left > 0 {
            // The rest of an offload buffer, room for it was taken when it was cut.
            c.burst_left -= 1;
            let mut p = self.send_new(flow, now);
            p.gso = 1;
            self.sent(flow);
            return Some(p);
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
        let last_bytes = self.cutter.packet_bytes(c.file_bytes, u64::from(last));
        let partial = segments == 1 && last_bytes < config.mss;
        let fin = last + 1 == c.total;
        if partial && !fin && !config.nodelay && c.packets_out() > 0 && c.snd_una < c.snd_sml && c.snd_sml <= c.snd_nxt
        {
            return None;
        }
        // `tcp_minshall_update`: a buffer that ends in a sub-MSS segment moves snd_sml.
        if last_bytes < config.mss {
            c.snd_sml = last + 1;
        }
        c.burst_left = segments - 1;
        let mut p = self.send_new(flow, now);
        if segments > 1 {
            p.gso = segments as u8;
        }
        self.sent(flow);
        Some(p)
    }

    /// A segment of `flow` left: `tcp_cwnd_validate` with whether the window is now full.
    fn sent(&mut self, flow: u32) {
        let c = self.conns[flow as usize].as_mut().expect("open");
        let limited = c.in_flight() >= c.w.cwnd;
        c.cwnd_validate(limited);
    }

    /// Sends segment `seq` again: a lost one, a forward retransmission (`forward`: neither lost nor
    /// SACKed, in flight twice as the kernel counts it, `TCPCB_SACKED_RETRANS`), or a probe.
    fn retransmit(
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
        let delivered = c.delivered;
        let s = c.seg_mut(seq);
        let was_lost = s.marks & LOST != 0;
        s.sent = now;
        s.delivered = delivered;
        if was_lost || forward {
            // `tcp_retransmit_skb`: `TCPCB_RETRANS`, counted in `retrans_out` and `undo_retrans`,
            // and the first retransmission's time kept.
            s.marks = (s.marks | EVER_RETRANS | RETRANS_OUT) & !DSACKED;
            c.retrans_out += 1;
            if c.fack_on {
                // One mark per segment, as the skb's one `ack_seq`: the latest retransmission's.
                c.retrans_at.retain(|&(q, _)| q != seq);
                c.retrans_at.push_back((seq, c.snd_nxt));
            }
            if c.undo_retrans < 0 {
                c.undo_retrans = 0;
            }
            c.undo_retrans += 1;
            c.retrans_stamp.get_or_insert(now);
        } else {
            // A probe of a segment not marked lost (`tcp_send_loss_probe` → `__tcp_retransmit_skb`,
            // not `tcp_retransmit_skb`): `TCPCB_EVER_RETRANS` at most, not in flight twice, no
            // undo count, no stamp.
            let mark = if how == (Resend::Probe { ever_retrans: false }) { PROBED } else { EVER_RETRANS };
            s.marks = (s.marks | mark) & !DSACKED;
        }
        stats.retransmits += 1;
        c.retransmits += 1;
        if c.state == CaState::Recovery {
            c.prr_out += 1;
        }
        let mut p = Packet::data(flow, seq, cutter.packet_bytes(c.file_bytes, u64::from(seq)), now);
        p.retransmit = true;
        p.ts_ecr = c.ts_recent;
        p
    }

    fn send_new(&mut self, flow: u32, now: SimTime) -> Packet {
        let c = self.conns[flow as usize].as_mut().expect("open");
        c.data_sent(now);
        let seq = c.snd_nxt;
        c.snd_nxt += 1;
        let delivered = c.delivered;
        c.segs.push_back(Seg { sent: now, delivered, marks: 0 });
        if c.state == CaState::Recovery {
            c.prr_out += 1;
        }
        self.stats.segments_sent += 1;
        let mut p = Packet::data(flow, seq, self.cutter.packet_bytes(c.file_bytes, u64::from(seq)), now);
        p.ts_ecr = c.ts_recent;
        p
    }

    /// The retransmission timer fired (`tcp_retransmit_timer` → `tcp_enter_loss`).
    fn on_rto(&mut self, flow: u32, now: SimTime, out: &mut Vec<Output>) {
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
        let first = c.retrans_stamp.unwrap_or_else(|| c.seg(c.snd_una).sent);
        if c.timeouts > 0 && now.saturating_sub(first) >= model_timeout(config.retries2, config.rto_max) {
            c.done = true;
            c.timer.cancel();
            c.segs = VecDeque::new();
            self.active -= 1;
            self.stats.aborted += 1;
            out.push(Output::Aborted(flow));
            return;
        }
        c.w.now = now;
        // `tcp_enter_loss`: a new reduction (ssthresh from the algorithm, undo state) unless
        // one is under way: not again in fast recovery, nor on a repeated timeout.
        let first_timeout = c.state == CaState::Loss && c.backoff == 0;
        if matches!(c.state, CaState::Open | CaState::Disorder) || c.snd_una >= c.high_seq || first_timeout {
            c.prior_ssthresh = c.current_ssthresh();
            c.prior_cwnd = c.w.cwnd;
            c.w.ssthresh = c.cc.ssthresh(&c.w);
            c.init_undo();
        }
        // Until 3.15 every timeout set the marker afresh (after `tcp_clear_retrans_partial`:
        // `undo_retrans` 0) and the walk of the write queue up to `tcp_send_head` voided it at a
        // segment retransmitted before: `TCPCB_RETRANS` (ever) in 3.10-3.13, `TCPCB_SACKED_RETRANS`
        // (in flight) in 3.14-3.15.
        let void_if = match config.undo {
            UndoEra::Current => None,
            UndoEra::Linux313 => Some(EVER_RETRANS),
            UndoEra::Linux315 => Some(RETRANS_OUT),
        };
        if let Some(mask) = void_if {
            let retransmitted = (c.snd_una..c.snd_nxt).any(|seq| c.seg(seq).marks & mask != 0);
            c.undo_marker = if retransmitted { None } else { Some(c.snd_una) };
            c.undo_retrans = 0;
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
        c.retrans_at.clear();
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
    fn on_loss_probe(&mut self, flow: u32, now: SimTime, out: &mut Vec<Output>) {
        let Some(c) = self.conns[flow as usize].as_mut().filter(|c| !c.done && c.packets_out() > 0) else { return };
        let probe = if c.snd_nxt < c.written && c.snd_nxt < c.wnd_end {
            c.tlp_retrans = false;
            let p = self.send_new(flow, now);
            self.sent(flow); // `tcp_write_xmit(sk, mss, TCP_NAGLE_OFF, 2, ..)`
            p
        } else {
            c.tlp_retrans = true;
            let seq = c.snd_nxt - 1;
            // 3.10-3.13's `__tcp_retransmit_skb` marks nothing; 3.14 on, `TCPCB_EVER_RETRANS`.
            let ever_retrans = self.config.undo != UndoEra::Linux313;
            Self::retransmit(c, &mut self.stats, flow, seq, now, &self.cutter, Resend::Probe { ever_retrans })
        };
        self.stats.tlp_probes += 1;
        let c = self.conns[flow as usize].as_mut().expect("open");
        c.tlp_high_seq = Some(c.snd_nxt);
        let at = now + c.backed_off_rto(&self.config);
        Self::arm(c, flow, TimerKind::Rto, at, out);
        self.urgent.push_back(probe);
    }

    /// The delayed early retransmit's timer fired (`tcp_resume_early_retransmit`): the RTO is
    /// re-armed, and, early retransmit still on, recovery starts with the head marked lost
    /// (`tcp_update_scoreboard(sk, 1)`) and retransmitted, which runs the RTO from now.
    fn on_early_retrans(&mut self, flow: u32, now: SimTime, out: &mut Vec<Output>) {
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

    /// RACK's reordering timer fired (`tcp_rack_reo_timeout`).
    fn on_reo_timeout(&mut self, flow: u32, now: SimTime, out: &mut Vec<Output>) {
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

impl Endpoint for TcpSender {
    fn open(&mut self, now: SimTime, flow: u32, bytes: u64, out: &mut Vec<Output>) {
        let mut conn = self.new_conn(bytes, now);
        if let Some(m) = self.metrics.get_mut(&Self::destination_of(&self.destination, flow)) {
            m.init(&self.config, &mut conn, now);
        }
        conn.cc.init(&conn.w);
        // The first segments leave now: the RTO (TCP_TIMEOUT_INIT) runs from here.
        Self::set_xmit_timer(&self.config, &mut conn, flow, now, out);
        self.conns[flow as usize] = Some(conn);
        self.active += 1;
        self.unopened -= 1;
        self.ready.push_back(flow);
    }

    fn on_packet(&mut self, now: SimTime, packet: Packet, out: &mut Vec<Output>) {
        debug_assert_eq!(packet.kind, Kind::Ack);
        self.on_ack(now, &packet, false, out);
    }

    fn start(&mut self, now: SimTime, out: &mut Vec<Output>) {
        if let Some(every) = self.config.trace_every {
            out.push(Output::Timer { at: now + every, token: TRACE_TOKEN });
        }
    }

    fn on_timer(&mut self, now: SimTime, token: u64, out: &mut Vec<Output>) {
        if token == TRACE_TOKEN {
            self.sample(now);
            if !self.trace.truncated && (self.active > 0 || self.unopened > 0) {
                let every = self.config.trace_every.expect("tracing");
                out.push(Output::Timer { at: now + every, token: TRACE_TOKEN });
            }
            return;
        }
        let (flow, generation) = super::split_token(token);
        let Some(c) = self.conns[flow as usize].as_mut() else { return };
        match c.timer.fire(now, generation) {
            Fired::Stale => {}
            Fired::Early(at) => out.push(Output::Timer { at, token: timer_token(flow, c.timer.generation()) }),
            Fired::Due => match c.timer_kind {
                TimerKind::Rto => self.on_rto(flow, now, out),
                TimerKind::LossProbe => self.on_loss_probe(flow, now, out),
                TimerKind::ReoTimeout => self.on_reo_timeout(flow, now, out),
                TimerKind::EarlyRetrans => self.on_early_retrans(flow, now, out),
            },
        }
    }

    fn poll_transmit(&mut self, now: SimTime) -> Option<Packet> {
        let p = self.urgent.pop_front().or_else(|| {
            while let Some(&flow) = self.ready.front() {
                if let Some(p) = self.next_segment(flow, now) {
                    return Some(p);
                }
                self.ready.pop_front();
            }
            None
        })?;
        if let Some(c) = self.conns[p.flow as usize].as_mut() {
            c.wmem += packet_truesize(&p);
        }
        Some(p)
    }

    /// TX completion (`tcp_wfree`): the buffer's memory is released, and a
    /// connection held back by TCP small queues may send again (`tcp_tsq_handler`).
    fn on_tx_done(&mut self, _now: SimTime, packet: &Packet, _out: &mut Vec<Output>) {
        if let Some(c) = self.conns[packet.flow as usize].as_mut() {
            c.wmem = c.wmem.saturating_sub(packet_truesize(packet));
            if c.throttled && !c.done {
                c.throttled = false;
                self.ready.push_back(packet.flow);
            }
        }
    }

    fn hears_tx_done(&self) -> bool {
        true
    }

    fn is_idle(&self) -> bool {
        self.active == 0 && self.unopened == 0 && self.urgent.is_empty()
    }

    fn reliable(&self) -> bool {
        true
    }

    fn tcp_stats(&self) -> Option<TcpStats> {
        Some(self.stats())
    }

    fn tcp_trace(&mut self) -> Option<TcpTrace> {
        self.take_trace()
    }
}

/// One row of the TCP trace for connection `flow`; false once the trace is full.
fn trace_row(t: &mut TcpTrace, now: SimTime, flow: u32, c: &Conn) -> bool {
    if t.t_s.len() >= TRACE_MAX_ROWS {
        t.truncated = true;
        return false;
    }
    t.t_s.push(now.as_secs_f64());
    t.flow.push(flow);
    t.cwnd.push(c.w.cwnd);
    t.ssthresh.push((c.w.ssthresh < u32::MAX).then_some(c.w.ssthresh));
    t.srtt_us.push(c.srtt().map(|s| s.0 as f64 / 1e3));
    t.in_flight.push(c.in_flight());
    t.acked.push(c.snd_una);
    t.retransmits.push(c.retransmits);
    t.reordering.push(c.reordering);
    t.state.push(match c.state {
        CaState::Open => "open",
        CaState::Disorder => "disorder",
        CaState::Cwr => "cwr",
        CaState::Recovery => "recovery",
        CaState::Loss => "loss",
    });
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `x` milliseconds.
    fn ms(x: u64) -> SimTime {
        SimTime(x * 1_000_000)
    }

    fn conn(cwnd: u32, srtt_us: u64, min_rtt_us: u64) -> (TcpSender, Conn) {
        let config = TcpConfig { gso: true, ..TcpConfig::test_default() };
        let cutter = Cutter::for_scenario(
            &crate::Scenario::from_json(r#"{"workload": {"requests": 1, "file_size": {"kind": "fixed", "bytes": 1}}, "sender": {"kind": "tcp"}, "bond": {"mode": "balance-rr"}, "links": [{"rate_mbps": 1000}]}"#).unwrap(),
        );
        let sender = TcpSender::new(config, cutter, 1);
        let mut c = sender.new_conn(1 << 30, SimTime::ZERO);
        c.w.cwnd = cwnd;
        c.w.ssthresh = cwnd; // congestion avoidance: pacing at 120%
        c.srtt_us = srtt_us * 8;
        c.min_rtt = Some(SimTime(min_rtt_us * 1_000));
        (sender, c)
    }

    #[test]
    fn tso_autosize_fills_64_kb_on_a_lan_and_about_a_millisecond_on_a_wan() {
        // min_rtt 100 µs >> 9 = 0: the full 64 KB, 45 segments of 1448 bytes.
        let (s, c) = conn(100, 100, 100);
        assert_eq!(c.tso_autosize(&s.config), 65_536 / 1448);
        // min_rtt 10 ms >> 9 = 19: no bonus; 1.2 · 100 · 1448 B / 10 ms = 17.4 MB/s,
        // of which 1/1024 s is 16 968 bytes: 11 segments.
        let (s, c) = conn(100, 10_000, 10_000);
        let rate = 1.2 * 100.0 * 1448.0 / 0.010;
        assert_eq!(c.tso_autosize(&s.config), ((rate / 1024.0) as u64 / 1448) as u32);
        // Never below tcp_min_tso_segs.
        let (s, c) = conn(2, 100_000, 100_000);
        assert_eq!(c.tso_autosize(&s.config), 2);
    }

    /// A sender with one open flow that has sent its first window at time 0.
    fn sent_window(frto: bool) -> TcpSender {
        let (mut s, _) = conn(10, 1_000, 1_000);
        s.config.frto = frto;
        s.config.gso = false;
        let mut out = Vec::new();
        s.open(SimTime::ZERO, 0, 100 * 1448, &mut out);
        let sent = std::iter::from_fn(|| s.poll_transmit(SimTime::ZERO)).count();
        assert_eq!(sent, 10, "the initial window");
        s
    }

    fn sack(ack: u32, block: (u32, u32), now: SimTime) -> Packet {
        ack_with(ack, &[block], 0, now)
    }

    /// An ACK up to `ack` with SACK `blocks` (the first may be a D-SACK), echoing `ts_ecr`.
    fn ack_with(ack: u32, blocks: &[(u32, u32)], ts_ecr: u32, now: SimTime) -> Packet {
        let mut a = Packet::ack(0, ack, now);
        a.seq = 1000; // window
        for (i, &(start, end)) in blocks.iter().enumerate() {
            a.sack[i] = crate::packet::SackBlock { start, end };
        }
        a.sack_len = blocks.len() as u8;
        a.ts_ecr = ts_ecr;
        a
    }

    /// A sender of one flow opened as a stream (`open_stream`): nothing written yet, no GSO.
    fn one_stream() -> (TcpSender, Vec<Output>) {
        let (mut s, _) = conn(10, 1_000, 1_000);
        s.config.gso = false;
        let mut out = Vec::new();
        s.open_stream(SimTime::ZERO, 0, 100 * 1448, &mut out);
        (s, out)
    }

    /// Feeds `c` an RTT sample of `rtt_ms`; `next_round` first ends the round trip
    /// (`snd_una` passes `rtt_seq`). Returns the RTO then, in µs.
    fn sample(s: &TcpSender, c: &mut Conn, rtt_ms: u64, next_round: bool) -> u64 {
        if next_round {
            c.snd_una = c.rtt_seq + 1;
            c.snd_nxt = c.snd_una + 10;
        }
        let rtt = SimTime(rtt_ms * 1_000_000);
        c.rtt_sample(&s.config, rtt, rtt);
        c.rto.0 / 1_000
    }

    #[test]
    fn the_rto_follows_linuxs_rtt_estimator_not_rfc_6298s() {
        let (s, mut c) = conn(10, 1, 1);
        c.srtt_us = 0;
        // First sample, 100 ms: SRTT 100 ms, mdev 2 × 100 ms, RTO 3 × RTT.
        assert_eq!(sample(&s, &mut c, 100, false), 300_000);
        // 20 ms in the same round trip: SRTT 90 ms; the deviation, 80 ms off, grows by
        // (80 - 200/4) / 8 = 3.75 ms only (gain 1/32 for a sample below SRTT), so RTO =
        // 90 + 203.75 ms. (RFC 6298's RTTVAR = 3/4 · 50 + 1/4 · 80 = 57.5 ms gives 90 + 230.)
        assert_eq!(sample(&s, &mut c, 20, false), 293_750);
        assert_eq!((c.srtt(), c.mdev_us, c.rttvar_us), (Some(SimTime(90_000_000)), 203_750, 203_750));

        // The variance term keeps a round trip's largest deviation and decays by a quarter of
        // its excess over the next round's largest, never below `tcp_rto_min`.
        let (s, mut c) = conn(10, 1, 1);
        c.srtt_us = 0;
        assert_eq!(sample(&s, &mut c, 300, false), 900_000); // mdev = rttvar = 600 ms
                                                             // Round 2: mdev 450 ms (no new maximum); the round that ends had 600 ms: no decay.
        assert_eq!(sample(&s, &mut c, 300, true), 900_000);
        assert_eq!((c.mdev_us, c.mdev_max_us, c.rttvar_us), (450_000, 200_000, 600_000));
        // Round 3: mdev 337.5 ms is the round's largest; rttvar 600 - (600 - 337.5) / 4.
        assert_eq!(sample(&s, &mut c, 300, true), 300_000 + 534_375);
        // (RFC 6298 would give 300 + 4 · 84.375 = 637.5 ms here.)
        // Steady samples: the deviation dies away and the RTO settles at SRTT + tcp_rto_min, or
        // 3 µs above (the integer decay stops there: a quarter of 3 µs is 0).
        let rto = (0..100).map(|_| sample(&s, &mut c, 300, true)).last();
        assert_eq!(rto, Some(500_003));
    }

    #[test]
    fn the_minimum_rtt_is_the_newest_acked_segments_and_srtt_the_oldests() {
        // Segments sent at 0 and 12 µs, ACKed together at 100 µs: SRTT (`seq_rtt_us`, the oldest)
        // 100 µs, the minimum RTT and the congestion control's sample (`ca_rtt_us`, the newest) 88 µs.
        let (mut s, _) = conn(10, 1_000, 1_000);
        s.config.gso = false;
        let mut out = Vec::new();
        s.open(SimTime::ZERO, 0, 100 * 1448, &mut out);
        let c = s.conns[0].as_mut().unwrap();
        (c.srtt_us, c.min_rtt) = (0, None);
        assert!(s.poll_transmit(SimTime::ZERO).is_some());
        assert!(s.poll_transmit(SimTime(12_000)).is_some());
        s.on_packet(SimTime(100_000), ack_with(2, &[], 0, SimTime(100_000)), &mut out);
        let c = s.conns[0].as_ref().unwrap();
        assert_eq!((c.srtt(), c.min_rtt), (Some(SimTime(100_000)), Some(SimTime(88_000))));
    }

    #[test]
    fn a_loss_probe_after_a_write_from_idle_comes_two_rtts_later_when_several_segments_leave() {
        // `tcp_schedule_loss_probe` after the write's segments left: 5 out, so 2·SRTT + 2 ms, not
        // the `tcp_rto_min` that only a single outstanding segment adds.
        let (mut s, mut out) = one_stream();
        s.write(SimTime::ZERO, 0, 1, &mut out);
        assert!(s.poll_transmit(SimTime::ZERO).is_some());
        s.on_packet(ms(1), ack_with(1, &[], 0, ms(1)), &mut out);
        assert_eq!(s.conns[0].as_ref().unwrap().srtt(), Some(ms(1)));
        out.clear();
        s.write(ms(2), 0, 5, &mut out);
        let timer = out.iter().find_map(|o| if let Output::Timer { at, .. } = o { Some(*at) } else { None });
        assert_eq!(timer, Some(ms(2 + 2 + 2)));
        assert_eq!(s.conns[0].as_ref().unwrap().timer_kind, TimerKind::LossProbe);
    }

    #[test]
    fn linux_3_10s_loss_probe_waits_at_least_ten_milliseconds_of_jiffies() {
        // `tlp_timeout = "linux-3.10"`: max(2·SRTT, msecs_to_jiffies(10)); with one segment out at
        // least 1.5·SRTT + TCP_DELACK_MAX. SRTT 1 ms: 10 ms at HZ = 1000, 12 ms (3 jiffies) at 250.
        for (hz, segments, pto) in [(1000, 5, ms(10)), (250, 5, ms(12)), (1000, 1, SimTime(201_500_000))] {
            let (mut s, mut out) = one_stream();
            s.config.tlp_floor = Some(bondsim_bond::monitor::jiffies_period(10.0, hz));
            s.write(SimTime::ZERO, 0, 1, &mut out);
            assert!(s.poll_transmit(SimTime::ZERO).is_some());
            s.on_packet(ms(1), ack_with(1, &[], 0, ms(1)), &mut out);
            out.clear();
            s.write(ms(2), 0, segments, &mut out);
            let timer = out.iter().find_map(|o| if let Output::Timer { at, .. } = o { Some(*at) } else { None });
            let c = s.conns[0].as_ref().unwrap();
            // (Never after the RTO: with one segment out the RTO, SRTT + 200 ms, comes first.)
            let rto_at = ms(2) + c.backed_off_rto(&s.config);
            assert_eq!(timer, Some((ms(2) + pto).min(rto_at)), "hz {hz}, {segments} out");
            assert_eq!(c.timer_kind, TimerKind::LossProbe);
        }
    }

    #[test]
    fn a_window_found_full_lets_every_ack_of_that_window_grow_cwnd() {
        // 20 segments fill a window of 20 (congestion avoidance), then the application has nothing
        // more: `tcp_cwnd_validate` keeps `is_cwnd_limited` until snd_una passes the window, so
        // every ACK of it may grow cwnd; judged per ACK, only the first (20 in flight before it) did.
        let (mut s, mut out) = one_stream();
        let c = s.conns[0].as_mut().unwrap();
        (c.w.cwnd, c.w.ssthresh) = (20, 20);
        s.write(SimTime::ZERO, 0, 20, &mut out);
        assert_eq!(std::iter::from_fn(|| s.poll_transmit(SimTime::ZERO)).count(), 20);
        for k in 1..=10u32 {
            let at = SimTime(1_000_000 + u64::from(k) * 10_000);
            s.on_packet(at, ack_with(k, &[], 0, at), &mut out);
            assert!(s.conns[0].as_ref().unwrap().w.cwnd_limited, "ACK {k}");
        }
    }

    #[test]
    fn pacing_runs_at_twice_the_rate_only_below_half_of_ssthresh() {
        // `tcp_update_pacing_rate`: 200% while cwnd < ssthresh / 2, then 120% ("approaching end of
        // slow start"), though still in slow start.
        let (s, mut c) = conn(40, 1_000, 1_000);
        let base = 1448.0 * 40.0 / 1e-3;
        c.w.ssthresh = 100;
        assert_eq!(c.pacing_rate(&s.config), Some(base * 2.0));
        c.w.ssthresh = 60;
        assert!(c.w.in_slow_start());
        assert_eq!(c.pacing_rate(&s.config), Some(base * 1.2));
    }

    /// `sent_window` with an RTT of `rtt` measured before.
    fn sent_window_with_rtt(rtt: SimTime) -> TcpSender {
        let mut s = sent_window(false);
        let c = s.conns[0].as_mut().unwrap();
        c.rtt_sample(&s.config, rtt, rtt);
        s
    }

    #[test]
    fn fack_counts_the_holes_below_the_highest_sack_until_reordering_is_seen() {
        let ms = SimTime(1_000_000);
        let lost = |c: &Conn| (c.snd_una..c.snd_nxt).filter(|&q| c.seg(q).marks & LOST != 0).collect::<Vec<_>>();
        let after = |fack: bool, blocks: &[&[(u32, u32)]]| {
            let mut s = sent_window_with_rtt(ms);
            s.config.rack = false;
            s.config.fack = fack;
            s.conns[0].as_mut().unwrap().fack_on = fack;
            let mut out = Vec::new();
            for (k, b) in blocks.iter().enumerate() {
                let now = SimTime(ms.0 * (k as u64 + 2));
                s.on_packet(now, ack_with(0, b, 0, now), &mut out);
            }
            s
        };
        // One SACK of the last of 10 segments: FACK counts 10 > 3, the first 7 are lost and
        // fast recovery starts; RFC 6675 counts one SACKed segment and waits.
        let s = after(true, &[&[(9, 10)]]);
        let c = s.conns[0].as_ref().unwrap();
        assert_eq!((lost(c), c.state), ((0..7).collect(), CaState::Recovery));
        let s = after(false, &[&[(9, 10)]]);
        let c = s.conns[0].as_ref().unwrap();
        assert_eq!((lost(c), c.state), (Vec::<u32>::new(), CaState::Disorder));
        // Three up to the SACK are not more than the degree; four are: the head alone is lost.
        let s = after(true, &[&[(2, 3)]]);
        assert_eq!(lost(s.conns[0].as_ref().unwrap()), Vec::<u32>::new());
        let s = after(true, &[&[(2, 4)]]);
        assert_eq!(lost(s.conns[0].as_ref().unwrap()), vec![0]);
        // In Recovery a duplicate ACK marks the head even when the highest SACK is within the
        // degree of it; an ACK that moves snd_una on does not. (The ACK covers the retransmission
        // only: an original ACKed below the SACK would be reordering, and turn FACK off.)
        let mut s = after(true, &[&[(3, 4)]]);
        assert_eq!(lost(s.conns[0].as_ref().unwrap()), vec![0], "fackets_out 4: the head");
        let at = |k: u64| SimTime(ms.0 * k);
        let mut out = Vec::new();
        assert_eq!(s.poll_transmit(at(3)).map(|p| p.seq), Some(0), "its retransmission");
        s.on_packet(at(4), ack_with(1, &[(3, 4)], 0, at(4)), &mut out);
        let c = s.conns[0].as_ref().unwrap();
        assert_eq!((c.state, c.fack_on, lost(c)), (CaState::Recovery, true, vec![]), "fackets_out 3: nothing");
        // Not a duplicate (`is_dupack` false): an old ACK (below snd_una, overtaken on the way
        // back), one on a data segment, or one that advertises a larger window; then a duplicate
        // marks the head.
        s.on_packet(at(5), ack_with(0, &[(3, 4)], 0, at(5)), &mut out);
        assert_eq!(lost(s.conns[0].as_ref().unwrap()), Vec::<u32>::new(), "an old ACK marks nothing");
        let mut data = ack_with(1, &[(3, 4)], 0, at(5));
        data.kind = Kind::DataAck;
        s.on_piggybacked_ack(at(5), &data, &mut out);
        assert_eq!(lost(s.conns[0].as_ref().unwrap()), Vec::<u32>::new(), "an ACK on data marks nothing");
        let mut wider = ack_with(1, &[(3, 4)], 0, at(5));
        wider.seq += 1;
        s.on_packet(at(5), wider, &mut out);
        assert_eq!(lost(s.conns[0].as_ref().unwrap()), Vec::<u32>::new(), "a window update marks nothing");
        let mut dup = ack_with(1, &[(3, 4)], 0, at(5));
        dup.seq = wider.seq;
        s.on_packet(at(5), dup, &mut out);
        assert_eq!(lost(s.conns[0].as_ref().unwrap()), vec![1], "the duplicate marks the head");
        // A retransmission is lost once a segment sent after it is SACKed (`tcp_mark_lost_retrans`):
        // segment 0 is resent while 10 is the next new one; a SACK of 10 declares it lost again.
        for sack_new in [false, true] {
            let mut s = after(true, &[&[(3, 4)]]);
            s.conns[0].as_mut().unwrap().w.cwnd = 20;
            let sent: Vec<u32> = std::iter::from_fn(|| s.poll_transmit(at(3))).map(|p| p.seq).take(3).collect();
            assert_eq!(sent, vec![0, 10, 11], "the retransmission, then new data");
            let blocks: &[(u32, u32)] = if sack_new { &[(10, 11), (3, 4)] } else { &[(3, 4)] };
            s.on_packet(at(4), ack_with(0, blocks, 0, at(4)), &mut out);
            let c = s.conns[0].as_ref().unwrap();
            let again = c.seg(0).marks & RETRANS_OUT == 0;
            assert_eq!(again, sack_new, "segment 0's retransmission judged lost: {again}");
            assert_eq!(c.retrans_out, u32::from(!sack_new));
            if sack_new {
                assert_eq!(s.poll_transmit(at(5)).map(|p| (p.seq, p.retransmit)), Some((0, true)), "resent");
            }
        }
        // A SACK below the highest (an original, never retransmitted) is reordering: the degree
        // rises to its distance and FACK is off for the connection.
        let s = after(true, &[&[(4, 5)], &[(1, 2), (4, 5)]]);
        let c = s.conns[0].as_ref().unwrap();
        assert_eq!((c.reordering, c.fack_on), (4, false));
    }

    #[test]
    fn a_timeout_resets_the_reordering_degree_only_from_open_or_disorder() {
        // Degree 5, three segments SACKed (the initial degree's worth): in Disorder (FACK counts
        // 5, not above 5) the timeout brings the degree back to 3; in Recovery (FACK counts 10)
        // it keeps it (`tcp_enter_loss`: `icsk_ca_state <= TCP_CA_Disorder && sacked_out >= ...`).
        let ms = SimTime(1_000_000);
        for (block, state, after_rto) in [((2, 5), CaState::Disorder, 3), ((7, 10), CaState::Recovery, 5)] {
            let mut s = sent_window_with_rtt(ms);
            s.config.rack = false;
            s.config.fack = true;
            let c = s.conns[0].as_mut().unwrap();
            c.fack_on = true;
            c.reordering = 5;
            let mut out = Vec::new();
            s.on_packet(SimTime(2 * ms.0), ack_with(0, &[block], 0, SimTime(2 * ms.0)), &mut out);
            assert_eq!(s.conns[0].as_ref().unwrap().state, state);
            s.on_rto(0, SimTime(300 * ms.0), &mut out);
            assert_eq!(s.conns[0].as_ref().unwrap().reordering, after_rto, "{state:?}");
        }
    }

    #[test]
    fn an_ack_covering_a_retransmission_takes_no_rtt_from_the_originals_it_also_covers() {
        let ms = SimTime(1_000_000);
        for echo in [true, false] {
            let mut s = sent_window_with_rtt(ms);
            let mut out = Vec::new();
            let timeout = SimTime::from_secs_f64(1.0);
            s.on_rto(0, timeout, &mut out); // retransmits segment 0
                                            // 1 ms later one ACK covers the retransmission and segment 1, an original
                                            // sent at 0: its "RTT" would be the whole second (Karn's rule forbids it).
                                            // The receiver echoes the retransmission's TSval (RFC 7323 §4.3: it filled the
                                            // left edge), which times the retransmission itself.
            let later = timeout + ms;
            let ts = if echo { super::super::ts_of(timeout) } else { 0 };
            s.on_packet(later, ack_with(2, &[], ts, later), &mut out);
            let c = s.conns[0].as_ref().unwrap();
            if echo {
                // One sample of 1 ms on the millisecond clock: SRTT stays at 1 ms.
                assert_eq!(c.srtt(), Some(ms), "the timestamp echo times the retransmission");
                assert_eq!(c.backoff, 0, "a valid sample resets the backoff");
            } else {
                assert_eq!(c.srtt(), Some(ms), "no sample at all");
                assert_eq!(c.backoff, 1, "no valid sample: the backoff stays");
            }
        }
    }

    #[test]
    fn racks_window_widens_once_a_round_trip_however_many_dsacks_the_round_brings() {
        // `tcp_rack_update_reo_wnd`: a D-SACK for data sent before the window last widened
        // ("a rtt has not passed since we adjusted reo_wnd") is disregarded.
        let ms = SimTime(1_000_000);
        let mut s = sent_window_with_rtt(ms);
        let mut out = Vec::new();
        let c = s.conns[0].as_mut().unwrap();
        c.reord_seen = 1; // reordering seen: D-SACKs widen the window
        c.retransmits = 10; // and are not dubious (fewer duplicates than retransmissions)
        let steps = |s: &TcpSender| s.conns[0].as_ref().unwrap().rack.reo_wnd_steps;
        // 0-3 delivered; what is sent next leaves with 4 delivered.
        let t = SimTime(2 * ms.0);
        s.on_packet(t, ack_with(4, &[], 0, t), &mut out);
        s.conns[0].as_mut().unwrap().wmem = 0;
        let second: Vec<u32> = std::iter::from_fn(|| s.poll_transmit(t)).map(|p| p.seq).collect();
        assert!(second.len() >= 3 && second[0] == 10, "{second:?}");
        // A D-SACK on an ACK delivering only first-window data (sent with 0 delivered: the rate
        // sample has no prior_delivered) waits; the next delivery of later data widens: 2 steps.
        let t = SimTime(3 * ms.0);
        s.on_packet(t, ack_with(5, &[(1, 2)], 0, t), &mut out);
        assert_eq!(steps(&s), 1);
        s.on_packet(t, ack_with(5, &[(10, 11)], 0, t), &mut out);
        assert_eq!(steps(&s), 2, "the pending D-SACK widened the window");
        // More D-SACKs in the same round, on ACKs delivering data sent before the widening: no more.
        for (i, dup) in [2u32, 3].into_iter().enumerate() {
            let t = SimTime(3 * ms.0 + 100_000 * (i as u64 + 1));
            s.on_packet(t, ack_with(5, &[(dup, dup + 1), (10, 12 + i as u32)], 0, t), &mut out);
        }
        assert_eq!(steps(&s), 2, "one step per round trip");
        // Data sent after the widening, delivered with a D-SACK: the next round, one more step.
        let t = SimTime(4 * ms.0);
        s.conns[0].as_mut().unwrap().wmem = 0;
        let third: Vec<u32> = std::iter::from_fn(|| s.poll_transmit(t)).map(|p| p.seq).collect();
        let late = *third.first().expect("room to send");
        let t = SimTime(5 * ms.0);
        s.on_packet(t, ack_with(5, &[(4, 5), (late, late + 1)], 0, t), &mut out);
        assert_eq!(steps(&s), 3);
    }

    #[test]
    fn a_partial_ack_echoing_the_originals_timestamp_holds_the_losses_then_undoes() {
        // `tcp_try_undo_partial`: in Recovery, an ACK that advances snd_una below high_seq and
        // echoes a TSval older than the first retransmission was triggered by the original.
        let ms = SimTime(1_000_000);
        let mut s = in_recovery_after_a_sack_of_3_to_9();
        let mut out = Vec::new();
        let t = SimTime(5 * ms.0);
        let c = s.conns[0].as_mut().unwrap();
        c.wmem = 0;
        let resent: Vec<u32> =
            std::iter::from_fn(|| s.poll_transmit(t)).filter(|p| p.retransmit).map(|p| p.seq).collect();
        assert!(!resent.is_empty() && resent[0] == 0, "{resent:?}");
        let c = s.conns[0].as_ref().unwrap();
        let (cwnd_before, reordering_before) = (c.prior_cwnd, c.reordering);
        // The original of 0 arrives late: its ACK echoes the window's TSval (from 0 ms, before
        // the retransmissions at 5 ms). Retransmissions are out: hold, mark nothing more lost.
        let early = super::super::ts_of(SimTime::ZERO);
        let t = SimTime(6 * ms.0);
        s.on_packet(t, ack_with(1, &[(3, 10)], early, t), &mut out);
        let c = s.conns[0].as_ref().unwrap();
        assert_eq!(c.state, CaState::Recovery);
        assert!(c.reordering > reordering_before, "reordering raised from the timestamps: {}", c.reordering);
        assert_eq!((c.reord_seen, s.stats.undos), (1, 0));
        // The originals of 1 and 2 too, and now no retransmission is out unanswered... once the
        // ACK covers them all: the reduction is undone, the connection kept open (SACKed data
        // remain: Disorder).
        let t = SimTime(7 * ms.0);
        s.on_packet(t, ack_with(3, &[(3, 10)], early, t), &mut out);
        let c = s.conns[0].as_ref().unwrap();
        assert_eq!(s.stats.undos, 1);
        assert_eq!(c.state, CaState::Disorder);
        assert!(c.w.cwnd >= cwnd_before, "cwnd {} restored to {cwnd_before}", c.w.cwnd);
    }

    /// [`sent_window_with_rtt`] (1 ms) in Recovery: 3-9 SACKed at 5 ms, so RACK marked 0-2 lost.
    fn in_recovery_after_a_sack_of_3_to_9() -> TcpSender {
        let mut s = sent_window_with_rtt(SimTime(1_000_000));
        let t = SimTime(5_000_000);
        s.on_packet(t, ack_with(0, &[(3, 10)], 0, t), &mut Vec::new());
        let c = s.conns[0].as_ref().unwrap();
        assert_eq!((c.state, c.lost_out, c.high_seq), (CaState::Recovery, 3, 10));
        s
    }

    /// [`in_recovery_after_a_sack_of_3_to_9`], segment `retransmitted` retransmitted once, the
    /// recovery's only retransmission.
    fn in_recovery_with_one_retransmission(retransmitted: u32) -> TcpSender {
        let mut s = in_recovery_after_a_sack_of_3_to_9();
        let c = s.conns[0].as_mut().unwrap();
        c.seg_mut(retransmitted).marks |= EVER_RETRANS;
        (c.retransmits, c.undo_retrans, c.reord_seen) = (1, 1, 1);
        s
    }

    #[test]
    fn a_dsack_undo_keeps_the_losses_still_evident_and_recovers_them_at_once() {
        // `tcp_try_undo_dsack` calls `tcp_undo_cwnd_reduction(sk, false)`: the marks stay, and
        // `tcp_time_to_recover` (lost_out) starts a new recovery on the same ACK, even one that
        // delivers nothing new.
        let mut s = in_recovery_with_one_retransmission(3);
        let mut out = Vec::new();
        // A D-SACK (inside the SACK block) says that retransmission was needless.
        let t = SimTime(6_000_000);
        s.on_packet(t, ack_with(0, &[(3, 4), (3, 10)], 0, t), &mut out);
        let c = s.conns[0].as_ref().unwrap();
        assert_eq!(s.stats.undos, 1);
        assert_eq!((c.state, c.lost_out), (CaState::Recovery, 3), "0-2 are still lost: a new recovery");
        assert_eq!(s.stats.fast_recoveries, 2);
    }

    #[test]
    fn a_dsack_of_a_retransmitted_segment_already_sacked_is_reordering() {
        // `tcp_sacktag_one`: "if ((sacked & TCPCB_SACKED_ACKED) && before(start_seq, state->reord))
        // state->reord = start_seq;" for a D-SACK of a retransmitted segment.
        let mut s = in_recovery_after_a_sack_of_3_to_9();
        let mut out = Vec::new();
        let c = s.conns[0].as_mut().unwrap();
        assert_eq!((c.reordering, c.reord_seen), (3, 0));
        c.seg_mut(5).marks |= EVER_RETRANS; // SACKed, and once retransmitted
        c.retransmits = 1;
        let t = SimTime(6_000_000);
        s.on_packet(t, ack_with(0, &[(5, 6), (3, 10)], 0, t), &mut out);
        let c = s.conns[0].as_ref().unwrap();
        assert_eq!((c.reordering, c.reord_seen), (10 - 5, 1), "fack 10 less the D-SACKed 5");
    }

    #[test]
    fn an_ack_below_snd_una_only_tags_its_sack_blocks() {
        // `tcp_ack`: "if (before(ack, prior_snd_una)) ... goto old_ack;" where only
        // `tcp_sacktag_write_queue` and `tcp_fastretrans_alert` run.
        let ms = SimTime(1_000_000);
        let mut s = sent_window_with_rtt(ms);
        let mut out = Vec::new();
        let t = SimTime(2 * ms.0);
        s.on_packet(t, ack_with(5, &[], 0, t), &mut out);
        s.conns[0].as_mut().unwrap().wmem = 0;
        let sent = std::iter::from_fn(|| s.poll_transmit(t)).count();
        assert!(sent >= 3, "room for new data");
        let c = s.conns[0].as_ref().unwrap();
        let (cwnd, srtt, delivered) = (c.w.cwnd, c.srtt(), c.delivered);
        // An ACK overtaken by the one above, reporting segment 11 (sent at 2 ms) 3 ms later.
        let t = SimTime(5 * ms.0);
        s.on_packet(t, ack_with(3, &[(11, 12)], 0, t), &mut out);
        let c = s.conns[0].as_ref().unwrap();
        assert_eq!((c.snd_una, c.sacked_out, c.delivered), (5, 1, delivered + 1), "the SACK is tagged");
        assert_eq!((c.w.cwnd, c.srtt()), (cwnd, srtt), "no window growth, no RTT sample");
    }

    #[test]
    fn racks_window_persists_by_the_recoveries_linux_counts() {
        let ms = SimTime(1_000_000);
        // A D-SACK on the ACK that ends a recovery: `tcp_try_undo_recovery` undoes it first, so
        // `tcp_try_undo_dsack` (which would keep the window one recovery longer) does not run.
        let mut s = in_recovery_with_one_retransmission(0);
        let mut out = Vec::new();
        assert_eq!(s.conns[0].as_ref().unwrap().rack.reo_wnd_persist, 0);
        let t = SimTime(6 * ms.0);
        s.on_packet(t, ack_with(10, &[(0, 1)], 0, t), &mut out);
        let c = s.conns[0].as_ref().unwrap();
        assert_eq!((s.stats.undos, c.state, c.rack.reo_wnd_persist), (1, CaState::Open, 0));
        // A timeout's recovery that ends without an undo counts down like a fast recovery's
        // (`tcp_process_loss` → `tcp_try_undo_recovery`: "else if (tp->rack.reo_wnd_persist) ...--").
        let mut s = sent_window(false);
        s.conns[0].as_mut().unwrap().rack.reo_wnd_persist = 5;
        let t = SimTime::from_secs_f64(1.0);
        s.on_rto(0, t, &mut out);
        let later = t + ms;
        s.on_packet(later, ack_with(10, &[], 0, later), &mut out);
        let c = s.conns[0].as_ref().unwrap();
        assert_eq!((s.stats.undos, c.state, c.rack.reo_wnd_persist), (0, CaState::Open, 4));
    }

    #[test]
    fn an_ack_of_nothing_new_leaves_racks_reordering_timer_pending() {
        let ms = SimTime(1_000_000);
        let mut s = sent_window_with_rtt(SimTime(4 * ms.0));
        let mut out = Vec::new();
        // 4 ms after the window left, segment 5 is SACKed: 0-4, sent at the same instant
        // before it, are late or lost. RACK (`tcp_rack_detect_loss`) waits RACK.rtt + one
        // reo_wnd step (min_rtt / 4 = 1 ms) from their send time, then TCP_TIMEOUT_MIN.
        let t = SimTime(4 * ms.0);
        s.on_packet(t, ack_with(0, &[(5, 6)], 0, t), &mut out);
        let c = s.conns[0].as_ref().unwrap();
        let due = SimTime(4 * ms.0 + ms.0) + REO_SLACK;
        assert_eq!((c.timer_kind, c.timer.deadline()), (TimerKind::ReoTimeout, Some(due)));
        // A broadcast copy of segment 5 arrives: a D-SACK inside the SACK block, ACKing
        // nothing (no FLAG_SET_XMIT_TIMER). The reordering timer stays.
        let copy = t + SimTime(10_000);
        s.on_packet(copy, ack_with(0, &[(5, 6), (5, 6)], 0, copy), &mut out);
        let c = s.conns[0].as_ref().unwrap();
        assert_eq!((c.timer_kind, c.timer.deadline()), (TimerKind::ReoTimeout, Some(due)));
        // It fires: the five are lost, recovery starts and segment 0 is retransmitted
        // (the window's packets left the NIC long ago: nothing is held below TCP).
        let token = timer_token(0, c.timer.generation());
        s.on_timer(due, token, &mut out);
        let c = s.conns[0].as_mut().unwrap();
        assert_eq!((c.state, c.lost_out), (CaState::Recovery, 5));
        c.wmem = 0;
        let p = s.poll_transmit(due).expect("a retransmission");
        assert!(p.retransmit && p.seq == 0, "{p:?}");
    }

    #[test]
    fn what_rack_finds_on_the_ack_that_undoes_a_timeout_survives_the_undo() {
        let ms = SimTime(1_000_000);
        let mut s = sent_window_with_rtt(ms);
        let mut out = Vec::new();
        let timeout = SimTime::from_secs_f64(1.0);
        // The timeout marks all ten lost and retransmits segment 0.
        s.on_rto(0, timeout, &mut out);
        // A D-SACK said the retransmission was needless (undo_retrans = 0, as
        // `tcp_check_dsack` leaves it); then one ACK covers the retransmission of 0 and
        // SACKs 5, sent at 0. `tcp_try_undo_loss` undoes the timeout (unmarking every
        // loss), then RACK judges the others: all sent at 0, RACK.rtt + reo_wnd (1 ms +
        // min_rtt/4) before the retransmission that was delivered, so lost.
        s.conns[0].as_mut().unwrap().undo_retrans = 0;
        let later = timeout + ms;
        s.on_packet(later, ack_with(1, &[(5, 6)], 0, later), &mut out);
        let c = s.conns[0].as_ref().unwrap();
        assert_eq!(s.stats.undos, 1);
        assert_eq!((c.state, c.lost_out), (CaState::Recovery, 8), "1-4 and 6-9");
    }

    #[test]
    fn a_dsack_counts_toward_an_undo_only_while_duplicates_do_not_outnumber_retransmissions() {
        let ms = SimTime(1_000_000);
        for (earlier_dups, undone) in [(0, true), (5, false)] {
            let mut s = sent_window_with_rtt(ms);
            let mut out = Vec::new();
            let t = SimTime(2 * ms.0);
            s.on_packet(t, ack_with(4, &[], 0, t), &mut out);
            // A recovery that began at 0 retransmitted one segment (undo_retrans = 1), and
            // the receiver reported `earlier_dups` duplicates before (a broadcast bond's copies).
            let c = s.conns[0].as_mut().unwrap();
            c.retransmits = 1;
            c.undo_marker = Some(0);
            c.undo_retrans = 1;
            c.dsack_dups = earlier_dups;
            // A D-SACK of segment 1, below snd_una: Linux cannot tell whether it was
            // retransmitted ("dumb counting", `tcp_check_dsack`) and counts it, unless
            // `tcp_dsack_seen` finds it dubious (more duplicates than retransmissions).
            let t = SimTime(3 * ms.0);
            s.on_packet(t, ack_with(4, &[(1, 2)], 0, t), &mut out);
            let c = s.conns[0].as_ref().unwrap();
            assert_eq!(c.undo_marker.is_none(), undone, "{earlier_dups} earlier duplicates");
            assert_eq!(s.stats.dsacks_received, 1);
            assert_eq!(s.stats.spurious_retransmits, 0, "segment 1 was never retransmitted");
        }
    }

    #[test]
    fn in_open_an_ack_that_only_moves_snd_una_on_runs_no_state_machine() {
        // Open after an undo, with segment 1 once retransmitted and the first retransmission's
        // time kept. `tcp_ack_is_dubious` is false for an ACK that only acknowledges 0: Linux
        // runs no `tcp_fastretrans_alert`, so the state stays Open and the stamp is kept (the
        // model used to run `tcp_try_keep_open` on it: Disorder, the head being retransmitted).
        let ms = SimTime(1_000_000);
        let mut s = sent_window_with_rtt(ms);
        let c = s.conns[0].as_mut().unwrap();
        c.retrans_stamp = Some(SimTime(3 * ms.0));
        c.seg_mut(1).marks |= EVER_RETRANS;
        let mut out = Vec::new();
        let t = SimTime(4 * ms.0);
        s.on_packet(t, ack_with(1, &[], 0, t), &mut out);
        let c = s.conns[0].as_ref().unwrap();
        assert_eq!((c.state, c.retrans_stamp), (CaState::Open, Some(SimTime(3 * ms.0))));
        // A duplicate of it is dubious: step D forgets the stamp whatever was retransmitted,
        // and `tcp_try_keep_open` moves to Disorder (`tcp_any_retrans_done`: the head was).
        let t = SimTime(5 * ms.0);
        s.on_packet(t, ack_with(1, &[], 0, t), &mut out);
        let c = s.conns[0].as_ref().unwrap();
        assert_eq!((c.state, c.retrans_stamp), (CaState::Disorder, None));
    }

    #[test]
    fn the_first_pure_ack_after_the_peers_data_is_a_window_update_not_a_duplicate() {
        // A peer that sends data too (a ping-pong's): its data segment moves the sequence number
        // the window was last taken at (`snd_wl1`), so its next pure ACK, though it acknowledges
        // nothing new, updates the window (`tcp_may_update_window`) and is no duplicate: in Open
        // not dubious, the first retransmission's time kept. The one after it is a duplicate.
        let ms = SimTime(1_000_000);
        let mut s = sent_window_with_rtt(ms);
        let mut out = Vec::new();
        let t = SimTime(2 * ms.0);
        s.on_packet(t, ack_with(1, &[], 0, t), &mut out);
        s.conns[0].as_mut().unwrap().retrans_stamp = Some(ms);
        let data = Packet { kind: Kind::DataAck, ..ack_with(1, &[], 0, t) };
        s.on_piggybacked_ack(SimTime(3 * ms.0), &data, &mut out);
        let t = SimTime(4 * ms.0);
        s.on_packet(t, ack_with(1, &[], 0, t), &mut out);
        assert_eq!(s.conns[0].as_ref().unwrap().retrans_stamp, Some(ms), "a window update");
        let t = SimTime(5 * ms.0);
        s.on_packet(t, ack_with(1, &[], 0, t), &mut out);
        assert_eq!(s.conns[0].as_ref().unwrap().retrans_stamp, None, "a duplicate: dubious");
    }

    #[test]
    fn a_dsack_on_an_ack_that_moves_snd_una_is_news_to_todays_kernels_only() {
        // In Open, one needless retransmission to undo (undo_retrans = 1). An ACK of 4 to 5 that
        // D-SACKs segment 1: today's `FLAG_CA_ALERT` holds `FLAG_DSACKING_ACK`, so
        // `tcp_fastretrans_alert` runs and `tcp_try_undo_dsack` undoes at once; 3.x's did not,
        // and the undo waits for the next dubious ACK (here a duplicate).
        let ms = SimTime(1_000_000);
        for era in [UndoEra::Current, UndoEra::Linux313] {
            let mut s = sent_window_with_rtt(ms);
            s.config.undo = era;
            let mut out = Vec::new();
            let t = SimTime(2 * ms.0);
            s.on_packet(t, ack_with(4, &[], 0, t), &mut out);
            let c = s.conns[0].as_mut().unwrap();
            (c.retransmits, c.undo_marker, c.undo_retrans) = (1, Some(0), 1);
            let t = SimTime(3 * ms.0);
            s.on_packet(t, ack_with(5, &[(1, 2)], 0, t), &mut out);
            assert_eq!(s.stats.dsacks_received, 1, "{era:?}");
            assert_eq!(s.stats.undos, u64::from(era == UndoEra::Current), "{era:?}");
            let t = SimTime(4 * ms.0);
            s.on_packet(t, ack_with(5, &[], 0, t), &mut out);
            assert_eq!(s.stats.undos, 1, "{era:?}: the duplicate is dubious in every era");
        }
    }

    #[test]
    fn a_duplicate_ack_that_shows_a_timeout_needless_undoes_it_in_3x_only() {
        // After a timeout at 1 s (its retransmission stamped then), a duplicate ACK echoes the
        // window's TSval of 0 ms: the original arrived (`tcp_packet_delayed`). 3.10-3.18's
        // `tcp_process_loss` calls `tcp_try_undo_loss` on every ACK in Loss and undoes; today's
        // only on an ACK that moves snd_una. An undo also resets the timeouts counted toward
        // giving the connection up (`icsk_retransmits`).
        for era in [UndoEra::Current, UndoEra::Linux315] {
            let mut s = sent_window(false);
            s.config.undo = era;
            let mut out = Vec::new();
            s.on_rto(0, SimTime::from_secs_f64(1.0), &mut out);
            let c = s.conns[0].as_ref().unwrap();
            assert_eq!((c.state, c.timeouts, c.retrans_stamp.is_some()), (CaState::Loss, 1, true), "{era:?}");
            let early = super::super::ts_of(SimTime::ZERO);
            let t = SimTime::from_secs_f64(1.001);
            s.on_packet(t, ack_with(0, &[], early, t), &mut out);
            let c = s.conns[0].as_ref().unwrap();
            let undone = era != UndoEra::Current;
            assert_eq!(s.stats.undos, u64::from(undone), "{era:?}");
            // (Out of Loss into Open, then `tcp_try_to_open` keeps it in Disorder: the head's
            // retransmission is still out.)
            assert_eq!(c.state, if undone { CaState::Disorder } else { CaState::Loss }, "{era:?}");
            assert_eq!(c.timeouts, u32::from(!undone), "{era:?}");
        }
    }

    #[test]
    fn a_closing_connection_leaves_its_destinations_metrics_as_tcp_update_metrics_does() {
        // (cwnd, ssthresh, state, reordering) at close → the entry's (ssthresh, reordering), from
        // an entry holding `before`, with the slow-start threshold kept (3.x) or not (today).
        let close = |keep: bool, before: (u32, u32), cwnd: u32, ssthresh: u32, state: CaState, reordering: u32| {
            let (mut s, _) = conn(10, 1_000, 1_000);
            s.config.ssthresh_metrics = keep;
            let mut c = s.new_conn(1_000, SimTime::ZERO);
            (c.w.cwnd, c.w.ssthresh, c.state, c.reordering, c.srtt_us) = (cwnd, ssthresh, state, reordering, 8_000);
            let mut m = Metrics { ssthresh: before.0, reordering: before.1, stamp: SimTime::ZERO };
            m.update(&s.config, &c, SimTime(1_000_000));
            (m.ssthresh, m.reordering)
        };
        let infinite = TCP_INFINITE_SSTHRESH;
        // Initial slow start: a threshold kept grows to half the window, none is made.
        assert_eq!(close(true, (0, 0), 40, infinite, CaState::Open, 3), (0, 0));
        assert_eq!(close(true, (15, 0), 40, infinite, CaState::Open, 3), (20, 0));
        // Congestion avoidance in Open: the larger of half the window and the threshold, and
        // the reordering degree is not saved there.
        assert_eq!(close(true, (0, 0), 40, 30, CaState::Open, 9), (30, 0));
        assert_eq!(close(true, (50, 0), 80, 30, CaState::Open, 9), (40, 0));
        // Slow start after a reduction: the threshold grows only, the reordering degree too when
        // the connection raised its own above `tcp_reordering`.
        assert_eq!(close(true, (20, 5), 8, 30, CaState::Open, 9), (30, 9));
        assert_eq!(close(true, (40, 12), 8, 30, CaState::Open, 9), (40, 12));
        assert_eq!(close(true, (0, 0), 8, 30, CaState::Open, 3), (0, 0));
        // Today's kernels keep no threshold (`tcp_no_ssthresh_metrics_save`).
        assert_eq!(close(false, (0, 0), 40, 30, CaState::Open, 9), (0, 0));
        assert_eq!(close(false, (0, 0), 8, 30, CaState::Disorder, 9), (0, 9));
        // A connection that timed out last saves nothing.
        let (mut s, _) = conn(10, 1_000, 1_000);
        s.config.ssthresh_metrics = true;
        let mut c = s.new_conn(1_000, SimTime::ZERO);
        (c.w.cwnd, c.w.ssthresh, c.reordering, c.srtt_us, c.backoff) = (8, 30, 9, 8_000, 1);
        let mut m = Metrics::default();
        m.update(&s.config, &c, SimTime(1_000_000));
        assert_eq!((m.ssthresh, m.reordering), (0, 0));
    }

    #[test]
    fn a_new_connection_starts_from_its_destinations_metrics_unless_an_hour_old() {
        let (mut s, _) = conn(10, 1_000, 1_000);
        (s.config.ssthresh_metrics, s.config.fack) = (true, true);
        let fresh = |s: &TcpSender| {
            let mut c = s.new_conn(1_000, SimTime::ZERO);
            c.fack_on = true;
            c.do_early_retrans = true;
            c
        };
        let mut m = Metrics { ssthresh: 25, reordering: 12, stamp: SimTime::from_secs_f64(10.0) };
        let mut c = fresh(&s);
        m.init(&s.config, &mut c, SimTime::from_secs_f64(20.0));
        assert_eq!((c.w.ssthresh, c.reordering, c.fack_on, c.do_early_retrans), (25, 12, false, false));
        // Today's kernels read no threshold.
        s.config.ssthresh_metrics = false;
        let mut c = fresh(&s);
        m.init(&s.config, &mut c, SimTime::from_secs_f64(20.0));
        assert_eq!((c.w.ssthresh >= TCP_INFINITE_SSTHRESH, c.reordering), (true, 12));
        // Untouched for over an hour (`TCP_METRICS_TIMEOUT`): reset, nothing to start from.
        let mut c = fresh(&s);
        m.init(&s.config, &mut c, SimTime::from_secs_f64(10.0 + 3601.0));
        assert_eq!((c.reordering, c.fack_on), (s.config.reordering, true));
    }

    #[test]
    fn f_rto_undoes_a_timeout_when_data_never_retransmitted_is_then_delivered() {
        for frto in [true, false] {
            let mut s = sent_window(frto);
            let mut out = Vec::new();
            let t = SimTime::from_secs_f64(1.0);
            s.on_rto(0, t, &mut out);
            assert_eq!(s.conns[0].as_ref().unwrap().state, CaState::Loss);
            // Segment 5 was only late: it is SACKed after the timeout, without a retransmission.
            let later = SimTime::from_secs_f64(1.001);
            s.on_packet(later, sack(0, (5, 6), later), &mut out);
            let c = s.conns[0].as_ref().unwrap();
            if frto {
                // RFC 5682 §3.1 step 3.b: not all was lost; back to Open (Disorder: a SACK is out).
                assert!(matches!(c.state, CaState::Open | CaState::Disorder), "{:?}", c.state);
                assert_eq!((s.stats.spurious_rtos, s.stats.undos), (1, 1));
                assert_eq!(c.w.cwnd, 10, "the window before the timeout is back");
            } else {
                assert_eq!(c.state, CaState::Loss);
                assert_eq!(s.stats.spurious_rtos, 0);
                assert!(c.w.cwnd < 10);
            }
        }
    }

    #[test]
    fn until_3_15_a_timeout_after_a_retransmission_cannot_be_undone_by_timestamps() {
        // Ten segments sent at 0 ms; segment 9 was `retransmitted` before the timeout at 1 s
        // (in flight still, or since marked lost); the timeout retransmits 0; then the
        // original of 0 is acknowledged, the ACK echoing its TSval (from 0 ms, before the
        // timeout's retransmission): `tcp_try_undo_loss` undoes if the marker is set.
        let early = super::super::ts_of(SimTime::ZERO);
        for (rule, retransmitted, timeouts, undone) in [
            (UndoEra::Current, EVER_RETRANS, 1, true),
            (UndoEra::Current, EVER_RETRANS | RETRANS_OUT, 1, true),
            (UndoEra::Current, 0, 2, true),
            (UndoEra::Linux313, 0, 1, true),
            (UndoEra::Linux313, EVER_RETRANS, 1, false),
            // The second timeout finds its head retransmitted by the first.
            (UndoEra::Linux313, 0, 2, false),
            (UndoEra::Linux315, EVER_RETRANS, 1, true),
            (UndoEra::Linux315, EVER_RETRANS | RETRANS_OUT, 1, false),
            (UndoEra::Linux315, 0, 2, false),
        ] {
            let mut s = sent_window_with_rtt(ms(1));
            s.config.undo = rule;
            let c = s.conns[0].as_mut().unwrap();
            c.seg_mut(9).marks |= retransmitted;
            c.retrans_out = u32::from(retransmitted & RETRANS_OUT != 0);
            let mut out = Vec::new();
            for k in 0..timeouts {
                s.on_rto(0, SimTime::from_secs_f64(1.0 + 2.0 * f64::from(k)), &mut out);
            }
            let t = SimTime::from_secs_f64(4.0);
            s.on_packet(t, ack_with(1, &[], early, t), &mut out);
            let case = format!("{rule:?}, marks {retransmitted}, {timeouts} timeouts");
            assert_eq!(s.stats.undos, u64::from(undone), "{case}");
            let c = s.conns[0].as_ref().unwrap();
            assert_eq!(c.state == CaState::Loss, !undone, "{case}");
        }
    }

    #[test]
    fn a_loss_probe_counts_toward_no_undo_and_marks_its_segment_from_3_14_only() {
        // Ten segments sent at 0 ms, nothing new may go: the probe at 500 ms sends 9 again
        // (`__tcp_retransmit_skb`: no `undo_retrans`, no `retrans_stamp`; `TCPCB_EVER_RETRANS`
        // from 3.14). Then a timeout at 1 s, and the original of 0 acknowledged: only a probe
        // marked as a retransmission would void 3.10-3.13's undo marker.
        let early = super::super::ts_of(SimTime::ZERO);
        for (rule, marked) in [(UndoEra::Current, true), (UndoEra::Linux315, true), (UndoEra::Linux313, false)] {
            let mut s = sent_window_with_rtt(ms(1));
            s.config.undo = rule;
            let c = s.conns[0].as_mut().unwrap();
            c.written = c.snd_nxt;
            let (undo_retrans, mut out) = (c.undo_retrans, Vec::new());
            s.on_loss_probe(0, ms(500), &mut out);
            let probe = std::iter::from_fn(|| s.poll_transmit(ms(500))).next().expect("the probe");
            assert_eq!((probe.seq, probe.retransmit), (9, true));
            let c = s.conns[0].as_ref().unwrap();
            assert_eq!((c.undo_retrans, c.retrans_stamp, c.retrans_out), (undo_retrans, None, 0), "{rule:?}");
            assert_eq!(c.seg(9).marks & EVER_RETRANS != 0, marked, "{rule:?}");
            s.on_rto(0, SimTime::from_secs_f64(1.0), &mut out);
            let t = SimTime::from_secs_f64(1.5);
            s.on_packet(t, ack_with(1, &[], early, t), &mut out);
            assert_eq!(s.stats.undos, 1, "{rule:?}");
        }
    }

    #[test]
    fn an_original_acknowledged_before_any_retransmission_left_was_delayed_not_lost() {
        // Recovery entered with 0-2 marked lost, their retransmissions held back (TCP small
        // queues): no retransmission has a time yet. The original of 0 is acknowledged, the ACK
        // echoing no older timestamp: `tcp_packet_delayed` (3.x, and Linux since 6.12) says
        // delayed, and with no retransmission out `tcp_try_undo_partial` undoes.
        let mut s = in_recovery_after_a_sack_of_3_to_9();
        let c = s.conns[0].as_ref().unwrap();
        assert_eq!((c.retrans_stamp, c.retrans_out), (None, 0));
        let t = ms(6);
        s.on_packet(t, ack_with(1, &[(3, 10)], 0, t), &mut Vec::new());
        let c = s.conns[0].as_ref().unwrap();
        assert_eq!((s.stats.undos, c.state), (1, CaState::Disorder));
    }

    #[test]
    fn only_todays_kernels_forget_a_stale_first_retransmission_on_entering_recovery() {
        for (era, retransmitted, kept) in [
            (UndoEra::Current, false, false),
            (UndoEra::Current, true, true),
            (UndoEra::Linux313, false, true),
            (UndoEra::Linux315, false, true),
        ] {
            let mut s = sent_window_with_rtt(ms(1));
            s.config.undo = era;
            let c = s.conns[0].as_mut().unwrap();
            // A retransmission at 3 ms of an earlier episode, since acknowledged (or, with
            // `retransmitted`, the head's, still out): the stamp was not forgotten since.
            c.retrans_stamp = Some(ms(3));
            if retransmitted {
                c.seg_mut(0).marks |= EVER_RETRANS;
            }
            c.enter_recovery(&s.config, &mut s.stats);
            // (`tcp_init_undo` leaves the stamp as it is.)
            assert_eq!(c.retrans_stamp.is_some(), kept, "{era:?}, head retransmitted: {retransmitted}");
        }
    }

    #[test]
    fn a_repeated_timeout_keeps_the_threshold_of_the_first() {
        let mut s = sent_window(true);
        let mut out = Vec::new();
        s.on_rto(0, SimTime::from_secs_f64(1.0), &mut out);
        let c = s.conns[0].as_ref().unwrap();
        // CUBIC's ssthresh from a window of 10: 10 · 717 / 1024, and the window restarts at 1.
        assert_eq!((c.w.ssthresh, c.w.cwnd), (10 * 717 / 1024, 1));
        s.on_rto(0, SimTime::from_secs_f64(3.0), &mut out);
        let c = s.conns[0].as_ref().unwrap();
        // `tcp_enter_loss` computes no new threshold from the collapsed window (it would be 2).
        assert_eq!((c.w.ssthresh, c.w.cwnd, c.backoff), (10 * 717 / 1024, 1, 2));
    }

    #[test]
    fn a_timeout_in_fast_recovery_keeps_its_reduced_threshold() {
        let mut s = sent_window(true);
        let mut out = Vec::new();
        let c = s.conns[0].as_mut().unwrap();
        c.enter_recovery(&s.config, &mut s.stats);
        assert_eq!(c.w.ssthresh, 10 * 717 / 1024);
        c.w.cwnd = c.w.ssthresh; // PRR brought the window down
        s.on_rto(0, SimTime::from_secs_f64(1.0), &mut out);
        // Not reduced a second time for the same episode (it would be 7 · 717 / 1024 = 4).
        assert_eq!(s.conns[0].as_ref().unwrap().w.ssthresh, 10 * 717 / 1024);
    }

    /// A sender of one stream of `tokens` messages of `token` bytes, written one at a time.
    fn stream(nodelay: bool, token: u64, tokens: u64) -> TcpSender {
        let config = TcpConfig { nodelay, gso: false, ..TcpConfig::test_default() };
        let cutter = Cutter { chunk: 1448, message: Some(token), thesis: false };
        let mut s = TcpSender::new(config, cutter, 1);
        s.open_stream(SimTime::ZERO, 0, token * tokens, &mut Vec::new());
        s
    }

    /// Sequence numbers and sizes of what the sender hands over now.
    fn sent(s: &mut TcpSender, now: SimTime) -> Vec<(u32, u32)> {
        std::iter::from_fn(|| s.poll_transmit(now)).map(|p| (p.seq, p.bytes)).collect()
    }

    fn ack(upto: u32, now: SimTime) -> Packet {
        Packet { seq: 1000, ..Packet::ack(0, upto, now) }
    }

    #[test]
    fn nagle_holds_a_small_segment_while_an_earlier_small_one_is_unacknowledged() {
        for nodelay in [false, true] {
            let mut s = stream(nodelay, 100, 10);
            let (t0, t1) = (SimTime::ZERO, SimTime(1_000_000));
            let mut out = Vec::new();
            s.write(t0, 0, 1, &mut out);
            assert_eq!(sent(&mut s, t0), [(0, 100)], "nothing in flight: a small segment goes");
            s.write(t0, 0, 1, &mut out);
            let second = sent(&mut s, t0);
            if nodelay {
                assert_eq!(second, [(1, 100)], "TCP_NODELAY: no hold");
                continue;
            }
            assert!(second.is_empty(), "segment 0 (small) is unacknowledged: {second:?}");
            s.on_packet(t1, ack(1, t1), &mut out);
            assert_eq!(sent(&mut s, t1), [(1, 100)], "its ACK releases the held segment");
        }
    }

    #[test]
    fn nagle_never_holds_full_segments_nor_the_final_write() {
        // Tokens of two full segments and a 100-byte tail.
        let token = 2 * 1448 + 100;
        let mut s = stream(false, token, 3);
        let t0 = SimTime::ZERO;
        let mut out = Vec::new();
        s.write(t0, 0, 3, &mut out);
        assert_eq!(sent(&mut s, t0), [(0, 1448), (1, 1448), (2, 100)]);
        s.write(t0, 0, 3, &mut out);
        assert_eq!(sent(&mut s, t0), [(3, 1448), (4, 1448)], "the tail waits for the ACK of segment 2");
        let t1 = SimTime(1_000_000);
        s.on_packet(t1, ack(3, t1), &mut out);
        assert_eq!(sent(&mut s, t1), [(5, 100)]);
        s.write(t1, 0, 3, &mut out);
        // The last write's tail carries the FIN (`tcp_nagle_test`): it goes although
        // segment 5 (small) is still unacknowledged.
        assert_eq!(sent(&mut s, t1), [(6, 1448), (7, 1448), (8, 100)]);
    }

    #[test]
    fn small_queues_hold_about_a_millisecond_of_data_below_tcp() {
        let (s, mut c) = conn(100, 10_000, 10_000);
        c.snd_nxt = 50; // more than one buffer unacknowledged
        let config = TcpConfig { gso: false, ..s.config.clone() };
        let limit = (1.2 * 100.0 * 1448.0 / 0.010 / 1024.0) as u64;
        c.wmem = limit;
        assert!(!c.small_queue_full(&config, false));
        c.wmem = limit + 1;
        assert!(c.small_queue_full(&config, false));
        assert!(!c.small_queue_full(&config, true), "retransmissions may queue twice as much");
        c.snd_nxt = 1;
        assert!(!c.small_queue_full(&config, false), "a single buffer in flight always goes");
    }

    #[test]
    fn linux_3_12s_small_queues_hold_at_least_tcp_limit_output_bytes_and_never_a_retransmission() {
        let (s, mut c) = conn(100, 10_000, 10_000);
        c.snd_nxt = 50;
        let config = TcpConfig { small_queues: SmallQueues::Linux312, limit_output_bytes: 131_072, ..s.config.clone() };
        // cwnd 100 over an SRTT of 10 ms at 200%: 28,281 bytes a millisecond, below the 128 KB.
        for (wmem, full) in [(131_072, false), (131_073, true)] {
            c.wmem = wmem;
            assert_eq!(c.small_queue_full(&config, false), full, "{wmem}");
            assert!(!c.small_queue_full(&config, true), "a retransmission never waits");
        }
        let config = TcpConfig { limit_output_bytes: 16_384, ..config };
        let rate_term = (2.0 * 100.0 * 1448.0 / 0.010 / 1024.0) as u64;
        c.wmem = rate_term;
        assert!(!c.small_queue_full(&config, false));
        c.wmem = rate_term + 1;
        assert!(c.small_queue_full(&config, false), "the pacing rate's share when it is the larger");
    }

    /// A flow of `segments` segments all sent at 0 (and off the host) over a sender without RACK (dupthresh), with
    /// early retransmit waiting at least `er` (`None`: off) and an SRTT of `srtt_ms`.
    fn short_flow(segments: u32, er: Option<SimTime>, ncr: bool, srtt_ms: u64) -> TcpSender {
        let (mut s, _) = conn(10, 1_000, 1_000);
        (s.config.gso, s.config.rack, s.config.early_retransmit, s.config.ncr) = (false, false, er, ncr);
        let mut out = Vec::new();
        s.open(SimTime::ZERO, 0, u64::from(segments) * 1448, &mut out);
        assert_eq!(std::iter::from_fn(|| s.poll_transmit(SimTime::ZERO)).count(), segments.min(10) as usize);
        let c = s.conns[0].as_mut().unwrap();
        c.wmem = 0; // their buffers left the host (TX completions)
        c.snd_wnd = 1000; // the window `ack_with`'s ACKs advertise: no window update among them
        let srtt = SimTime(srtt_ms * 1_000_000);
        c.rtt_sample(&s.config, srtt, srtt);
        s
    }

    fn lost_segments(s: &TcpSender) -> Vec<u32> {
        let c = s.conns[0].as_ref().unwrap();
        (c.snd_una..c.snd_nxt).filter(|&q| c.seg(q).marks & LOST != 0).collect()
    }

    #[test]
    fn early_retransmit_recovers_a_short_flows_loss_after_a_quarter_of_the_rtt() {
        // 3 segments out, the first lost: a duplicate ACK SACKs the other two. dupthresh (3) is out
        // of reach; RFC 5827 (2 SACKed of 3 out, nothing new to send) starts recovery, Linux's delayed
        // form after max(SRTT/4, 2 ms) (`tcp_pause_early_retransmit`): the ACK's SACK sample (21 ms)
        // makes SRTT 20.125 ms, a quarter 5.03 ms, 6 jiffies at HZ 1000.
        let floor = Some(ms(2));
        let mut out = Vec::new();
        let mut s = short_flow(3, floor, false, 20);
        s.on_packet(ms(21), sack(0, (1, 3), ms(21)), &mut out);
        let c = s.conns[0].as_ref().unwrap();
        assert_eq!(
            (c.state, c.timer_kind, c.timer.deadline()),
            (CaState::Disorder, TimerKind::EarlyRetrans, Some(ms(27)))
        );
        assert!(lost_segments(&s).is_empty() && s.poll_transmit(ms(21)).is_none());
        s.on_timer(ms(27), timer_token(0, s.conns[0].as_ref().unwrap().timer.generation()), &mut out);
        let c = s.conns[0].as_ref().unwrap();
        assert_eq!((c.state, lost_segments(&s), s.stats.fast_recoveries), (CaState::Recovery, vec![0], 1));
        let p = s.poll_transmit(ms(27)).expect("the head goes again");
        assert!((p.seq, p.retransmit) == (0, true));
        assert_eq!(s.conns[0].as_ref().unwrap().timer_kind, TimerKind::Rto);

        // `tcp_early_retrans` = 1: at once.
        let mut s = short_flow(3, Some(SimTime::ZERO), false, 20);
        s.on_packet(ms(21), sack(0, (1, 3), ms(21)), &mut out);
        assert_eq!((s.conns[0].as_ref().unwrap().state, lost_segments(&s)), (CaState::Recovery, vec![0]));
        // An RTO due before the delay ends: at once too (SRTT 1 s: 250 ms of delay, the RTO
        // armed at the open, 1 s, comes first).
        let mut s = short_flow(3, floor, false, 1_000);
        s.on_packet(ms(800), sack(0, (1, 3), ms(800)), &mut out);
        assert_eq!(s.conns[0].as_ref().unwrap().state, CaState::Recovery);
        // Off: the connection waits (for the loss probe or the RTO).
        let mut s = short_flow(3, None, false, 20);
        s.on_packet(ms(21), sack(0, (1, 3), ms(21)), &mut out);
        let c = s.conns[0].as_ref().unwrap();
        assert_eq!(c.state, CaState::Disorder);
        assert_ne!(c.timer_kind, TimerKind::EarlyRetrans);
        // With 4 out it is dupthresh's to judge, not early retransmit's.
        let mut s = short_flow(4, floor, false, 20);
        s.on_packet(ms(21), sack(0, (2, 4), ms(21)), &mut out);
        let c = s.conns[0].as_ref().unwrap();
        assert_eq!((c.state, c.timer_kind == TimerKind::EarlyRetrans), (CaState::Disorder, false));
    }

    #[test]
    fn reordering_turns_early_retransmit_off_for_the_connection() {
        // The third of 3 SACKed pauses early retransmit; the first then arrives, never retransmitted,
        // below the SACK: reordering (`tcp_update_reordering` → `tcp_disable_early_retrans`), and the
        // ACK cancels the pause. The second's hole then waits: early retransmit is off.
        let mut out = Vec::new();
        let mut s = short_flow(3, Some(ms(2)), false, 20);
        s.on_packet(ms(21), sack(0, (2, 3), ms(21)), &mut out);
        assert_eq!(s.conns[0].as_ref().unwrap().timer_kind, TimerKind::EarlyRetrans);
        s.on_packet(ms(22), sack(1, (2, 3), ms(22)), &mut out);
        let c = s.conns[0].as_ref().unwrap();
        assert!(!c.do_early_retrans);
        assert_eq!((c.state, c.timer_kind == TimerKind::EarlyRetrans), (CaState::Disorder, false));
        s.on_packet(ms(23), sack(1, (2, 3), ms(23)), &mut out);
        let c = s.conns[0].as_ref().unwrap();
        assert_eq!((c.state, c.timer_kind == TimerKind::EarlyRetrans), (CaState::Disorder, false));
        // The same duplicate ACK on a connection that saw no reordering pauses it.
        let mut s = short_flow(3, Some(ms(2)), false, 20);
        s.on_packet(ms(21), sack(1, (2, 3), ms(21)), &mut out);
        assert!(s.conns[0].as_ref().unwrap().do_early_retrans);
    }

    #[test]
    fn ncr_recovers_when_half_the_flight_is_sacked_below_a_raised_degree() {
        // 8 out after reordering raised the degree to 10: 4 SACKed are far from dupthresh, but
        // they are half of the flight and `tcp_reordering`, and nothing new can go (RFC 4653 NCR,
        // `tcp_time_to_recover`'s Trick#4): recovery, the head marked by the duplicate ACK.
        let run = |segments: u32, ncr: bool, blocks: (u32, u32)| {
            let mut s = short_flow(segments, None, ncr, 20);
            s.conns[0].as_mut().unwrap().reordering = 10;
            s.on_packet(ms(21), sack(0, blocks, ms(21)), &mut Vec::new());
            s
        };
        let s = run(8, true, (4, 8));
        assert_eq!((s.conns[0].as_ref().unwrap().state, lost_segments(&s)), (CaState::Recovery, vec![0]));
        let s = run(8, false, (4, 8));
        assert_eq!((s.conns[0].as_ref().unwrap().state, lost_segments(&s)), (CaState::Disorder, vec![]));
        // 3 of 8 SACKed: under half.
        let s = run(8, true, (5, 8));
        assert_eq!(s.conns[0].as_ref().unwrap().state, CaState::Disorder);
        // 10 out, 5 SACKed: half of them. With nothing more to send, recovery; with more written and
        // room in cwnd (the SACKed left the flight), not yet (`tcp_may_send_now`).
        let s = run(10, true, (5, 10));
        assert_eq!(s.conns[0].as_ref().unwrap().state, CaState::Recovery);
        let s = run(20, true, (5, 10));
        assert_eq!(s.conns[0].as_ref().unwrap().state, CaState::Disorder);
    }

    #[test]
    fn a_second_duplicate_ack_restarts_the_early_retransmit_delay() {
        // The pause compares the delay with the RTO the ACK leaves (`tcp_ack` turned the pending
        // early retransmit back into the RTO of the head's send, `tcp_rearm_rto`), not with the
        // pending pause: a second duplicate ACK within the delay pauses again from its own time.
        let mut out = Vec::new();
        let mut s = short_flow(3, Some(ms(2)), false, 20);
        s.on_packet(ms(21), sack(0, (1, 3), ms(21)), &mut out);
        assert_eq!(s.conns[0].as_ref().unwrap().timer.deadline(), Some(ms(27)));
        s.on_packet(ms(24), sack(0, (1, 3), ms(24)), &mut out);
        let c = s.conns[0].as_ref().unwrap();
        assert_eq!(
            (c.state, c.timer_kind, c.timer.deadline()),
            (CaState::Disorder, TimerKind::EarlyRetrans, Some(ms(30)))
        );
    }

    #[test]
    fn forward_retransmission_sends_the_holes_below_the_highest_sack_in_recovery() {
        // 10 out, 0 and 3 lost, the rest SACKed, the degree raised to 10: NCR starts recovery and the
        // duplicate ACK marks the head only (8 SACKed < 10: dupthresh marks nothing more). Linux
        // before 4.11 then sends 3 again too (`tcp_can_forward_retransmit`: Recovery, nothing new to
        // send), counted in flight twice (`retrans_out`) though not marked lost; without it, 3 waits.
        let run = |forward: bool| {
            let mut s = short_flow(10, None, true, 20);
            s.config.forward_retransmit = forward;
            s.conns[0].as_mut().unwrap().reordering = 10;
            s.on_packet(ms(21), ack_with(0, &[(4, 10), (1, 3)], 0, ms(21)), &mut Vec::new());
            let sent: Vec<u32> = std::iter::from_fn(|| s.poll_transmit(ms(21))).map(|p| p.seq).collect();
            (s, sent)
        };
        let (s, sent) = run(true);
        let c = s.conns[0].as_ref().unwrap();
        assert_eq!((c.state, sent, lost_segments(&s)), (CaState::Recovery, vec![0, 3], vec![0]));
        assert_eq!((c.retrans_out, c.seg(3).marks & RETRANS_OUT != 0), (2, true));
        let (s, sent) = run(false);
        assert_eq!((s.conns[0].as_ref().unwrap().state, sent), (CaState::Recovery, vec![0]));
    }

    #[test]
    fn dupthresh_marks_a_forward_retransmission_lost_but_keeps_it_in_flight() {
        // `tcp_skb_mark_lost` (dupthresh's and FACK's marking) leaves TCPCB_SACKED_RETRANS alone: the
        // segment counts lost and retransmitted, and is not sent a third time; only RACK's and
        // FACK's lost-retransmission tests take a retransmission back out of flight.
        let (_, mut c) = conn(10, 1_000, 1_000);
        c.snd_nxt = 10;
        c.segs = (0..10).map(|_| Seg { sent: SimTime::ZERO, delivered: 0, marks: 0 }).collect();
        c.state = CaState::Recovery;
        c.seg_mut(3).marks = RETRANS_OUT | EVER_RETRANS;
        c.retrans_out = 1;
        for q in 4..10 {
            c.seg_mut(q).marks = SACKED;
        }
        (c.sacked_out, c.fack, c.reordering) = (6, 10, 3);
        assert_eq!(c.dupthresh_detect_loss(true), 4, "0 to 3 have 6 SACKed above them");
        assert_eq!((c.seg(3).marks & (LOST | RETRANS_OUT), c.lost_out, c.retrans_out), (LOST | RETRANS_OUT, 4, 1));
        assert_eq!(c.in_flight(), 1, "10 out, 6 SACKed and 4 lost, one of them in flight again");
    }

    #[test]
    fn reordering_seen_in_loss_counts_only_while_the_timeout_may_be_undone() {
        // After a timeout, a SACK of segment 2 (never sent again) below the highest SACK (6) is
        // reordering of degree 4 (`tcp_sacktag_write_queue`), judged only in a Loss that may still
        // be undone (`icsk_ca_state != TCP_CA_Loss || tp->undo_marker`).
        for undoable in [false, true] {
            let mut s = sent_window_with_rtt(ms(1));
            let mut out = Vec::new();
            s.on_packet(ms(2), sack(0, (5, 6), ms(2)), &mut out);
            s.on_rto(0, ms(300), &mut out);
            let c = s.conns[0].as_mut().unwrap();
            assert_eq!((c.state, c.reordering, c.undo_marker.is_some()), (CaState::Loss, 3, true));
            if !undoable {
                c.undo_marker = None;
            }
            s.on_packet(ms(301), ack_with(0, &[(2, 3), (5, 6)], 0, ms(301)), &mut out);
            let c = s.conns[0].as_ref().unwrap();
            assert_eq!(c.reordering, if undoable { 4 } else { 3 }, "undoable: {undoable}");
        }
    }

    #[test]
    fn an_ack_turns_a_3_10_loss_probe_back_into_the_rto_of_the_heads_send() {
        // 3.x `tcp_ack`: a pending loss probe becomes the RTO again (`tcp_rearm_rto`: the head's
        // send + RTO) on any ACK in the window; today's kernels leave it pending on an ACK that ACKs
        // nothing.
        for linux_3_10 in [false, true] {
            let mut s = short_flow(10, None, false, 20);
            s.config.tlp_floor = linux_3_10.then_some(ms(10));
            let mut out = Vec::new();
            let c = s.conns[0].as_mut().unwrap();
            TcpSender::arm(c, 0, TimerKind::LossProbe, ms(60), &mut out);
            s.on_packet(ms(21), sack(0, (5, 6), ms(21)), &mut out);
            let c = s.conns[0].as_ref().unwrap();
            let rto_of_head = c.seg(0).sent + c.backed_off_rto(&s.config);
            let want = if linux_3_10 { (TimerKind::Rto, rto_of_head) } else { (TimerKind::LossProbe, ms(60)) };
            assert_eq!((c.timer_kind, c.timer.deadline().unwrap()), want, "3.10: {linux_3_10}");
        }
    }
}
