//! Addresses and headers: what each flow's packets carry, as the hash policies read them.
//!
//! Every flow (request) goes from the server to one client: source MAC, IP
//! and port are the server's; destination MAC and IP the client's (or the
//! router's MAC); the destination port is an ephemeral port drawn from the
//! seed in Linux's default range 32768–60999. IPv4 only.

use rand::RngExt;

use crate::rng;
use crate::scenario::{Network, Protocol};
use crate::workload::Request;

pub use crate::addr::{format_mac, parse_ip, parse_mac};
pub use crate::bond::flow::{FlowHeaders, Mac, ETH_P_IP};

/// Linux's default ephemeral port range (`net.ipv4.ip_local_port_range`).
pub const EPHEMERAL_PORTS: std::ops::RangeInclusive<u16> = 32768..=60999;

/// The MAC and IP of every client.
#[derive(Debug, Clone)]
pub struct Clients {
    /// MAC by client number.
    pub macs: Vec<Mac>,
    /// IPv4 address by client number.
    pub ips: Vec<[u8; 4]>,
}

impl Clients {
    /// `count` clients: the configured addresses first, then generated ones.
    pub fn new(network: &Network, count: u32, seed: u64) -> Clients {
        let mut mac_rng = rng::stream(seed, "network.client_macs");
        let macs = (0..count as usize)
            .map(|i| match network.client_macs.get(i) {
                Some(text) => parse_mac("network.client_macs", text).expect("validated"),
                None => {
                    // Locally administered, unicast: 02:xx:xx:xx:xx:xx.
                    let mut mac = [0x02, 0, 0, 0, 0, 0];
                    mac_rng.fill(&mut mac[1..]);
                    mac
                }
            })
            .collect();
        let ips = (0..count as usize)
            .map(|i| match network.client_ips.get(i) {
                Some(text) => parse_ip("network.client_ips", text).expect("validated"),
                None => {
                    let host = (i + 1) as u32;
                    [10, 1, (host >> 8) as u8, host as u8]
                }
            })
            .collect();
        Clients { macs, ips }
    }
}

/// The MAC address each of the bond's slaves has (its `dev_addr`) and sends with.
///
/// The bond takes its first slave's address (`bond_enslave` → `bond_set_dev_addr`); slave
/// `i`'s permanent address is the bond's plus `i` (the ports of one multi-port NIC). Most
/// modes give every slave the bond's address (`bond_enslave`: `dev_set_mac_address` to the
/// master's). balance-tlb and balance-alb give each its permanent one back
/// (`bond_alb_init_slave` → `alb_set_slave_mac_addr`), the active slave holding the bond's,
/// and swap addresses when the active slave changes (`bond_alb_handle_active_change` →
/// `alb_swap_mac_addr`): a frame on another slave carries that slave's address
/// (`bond_do_alb_xmit`), so an unaware switch learns the bond's on the active slave only.
#[derive(Debug, Clone)]
pub struct SlaveMacs {
    bond: Mac,
    macs: Vec<Mac>,
}

impl SlaveMacs {
    /// `slaves` slaves of a bond of address `bond`, each with its own address (`own`) or the bond's.
    pub fn new(bond: Mac, slaves: usize, own: bool) -> SlaveMacs {
        let base = bond.iter().fold(0u64, |n, &b| n << 8 | u64::from(b));
        let macs = (0..slaves as u64)
            .map(|i| if own { base.wrapping_add(i) & ((1 << 48) - 1) } else { base })
            .map(|n| std::array::from_fn(|k| (n >> (8 * (5 - k))) as u8))
            .collect();
        SlaveMacs { bond, macs }
    }

    /// The bond's own address.
    pub fn bond(&self) -> Mac {
        self.bond
    }

    /// Slave `slave`'s address: the source of the frames it sends, and the destination its NIC takes.
    pub fn of(&self, slave: usize) -> Mac {
        self.macs[slave]
    }

    /// `new` becomes the active slave (`bond_alb_handle_active_change`): it takes the bond's
    /// address from the slave that holds it (`bond_slave_has_mac`), which takes `new`'s. Returns
    /// the two slaves whose addresses the bond then teaches the switch (`alb_fasten_mac_swap`;
    /// the same one twice when `new` already held it).
    pub fn make_active(&mut self, new: usize) -> [usize; 2] {
        let bond = self.bond;
        match self.macs.iter().position(|&m| m == bond) {
            Some(holder) => {
                self.macs.swap(holder, new);
                [holder, new]
            }
            // None holds it: the new one takes it (`alb_set_slave_mac_addr(new_slave, bond->dev_addr)`).
            None => {
                self.macs[new] = bond;
                [new, new]
            }
        }
    }
}

/// The headers of every flow, indexed by flow (request) id.
pub fn flow_headers(network: &Network, clients: &Clients, requests: &[Request], seed: u64) -> Vec<FlowHeaders> {
    let server_mac = parse_mac("network.server_mac", &network.server_mac).expect("validated");
    let server_ip = parse_ip("network.server_ip", &network.server_ip).expect("validated");
    let router = network.router_mac.as_deref().map(|m| parse_mac("network.router_mac", m).expect("validated"));
    let mut ports = rng::stream(seed, "network.ports");
    let ip_proto = match network.protocol {
        Protocol::Tcp => 6,
        Protocol::Udp => 17,
    };
    requests
        .iter()
        .map(|r| {
            let client = r.client as usize;
            FlowHeaders {
                src_mac: server_mac,
                dst_mac: router.unwrap_or(clients.macs[client]),
                src_ip: server_ip,
                dst_ip: clients.ips[client],
                src_port: network.server_port,
                dst_port: ports.random_range(EPHEMERAL_PORTS),
                ip_proto,
                vlan: network.vlan,
                ethertype: ETH_P_IP,
            }
        })
        .collect()
}

/// The flows on the wire when each request is an MPTCP connection of `subflows` subflows
/// (`transport::mptcp::wire_flow`): subflow `i` of a request keeps its headers, from a client
/// port of its own (the request's plus `i`, as a client's consecutive connects take them). The
/// request's own when `subflows` is 0.
pub fn subflow_headers(headers: Vec<FlowHeaders>, subflows: u32) -> Vec<FlowHeaders> {
    if subflows == 0 {
        return headers;
    }
    headers
        .iter()
        .flat_map(|h| (0..subflows).map(move |i| FlowHeaders { dst_port: h.dst_port.wrapping_add(i as u16), ..*h }))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tlb_slaves_keep_their_own_addresses_and_the_active_one_holds_the_bonds() {
        let bond = [0, 0x15, 0x17, 0xb0, 0x26, 0xff];
        let mut macs = SlaveMacs::new(bond, 3, true);
        // The first slave's address is the bond's; the next ones follow it (carrying into byte 4).
        assert_eq!(
            (0..3).map(|i| macs.of(i)).collect::<Vec<_>>(),
            [bond, [0, 0x15, 0x17, 0xb0, 0x27, 0], [0, 0x15, 0x17, 0xb0, 0x27, 1]]
        );
        let second = macs.of(2);
        // Slave 2 becomes active: it takes the bond's address, slave 0 its address.
        assert_eq!(macs.make_active(2), [0, 2]);
        assert_eq!((macs.of(0), macs.of(2)), (second, bond));
        // Already holding it: the same slave twice, nothing moves.
        assert_eq!(macs.make_active(2), [2, 2]);
        assert_eq!(macs.of(2), bond);
        // None holds it (not reachable by swaps, but Linux's `else` branch): the new one takes it.
        macs.macs[2] = second;
        assert_eq!(macs.make_active(1), [1, 1]);
        assert_eq!(macs.of(1), bond);
        let shared = SlaveMacs::new(bond, 3, false);
        assert!((0..3).all(|i| shared.of(i) == bond));
    }

    #[test]
    fn configured_addresses_first_then_generated_ones() {
        let network = Network { client_macs: vec!["00:00:00:00:00:07".into()], ..Network::default() };
        let clients = Clients::new(&network, 300, 5);
        assert_eq!(clients.macs[0], [0, 0, 0, 0, 0, 7]);
        assert!(clients.macs[1..].iter().all(|m| m[0] == 0x02));
        assert_eq!(clients.ips[0], [10, 1, 0, 1]);
        assert_eq!(clients.ips[299], [10, 1, 1, 44]);
        assert_eq!(Clients::new(&network, 300, 5).macs, clients.macs);
        assert_ne!(Clients::new(&network, 300, 6).macs, clients.macs);
    }
}
