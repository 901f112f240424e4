//! `[host]` and `[server_host]`: the machines' CPU and receive path (issue 38). Off unless a cost is
//! set.

use super::*;

/// A machine: one CPU that takes every frame the machine receives from its receive queue and runs
/// the stack on it, the reading application's copy and what it sends included. `[host]` is the
/// clients' machines (one per client, or one they share: `shared`), `[server_host]` the server's.
/// A frame costs `rx_packet_us` + `rx_byte_ns` × its payload, an
/// frame the machine sends (an ACK, data) `tx_packet_us`. Frames wait in one of Linux's two receive
/// queues, and are dropped when it is full:
///
/// * the per-CPU backlog of the `netif_rx` path (veth; a NIC without NAPI): `enqueue_to_backlog`
///   (net/core/dev.c, 6.18) drops a frame when `input_pkt_queue` holds more than
///   `netdev_max_backlog` (`qlen > max_backlog`), and `process_backlog` moves the whole input
///   queue into its `process_queue` each time that empties, so up to twice as many wait;
/// * a NAPI NIC's receive ring (`rx_ring` descriptors, `ethtool -G rx`): a frame that finds every
///   descriptor taken is dropped by the NIC (counted in `rx_missed_errors` / `rx_no_buffer_count`);
///   a descriptor is given back when the poll has handled its frame.
///
/// On a NAPI ring, GRO (`gro`) merges a poll's consecutive full segments of a flow into one skb
/// (`tcp_gro_receive`, net/ipv4/tcp_offload.c): the stack's time `rx_skb_us` is spent once per skb,
/// and TCP decides one ACK per skb. Reordering breaks the runs, so reordered data costs more. The
/// backlog path has no GRO: `process_backlog` hands each frame to `__netif_receive_skb`.
///
/// Interrupt moderation (`rx_coalesce_us`) spaces the polls, so that a poll finds several frames
/// (GRO merges only what one poll takes).
///
/// A frame sent costs the CPU after it has left: the model does not hold a send back for the CPU,
/// but what it costs delays the frames received next (the ACKs that clock a sender), so a sender's
/// rate is bound by its CPU all the same.
///
/// What is left out, said once: NAPI's budget (`netdev_budget` 300) only shares the CPU with other
/// softirq work, which the model has none of; adaptive coalescing; several CPUs (RPS, RSS). The
/// default, every cost 0 with neither moderation nor GRO, is no host at all: frames reach the stack
/// the instant they arrive, as before this part existed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Host {
    /// CPU time per frame received, µs (the driver, IP and TCP input, the wake-up of the reader).
    #[serde(default)]
    pub rx_packet_us: f64,
    /// CPU time per payload byte received, ns (the copy to the reader: `skb_copy_datagram_iter`).
    #[serde(default)]
    pub rx_byte_ns: f64,
    /// CPU time per skb the stack takes (IP and TCP input), µs, beside `rx_packet_us` per frame:
    /// without GRO every frame is an skb, so the two add up; with it a merged skb pays it once.
    #[serde(default)]
    pub rx_skb_us: f64,
    /// CPU time per frame the host sends (an ACK: `tcp_send_ack` and the driver's transmit), µs.
    #[serde(default)]
    pub tx_packet_us: f64,
    /// Interrupt moderation, µs (`ethtool -C rx-usecs`; igb and e1000e turn it into their interrupt
    /// throttle interval, `EITR` / `ITR`): the NIC raises at most one receive interrupt per interval,
    /// so a poll starts no sooner than this after the last one started, and takes whatever arrived
    /// meanwhile. 0: at once.
    #[serde(default)]
    pub rx_coalesce_us: f64,
    /// GRO on the NAPI ring (`ethtool -K gro on`, the default of every NAPI driver today): TCP only.
    #[serde(default)]
    pub gro: bool,
    /// Frames a NAPI poll takes before GRO flushes what it holds (`dev_rx_weight` and drivers'
    /// `NAPI_POLL_WEIGHT`: 64).
    #[serde(default = "default_napi_weight")]
    pub napi_weight: u32,
    /// `net.core.netdev_max_backlog` (`net_hotdata.max_backlog`, net/core/hotdata.c: 1000): the
    /// backlog path's limit, used when `rx_ring` is not set.
    #[serde(default = "default_max_backlog")]
    pub netdev_max_backlog: u32,
    /// `[host]` only: the clients are processes on one machine, which all their frames share (one
    /// CPU, one receive queue), rather than a machine each.
    #[serde(default)]
    pub shared: bool,
    /// A NAPI NIC's receive ring, descriptors: frames queue there instead of the backlog.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rx_ring: Option<u32>,
    /// `[server_host]` only, with TCP's `sender.message_bytes`: CPU time per write of the
    /// application, µs (the `send()` system call: `tcp_sendmsg`'s copy into the send queue and its
    /// `tcp_push`). The application runs when the CPU has no frame to handle (the receive path is a
    /// softirq, which takes the CPU before a process); a write, once begun, runs to its end.
    #[serde(default)]
    pub write_us: f64,
    /// `[server_host]` only: the application writes on a CPU of its own (a machine of two, its
    /// NICs' interrupts on the first, the writer on the second), so its writes neither wait for the
    /// frames nor delay them. The socket's lock is not modelled (Linux hands an ACK that finds the
    /// writer in `tcp_sendmsg` to the socket's backlog, which the writer's CPU runs at `release_sock`).
    #[serde(default)]
    pub app_own_cpu: bool,
}

fn default_max_backlog() -> u32 {
    1000
}

fn default_napi_weight() -> u32 {
    64
}

impl Default for Host {
    fn default() -> Host {
        Host {
            rx_packet_us: 0.0,
            rx_byte_ns: 0.0,
            rx_skb_us: 0.0,
            tx_packet_us: 0.0,
            rx_coalesce_us: 0.0,
            gro: false,
            napi_weight: default_napi_weight(),
            netdev_max_backlog: default_max_backlog(),
            rx_ring: None,
            shared: false,
            write_us: 0.0,
            app_own_cpu: false,
        }
    }
}

impl Host {
    /// No host model: every cost 0, no interrupt moderation and no GRO (the default), so frames reach
    /// the stack as they arrive. A host without costs but with moderation or GRO is a fast CPU whose
    /// polls are spaced by its NIC's interrupts: GRO merges what each poll takes (the emulator's
    /// clients, whose CPU is the kernel's own, are such hosts).
    pub fn is_off(&self) -> bool {
        self.is_free() && self.rx_coalesce_us == 0.0 && !self.gro
    }

    /// Every CPU cost 0.
    pub fn is_free(&self) -> bool {
        self.costs().iter().all(|&(_, cost)| cost == 0.0)
    }

    /// The CPU costs, by field name.
    pub fn costs(&self) -> [(&'static str, f64); 5] {
        [
            ("rx_packet_us", self.rx_packet_us),
            ("rx_byte_ns", self.rx_byte_ns),
            ("rx_skb_us", self.rx_skb_us),
            ("tx_packet_us", self.tx_packet_us),
            ("write_us", self.write_us),
        ]
    }
}

impl Host {
    /// Checks the fields of the section named `section` (`host` or `server_host`).
    fn validate(&self, section: &str) -> Result<()> {
        let field = |name: &str| format!("{section}.{name}");
        plausible(&field("rx_packet_us"), self.rx_packet_us, &HOST_FRAME_US)?;
        plausible(&field("tx_packet_us"), self.tx_packet_us, &HOST_FRAME_US)?;
        plausible(&field("rx_skb_us"), self.rx_skb_us, &HOST_FRAME_US)?;
        plausible(&field("rx_coalesce_us"), self.rx_coalesce_us, &HOST_FRAME_US)?;
        plausible(&field("write_us"), self.write_us, &HOST_FRAME_US)?;
        at_least(&field("napi_weight"), u64::from(self.napi_weight), 1)?;
        if self.gro && self.rx_ring.is_none() {
            return Err(Error::scenario(
                field("gro"),
                format!(
                    "GRO runs in a NAPI NIC's poll (napi_gro_receive); the netif_rx backlog hands each frame to \
                     the stack alone (process_backlog -> __netif_receive_skb): set {section}.rx_ring too, or leave \
                     gro off"
                ),
            ));
        }
        plausible(&field("rx_byte_ns"), self.rx_byte_ns, &HOST_BYTE_NS)?;
        plausible(&field("netdev_max_backlog"), f64::from(self.netdev_max_backlog), &QUEUE_PACKETS)?;
        if let Some(ring) = self.rx_ring {
            plausible(&field("rx_ring"), f64::from(ring), &QUEUE_PACKETS)?;
        }
        Ok(())
    }
}

impl Scenario {
    pub(super) fn validate_host(&self) -> Result<()> {
        self.host.validate("host")?;
        self.server_host.validate("server_host")?;
        if self.host.write_us > 0.0 {
            return Err(Error::scenario(
                "host.write_us",
                "the clients only read (an upload's writers are not modelled): a write's cost is the server's, \
                 [server_host] write_us",
            ));
        }
        if self.server_host.write_us > 0.0 && self.sender.tcp().and_then(|t| t.message_bytes).is_none() {
            return Err(Error::scenario(
                "server_host.write_us",
                "costs each of the application's writes, which only a TCP stream of messages makes: set \
                 sender.message_bytes with kind = \"tcp\"",
            ));
        }
        if self.host.app_own_cpu || (self.server_host.app_own_cpu && self.server_host.write_us == 0.0) {
            let section = if self.host.app_own_cpu { "host" } else { "server_host" };
            return Err(Error::scenario(
                format!("{section}.app_own_cpu"),
                "puts the server's application's writes on a CPU of their own: it needs [server_host] write_us",
            ));
        }
        if self.server_host.shared {
            return Err(Error::scenario(
                "server_host.shared",
                "the server is one machine already; `shared` puts the clients on one ([host] shared = true)",
            ));
        }
        Ok(())
    }
}
