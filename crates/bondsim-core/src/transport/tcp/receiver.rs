//! The TCP receiver (the clients' end): reassembly, cumulative ACKs with SACK
//! and DSACK blocks, delayed and compressed ACKs, as Linux's receive path
//! (`net/ipv4/tcp_input.c`: `tcp_data_queue`, `tcp_data_queue_ofo`,
//! `tcp_sack_new_ofo_skb`, `tcp_dsack_set`, `__tcp_ack_snd_check`).
//!
//! Sequence numbers count segments (the model's unit; see [`super`]), so a SACK
//! block `[start, end)` names segments, and "more than one full frame
//! unacknowledged" is counted in payload bytes as Linux does.

use super::{timer_token, TcpConfig, Timer, TsTicks};
use crate::packet::{Kind, Packet, SackBlock};
use crate::time::SimTime;
use crate::transport::{Cutter, Endpoint, Output};

/// `TCP_MAX_QUICKACKS` (`include/net/tcp.h`): quick ACKs at the start of a connection, and
/// after a duplicate segment arrives.
const MAX_QUICKACKS: u32 = 16;
/// `TCP_FASTRETRANS_THRESH`: duplicate ACKs sent at once before SACK compression starts.
const FASTRETRANS_THRESH: u32 = 3;
/// `net.ipv4.tcp_comp_sack_nr` default: most ACKs compressed into one.
const COMP_SACK_NR: u32 = 44;
/// `net.ipv4.tcp_comp_sack_delay_ns` default: 1 ms.
const COMP_SACK_DELAY: SimTime = SimTime(1_000_000);
/// `TCP_MSS_DEFAULT` and `TCP_MIN_MSS` (include/net/tcp.h): the receiver's first estimate of the
/// peer's MSS is at most the former, at least the latter (`tcp_initialize_rcv_mss`).
const MSS_DEFAULT: u32 = 536;
const MIN_MSS: u32 = 88;
/// The TCP header of a data segment with the timestamp option (20 + 12 bytes), as the model's
/// `network.header_bytes` counts it: `tcp_measure_rcv_mss` compares lengths with it included.
const TCP_HEADER_TS: u32 = 32;
/// `ICSK_ACK_PUSHED` and `ICSK_ACK_PUSHED2` (include/net/inet_connection_sock.h), as counts: short
/// (pushed) segments received since the last ACK sent, up to two.
const PUSHED: u8 = 1;
const PUSHED2: u8 = 2;
/// SACK blocks Linux remembers (`TCP_NUM_SACKS`).
const NUM_SACKS: usize = 4;
/// `TCP_PAWS_WINDOW` (`include/net/tcp.h`): how many timestamp ticks older than `TS.Recent` a
/// segment's TSval may be before PAWS discards it.
const PAWS_WINDOW: i32 = 1;
/// `TCP_SACK_BLOCKS_EXPECTED`: SACK blocks a held (compressed) ACK may leave unreported before
/// a segment that extends a block further down, or opens a new one, sends it.
const SACK_BLOCKS_EXPECTED: usize = 2;

/// One connection's receive state.
#[derive(Debug, Default)]
struct Conn {
    /// `rcv_nxt`: the next segment expected in order.
    rcv_nxt: u32,
    /// Segments of the whole transfer (the last one carries the sender's FIN; unbounded for a
    /// stream of messages, which runs until the run's end).
    total: u32,
    /// `icsk_ack.rcv_mss`: what this end takes the sender's MSS to be ([`Conn::measure_rcv_mss`]).
    rcv_mss: u32,
    /// `icsk_ack.last_seg_size`: the length of the last short segment `tcp_measure_rcv_mss` kept.
    last_seg_size: u32,
    /// Short (pushed) segments since the last ACK sent: [`PUSHED`], [`PUSHED2`], or 0.
    pushed: u8,
    /// In-order data reached the application since the last ACK decision (`tcp_cleanup_rbuf`'s
    /// `copied > 0`: the model's application reads at once).
    copied: bool,
    /// Payload bytes received in order, and at the last ACK sent (`rcv_wup`).
    rcv_bytes: u64,
    wup_bytes: u64,
    /// Segment the last ACK acknowledged up to (`Last.ACK.sent`, RFC 7323 §4.3).
    last_ack_sent: u32,
    /// What it holds above a hole and the SACK blocks it reports ([`Ofo`]): none until the first
    /// segment above a hole, kept after.
    ofo: Option<Box<Ofo>>,
    /// A duplicate to report first in the next ACK (RFC 2883 §4).
    dsack: Option<(u32, u32)>,
    /// Quick ACKs left (`icsk_ack.quick`).
    quick: u32,
    /// An ACK must go out at once (`ICSK_ACK_NOW`).
    ack_now: bool,
    /// SACK compression: the `rcv_nxt` it counts for, ACKs sent at once for it,
    /// ACKs held back.
    comp_rcv_nxt: u32,
    dup_acks: u32,
    compressed: u32,
    /// The delayed-ACK (or compressed-SACK) timer: when it is due, and its generation.
    timer: Timer,
    /// The timer was last armed as the delayed-ACK timer (`ICSK_TIME_DACK`), not SACK compression.
    dack: bool,
    /// Interactive mode (`inet_csk_in_pingpong_mode`): this end answers data with data,
    /// so it delays its ACKs to let them ride on the answer, even in quick-ACK mode.
    pingpong: bool,
    /// When in-order data last arrived (`icsk_ack.lrcvtime`).
    lrcvtime: SimTime,
    /// `TS.Recent`: the timestamp to echo.
    ts_recent: u32,
    /// The receiver's RTT estimate (`rcv_rtt_est.rtt_us`), microseconds << 3 as the kernel keeps
    /// it (0: none yet): from sending an ACK to the data that echoes its timestamp
    /// ([`Conn::rcv_rtt_measure_ts`]).
    rcv_rtt_us8: u32,
    /// The echo the last sample came from (`rcv_rtt_last_tsecr`): one sample per echo.
    rcv_rtt_last_tsecr: u32,
    /// The window it advertises and its right-sizing ([`RcvSpace`]).
    space: RcvSpace,
}

/// A receiver's out-of-order queue (`tp->out_of_order_queue`) and the SACK blocks it reports
/// (`tp->selective_acks`): boxed in [`Conn::ofo`] at a connection's first segment above a hole, so
/// that one that never saw a hole weighs 8 bytes of it instead of 80 (issue 40: a flow's weight).
#[derive(Debug, Default)]
struct Ofo {
    /// Out-of-order segments held, indexed from `rcv_nxt` (slot 0 is always empty).
    queue: std::collections::VecDeque<Option<Packet>>,
    /// The held ranges, sorted and disjoint.
    ranges: Vec<(u32, u32)>,
    /// SACK blocks to report, most recent first (RFC 2018 §4).
    sacks: Vec<(u32, u32)>,
}

/// A receive window and its dynamic right-sizing (`rcvq_space`): TCP's per connection, MPTCP's
/// per connection over its subflows (`mptcp_rcv_space_adjust`, net/mptcp/protocol.c, the same
/// rule on what the application read of the whole connection, once per the longest subflow RTT).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct RcvSpace {
    /// The window it advertises, bytes (`rcv_wnd`).
    pub(crate) rcv_wnd: u64,
    /// Bytes read in the last measured round trip, and where and when this measurement started.
    space: u64,
    space_bytes: u64,
    space_time: SimTime,
}

impl RcvSpace {
    /// A window of `rcv_wnd` bytes, starting to measure with `TCP_INIT_CWND` segments of `mss`
    /// (`tcp_init_buffer_space`; MPTCP's `mptcp_rcv_space_init` takes its first subflow's).
    pub(crate) fn new(rcv_wnd: u64, mss: u32) -> RcvSpace {
        RcvSpace { rcv_wnd, space: (10 * u64::from(mss)).min(rcv_wnd), ..RcvSpace::default() }
    }

    /// `tcp_rcv_space_adjust` (`net/ipv4/tcp_input.c`): once per receiver round trip `rtt`, if
    /// the application read more than in the last one (`read`: its bytes so far), open the window
    /// to twice that plus `extra` bytes, and more in proportion to the growth, up to `max`. TCP's
    /// `extra` is 16 segments (`16 * tp->advmss`, Linux before 6.x's `tcp_rcvbuf_grow`); MPTCP's
    /// `mptcp_rcvbuf_grow` (net/mptcp/protocol.c, 6.18.y) has none.
    pub(crate) fn adjust(&mut self, now: SimTime, rtt: SimTime, read: u64, extra: u64, max: u64) {
        if now.0 < self.space_time.0 + rtt.0 {
            return;
        }
        let copied = read - self.space_bytes;
        if copied > self.space {
            let mut rcvwin = 2 * copied + extra;
            let grow = rcvwin * (copied - self.space) / self.space.max(1);
            rcvwin += 2 * grow;
            self.rcv_wnd = self.rcv_wnd.max(rcvwin.min(max));
            self.space = copied;
        }
        self.space_bytes = read;
        self.space_time = now;
    }
}

// A connection's weight (issue 40; the sender's `Conn` says why).
const _: () = assert!(std::mem::size_of::<Conn>() <= 160);

impl Conn {
    /// It holds data above a hole (`RB_EMPTY_ROOT(&tp->out_of_order_queue)` is false).
    fn holds_ofo(&self) -> bool {
        self.ofo.as_ref().is_some_and(|o| !o.ranges.is_empty())
    }
}

impl Conn {
    /// The receiver's RTT estimate, if it has one.
    pub(crate) fn rcv_rtt(&self) -> Option<SimTime> {
        (self.rcv_rtt_us8 != 0).then(|| SimTime(u64::from(self.rcv_rtt_us8 >> 3) * 1_000))
    }

    /// `tcp_rcv_rtt_measure_ts` (`net/ipv4/tcp_input.c`, 6.x): a full-sized segment (`rcv_mss`) whose echo
    /// differs from the last one sampled gives a sample of the timestamp clock's ticks since the
    /// echoed one (`tcp_rtt_tsopt_us`: whole ticks of `ts`, none when 0).
    fn rcv_rtt_measure_ts(&mut self, now: SimTime, packet: &Packet, ts: TsTicks) {
        if packet.ts_ecr == self.rcv_rtt_last_tsecr {
            return; // (also: no echo yet, `rcv_rtt_last_tsecr` starting at 0)
        }
        self.rcv_rtt_last_tsecr = packet.ts_ecr;
        let ticks = ts.ts_of(now).wrapping_sub(packet.ts_ecr) as i32;
        if packet.bytes >= self.rcv_mss && ticks > 0 {
            self.rcv_rtt_update((u64::from(ticks as u32) * ts.tick.0 / 1_000) as u32);
        }
    }

    /// `tcp_rcv_rtt_update` with timestamps, as since Linux 6.16 (`net/ipv4/tcp_input.c`, "tcp:
    /// receive side improvements"): a lower sample is taken at once; a higher one moves the
    /// estimate by an eighth (`old - old/8 + sample` in the <<3 fixed point), when the receive
    /// queue is empty (`rcv_nxt == copied_seq`: the model's application reads at once, so it
    /// always is). Before 6.16 every sample moved it by an eighth.
    fn rcv_rtt_update(&mut self, sample_us: u32) {
        let (old, m) = (self.rcv_rtt_us8, sample_us << 3);
        self.rcv_rtt_us8 = if old == 0 || m < old { m } else { old - (old >> 3) + sample_us };
    }

    /// `tcp_incr_quickack`: quick ACKs for `rcv_wnd / (2·rcv_mss)` segments (2 if that is 0, at
    /// most `max`), never fewer than are left.
    fn incr_quickack(&mut self, max: u32) {
        let quickacks = match self.space.rcv_wnd / (2 * u64::from(self.rcv_mss)) {
            0 => 2,
            q => q.min(u64::from(max)) as u32,
        };
        self.quick = self.quick.max(quickacks);
    }

    /// `tcp_measure_rcv_mss` (net/ipv4/tcp_input.c, 6.18) on an skb of `len` payload bytes (a GRO
    /// skb's: its first segment's, `gso_size`) that carries PSH (`psh`: it ends a write) or not. A
    /// segment at least `rcv_mss` long raises it (to at most the MSS); with PSH it marks the ACK
    /// pushed in today's kernels (`pushed_full_mss`). A shorter one marks it pushed (twice:
    /// `ICSK_ACK_PUSHED2`), unless it is long enough to be a peer's smaller MSS (with its header at
    /// least `TCP_MSS_DEFAULT`'s, or `TCP_MIN_MSS`'s without PSH) and as long as the last such one:
    /// then it becomes `rcv_mss`.
    fn measure_rcv_mss(&mut self, len: u32, psh: bool, mss: u32, pushed_full_mss: bool) {
        let lss = std::mem::take(&mut self.last_seg_size);
        if len >= self.rcv_mss {
            self.rcv_mss = len.min(mss);
            if psh && pushed_full_mss {
                self.pushed = self.pushed.max(PUSHED);
            }
            return;
        }
        let with_header = len + TCP_HEADER_TS;
        if with_header >= MSS_DEFAULT + 20 || (with_header >= MIN_MSS + 20 && !psh) {
            self.last_seg_size = len;
            if len == lss {
                self.rcv_mss = len;
                return;
            }
        }
        self.pushed = if self.pushed >= PUSHED { PUSHED2 } else { PUSHED };
    }

    /// `tcp_rcv_space_adjust`, once the receiver has an RTT estimate ([`RcvSpace::adjust`]; the
    /// largest window is half of `tcp_rmem[2]`).
    fn space_adjust(&mut self, now: SimTime, mss: u64, max: u64) {
        if let Some(rtt) = self.rcv_rtt() {
            self.space.adjust(now, rtt, self.rcv_bytes, 16 * mss, max);
        }
    }
}

/// The receiving end of every flow.
#[derive(Debug)]
pub struct TcpReceiver {
    config: TcpConfig,
    cutter: Cutter,
    conns: Vec<Conn>,
    tx: std::collections::VecDeque<Packet>,
    /// Data segments PAWS discarded (Linux's `PAWSEstabRejected`).
    paws_drops: u64,
}

impl TcpReceiver {
    /// A receiver for `flows` flows.
    pub fn new(config: TcpConfig, cutter: Cutter, flows: usize) -> TcpReceiver {
        TcpReceiver {
            config,
            cutter,
            conns: (0..flows).map(|_| Conn::default()).collect(),
            tx: std::collections::VecDeque::new(),
            paws_drops: 0,
        }
    }

    /// PAWS (RFC 7323 §5) as `tcp_validate_incoming` runs it on an established connection
    /// (`net/ipv4/tcp_input.c`, 6.x): a data segment whose TSval is more than
    /// [`PAWS_WINDOW`] ticks older than `TS.Recent` (`tcp_paws_discard` → `tcp_paws_check`; a data
    /// segment is never `tcp_disordered_ack`'s pure ACK, and data is never rate-limited by
    /// `tcp_oow_rate_limited`) is discarded before any other processing, answered by
    /// `tcp_send_dupack`: a D-SACK and quick-ACK mode only when it lies below `rcv_nxt` (data
    /// above it, sent before a retransmission that overtook it, gets neither), and an ACK at
    /// once. Returns whether it discarded `packet`, whose TSval is `tsval`.
    fn paws_discard(&mut self, now: SimTime, packet: &Packet, tsval: u32, out: &mut Vec<Output>) -> bool {
        let c = &mut self.conns[packet.flow as usize];
        // (`if (!rx_opt->ts_recent) return true`: nothing to compare with before the first.)
        let older = c.ts_recent.wrapping_sub(tsval) as i32;
        if c.ts_recent == 0 || older <= PAWS_WINDOW {
            return false;
        }
        self.paws_drops += 1;
        let s = packet.seq;
        if s < c.rcv_nxt {
            // `tcp_send_dupack`: `tcp_enter_quickack_mode` and, with SACK, `tcp_dsack_set`.
            c.incr_quickack(MAX_QUICKACKS);
            c.pingpong = false;
            if self.config.dsack {
                c.dsack = Some((s, s + 1));
            }
        }
        c.ack_now = true;
        self.ack_check(now, packet.flow, out);
        true
    }

    /// The data sender's SYN-ACK (an upload's SYN) arrived: its timestamp becomes TS.Recent and
    /// the handshake's ACK leaves at once (`tcp_rcv_synsent_state_process`: `tcp_store_ts_recent`,
    /// then `tcp_send_ack`, net/ipv4/tcp_input.c, 6.18). No quick ACK is spent: quick-ACK mode
    /// starts with the first data (`tcp_event_data_recv`). A SYN-ACK sent again finds the
    /// connection established and gets an ACK too (`tcp_validate_incoming`'s challenge ACK).
    fn answer_handshake(&mut self, now: SimTime, flow: u32, tsval: u32) {
        let c = &mut self.conns[flow as usize];
        c.ts_recent = c.ts_recent.max(tsval);
        c.lrcvtime = now; // (`tcp_finish_connect`)
        let ack = self.pure_ack(now, flow);
        self.tx.push_back(ack);
    }

    /// `flow`'s pure ACK now: its window and acknowledgement fields (`tcp_send_ack` builds it).
    fn pure_ack(&mut self, now: SimTime, flow: u32) -> Packet {
        let mut ack = Packet::ack(flow, 0, now);
        let c = &self.conns[flow as usize];
        ack.seq = (c.space.rcv_wnd / u64::from(self.config.mss)).min(u64::from(u32::MAX)) as u32;
        self.stamp_ack(flow, &mut ack);
        ack
    }

    /// Builds and queues the ACK of `flow` now (`tcp_send_ack`).
    fn send_ack(&mut self, now: SimTime, flow: u32) {
        let ack = self.pure_ack(now, flow);
        // `tcp_event_ack_sent` → `tcp_dec_quickack_mode`: an ACK sent alone is always owed.
        let c = &mut self.conns[flow as usize];
        c.quick = c.quick.saturating_sub(1);
        self.tx.push_back(ack);
    }

    /// A data segment of this end's own sender is leaving: it carries the current ACK
    /// of `flow` (every segment after the handshake has ACK set, RFC 9293 §3.10.7.4) and
    /// counts as the ACK sent (`tcp_transmit_skb` → `tcp_event_ack_sent`: the pending
    /// delayed ACK is cancelled). It also tells the interactive-mode heuristic that data
    /// left (`tcp_event_data_sent`): data sent within the ATO of the last data received
    /// is a reply, and the connection enters ping-pong mode (`inet_csk_enter_pingpong_mode`,
    /// `net.ipv4.tcp_pingpong_thresh` = 1). The ATO is taken at `TCP_ATO_MIN` (40 ms), where
    /// `tcp_event_data_recv` keeps it while data arrives less than 20 ms apart.
    pub fn piggyback(&mut self, now: SimTime, data: &mut Packet) {
        let c = &mut self.conns[data.flow as usize];
        if now.0.saturating_sub(c.lrcvtime.0) < self.config.delack_timeout.0 {
            c.pingpong = true;
        }
        // `tcp_dec_quickack_mode` counts a quick ACK only if one was owed (`inet_csk_ack_scheduled`):
        // data received since the last ACK, or a mandated or pending one.
        let owed = c.rcv_bytes > c.wup_bytes || c.ack_now || c.dsack.is_some() || c.timer.deadline().is_some();
        self.stamp_ack(data.flow, data);
        data.kind = Kind::DataAck;
        let c = &mut self.conns[data.flow as usize];
        c.quick = c.quick.saturating_sub(u32::from(owed));
    }

    /// Writes `flow`'s acknowledgement fields into `ack` (cumulative ACK, SACK and D-SACK
    /// blocks, the timestamp echo) and accounts for an ACK sent (`tcp_event_ack_sent`).
    fn stamp_ack(&mut self, flow: u32, ack: &mut Packet) {
        let c = &mut self.conns[flow as usize];
        ack.ack = c.rcv_nxt;
        // One TS.Recent per connection: the newer of what its data and its ACKs echoed.
        ack.ts_ecr = ack.ts_ecr.max(c.ts_recent);
        // RFC 2883 §4: the D-SACK block comes first. With the timestamp option 3 blocks fit in
        // TCP's 40 option bytes (`tcp_established_options`).
        let sacks = match &c.ofo {
            Some(o) if self.config.sack => &o.sacks[..],
            _ => &[],
        };
        let blocks = c.dsack.take().into_iter().chain(sacks.iter().copied()).take(self.config.sack_blocks);
        let mut len = 0;
        for (start, end) in blocks {
            ack.sack[len] = SackBlock { start, end };
            len += 1;
        }
        ack.sack_len = len as u8;
        c.wup_bytes = c.rcv_bytes;
        c.last_ack_sent = c.rcv_nxt;
        c.ack_now = false;
        c.pushed = 0; // (`tcp_event_ack_sent` → `inet_csk_clear_xmit_timer`: `icsk_ack.pending = 0`)
        c.compressed = 0;
        c.timer.cancel();
    }

    /// `__tcp_ack_snd_check`: ACK now, or arm the delayed-ACK or SACK-compression timer.
    fn ack_check(&mut self, now: SimTime, flow: u32, out: &mut Vec<Output>) {
        let delayed = self.config.delayed_ack;
        let c = &mut self.conns[flow as usize];
        let copied = std::mem::take(&mut c.copied);
        // "More than one full frame received" (`rcv_mss`), quick-ACK mode (`tcp_in_quickack_mode`:
        // quick ACKs left and not in ping-pong mode), or a mandated immediate ACK.
        let quickack = c.quick > 0 && !c.pingpong;
        if !delayed || c.rcv_bytes - c.wup_bytes > u64::from(c.rcv_mss) || quickack || c.ack_now {
            return self.send_ack(now, flow);
        }
        // The application then reads what arrived in order (`tcp_recvmsg` → `__tcp_cleanup_rbuf`,
        // net/ipv4/tcp.c, 6.18): the ACK goes at once when the read emptied the receive queue (no
        // out-of-order data held) and a short segment was pushed, twice, or once outside
        // ping-pong mode. (Its other test, a window opened by the read, never holds here: the
        // model's application reads at once.)
        let pushed = c.pushed == PUSHED2 || (c.pushed == PUSHED && !c.pingpong);
        if copied && pushed && !c.holds_ofo() && self.config.pushed_acks {
            return self.send_ack(now, flow);
        }
        if !c.holds_ofo() {
            // `tcp_send_delayed_ack`: the ATO starts at TCP_ATO_MIN (40 ms, HZ/25) and the
            // timer is never later than TCP_DELACK_MAX (200 ms).
            // An earlier pending deadline stands (`tcp_send_delayed_ack`).
            if c.timer.arm_by(now + self.config.delack_timeout) {
                out.push(Output::Timer { at: c.timer.at(), token: timer_token(flow, c.timer.generation()) });
            }
            c.dack = true;
            return;
        }
        // Out-of-order data: SACK compression (`tcp_comp_sack`, Linux 4.20+).
        if !self.config.sack || c.compressed >= COMP_SACK_NR {
            return self.send_ack(now, flow);
        }
        if c.comp_rcv_nxt != c.rcv_nxt {
            c.comp_rcv_nxt = c.rcv_nxt;
            c.dup_acks = 0;
        }
        if c.dup_acks < FASTRETRANS_THRESH {
            c.dup_acks += 1;
            return self.send_ack(now, flow);
        }
        c.compressed += 1;
        c.dack = false;
        // 5% of the RTT, at most tcp_comp_sack_delay_ns.
        let delay = c.rcv_rtt().map_or(COMP_SACK_DELAY, |rtt| SimTime(rtt.0 / 20).min(COMP_SACK_DELAY));
        // A pending compression timer is left alone (`hrtimer_is_queued` → return).
        if c.timer.arm_by(now + delay) {
            out.push(Output::Timer { at: c.timer.at(), token: timer_token(flow, c.timer.generation()) });
        }
    }

    /// One segment into the receive queue (`tcp_rcv_established` → `tcp_data_queue`, before
    /// `__tcp_ack_snd_check`): true when the ACK decision is due (false: a handshake answered, or a
    /// segment PAWS discarded with its duplicate ACK). `skb`: the length and PSH of the skb it
    /// came in, which `tcp_measure_rcv_mss` reads (`None` for a GRO skb's segments after its first).
    fn segment(&mut self, now: SimTime, packet: Packet, skb: Option<(u32, bool)>, out: &mut Vec<Output>) -> bool {
        let flow = packet.flow;
        let mss = self.config.mss;
        let tsval = self.config.ts.ts_of(packet.born);
        if packet.kind == Kind::Handshake {
            self.answer_handshake(now, flow, tsval);
            return false;
        }
        if self.paws_discard(now, &packet, tsval, out) {
            return false;
        }
        let c = &mut self.conns[flow as usize];
        let s = packet.seq;
        // `tcp_data_queue` starts with `tp->rx_opt.dsack = 0`: a D-SACK not yet sent is lost to
        // the next data segment.
        c.dsack = None;
        // RFC 7323 §4.3: TS.Recent follows the segment at the left edge of the window
        // (`tcp_replace_ts_recent`: seq not after `rcv_wup`), of a segment `tcp_sequence` lets in
        // (one that ends before `rcv_wup` is answered with a duplicate ACK and dropped first).
        if s <= c.last_ack_sent && s + 1 >= c.last_ack_sent && tsval >= c.ts_recent {
            c.ts_recent = tsval;
        }
        c.rcv_rtt_measure_ts(now, &packet, self.config.ts);
        if s < c.rcv_nxt {
            // Already received: report it (D-SACK) and ACK at once (`tcp_data_queue`:
            // out of window → `tcp_dsack_set`, `tcp_enter_quickack_mode`).
            if self.config.dsack {
                c.dsack = Some((s, s + 1));
            }
            c.ack_now = true;
            // `tcp_enter_quickack_mode(sk, TCP_MAX_QUICKACKS)`: the next segments are ACKed at
            // once too. It also leaves ping-pong mode (`inet_csk_exit_pingpong_mode`): the peer
            // resent, so its answers are not carrying our ACKs in time.
            c.incr_quickack(MAX_QUICKACKS);
            c.pingpong = false;
            return true;
        }
        // `tcp_event_data_recv` for data in order, `tcp_data_queue_ofo` for data above a hole.
        if let Some((len, psh)) = skb {
            c.measure_rcv_mss(len, psh, mss, self.config.era.pushed_full_mss);
        }
        let slot = (s - c.rcv_nxt) as usize;
        if s == c.rcv_nxt {
            // In order: deliver it and everything it uncovers (`tcp_ofo_queue`).
            let had_ofo = c.holds_ofo();
            // `tcp_event_data_recv`: after a gap longer than this end's RTO ("apparently sender
            // failed to restart window, so that we send ACKs quickly") quick ACKs again. This end
            // only ACKs, so its RTO stays what the handshake made it: its RTT plus `rto_min`
            // (`__tcp_set_rto`, the variance term floored at `tcp_rto_min`).
            let rto = self.config.rto_min + c.rcv_rtt().unwrap_or(SimTime::ZERO);
            if now.0.saturating_sub(c.lrcvtime.0) > rto.0 {
                c.incr_quickack(MAX_QUICKACKS);
            }
            c.lrcvtime = now;
            c.rcv_nxt += 1;
            c.rcv_bytes += u64::from(packet.bytes);
            c.copied = true;
            out.push(Output::Deliver(packet));
            if let Some(o) = c.ofo.as_deref_mut() {
                // Slot 0 is always `rcv_nxt`: drop the one just delivered, then take what follows.
                o.queue.pop_front();
                while let Some(Some(_)) = o.queue.front() {
                    let p = o.queue.pop_front().flatten().expect("checked");
                    c.rcv_nxt += 1;
                    c.rcv_bytes += u64::from(p.bytes);
                    out.push(Output::Deliver(p));
                }
                if o.ranges.first().is_some_and(|&(start, _)| start < c.rcv_nxt) {
                    o.ranges.remove(0);
                }
                let rcv_nxt = c.rcv_nxt;
                o.sacks.retain(|&(_, end)| end > rcv_nxt); // `tcp_sack_remove`
            }
            if self.config.moderate_rcvbuf {
                c.space_adjust(now, u64::from(mss), self.config.rwnd_max);
            }
            if had_ofo && !c.holds_ofo() {
                // RFC 5681 §4.2: ACK at once when a gap is filled.
                c.ack_now = true;
            }
            if c.rcv_nxt == c.total {
                // The transfer is whole: the sender's FIN came with the last segment and the
                // application, reading end-of-file, closes; its FIN carries the ACK at once
                // (RFC 9293 §3.6), so the last ACK is never held by the delayed-ACK timer.
                c.ack_now = true;
            }
        } else {
            let o = c.ofo.get_or_insert_with(Box::default);
            if o.queue.len() <= slot {
                o.queue.resize(slot + 1, None);
            }
            let duplicate = o.queue[slot].is_some();
            if duplicate && self.config.dsack {
                c.dsack = Some((s, s + 1)); // `tcp_data_queue_ofo`: a duplicate of held data
            }
            if self.config.sack {
                // `tcp_sack_new_ofo_skb`: a segment that extends the third or fourth block, or opens
                // a new one below two, sends a held compressed ACK first
                // (`tcp_sack_compress_send_ack`), so that every block was reported in first or
                // second place at least once.
                let sacks = &c.ofo.as_ref().expect("made above").sacks;
                let this_sack = sacks.iter().position(|&(start, end)| start <= s + 1 && s <= end);
                if this_sack.unwrap_or(sacks.len()) >= SACK_BLOCKS_EXPECTED && c.compressed > 0 {
                    self.send_ack(now, flow);
                }
            }
            let o = self.conns[flow as usize].ofo.as_deref_mut().expect("made above");
            let block = if duplicate {
                // Its block still goes first (`goto add_sack`).
                *o.ranges.iter().find(|&&(start, end)| start <= s && s < end).expect("a held segment is in a range")
            } else {
                o.queue[slot] = Some(packet);
                insert_range(&mut o.ranges, s)
            };
            // The block holding the newest segment goes first, swallowing the blocks it now
            // covers; at most TCP_NUM_SACKS are kept.
            o.sacks.retain(|&(start, end)| end <= block.0 || start >= block.1);
            o.sacks.insert(0, block);
            o.sacks.truncate(NUM_SACKS);
        }
        true
    }
}

/// Inserts segment `s` into the sorted disjoint `ranges`; returns the range now holding it.
fn insert_range(ranges: &mut Vec<(u32, u32)>, s: u32) -> (u32, u32) {
    let i = ranges.partition_point(|&(_, end)| end < s);
    // ranges[i] is the first range that ends at or after s: it may touch s from the left.
    if i < ranges.len() && ranges[i].0 <= s + 1 && s <= ranges[i].1 {
        let (start, end) = ranges[i];
        let start = start.min(s);
        let mut end = end.max(s + 1);
        if i + 1 < ranges.len() && ranges[i + 1].0 == end {
            end = ranges[i + 1].1;
            ranges.remove(i + 1);
        }
        ranges[i] = (start, end);
        ranges[i]
    } else {
        ranges.insert(i, (s, s + 1));
        ranges[i]
    }
}

impl Endpoint for TcpReceiver {
    fn open(&mut self, now: SimTime, flow: u32, bytes: u64, _out: &mut Vec<Output>) {
        // `tcp_event_data_recv` on the first data: quick-ACK mode for TCP_MAX_QUICKACKS
        // (Linux caps it by rcv_wnd / (2·rcv_mss), above 16 for any default window).
        let total = self.cutter.packets(bytes) as u32;
        let mss = self.config.mss;
        self.conns[flow as usize] = Conn {
            quick: MAX_QUICKACKS,
            total,
            // `tcp_initialize_rcv_mss`: the MSS, at most half the window and `TCP_MSS_DEFAULT`, at
            // least `TCP_MIN_MSS`; full-sized segments raise it (`tcp_measure_rcv_mss`).
            rcv_mss: mss.min((self.config.rwnd_initial / 2) as u32).clamp(MIN_MSS, MSS_DEFAULT),
            space: RcvSpace::new(self.config.rwnd_initial, self.config.mss),
            // The handshake's last segment counts as received data (`tcp_finish_connect`,
            // `tcp_create_openreq_child` set `lrcvtime`; again when the SYN-ACK arrives).
            lrcvtime: now,
            ..Conn::default()
        };
    }

    fn on_packet(&mut self, now: SimTime, packet: Packet, out: &mut Vec<Output>) {
        let skb = (packet.bytes, self.pushes(&packet));
        if self.segment(now, packet, Some(skb), out) {
            self.ack_check(now, packet.flow, out);
        }
    }

    /// A GRO skb (net/ipv4/tcp_offload.c, `tcp_gro_receive`: consecutive full segments of one flow
    /// with the same ACK and options) is one skb to `tcp_rcv_established`: its segments are queued
    /// in turn and `__tcp_ack_snd_check` runs once, after the last.
    fn on_merged(&mut self, now: SimTime, packets: &[Packet], out: &mut Vec<Output>) {
        // The skb's `gso_size` is its first segment's length; its PSH any segment's (`tcp_gro_receive`
        // ORs the merged segments' PSH and FIN into the first header).
        let first = packets.first().map(|p| (p.bytes, packets.iter().any(|p| self.pushes(p))));
        let mut due = false;
        for (i, p) in packets.iter().enumerate() {
            due |= self.segment(now, *p, first.filter(|_| i == 0), out);
        }
        if let (true, Some(last)) = (due, packets.last()) {
            self.ack_check(now, last.flow, out);
        }
    }

    fn on_timer(&mut self, now: SimTime, token: u64, out: &mut Vec<Output>) {
        let (flow, generation) = super::split_token(token);
        let c = &mut self.conns[flow as usize];
        match c.timer.fire(now, generation) {
            super::Fired::Stale => {}
            super::Fired::Early(at) => out.push(Output::Timer { at, token: timer_token(flow, c.timer.generation()) }),
            super::Fired::Due => {
                // `tcp_delack_timer_handler`: a delayed ACK that had to fire in ping-pong mode
                // means no reply carried it: leave ping-pong mode (`inet_csk_exit_pingpong_mode`).
                if c.dack {
                    c.pingpong = false;
                }
                self.send_ack(now, flow)
            }
        }
    }

    fn poll_transmit(&mut self, _now: SimTime) -> Option<Packet> {
        self.tx.pop_front()
    }

    fn is_idle(&self) -> bool {
        self.tx.is_empty()
    }

    fn report(&mut self, r: &mut crate::report::Report) {
        self.report_paws(r);
    }
}

impl TcpReceiver {
    /// Whether data segment `packet` carries PSH (the sender sets it on a segment that ends one of
    /// its application's writes).
    fn pushes(&self, packet: &Packet) -> bool {
        packet.psh()
    }

    /// `flow`'s RTT estimate at the receiver (`rcv_rtt_est`), if it has one.
    pub(crate) fn rcv_rtt(&self, flow: u32) -> Option<SimTime> {
        self.conns[flow as usize].rcv_rtt()
    }

    /// The receiving configuration.
    pub(crate) fn config(&self) -> &TcpConfig {
        &self.config
    }

    /// Reports the segments PAWS discarded (`tcp_paws_drops`).
    pub fn report_paws(&self, r: &mut crate::report::Report) {
        r.add("tcp_paws_drops", self.paws_drops);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_merge_with_both_neighbours() {
        let mut r = Vec::new();
        assert_eq!(insert_range(&mut r, 5), (5, 6));
        assert_eq!(insert_range(&mut r, 7), (7, 8));
        assert_eq!(insert_range(&mut r, 6), (5, 8));
        assert_eq!(r, [(5, 8)]);
        assert_eq!(insert_range(&mut r, 2), (2, 3));
        assert_eq!(insert_range(&mut r, 4), (4, 8));
        assert_eq!(r, [(2, 3), (4, 8)]);
        assert_eq!(insert_range(&mut r, 3), (2, 8));
        assert_eq!(r, [(2, 8)]);
    }

    fn receiver(delayed_ack: bool) -> TcpReceiver {
        let config = TcpConfig { delayed_ack, ..TcpConfig::test_default() };
        let mut r = TcpReceiver::new(config, Cutter::whole_files(1448), 1);
        // A file longer than any test sends: no segment ends the sender's write.
        r.open(SimTime::ZERO, 0, 1448 * 1000, &mut Vec::new());
        r
    }

    /// A receiver of a stream written `message` bytes at a time (each message's last segment
    /// carries PSH), its quick ACKs spent, in today's era or 3.x's (`undo`).
    fn message_receiver(message: u64, undo: crate::scenario::UndoEra) -> TcpReceiver {
        let mut config = TcpConfig::test_default();
        config.era = crate::transport::tcp::era::Era::new(
            undo,
            crate::scenario::SmallQueues::Current,
            crate::scenario::TlpTimeout::Current,
            crate::scenario::CwndReduction::Prr,
            1000,
        );
        let mut r = TcpReceiver::new(config, Cutter::messages(1448, message), 1);
        r.open(SimTime::ZERO, 0, message * 1000, &mut Vec::new());
        r.conns[0].quick = 0;
        r
    }

    /// Sends the messages `from..to` (one segment each, so each ends a write: PSH) to `r`; the
    /// ACKs that left.
    fn messages(r: &mut TcpReceiver, from: u32, to: u32, bytes: u32) -> Vec<u32> {
        let mut out = Vec::new();
        for s in from..to {
            r.on_packet(SimTime(10), Packet { flags: Packet::PSH, ..Packet::data(0, s, bytes, SimTime(1)) }, &mut out);
        }
        acks(r).iter().map(|a| a.0).collect()
    }

    #[test]
    fn a_short_pushed_segment_is_acked_once_the_application_has_read_it() {
        // `tcp_measure_rcv_mss` marks a short segment pushed; `__tcp_cleanup_rbuf` ACKs when the read
        // emptied the queue: each 100-byte message is ACKed at once, not after the 40 ms timer.
        let mut r = message_receiver(100, crate::scenario::UndoEra::Current);
        assert_eq!(r.conns[0].rcv_mss, MSS_DEFAULT, "`tcp_initialize_rcv_mss`: at most 536 at first");
        assert_eq!(messages(&mut r, 0, 3, 100), [1, 2, 3]);
        // In ping-pong mode one pushed segment waits for the answer; a second goes (PUSHED2).
        r.conns[0].pingpong = true;
        assert_eq!(messages(&mut r, 3, 4, 100), Vec::<u32>::new());
        assert_eq!(messages(&mut r, 4, 5, 100), [5]);
        // A file written at once pushes its last segment only: a 700-byte segment inside it raises
        // rcv_mss (from 536) without PSH, and waits for the delayed-ACK timer as before.
        let mut r = receiver(true);
        r.conns[0].quick = 0;
        let mut out = Vec::new();
        r.on_packet(SimTime(10), Packet::data(0, 0, 700, SimTime(1)), &mut out);
        assert!(acks(&mut r).is_empty(), "a segment that ends no write is not pushed");
        assert_eq!(r.conns[0].rcv_mss, 700);
    }

    #[test]
    fn equal_short_segments_become_the_receivers_mss_and_a_full_one_with_psh_is_pushed_today() {
        // 1000-byte messages: the first raises rcv_mss to 1000 (at least the 536 it started at).
        // Today's kernels (6.6 on) mark a full-sized segment with PSH pushed: each is ACKed once
        // read; 3.x's waited for a second one ("more than one full frame").
        let mut today = message_receiver(1000, crate::scenario::UndoEra::Current);
        assert_eq!(messages(&mut today, 0, 4, 1000), [1, 2, 3, 4]);
        assert_eq!(today.conns[0].rcv_mss, 1000);
        let mut old = message_receiver(1000, crate::scenario::UndoEra::Linux313);
        assert_eq!(messages(&mut old, 0, 4, 1000), [2, 4]);
        // 600-byte messages after full segments (rcv_mss 1448): short, but as long as the last
        // short one they become rcv_mss (`last_seg_size`), and are then full-sized.
        let mut r = message_receiver(600, crate::scenario::UndoEra::Linux313);
        r.conns[0].rcv_mss = 1448;
        assert_eq!(messages(&mut r, 0, 1, 600), [1], "the first short one is pushed");
        assert_eq!(messages(&mut r, 1, 2, 600), Vec::<u32>::new(), "the second becomes rcv_mss");
        assert_eq!(r.conns[0].rcv_mss, 600);
        assert_eq!(messages(&mut r, 2, 3, 600), [3], "more than one full frame since the last ACK");
    }

    fn data(seq: u32) -> Packet {
        Packet::data(0, seq, 1448, SimTime(1))
    }

    #[test]
    fn a_syn_ack_is_answered_at_once_with_its_timestamp_echoed_and_no_quick_ack_spent() {
        // `tcp_rcv_synsent_state_process`: `tcp_store_ts_recent`, then `tcp_send_ack`.
        let mut r = receiver(true);
        let mut out = Vec::new();
        r.on_packet(SimTime(3_000_000), Packet::handshake(0, SimTime(1_000_000)), &mut out);
        assert!(out.iter().all(|o| !matches!(o, Output::Deliver(_))), "nothing for the application");
        let ack = r.poll_transmit(SimTime::ZERO).expect("the handshake's ACK");
        assert_eq!((ack.kind, ack.ack, ack.ts_ecr), (Kind::Ack, 0, super::super::ts_of(SimTime(1_000_000))));
        assert_eq!(r.poll_transmit(SimTime::ZERO), None);
        assert_eq!(r.conns[0].quick, MAX_QUICKACKS, "quick-ACK mode starts with the first data");
    }

    fn acks(r: &mut TcpReceiver) -> Vec<(u32, Vec<(u32, u32)>)> {
        std::iter::from_fn(|| r.poll_transmit(SimTime::ZERO))
            .map(|a| (a.ack, a.sack_blocks().iter().map(|b| (b.start, b.end)).collect()))
            .collect()
    }

    #[test]
    fn holes_are_sacked_newest_block_first_and_filled_in_order() {
        let mut r = receiver(false);
        let mut out = Vec::new();
        for s in [0, 2, 4, 3, 1] {
            r.on_packet(SimTime(10), data(s), &mut out);
        }
        let delivered: Vec<u32> =
            out.iter().filter_map(|o| if let Output::Deliver(p) = o { Some(p.seq) } else { None }).collect();
        assert_eq!(delivered, [0, 1, 2, 3, 4]);
        assert_eq!(
            acks(&mut r),
            [(1, vec![]), (1, vec![(2, 3)]), (1, vec![(4, 5), (2, 3)]), (1, vec![(2, 5)]), (5, vec![])]
        );
    }

    #[test]
    fn a_duplicate_is_reported_first_as_dsack() {
        let mut r = receiver(false);
        let mut out = Vec::new();
        for s in [0, 1, 3, 1, 3] {
            r.on_packet(SimTime(10), data(s), &mut out);
        }
        let a = acks(&mut r);
        assert_eq!(a[3], (2, vec![(1, 2), (3, 4)]), "below rcv_nxt: D-SACK then the SACK block");
        assert_eq!(a[4], (2, vec![(3, 4), (3, 4)]), "a held duplicate: D-SACK inside the first SACK block");
    }

    #[test]
    fn ping_pong_mode_delays_the_ack_for_the_answer_until_the_timer_gives_up() {
        let mut r = receiver(true);
        let mut out = Vec::new();
        let small = |seq: u32| Packet::data(0, seq, 100, SimTime(1));
        r.on_packet(SimTime(10), small(0), &mut out);
        assert_eq!(acks(&mut r).len(), 1, "quick-ACK mode: the first segment is ACKed at once");
        // This end answers within the ATO of the data it read: ping-pong mode (`tcp_event_data_sent`).
        let mut answer = Packet::data(0, 0, 100, SimTime(20));
        r.piggyback(SimTime(20), &mut answer);
        assert_eq!(answer.ack, 1, "the answer carries the ACK");
        r.on_packet(SimTime(30), small(1), &mut out);
        assert!(acks(&mut r).is_empty(), "quick ACKs are left, but ping-pong mode waits for the answer");
        let mut answer = Packet::data(0, 1, 100, SimTime(40));
        r.piggyback(SimTime(40), &mut answer);
        assert_eq!(answer.ack, 2);
        // The delayed-ACK timer armed for segment 1 is cancelled by the answer: when it comes, nothing.
        let (at, token) = out
            .iter()
            .rev()
            .find_map(|o| if let Output::Timer { at, token } = o { Some((*at, *token)) } else { None })
            .unwrap();
        r.on_timer(at, token, &mut out);
        assert!(acks(&mut r).is_empty(), "no pure ACK: the answer carried it");
        // No answer this time: the timer sends the ACK and leaves ping-pong mode
        // (`tcp_delack_timer_handler`), so the next segment is quick-ACKed again.
        out.clear();
        r.on_packet(SimTime(50), small(2), &mut out);
        let (at, token) = out
            .iter()
            .find_map(|o| if let Output::Timer { at, token } = o { Some((*at, *token)) } else { None })
            .unwrap();
        assert_eq!(at, SimTime(50) + TcpConfig::test_default().delack_timeout);
        r.on_timer(at, token, &mut out);
        assert_eq!(acks(&mut r).iter().map(|a| a.0).collect::<Vec<_>>(), [3]);
        r.on_packet(at, small(3), &mut out);
        assert_eq!(acks(&mut r).len(), 1, "out of ping-pong mode: quick ACKs again");
    }

    #[test]
    fn a_duplicate_segment_brings_the_quick_acks_back() {
        let mut r = receiver(true);
        let mut out = Vec::new();
        for s in 0..24 {
            r.on_packet(SimTime(10), data(s), &mut out);
        }
        assert_eq!(acks(&mut r).len(), 16 + 4, "16 quick ACKs, then one per two full segments");
        // A needless retransmission arrives: D-SACK at once, and `tcp_enter_quickack_mode` with
        // TCP_MAX_QUICKACKS (the window allows 16): the duplicate's ACK takes one of them.
        r.on_packet(SimTime(20), data(3), &mut out);
        assert_eq!(acks(&mut r).len(), 1);
        for s in 24..39 {
            r.on_packet(SimTime(30), data(s), &mut out);
        }
        assert_eq!(acks(&mut r).len(), 15, "every segment ACKed at once again");
        r.on_packet(SimTime(30), data(39), &mut out);
        r.on_packet(SimTime(30), data(40), &mut out);
        assert_eq!(acks(&mut r).len(), 1, "then one per two full segments");
    }

    /// A receiver past its quick ACKs, every segment below `hole` delivered and ACKed.
    fn past_quick_acks(hole: u32) -> TcpReceiver {
        let mut r = receiver(true);
        for s in 0..hole {
            r.on_packet(SimTime(10), data(s), &mut Vec::new());
        }
        acks(&mut r);
        r
    }

    #[test]
    fn a_held_compressed_ack_goes_before_a_segment_opens_a_block_below_the_second() {
        // Hole at 40, then islands 41, 43, 45, ...: three duplicate ACKs at once, then compression
        // (47 held); from 49 on each new island first sends the held ACK, which reports the
        // blocks as they were (`tcp_sack_compress_send_ack`).
        let mut r = past_quick_acks(40);
        let mut got = Vec::new();
        for s in [41, 43, 45, 47, 49, 51] {
            r.on_packet(SimTime(20), data(s), &mut Vec::new());
            got.push((s, acks(&mut r)));
        }
        let blocks = |v: &[(u32, u32)]| vec![(40, v.to_vec())];
        assert_eq!(got[0], (41, blocks(&[(41, 42)])));
        assert_eq!(got[2], (45, blocks(&[(45, 46), (43, 44), (41, 42)])));
        assert_eq!(got[3], (47, vec![]), "compressed");
        assert_eq!(got[4], (49, blocks(&[(47, 48), (45, 46), (43, 44)])), "47's ACK, sent before 49's block");
        assert_eq!(got[5], (51, blocks(&[(49, 50), (47, 48), (45, 46)])));
        // A segment extending the first block does not send the held ACK.
        r.on_packet(SimTime(20), data(52), &mut Vec::new());
        assert!(acks(&mut r).is_empty());
    }

    #[test]
    fn a_dsack_not_yet_sent_is_lost_to_the_next_data_segment() {
        // 47 held (compressed), then a copy of 47: D-SACK pending, still compressed (its block is
        // first). Segment 49 clears it (`tcp_data_queue`: `rx_opt.dsack = 0`) before the held ACK
        // goes out.
        let mut r = past_quick_acks(40);
        for s in [41, 43, 45, 47, 47] {
            r.on_packet(SimTime(20), data(s), &mut Vec::new());
        }
        assert_eq!(acks(&mut r).len(), 3);
        r.on_packet(SimTime(20), data(49), &mut Vec::new());
        assert_eq!(acks(&mut r), [(40, vec![(47, 48), (45, 46), (43, 44)])], "no D-SACK block first");
        // A copy of a block further down sends the held ACK with its D-SACK (set before the check).
        r.on_packet(SimTime(20), data(43), &mut Vec::new());
        assert_eq!(acks(&mut r), [(40, vec![(43, 44), (49, 50), (47, 48)])]);
    }

    #[test]
    fn data_after_a_gap_longer_than_the_rto_is_quick_acked_again() {
        // Past the quick ACKs, a transfer pauses 500 ms (an RTO on the sender's side, say): the
        // next segments are each ACKed at once (`tcp_event_data_recv`: the gap exceeds the RTO).
        let mut r = past_quick_acks(40);
        let at = SimTime::from_millis_f64(500.0);
        for s in 40..50 {
            r.on_packet(at, data(s), &mut Vec::new());
        }
        assert_eq!(acks(&mut r).len(), 10);
        // A gap shorter than the RTO (100 ms): one ACK per two full segments.
        let at = SimTime::from_millis_f64(100.0);
        let mut r2 = past_quick_acks(40);
        for s in 40..50 {
            r2.on_packet(at, data(s), &mut Vec::new());
        }
        assert_eq!(acks(&mut r2).len(), 5);
    }

    #[test]
    fn ts_recent_is_not_taken_from_a_copy_that_ends_before_the_last_ack() {
        // RFC 7323 §4.3 through `tcp_sequence`: a late copy of segment 2 when 10 was ACKed is
        // answered and dropped; its timestamp is not echoed from then on.
        let mut r = receiver(false);
        for s in 0..10 {
            r.on_packet(SimTime(10), Packet::data(0, s, 1448, SimTime(2_000_000)), &mut Vec::new());
        }
        let stale = Packet::data(0, 2, 1448, SimTime(9_000_000));
        r.on_packet(SimTime(9_000_000), stale, &mut Vec::new());
        let echoed: Vec<u32> = std::iter::from_fn(|| r.poll_transmit(SimTime::ZERO)).map(|a| a.ts_ecr).collect();
        assert_eq!(echoed.last(), Some(&super::super::ts_of(SimTime(2_000_000))));
    }

    #[test]
    fn paws_discards_data_older_than_ts_recent_with_a_dupack_and_a_dsack_only_below_rcv_nxt() {
        // Segments 0-4 sent at 10 ms set TS.Recent; segment 6 was sent at 8 ms (two ticks older,
        // beyond TCP_PAWS_WINDOW): discarded, ACKed at once, not held, no D-SACK (it is above
        // rcv_nxt = 5). A copy of segment 3 sent at 8 ms: discarded too, with a D-SACK.
        let mut r = receiver(true);
        let mut out = Vec::new();
        let sent = |seq, ms: u64| Packet::data(0, seq, 1448, SimTime(ms * 1_000_000));
        for seq in 0..5 {
            r.on_packet(SimTime(20_000_000), sent(seq, 10), &mut out);
        }
        acks(&mut r);
        r.on_packet(SimTime(21_000_000), sent(6, 8), &mut out);
        assert_eq!(acks(&mut r), [(5, vec![])], "a duplicate ACK, no SACK block for the dropped segment");
        assert_eq!(r.paws_drops, 1);
        // The dropped segment is not held: it arrives again (its retransmission) as new.
        r.on_packet(SimTime(22_000_000), sent(6, 11), &mut out);
        assert_eq!(acks(&mut r), [(5, vec![(6, 7)])]);
        r.on_packet(SimTime(23_000_000), sent(3, 8), &mut out);
        assert_eq!(acks(&mut r), [(5, vec![(3, 4), (6, 7)])], "below rcv_nxt: a D-SACK first");
        assert_eq!(r.paws_drops, 2);
        // One tick older is within the window: taken.
        r.on_packet(SimTime(24_000_000), sent(5, 10), &mut out);
        assert_eq!(acks(&mut r), [(7, vec![])]);
        assert_eq!(r.paws_drops, 2);
    }

    #[test]
    fn the_receivers_rtt_takes_a_lower_sample_at_once_and_a_higher_one_by_an_eighth() {
        // `tcp_rcv_rtt_update` (6.16+), µs << 3: 8 ms, then 4 ms latched, then 12 ms: 4 + 8/8 = 5 ms.
        let mut c = Conn::default();
        for (sample_us, want_us) in [(8_000, 8_000), (4_000, 4_000), (12_000, 5_000)] {
            c.rcv_rtt_update(sample_us);
            assert_eq!(c.rcv_rtt(), Some(SimTime(want_us * 1_000)));
        }
        // `tcp_rcv_rtt_measure_ts`: one sample per echo, full-sized segments only, whole ticks.
        let mut c = Conn { rcv_mss: 1448, ..Conn::default() };
        let echo = |born_ms: u64, ecr_ms: u64, bytes: u32| {
            let mut p = Packet::data(0, 0, bytes, SimTime(born_ms * 1_000_000));
            p.ts_ecr = super::super::ts_of(SimTime(ecr_ms * 1_000_000));
            p
        };
        c.rcv_rtt_measure_ts(SimTime(10_500_000), &echo(10, 7, 1448), TsTicks::MS);
        assert_eq!(c.rcv_rtt(), Some(SimTime(3_000_000)), "10.5 ms against an echo of 7 ms: 3 ticks");
        c.rcv_rtt_measure_ts(SimTime(20_000_000), &echo(20, 7, 1448), TsTicks::MS);
        assert_eq!(c.rcv_rtt(), Some(SimTime(3_000_000)), "the same echo again: no sample");
        c.rcv_rtt_measure_ts(SimTime(9_000_000), &echo(9, 8, 500), TsTicks::MS);
        assert_eq!(c.rcv_rtt(), Some(SimTime(3_000_000)), "a short segment: no sample");
        c.rcv_rtt_measure_ts(SimTime(9_900_000), &echo(9, 9, 1448), TsTicks::MS);
        assert_eq!(c.rcv_rtt(), Some(SimTime(3_000_000)), "no whole tick: no sample");
        // Before 4.13 the clock is the jiffy (`sender.ts_clock = "linux-4.12"`): at 250 Hz, 4 ms
        // ticks. 10.5 ms is tick 3, an echo of 3 ms tick 1: 2 ticks, 8 ms.
        let jiffies = TsTicks::of(crate::scenario::TsClock::Linux412, 250);
        let mut c = Conn { rcv_mss: 1448, ..Conn::default() };
        let mut p = Packet::data(0, 0, 1448, SimTime(10_000_000));
        p.ts_ecr = jiffies.ts_of(SimTime(3_000_000));
        c.rcv_rtt_measure_ts(SimTime(10_500_000), &p, jiffies);
        assert_eq!(c.rcv_rtt(), Some(SimTime(8_000_000)));
    }

    #[test]
    fn delayed_acks_cover_two_full_segments_after_the_quick_acks() {
        let mut r = receiver(true);
        let mut out = Vec::new();
        for s in 0..16 {
            r.on_packet(SimTime(10), data(s), &mut out);
        }
        assert_eq!(acks(&mut r).len(), 16, "quick-ACK mode: every segment");
        for s in 16..24 {
            r.on_packet(SimTime(10), data(s), &mut out);
        }
        let later: Vec<u32> = acks(&mut r).iter().map(|a| a.0).collect();
        assert_eq!(later, [18, 20, 22, 24], "then one ACK per two full segments");
        r.on_packet(SimTime(10), data(24), &mut out);
        assert!(acks(&mut r).is_empty(), "one segment waits for the delayed-ACK timer");
        let timer = out.iter().rev().find_map(|o| if let Output::Timer { at, .. } = o { Some(*at) } else { None });
        assert_eq!(timer, Some(SimTime(10) + TcpConfig::test_default().delack_timeout));
    }
}
