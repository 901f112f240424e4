//! Addresses as a scenario writes them: MACs (`aa:bb:cc:dd:ee:ff`) and IPv4 addresses (`10.0.0.1`),
//! parsed and formatted. A leaf module (it uses nothing of the core but `error`): the schema
//! ([`crate::scenario`]) checks a scenario's addresses with the parser the world's headers are
//! made with ([`crate::network`]), and neither imports the other.

use std::net::Ipv4Addr;

use crate::error::{Error, Result};

pub use bondsim_bond::flow::Mac;

/// Parses `aa:bb:cc:dd:ee:ff` (or with `-`); `path` names the field in errors.
pub fn parse_mac(path: &str, text: &str) -> Result<Mac> {
    let parts: Vec<&str> = text.split([':', '-']).collect();
    let bad = || Error::scenario(path, format!("`{text}` is not a MAC address (form aa:bb:cc:dd:ee:ff)"));
    if parts.len() != 6 {
        return Err(bad());
    }
    let mut mac = [0u8; 6];
    for (byte, part) in mac.iter_mut().zip(parts) {
        if part.len() != 2 {
            return Err(bad());
        }
        *byte = u8::from_str_radix(part, 16).map_err(|_| bad())?;
    }
    Ok(mac)
}

/// Parses a dotted IPv4 address; `path` names the field in errors.
pub fn parse_ip(path: &str, text: &str) -> Result<[u8; 4]> {
    text.parse::<Ipv4Addr>()
        .map(|ip| ip.octets())
        .map_err(|_| Error::scenario(path, format!("`{text}` is not an IPv4 address (form 10.0.0.1)")))
}

/// Formats a MAC address.
pub fn format_mac(mac: &Mac) -> String {
    mac.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects_addresses() {
        assert_eq!(parse_mac("m", "00:15:17:b0:26:AD").unwrap(), [0, 0x15, 0x17, 0xb0, 0x26, 0xad]);
        assert_eq!(parse_mac("m", "00-15-17-b0-26-ad").unwrap()[5], 0xad);
        for bad in ["00:15:17:b0:26", "0:15:17:b0:26:ad", "zz:15:17:b0:26:ad", ""] {
            let err = parse_mac("network.client_macs.0", bad).unwrap_err().to_string();
            assert!(err.starts_with("network.client_macs.0: "), "{err}");
        }
        assert_eq!(parse_ip("i", "10.0.0.2").unwrap(), [10, 0, 0, 2]);
        assert!(parse_ip("i", "10.0.0.256").is_err());
        assert_eq!(format_mac(&[0, 0x15, 0x17, 0xb0, 0x26, 0xad]), "00:15:17:b0:26:ad");
    }
}
