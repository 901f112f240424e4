//! `[ipfrag]`: the receiving host's IPv4 reassembly.

use super::*;

/// The receiving host's IPv4 reassembly (`net/ipv4/ip_fragment.c`,
/// `net/ipv4/inet_fragment.c`), with the sysctls' names and defaults
/// (`Documentation/networking/ip-sysctl.rst`). It matters only when datagrams
/// are fragmented: a `cbr` sender of UDP whose `chunk_bytes` + 28 exceed the MTU.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct IpFrag {
    /// `net.ipv4.ipfrag_time`, seconds: a queue not completed this long after it
    /// was created is destroyed (`ip_expire`; `IP_FRAG_TIME` = 30 s). Linux does not
    /// extend it per fragment (`ipv4_frags_init_net`: "RFC791 is wrong proposing to
    /// prolongate timer each fragment arrival").
    #[serde(default = "default_ipfrag_time")]
    pub ipfrag_time: f64,
    /// `net.ipv4.ipfrag_max_dist` (default 64; 0 disables): when more than this many
    /// fragments from the same source arrived between two fragments of one queue,
    /// the queue's fragments are dropped and it starts again (`ip_frag_too_far`,
    /// `ip_frag_reinit`).
    #[serde(default = "default_ipfrag_max_dist")]
    pub ipfrag_max_dist: u32,
    /// `net.ipv4.ipfrag_high_thresh`, bytes of fragment memory (skb truesize plus
    /// each queue's struct): 4 MiB in 3.x (`ipv4_frags_init_net`: 4 * 1024 * 1024)
    /// and today.
    #[serde(default = "default_ipfrag_high_thresh")]
    pub ipfrag_high_thresh: u64,
    /// `net.ipv4.ipfrag_low_thresh`: unset (the default) is Linux since 4.17, where
    /// over `ipfrag_high_thresh` every fragment is refused (`inet_frag_find` returns
    /// NULL) until queues complete or expire, and this sysctl is obsolete. Set, it
    /// is the older kernels' evictor (3.11, the seed's: 3 MiB): over `high_thresh`
    /// the least recently used queues are destroyed until memory is below it
    /// (`ip_evictor` → `inet_frag_evictor`, called on every fragment by `ip_defrag`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipfrag_low_thresh: Option<u64>,
    /// Memory a received fragment holds (`skb->truesize`): 2944 for a 1500-byte frame
    /// in `ipv4_frags_init_net`'s comment ("1500 truesize == 2944"); the driver's
    /// receive buffer decides it, so it is a knob.
    #[serde(default = "default_frag_truesize")]
    pub truesize_bytes: u32,
    /// Memory of one queue (`sizeof(struct ipq)`, 200 in the same comment), charged
    /// when the queue is made (`inet_frag_alloc`: `add_frag_mem_limit(q, f->qsize)`).
    #[serde(default = "default_ipq_bytes")]
    pub queue_bytes: u32,
}

impl Default for IpFrag {
    fn default() -> IpFrag {
        IpFrag {
            ipfrag_time: default_ipfrag_time(),
            ipfrag_max_dist: default_ipfrag_max_dist(),
            ipfrag_high_thresh: default_ipfrag_high_thresh(),
            ipfrag_low_thresh: None,
            truesize_bytes: default_frag_truesize(),
            queue_bytes: default_ipq_bytes(),
        }
    }
}

fn default_ipfrag_time() -> f64 {
    30.0
}
fn default_ipfrag_max_dist() -> u32 {
    64
}
fn default_ipfrag_high_thresh() -> u64 {
    4 * 1024 * 1024
}
fn default_frag_truesize() -> u32 {
    2944
}
fn default_ipq_bytes() -> u32 {
    200
}

impl Scenario {
    pub(super) fn validate_ipfrag(&self) -> Result<()> {
        let f = &self.ipfrag;
        duration("ipfrag.ipfrag_time", f.ipfrag_time, 1.0, false)?;
        at_least("ipfrag.truesize_bytes", u64::from(f.truesize_bytes), 1)?;
        if let Some(low) = f.ipfrag_low_thresh {
            if low > f.ipfrag_high_thresh {
                return Err(Error::scenario(
                    "ipfrag.ipfrag_low_thresh",
                    format!("must be at most ipfrag_high_thresh ({}), got {low}", f.ipfrag_high_thresh),
                ));
            }
        }
        // An IPv4 datagram is at most 65535 bytes (RFC 791 §3.1 Total Length).
        let datagram = u64::from(self.chunk_bytes()) + u64::from(self.l3_header_bytes());
        if self.fragments() && datagram > 65535 {
            return Err(Error::scenario(
                "sender.chunk_bytes",
                format!("a UDP datagram is at most 65535 bytes with its headers, got {datagram}"),
            ));
        }
        Ok(())
    }
}
