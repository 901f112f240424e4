//! Flow hashes of the bonding implementations, computed as each computes them.
//!
//! * Linux `xmit_hash_policy` (`bond_xmit_hash` in `drivers/net/bonding/bond_main.c`,
//!   kernels since 5.18, little-endian host): the L2 term is
//!   `h_dest[5] ^ h_source[5] ^ ethertype`; IPv4 addresses are the raw
//!   network-order words read as native u32; the ports word is
//!   `[sport_hi, sport_lo, dport_hi, dport_lo]` read as native u32; then
//!   `h ^= h >> 16; h ^= h >> 8`, and `h >>= 1` for layer3+4 only. The link is
//!   `usable[h % count]`. bondsim's packets carry no tunnel, so encap2+3 and
//!   encap3+4 hash like layer2+3 and layer3+4 (the dissector path; a socket's
//!   random `skb->hash` shortcut of encap3+4 is not modelled).
//! * teamd `loadbalance` (`teamd_bpf_chef.c` + the team driver's
//!   `lb_get_skb_hash`): the XOR of every byte of the selected header fields.
//! * Open vSwitch (`ofproto/bond.c`, portable `lib/hash.h`): `hash_mac` of the
//!   source MAC and VLAN for balance-slb, `flow_hash_5tuple` for balance-tcp;
//!   the bucket is the low 8 bits. (On x86 with SSE4.2 OVS uses a CRC32 variant,
//!   so real bucket numbers differ there; the distribution is the same.)

use crate::flow::FlowHeaders;

/// Linux `xmit_hash_policy` values, by their Linux names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HashPolicy {
    /// `layer2`: MACs and EtherType.
    Layer2,
    /// `layer2+3`: MACs, EtherType and IP addresses.
    Layer23,
    /// `layer3+4`: IP addresses and ports.
    Layer34,
    /// `encap2+3`: as layer2+3 on the innermost headers.
    Encap23,
    /// `encap3+4`: as layer3+4 on the innermost headers.
    Encap34,
    /// `vlan+srcmac`: VLAN id and source MAC.
    VlanSrcMac,
}

/// The policy names Linux accepts, in its order.
pub const POLICY_NAMES: &[&str] = &["layer2", "layer2+3", "layer3+4", "encap2+3", "encap3+4", "vlan+srcmac"];

impl HashPolicy {
    /// The policy called `name` (one of [`POLICY_NAMES`]).
    pub fn from_name(name: &str) -> HashPolicy {
        match name {
            "layer2" => HashPolicy::Layer2,
            "layer2+3" => HashPolicy::Layer23,
            "layer3+4" => HashPolicy::Layer34,
            "encap2+3" => HashPolicy::Encap23,
            "encap3+4" => HashPolicy::Encap34,
            "vlan+srcmac" => HashPolicy::VlanSrcMac,
            other => panic!("unknown xmit_hash_policy {other}"),
        }
    }

    /// Whether the hash reads the L4 ports (`bond_xmit_hash`'s `BOND_XMIT_POLICY_LAYER34` and
    /// `_ENCAP34`, drivers/net/bonding/bond_main.c): two connections of one client then differ.
    pub fn reads_ports(self) -> bool {
        matches!(self, HashPolicy::Layer34 | HashPolicy::Encap34)
    }
}

/// Whether teamd's `tx_hash` `fragments` read the L4 ports (`l4`, `tcp`, `udp`, `sctp`:
/// libteam's `teamd_hash_func`).
pub fn teamd_reads_ports(fragments: &[&str]) -> bool {
    fragments.iter().any(|f| matches!(*f, "l4" | "tcp" | "udp" | "sctp"))
}

fn eth_hash(h: &FlowHeaders) -> u32 {
    u32::from(h.dst_mac[5] ^ h.src_mac[5]) ^ u32::from(h.ethertype)
}

fn ip_fold(start: u32, h: &FlowHeaders, drop_low_bit: bool) -> u32 {
    let mut hash = start ^ u32::from_le_bytes(h.dst_ip) ^ u32::from_le_bytes(h.src_ip);
    hash ^= hash >> 16;
    hash ^= hash >> 8;
    if drop_low_bit {
        hash >> 1
    } else {
        hash
    }
}

fn ports_word(h: &FlowHeaders) -> u32 {
    let [sh, sl] = h.src_port.to_be_bytes();
    let [dh, dl] = h.dst_port.to_be_bytes();
    u32::from_le_bytes([sh, sl, dh, dl])
}

/// `bond_xmit_hash`: the Linux bonding hash of a flow's packets.
pub fn linux_xmit_hash(policy: HashPolicy, h: &FlowHeaders) -> u32 {
    match policy {
        HashPolicy::Layer2 => eth_hash(h),
        HashPolicy::Layer23 | HashPolicy::Encap23 => ip_fold(eth_hash(h), h, false),
        HashPolicy::Layer34 | HashPolicy::Encap34 => ip_fold(ports_word(h), h, true),
        HashPolicy::VlanSrcMac => {
            let vendor = u32::from_be_bytes([0, h.src_mac[0], h.src_mac[1], h.src_mac[2]]);
            let device = u32::from_be_bytes([0, h.src_mac[3], h.src_mac[4], h.src_mac[5]]);
            u32::from(h.vlan.unwrap_or(0)) ^ vendor ^ device
        }
    }
}

/// teamd `tx_hash` fragments that bondsim's packets can match.
pub const TEAMD_FRAGMENTS: &[&str] = &["eth", "vlan", "ipv4", "ipv6", "ip", "l3", "l4", "tcp", "udp", "sctp"];

/// teamd `loadbalance` bucket (0–255): XOR of every byte of the selected fields.
pub fn teamd_bucket(fragments: &[&str], h: &FlowHeaders) -> u8 {
    let has = |names: &[&str]| fragments.iter().any(|f| names.contains(f));
    let mut x = 0u8;
    let mut xor_all = |bytes: &[u8]| bytes.iter().for_each(|b| x ^= b);
    if has(&["eth"]) {
        xor_all(&h.dst_mac);
        xor_all(&h.src_mac);
    }
    if has(&["vlan"]) {
        xor_all(&(h.vlan.unwrap_or(0) & 0x0fff).to_be_bytes());
    }
    if has(&["ipv4", "ip", "l3"]) {
        xor_all(&h.src_ip);
        xor_all(&h.dst_ip);
    }
    let l4 = match h.ip_proto {
        6 => has(&["l4", "tcp"]),
        17 => has(&["l4", "udp"]),
        _ => false,
    };
    if l4 {
        xor_all(&h.src_port.to_be_bytes());
        xor_all(&h.dst_port.to_be_bytes());
    }
    x
}

fn mhash_add(hash: u32, data: u32) -> u32 {
    let mut h = hash;
    if data != 0 {
        let d = data.wrapping_mul(0xcc9e_2d51).rotate_left(15).wrapping_mul(0x1b87_3593);
        h ^= d;
    }
    h.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64)
}

fn hash_finish(hash: u32, final_: u32) -> u32 {
    let mut h = hash ^ final_;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// OVS `hash_mac(src MAC, vlan, basis)`: the balance-slb hash.
pub fn ovs_hash_mac(mac: &[u8; 6], vlan: u16, basis: u32) -> u32 {
    let mac64 = mac.iter().fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
    let x = (u64::from(vlan) << 48) | mac64;
    hash_finish(mhash_add(mhash_add(basis, x as u32), (x >> 32) as u32), 8)
}

/// OVS `flow_hash_5tuple(flow, basis)`: the balance-tcp hash.
pub fn ovs_hash_5tuple(h: &FlowHeaders, basis: u32) -> u32 {
    let mut hash = basis;
    hash = mhash_add(hash, u32::from_le_bytes(h.src_ip));
    hash = mhash_add(hash, u32::from_le_bytes(h.dst_ip));
    hash = mhash_add(hash, u32::from(h.ip_proto));
    hash = mhash_add(hash, ports_word(h));
    hash_finish(hash, 42)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flow::ETH_P_IP;

    fn headers() -> FlowHeaders {
        FlowHeaders {
            src_mac: [0, 0, 0, 0, 0, 1],
            dst_mac: [0, 0, 0, 0, 0, 2],
            src_ip: [10, 0, 0, 1],
            dst_ip: [10, 0, 0, 2],
            src_port: 40000,
            dst_port: 80,
            ip_proto: 6,
            vlan: None,
            ethertype: ETH_P_IP,
        }
    }

    #[test]
    fn linux_vectors() {
        // Computed by hand from bond_xmit_hash (current kernels), see the module docs.
        let h = headers();
        assert_eq!(linux_xmit_hash(HashPolicy::Layer2, &h), 0x0803);
        assert_eq!(linux_xmit_hash(HashPolicy::Layer23, &h), 50_531_080);
        assert_eq!(linux_xmit_hash(HashPolicy::Layer34, &h), 698_976_711);
        assert_eq!(linux_xmit_hash(HashPolicy::Encap34, &h), 698_976_711);
        // Slave index for 2 / 3 / 4 usable links.
        let idx = |p| [2, 3, 4].map(|n| linux_xmit_hash(p, &h) % n);
        assert_eq!(idx(HashPolicy::Layer2), [1, 2, 3]);
        assert_eq!(idx(HashPolicy::Layer23), [0, 1, 0]);
        assert_eq!(idx(HashPolicy::Layer34), [1, 0, 3]);
    }

    #[test]
    fn kernel_patch_vector_layer23() {
        // "bonding: do not discard lowest hash bit for non layer3+4 hashing" (2022) quotes 522133332
        // for h_dest[5]=0xa0, h_source[5]=0xe3, 192.168.122.30 -> .1, with the pre-5.15 EtherType term 0x0008.
        let mut h = headers();
        h.dst_mac[5] = 0xa0;
        h.src_mac[5] = 0xe3;
        h.src_ip = [192, 168, 122, 30];
        h.dst_ip = [192, 168, 122, 1];
        h.ethertype = 0x0008;
        assert_eq!(linux_xmit_hash(HashPolicy::Layer23, &h), 522_133_332);
    }

    #[test]
    fn layer2_sees_only_last_mac_bytes_and_layer34_sees_ports() {
        let a = headers();
        let mut b = a;
        b.dst_mac = [9, 9, 9, 9, 9, 2];
        b.dst_port = 81;
        assert_eq!(linux_xmit_hash(HashPolicy::Layer2, &a), linux_xmit_hash(HashPolicy::Layer2, &b));
        assert_ne!(linux_xmit_hash(HashPolicy::Layer34, &a), linux_xmit_hash(HashPolicy::Layer34, &b));
    }

    #[test]
    fn vlan_srcmac_splits_the_mac_in_halves() {
        let mut h = headers();
        h.src_mac = [0x00, 0x15, 0x17, 0xb0, 0x26, 0xad];
        h.vlan = Some(5);
        assert_eq!(linux_xmit_hash(HashPolicy::VlanSrcMac, &h), 5 ^ 0x001517 ^ 0xb026ad);
    }

    #[test]
    fn teamd_bucket_is_xor_of_selected_bytes() {
        let h = headers();
        assert_eq!(teamd_bucket(&["eth"], &h), 1 ^ 2);
        assert_eq!(teamd_bucket(&["eth", "ipv4", "ipv6"], &h), 1 ^ 2 ^ 1 ^ 2);
        let ports = (40000u16.to_be_bytes()[0] ^ 40000u16.to_be_bytes()[1]) ^ 80;
        assert_eq!(teamd_bucket(&["l4"], &h), ports);
        assert_eq!(teamd_bucket(&["udp"], &h), 0, "a TCP flow does not match the udp fragment");
    }

    #[test]
    fn ovs_hashes_are_stable_and_spread() {
        assert_eq!(ovs_hash_mac(&[0, 0, 0, 0, 0, 1], 0, 0), ovs_hash_mac(&[0, 0, 0, 0, 0, 1], 0, 0));
        let buckets: std::collections::HashSet<u32> =
            (0..64u8).map(|i| ovs_hash_mac(&[2, 0, 0, 0, 0, i], 0, 0) & 0xff).collect();
        assert!(buckets.len() > 40, "{}", buckets.len());
        let mut h = headers();
        let a = ovs_hash_5tuple(&h, 0);
        h.dst_port = 81;
        assert_ne!(a, ovs_hash_5tuple(&h, 0));
    }
}
