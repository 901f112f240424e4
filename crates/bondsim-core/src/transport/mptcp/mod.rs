//! Multipath TCP as Linux runs it (`net/mptcp`, read in the 6.18.y tree; the rules, each with its
//! function, are gathered in `benchmarks/results/mptcp-kernel-rules.md`): one MPTCP connection
//! per request, with a TCP subflow per link, each the model's full TCP ([`super::tcp`]: its own
//! congestion control, RTT, RACK-TLP, small queues), uncoupled as in Linux.
//!
//! Above the subflows, the connection level:
//! * [`sender`]: the data sequence space (one DSN per packet of the file, carried by every
//!   segment's DSS mapping, [`Packet::dss`]), the default scheduler
//!   (`mptcp_subflow_get_send`, [`sched`]) pushing bursts into the subflows, the data-level
//!   window and DATA_ACK, the send buffer the application writes into, the MPTCP
//!   retransmission timer, stale subflows and reinjection, backup subflows;
//! * [`receiver`]: per subflow Linux's TCP receiver, then the connection-level reordering
//!   queue (`mptcp_data_queue_ofo`) that hands the application its data in order, and the
//!   DATA_ACK every subflow's ACK carries.
//!
//! The world routes subflow `i` of a connection over link `i` both ways (each subflow bound to
//! its device, as the in-kernel path manager makes them from one `subflow` endpoint per link):
//! on the wire a subflow is a flow of its own, [`wire_flow`]. The bond's scheduler is not used.
//!
//! Not modelled (Stage 1): the DATA_FIN exchange (a connection ends when its last data is
//! acknowledged at the data level), ADD_ADDR signalling and its timing, MP_FAIL and the fallback
//! to TCP, checksums, the shared receive buffer (each subflow advertises its own TCP window;
//! the data-level window is the DATA_ACK plus the window of the subflow that carried it, as
//! `ack_update_msk`), the MP_JOIN's fourth ACK (a join carries data once its own handshake's
//! ACK reaches the data sender).

pub mod receiver;
pub mod sched;
pub mod sender;

use crate::report::{count, real, Declared};

pub use receiver::MptcpReceiver;
pub use sender::MptcpSender;

/// The flow a subflow is on the wire: subflow `sub` of connection `conn`, of `subflows` each.
pub fn wire_flow(conn: u32, sub: u32, subflows: u32) -> u32 {
    conn * subflows + sub
}

/// The connection and subflow of wire flow `flow` ([`wire_flow`]'s inverse).
pub fn split_flow(flow: u32, subflows: u32) -> (u32, u32) {
    (flow / subflows, flow % subflows)
}

/// The connection level's settings, resolved once from the scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct MptcpConfig {
    /// Subflows per connection (`sender.mptcp_subflows`), subflow `i` on link `i`.
    pub subflows: u32,
    /// Which subflows are backups (`sender.mptcp_backup`), by subflow.
    pub backup: Vec<bool>,
    /// `net.mptcp.stale_loss_cnt`.
    pub stale_loss_cnt: u32,
    /// Payload bytes per segment (the subflows' MSS, the DSS option taken off).
    pub mss: u32,
    /// `net.ipv4.tcp_wmem`: the subflows' send buffers, which the connection's sums.
    pub wmem: [u64; 3],
    /// The receive window a connection starts with, bytes (as TCP's).
    pub rwnd_initial: u64,
    /// The packet scheduler every connection runs (`sender.mptcp_scheduler`).
    pub scheduler: &'static sched::SchedInfo,
}

impl MptcpConfig {
    /// The settings of `scenario`'s MPTCP sender, whose subflows run `tcp`; none for another sender.
    pub fn of(scenario: &crate::Scenario, tcp: &super::tcp::TcpConfig) -> Option<MptcpConfig> {
        let crate::scenario::Sender::Mptcp(m) = &scenario.sender else { return None };
        let subflows = scenario.mptcp_subflows();
        Some(MptcpConfig {
            subflows,
            backup: (0..subflows as usize).map(|id| m.mptcp.mptcp_backup.contains(&scenario.link_name(id))).collect(),
            stale_loss_cnt: m.mptcp.mptcp_stale_loss_cnt,
            mss: tcp.mss,
            wmem: m.tcp.tcp_wmem,
            rwnd_initial: tcp.rwnd_initial,
            scheduler: sched::info(&m.mptcp.mptcp_scheduler),
        })
    }
}

/// The summary figures MPTCP's ends report.
pub const FIGURES: &[Declared] = &[
    count("mptcp_reinjected"),
    count("mptcp_stale"),
    count("mptcp_recovered"),
    count("mptcp_rtx_timeouts"),
    count("mptcp_ofo_max"),
    real("mptcp_ofo_delay_mean_ms"),
    real("mptcp_ofo_delay_max_ms"),
    count("mptcp_duplicates"),
];

#[cfg(test)]
mod tests;
