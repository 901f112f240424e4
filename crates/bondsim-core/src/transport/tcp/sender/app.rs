//! The application's writes of a stream of messages (`sender.message_bytes`, netperf's
//! TCP_STREAM with `-m`), and the send queue they coalesce in (net/ipv4/tcp.c, Linux 6.18):
//!
//! * `tcp_sendmsg_locked` appends each write to the last skb of the write queue while it is not
//!   sent and has room (`skb->len < size_goal`), so the unsent data is one run of bytes that
//!   `tcp_write_xmit` cuts into segments of at most one MSS when the windows and Nagle let one go:
//!   the model keeps the unsent bytes ([`Stream::unsent`]) and cuts a segment when it leaves,
//!   keeping each segment's size until it is acknowledged, for its retransmissions;
//! * the write queue holds at most the send buffer (`sk_stream_memory_free`: `sk_wmem_queued <
//!   sk_sndbuf`, checked before a write takes a new skb): the model's buffer is
//!   [`TcpConfig::sndbuf_segments`] segments, each skb in the queue (sent or not) taking one, the
//!   partly filled tail included, as a subflow's ([`SubflowView::wmem_queued`]);
//! * a writer that found the buffer full sleeps until an acknowledgement frees a third of it
//!   (`tcp_check_space` → `sk_stream_write_space`: `sk_stream_wspace(sk) >=
//!   sk_stream_min_wspace(sk)`, free space at least half of what is queued, include/net/sock.h);
//! * PSH goes on the skb a write ended in (`tcp_push` → `tcp_mark_push` on the tail at each
//!   `sendmsg`'s end), and is cleared from one a later write goes on past (`if (!copied)
//!   TCP_SKB_CB(skb)->tcp_flags &= ~TCPHDR_PSH`): a segment carries it when it ends where a write
//!   ended. (Linux 2.5.66's `tcp_sendmsg` has the same rules: `tcp_mark_push`, `tcp_memory_free`.)
//!
//! The writes either cost nothing (the application fills the buffer the instant it has room) or
//! cost the server's CPU (`server_host.write_us`): then the sender asks for each write
//! ([`Output::Writable`]) and the world runs it on the CPU ([`Endpoint::app_write`]).
//!
//! Left out: a write larger than the buffer's room is taken whole (Linux copies what fits and
//! sleeps); `forced_push` (PSH every half of the largest window within one long write); the
//! receive window and the congestion window count segments,
//! whatever their size (Linux's receive window counts bytes: small segments reach it later).

use super::*;

/// A stream of messages' send queue.
#[derive(Debug, Clone, Default)]
pub(super) struct Stream {
    /// Bytes of each application write.
    message: u64,
    /// Bytes written and not yet cut into segments (the unsent skbs of the write queue).
    pub(super) unsent: u64,
    /// Bytes cut into segments so far (the offset of `snd_nxt` in the stream).
    cut: u64,
    /// Each segment in `[snd_una, snd_nxt)`: its payload bytes and whether it carries PSH.
    sizes: VecDeque<(u32, bool)>,
    /// The writer found the buffer full and sleeps until it has room again.
    blocked: bool,
}

impl Stream {
    pub(super) fn new(message: u64) -> Stream {
        Stream { message, ..Stream::default() }
    }

    /// The size and PSH of segment `k` (counted from `snd_una`).
    pub(super) fn segment(&self, k: u32) -> (u32, bool) {
        self.sizes[k as usize]
    }

    /// Cuts the next segment from the unsent bytes (`tcp_write_xmit`): its size and PSH.
    pub(super) fn cut(&mut self, mss: u32) -> (u32, bool) {
        let bytes = self.unsent.min(u64::from(mss)) as u32;
        let to = self.cut + u64::from(bytes);
        // It ends where a write ended: the tail `tcp_push` marked. A segment cut from the middle of
        // a write has none (`tcp_sendmsg_locked` clears PSH on an skb a write goes on past).
        let psh = to.is_multiple_of(self.message);
        self.unsent -= u64::from(bytes);
        self.cut = to;
        self.sizes.push_back((bytes, psh));
        (bytes, psh)
    }

    /// The last segment cut was taken back (the host refused it): its bytes are unsent again.
    pub(super) fn uncut(&mut self) {
        let (bytes, _) = self.sizes.pop_back().expect("a segment to take back");
        self.unsent += u64::from(bytes);
        self.cut -= u64::from(bytes);
    }

    /// The first segment was acknowledged.
    pub(super) fn acked(&mut self) {
        self.sizes.pop_front();
    }

    /// Segments the unsent bytes make.
    fn unsent_segments(&self, mss: u32) -> u32 {
        self.unsent.div_ceil(u64::from(mss)) as u32
    }
}

impl Conn {
    /// The size and PSH of segment `seq` (sent, unacknowledged; or the next for a file).
    pub(super) fn segment_bytes(&self, cutter: &Cutter, seq: u32) -> (u32, bool) {
        match &self.stream {
            Some(st) => st.segment(seq - self.snd_una),
            None => {
                let k = u64::from(seq);
                (cutter.packet_bytes(self.file_bytes, k), cutter.ends_write(self.file_bytes, k))
            }
        }
    }

    /// Bytes of the buffer of `segments` segments from `snd_nxt` on (a paced connection's step).
    pub(super) fn buffer_bytes(&self, cutter: &Cutter, mss: u32, segments: u32) -> u64 {
        match &self.stream {
            Some(st) => st.unsent.min(u64::from(segments) * u64::from(mss)),
            None => {
                let from = u64::from(self.snd_nxt);
                (from..from + u64::from(segments)).map(|k| u64::from(cutter.packet_bytes(self.file_bytes, k))).sum()
            }
        }
    }

    /// Bytes of the last of the `segments` segments from `snd_nxt` on (Nagle's test of a short one).
    pub(super) fn last_bytes(&self, cutter: &Cutter, mss: u32, segments: u32) -> u32 {
        match &self.stream {
            Some(_) => (self.buffer_bytes(cutter, mss, segments) - u64::from(segments - 1) * u64::from(mss)) as u32,
            None => cutter.packet_bytes(self.file_bytes, u64::from(self.snd_nxt + segments - 1)),
        }
    }

    /// Writes the application may make now before the buffer is full: those that fit in the
    /// `limit` segments' room (a write into the unsent tail takes no new memory; one that needs a
    /// new skb goes while fewer than `limit` are queued, `sk_stream_memory_free`). A write larger
    /// than that room goes whole while fewer than `limit` are queued (Linux would copy part of it
    /// and sleep; the model's writes are whole).
    fn writes_allowed(&self, mss: u32, limit: u32) -> u64 {
        let Some(st) = &self.stream else { return 0 };
        let room = (u64::from(limit.saturating_sub(self.packets_out())) * u64::from(mss)).saturating_sub(st.unsent);
        match room / st.message {
            0 if room >= u64::from(mss) => 1,
            n => n,
        }
    }

    /// The application writes `writes` messages (`tcp_sendmsg`): `written` counts the segments the
    /// unsent bytes make.
    fn take_writes(&mut self, mss: u32, writes: u64) {
        let st = self.stream.as_mut().expect("a stream");
        st.unsent += writes * st.message;
        self.written = self.snd_nxt + st.unsent_segments(mss);
    }
}

impl TcpSender {
    /// `flow`'s application writes what it may now, or asks the world for its next write on the
    /// CPU; with no room it sleeps ([`Stream::blocked`]) until [`TcpSender::app_wakes`].
    pub(super) fn app_runs(&mut self, now: SimTime, flow: u32, out: &mut Vec<Output>) {
        let (mss, limit, on_cpu) = (self.config.mss, self.config.sndbuf_segments, self.app_on_cpu);
        let Some(c) = self.conns[flow as usize].as_mut() else { return };
        let writes = c.writes_allowed(mss, limit);
        let st = c.stream.as_mut().expect("a stream");
        // Free writes fill the buffer at once, and the writer sleeps on the full buffer.
        st.blocked = writes == 0 || !on_cpu;
        match (writes, on_cpu) {
            (0, _) => {}
            (_, true) => out.push(Output::Writable(flow)),
            (n, false) => self.write_messages(now, flow, n, out),
        }
    }

    /// The world ran one write of `flow`'s application on the server's CPU: it goes into the send
    /// queue, and the application goes on.
    pub(super) fn write_one(&mut self, now: SimTime, flow: u32, out: &mut Vec<Output>) {
        if self.conns[flow as usize].as_ref().is_none_or(|c| c.done || c.stream.is_none()) {
            return;
        }
        self.write_messages(now, flow, 1, out);
        self.app_runs(now, flow, out);
    }

    fn write_messages(&mut self, now: SimTime, flow: u32, writes: u64, out: &mut Vec<Output>) {
        self.wrote(now, flow, out, |c, config| c.take_writes(config.mss, writes));
    }

    /// After an acknowledgement: a sleeping writer wakes once a third of the buffer is free
    /// (`sk_stream_write_space`).
    pub(super) fn app_wakes(&mut self, now: SimTime, flow: u32, out: &mut Vec<Output>) {
        let limit = self.config.sndbuf_segments;
        let Some(c) = self.conns[flow as usize].as_ref() else { return };
        let Some(st) = c.stream.as_ref().filter(|st| st.blocked) else { return };
        let queued = c.packets_out() + st.unsent_segments(self.config.mss);
        if 2 * u64::from(limit.saturating_sub(queued)) >= u64::from(queued) {
            self.app_runs(now, flow, out);
        }
    }
}
