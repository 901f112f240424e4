//! `[network]`: the addresses and headers the packets carry.

use super::*;
use crate::addr::{parse_ip, parse_mac};

/// The transport protocol of the flows (it sets the ports' meaning and header size).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    /// TCP over IPv4: 40 header bytes.
    #[default]
    Tcp,
    /// UDP over IPv4: 28 header bytes.
    Udp,
}

/// The UDP header (RFC 768).
pub const UDP_HEADER_BYTES: u32 = 8;

impl Protocol {
    /// IPv4 + transport header bytes: 20 + 20 for TCP, 20 + 8 for UDP.
    pub fn header_bytes(self) -> u32 {
        match self {
            Protocol::Tcp => 40,
            Protocol::Udp => 28,
        }
    }
}

/// Addresses: the server (sender) and its clients, as the hash policies see them.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Network {
    /// Transport protocol.
    pub protocol: Protocol,
    /// IPv4 + transport header bytes per packet (default: 40 for tcp, 28 for udp).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub header_bytes: Option<u32>,
    /// The bond's MAC address (source of every frame).
    pub server_mac: String,
    /// The server's IPv4 address.
    pub server_ip: String,
    /// The server's port (source port of every flow).
    pub server_port: u16,
    /// Client MAC addresses by client number; clients beyond the list get
    /// random locally administered ones from the seed.
    pub client_macs: Vec<String>,
    /// Client IPv4 addresses by client number; clients beyond the list get 10.1.x.y in turn.
    pub client_ips: Vec<String>,
    /// Clients behind a router: every frame goes to this MAC.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub router_mac: Option<String>,
    /// 802.1Q VLAN id of every frame (adds 4 bytes per frame).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vlan: Option<u16>,
}

impl Default for Network {
    fn default() -> Self {
        Network {
            protocol: Protocol::Tcp,
            header_bytes: None,
            server_mac: "00:15:17:b0:26:ad".into(),
            server_ip: "10.0.0.1".into(),
            server_port: 8000,
            client_macs: Vec::new(),
            client_ips: Vec::new(),
            router_mac: None,
            vlan: None,
        }
    }
}

impl Scenario {
    pub(super) fn validate_network(&self) -> Result<()> {
        let n = &self.network;
        if self.sender.tcp().is_some() && n.protocol == Protocol::Udp {
            return Err(Error::scenario(
                "network.protocol",
                "a tcp sender's segments are TCP; \"udp\" is for the paced, window and cbr senders",
            ));
        }
        parse_mac("network.server_mac", &n.server_mac)?;
        parse_ip("network.server_ip", &n.server_ip)?;
        for (i, mac) in n.client_macs.iter().enumerate() {
            parse_mac(&format!("network.client_macs.{i}"), mac)?;
        }
        for (i, ip) in n.client_ips.iter().enumerate() {
            parse_ip(&format!("network.client_ips.{i}"), ip)?;
        }
        if let Some(mac) = &n.router_mac {
            parse_mac("network.router_mac", mac)?;
        }
        if let Some(vlan) = n.vlan {
            if !(1..=4094).contains(&vlan) {
                return Err(Error::scenario("network.vlan", format!("a VLAN id is 1 to 4094, got {vlan}")));
            }
        }
        if let Some(header) = n.header_bytes {
            plausible("network.header_bytes", f64::from(header), &HEADER_BYTES)?;
            // An IP fragment after the first carries the IP header only: the datagram's headers
            // less UDP's 8 bytes (`Packet::l3_bytes`, as `ip_fragment` cuts them).
            if n.protocol == Protocol::Udp && header < UDP_HEADER_BYTES {
                return Err(Error::scenario(
                    "network.header_bytes",
                    format!(
                        "with network.protocol = \"udp\" the headers include UDP's own {UDP_HEADER_BYTES} bytes \
                         (IPv4's 20 besides: 28 in all): at least {UDP_HEADER_BYTES}, got {header}"
                    ),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod udp_header_tests {
    use crate::Scenario;

    #[test]
    fn udp_headers_hold_udps_own_eight_bytes() {
        // A fragment after the first carries the datagram's headers less UDP's (`Packet::l3_bytes`).
        let doc = |header: u32| {
            format!(
                r#"{{"workload": {{"requests": 1, "file_size": {{"kind": "fixed", "bytes": 1000}}}},
                    "sender": {{"kind": "cbr", "rate_mbps": 5}}, "bond": {{"mode": "rr"}},
                    "links": [{{"rate_mbps": 10}}], "network": {{"protocol": "udp", "header_bytes": {header}}}}}"#
            )
        };
        let e = Scenario::from_json(&doc(7)).unwrap_err().to_string();
        assert!(e.starts_with("network.header_bytes: with network.protocol = \"udp\"") && e.contains("got 7"), "{e}");
        assert!(Scenario::from_json(&doc(8)).is_ok());
        let tcp = doc(4).replace(r#""protocol": "udp""#, r#""protocol": "tcp""#);
        assert!(Scenario::from_json(&tcp).is_ok(), "the rule is UDP's");
    }
}
