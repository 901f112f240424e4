//! What MPTCP's connection level ([`crate::transport::mptcp`]) reads of and does to a TCP
//! connection that is one of its subflows: Linux's `net/mptcp` reaches into the subflow's
//! `struct tcp_sock` the same way (`sk_wmem_queued`, `sk_pacing_rate`, the pending timer,
//! `rcv_tstamp`, `tcp_rtx_and_write_queues_empty`).
//!
//! A subflow is a stream ([`TcpSender::write`]): its segments are what the connection level
//! writes into it, each carrying one of the connection's packets. It stays open until the
//! connection level closes it.

use super::*;

/// A subflow's stream: longer than any connection's data, however often it is sent again.
pub const SUBFLOW_STREAM_BYTES: u64 = 1 << 40;

/// A subflow as the connection level sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SubflowView {
    /// Its handshake is over and it is not closed (`__mptcp_subflow_active`'s state test).
    pub established: bool,
    /// Segments written into it and not yet acknowledged (its write and retransmit queues).
    pub queued: u32,
    /// The memory they hold (`sk_wmem_queued`), bytes.
    pub wmem_queued: u64,
    /// Of those, segments not yet sent (its write queue).
    pub unsent: u32,
    /// Segments in flight (`tcp_packets_in_flight`).
    pub in_flight: u32,
    /// Its congestion window, segments (`tcp_snd_cwnd`).
    pub cwnd: u32,
    /// Its reordering degree (`tp->reordering`).
    pub reordering: u32,
    /// `sk_pacing_rate`, bytes per second (`tcp_update_pacing_rate`, or the control's own);
    /// none before its first RTT sample.
    pub pacing_rate: Option<f64>,
    /// When its pending timer (retransmission, loss probe, the handshake's) fires, if armed.
    pub timer_at: Option<SimTime>,
    /// `tp->srtt_us`: eight times the smoothed RTT in µs, as Linux keeps it (0 before a sample).
    pub srtt_us8: u64,
    /// `tp->rttvar_us`: the RTO's variance term, µs.
    pub rttvar_us: u64,
    /// Its slow-start threshold, segments (`u32::MAX`: `TCP_INFINITE_SSTHRESH`).
    pub ssthresh: u32,
    /// In `TCP_CA_Loss` (after a retransmission timeout, until it recovers).
    pub in_loss: bool,
}

impl TcpSender {
    /// Opens `flow` as a subflow: a stream the connection level writes into. The first subflow
    /// (and each joined one) starts with its handshake ([`handshake`]).
    pub fn open_subflow(&mut self, now: SimTime, flow: u32, out: &mut Vec<Output>) {
        self.open_handshake(now, flow, SUBFLOW_STREAM_BYTES, out);
        self.conns[flow as usize].as_mut().expect("just opened").written = 0;
    }

    /// What the connection level reads of subflow `flow` (none before it opens).
    pub fn subflow(&self, flow: u32) -> Option<SubflowView> {
        let c = self.conns[flow as usize].as_ref()?;
        Some(SubflowView {
            established: c.handshake.is_none() && !c.done,
            queued: c.written - c.snd_una,
            wmem_queued: u64::from(c.written - c.snd_una) * self.segment_truesize(),
            unsent: c.written - c.snd_nxt,
            in_flight: c.in_flight(),
            cwnd: c.w.cwnd,
            reordering: c.reordering,
            pacing_rate: c.pacing_rate(&self.config),
            timer_at: c.timer.deadline(),
            srtt_us8: c.srtt_us,
            rttvar_us: c.rttvar_us,
            ssthresh: c.w.ssthresh,
            in_loss: c.state == CaState::Loss,
        })
    }

    /// The memory one full segment holds in a send queue (its payload and the buffer's overhead).
    pub fn segment_truesize(&self) -> u64 {
        packet_truesize(&Packet { bytes: self.config.mss, ..Packet::default() })
    }

    /// What subflow `flow` did, for the tables: whether its handshake completed, the segments it
    /// sent for the first time and those it sent again (none if it never opened).
    pub fn subflow_totals(&self, flow: u32) -> Option<(bool, u32, u32)> {
        let c = self.conns[flow as usize].as_ref()?;
        Some((c.handshake.is_none(), c.snd_nxt, c.retransmits))
    }

    /// The connection level is done with subflow `flow`: it closes (its FIN exchange is not
    /// modelled), leaving its destination's TCP metrics as any connection does.
    pub fn close_subflow(&mut self, now: SimTime, flow: u32) {
        let config = &self.config;
        let Some(c) = self.conns[flow as usize].as_mut() else {
            // It never opened (a join whose connection ended first): it never will.
            self.unopened -= 1;
            return;
        };
        if c.done {
            return;
        }
        if config.metrics_save && c.handshake.is_none() {
            let destination = Self::destination_of(&self.destination, flow);
            self.metrics.entry(destination).or_default().update(config, c, now);
        }
        c.close();
        self.active -= 1;
    }
}
