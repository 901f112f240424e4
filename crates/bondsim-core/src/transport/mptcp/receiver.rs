//! MPTCP's receiving end: Linux's TCP receiver per subflow ([`TcpReceiver`]: its own
//! reassembly, SACK and delayed ACKs, one SACK block per ACK beside the DSS option), then the
//! connection level (Linux 6.18.y, net/mptcp/protocol.c):
//! * in-order subflow data is moved to the connection (`__mptcp_move_skbs_from_subflow` →
//!   `__mptcp_move_skb`): the packet the application expects next (`ack_seq`) is handed on,
//!   with everything it uncovers in the out-of-order queue (`__mptcp_ofo_queue`); a later one
//!   waits in that queue (`mptcp_data_queue_ofo`); one already received is dropped
//!   (`DuplicateData`);
//! * every ACK a subflow sends carries the DATA_ACK (`mptcp_established_options_dss`: `ack_seq`
//!   when the option is written, after the segment it answers was moved on).
//!
//! The connection-level queue's size and the time packets wait in it are the reordering MPTCP
//! absorbs: `mptcp_ofo_max`, `mptcp_ofo_delay_mean_ms`, `mptcp_ofo_delay_max_ms`.

use std::collections::BTreeMap;

use super::split_flow;
use crate::packet::{Kind, Packet};
use crate::report::Report;
use crate::time::SimTime;
use crate::transport::tcp::receiver::{RcvSpace, TcpReceiver};
use crate::transport::tcp::sender::SUBFLOW_STREAM_BYTES;
use crate::transport::{Endpoint, Output};

/// One connection's data level at the receiver.
#[derive(Debug, Default)]
struct Rx {
    /// The next packet the application expects (`ack_seq`).
    ack_seq: u32,
    /// The connection's receive window, which every subflow advertises (`mptcp_set_rwin`), and
    /// its right-sizing on what the application read (`mptcp_rcv_space_adjust`).
    space: RcvSpace,
    /// Bytes the application read.
    read: u64,
    /// The right edge of the window advertised so far, packets (`rcv_wnd_sent`): it never moves
    /// back.
    edge: u32,
    /// Packets above it that arrived, with when (`out_of_order_queue`).
    ofo: BTreeMap<u32, (Packet, SimTime)>,
}

/// MPTCP's receiving end for every connection of the run.
#[derive(Debug)]
pub struct MptcpReceiver {
    tcp: TcpReceiver,
    subflows: u32,
    conns: Vec<Rx>,
    scratch: Vec<Output>,
    ofo_max: u64,
    ofo_waits: u64,
    ofo_wait_sum: SimTime,
    ofo_wait_max: SimTime,
    duplicates: u64,
}

impl MptcpReceiver {
    /// The receiving end of `conns` connections of `subflows` subflows each, run by `tcp`
    /// (built for every subflow).
    pub fn new(tcp: TcpReceiver, subflows: u32, conns: usize) -> MptcpReceiver {
        let space = RcvSpace::new(tcp.config().rwnd_initial, tcp.config().mss);
        MptcpReceiver {
            tcp,
            subflows,
            conns: (0..conns).map(|_| Rx { space, ..Rx::default() }).collect(),
            scratch: Vec::new(),
            ofo_max: 0,
            ofo_waits: 0,
            ofo_wait_sum: SimTime::ZERO,
            ofo_wait_max: SimTime::ZERO,
            duplicates: 0,
        }
    }

    /// A subflow handed on `packet` in its own order: the connection level takes it.
    fn move_skb(&mut self, now: SimTime, packet: Packet, out: &mut Vec<Output>) {
        let (conn, _) = split_flow(packet.flow, self.subflows);
        let rx = &mut self.conns[conn as usize];
        let dsn = packet.dss();
        let at_app = Packet { flow: conn, seq: dsn, ..packet };
        if dsn < rx.ack_seq || rx.ofo.contains_key(&dsn) {
            self.duplicates += 1;
            return;
        }
        if dsn > rx.ack_seq {
            rx.ofo.insert(dsn, (at_app, now));
            self.ofo_max = self.ofo_max.max(rx.ofo.len() as u64);
            return;
        }
        rx.ack_seq += 1;
        rx.read += u64::from(at_app.bytes);
        out.push(Output::Deliver(at_app));
        while let Some(entry) = rx.ofo.first_entry().filter(|e| *e.key() == rx.ack_seq) {
            let (p, since) = entry.remove();
            let wait = now.saturating_sub(since);
            self.ofo_waits += 1;
            self.ofo_wait_sum += wait;
            self.ofo_wait_max = self.ofo_wait_max.max(wait);
            rx.ack_seq += 1;
            rx.read += u64::from(p.bytes);
            out.push(Output::Deliver(p));
        }
        self.space_adjust(now, conn);
    }

    /// `mptcp_rcv_space_adjust` after the application read: TCP's rule on the whole
    /// connection's reads, once per the longest RTT any subflow's receiver measured, growing as
    /// `mptcp_rcvbuf_grow` (twice what was read and the slow-start term, no extra segments).
    fn space_adjust(&mut self, now: SimTime, conn: u32) {
        let config = self.tcp.config();
        if !config.moderate_rcvbuf {
            return;
        }
        let rtt =
            (0..self.subflows).filter_map(|sub| self.tcp.rcv_rtt(super::wire_flow(conn, sub, self.subflows))).max();
        let max = config.rwnd_max;
        let rx = &mut self.conns[conn as usize];
        if let Some(rtt) = rtt {
            rx.space.adjust(now, rtt, rx.read, 0, max);
        }
    }

    /// Takes the subflows' outputs: their deliveries go to the connection level.
    fn forward(&mut self, now: SimTime, out: &mut Vec<Output>) {
        let mut tcp_out = std::mem::take(&mut self.scratch);
        for o in tcp_out.drain(..) {
            match o {
                Output::Deliver(p) => self.move_skb(now, p, out),
                other => out.push(other),
            }
        }
        self.scratch = tcp_out;
    }
}

impl Endpoint for MptcpReceiver {
    fn open(&mut self, now: SimTime, conn: u32, _bytes: u64, out: &mut Vec<Output>) {
        for sub in 0..self.subflows {
            let flow = super::wire_flow(conn, sub, self.subflows);
            self.tcp.open(now, flow, SUBFLOW_STREAM_BYTES, &mut self.scratch);
        }
        self.forward(now, out);
    }

    fn on_packet(&mut self, now: SimTime, packet: Packet, out: &mut Vec<Output>) {
        self.tcp.on_packet(now, packet, &mut self.scratch);
        self.forward(now, out);
    }

    fn on_timer(&mut self, now: SimTime, token: u64, out: &mut Vec<Output>) {
        self.tcp.on_timer(now, token, &mut self.scratch);
        self.forward(now, out);
    }

    fn poll_transmit(&mut self, now: SimTime) -> Option<Packet> {
        let mut ack = self.tcp.poll_transmit(now)?;
        if ack.kind == Kind::Ack {
            let (conn, _) = split_flow(ack.flow, self.subflows);
            let mss = u64::from(self.tcp.config().mss);
            let rx = &mut self.conns[conn as usize];
            ack.set_dss(rx.ack_seq);
            // Every subflow advertises the connection's free space (`__tcp_select_window` takes it
            // from `mptcp_space`: `__mptcp_space` is the receive buffer less what the connection
            // holds, here its reordering queue, the application reading at once), and no less
            // than the right edge any subflow advertised (`mptcp_set_rwin`: `rcv_wnd_sent`).
            let window = (rx.space.rcv_wnd / mss).min(u64::from(u32::MAX)) as u32;
            let free = window.saturating_sub(rx.ofo.len() as u32);
            rx.edge = rx.edge.max(rx.ack_seq.saturating_add(free));
            ack.seq = rx.edge - rx.ack_seq;
        }
        Some(ack)
    }

    fn is_idle(&self) -> bool {
        self.tcp.is_idle()
    }

    fn reliable(&self) -> bool {
        true
    }

    fn report(&mut self, r: &mut Report) {
        self.tcp.report(r);
        r.max("mptcp_ofo_max", self.ofo_max);
        r.add("mptcp_duplicates", self.duplicates);
        let mean = (self.ofo_waits > 0).then(|| self.ofo_wait_sum.as_secs_f64() * 1e3 / self.ofo_waits as f64);
        r.first("mptcp_ofo_delay_mean_ms", mean.unwrap_or(0.0));
        r.first("mptcp_ofo_delay_max_ms", self.ofo_wait_max.as_secs_f64() * 1e3);
    }
}
