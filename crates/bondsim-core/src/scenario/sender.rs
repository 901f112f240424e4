//! `[sender]`: how the server turns requests into packets (paced, window, cbr, and TCP's fields).

use super::*;
use bondsim_time::SimTime;

/// The server side that turns requests into packets: one of the registered
/// transports, chosen by `kind` (default `paced`). Fields of another kind are
/// errors; unset fields of this kind get their defaults (set here, once).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[serde(try_from = "serde_json::Map<String, serde_json::Value>")]
pub enum Sender {
    /// The thesis model: a periodic loop hands packets to the bond; a file of S
    /// bytes is `S / chunk + 1` packets (the last short, possibly empty).
    Paced(PacedSender),
    /// Bulk transfer: each flow keeps `window_pkts` packets in flight.
    Window(WindowSender),
    /// Constant bit rate per flow (an iperf UDP stream).
    Cbr(CbrSender),
    /// TCP, as Linux's: each file is one connection.
    Tcp(TcpSender),
    /// Multipath TCP, as Linux's (`net/mptcp`): each file is one MPTCP connection with a TCP
    /// subflow per link.
    Mptcp(MptcpSender),
}

/// `kind = "paced"`: the thesis's scheduler loop.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PacedSender {
    /// Payload bytes per packet.
    #[serde(default = "default_chunk_bytes")]
    pub chunk_bytes: u32,
    /// Period of the loop, milliseconds (appendix: 20).
    #[serde(default = "default_tick_ms")]
    pub tick_ms: f64,
    /// Packets taken per tick, one per queued request in turn (appendix: 4).
    #[serde(default = "default_packets_per_tick")]
    pub packets_per_tick: u32,
}

/// `kind = "window"`: each flow keeps a window of packets in flight, released on delivery.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WindowSender {
    /// Payload bytes per packet.
    #[serde(default = "default_chunk_bytes")]
    pub chunk_bytes: u32,
    /// Application write size, bytes: each write is cut into packets of at most
    /// `chunk_bytes` and never merged with the next (default: the whole file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_bytes: Option<u32>,
    /// Packets a flow may have sent but not yet delivered.
    #[serde(default = "default_window_pkts")]
    pub window_pkts: u32,
    /// Time for a delivery to free its window slot, microseconds.
    #[serde(default)]
    pub ack_delay_us: f64,
}

/// `kind = "cbr"`: each flow sends at a constant rate, whatever happens to its packets.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CbrSender {
    /// Payload bytes per packet.
    #[serde(default = "default_chunk_bytes")]
    pub chunk_bytes: u32,
    /// Application write size, bytes (as for `window`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_bytes: Option<u32>,
    /// Payload rate of each flow, Mbit/s (required).
    pub rate_mbps: f64,
    /// Per-flow rates instead, Mbit/s: flow `k` sends at `flow_rates_mbps[k % len]`
    /// (iperf streams of different `-b`; empty: every flow at `rate_mbps`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flow_rates_mbps: Vec<f64>,
}

impl CbrSender {
    /// Payload rate of flow `flow`, Mbit/s.
    pub fn rate_of(&self, flow: usize) -> f64 {
        if self.flow_rates_mbps.is_empty() {
            self.rate_mbps
        } else {
            self.flow_rates_mbps[flow % self.flow_rates_mbps.len()]
        }
    }
}

/// `kind = "tcp"`: a model of Linux's TCP; field names are Linux's sysctl names
/// where Linux has one (`Documentation/networking/ip-sysctl.rst`), with its defaults.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TcpSender {
    /// Payload bytes per segment (default: the smallest link MTU − IP/TCP headers − 12
    /// bytes of timestamp option: 1448 on a 1500-byte MTU).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mss: Option<u32>,
    /// `net.ipv4.tcp_congestion_control`.
    #[serde(default = "default_cc")]
    pub tcp_congestion_control: String,
    /// HyStart in CUBIC (the `tcp_cubic` module's `hystart`, on by default).
    #[serde(default = "yes")]
    pub hystart: bool,
    /// Initial congestion window, segments (Linux: 10, RFC 6928).
    #[serde(default = "default_initial_cwnd")]
    pub initial_cwnd: u32,
    /// `net.ipv4.tcp_reordering`: initial reordering degree (duplicate-ACK threshold).
    #[serde(default = "default_reordering")]
    pub tcp_reordering: u32,
    /// `net.ipv4.tcp_max_reordering`.
    #[serde(default = "default_max_reordering")]
    pub tcp_max_reordering: u32,
    /// `net.ipv4.tcp_recovery` (include/net/tcp.h): bit 0x1 enables RACK loss detection, 0x2
    /// keeps its reordering window static, 0x4 keeps the window once dupthresh segments are SACKed.
    #[serde(default = "default_recovery")]
    pub tcp_recovery: u32,
    /// `net.ipv4.tcp_early_retrans`: 3 or 4 enable tail loss probes; with `early_retransmit`, 1 to 3
    /// also pick its form (0 and 4: none).
    #[serde(default = "default_early_retrans")]
    pub tcp_early_retrans: u32,
    /// How the tail loss probe's timeout is reckoned (`tcp_schedule_loss_probe`): `current`
    /// (Linux since its µs patch of late 2023: 2·SRTT + 2 ms, or + `rto_min_ms` with one segment
    /// out) or `linux-3.10` (TLP as it came, in 3.10, until a 2017 patch: the larger of 2·SRTT and
    /// `msecs_to_jiffies(10)`, on the bond's `hz`; with one segment out at least 1.5·SRTT +
    /// `TCP_DELACK_MAX`, 200 ms). The kernels between (2·SRTT + 2 jiffies) are not modelled.
    #[serde(default)]
    pub tlp_timeout: TlpTimeout,
    /// The clock of the timestamp option's TSval (RFC 7323 §5.4): `current` (1 ms, Linux since
    /// 4.13: "tcp: switch TCP TS option (RFC 7323) to 1ms clock", 9a568de4818d) or `linux-4.12`
    /// (before: `tcp_time_stamp` was `jiffies`, ticking at the bond's `hz`). It sets the
    /// resolution of RTT samples taken from echoes, of PAWS and of the receiver's RTT estimate.
    #[serde(default)]
    pub ts_clock: TsClock,
    /// `net.ipv4.tcp_fack`: forward-acknowledgement loss detection (FACK), without RACK only.
    /// Linux's default until 4.11 (commit 94bdc9785a11 turned it off), removed in 4.15
    /// (713bafea9292): a segment is lost once a SACKed one lies `tcp_reordering` or more
    /// segments above it, whether those between are SACKed or not (`tcp_dupack_heuristics`,
    /// `tcp_update_scoreboard`), so one SACK can start fast recovery; turned off for the
    /// connection once reordering is detected (`tcp_update_reordering` → `tcp_disable_fack`).
    #[serde(default)]
    pub tcp_fack: bool,
    /// RFC 5827 early retransmit as Linux 3.5 to 4.10 ran it (eed530b6c676; removed in 4.11 by
    /// bec41a11dd3d), without RACK only: with fewer than 4 segments out, at least one SACKed and one not, none
    /// retransmitted and nothing new the windows let out (`tcp_time_to_recover`'s Trick#6), recovery
    /// starts at once (`tcp_early_retrans` = 1) or after max(SRTT/4, 2 ms) in jiffies of the bond's
    /// `hz` (2 and 3, the RFC's mitigation A.3: `tcp_pause_early_retransmit`, unless the RTO comes
    /// first); 0 and 4 leave it off. Off for the connection once it sees reordering
    /// (`tcp_update_reordering` → `tcp_disable_early_retrans`), and from the start unless
    /// `tcp_reordering` is 3 (`tcp_enable_early_retrans`).
    #[serde(default)]
    pub early_retransmit: bool,
    /// Linux's entry to recovery before 4a7f60094411 ("tcp: remove RFC4653 NCR", 2017), without
    /// RACK only: with no more segments out than the reordering degree, at least half of them and
    /// `tcp_reordering` SACKed, and nothing new the windows let out (`tcp_time_to_recover`'s
    /// Trick#4), a raised degree does not hold recovery back.
    #[serde(default)]
    pub ncr: bool,
    /// Linux's forward retransmission before 4.11 (840a3cbe8969 "tcp: remove forward retransmit
    /// feature"), without RACK only: in Recovery, once the lost segments are sent again and no
    /// new data may go (`tcp_can_forward_retransmit`), the segments below the highest SACK that
    /// are neither SACKed nor sent again already go again, as cwnd allows
    /// (`tcp_xmit_retransmit_queue`).
    #[serde(default)]
    pub forward_retransmit: bool,
    /// Whether a timeout may be undone (`tcp_enter_loss`'s undo marker), by kernel era: `current`
    /// (Linux's rule after 3.15, read in 3.18's source: a timeout that starts a new reduction sets the
    /// marker, `tcp_init_undo`, and a repeated one keeps it), `linux-3.13` (3.10 to 3.13, and the
    /// kernels before: every timeout sets the marker to `snd_una` and voids it when a segment not
    /// yet acknowledged was ever retransmitted, `TCPCB_RETRANS`, so no second timeout is undone
    /// by timestamps or D-SACKs, F-RTO's undo aside; that era's loss probe marked nothing, as
    /// `__tcp_retransmit_skb` set `TCPCB_EVER_RETRANS` only from 3.14) or `linux-3.15` (3.14 and
    /// 3.15: voided only while a retransmission is in flight, `TCPCB_SACKED_RETRANS`). The era also
    /// says whether an ACK that carries a D-SACK is news to `tcp_fastretrans_alert` (today's
    /// `FLAG_CA_ALERT` holds `FLAG_DSACKING_ACK`; 3.x's did not, so in Open a D-SACK on an ACK that
    /// moves snd_una on undid only at the next dubious ACK), and whether the timeout's undo
    /// (`tcp_try_undo_loss`) is tried on every ACK in Loss (3.10 to 3.18) or only on one that moves
    /// snd_una (today's). The two older rules are modelled without RACK only.
    #[serde(default)]
    pub undo: UndoEra,
    /// TCP small queues (`tcp_small_queue_check`) by kernel era: `current` (today's: about 1 ms of
    /// data, `max(2 buffers, pacing rate >> 10)`, at most `tcp_limit_output_bytes`, doubled for a
    /// retransmission, which waits too) or `linux-3.12` (3.12 to 3.18, read in 3.13's and 3.18's
    /// `tcp_write_xmit`: at least `tcp_limit_output_bytes`, 128 KB then, or the pacing rate (200%
    /// of cwnd·mss/srtt) >> 10; retransmissions never wait). 3.6 to 3.11 held at a fixed
    /// `tcp_limit_output_bytes`, the same below 0.5 Gbit/s of pacing; 3.12-3.15 kept SRTT in
    /// jiffies, which the model does not. `linux-3.5`: no TCP small queues (they came in 3.6):
    /// nothing below TCP limits a connection but its send buffer (`tcp_wmem`) and the links' queues.
    #[serde(default)]
    pub small_queues: SmallQueues,
    /// How the window comes down in Recovery and CWR: `prr` (Proportional Rate Reduction, RFC
    /// 6937: Linux since 3.2) or `rate-halving` (before it, read in 2.6.32's net/ipv4/tcp_input.c,
    /// without RACK only): every second ACK that shows progress (newly ACKed or SACKed data, or a
    /// D-SACK) takes one segment off cwnd while it is above `tcp_cwnd_min` (ssthresh; Reno's
    /// `tcp_reno_min_cwnd`, half of it), and every such ACK caps cwnd at the segments in flight
    /// plus one (`tcp_cwnd_down`); CWR starts at that cap (`tcp_enter_cwr`); Recovery and CWR end
    /// with cwnd at most ssthresh (`tcp_complete_cwr`), after an undo at Recovery's end too; and a
    /// dubious ACK that leaves the connection in Open, Disorder or Loss caps cwnd at the segments
    /// in flight plus the reordering degree (`tcp_moderate_cwnd`, from `tcp_try_to_open` and
    /// `tcp_fastretrans_alert`'s Loss case).
    #[serde(default)]
    pub cwnd_reduction: CwndReduction,
    /// `net.ipv4.tcp_frto`: F-RTO spurious-timeout detection (RFC 5682; Linux's 2 is
    /// the SACK-enhanced version, 0 turns it off).
    #[serde(default = "default_frto")]
    pub tcp_frto: u32,
    /// `net.ipv4.tcp_sack` (only `true` is modelled: Linux's default).
    #[serde(default = "yes")]
    pub tcp_sack: bool,
    /// `net.ipv4.tcp_dsack`.
    #[serde(default = "yes")]
    pub tcp_dsack: bool,
    /// Delayed ACKs at the receiver (false: an ACK per segment, as `TCP_QUICKACK`).
    #[serde(default = "yes")]
    pub delayed_ack: bool,
    /// `TCP_NODELAY`: send sub-MSS segments at once. Off by default, as on Linux: Nagle's
    /// algorithm (Minshall's variant, `tcp_nagle_check`) holds a small segment while an
    /// earlier small one is unacknowledged. Only application writes smaller than the
    /// connection's stream (a `pingpong` token, `message_bytes`) make such segments.
    #[serde(default)]
    pub nodelay: bool,
    /// The server's application writes the stream this many bytes at a time for the whole run, as
    /// netperf's TCP_STREAM does with `-m` (default: the file at once). The writes coalesce in the
    /// send queue (`tcp_sendmsg` appends to the unsent tail: segments of whatever was written
    /// while Nagle held the last one back), so a stream's segments are cut as it runs, not in
    /// advance; it runs until `stop_s` (required), the file size unused. Each write costs the
    /// server's CPU `server_host.write_us`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_bytes: Option<u32>,
    /// Minimum retransmission timeout, ms (the `rto_min` route option; `TCP_RTO_MIN`).
    #[serde(default = "default_rto_min_ms")]
    pub rto_min_ms: f64,
    /// `net.ipv4.tcp_retries2`: a connection whose retransmissions go unanswered is given up at
    /// the first timeout as long after its first retransmission as this many timeouts take when
    /// the first fires after 200 ms and each doubles it up to 120 s (`tcp_model_timeout`): 924.6 s
    /// for Linux's 15; operators lower it (RFC 1122 §4.2.3.5 asks for at least 100 s) to drop
    /// dead connections sooner.
    #[serde(default = "default_retries2")]
    pub tcp_retries2: u32,
    /// `net.ipv4.tcp_moderate_rcvbuf`: receive-buffer autotuning.
    #[serde(default = "yes")]
    pub tcp_moderate_rcvbuf: bool,
    /// `net.ipv4.tcp_rmem`: min, default, max receive buffer, bytes.
    #[serde(default = "default_tcp_rmem")]
    pub tcp_rmem: [u64; 3],
    /// `net.ipv4.tcp_wmem`: min, default, max send buffer, bytes.
    #[serde(default = "default_tcp_wmem")]
    pub tcp_wmem: [u64; 3],
    /// How ACKs return: `links` (reverse links, picked by the switch's hash) or
    /// `ideal` (after the chosen link's propagation delay, no queue, no loss).
    #[serde(default)]
    pub ack_path: AckPath,
    /// Segmentation offload (TSO/GSO): the stack hands the bond buffers of up to
    /// 64 KB sized by `tcp_tso_autosize`, and balance-rr stripes per buffer. Off
    /// by default, as on a TUN path; real NICs have it on.
    #[serde(default)]
    pub gso: bool,
    /// `net.ipv4.tcp_limit_output_bytes`: the most a connection keeps queued below
    /// TCP (TCP small queues; 4 MiB since Linux 6.16, 1 MiB before).
    #[serde(default = "default_limit_output_bytes")]
    pub tcp_limit_output_bytes: u64,
    /// `net.ipv4.tcp_no_metrics_save`: off (Linux's default), a connection that closes leaves its
    /// destination's entry in the TCP metrics cache (`tcp_update_metrics`) what it learnt, which
    /// the next connection to that client starts from (`tcp_init_metrics`): its reordering degree,
    /// and its slow-start threshold unless `tcp_no_ssthresh_metrics_save`.
    #[serde(default)]
    pub tcp_no_metrics_save: bool,
    /// `net.ipv4.tcp_no_ssthresh_metrics_save`: on (Linux's default since 5.6), the cache keeps no
    /// slow-start threshold; off (3.x, which had no such switch), a connection starts with the
    /// threshold the ones before it left, and so leaves slow start early.
    #[serde(default = "yes")]
    pub tcp_no_ssthresh_metrics_save: bool,
    /// The kernel era whose TCP this is ([`Kernel`]): its preset sets the era's fields this
    /// table leaves unset (a field set here wins); `current` sets none.
    #[serde(default)]
    pub kernel: Kernel,
    /// Record every open connection's cwnd, ssthresh, RTT, flight and state this
    /// often, milliseconds (the `tcp_trace` table; at most a million rows). Off
    /// when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_ms: Option<f64>,
}

/// `kind = "mptcp"`: Linux's Multipath TCP. Every TCP field applies to each subflow (the one
/// [`TcpSender`] table, flattened); MPTCP's own fields are named as Linux names them.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct MptcpSender {
    /// Each subflow's TCP.
    #[serde(flatten)]
    pub tcp: TcpSender,
    /// The connection level's own settings.
    #[serde(flatten)]
    pub mptcp: Mptcp,
}

/// MPTCP's own fields ([`MptcpSender`]).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Mptcp {
    /// `net.mptcp.scheduler`: the packet scheduler choosing each burst's subflow. Linux 6.18 has
    /// one in-kernel, `default` (`mptcp_subflow_get_send`, net/mptcp/protocol.c); others are BPF.
    /// The model also runs the out-of-tree multipath-tcp.org kernel's `minrtt`, `roundrobin`,
    /// `redundant`, `blest` and `ecf` (`transport::mptcp::sched`; `bondsim schedulers`).
    #[serde(default = "default_mptcp_scheduler")]
    pub mptcp_scheduler: String,
    /// Subflows per connection, one per link in the links' order (default: one per link): what
    /// the in-kernel path manager makes from one `subflow` endpoint per link, the first subflow and
    /// `ip mptcp limits set subflow N` extra ones (Linux: N at most 8, `MPTCP_PM_ADDR_MAX`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mptcp_subflows: Option<u32>,
    /// Links (by name, as the outputs name them) whose subflow is a backup: `ip mptcp endpoint add
    /// ADDR dev LINK subflow backup`, used only while no other subflow is active.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mptcp_backup: Vec<String>,
    /// `net.mptcp.stale_loss_cnt`: MPTCP retransmission timeouts a subflow with data outstanding
    /// may see with nothing received before it is stale (its data sent again on the others; 0:
    /// never).
    #[serde(default = "default_stale_loss_cnt")]
    pub mptcp_stale_loss_cnt: u32,
}

/// The MPTCP packet schedulers [`Mptcp::mptcp_scheduler`] may name (the model's registry,
/// `transport::mptcp::sched::SCHEDULERS`, lists the same; a test checks).
pub const MPTCP_SCHEDULERS: &[&str] = &["default", "minrtt", "roundrobin", "redundant", "blest", "ecf"];

/// Linux's most subflows one connection may have: the first and `MPTCP_PM_ADDR_MAX` (8) extra
/// (net/mptcp/pm_kernel.c, `parse_limit`).
pub const MPTCP_MAX_SUBFLOWS: u32 = 9;

fn default_mptcp_scheduler() -> String {
    "default".to_string()
}
fn default_stale_loss_cnt() -> u32 {
    // net/mptcp/ctrl.c, mptcp_pernet_set_defaults (6.18).
    4
}

impl MptcpSender {
    /// The table's fields: TCP's and MPTCP's.
    fn fields() -> &'static [&'static str] {
        static FIELDS: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
        FIELDS.get_or_init(|| [fields_of::<TcpSender>(), fields_of::<Mptcp>()].concat())
    }

    /// Reads the table: the `mptcp_` fields are MPTCP's, the rest TCP's.
    fn from_table(body: serde_json::Map<String, serde_json::Value>) -> std::result::Result<Self, String> {
        let (own, tcp): (serde_json::Map<_, _>, serde_json::Map<_, _>) =
            body.into_iter().partition(|(k, _)| k.starts_with("mptcp_"));
        Ok(MptcpSender { tcp: part(serde_json::Value::Object(tcp))?, mptcp: part(serde_json::Value::Object(own))? })
    }
}

fn default_limit_output_bytes() -> u64 {
    4 << 20
}

named_enum! {
    /// The tail loss probe's timeout rule, by kernel era ([`TcpSender::tlp_timeout`]).
    pub enum TlpTimeout {
        /// 2·SRTT + `TCP_TIMEOUT_MIN_US` (2 ms), or + `rto_min` with one segment out.
        Current = "current",
        /// max(2·SRTT, 10 ms in whole jiffies), with one segment out at least 1.5·SRTT + 200 ms.
        Linux310 = "linux-3.10",
    }
}

named_enum! {
    /// The timestamp option's clock by kernel era ([`TcpSender::ts_clock`]).
    pub enum TsClock {
        /// 1 ms (`tcp_clock_ms`), since 4.13.
        Current = "current",
        /// `jiffies`, at `CONFIG_HZ` (`bond.hz`), until 4.12.
        Linux412 = "linux-4.12",
    }
}

named_enum! {
    /// The kernel era of the undo rules ([`TcpSender::undo`]).
    pub enum UndoEra {
        /// Today's Linux (a new reduction's timeout sets the undo marker; a repeated one keeps it).
        Current = "current",
        /// Linux 3.10 to 3.13 (every timeout sets it, void if a segment out was ever retransmitted).
        Linux313 = "linux-3.13",
        /// Linux 3.14 and 3.15 (every timeout sets it, void while a retransmission is in flight).
        Linux315 = "linux-3.15",
    }
}

named_enum! {
    /// TCP small queues' rule by kernel era ([`TcpSender::small_queues`]).
    pub enum SmallQueues {
        /// Today's: about 1 ms of data, at most `tcp_limit_output_bytes`; retransmissions wait too.
        Current = "current",
        /// 3.12 to 3.18: at least `tcp_limit_output_bytes`; retransmissions never wait.
        Linux312 = "linux-3.12",
        /// None: Linux before 3.6 (3.5 the last), only the send buffer and the links' queues.
        Linux35 = "linux-3.5",
    }
}

named_enum! {
    /// How the window comes down in Recovery and CWR ([`TcpSender::cwnd_reduction`]).
    pub enum CwndReduction {
        /// Proportional Rate Reduction (RFC 6937), Linux since 3.2.
        Prr = "prr",
        /// Rate halving with `tcp_moderate_cwnd`, Linux before 3.2 (2.6.32's).
        RateHalving = "rate-halving",
    }
}

named_enum! {
    /// A kernel era as one word (`sender.kernel`; the CLI's `--kernel`): the TCP sender's fields
    /// that make the model behave as that era's Linux did ([`Kernel::preset`]).
    pub enum Kernel {
        /// Today's Linux: the defaults.
        Current = "current",
        /// The seeds' Linux 3.x (seed 003: 3.11; seed 004: CORE of 2014), before RACK (4.10): FACK
        /// (on by default until 4.11) until reordering is seen, then dupthresh with the adaptive
        /// degree, at most 127 (`TCP_MAX_REORDERING` until 3.19's dca145ffaa8d); TLP with 3.10's
        /// 10 ms floor; RFC 5827 early retransmit delayed a quarter RTT; `tcp_time_to_recover`'s RFC
        /// 4653 NCR; forward retransmission in recovery; 3.10-3.13's undo rules; TCP small queues as
        /// 3.12-3.18 ran them (at least `tcp_limit_output_bytes`, then 128 KB); the slow-start
        /// threshold kept in the metrics cache (3.x had no `tcp_no_ssthresh_metrics_save`); the
        /// timestamp option on jiffies (the 1 ms clock came in 4.13).
        Linux3x = "linux-3.x",
        /// Linux 2.6.32 (the long-term 2.6, read in 2.6.32.69's net/ipv4), whose headline rules
        /// 2.6.29 (CUBIC's HyStart) to 2.6.38 (before 2.6.39's initial window of 10) share (the
        /// others were read in 2.6.32 alone): the linux-3.x preset's loss detection (FACK,
        /// `tcp_max_reordering` 127 as `TCP_MAX_REORDERING`, NCR in `tcp_time_to_recover`'s Trick#4,
        /// forward retransmission in `tcp_xmit_retransmit_queue`, `tcp_enter_loss` voiding the undo
        /// marker at `TCPCB_RETRANS`: undo `linux-3.13`), with none of what 3.x added: no early retransmit (3.5) nor tail loss
        /// probe (3.10), `tcp_early_retrans` 0; no TCP small queues (3.6); rate halving, not PRR (3.2);
        /// an initial window of 3 (`tcp_init_cwnd`, RFC 3390's for an MSS of 1096 to 1460 bytes: 4
        /// below, 2 above; set `initial_cwnd` for another MSS). CUBIC, the default congestion control
        /// (`tcp_congestion_control`), was 2.6.19's on (BIC before, 2.6.8 to 2.6.18, is not
        /// modelled); the preset leaves the field to the scenario. Not modelled, 2.6.32
        /// did otherwise: `tcp_ack` grows the window before `tcp_fastretrans_alert`, by the state
        /// before the ACK (the ACKs that enter and end Recovery differ by one step of growth);
        /// the undo takes CUBIC's `last_max_cwnd` (Reno's twice ssthresh) where the model takes the
        /// window before the reduction, a partial undo stays in Recovery, and the D-SACK undo is
        /// tried in Disorder only (`tcp_try_undo_dsack`, once Recovery is over); F-RTO was RFC 4138's
        /// (`tcp_process_frto`, with its own responses), not RFC 5682's; FACK also started recovery
        /// once the head had been out an RTO (Trick#3, `tcp_head_timedout`); HyStart counted
        /// delays in jiffies; `tcp_rmem`'s default was 87380 bytes with three quarters advertised
        /// (`tcp_adv_win_scale` 2), where the model keeps today's buffers.
        Linux26 = "linux-2.6",
    }
}

impl Kernel {
    /// The era's sender fields and their values, as JSON.
    pub fn preset(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Kernel::Current => &[],
            Kernel::Linux3x => &[
                ("tcp_recovery", "0"),
                ("tcp_fack", "true"),
                ("tcp_max_reordering", "127"),
                ("tlp_timeout", "\"linux-3.10\""),
                ("ts_clock", "\"linux-4.12\""),
                ("early_retransmit", "true"),
                ("ncr", "true"),
                ("forward_retransmit", "true"),
                ("undo", "\"linux-3.13\""),
                ("small_queues", "\"linux-3.12\""),
                ("tcp_limit_output_bytes", "131072"),
                ("tcp_no_ssthresh_metrics_save", "false"),
            ],
            Kernel::Linux26 => &[
                ("initial_cwnd", "3"),
                ("tcp_recovery", "0"),
                ("tcp_fack", "true"),
                ("tcp_max_reordering", "127"),
                ("tcp_early_retrans", "0"),
                ("early_retransmit", "false"),
                ("ncr", "true"),
                ("forward_retransmit", "true"),
                ("undo", "\"linux-3.13\""),
                ("small_queues", "\"linux-3.5\""),
                ("cwnd_reduction", "\"rate-halving\""),
                ("ts_clock", "\"linux-4.12\""),
                ("tcp_no_ssthresh_metrics_save", "false"),
            ],
        }
    }
}

/// Fills a TCP sender table (`sender`, JSON) with its `kernel`'s preset: each field of the
/// preset the table does not set. A table of another kind, or without a known `kernel`, is left
/// as it is (the schema then reports the field).
pub fn apply_kernel_preset(sender: &mut serde_json::Map<String, serde_json::Value>) {
    if !matches!(sender.get("kind").and_then(|k| k.as_str()), Some("tcp" | "mptcp")) {
        return;
    }
    let name = sender.get("kernel").and_then(|k| k.as_str());
    let Some(kernel) = Kernel::ALL.iter().copied().find(|k| Some(k.name()) == name) else {
        return;
    };
    for (field, value) in kernel.preset() {
        if !sender.contains_key(*field) {
            sender.insert(field.to_string(), serde_json::from_str(value).expect("a preset's value is JSON"));
        }
    }
}

/// How a client's ACKs reach the server.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum AckPath {
    /// Through the reverse links: rate, queue and delay, as data.
    #[default]
    Links,
    /// After the link's propagation delay only (isolates the forward path).
    Ideal,
}

fn yes() -> bool {
    true
}
fn default_cc() -> String {
    "cubic".to_string()
}
fn default_initial_cwnd() -> u32 {
    10
}
fn default_reordering() -> u32 {
    3
}
fn default_max_reordering() -> u32 {
    300
}
fn default_recovery() -> u32 {
    1
}
fn default_early_retrans() -> u32 {
    3
}
fn default_frto() -> u32 {
    2
}
fn default_retries2() -> u32 {
    15
}

fn default_rto_min_ms() -> f64 {
    200.0
}
fn default_tcp_rmem() -> [u64; 3] {
    [4096, 131_072, 6_291_456]
}
fn default_tcp_wmem() -> [u64; 3] {
    [4096, 16_384, 4_194_304]
}

/// The congestion controls [`TcpSender::tcp_congestion_control`] may name, by Linux's names (`reno`
/// is its name for NewReno's window rules). The TCP lane builds them (`transport::tcp::cc::build`;
/// its `NAMES` are these, a test in `tests/schema_names.rs` checks both agree).
pub const CONGESTION_CONTROLS: &[&str] = &["cubic", "reno", "bbr"];

/// The coupled congestion controls an MPTCP sender may name besides [`CONGESTION_CONTROLS`]:
/// LIA (RFC 6356) and OLIA, as the out-of-tree multipath-tcp.org kernel runs them (not in
/// Linux's tree). The TCP lane builds them (`transport::tcp::cc::coupled`, whose `NAMES` are
/// these; a test checks).
pub const COUPLED_CONGESTION_CONTROLS: &[&str] = &["lia", "olia"];

/// Other names taken for one of [`CONGESTION_CONTROLS`]: `newreno` for `reno`.
const CONGESTION_CONTROL_ALIASES: &[&str] = &["newreno"];

/// The timestamp option's bytes in every TCP header (RFC 7323, padded).
pub const TCP_TIMESTAMP_BYTES: u32 = 12;

/// The DSS option's bytes on an MPTCP subflow's data segment from a host that only sends (RFC
/// 8684 §3.3; net/mptcp/protocol.h, 6.18): the base 4, a 32-bit DATA_ACK 4 and the 64-bit mapping
/// 14 (Linux always sends 64-bit DSNs), 22 padded to 24 (`mptcp_established_options_dss`). Linux
/// reserves it in every segment's header (`tcp_current_mss` sizes the options with no skb, for
/// which the mapping is counted), so the MSS is 24 bytes less: 1424 on a 1500-byte MTU.
pub const MPTCP_DSS_BYTES: u32 = 24;

fn default_chunk_bytes() -> u32 {
    1024
}
fn default_tick_ms() -> f64 {
    20.0
}
fn default_packets_per_tick() -> u32 {
    4
}
fn default_window_pkts() -> u32 {
    64
}

impl Default for Sender {
    fn default() -> Self {
        Sender::Paced(from_defaults())
    }
}

impl Sender {
    /// Every kind with its fields (its struct's), for errors naming a field of another kind.
    fn kinds() -> [(&'static str, &'static [&'static str]); 5] {
        [
            ("paced", fields_of::<PacedSender>()),
            ("window", fields_of::<WindowSender>()),
            ("cbr", fields_of::<CbrSender>()),
            ("tcp", fields_of::<TcpSender>()),
            ("mptcp", MptcpSender::fields()),
        ]
    }

    /// The TCP settings, of TCP or of MPTCP's subflows.
    pub fn tcp(&self) -> Option<&TcpSender> {
        match self {
            Sender::Tcp(t) => Some(t),
            Sender::Mptcp(m) => Some(&m.tcp),
            _ => None,
        }
    }

    /// The TCP settings to fill ([`Sender::tcp`]).
    pub fn tcp_mut(&mut self) -> Option<&mut TcpSender> {
        match self {
            Sender::Tcp(t) => Some(t),
            Sender::Mptcp(m) => Some(&mut m.tcp),
            _ => None,
        }
    }

    /// The kind's name.
    pub fn kind(&self) -> &'static str {
        match self {
            Sender::Paced(_) => "paced",
            Sender::Window(_) => "window",
            Sender::Cbr(_) => "cbr",
            Sender::Tcp(_) => "tcp",
            Sender::Mptcp(_) => "mptcp",
        }
    }

    /// The field that sets [`Sender::chunk_bytes`]: TCP's is its MSS.
    pub fn chunk_field(&self) -> &'static str {
        match self {
            Sender::Tcp(_) | Sender::Mptcp(_) => "sender.mss",
            _ => "sender.chunk_bytes",
        }
    }

    /// Payload bytes per packet.
    pub fn chunk_bytes(&self) -> u32 {
        match self {
            Sender::Paced(s) => s.chunk_bytes,
            Sender::Window(s) => s.chunk_bytes,
            Sender::Cbr(s) => s.chunk_bytes,
            Sender::Tcp(s) | Sender::Mptcp(MptcpSender { tcp: s, .. }) => {
                s.mss.expect("derived when the scenario is loaded")
            }
        }
    }

    /// Application write size, if the kind has one.
    pub fn message_bytes(&self) -> Option<u32> {
        match self {
            Sender::Paced(_) => None,
            Sender::Window(s) => s.message_bytes,
            Sender::Cbr(s) => s.message_bytes,
            Sender::Tcp(s) => s.message_bytes,
            Sender::Mptcp(_) => None,
        }
    }
}

impl TryFrom<serde_json::Map<String, serde_json::Value>> for Sender {
    type Error = String;

    fn try_from(mut map: serde_json::Map<String, serde_json::Value>) -> std::result::Result<Self, String> {
        let kinds = Sender::kinds();
        let kind = take_kind(&mut map, "paced", &kinds)?;
        let fields = kinds.iter().find(|(k, _)| *k == kind).expect("checked").1;
        for key in map.keys() {
            if !fields.contains(&key.as_str()) {
                let owners: Vec<String> =
                    kinds.iter().filter(|(_, f)| f.contains(&key.as_str())).map(|(k, _)| format!("\"{k}\"")).collect();
                let message = if owners.is_empty() {
                    format!("unknown field `{key}`, expected one of `kind`, {}", quoted(fields))
                } else {
                    format!("only for kind = {}, not \"{kind}\"", owners.join(" or "))
                };
                return Err(nested(key, message));
            }
        }
        if kind == "mptcp" {
            return Ok(Sender::Mptcp(MptcpSender::from_table(map)?));
        }
        let body = serde_json::Value::Object(map);
        Ok(match kind.as_str() {
            "paced" => Sender::Paced(part(body)?),
            "window" => Sender::Window(part(body)?),
            "tcp" => Sender::Tcp(part(body)?),
            _ => Sender::Cbr(part(body)?),
        })
    }
}

impl Scenario {
    pub(super) fn validate_sender(&self) -> Result<()> {
        at_least(self.sender.chunk_field(), u64::from(self.sender.chunk_bytes()), 1)?;
        // The IP packet a chunk makes (without the VLAN tag, which is the frame's).
        let header = self.network.header_bytes.unwrap_or(self.network.protocol.header_bytes());
        let packet = u64::from(self.sender.chunk_bytes()) + u64::from(header);
        if packet as f64 > PACKET_BYTES.high {
            return Err(Error::scenario(
                self.sender.chunk_field(),
                format!(
                    "{} payload + {header} header bytes make a packet of {packet} bytes: {}",
                    self.sender.chunk_bytes(),
                    out_of_bounds(packet as f64, &PACKET_BYTES)
                ),
            ));
        }
        if let Some(message) = self.sender.message_bytes() {
            at_least("sender.message_bytes", u64::from(message), 1)?;
        }
        match &self.sender {
            Sender::Paced(s) => {
                duration("sender.tick_ms", s.tick_ms, 1e-3, false)?;
                plausible("sender.tick_ms", s.tick_ms, &TICK_MS)?;
                at_least("sender.packets_per_tick", u64::from(s.packets_per_tick), 1)?;
            }
            Sender::Window(s) => {
                at_least("sender.window_pkts", u64::from(s.window_pkts), 1)?;
                duration("sender.ack_delay_us", s.ack_delay_us, 1e-6, true)?;
                plausible("sender.ack_delay_us", s.ack_delay_us, &DELAY_US)?;
            }
            Sender::Cbr(s) => {
                let rates = std::iter::once(("sender.rate_mbps".to_string(), s.rate_mbps)).chain(
                    s.flow_rates_mbps.iter().enumerate().map(|(i, &r)| (format!("sender.flow_rates_mbps.{i}"), r)),
                );
                for (path, rate) in rates {
                    rate_mbps(&path, rate)?;
                    // (At 300 bit/s, the slowest plausible rate, the largest packet is sent every
                    // half hour: well within a year.)
                    let bits = f64::from(s.chunk_bytes) * 8.0;
                    if SimTime::from_secs_f64(bits / (rate * 1e6)).as_nanos() == 0 {
                        return Err(Error::scenario(
                            path,
                            format!(
                                "at {} Mbit/s a packet of chunk_bytes ({}) is sent every 0 ns \
                                 (simulated time counts whole nanoseconds): at most {} Mbit/s",
                                num(rate),
                                s.chunk_bytes,
                                num((bits * 2e3).floor())
                            ),
                        ));
                    }
                }
            }
            Sender::Tcp(t) | Sender::Mptcp(MptcpSender { tcp: t, .. }) => {
                let cc = t.tcp_congestion_control.as_str();
                let mptcp = matches!(self.sender, Sender::Mptcp(_));
                if COUPLED_CONGESTION_CONTROLS.contains(&cc) && !mptcp {
                    return Err(Error::scenario(
                        "sender.tcp_congestion_control",
                        format!(
                            "`{cc}` couples the subflows of an MPTCP connection: set sender.kind = \"mptcp\", \
                             or one of {}",
                            CONGESTION_CONTROLS.join(", ")
                        ),
                    ));
                }
                let coupled = mptcp && COUPLED_CONGESTION_CONTROLS.contains(&cc);
                if !(coupled || CONGESTION_CONTROLS.contains(&cc) || CONGESTION_CONTROL_ALIASES.contains(&cc)) {
                    let allowed: Vec<&str> = match mptcp {
                        true => CONGESTION_CONTROLS.iter().chain(COUPLED_CONGESTION_CONTROLS).copied().collect(),
                        false => CONGESTION_CONTROLS.to_vec(),
                    };
                    return Err(Error::scenario(
                        "sender.tcp_congestion_control",
                        bondsim_bond::error::one_of(&allowed, cc),
                    ));
                }
                if !t.tcp_sack {
                    // Linux negotiates SACK by default; RACK, TLP and D-SACK need it.
                    return Err(Error::scenario(
                        "sender.tcp_sack",
                        "TCP without SACK (RFC 6582 NewReno recovery) is not modelled yet; leave it true",
                    ));
                }
                self.validate_tcp_messages(t, mptcp)?;
                at_least("sender.initial_cwnd", u64::from(t.initial_cwnd), 1)?;
                at_least("sender.tcp_reordering", u64::from(t.tcp_reordering), 1)?;
                // Linux takes 0 to 4 (net/ipv4/sysctl_net_ipv4.c: extra1 = SYSCTL_ZERO, extra2 = SYSCTL_FOUR).
                if t.tcp_early_retrans > 4 {
                    return Err(Error::scenario(
                        "sender.tcp_early_retrans",
                        format!("Linux takes 0 to 4 (3 or 4: tail loss probes), got {}", t.tcp_early_retrans),
                    ));
                }
                for (field, on, what) in [
                    ("sender.tcp_fack", t.tcp_fack, "FACK"),
                    ("sender.early_retransmit", t.early_retransmit, "early retransmit"),
                    ("sender.ncr", t.ncr, "NCR"),
                    ("sender.forward_retransmit", t.forward_retransmit, "forward retransmission"),
                    ("sender.undo", t.undo != UndoEra::Current, "a 3.x undo rule"),
                    ("sender.cwnd_reduction", t.cwnd_reduction != CwndReduction::Prr, "rate halving"),
                ] {
                    if on && t.tcp_recovery & 1 != 0 {
                        return Err(Error::scenario(
                            field,
                            format!("{what} is modelled without RACK only (Linux before 4.10); set tcp_recovery = 0 with it"),
                        ));
                    }
                }
                // net/ipv4/sysctl_net_ipv4.c: tcp_recovery is a bitmap of 0x1, 0x2 and 0x4;
                // tcp_frto is 0 (off), 1 (RFC 5682's basic F-RTO) or 2 (its SACK variant).
                if t.tcp_recovery > 7 {
                    return Err(Error::scenario(
                        "sender.tcp_recovery",
                        format!(
                            "takes the bits 0x1 (RACK), 0x2 (static window), 0x4 (no dupthresh): 0 to 7, got {}",
                            t.tcp_recovery
                        ),
                    ));
                }
                if t.tcp_frto > 2 {
                    return Err(Error::scenario(
                        "sender.tcp_frto",
                        format!("Linux takes 0 (off), 1 or 2 (F-RTO, RFC 5682), got {}", t.tcp_frto),
                    ));
                }
                if t.tcp_max_reordering < t.tcp_reordering {
                    return Err(Error::scenario(
                        "sender.tcp_max_reordering",
                        format!("must be >= tcp_reordering ({}), got {}", t.tcp_reordering, t.tcp_max_reordering),
                    ));
                }
                duration("sender.rto_min_ms", t.rto_min_ms, 1e-3, false)?;
                plausible("sender.rto_min_ms", t.rto_min_ms, &RTO_MIN_MS)?;
                if let Some(every) = t.trace_ms {
                    trace_period("sender.trace_ms", every)?;
                }
                at_least("sender.tcp_limit_output_bytes", t.tcp_limit_output_bytes, 1)?;
                for (name, mem) in [("tcp_rmem", t.tcp_rmem), ("tcp_wmem", t.tcp_wmem)] {
                    if !(mem[0] <= mem[1] && mem[1] <= mem[2]) || mem[2] < 2 * u64::from(self.chunk_bytes()) {
                        return Err(Error::scenario(
                            format!("sender.{name}"),
                            format!(
                                "must be min <= default <= max with max at least two segments ({} bytes), got {mem:?}",
                                2 * self.chunk_bytes()
                            ),
                        ));
                    }
                }
            }
        }
        if let Sender::Mptcp(m) = &self.sender {
            self.validate_mptcp(&m.mptcp)?;
        }
        Ok(())
    }

    /// TCP's `message_bytes`: a stream written a message at a time until `stop_s`, which the model
    /// runs for a download of the requests workload only.
    fn validate_tcp_messages(&self, t: &TcpSender, mptcp: bool) -> Result<()> {
        if t.message_bytes.is_none() {
            return Ok(());
        }
        let refused = if mptcp {
            Some("is not modelled for MPTCP yet (its connection level writes whole packets)")
        } else if !matches!(self.workload, Workload::Requests(_)) {
            Some("is for the requests workload (a ping-pong writes its tokens)")
        } else if self.upload() {
            Some("is for downloads: the clients' applications are not modelled as writers yet")
        } else if self.stop_s.is_none() {
            Some("makes a stream that runs until stop_s, as netperf's TCP_STREAM for its -l: set stop_s")
        } else {
            None
        };
        match refused {
            Some(why) => Err(Error::scenario("sender.message_bytes", format!("with kind = \"tcp\" {why}"))),
            None => Ok(()),
        }
    }

    /// MPTCP's fields, and what the model of it does not cover yet.
    fn validate_mptcp(&self, m: &Mptcp) -> Result<()> {
        if !MPTCP_SCHEDULERS.contains(&m.mptcp_scheduler.as_str()) {
            return Err(Error::scenario(
                "sender.mptcp_scheduler",
                bondsim_bond::error::one_of(MPTCP_SCHEDULERS, &m.mptcp_scheduler),
            ));
        }
        let links = self.link_count() as u32;
        let most = links.min(MPTCP_MAX_SUBFLOWS);
        let subflows = self.mptcp_subflows();
        if subflows == 0 || subflows > most {
            let why = if links > MPTCP_MAX_SUBFLOWS {
                format!("Linux's limit is {MPTCP_MAX_SUBFLOWS} (the first and 8 extra, MPTCP_PM_ADDR_MAX)")
            } else {
                format!("one per link, and the scenario has {links}")
            };
            return Err(Error::scenario(
                "sender.mptcp_subflows",
                format!("must be 1 to {most} ({why}), got {subflows}"),
            ));
        }
        let names: Vec<String> = (0..subflows as usize).map(|id| self.link_name(id)).collect();
        for (i, name) in m.mptcp_backup.iter().enumerate() {
            if !names.contains(name) {
                let known: Vec<&str> = names.iter().map(String::as_str).collect();
                return Err(Error::scenario(
                    format!("sender.mptcp_backup.{i}"),
                    format!("names no link that has a subflow: {}", bondsim_bond::error::one_of(&known, name)),
                ));
            }
        }
        if names.iter().all(|n| m.mptcp_backup.contains(n)) {
            return Err(Error::scenario(
                "sender.mptcp_backup",
                "makes every subflow a backup: Linux would then send on the backups as if none were (leave one out)",
            ));
        }
        if self.upload() {
            return Err(Error::scenario(
                "workload.direction",
                "MPTCP is modelled for downloads only (leave it \"download\")",
            ));
        }
        if !matches!(self.workload, Workload::Requests(_)) {
            return Err(Error::scenario("workload.kind", "MPTCP is modelled for requests only, not ping-pong"));
        }
        let t = self.sender.tcp().expect("mptcp has TCP's fields");
        if t.gso {
            return Err(Error::scenario(
                "sender.gso",
                "segmentation offload is not modelled for MPTCP's subflows yet; leave it false",
            ));
        }
        if t.ack_path != AckPath::Links {
            return Err(Error::scenario(
                "sender.ack_path",
                "MPTCP's subflows return their ACKs on their own links; leave it \"links\"",
            ));
        }
        Ok(())
    }

    /// MPTCP's subflows per connection (`sender.mptcp_subflows`, default one per link); 0 for
    /// another sender.
    pub fn mptcp_subflows(&self) -> u32 {
        match &self.sender {
            Sender::Mptcp(m) => {
                m.mptcp.mptcp_subflows.unwrap_or(self.link_count().min(MPTCP_MAX_SUBFLOWS as usize) as u32)
            }
            _ => 0,
        }
    }

    /// The name of link `id` as the outputs know it ([`LinkSpec::link_name`]).
    pub fn link_name(&self, id: usize) -> String {
        self.each_link().nth(id).map(|(_, spec)| spec.link_name(id)).expect("a link of the scenario")
    }
}

#[cfg(test)]
mod kernel_tests {
    use crate::{Error, Scenario};

    fn sender(fields: &str) -> Result<Scenario, Error> {
        Scenario::from_json(&format!(
            r#"{{"workload": {{"requests": 1, "file_size": {{"kind": "fixed", "bytes": 1000}}}},
                "sender": {{"kind": "tcp"{fields}}}, "bond": {{"mode": "rr"}}, "links": [{{"rate_mbps": 100}}]}}"#
        ))
    }

    fn tcp(s: &Scenario) -> &super::TcpSender {
        match &s.sender {
            super::Sender::Tcp(t) => t,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_kernel_fills_its_presets_fields_and_a_field_set_explicitly_wins() {
        let era = sender(r#", "kernel": "linux-3.x""#).unwrap();
        let by_fields = sender(
            r#", "kernel": "linux-3.x", "tcp_recovery": 0, "tcp_fack": true, "tcp_max_reordering": 127,
               "tlp_timeout": "linux-3.10", "early_retransmit": true, "ncr": true, "forward_retransmit": true,
               "undo": "linux-3.13", "small_queues": "linux-3.12", "tcp_limit_output_bytes": 131072,
               "tcp_no_ssthresh_metrics_save": false"#,
        )
        .unwrap();
        assert_eq!(tcp(&era), tcp(&by_fields));
        let t = tcp(&era);
        assert_eq!((t.tcp_recovery, t.tcp_fack, t.undo), (0, true, super::UndoEra::Linux313));
        let mine = sender(r#", "kernel": "linux-3.x", "undo": "linux-3.15", "tcp_max_reordering": 300"#).unwrap();
        assert_eq!((tcp(&mine).undo, tcp(&mine).tcp_max_reordering), (super::UndoEra::Linux315, 300));
        assert!(tcp(&mine).ncr, "the preset's other fields stay");
        let current = sender(r#", "kernel": "current""#).unwrap();
        assert_eq!(tcp(&current), tcp(&sender("").unwrap()), "current: the defaults");
    }

    #[test]
    fn linux_2_6_is_2_6_32s_tcp_and_takes_3xs_loss_detection_without_what_3x_added() {
        let era = sender(r#", "kernel": "linux-2.6""#).unwrap();
        let by_fields = sender(
            r#", "kernel": "linux-2.6", "initial_cwnd": 3, "tcp_recovery": 0,
               "tcp_fack": true, "tcp_max_reordering": 127, "tcp_early_retrans": 0, "early_retransmit": false,
               "ncr": true, "forward_retransmit": true, "undo": "linux-3.13", "small_queues": "linux-3.5",
               "cwnd_reduction": "rate-halving", "ts_clock": "linux-4.12", "tcp_no_ssthresh_metrics_save": false"#,
        )
        .unwrap();
        assert_eq!(tcp(&era), tcp(&by_fields));
        let (t, x) = (tcp(&era), tcp(&sender(r#", "kernel": "linux-3.x""#).unwrap()).clone());
        // 3.x's loss detection and undo rules, as 2.6.32 ran them.
        assert_eq!(
            (t.tcp_recovery, t.tcp_fack, t.tcp_max_reordering, t.ncr, t.forward_retransmit, t.undo),
            (x.tcp_recovery, x.tcp_fack, x.tcp_max_reordering, x.ncr, x.forward_retransmit, x.undo)
        );
        // What 3.x added, and 2.6.39's initial window, left out.
        assert_eq!((x.tcp_early_retrans, x.early_retransmit, x.initial_cwnd), (3, true, 10));
        assert_eq!((t.tcp_early_retrans, t.early_retransmit, t.initial_cwnd), (0, false, 3));
        assert_eq!((t.small_queues, x.small_queues), (super::SmallQueues::Linux35, super::SmallQueues::Linux312));
        assert_eq!(
            (t.cwnd_reduction, x.cwnd_reduction),
            (super::CwndReduction::RateHalving, super::CwndReduction::Prr)
        );
    }

    #[test]
    fn rate_halving_is_modelled_without_rack_only() {
        let Err(Error::Scenario { path, message }) = sender(r#", "cwnd_reduction": "rate-halving""#) else { panic!() };
        assert_eq!(path, "sender.cwnd_reduction");
        assert!(message.contains("without RACK only"), "{message}");
        assert!(sender(r#", "cwnd_reduction": "rate-halving", "tcp_recovery": 0"#).is_ok());
    }

    #[test]
    fn a_kernel_unknown_or_on_another_sender_is_named_at_its_field() {
        let Err(Error::Scenario { path, message }) = sender(r#", "kernel": "linux-2.4""#) else { panic!() };
        assert_eq!(path, "sender.kernel");
        assert!(message.contains("linux-3.x") && message.contains("linux-2.4"), "{message}");
        let paced = Scenario::from_json(
            r#"{"workload": {"requests": 1}, "sender": {"kind": "paced", "kernel": "linux-3.x"},
                "bond": {"mode": "rr"}, "links": [{"rate_mbps": 100}]}"#,
        );
        let Err(Error::Scenario { path, .. }) = paced else { panic!("{paced:?}") };
        assert_eq!(path, "sender.kernel");
    }
}
