//! MPTCP's sending end: the connection level over one [`TcpSender`] that runs every subflow.
//! Linux 6.18.y, net/mptcp/protocol.c unless said otherwise:
//! * the application writes into the connection's send buffer while its unacknowledged data is
//!   below `sk_sndbuf`, which is `tcp_wmem[0]` plus every subflow's `sk_sndbuf`
//!   (`mptcp_send_limit`, `__mptcp_sync_sndbuf` in protocol.h); data is charged there until the
//!   DATA_ACK covers it (`__mptcp_clean_una`), and to its subflow until TCP's ACK does;
//! * `__mptcp_push_pending`: while data waits and the connection's scheduler
//!   ([`sched::Scheduler`], `sender.mptcp_scheduler`) picks a subflow, that subflow takes what
//!   the scheduler says (Linux's default: a burst of at most `MPTCP_SEND_BURST_SIZE` bytes),
//!   capped by the data-level window, a whole data fragment at a time (`__subflow_push_pending`:
//!   the burst and the subflow's memory are tested after each fragment); a scheduler may have
//!   the same data sent on other subflows too (`redundant`);
//! * the DATA_ACK every subflow's ACK carries moves `snd_una` and the window's end
//!   (`ack_update_msk`, options.c: `wnd_end` = DATA_ACK + that subflow's window, never
//!   smaller), re-arms the retransmission timer and pushes again;
//! * the retransmission timer (`mptcp_retransmit_timer` → `__mptcp_retrans`): its period is the
//!   longest time left on a subflow's timer at the last scheduling, or `TCP_RTO_MIN`; each shot
//!   counts a period without progress on each subflow with data outstanding
//!   (`mptcp_pm_subflow_chk_stale`, pm.c), marks one stale after `stale_loss_cnt` such periods
//!   while another is still progressing, which sends everything unacknowledged again through
//!   the scheduler (`__mptcp_retransmit_pending_data`), and re-sends the oldest fragment on an
//!   idle subflow (the scheduler's `get_retrans`, [`sched::get_retrans`]);
//! * a subflow TCP gives up on closes (`mptcp_close_ssk`): its data is sent again on the others.

use super::sched::{self, upstream::SEND_BURST_BYTES, Candidate, Meta, Scheduler, Take};
use super::{split_flow, wire_flow, MptcpConfig};
use crate::packet::{Kind, Packet};
use crate::report::Report;
use crate::time::SimTime;
use crate::transport::tcp::sender::TcpSender;
use crate::transport::tcp::{split_token, timer_token, Fired, Timer};
use crate::transport::{Cutter, Endpoint, Output};

/// A data fragment: a 32 KiB page (`SKB_FRAG_PAGE_ORDER`) less the 40-byte `struct
/// mptcp_data_frag` carved at its start (`mptcp_sendmsg`).
const DFRAG_BYTES: u64 = 32_728;
/// `TCP_RTO_MIN`: the retransmission period when no subflow has a timer pending.
const TCP_RTO_MIN: SimTime = SimTime(200_000_000);
/// Marks the connection level's retransmission timer in a token (TCP's own have it clear).
const MPTCP_TIMER: u64 = 1 << 62;
/// `tcp_sndbuf_expand`'s memory per segment (net/ipv4/tcp_input.c): `roundup_pow_of_two(mss +
/// MAX_TCP_HEADER + SKB_DATA_ALIGN(sizeof(struct skb_shared_info))) +
/// SKB_DATA_ALIGN(sizeof(struct sk_buff))`, with x86-64's 320, 320 and 256 bytes: 4,352 for any
/// MSS from 1,000 to 3,400 bytes.
fn sndbuf_per_mss(mss: u32) -> u64 {
    (u64::from(mss) + 320 + 320).next_power_of_two() + 256
}

/// One MPTCP connection's data level (`struct mptcp_sock`), in the connection's packets.
#[derive(Debug)]
struct Msk {
    file_bytes: u64,
    /// Packets of the file.
    total: u32,
    /// Packets the application has written into the send buffer (`write_seq`).
    write_seq: u32,
    /// The next packet to push (`first_pending`): below `snd_nxt` while data is sent again.
    push_at: u32,
    /// One past the highest packet pushed (`snd_nxt`, which only moves forward).
    snd_nxt: u32,
    /// The DATA_ACK: everything below it reached the peer's application queue (`snd_una`).
    snd_una: u32,
    /// One past the last packet the data-level window allows (`wnd_end`).
    wnd_end: u32,
    /// The retransmission timer and its period (`timer_ival`).
    timer: Timer,
    timer_ival: SimTime,
    done: bool,
    /// Its packet scheduler (`msk->sched`).
    sched: Box<dyn Scheduler>,
}

/// One subflow's connection-level state (`struct mptcp_subflow_context`).
#[derive(Debug, Default)]
struct Sub {
    /// The connection's packet each of its segments carries (its DSS mapping), by segment.
    map: Vec<u32>,
    avg_pacing_rate: f64,
    /// `sk_sndbuf`, bytes: `tcp_wmem[1]`, grown by `tcp_sndbuf_expand` with the window.
    sndbuf: u64,
    stale: bool,
    stale_count: u32,
    stale_rcv_tstamp: SimTime,
    /// When it last received anything (`tcp_sk(ssk)->rcv_tstamp`).
    rcv_tstamp: SimTime,
    /// Given up by its TCP, or its connection is over.
    closed: bool,
}

/// What the connection level did, for the summary and the `mptcp_subflows` table.
#[derive(Debug, Default)]
struct Stats {
    reinjected: u64,
    stale: u64,
    recovered: u64,
    rtx_timeouts: u64,
}

/// MPTCP's sending end for every connection of the run.
#[derive(Debug)]
pub struct MptcpSender {
    tcp: TcpSender,
    config: MptcpConfig,
    cutter: Cutter,
    conns: Vec<Option<Msk>>,
    subs: Vec<Sub>,
    active: usize,
    unopened: usize,
    scratch: Vec<Output>,
    stats: Stats,
}

impl MptcpSender {
    /// The sending end of `conns` connections, their subflows run by `tcp` (built for
    /// `conns × config.subflows` flows) and their files cut by `cutter`.
    pub fn new(tcp: TcpSender, config: MptcpConfig, cutter: Cutter, conns: usize) -> MptcpSender {
        let subflows = conns * config.subflows as usize;
        MptcpSender {
            tcp,
            cutter,
            conns: (0..conns).map(|_| None).collect(),
            subs: (0..subflows).map(|_| Sub { sndbuf: config.wmem[1], ..Sub::default() }).collect(),
            active: 0,
            unopened: conns,
            scratch: Vec::new(),
            stats: Stats::default(),
            config,
        }
    }

    fn wire(&self, conn: u32, sub: u32) -> u32 {
        wire_flow(conn, sub, self.config.subflows)
    }

    /// The connection-level state of `conn`'s subflows, in subflow order.
    fn subs_of(&self, conn: u32) -> &[Sub] {
        let base = self.wire(conn, 0) as usize;
        &self.subs[base..base + self.config.subflows as usize]
    }

    /// Segments of a full data fragment ([`DFRAG_BYTES`]).
    fn dfrag_segments(&self) -> u32 {
        DFRAG_BYTES.div_ceil(u64::from(self.config.mss)) as u32
    }

    /// `__mptcp_retransmit_pending_data`: everything unacknowledged at the data level is pushed
    /// again (`first_pending = rtx_head`), through the scheduler.
    fn retransmit_pending(&mut self, conn: u32) {
        if let Some(m) = self.conns[conn as usize].as_mut() {
            m.push_at = m.snd_una;
        }
    }

    /// Carries TCP's outputs over to `out`; a subflow TCP gave up on closes.
    fn forward(&mut self, now: SimTime, out: &mut Vec<Output>) {
        let mut tcp_out = std::mem::take(&mut self.scratch);
        for o in tcp_out.drain(..) {
            match o {
                Output::Aborted(flow) => self.subflow_gone(now, flow, out),
                other => out.push(other),
            }
        }
        self.scratch = tcp_out;
    }

    /// Subflow `flow` is closed by its TCP (`mptcp_close_ssk` → `__mptcp_close_ssk`): everything
    /// unacknowledged is sent again on the others; with none left, the connection fails.
    fn subflow_gone(&mut self, now: SimTime, flow: u32, out: &mut Vec<Output>) {
        let (conn, _) = split_flow(flow, self.config.subflows);
        self.subs[flow as usize].closed = true;
        if self.conns[conn as usize].as_ref().is_none_or(|m| m.done) {
            return;
        }
        self.retransmit_pending(conn);
        if self.subs_of(conn).iter().all(|s| s.closed) {
            self.finish(now, conn);
            out.push(Output::Aborted(conn));
            return;
        }
        self.push_pending(now, conn, out);
    }

    /// The connection's data is all acknowledged (or it failed): its subflows close.
    fn finish(&mut self, now: SimTime, conn: u32) {
        let m = self.conns[conn as usize].as_mut().expect("open");
        m.done = true;
        m.timer.cancel();
        self.active -= 1;
        for sub in 0..self.config.subflows {
            let flow = self.wire(conn, sub);
            self.subs[flow as usize].closed = true;
            self.subs[flow as usize].map = Vec::new();
            self.tcp.close_subflow(now, flow);
        }
    }

    /// Every subflow of `conn` as the scheduler reads it.
    fn candidates(&mut self, now: SimTime, conn: u32) -> Vec<Candidate> {
        (0..self.config.subflows)
            .map(|sub| {
                let flow = self.wire(conn, sub);
                let s = &mut self.subs[flow as usize];
                let Some(v) = self.tcp.subflow(flow).filter(|v| v.established && !s.closed) else {
                    return Candidate::default();
                };
                if s.stale && s.rcv_tstamp != s.stale_rcv_tstamp {
                    // `mptcp_subflow_active`: heard from since it went stale.
                    s.stale = false;
                    self.stats.recovered += 1;
                }
                Candidate {
                    backup: self.config.backup[sub as usize],
                    established: true,
                    active: !s.stale,
                    wmem_queued: v.wmem_queued,
                    avg_pacing_rate: s.avg_pacing_rate,
                    pacing_rate: v.pacing_rate.unwrap_or(0.0),
                    memory_free: v.wmem_queued < s.sndbuf,
                    timeout: match v.timer_at {
                        Some(at) if s.stale_count == 0 => at.saturating_sub(now),
                        _ => SimTime::ZERO,
                    },
                    stale_count: s.stale_count,
                    srtt_us8: v.srtt_us8,
                    rttvar_us: v.rttvar_us,
                    cwnd: v.cwnd,
                    ssthresh: v.ssthresh,
                    in_flight: v.in_flight,
                    queued: v.queued,
                    unsent: v.unsent,
                    in_loss: v.in_loss,
                }
            })
            .collect()
    }

    /// `tcp_sndbuf_expand` on subflow `flow` (net/ipv4/tcp_input.c): its send buffer grows to
    /// twice its window (at least `TCP_INIT_CWND`, and the reordering degree + 1) of
    /// [`sndbuf_per_mss`], at most `tcp_wmem[2]`. Linux calls it when the handshake completes
    /// (`tcp_init_buffer_space`), and after an ACK (`tcp_check_space` → `tcp_new_space`) while the
    /// application waits for room (`SOCK_NOSPACE`, set on the MPTCP socket the subflows share,
    /// `mptcp_sock_graft`) unless the window is full (`tcp_should_expand_sndbuf`: in flight, after
    /// `tcp_data_snd_check` pushed what waits, below the window).
    fn expand_sndbuf(&mut self, flow: u32, on_ack: bool) {
        let Some(v) = self.tcp.subflow(flow).filter(|v| v.established) else { return };
        let (conn, _) = split_flow(flow, self.config.subflows);
        let waiting = self.conns[conn as usize].as_ref().is_some_and(|m| !m.done && m.write_seq < m.total);
        let fills_window = v.in_flight + v.unsent >= v.cwnd;
        if on_ack && (!waiting || fills_window) {
            return;
        }
        let wmem = self.config.wmem;
        let expand = 2 * u64::from(v.cwnd.max(10).max(v.reordering + 1)) * sndbuf_per_mss(self.config.mss);
        let s = &mut self.subs[flow as usize];
        s.sndbuf = s.sndbuf.max(expand.min(wmem[2]));
    }

    /// The application writes what the connection's send buffer takes (`mptcp_sendmsg` while
    /// `mptcp_send_limit`): `tcp_wmem[0]` and every subflow's `sk_sndbuf`, less what is unacked.
    fn app_write(&mut self, conn: u32) {
        let sndbuf = self.config.wmem[0] + self.subs_of(conn).iter().map(|s| s.sndbuf).sum::<u64>();
        let mss = u64::from(self.config.mss);
        let m = self.conns[conn as usize].as_mut().expect("open");
        let room = sndbuf.div_ceil(mss).min(u64::from(m.total)) as u32;
        m.write_seq = m.write_seq.max((m.snd_una + room).min(m.total));
    }

    /// `__mptcp_push_pending`: bursts to the scheduler's picks while data waits.
    fn push_pending(&mut self, now: SimTime, conn: u32, out: &mut Vec<Output>) {
        if self.conns[conn as usize].as_ref().is_none_or(|m| m.done) {
            return;
        }
        let mut pushed = false;
        while let Some((flow, segments)) = self.next_burst(now, conn) {
            self.tcp.write(now, flow, segments, &mut self.scratch);
            self.forward(now, out);
            pushed = true;
        }
        if pushed {
            self.arm_if_idle(now, conn, out);
        }
    }

    /// One turn of `__mptcp_push_pending`: the scheduler's pick and the packets it takes (mapped
    /// to it), or none when nothing waits, no subflow is picked or the window is full.
    fn next_burst(&mut self, now: SimTime, conn: u32) -> Option<(u32, u32)> {
        let (k, mss) = (self.config.subflows, u64::from(self.config.mss));
        let (per_segment, per_dfrag) = (self.tcp.segment_truesize(), self.dfrag_segments());
        let mut cands = self.candidates(now, conn);
        self.app_write(conn);
        let m = self.conns[conn as usize].as_mut().expect("open");
        if m.push_at >= m.write_seq {
            return None;
        }
        let meta =
            Meta { now, mss, snd_una: m.snd_una, push_at: m.push_at, write_seq: m.write_seq, wnd_end: m.wnd_end };
        let window = meta.window_bytes();
        let period = sched::retransmit_period(&cands);
        m.timer_ival = if period > SimTime::ZERO { period } else { TCP_RTO_MIN };
        let push = m.sched.get_send(&mut cands, &meta);
        for (sub, c) in cands.iter().enumerate() {
            self.subs[wire_flow(conn, sub as u32, k) as usize].avg_pacing_rate = c.avg_pacing_rate;
        }
        let push = push?;
        let flow = wire_flow(conn, push.sub as u32, k);
        let (burst, cap) = match push.take {
            Take::Burst => (SEND_BURST_BYTES.min(window), u32::MAX),
            Take::Segments(n) => ((u64::from(n) * mss).min(window), n),
            Take::Again(dsn) => {
                // A copy of data already pushed (`redundant`): it is in the window already.
                self.subs[flow as usize].map.push(dsn);
                return Some((flow, 1));
            }
        };
        if burst == 0 {
            return None;
        }
        let c = &cands[push.sub];
        let s = &mut self.subs[flow as usize];
        // Whole fragments until the burst is spent, the subflow's memory full or nothing waits
        // (old data sent again is in the window already; new data up to its end).
        let limit = m.write_seq.min(m.wnd_end.max(m.snd_nxt));
        let (mut left, mut queued, mut segments) = (burst as i64, c.wmem_queued, 0);
        while left > 0 && queued < s.sndbuf && m.push_at + segments < limit {
            let n = per_dfrag.min(limit - m.push_at - segments).min(cap - segments);
            segments += n;
            left -= (u64::from(n) * mss) as i64;
            queued += u64::from(n) * per_segment;
        }
        if segments == 0 {
            return None;
        }
        s.map.extend(m.push_at..m.push_at + segments);
        self.stats.reinjected += u64::from(m.snd_nxt.saturating_sub(m.push_at).min(segments));
        m.push_at += segments;
        m.snd_nxt = m.snd_nxt.max(m.push_at);
        Some((flow, segments))
    }

    /// After a push: the retransmission timer starts unless it is pending.
    fn arm_if_idle(&mut self, now: SimTime, conn: u32, out: &mut Vec<Output>) {
        let m = self.conns[conn as usize].as_mut().expect("open");
        if m.timer.deadline().is_none() {
            Self::arm(m, conn, now, out);
        }
    }

    fn arm(m: &mut Msk, conn: u32, now: SimTime, out: &mut Vec<Output>) {
        if m.timer.arm(now + m.timer_ival) {
            out.push(Output::Timer { at: m.timer.at(), token: MPTCP_TIMER | timer_token(conn, m.timer.generation()) });
        }
    }

    /// `ack_update_msk` and `__mptcp_clean_una`: the DATA_ACK `data_ack` and the window `wnd`
    /// (packets) of the subflow that carried it.
    fn data_ack(&mut self, now: SimTime, conn: u32, data_ack: u32, wnd: u32, out: &mut Vec<Output>) {
        let Some(m) = self.conns[conn as usize].as_mut().filter(|m| !m.done) else { return };
        let una = if data_ack > m.snd_una && data_ack <= m.snd_nxt { data_ack } else { m.snd_una };
        m.wnd_end = m.wnd_end.max(una.saturating_add(wnd));
        if una > m.snd_una {
            m.snd_una = una;
            m.push_at = m.push_at.max(una);
            if una == m.total {
                return self.finish(now, conn);
            }
            // `mptcp_reset_rtx_timer`.
            Self::arm(m, conn, now, out);
        }
    }

    /// The connection level's retransmission timer fired (`__mptcp_retrans`).
    fn on_rtx_timer(&mut self, now: SimTime, conn: u32, out: &mut Vec<Output>) {
        self.stats.rtx_timeouts += 1;
        let per_dfrag = self.dfrag_segments();
        let mut cands = self.candidates(now, conn);
        for sub in 0..self.config.subflows {
            if cands[sub as usize].outstanding() {
                self.check_stale(now, conn, sub, &mut cands, out);
            }
        }
        let Some(m) = self.conns[conn as usize].as_mut().filter(|m| !m.done) else { return };
        if m.snd_una < m.snd_nxt {
            if let Some(pick) = m.sched.get_retrans(&cands) {
                // The oldest fragment, as far as it was sent.
                let end = (m.snd_una + per_dfrag).min(m.snd_nxt).min(m.wnd_end.max(m.snd_una + 1));
                let flow = wire_flow(conn, pick as u32, self.config.subflows);
                for dsn in m.snd_una..end {
                    self.subs[flow as usize].map.push(dsn);
                }
                self.stats.reinjected += u64::from(end - m.snd_una);
                self.tcp.write(now, flow, end - m.snd_una, &mut self.scratch);
                self.forward(now, out);
            }
        }
        if let Some(m) = self.conns[conn as usize].as_mut().filter(|m| !m.done && m.snd_una < m.write_seq) {
            Self::arm(m, conn, now, out);
        }
        self.push_pending(now, conn, out);
    }

    /// `mptcp_pm_subflow_chk_stale` for subflow `sub`, which has data outstanding.
    fn check_stale(&mut self, now: SimTime, conn: u32, sub: u32, cands: &mut [Candidate], out: &mut Vec<Output>) {
        let loss_cnt = self.config.stale_loss_cnt;
        let flow = self.wire(conn, sub) as usize;
        let s = &mut self.subs[flow];
        if s.stale_count == 0 {
            s.stale_rcv_tstamp = s.rcv_tstamp;
            s.stale_count = 1;
        } else if s.stale_rcv_tstamp == s.rcv_tstamp {
            s.stale_count = (s.stale_count + 1).min(255);
            // `mptcp_pm_subflows_chk_stale`: stale once past `stale_loss_cnt`, if another
            // active subflow is still progressing.
            let other_progressing = |(i, c): (usize, &Candidate)| {
                i != sub as usize && c.active && c.stale_count < (loss_cnt.saturating_sub(1)).max(1)
            };
            if !s.stale && loss_cnt > 0 && s.stale_count > loss_cnt && cands.iter().enumerate().any(other_progressing) {
                s.stale = true;
                self.stats.stale += 1;
                cands[sub as usize].active = false;
                self.retransmit_pending(conn);
                self.push_pending(now, conn, out);
            }
        } else {
            s.stale_count = 0;
            if std::mem::take(&mut s.stale) {
                self.stats.recovered += 1;
            }
        }
        cands[sub as usize].stale_count = self.subs[flow].stale_count;
    }

    /// Subflow `flow`'s handshake just completed: the first one's brings the joins (the path
    /// manager's `subflow` endpoints, `mptcp_pm_create_subflow_or_signal_addr`).
    fn established(&mut self, now: SimTime, flow: u32, out: &mut Vec<Output>) {
        let (conn, sub) = split_flow(flow, self.config.subflows);
        self.expand_sndbuf(flow, false);
        if sub == 0 {
            for join in 1..self.config.subflows {
                let f = self.wire(conn, join);
                self.tcp.open_subflow(now, f, &mut self.scratch);
            }
            self.forward(now, out);
        }
        self.push_pending(now, conn, out);
    }

    /// Undoes the connection's packet size on a segment coming back from the fabric: TCP's
    /// stream segments are all full.
    fn as_sent(&self, packet: &Packet) -> Packet {
        match packet.kind {
            Kind::Data => Packet { bytes: self.config.mss, ..*packet },
            _ => *packet,
        }
    }
}

impl Endpoint for MptcpSender {
    fn start(&mut self, now: SimTime, out: &mut Vec<Output>) {
        self.tcp.start(now, out);
    }

    fn open(&mut self, now: SimTime, conn: u32, bytes: u64, out: &mut Vec<Output>) {
        let total = self.cutter.packets(bytes) as u32;
        let wnd = (self.config.rwnd_initial / u64::from(self.config.mss)) as u32;
        self.conns[conn as usize] = Some(Msk {
            file_bytes: bytes,
            total,
            write_seq: 0,
            push_at: 0,
            snd_nxt: 0,
            snd_una: 0,
            wnd_end: wnd,
            timer: Timer::default(),
            timer_ival: TCP_RTO_MIN,
            done: false,
            sched: (self.config.scheduler.build)(self.config.subflows as usize),
        });
        self.active += 1;
        self.unopened -= 1;
        let flow = self.wire(conn, 0);
        self.tcp.open_subflow(now, flow, &mut self.scratch);
        self.forward(now, out);
    }

    fn on_packet(&mut self, now: SimTime, packet: Packet, out: &mut Vec<Output>) {
        let flow = packet.flow;
        let (conn, _) = split_flow(flow, self.config.subflows);
        self.subs[flow as usize].rcv_tstamp = now;
        let was = self.tcp.subflow(flow).is_some_and(|v| v.established);
        self.tcp.on_packet(now, packet, &mut self.scratch);
        self.forward(now, out);
        if !was && self.tcp.subflow(flow).is_some_and(|v| v.established) {
            return self.established(now, flow, out);
        }
        if packet.kind == Kind::Ack {
            self.data_ack(now, conn, packet.dss(), packet.seq, out);
        }
        self.push_pending(now, conn, out);
        self.expand_sndbuf(flow, true);
    }

    fn on_timer(&mut self, now: SimTime, token: u64, out: &mut Vec<Output>) {
        if token & MPTCP_TIMER == 0 || token == u64::MAX {
            self.tcp.on_timer(now, token, &mut self.scratch);
            return self.forward(now, out);
        }
        let (conn, generation) = split_token(token & !MPTCP_TIMER);
        let Some(m) = self.conns[conn as usize].as_mut() else { return };
        match m.timer.fire(now, generation) {
            Fired::Stale => {}
            Fired::Early(at) => {
                out.push(Output::Timer { at, token: MPTCP_TIMER | timer_token(conn, m.timer.generation()) })
            }
            Fired::Due => self.on_rtx_timer(now, conn, out),
        }
    }

    fn poll_transmit(&mut self, now: SimTime) -> Option<Packet> {
        let mut p = self.tcp.poll_transmit(now)?;
        if p.kind == Kind::Data {
            let (conn, _) = split_flow(p.flow, self.config.subflows);
            if let Some(&dsn) = self.subs[p.flow as usize].map.get(p.seq as usize) {
                p.set_dss(dsn);
                if let Some(m) = self.conns[conn as usize].as_ref() {
                    p.bytes = self.cutter.packet_bytes(m.file_bytes, u64::from(dsn));
                }
            }
        }
        Some(p)
    }

    fn poll_timers(&mut self, now: SimTime, out: &mut Vec<Output>) {
        self.tcp.poll_timers(now, out);
    }

    fn is_idle(&self) -> bool {
        self.active == 0 && self.unopened == 0
    }

    fn reliable(&self) -> bool {
        true
    }

    fn on_tx_done(&mut self, now: SimTime, packet: &Packet, out: &mut Vec<Output>) {
        let p = self.as_sent(packet);
        self.tcp.on_tx_done(now, &p, &mut self.scratch);
        self.forward(now, out);
    }

    fn hears_tx_done(&self) -> bool {
        true
    }

    fn unsent(&mut self, now: SimTime, packet: &Packet, out: &mut Vec<Output>) -> bool {
        let p = self.as_sent(packet);
        let taken = self.tcp.unsent(now, &p, &mut self.scratch);
        self.forward(now, out);
        taken
    }

    fn report(&mut self, r: &mut Report) {
        self.tcp.report(r);
        r.add("mptcp_reinjected", self.stats.reinjected);
        r.add("mptcp_stale", self.stats.stale);
        r.add("mptcp_recovered", self.stats.recovered);
        r.add("mptcp_rtx_timeouts", self.stats.rtx_timeouts);
        r.table("mptcp_subflows", &self.subflow_table());
    }
}

/// The `mptcp_subflows` table: one row per subflow (its link), summed over the connections.
#[derive(Debug, Default, serde::Serialize)]
pub struct SubflowTable {
    /// The subflow's link, by number.
    pub link: Vec<u32>,
    /// Whether it is a backup.
    pub backup: Vec<bool>,
    /// Connections whose subflow on this link completed its handshake.
    pub established: Vec<u64>,
    /// Segments it carried, first transmissions (each one of the connection's packets).
    pub segments: Vec<u64>,
    /// Segments its TCP sent again.
    pub retransmits: Vec<u64>,
}

crate::columnar!(SubflowTable: link, backup, established, segments, retransmits);

impl MptcpSender {
    fn subflow_table(&self) -> SubflowTable {
        let k = self.config.subflows;
        let mut t = SubflowTable::default();
        for sub in 0..k {
            let views = (0..self.conns.len() as u32).filter_map(|c| self.tcp.subflow_totals(self.wire(c, sub)));
            let (mut established, mut segments, mut retransmits) = (0, 0, 0);
            for v in views {
                established += u64::from(v.0);
                segments += u64::from(v.1);
                retransmits += u64::from(v.2);
            }
            t.link.push(sub);
            t.backup.push(self.config.backup[sub as usize]);
            t.established.push(established);
            t.segments.push(segments);
            t.retransmits.push(retransmits);
        }
        t
    }
}
