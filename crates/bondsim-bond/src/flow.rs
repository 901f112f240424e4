//! Flows as a data path sees them: header fields (what hash policies read),
//! the 5-tuple key, and per-flow state that expires.
//!
//! A real bond sees 5-tuples come and go, never a dense flow number, so every
//! scheduler that keeps per-flow state keeps it in a [`FlowTable`] keyed by
//! [`FlowKey`], and every entry carries the time after which it is
//! meaningless (a flowlet's gap, a guard); expired entries are dropped.

use rustc_hash::FxHashMap;

use crate::time::SimTime;

/// A MAC address.
pub type Mac = [u8; 6];

/// EtherType of IPv4.
pub const ETH_P_IP: u16 = 0x0800;

/// The header fields of one flow's packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FlowHeaders {
    /// Source MAC (the bond's).
    pub src_mac: Mac,
    /// Destination MAC (the client's, or its router's).
    pub dst_mac: Mac,
    /// Source IPv4 address, network byte order.
    pub src_ip: [u8; 4],
    /// Destination IPv4 address, network byte order.
    pub dst_ip: [u8; 4],
    /// Source (server) port.
    pub src_port: u16,
    /// Destination (client, ephemeral) port.
    pub dst_port: u16,
    /// IP protocol number (6 TCP, 17 UDP).
    pub ip_proto: u8,
    /// 802.1Q VLAN id, if tagged.
    pub vlan: Option<u16>,
    /// EtherType of the payload.
    pub ethertype: u16,
}

impl FlowHeaders {
    /// The flow's 5-tuple.
    pub fn key(&self) -> FlowKey {
        FlowKey {
            src_ip: self.src_ip,
            dst_ip: self.dst_ip,
            src_port: self.src_port,
            dst_port: self.dst_port,
            ip_proto: self.ip_proto,
        }
    }

    /// The headers of one of the flow's IP fragments as the bond's hash reads them:
    /// no ports (`bond_flow_ip`, drivers/net/bonding/bond_main.c: `if
    /// (!ip_is_fragment(iph)) *proto = iph->protocol;`, and ports are read only for
    /// a protocol; 3.x's `bond_xmit_hash_policy_l34` likewise), so layer3+4 puts every
    /// fragment of a flow where its addresses alone hash.
    pub fn fragment(&self) -> FlowHeaders {
        FlowHeaders { src_port: 0, dst_port: 0, ..*self }
    }

    /// The same flow seen in the other direction (addresses and ports swapped).
    pub fn reversed(&self) -> FlowHeaders {
        FlowHeaders {
            src_mac: self.dst_mac,
            dst_mac: self.src_mac,
            src_ip: self.dst_ip,
            dst_ip: self.src_ip,
            src_port: self.dst_port,
            dst_port: self.src_port,
            ..*self
        }
    }
}

/// A flow's 5-tuple: what identifies it on a real data path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FlowKey {
    /// Source IPv4 address.
    pub src_ip: [u8; 4],
    /// Destination IPv4 address.
    pub dst_ip: [u8; 4],
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// IP protocol number.
    pub ip_proto: u8,
}

/// Per-flow state with expiry: an entry is gone once its time is past.
///
/// Reads never see an expired entry; expired entries are swept out whenever
/// the table has doubled since the last sweep, so memory follows the flows
/// alive, not the flows ever seen.
#[derive(Debug, Clone)]
pub struct FlowTable<V> {
    /// Fx hashing: a lookup per packet must be cheap, and nothing depends on the order.
    entries: FxHashMap<FlowKey, (V, SimTime)>,
    sweep_at_len: usize,
}

impl<V> Default for FlowTable<V> {
    fn default() -> Self {
        FlowTable { entries: FxHashMap::default(), sweep_at_len: 64 }
    }
}

impl<V> FlowTable<V> {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// The live entry of `key` at `now` (none if absent or expired).
    pub fn get(&self, key: &FlowKey, now: SimTime) -> Option<&V> {
        self.entries.get(key).filter(|(_, until)| now <= *until).map(|(v, _)| v)
    }

    /// Sets `key`'s state to `value`, meaningful until `until` (inclusive).
    pub fn insert(&mut self, key: FlowKey, value: V, until: SimTime, now: SimTime) {
        self.entries.insert(key, (value, until));
        if self.entries.len() >= self.sweep_at_len {
            self.entries.retain(|_, (_, until)| now <= *until);
            self.sweep_at_len = (2 * self.entries.len()).max(64);
        }
    }

    /// Entries held (live or not yet swept).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when nothing is held.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(port: u16) -> FlowKey {
        FlowKey { src_ip: [10, 0, 0, 1], dst_ip: [10, 1, 0, 1], src_port: 8000, dst_port: port, ip_proto: 6 }
    }

    #[test]
    fn entries_expire_and_are_swept() {
        let mut t = FlowTable::new();
        t.insert(key(1), 'a', SimTime(10), SimTime(0));
        assert_eq!(t.get(&key(1), SimTime(10)), Some(&'a'));
        assert_eq!(t.get(&key(1), SimTime(11)), None);
        // A million short-lived flows: memory stays with the live ones.
        let mut t = FlowTable::new();
        for i in 0..1_000_000u32 {
            let now = SimTime(u64::from(i) * 100);
            t.insert(key((i % 60_000) as u16), i, now + SimTime(50), now);
        }
        assert!(t.len() <= 128, "{} entries kept", t.len());
    }

    #[test]
    fn reversed_headers_swap_ends() {
        let h = FlowHeaders {
            src_mac: [1; 6],
            dst_mac: [2; 6],
            src_ip: [10, 0, 0, 1],
            dst_ip: [10, 1, 0, 2],
            src_port: 8000,
            dst_port: 40000,
            ip_proto: 6,
            vlan: None,
            ethertype: ETH_P_IP,
        };
        let r = h.reversed();
        assert_eq!((r.src_ip, r.dst_port, r.dst_mac), ([10, 1, 0, 2], 8000, [1; 6]));
        assert_eq!(r.reversed(), h);
    }
}
