//! `[switch]`: the switch between the bond's links and the clients (its LAG, spanning tree, ageing).

use super::*;

/// How the switch treats the ports the bond's links plug into.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Lag {
    /// A static link aggregation (802.3ad without LACP, IEEE 802.1AX-2014 §6): one
    /// bridge port; the members are the ports with carrier.
    #[default]
    Static,
    /// An LACP aggregation (IEEE 802.1AX-2014 §6.4): as static, and a member also leaves
    /// while its LACPDUs time out (`bond.lacp_rate`, `switch::Switch::lacp`).
    Lacp,
    /// No aggregation: every port a bridge port of its own, MAC learning per port
    /// (IEEE 802.1Q-2018 §8.7), flooding of unknown destinations (§8.8).
    #[serde(rename = "none")]
    Unaware,
}

/// The spanning tree protocol the switch runs on its ports (without a LAG: each port
/// of the bond its own bridge port).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Stp {
    /// No spanning tree: a port forwards the instant it has carrier.
    #[default]
    #[serde(rename = "none")]
    Off,
    /// IEEE 802.1D-1998 STP: a port that comes up listens, then learns, for
    /// `forward_delay_s` each before it forwards.
    Stp,
    /// IEEE 802.1D-2004 §17 RSTP: a designated port that gets no agreement (a host sends
    /// no BPDUs) discards, then learns, for `forward_delay_s` each (`fdWhile`, §17.29.3);
    /// with `auto_edge` it becomes an edge port after the edge delay (§17.25, §17.20.4).
    Rstp,
}

/// The switch between the bond and its peers (`[switch]`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Switch {
    /// `static` | `lacp` (LAG-aware) or `none` (unaware: MAC learning per port). Left out:
    /// `lacp` when the bond runs 802.3ad (the partner it needs), else `static`
    /// ([`Scenario::lag`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lag: Option<Lag>,
    /// The switch's own hash for frames towards the bond over a LAG's members
    /// (a Linux `xmit_hash_policy` name; switches offer the same L2 / L2+L3 / L3+L4 choices).
    pub hash: String,
    /// Spanning tree on the bond's ports: `none`, `stp`, `rstp` (only without a LAG: a
    /// LAG is one bridge port, its members join it without a port state change).
    pub stp: Stp,
    /// Bridge Forward Delay, seconds (IEEE 802.1D-2004 Table 17-1: default 15).
    pub forward_delay_s: f64,
    /// Links (by id) whose switch ports are edge ports (`AdminEdgePort`): forwarding at once.
    pub edge_ports: Vec<usize>,
    /// RSTP's `AutoEdge` (IEEE 802.1D-2004 §17.13): a port that hears no BPDU for the
    /// edge delay (MigrateTime, 3 s, on a point-to-point link: §17.20.4) becomes an edge port.
    pub auto_edge: bool,
    /// MAC address ageing time, seconds (IEEE 802.1D-2004 Table 7-5: recommended 300).
    pub ageing_s: f64,
}

impl Default for Switch {
    fn default() -> Switch {
        Switch {
            lag: None,
            hash: "layer2+3".into(),
            stp: Stp::Off,
            forward_delay_s: 15.0,
            edge_ports: Vec::new(),
            auto_edge: false,
            ageing_s: 300.0,
        }
    }
}

impl Switch {
    /// Whether this is the default switch (a scenario is then written without `switch`).
    pub fn is_default(&self) -> bool {
        *self == Switch::default()
    }
}

impl Scenario {
    /// The switch's kind of LAG: `switch.lag`, or when left out an LACP aggregation for a bond
    /// in 802.3ad (Linux's 802.3ad needs an LACP partner: without one every port is an
    /// aggregator of its own and one carries the traffic, `ad_port_selection_logic`) and a
    /// static one for every other mode.
    pub fn lag(&self) -> Lag {
        self.switch.lag.unwrap_or_else(|| {
            let lacp = bondsim_bond::registry::resolve(&self.bond.mode, &self.bond.options)
                .is_ok_and(|r| r.info.name == "802.3ad");
            if lacp {
                Lag::Lacp
            } else {
                Lag::Static
            }
        })
    }

    pub(super) fn validate_switch(&self) -> Result<()> {
        let s = &self.switch;
        if !bondsim_bond::hash::POLICY_NAMES.contains(&s.hash.as_str()) {
            return Err(Error::scenario(
                "switch.hash",
                bondsim_bond::error::one_of(bondsim_bond::hash::POLICY_NAMES, &s.hash),
            ));
        }
        duration("switch.forward_delay_s", s.forward_delay_s, 1.0, true)?;
        duration("switch.ageing_s", s.ageing_s, 1.0, false)?;
        let links = self.link_count();
        if let Some(bad) = s.edge_ports.iter().find(|&&p| p >= links) {
            return Err(Error::scenario(
                "switch.edge_ports",
                format!("names link ids 0..{}, got {bad}", links.saturating_sub(1)),
            ));
        }
        if s.stp != Stp::Off && self.lag() != Lag::Unaware {
            return Err(Error::scenario(
                "switch.stp",
                "applies to the bond's ports only without a LAG (switch.lag = \"none\"): a LAG is one bridge port",
            ));
        }
        if s.auto_edge && s.stp != Stp::Rstp {
            return Err(Error::scenario("switch.auto_edge", "is RSTP's: set switch.stp = \"rstp\""));
        }
        Ok(())
    }
}
