//! The packet as it travels through the fabric: data from the server to a
//! client, or an acknowledgement back.
//!
//! Packets are typed so that a transport can carry what real TCP carries:
//! sequence and acknowledgement numbers, SACK blocks (RFC 2018: at most 3
//! blocks fit beside the timestamp option in 40 option bytes), the timestamp
//! option (RFC 7323 §3) and a retransmission mark, in 64 bytes (one cache
//! line: link queues hold many packets, so the size is engine speed). Transports that need none
//! of it (paced, window, cbr) leave those fields at their defaults.

use crate::time::SimTime;

/// Linux's `IP_MF` (include/net/ip.h): more fragments follow.
pub const IP_MF: u16 = 0x2000;
/// Linux's `IP_OFFSET`: the fragment offset, in 8-byte units.
pub const IP_OFFSET: u16 = 0x1fff;
/// The UDP header (RFC 768): the schema's ([`crate::scenario::UDP_HEADER_BYTES`]).
pub use crate::scenario::UDP_HEADER_BYTES;
/// An ARP packet for IPv4 over Ethernet (RFC 826: 8 bytes of header, two 6-byte hardware
/// and two 4-byte protocol addresses).
pub const ARP_BYTES: u32 = 28;

/// The option bytes a SYN or SYN-ACK carries beyond a data segment's, whose header the scenario's
/// `network.header_bytes` counts with the timestamp option (NOP, NOP, TS: 12 bytes). Linux lays a
/// handshake segment's options out as `tcp_options_write` (net/ipv4/tcp_output.c, 6.18) with
/// `tcp_synack_options` / `tcp_syn_options`: MSS (4), SACK-permitted with the timestamp (2 + 10),
/// NOP and window scale (1 + 3): 20 bytes, 8 more.
pub const HANDSHAKE_EXTRA_BYTES: u32 = 8;

/// What a packet is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Kind {
    /// Payload of a flow, server to client.
    #[default]
    Data,
    /// An acknowledgement, client to server (no payload).
    Ack,
    /// TCP data that carries an acknowledgement in `ack` and the SACK fields: a segment of a
    /// connection whose data flows both ways (a ping-pong's). Never an IP fragment.
    DataAck,
    /// The bond's ARP monitor probe to target number `flow` (RFC 826), host to switch.
    ArpRequest,
    /// A target's answer to a probe, switch to host.
    ArpReply,
    /// The data sender's handshake segment (RFC 9293 §3.5): a download's SYN-ACK, server to
    /// client, or an upload's SYN, client to server; answered by the peer's ACK, which gives the
    /// sender its first RTT sample. No payload: `bytes` holds the option bytes it carries beyond a
    /// data segment's header ([`HANDSHAKE_EXTRA_BYTES`]).
    Handshake,
}

/// A SACK block: the sequence range `[start, end)` received above a hole (RFC 2018 §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SackBlock {
    /// First sequence number of the block.
    pub start: u32,
    /// One past the last sequence number of the block.
    pub end: u32,
}

/// One packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Packet {
    /// The flow (request) it belongs to.
    pub flow: u32,
    /// Data or acknowledgement.
    pub kind: Kind,
    /// [`Packet::RETRANSMIT`] and [`Packet::PSH`] (one byte for both: the packet fills a cache
    /// line to the byte).
    pub flags: u8,
    /// Data: its position in the flow, from 0 (the thesis's chunk number).
    /// Acknowledgement: the receive window it advertises, in segments above
    /// `ack` (TCP's Window field, RFC 9293 §3.1; an ACK has no data position).
    pub seq: u32,
    /// Acknowledgement: the next sequence number the receiver expects (cumulative).
    /// Data of a datagram transport (UDP): the IPv4 header's fragment field in host
    /// order (RFC 791 §3.1: `IP_MF` 0x2000 and the offset in 8-byte units in the low
    /// 13 bits, Linux's `iph->frag_off` without `IP_DF`), 0 for a datagram sent whole.
    /// A fragment's `seq` is its datagram's and its `bytes` the IP payload it carries
    /// (the first fragment's includes the 8-byte UDP header).
    pub ack: u32,
    /// Payload bytes.
    pub bytes: u32,
    /// SACK blocks in use (`sack[..sack_len]`).
    pub sack_len: u8,
    /// Segmentation offload: data segments the bond sees as one buffer (one
    /// GSO/TSO skb) and places together. On the buffer's first segment, how
    /// many it holds (2 or more); on each of the others 1 ("with the previous
    /// one"); 0 on a packet that is a buffer of its own.
    pub gso: u8,
    /// SACK blocks, most recent first.
    pub sack: [SackBlock; 3],
    /// Timestamp option, echoed value (TSecr). The packet's own value (TSval) is
    /// its sender's clock when it was made, [`Packet::born`], so it is not stored
    /// twice (RFC 7323 §3: TSval is the sender's timestamp clock when sent).
    pub ts_ecr: u32,
    /// When the sender handed it to the fabric.
    pub born: SimTime,
    /// Position among every packet the bond sent (the order a resequencing receiver restores).
    pub bond_seq: u64,
}

const _: () = assert!(std::mem::size_of::<Packet>() == 64);

impl Packet {
    /// Sent again after a loss was detected (or presumed).
    pub const RETRANSMIT: u8 = 1;
    /// TCP's PSH flag (RFC 9293 §3.1): the segment ends one of the application's writes
    /// (`tcp_mark_push` on the last skb of each `sendmsg`, net/ipv4/tcp.c).
    pub const PSH: u8 = 2;

    /// Sent again after a loss was detected (or presumed).
    #[inline(always)]
    pub fn retransmit(&self) -> bool {
        self.flags & Packet::RETRANSMIT != 0
    }

    /// TCP's PSH flag ([`Packet::PSH`]).
    #[inline(always)]
    pub fn psh(&self) -> bool {
        self.flags & Packet::PSH != 0
    }

    /// A data packet of `bytes` payload, number `seq` of `flow`, made at `born`.
    pub fn data(flow: u32, seq: u32, bytes: u32, born: SimTime) -> Packet {
        Packet { flow, seq, bytes, born, ..Packet::default() }
    }

    /// An acknowledgement of `flow` up to (not including) `ack`, made at `born`.
    pub fn ack(flow: u32, ack: u32, born: SimTime) -> Packet {
        Packet { flow, kind: Kind::Ack, ack, born, ..Packet::default() }
    }

    /// `flow`'s handshake segment ([`Kind::Handshake`]), made at `born`.
    pub fn handshake(flow: u32, born: SimTime) -> Packet {
        Packet { flow, kind: Kind::Handshake, bytes: HANDSHAKE_EXTRA_BYTES, born, ..Packet::default() }
    }

    /// An ARP monitor probe (`kind` = [`Kind::ArpRequest`]) or reply to or from target `target`.
    pub fn arp(kind: Kind, target: u32, born: SimTime) -> Packet {
        Packet { flow: target, kind, born, ..Packet::default() }
    }

    /// MPTCP's DSS option on a subflow's segment (RFC 8684 §3.3): on data, the mapping's data
    /// sequence number (the connection's packet number the segment carries); on an ACK, the
    /// DATA_ACK (the next data sequence number the receiver expects). It rides in the third SACK
    /// block's place, which a subflow never uses: a data segment carries no SACK blocks, and an
    /// MPTCP receiver's ACK has room for one only beside the timestamp and DSS options
    /// ([`crate::transport::mptcp`]).
    pub fn dss(&self) -> u32 {
        self.sack[2].start
    }

    /// Sets the DSS option's number ([`Packet::dss`]).
    pub fn set_dss(&mut self, dsn: u32) {
        self.sack[2].start = dsn;
    }

    /// Whether it is the ARP monitor's (never the application's).
    pub fn is_arp(&self) -> bool {
        matches!(self.kind, Kind::ArpRequest | Kind::ArpReply)
    }

    /// Whether it is an IP fragment (Linux's `ip_is_fragment`: MF set or a non-zero offset).
    pub fn is_fragment(&self) -> bool {
        self.kind == Kind::Data && self.ack & u32::from(IP_MF | IP_OFFSET) != 0
    }

    /// A fragment's offset in its datagram's IP payload, bytes.
    pub fn frag_offset(&self) -> u32 {
        (self.ack & u32::from(IP_OFFSET)) * 8
    }

    /// A fragment with more to follow (`IP_MF`).
    pub fn more_fragments(&self) -> bool {
        self.ack & u32::from(IP_MF) != 0
    }

    /// IP packet bytes given the scenario's IP + transport header bytes: a fragment
    /// carries the IP header only (its transport header, if any, is in `bytes`).
    pub fn l3_bytes(&self, header_bytes: u32) -> u32 {
        if self.is_arp() {
            return ARP_BYTES;
        }
        self.bytes + if self.is_fragment() { header_bytes - UDP_HEADER_BYTES } else { header_bytes }
    }

    /// Whether it carries payload (data, with or without an acknowledgement).
    pub fn is_data(&self) -> bool {
        matches!(self.kind, Kind::Data | Kind::DataAck)
    }

    /// Its SACK blocks.
    pub fn sack_blocks(&self) -> &[SackBlock] {
        &self.sack[..usize::from(self.sack_len)]
    }
}

/// Why a fragmented datagram never reached the application (the first cause wins).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FragLoss {
    /// One of its fragments was dropped on the way (a full queue, a lost carrier, the wire).
    Dropped = 0,
    /// `ip_frag_too_far` reset its queue (`ipfrag_max_dist`).
    MaxDist = 1,
    /// Fragment memory was over `ipfrag_high_thresh`: its queue was evicted, or a fragment refused.
    HighThresh = 2,
    /// Its queue expired after `ipfrag_time` with fragments missing.
    Timeout = 3,
}
