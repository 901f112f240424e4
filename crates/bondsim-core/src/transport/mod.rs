//! Transports: what runs at each end of a flow, sans-IO.
//!
//! An [`Endpoint`] is told what happens to it — a flow opens, a packet
//! arrives, a timer it asked for is due — and answers with [`Output`]s (timers
//! to arm, data to hand to the application); the world then asks it for the
//! packets it wants to send, one at a time ([`Endpoint::poll_transmit`]), and
//! puts each on the fabric before asking for the next. It never sees the
//! event queue, the links or the clock beyond the `now` it is given, so the
//! world can route its events (timers carry the endpoint's own token, which
//! is how it tells a current timer from a stale one) and an emulator could
//! drive the same code in real time.
//!
//! Each transport is one file and builds a server end (the sender) and a client
//! end (the receiver):
//!
//! * [`paced`]: the thesis's scheduler loop (packets per tick).
//! * [`window`]: bulk transfers; each flow keeps a window of packets in
//!   flight and sends the next one when one is delivered (or lost).
//! * [`cbr`]: each flow sends at a constant bit rate, whatever happens to
//!   its packets (an iperf UDP stream).
//! * [`sink`]: the client end of all three: hands every packet to the application.
//! * [`ipfrag`]: IP fragmentation of `cbr`'s UDP datagrams and the client end
//!   that reassembles them (when datagrams exceed the MTU).
//! * [`tcp`]: Linux's TCP, a sender and a receiver per flow.
//! * [`mptcp`]: Linux's Multipath TCP, a connection level over a TCP subflow per link.
//!
//! [`Cutter`] says how a file becomes packets; [`build`] is the registry.

pub mod cbr;
pub mod ipfrag;
pub mod mptcp;
pub mod paced;
pub mod sink;
pub mod tcp;
pub mod window;

use crate::packet::Packet;
use crate::report::{Declared, Report};
use crate::scenario::{Scenario, Sender, Workload};
use crate::time::SimTime;

/// What an endpoint asks of the world besides sending, in the order it asks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Output {
    /// Call [`Endpoint::on_timer`] with `token` at `at`.
    Timer {
        /// When.
        at: SimTime,
        /// The endpoint's own name for the timer (a flow, a generation).
        token: u64,
    },
    /// Hand this packet's payload to the application: the delivery point the metrics measure.
    Deliver(Packet),
    /// This datagram (flow, `seq`) will never reach the application, for this reason.
    Lost(Packet, ipfrag::FragLoss),
    /// The connection of this flow is given up (TCP's `tcp_write_timeout`): what its
    /// application has not received never will.
    Aborted(u32),
    /// This flow's application may write again, on the server's CPU (`server_host.write_us`): the
    /// world runs the write there, then calls [`Endpoint::app_write`].
    Writable(u32),
}

/// What runs at one end of the flows of a run.
#[enum_dispatch::enum_dispatch]
pub trait Endpoint: Send {
    /// The run starts: arm the first timers.
    fn start(&mut self, _now: SimTime, _out: &mut Vec<Output>) {}

    /// Flow `flow` opens: at the server, the application has `bytes` to send.
    fn open(&mut self, now: SimTime, flow: u32, bytes: u64, out: &mut Vec<Output>);

    /// A packet of one of its flows arrived at this end.
    fn on_packet(&mut self, _now: SimTime, _packet: Packet, _out: &mut Vec<Output>) {}

    /// Consecutive segments of one flow arrived as one buffer (the receiving host's GRO merged
    /// them, `[host]`): by default each is a packet of its own; TCP's receiver takes them as one
    /// skb, with one ACK decision.
    fn on_merged(&mut self, now: SimTime, packets: &[Packet], out: &mut Vec<Output>) {
        for p in packets {
            self.on_packet(now, *p, out);
        }
    }

    /// A timer it armed is due.
    fn on_timer(&mut self, _now: SimTime, _token: u64, _out: &mut Vec<Output>) {}

    /// The next packet it wants to send now, if any (the world puts it on the
    /// fabric — the server's through the bond, a client's through its peer —
    /// before asking again).
    fn poll_transmit(&mut self, now: SimTime) -> Option<Packet>;

    /// The timers the sends just polled asked for, once the world has taken every packet
    /// ([`Endpoint::poll_transmit`] returned none): a paced TCP connection's next departure
    /// (Linux arms its pacing hrtimer in `tcp_pacing_check`).
    fn poll_timers(&mut self, _now: SimTime, _out: &mut Vec<Output>) {}

    /// The simulator's oracle: a data packet this end sent was resolved (its
    /// first copy reached the client, or every copy was lost). Real transports
    /// learn this from acknowledgements instead and ignore it.
    fn on_resolved(&mut self, _now: SimTime, _packet: &Packet, _out: &mut Vec<Output>) {}

    /// Whether it wants [`Endpoint::on_resolved`] at all (asked once, when the run is
    /// built; the world skips the oracle's bookkeeping for ends that ignore it).
    fn hears_resolved(&self) -> bool {
        false
    }

    /// True when it has nothing left to send.
    fn is_idle(&self) -> bool;

    /// Whether it repairs losses itself (asked once, at build): the world then
    /// leaves lost packets to it instead of counting them lost at the
    /// application, and hands it duplicate copies (a real receiver sees them).
    fn reliable(&self) -> bool {
        false
    }

    /// A packet this end sent left the sending side: its link finished putting it
    /// on the wire (TX completion) or dropped it. Linux frees the buffer then
    /// (`tcp_wfree`), which is what TCP small queues count.
    fn on_tx_done(&mut self, _now: SimTime, _packet: &Packet, _out: &mut Vec<Output>) {}

    /// Whether it wants [`Endpoint::on_tx_done`] (asked once, at build).
    fn hears_tx_done(&self) -> bool {
        false
    }

    /// The host's own queue refused `packet`, the send just polled (a full queue the host counts:
    /// a `nic` or `shaper` link's; the world has already called [`Endpoint::on_tx_done`]). True:
    /// the end takes it back as never sent (Linux's TCP hears `NET_XMIT_DROP` from the send
    /// itself); false (the default): it is lost as on a wire.
    fn unsent(&mut self, _now: SimTime, _packet: &Packet, _out: &mut Vec<Output>) -> bool {
        false
    }

    /// The application of `flow` made one write, which the world ran on the server's CPU after the
    /// end asked for it ([`Output::Writable`]). Only a TCP stream of messages asks.
    fn app_write(&mut self, _now: SimTime, _flow: u32, _out: &mut Vec<Output>) {}

    /// Reports what this end did, once, when the run ends: its summary figures (declared in its
    /// module and listed in [`FIGURES`]), tables and instants. The server's end reports first.
    fn report(&mut self, _r: &mut Report) {}
}

/// The figures the transports report, in the summary's order (a transport adds its module's list).
pub const FIGURES: &[&[Declared]] =
    &[ipfrag::FIGURES, tcp::FIGURES, tcp::peer::FIGURES, mptcp::FIGURES, tcp::TRACE_FIGURES];

/// Any end: the registry of transports. The world calls ends through this
/// enum rather than a trait object, so each call is a `match` the compiler can
/// inline (the per-packet calls are a large share of the engine's time).
/// Adding a transport adds its end types here.
#[enum_dispatch::enum_dispatch(Endpoint)]
pub enum End {
    /// The thesis's paced sender.
    PacedSender,
    /// The window sender.
    WindowSender,
    /// The constant-bit-rate sender.
    CbrSender,
    /// The receiving end of paced, window and cbr.
    Sink,
    /// The receiving end of cbr when its datagrams are fragmented.
    Reassembler,
    /// TCP's sending end (boxed: it is far larger than the others).
    TcpSender(Box<TcpSender>),
    /// TCP's receiving end.
    TcpReceiver,
    /// A TCP end that sends and receives (a ping-pong workload's ends; boxed as the sender).
    TcpPeer(Box<TcpPeer>),
    /// MPTCP's sending end (boxed, as TCP's).
    MptcpSender(Box<MptcpSender>),
    /// MPTCP's receiving end (boxed: it holds a TCP receiver).
    MptcpReceiver(Box<MptcpReceiver>),
    /// An end defined outside the registry (tests, experiments).
    Custom(Box<dyn Endpoint>),
}

use cbr::CbrSender;
use ipfrag::Reassembler;
use mptcp::{MptcpReceiver, MptcpSender};
use paced::PacedSender;
use sink::Sink;
use tcp::peer::{Role, TcpPeer};
use tcp::receiver::TcpReceiver;
use tcp::sender::TcpSender;
use window::WindowSender;

impl<T: Endpoint + ?Sized> Endpoint for Box<T> {
    fn start(&mut self, now: SimTime, out: &mut Vec<Output>) {
        (**self).start(now, out)
    }
    fn open(&mut self, now: SimTime, flow: u32, bytes: u64, out: &mut Vec<Output>) {
        (**self).open(now, flow, bytes, out)
    }
    fn on_packet(&mut self, now: SimTime, packet: Packet, out: &mut Vec<Output>) {
        (**self).on_packet(now, packet, out)
    }
    fn on_merged(&mut self, now: SimTime, packets: &[Packet], out: &mut Vec<Output>) {
        (**self).on_merged(now, packets, out)
    }
    fn on_timer(&mut self, now: SimTime, token: u64, out: &mut Vec<Output>) {
        (**self).on_timer(now, token, out)
    }
    fn poll_transmit(&mut self, now: SimTime) -> Option<Packet> {
        (**self).poll_transmit(now)
    }
    fn poll_timers(&mut self, now: SimTime, out: &mut Vec<Output>) {
        (**self).poll_timers(now, out)
    }
    fn on_resolved(&mut self, now: SimTime, packet: &Packet, out: &mut Vec<Output>) {
        (**self).on_resolved(now, packet, out)
    }
    fn hears_resolved(&self) -> bool {
        (**self).hears_resolved()
    }
    fn is_idle(&self) -> bool {
        (**self).is_idle()
    }
    fn reliable(&self) -> bool {
        (**self).reliable()
    }
    fn on_tx_done(&mut self, now: SimTime, packet: &Packet, out: &mut Vec<Output>) {
        (**self).on_tx_done(now, packet, out)
    }
    fn hears_tx_done(&self) -> bool {
        (**self).hears_tx_done()
    }
    fn unsent(&mut self, now: SimTime, packet: &Packet, out: &mut Vec<Output>) -> bool {
        (**self).unsent(now, packet, out)
    }
    fn app_write(&mut self, now: SimTime, flow: u32, out: &mut Vec<Output>) {
        (**self).app_write(now, flow, out)
    }
    fn report(&mut self, r: &mut Report) {
        (**self).report(r)
    }
}

/// The two ends of a run's flows.
pub struct Ends {
    /// The server's end (the sender; the receiver of an upload).
    pub server: End,
    /// The clients' end (the receiver; the senders of an upload).
    pub client: End,
}

/// Builds the transport `scenario.sender` names for one flow per entry of `clients`, the client
/// each flow is to or from (TCP keeps its metrics per client host).
pub fn build(scenario: &Scenario, clients: &[u32]) -> Ends {
    let flows = clients.len();
    let cutter = Cutter::for_scenario(scenario);
    match &scenario.sender {
        Sender::Paced(s) => Ends { server: PacedSender::new(s, cutter, flows).into(), client: Sink.into() },
        Sender::Window(s) => Ends { server: WindowSender::new(s, cutter, flows).into(), client: Sink.into() },
        Sender::Cbr(s) => {
            let fragmenter = ipfrag::Fragmenter::for_scenario(scenario);
            Ends {
                server: CbrSender::new(s, cutter, fragmenter, flows).into(),
                client: match fragmenter {
                    Some(_) => Reassembler::new(&scenario.ipfrag).into(),
                    None => Sink.into(),
                },
            }
        }
        Sender::Mptcp(m) => {
            let mut tcp = tcp::TcpConfig::new(&m.tcp, scenario.chunk_bytes(), scenario.bond.hz);
            tcp.sack_blocks = 1;
            tcp.pushed_acks = false;
            let config = mptcp::MptcpConfig::of(scenario, &tcp).expect("an MPTCP sender");
            let wire = flows * config.subflows as usize;
            // A subflow's metrics are its client's (one server address per link is not modelled).
            let destinations = (0..wire).map(|w| clients[w / config.subflows as usize]).collect();
            let subflows = TcpSender::new(tcp.clone(), Cutter::whole_files(u64::from(tcp.mss)), wire)
                .with_destinations(destinations)
                .with_coupling(config.subflows);
            let receiver = TcpReceiver::new(tcp.clone(), Cutter::whole_files(u64::from(tcp.mss)), wire);
            let k = config.subflows;
            Ends {
                server: Box::new(MptcpSender::new(subflows, config, cutter, flows)).into(),
                client: Box::new(MptcpReceiver::new(receiver, k, flows)).into(),
            }
        }
        Sender::Tcp(s) => {
            let config = tcp::TcpConfig::new(s, scenario.chunk_bytes(), scenario.bond.hz);
            if let Workload::PingPong(p) = &scenario.workload {
                let end = |role| Box::new(TcpPeer::new(config.clone(), cutter, flows, role, p.token_bytes, p.rounds));
                return Ends { server: end(Role::Server).into(), client: end(Role::Client).into() };
            }
            let sender: End = Box::new(
                TcpSender::new(config.clone(), cutter, flows)
                    .with_destinations(clients.to_vec())
                    .with_app_on_cpu(scenario.server_host.write_us > 0.0),
            )
            .into();
            let receiver: End = TcpReceiver::new(config, cutter, flows).into();
            if scenario.upload() {
                // The clients send (their packets take the switch's path in), the server receives.
                return Ends { server: receiver, client: sender };
            }
            Ends { server: sender, client: receiver }
        }
    }
}

/// How a file is cut into packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cutter {
    chunk: u64,
    message: Option<u64>,
    thesis: bool,
    /// TCP's stream of messages (`sender.message_bytes`): the writes coalesce in the send queue, so
    /// the sender cuts its segments as it runs ([`Cutter::coalesces`]).
    coalesced: bool,
}

impl Cutter {
    /// The cutting rule of `scenario`'s sender.
    pub fn for_scenario(scenario: &Scenario) -> Cutter {
        // A ping-pong application writes one token at a time: each is cut on its own.
        let message = match &scenario.workload {
            Workload::PingPong(p) => Some(p.token_bytes),
            Workload::Requests(_) => scenario.sender.message_bytes().map(u64::from),
        };
        let coalesced = matches!(&scenario.sender, Sender::Tcp(t) if t.message_bytes.is_some())
            && matches!(scenario.workload, Workload::Requests(_));
        Cutter {
            chunk: u64::from(scenario.chunk_bytes()),
            message,
            thesis: matches!(scenario.sender, Sender::Paced(_)),
            coalesced,
        }
    }

    /// Whole files cut into packets of `chunk` bytes (no messages, not the thesis's rule).
    pub fn whole_files(chunk: u64) -> Cutter {
        Cutter { chunk, message: None, thesis: false, coalesced: false }
    }

    /// Files written `message` bytes at a time, each write cut on its own (a ping-pong's tokens).
    pub fn messages(chunk: u64, message: u64) -> Cutter {
        Cutter { chunk, message: Some(message), thesis: false, coalesced: false }
    }

    /// TCP's stream of `message`-byte writes, coalesced in the send queue ([`Cutter::coalesces`]).
    pub fn coalesced_stream(chunk: u64, message: u64) -> Cutter {
        Cutter { coalesced: true, ..Cutter::messages(chunk, message) }
    }

    /// A TCP stream of messages that coalesce (`tcp_sendmsg` appends each write to the unsent
    /// tail): how many segments it makes and their sizes are the sender's, decided as it runs;
    /// the stream runs until `stop_s`, so its packets are unbounded ([`Cutter::packets`]).
    pub fn coalesces(&self) -> bool {
        self.coalesced
    }

    /// The message size of a stream of messages, bytes.
    pub fn message_bytes(&self) -> Option<u64> {
        self.message
    }

    /// Packets in one message of `m` bytes (an empty message is one empty packet).
    fn per_message(&self, m: u64) -> u64 {
        m.div_ceil(self.chunk).max(1)
    }

    /// Packets a file of `file` bytes becomes.
    ///
    /// The thesis's rule is `file / chunk + 1` (its last read is short, possibly
    /// empty); otherwise every message of `message_bytes` (default: the whole
    /// file) is cut into packets of at most `chunk` bytes.
    pub fn packets(&self, file: u64) -> u64 {
        if self.coalesced {
            return u64::from(u32::MAX);
        }
        if self.thesis {
            return file / self.chunk + 1;
        }
        let m = self.message.unwrap_or(file).max(1);
        if file == 0 {
            return 1;
        }
        let (full, rest) = (file / m, file % m);
        full * self.per_message(m) + if rest > 0 { self.per_message(rest) } else { 0 }
    }

    /// Bytes of a file of `file` bytes that come before its packet `k` (`file`
    /// for `k` = [`Cutter::packets`]): a TCP sequence number in bytes, relative
    /// to the first data byte, for a model sequence number that counts packets.
    pub fn offset(&self, file: u64, k: u64) -> u64 {
        let at = if self.thesis {
            k * self.chunk
        } else {
            let m = self.message.unwrap_or(file).max(1);
            let per = self.per_message(m);
            (k / per) * m + (k % per) * self.chunk
        };
        at.min(file)
    }

    /// Whether packet `k` of a file of `file` bytes ends one of the application's writes (a
    /// message, or the whole file written at once): the segment `tcp_push` marks with PSH
    /// (`tcp_mark_push` on the last skb of each `sendmsg`, net/ipv4/tcp.c).
    pub fn ends_write(&self, file: u64, k: u64) -> bool {
        match self.message.filter(|_| !self.thesis) {
            // One write (or the thesis's rule): its last packet, the one that reaches the file's end
            // (no division on this path, which every TCP segment received takes).
            None => (k + 1) * self.chunk >= file,
            Some(m) => {
                let next = self.offset(file, k) + u64::from(self.packet_bytes(file, k));
                next >= file || next.is_multiple_of(m.max(1))
            }
        }
    }

    /// Payload bytes of packet `k` of a file of `file` bytes.
    #[inline]
    pub fn packet_bytes(&self, file: u64, k: u64) -> u32 {
        if self.thesis {
            // Full chunks while they fit: no division on this path.
            return if (k + 1) * self.chunk <= file { self.chunk as u32 } else { (file - k * self.chunk) as u32 };
        }
        if self.message.is_none() {
            // The whole file is one message: full chunks while another fits before its end
            // (what the rule below gives, without its five divisions per packet).
            return if (k + 1) * self.chunk < file { self.chunk as u32 } else { (file - k * self.chunk) as u32 };
        }
        let m = self.message.unwrap_or(file).max(1);
        let per = self.per_message(m);
        let (message, pos) = (k / per, k % per);
        let size = if message < file / m { m } else { file % m };
        let per_this = self.per_message(size);
        if pos + 1 < per_this {
            self.chunk as u32
        } else {
            (size - (per_this - 1) * self.chunk) as u32
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cutter(chunk: u64, message: Option<u64>, thesis: bool) -> Cutter {
        Cutter { chunk, message, thesis, coalesced: false }
    }

    fn sizes(c: Cutter, file: u64) -> Vec<u32> {
        (0..c.packets(file)).map(|k| c.packet_bytes(file, k)).collect()
    }

    #[test]
    fn a_write_ends_at_each_message_and_at_the_file() {
        let ends = |c: Cutter, file: u64| (0..c.packets(file)).filter(|&k| c.ends_write(file, k)).collect::<Vec<_>>();
        // 4000 bytes in messages of 1500 cut at 1000: 1000+500 | 1000+500 | 1000.
        assert_eq!(ends(cutter(1000, Some(1500), false), 4000), [1, 3, 4]);
        // Messages of a whole number of chunks end on a full one.
        assert_eq!(ends(cutter(1000, Some(2000), false), 4000), [1, 3]);
        // A file written at once: its last segment only.
        assert_eq!(ends(cutter(1448, None, false), 5000), [3]);
        assert_eq!(ends(cutter(1000, None, true), 2500), [2]);
    }

    #[test]
    fn thesis_rule_has_a_short_possibly_empty_last_packet() {
        let c = cutter(1024, None, true);
        assert_eq!(c.packets(102_400), 101);
        assert_eq!(c.packets(716_800), 701); // the thesis's class3_6 log line
        assert_eq!(sizes(cutter(1000, None, true), 2500), [1000, 1000, 500]);
        assert_eq!(sizes(cutter(1000, None, true), 2000), [1000, 1000, 0]);
    }

    #[test]
    fn a_packets_offset_is_the_sum_of_the_sizes_before_it() {
        for (c, file) in [
            (cutter(1000, None, true), 2500),
            (cutter(1000, None, true), 2000),
            (cutter(1000, Some(1500), false), 4000),
            (cutter(1460, Some(64), false), 200),
            (cutter(1448, Some(65536), false), 3 * 65536 + 100),
            (cutter(1460, None, false), 0),
            (cutter(1000, None, false), 1),
            (cutter(1000, None, false), 999),
            (cutter(1000, None, false), 1000),
            (cutter(1000, None, false), 1001),
            (cutter(1000, None, false), 2000),
            (cutter(1448, None, false), 10 * 1448 + 7),
        ] {
            let mut before = 0;
            for k in 0..c.packets(file) {
                assert_eq!(c.offset(file, k), before, "{c:?} file {file} packet {k}");
                before += u64::from(c.packet_bytes(file, k));
            }
            assert_eq!(c.offset(file, c.packets(file)), file, "one past the last packet is the file's end");
        }
    }

    #[test]
    fn stream_rule_cuts_each_message_separately() {
        assert_eq!(sizes(cutter(1000, None, false), 2500), [1000, 1000, 500]);
        assert_eq!(sizes(cutter(1000, None, false), 2000), [1000, 1000]);
        assert_eq!(sizes(cutter(1000, Some(1500), false), 4000), [1000, 500, 1000, 500, 1000]);
        assert_eq!(sizes(cutter(1460, Some(64), false), 200), [64, 64, 64, 8]);
        assert_eq!(sizes(cutter(1460, None, false), 0), [0]);
        let c = cutter(1448, Some(65536), false);
        let total: u64 = sizes(c, 10 * 65536).iter().map(|&b| u64::from(b)).sum();
        assert_eq!(total, 10 * 65536);
    }
}
