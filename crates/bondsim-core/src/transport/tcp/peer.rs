//! A TCP end that sends and receives: one [`TcpSender`] and one [`TcpReceiver`]
//! per connection, as one Linux socket, running a request/response (ping-pong)
//! application (`workload.kind = "pingpong"`).
//!
//! Each pair is one connection (one flow). The server's end writes the first
//! token; each end writes the next token as soon as its application has read
//! the whole token from the other (seed 001, Fig. 5: "receives and stores it in
//! a buffer, and then immediately returns it"). The server's tokens leave through
//! the bond, the client's through its peer (the switch), like its ACKs.
//!
//! The socket's two halves meet where Linux's do: an arriving segment's ACK is
//! processed before its data (`tcp_rcv_established`: `tcp_ack`, then
//! `tcp_data_queue`); every data segment leaving carries the current ACK and
//! cancels a pending delayed ACK (`tcp_event_ack_sent`), and tells the receive
//! half that data left (`tcp_event_data_sent`: the ping-pong heuristic);
//! pure ACKs queued by the receive half leave before data written after them.

use super::receiver::TcpReceiver;
use super::sender::TcpSender;
use super::TcpConfig;
use crate::packet::{Kind, Packet};
use crate::report::{count, nearest_rank, real, Declared, Report};
use crate::time::SimTime;
use crate::transport::{Cutter, Endpoint, Output};

/// Timer tokens of the receive half carry this bit (the send half's never do: a
/// flow fills at most 24 bits of a token's high half, and the trace token is all ones).
const RECEIVER_TIMER: u64 = 1 << 62;

/// Which end of the pairs this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The server's end: writes the first token of each exchange and times it.
    Server,
    /// A client's end: answers each token with one of its own.
    Client,
}

/// What the ping-pong application at one end saw.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PingPongStats {
    /// Tokens read whole at this end.
    pub tokens: u64,
    /// Bytes of one token.
    pub token_bytes: u64,
    /// Round trips of each completed exchange (the server's end: from writing its
    /// token to having read the whole answer), nanoseconds.
    pub exchange_rtts_ns: Vec<u64>,
}

/// The summary figures a ping-pong's ends report ([`PingPongStats`], both ends together): tokens
/// read whole, both directions; those tokens' bytes per second in MB/s (10^6 bytes; seed 001's
/// Fig. 5 unit); exchanges completed (the server's token out and the client's back); their mean
/// and 99th-percentile (nearest rank) round trip, ms (the server writes its token until it has
/// read the whole answer).
pub const FIGURES: &[Declared] = &[
    count("pingpong_tokens"),
    real("token_mbytes_per_s"),
    count("exchanges"),
    real("exchange_rtt_mean_ms"),
    real("exchange_rtt_p99_ms"),
];

impl PingPongStats {
    /// Reports this end's figures ([`FIGURES`]): tokens add up, round trips are the server's.
    pub fn report(&self, r: &mut Report) {
        r.add("pingpong_tokens", self.tokens);
        r.rate("token_mbytes_per_s", self.tokens * self.token_bytes, 1e6);
        let mut rtts = self.exchange_rtts_ns.clone();
        rtts.sort_unstable();
        r.add("exchanges", rtts.len() as u64);
        r.first(
            "exchange_rtt_mean_ms",
            (!rtts.is_empty()).then(|| rtts.iter().sum::<u64>() as f64 / rtts.len() as f64 / 1e6),
        );
        r.first("exchange_rtt_p99_ms", nearest_rank(&rtts, 0.99).map(|&ns| ns as f64 / 1e6));
    }
}

/// One pair's application state.
#[derive(Debug, Clone, Copy, Default)]
struct App {
    /// Segments read in order so far.
    read: u32,
    /// Tokens written so far.
    written: u32,
    /// When the latest token was written.
    written_at: SimTime,
}

/// The ping-pong end of every pair.
#[derive(Debug)]
pub struct TcpPeer {
    sender: TcpSender,
    receiver: TcpReceiver,
    role: Role,
    token_bytes: u64,
    token_segments: u32,
    rounds: u32,
    apps: Vec<App>,
    stats: PingPongStats,
    scratch: Vec<Output>,
}

impl TcpPeer {
    /// The `role` end of `flows` pairs bouncing tokens of `token_bytes`, `rounds` times each.
    pub fn new(config: TcpConfig, cutter: Cutter, flows: usize, role: Role, token_bytes: u64, rounds: u32) -> TcpPeer {
        TcpPeer {
            receiver: TcpReceiver::new(config.clone(), cutter, flows),
            sender: TcpSender::new(config, cutter, flows),
            role,
            token_bytes,
            token_segments: cutter.packets(token_bytes) as u32,
            rounds,
            apps: vec![App::default(); flows],
            stats: PingPongStats { token_bytes, ..PingPongStats::default() },
            scratch: Vec::new(),
        }
    }

    /// The application writes its next token on `flow`.
    fn write_token(&mut self, now: SimTime, flow: u32, out: &mut Vec<Output>) {
        let app = &mut self.apps[flow as usize];
        app.written += 1;
        app.written_at = now;
        self.sender.write(now, flow, self.token_segments, out);
    }
}

impl Endpoint for TcpPeer {
    fn start(&mut self, now: SimTime, out: &mut Vec<Output>) {
        self.sender.start(now, out);
    }

    fn open(&mut self, now: SimTime, flow: u32, bytes: u64, out: &mut Vec<Output>) {
        debug_assert_eq!(bytes, self.token_bytes * u64::from(self.rounds));
        self.receiver.open(now, flow, bytes, out);
        self.sender.open_stream(now, flow, bytes, out);
        if self.role == Role::Server {
            self.write_token(now, flow, out);
        }
    }

    fn on_packet(&mut self, now: SimTime, packet: Packet, out: &mut Vec<Output>) {
        if packet.kind == Kind::Ack {
            return self.sender.on_packet(now, packet, out);
        }
        let flow = packet.flow;
        self.sender.on_piggybacked_ack(now, &packet, out);
        let mut got = std::mem::take(&mut self.scratch);
        self.receiver.on_packet(now, packet, &mut got);
        for o in got.drain(..) {
            match o {
                Output::Deliver(p) => {
                    out.push(Output::Deliver(p));
                    let app = &mut self.apps[flow as usize];
                    app.read += 1;
                    if !app.read.is_multiple_of(self.token_segments) {
                        continue;
                    }
                    // A whole token is read: the exchange it answers is complete at the
                    // server; the application answers at once if it has tokens left.
                    self.stats.tokens += 1;
                    let (written, written_at) = (app.written, app.written_at);
                    if self.role == Role::Server {
                        self.stats.exchange_rtts_ns.push(now.0 - written_at.0);
                    }
                    if written < self.rounds {
                        self.write_token(now, flow, out);
                    }
                }
                Output::Timer { at, token } => out.push(Output::Timer { at, token: token | RECEIVER_TIMER }),
                other => out.push(other),
            }
        }
        self.scratch = got;
    }

    fn on_timer(&mut self, now: SimTime, token: u64, out: &mut Vec<Output>) {
        if token != u64::MAX && token & RECEIVER_TIMER != 0 {
            let mut got = std::mem::take(&mut self.scratch);
            self.receiver.on_timer(now, token & !RECEIVER_TIMER, &mut got);
            out.extend(got.drain(..).map(|o| match o {
                Output::Timer { at, token } => Output::Timer { at, token: token | RECEIVER_TIMER },
                other => other,
            }));
            self.scratch = got;
        } else {
            self.sender.on_timer(now, token, out);
        }
    }

    fn poll_transmit(&mut self, now: SimTime) -> Option<Packet> {
        if let Some(ack) = self.receiver.poll_transmit(now) {
            return Some(ack);
        }
        let mut data = self.sender.poll_transmit(now)?;
        self.receiver.piggyback(now, &mut data);
        Some(data)
    }

    fn is_idle(&self) -> bool {
        self.sender.is_idle() && self.receiver.is_idle()
    }

    fn reliable(&self) -> bool {
        true
    }

    fn on_tx_done(&mut self, now: SimTime, packet: &Packet, out: &mut Vec<Output>) {
        if packet.is_data() {
            self.sender.on_tx_done(now, packet, out);
        }
    }

    fn hears_tx_done(&self) -> bool {
        true
    }

    fn poll_timers(&mut self, now: SimTime, out: &mut Vec<Output>) {
        self.sender.poll_timers(now, out);
    }

    fn report(&mut self, r: &mut Report) {
        self.sender.report(r);
        self.receiver.report_paws(r);
        self.stats.report(r);
    }
}
