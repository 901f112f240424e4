//! The handshake's last two segments, as the data sender sees them: the SYN-ACK it answers a
//! download's SYN with (an upload's client sends its SYN) and the peer's ACK. The flow opens as
//! the SYN reaches the server (the SYN's own trip is not modelled). Linux 6.18:
//! * the request socket answers at once and retransmits on `rsk_timer`
//!   (`reqsk_timer_handler`, net/ipv4/inet_connection_sock.c) after `TCP_TIMEOUT_INIT` (1 s)
//!   shifted by the timeouts so far, at most `tcp_rto_max` (`tcp_reqsk_timeout`,
//!   include/net/tcp.h); after `tcp_synack_retries` (5) the request is dropped (`syn_ack_recalc`:
//!   `num_timeout >= max_syn_ack_retries`), 63 s after the first SYN-ACK, and the model gives the
//!   connection up there. (The client's own SYN retransmissions, `tcp_syn_retries` 6, are not
//!   modelled: its connect would fail by 127 s);
//! * the handshake's ACK gives the first RTT sample (`tcp_check_req` → `tcp_synack_rtt_meas`,
//!   net/ipv4/tcp_minisocks.c and tcp_input.c): the time since the SYN-ACK when it was sent
//!   once, else the timestamp echo (`tcp_ack_update_rtt`: `FLAG_SYN_ACKED` is in `FLAG_ACKED`),
//!   SRTT, the RTO and min_rtt alike;
//! * then `tcp_init_transfer`: the metrics cache (`tcp_init_metrics`; without a sample the RTO
//!   falls back to `TCP_TIMEOUT_FALLBACK`, 3 s, RFC 6298 §5.7), the initial window (one segment
//!   when the SYN-ACK was sent more than twice: `tp->total_retrans > 1 && tp->undo_marker`), and
//!   the congestion control's init, which sees SRTT (BBR paces from it); `lsndtime` is now.
//!
//! Not kept: `tp->delivered++` for the SYN-ACK (the model's delivery count starts at 0; rates
//! are differences of it), the metrics cache's RTT (`TCP_METRIC_RTT`, only a first RTO above
//! the sample's), Linux 3.x measuring the sample in jiffies (`tcp_synack_rtt_meas` in 3.15:
//! `jiffies_to_usecs(tcp_time_stamp - synack_stamp)`, a difference below the RTO's 200 ms floor).

use super::*;

/// Linux's `TCP_TIMEOUT_INIT` (RFC 6298 §2.1): the SYN-ACK's first retransmission timeout, and the RTO
/// of a connection before any RTT sample.
pub(super) const TCP_TIMEOUT_INIT: SimTime = SimTime(1_000_000_000);
/// Linux's `TCP_SYNACK_RETRIES` (`net.ipv4.tcp_synack_retries`).
const TCP_SYNACK_RETRIES: u32 = 5;
/// Linux's `TCP_TIMEOUT_FALLBACK`: the RTO of a connection whose handshake gave no sample.
const TCP_TIMEOUT_FALLBACK: SimTime = SimTime(3_000_000_000);

/// A handshake waiting for its last ACK.
#[derive(Debug, Clone, Copy)]
pub(super) struct Handshake {
    /// When the SYN-ACK was (last) sent (`snt_synack`).
    pub(super) sent: SimTime,
    /// Times it was sent again (`req->num_retrans`, `num_timeout`).
    pub(super) resent: u32,
}

impl TcpSender {
    /// The flow opens: the SYN-ACK leaves now, its retransmission timer armed.
    pub(super) fn open_handshake(&mut self, now: SimTime, flow: u32, bytes: u64, out: &mut Vec<Output>) {
        let mut conn = self.new_conn(flow, bytes, now);
        conn.handshake = Some(Handshake { sent: now, resent: 0 });
        Self::arm(&mut conn, flow, TimerKind::Handshake, now + TCP_TIMEOUT_INIT, out);
        self.add_conn(flow, conn);
        self.urgent.push_back(Packet::handshake(flow, now));
    }

    /// Opens `flow` established at `now`, without the handshake's sample (a ping-pong's stream;
    /// the data-path unit tests).
    pub(super) fn open_established(&mut self, now: SimTime, flow: u32, bytes: u64, out: &mut Vec<Output>) {
        let conn = self.new_conn(flow, bytes, now);
        self.add_conn(flow, conn);
        self.establish(now, flow, out);
    }

    /// `flow`'s connection is open (one more active, one fewer to open).
    fn add_conn(&mut self, flow: u32, conn: Conn) {
        self.conns[flow as usize] = Some(Box::new(conn));
        self.active += 1;
        self.unopened -= 1;
    }

    /// `reqsk_timer_handler`: no ACK yet; the SYN-ACK again, the timeout doubled.
    pub(super) fn on_handshake_timer(&mut self, flow: u32, now: SimTime, out: &mut Vec<Output>) {
        let rto_max = self.config.rto_max;
        let Some(c) = self.conns[flow as usize].as_mut() else { return };
        let Some(h) = c.handshake.as_mut() else { return };
        if h.resent >= TCP_SYNACK_RETRIES {
            return self.give_up(flow, out);
        }
        h.resent += 1;
        h.sent = now;
        self.stats.syn_retransmits += 1;
        let timeout = SimTime(TCP_TIMEOUT_INIT.0.saturating_mul(1 << h.resent.min(20))).min(rto_max);
        Self::arm(c, flow, TimerKind::Handshake, now + timeout, out);
        self.urgent.push_back(Packet { flags: Packet::RETRANSMIT, ..Packet::handshake(flow, now) });
    }

    /// The handshake's ACK arrived: the RTT sample, then the transfer starts.
    pub(super) fn handshake_acked(&mut self, now: SimTime, ack: &Packet, out: &mut Vec<Output>) {
        let config = &self.config;
        let c = self.conns[ack.flow as usize].as_mut().expect("a handshake");
        let h = c.handshake.take().expect("a handshake");
        c.timer.cancel();
        let rtt = if h.resent == 0 {
            Some(rtt_of(now, h.sent))
        } else {
            (ack.ts_ecr != 0).then(|| rtt_of(now, c.ts.ts_time(ack.ts_ecr)).max(c.ts.tick))
        };
        match rtt {
            Some(rtt) => c.rtt_sample(config, rtt, rtt),
            None => {
                c.rttvar_us = TCP_TIMEOUT_FALLBACK.0 / 1_000;
                (c.mdev_us, c.mdev_max_us) = (c.rttvar_us, c.rttvar_us);
                c.rto = TCP_TIMEOUT_FALLBACK;
            }
        }
        if h.resent > 1 {
            c.w.cwnd = 1;
        }
        c.w.lsndtime = now;
        self.establish(now, ack.flow, out);
    }

    /// `tcp_init_transfer`, then the first data may leave: the metrics cache, the congestion
    /// control's init (after the handshake's sample), the RTO armed from now.
    pub(super) fn establish(&mut self, now: SimTime, flow: u32, out: &mut Vec<Output>) {
        let config = &self.config;
        let c = self.conns[flow as usize].as_mut().expect("opened");
        if let Some(m) = self.metrics.get_mut(&Self::destination_of(&self.destination, flow)) {
            m.init(config, c, now);
        }
        c.w.mss = config.mss;
        c.w.now = now;
        c.rate_window();
        c.cc.init(&mut c.w);
        c.paced = c.cc.needs_pacing();
        c.sampling = c.cc.has_cong_control();
        // The application's write (`tcp_sendmsg`) finds nothing queued yet.
        c.rate_check_app_limited(config, 0);
        Self::set_xmit_timer(config, c, flow, now, out);
        self.ready.push_back(flow);
        if c.stream.is_some() {
            self.app_runs(now, flow, out); // (a stream's application starts writing)
        }
    }
}
