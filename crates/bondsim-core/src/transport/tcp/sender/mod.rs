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
//! A connection the world opens ([`Endpoint::open`]) starts with the handshake's last two
//! segments ([`handshake`]): its SYN-ACK (an upload's SYN) and the peer's ACK, which give
//! SRTT, the RTO and min_rtt their first sample before any data leaves. A ping-pong's stream
//! ([`TcpSender::open_stream`]) opens established, without that sample.

use std::collections::VecDeque;

use super::cc::{self, AckSample, CaEvent, CaState, CongestionControl, RateSample, Window};
use super::era::{LossDetection, Reduction, TsqLimit, VoidUndoAt};
#[cfg(test)]
use super::ts_of;
use super::{split_token, timer_token, Fired, TcpConfig, TcpStats, TcpTrace, Timer, TsTicks, TRACE_MAX_ROWS};
use crate::packet::{Kind, Packet};
use crate::time::SimTime;
use crate::transport::{Cutter, Endpoint, Output};

mod app;
mod classic;
mod conn;
mod handshake;
mod input;
mod metrics;
mod output;
mod rack;
mod rate;
mod recovery;
mod rtt;
mod scoreboard;
mod subflow;
mod timer;

#[cfg(test)]
mod tests;

use app::*;
use classic::*;
use conn::*;
use handshake::*;
use input::{Ack, Alert};
use metrics::*;
use output::*;
use rack::*;
use rate::*;
use rtt::*;
use scoreboard::*;
pub use subflow::{SubflowView, SUBFLOW_STREAM_BYTES};
use timer::*;

/// The sending end of every flow.
#[derive(Debug)]
pub struct TcpSender {
    config: TcpConfig,
    cutter: Cutter,
    /// Each flow's connection from its opening; a TCP flow's goes when it closes ([`Self::retire`]),
    /// an MPTCP subflow's stays (the connection level reads it to the end).
    conns: Vec<Option<Box<Conn>>>,
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
    /// Flows whose pacing timer was armed by this poll, to be queued ([`Endpoint::poll_timers`]).
    pacing_due: Vec<u32>,
    /// The TCP metrics cache: an entry per destination a connection closed to.
    metrics: std::collections::HashMap<u32, Metrics>,
    /// With a coupled control (LIA, OLIA: MPTCP's subflows, [`TcpSender::with_coupling`]), the
    /// subflows of each connection, `coupled.1` flows in a row, share a group.
    coupled: (Vec<cc::coupled::Group>, u32),
    /// A stream's application writes on the server's CPU ([`TcpSender::with_app_on_cpu`]).
    app_on_cpu: bool,
}

/// The token of the trace's sampling timer (no flow has it).
const TRACE_TOKEN: u64 = u64::MAX;
/// Marks a flow's pacing timer in its token (the retransmission timer's has it clear).
const PACING_TIMER: u64 = 1 << 63;

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
            pacing_due: Vec::new(),
            coupled: (Vec::new(), 1),
            app_on_cpu: false,
        }
    }

    /// A stream's writes cost the server's CPU (`server_host.write_us`): the sender asks the world
    /// for each ([`Output::Writable`]) instead of writing what fits at once.
    pub fn with_app_on_cpu(mut self, on_cpu: bool) -> TcpSender {
        self.app_on_cpu = on_cpu;
        self
    }

    /// The flows are MPTCP subflows, `subflows` per connection in a row: with a coupled
    /// congestion control ([`cc::coupled`]) each connection's share one group.
    pub fn with_coupling(mut self, subflows: u32) -> TcpSender {
        if cc::coupled::NAMES.contains(&self.config.cc.as_str()) {
            let groups = self.conns.len() / subflows as usize;
            self.coupled = ((0..groups).map(|_| cc::coupled::Coupling::group(subflows as usize)).collect(), subflows);
        }
        self
    }

    /// The congestion control of a new connection on `flow`: its own, or its group's share.
    fn congestion_control(&self, flow: u32) -> Box<dyn CongestionControl> {
        let (groups, k) = &self.coupled;
        match groups.get((flow / k) as usize) {
            Some(group) => cc::coupled::build(&self.config.cc, group.clone(), (flow % k) as usize),
            None => cc::build(&self.config.cc, self.config.hystart),
        }
        .expect("validated congestion control")
    }

    /// After an event on `flow`, its window as its coupled siblings read it (nothing without a
    /// coupled control: one test on every ACK and timer).
    #[inline]
    fn publish(&self, flow: u32) {
        let (groups, k) = &self.coupled;
        if groups.is_empty() {
            return;
        }
        if let (Some(group), Some(c)) = (groups.get((flow / k) as usize), self.conns[flow as usize].as_ref()) {
            let open = c.handshake.is_none() && !c.done;
            group.lock().expect("unpoisoned").publish((flow % k) as usize, &c.w, c.state, open);
        }
    }

    /// `flow`'s timer of `generation` fired.
    fn on_conn_timer(&mut self, now: SimTime, flow: u32, generation: u32, out: &mut Vec<Output>) {
        let Some(c) = self.conns[flow as usize].as_mut() else { return };
        match c.timer.fire(now, generation) {
            Fired::Stale => {}
            Fired::Early(at) => out.push(Output::Timer { at, token: timer_token(flow, c.timer.generation()) }),
            // The probe timer after the host refused a send with nothing in flight
            // (`tcp_probe_timer` → `tcp_write_wakeup`): it tries again.
            Fired::Due if std::mem::take(&mut c.xmit_failed) && c.packets_out() == 0 => self.ready.push_back(flow),
            Fired::Due => match c.timer_kind {
                TimerKind::Rto => self.on_rto(flow, now, out),
                TimerKind::LossProbe => self.on_loss_probe(flow, now, out),
                TimerKind::ReoTimeout => self.on_reo_timeout(flow, now, out),
                TimerKind::EarlyRetrans => self.on_early_retrans(flow, now, out),
                TimerKind::Handshake => self.on_handshake_timer(flow, now, out),
            },
        }
    }

    /// The sender with each flow's destination (`destination[flow]`, the client's number): the
    /// connections to one client share its entry in the TCP metrics cache.
    pub fn with_destinations(mut self, destination: Vec<u32>) -> TcpSender {
        self.destination = destination;
        self
    }

    pub(super) fn destination_of(destination: &[u32], flow: u32) -> u32 {
        destination.get(flow as usize).copied().unwrap_or(flow)
    }

    /// Opens `flow` for a stream of `bytes` that the application will write a message
    /// at a time ([`TcpSender::write`]) rather than at once.
    pub fn open_stream(&mut self, now: SimTime, flow: u32, bytes: u64, out: &mut Vec<Output>) {
        self.open_established(now, flow, bytes, out);
        let c = self.conns[flow as usize].as_mut().expect("just opened");
        c.written = 0;
        c.timer.cancel();
    }

    /// The application writes the next `segments` segments of `flow`'s stream (`tcp_sendmsg`);
    /// they leave when the windows, TCP small queues and Nagle allow (`tcp_push`).
    pub fn write(&mut self, now: SimTime, flow: u32, segments: u32, out: &mut Vec<Output>) {
        self.wrote(now, flow, out, |c, _| c.written = (c.written + segments).min(c.total));
    }

    /// `tcp_sendmsg` on `flow`: `add` puts the application's data into the send queue, then
    /// `tcp_push` (a file's segments, [`TcpSender::write`]; a stream's bytes, `app.rs`).
    fn wrote(&mut self, now: SimTime, flow: u32, out: &mut Vec<Output>, add: impl FnOnce(&mut Conn, &TcpConfig)) {
        let config = &self.config;
        let Some(c) = self.conns[flow as usize].as_mut().filter(|c| !c.done) else { return };
        c.rate_check_app_limited(config, c.written - c.snd_nxt);
        add(c, config);
        c.xmit_failed = false; // (`tcp_push` calls `tcp_write_xmit` again)
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
    pub(super) fn sample(&mut self, now: SimTime) {
        for (flow, c) in self.conns.iter().enumerate() {
            let Some(c) = c.as_ref().filter(|c| !c.done) else { continue };
            if !trace_row(&mut self.trace, now, flow as u32, c) {
                return;
            }
        }
    }

    /// A paced flow's departure time came (`tcp_pace_kick` → `tcp_tsq_handler` →
    /// `tcp_write_xmit`): it may send again.
    fn on_pacing_timer(&mut self, now: SimTime, token: u64, out: &mut Vec<Output>) {
        let (flow, generation) = split_token(token);
        let Some(c) = self.conns[flow as usize].as_mut().filter(|c| !c.done) else { return };
        let Some(p) = c.pacing.as_mut() else { return };
        match p.timer.fire(now, generation) {
            Fired::Stale => {}
            Fired::Early(at) => {
                out.push(Output::Timer { at, token: timer_token(flow, p.timer.generation()) | PACING_TIMER })
            }
            Fired::Due => {
                c.xmit_failed = false;
                self.ready.push_back(flow);
            }
        }
    }

    /// The pacing timers this poll armed ([`Endpoint::poll_timers`]).
    #[inline(never)]
    fn queue_pacing_timers(&mut self, out: &mut Vec<Output>) {
        for flow in self.pacing_due.drain(..) {
            // (A flow that closed since it armed its timer has no departure left: its state is gone.)
            let Some(p) = self.conns[flow as usize].as_ref().and_then(|c| c.pacing.as_ref()) else { continue };
            out.push(Output::Timer { at: p.timer.at(), token: timer_token(flow, p.timer.generation()) | PACING_TIMER });
        }
    }

    /// What the senders did so far: the counts, and what the connections still held hold.
    pub fn stats(&self) -> TcpStats {
        let mut s = self.stats.clone();
        self.conns.iter().flatten().for_each(|c| fold(&mut s, c));
        s
    }

    /// `flow`'s connection closed: what [`Self::stats`] reads of it is counted now and its state
    /// goes, so a long run of many short flows holds only those open (nothing reads a closed TCP
    /// flow's state: every path filters `Conn::done`).
    fn retire(&mut self, flow: u32) {
        if let Some(c) = self.conns[flow as usize].take() {
            fold(&mut self.stats, &c);
        }
    }
}

/// What [`TcpSender::stats`] reads of a connection, added to `s`.
fn fold(s: &mut TcpStats, c: &Conn) {
    s.reordering_sum += u64::from(c.reordering);
    s.reordering_max = s.reordering_max.max(c.reordering);
    s.min_rtt_min = s.min_rtt_min.into_iter().chain(c.min_rtt).min();
}

impl Endpoint for TcpSender {
    fn open(&mut self, now: SimTime, flow: u32, bytes: u64, out: &mut Vec<Output>) {
        self.open_handshake(now, flow, bytes, out);
    }

    fn on_packet(&mut self, now: SimTime, packet: Packet, out: &mut Vec<Output>) {
        debug_assert_eq!(packet.kind, Kind::Ack);
        if self.conns[packet.flow as usize].as_ref().is_some_and(|c| c.handshake.is_some()) {
            self.handshake_acked(now, &packet, out);
        } else {
            self.on_ack(now, &packet, false, out);
        }
        self.publish(packet.flow);
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
        if token & PACING_TIMER != 0 {
            return self.on_pacing_timer(now, token & !PACING_TIMER, out);
        }
        let (flow, generation) = split_token(token);
        self.on_conn_timer(now, flow, generation, out);
        self.publish(flow);
    }

    /// Every poll of an unpaced sender finds nothing to arm: this test is all it costs (inlined
    /// into the world's loop), the queueing being out of line.
    #[inline]
    fn poll_timers(&mut self, _now: SimTime, out: &mut Vec<Output>) {
        if !self.pacing_due.is_empty() {
            self.queue_pacing_timers(out);
        }
    }

    fn poll_transmit(&mut self, now: SimTime) -> Option<Packet> {
        let p = self.urgent.pop_front().inspect(|p| {
            // A timer's send: not `tcp_write_xmit`'s, so not one to take back.
            if let Some(c) = self.conns[p.flow as usize].as_mut() {
                c.last_send = SendRecord::default();
            }
        });
        let p = p.or_else(|| {
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

    fn unsent(&mut self, now: SimTime, packet: &Packet, out: &mut Vec<Output>) -> bool {
        self.take_back(now, packet, out)
    }

    fn app_write(&mut self, now: SimTime, flow: u32, out: &mut Vec<Output>) {
        self.write_one(now, flow, out);
    }

    fn is_idle(&self) -> bool {
        self.active == 0 && self.unopened == 0 && self.urgent.is_empty()
    }

    fn reliable(&self) -> bool {
        true
    }

    fn report(&mut self, r: &mut crate::report::Report) {
        self.stats().report(self.conns.len(), r);
        if let Some(trace) = self.take_trace() {
            trace.report(r);
        }
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
    t.cc_mode.push(c.cc.mode());
    true
}
