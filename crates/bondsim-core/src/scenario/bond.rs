//! `[bond]`: the bond's mode, link monitors and the mode's options.

use std::collections::BTreeMap;

use super::*;

/// The bond: `mode` names a registered scheduler (`bondsim schedulers`), with
/// parameters either in brackets (`"flowlet[gap_us=500]"`) or as keys here;
/// `miimon`, `updelay` and `downdelay` configure the link monitor of every mode.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Bond {
    /// Scheduler name, optionally with `[key=value,...]` parameters.
    pub mode: String,
    /// Link monitor period, milliseconds (Linux default 100; 0 = no monitoring:
    /// the bond never notices a failure).
    #[serde(default = "default_miimon")]
    pub miimon: f64,
    /// Time a link must be back before the bond uses it, ms (rounded down to a multiple of miimon).
    #[serde(default)]
    pub updelay: f64,
    /// Time a link must be gone before the bond stops using it, ms (rounded down to a multiple of miimon).
    #[serde(default)]
    pub downdelay: f64,
    /// The ARP monitor's period, ms (0 = off; exclusive with `miimon`, as in Linux).
    #[serde(default)]
    pub arp_interval: f64,
    /// The IPv4 addresses the ARP monitor probes (at most 16, Linux's `BOND_MAX_ARP_TARGETS`).
    #[serde(default)]
    pub arp_ip_target: Vec<String>,
    /// Which ARP traffic counts as a sign of life (Linux's `arp_validate`).
    #[serde(default)]
    pub arp_validate: ArpValidate,
    /// Whether one target answering (`any`) or every target (`all`) keeps a link up
    /// (Linux's `arp_all_targets`: active-backup's monitor only; `slave_last_rx` then takes the
    /// oldest validated ARP of the targets, so a slave that does not validate is failed).
    #[serde(default)]
    pub arp_all_targets: ArpAllTargets,
    /// ARP monitor intervals without a sign of life before a link is failed (Linux's
    /// `arp_missed_max`, 1 to 255).
    #[serde(default = "default_arp_missed_max")]
    pub arp_missed_max: u32,
    /// 802.3ad: how often the partner sends LACPDUs (`slow`: every 30 s, `fast`: every
    /// second) and so how soon a silent partner times out (90 s, 3 s).
    #[serde(default)]
    pub lacp_rate: LacpRate,
    /// teamd's link watch (`teamd:*` modes), replacing miimon (libteam `teamd_link_watch.c`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_watch: Option<LinkWatch>,
    /// Gratuitous ARPs the bond sends on the new active slave after an active-backup
    /// failover (Linux `num_grat_arp` / `num_unsol_na`, default 1, at most 255;
    /// `bond_change_active_slave` sets `send_peer_notif`). An unaware switch learns the
    /// bond's MAC on the new port from the first one.
    #[serde(default = "default_num_grat_arp")]
    pub num_grat_arp: u32,
    /// Interval between those ARPs, ms (Linux `peer_notif_delay`: 0 = one per miimon period;
    /// `bond_should_notify_peers` sends every `max(1, peer_notif_delay / miimon)` ticks).
    #[serde(default)]
    pub peer_notif_delay: f64,
    /// The kernel's timer tick rate (`CONFIG_HZ`: 100, 250, 300 or 1000). The miimon and ARP
    /// monitors re-arm `msecs_to_jiffies(interval)` jiffies ahead, so their intervals round up
    /// to whole jiffies (`monitor::jiffies_period`: miimon 1 ms checks every 4 ms at 250). 1000
    /// (Fedora, RHEL, Ubuntu from 24.10) keeps every whole-ms interval as set; Debian's and
    /// older Ubuntus' kernels run at 250. teamd's link watches are timers of their own (ms);
    /// TCP's timers stay exact (only `sender.tlp_timeout = "linux-3.10"`'s floor and
    /// `sender.ts_clock = "linux-4.12"`'s timestamps count jiffies).
    #[serde(default = "default_hz")]
    pub hz: u32,
    /// The scheduler's parameters, checked against its declaration.
    #[serde(flatten)]
    pub options: BTreeMap<String, serde_json::Value>,
}

/// The bond table's own fields (the keys of [`Bond`] other than its mode's parameters): what an unknown
/// key of the table is compared with, beside every mode's parameters, for the one most likely meant.
pub(super) const BOND_FIELDS: &[&str] = &[
    "mode",
    "miimon",
    "updelay",
    "downdelay",
    "arp_interval",
    "arp_ip_target",
    "arp_validate",
    "arp_all_targets",
    "arp_missed_max",
    "lacp_rate",
    "link_watch",
    "num_grat_arp",
    "peer_notif_delay",
    "hz",
];

fn default_miimon() -> f64 {
    100.0
}

fn default_hz() -> u32 {
    1000
}

fn default_arp_missed_max() -> u32 {
    2
}

/// Linux's `arp_validate` values (Documentation/networking/bonding.rst): which slaves
/// validate ARP traffic (`active`, `backup`, `all`), and whether the others count only
/// ARP frames (`filter*`) or any frame (`none`, `active`, `backup`).
/// Current Linux accepts it in every mode that runs the ARP monitor (bonding.rst: "validated in
/// any mode that supports arp monitoring"); older kernels took it in active-backup only. The
/// model is current Linux's: no mode is refused for it.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum ArpValidate {
    /// Any frame received counts.
    #[default]
    None,
    /// The active slave counts only validated ARP; the others any frame.
    Active,
    /// Backup slaves count only validated ARP; the active any frame.
    Backup,
    /// Every slave counts only validated ARP.
    All,
    /// Every slave counts only ARP frames, unvalidated.
    Filter,
    /// `filter`, and the active slave validates.
    FilterActive,
    /// `filter`, and backup slaves validate.
    FilterBackup,
}

/// Linux's `arp_all_targets`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum ArpAllTargets {
    /// A link is up if any target answers.
    #[default]
    Any,
    /// A link is up only if every target answers.
    All,
}

/// A teamd link watch (`link_watch.name` in teamd's JSON configuration).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "name", rename_all = "snake_case", deny_unknown_fields)]
pub enum LinkWatch {
    /// `ethtool`: the port's carrier as the kernel reports it (at once, by netlink), a change
    /// taking effect after `delay_up` / `delay_down` ms.
    Ethtool {
        /// ms a link must be back before the port is used.
        #[serde(default)]
        delay_up: f64,
        /// ms a link must be gone before the port is dropped.
        #[serde(default)]
        delay_down: f64,
    },
    /// `arp_ping`: an ARP request to `target_host` on every port every `interval` ms; a port is
    /// down after more than `missed_max` intervals without a reply, up at the first reply.
    ArpPing {
        /// ms between requests.
        interval: f64,
        /// Intervals without a reply a port survives (teamd's default 3).
        #[serde(default = "default_teamd_missed_max")]
        missed_max: u32,
        /// The IPv4 address probed.
        target_host: String,
    },
}

fn default_teamd_missed_max() -> u32 {
    3
}

/// Linux's `lacp_rate`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum LacpRate {
    /// LACPDUs every 30 s, timeout 90 s.
    #[default]
    Slow,
    /// LACPDUs every second, timeout 3 s.
    Fast,
}

fn default_num_grat_arp() -> u32 {
    1
}

impl Scenario {
    pub(super) fn validate_bond(&self) -> Result<()> {
        let b = &self.bond;
        // The bonding driver takes these as integers of milliseconds (`bond_opts`: BOND_OPT_*
        // values are u64; the module parameters are `int`).
        for (path, value) in [
            ("bond.miimon", b.miimon),
            ("bond.updelay", b.updelay),
            ("bond.downdelay", b.downdelay),
            ("bond.peer_notif_delay", b.peer_notif_delay),
            ("bond.arp_interval", b.arp_interval),
        ] {
            duration(path, value, 1e-3, true)?;
            plausible(path, value, &BOND_MS)?;
            if value.fract() != 0.0 {
                return Err(Error::scenario(
                    path,
                    format!("must be a whole number of milliseconds, as Linux takes it, got {}", num(value)),
                ));
            }
        }
        let hz_choices = bondsim_bond::monitor::HZ_CHOICES;
        if !hz_choices.contains(&b.hz) {
            let choices = hz_choices.map(|hz| hz.to_string()).join(", ");
            return Err(Error::scenario("bond.hz", format!("must be a kernel's CONFIG_HZ ({choices}), got {}", b.hz)));
        }
        if b.num_grat_arp > 255 {
            return Err(Error::scenario(
                "bond.num_grat_arp",
                format!("must be 0 to 255 (Linux), got {}", b.num_grat_arp),
            ));
        }
        if b.miimon == 0.0 {
            for (field, value) in
                [("updelay", b.updelay), ("downdelay", b.downdelay), ("peer_notif_delay", b.peer_notif_delay)]
            {
                if value > 0.0 {
                    return Err(Error::scenario(
                        format!("bond.{field}"),
                        "needs the link monitor: set bond.miimon > 0",
                    ));
                }
            }
        }
        if !(1..=255).contains(&b.arp_missed_max) {
            return Err(Error::scenario(
                "bond.arp_missed_max",
                format!("must be an integer from 1 to 255 (Linux's range), got {}", b.arp_missed_max),
            ));
        }
        // Linux's BOND_MAX_ARP_TARGETS, and bond_is_ip_target_ok: no 0.0.0.0, broadcast or multicast.
        if b.arp_ip_target.len() > 16 {
            return Err(Error::scenario(
                "bond.arp_ip_target",
                format!("at most 16 targets, got {}", b.arp_ip_target.len()),
            ));
        }
        for (k, target) in b.arp_ip_target.iter().enumerate() {
            // `bond_is_ip_target_ok`: `!ipv4_is_lbcast(addr) && !ipv4_is_zeronet(addr)`.
            let ok = target.parse::<std::net::Ipv4Addr>().is_ok_and(|ip| !ip.is_broadcast() && ip.octets()[0] != 0);
            if !ok {
                return Err(Error::scenario(
                    format!("bond.arp_ip_target.{k}"),
                    format!("must be an IPv4 address outside 0.0.0.0/8 and not 255.255.255.255 (Linux's bond_is_ip_target_ok), got `{target}`"),
                ));
            }
        }
        match &b.link_watch {
            Some(LinkWatch::Ethtool { delay_up, delay_down }) => {
                duration("bond.link_watch.delay_up", *delay_up, 1e-3, true)?;
                duration("bond.link_watch.delay_down", *delay_down, 1e-3, true)?;
            }
            Some(LinkWatch::ArpPing { interval, target_host, .. }) => {
                duration("bond.link_watch.interval", *interval, 1e-3, false)?;
                if !target_host.parse::<std::net::Ipv4Addr>().is_ok_and(|ip| !ip.is_unspecified() && !ip.is_broadcast())
                {
                    return Err(Error::scenario(
                        "bond.link_watch.target_host",
                        format!("must be a unicast IPv4 address, got `{target_host}`"),
                    ));
                }
            }
            None => {}
        }
        // The mode and its options (checked again where the bond is built): an unknown key is named
        // here, with the field or parameter most likely meant.
        bondsim_bond::registry::resolve_among(&b.mode, &b.options, BOND_FIELDS)?;
        if b.arp_interval > 0.0 {
            if b.miimon > 0.0 {
                // bond_option_arp_interval_set: "ARP monitoring cannot be used with MII monitoring.
                // Disabling MII monitoring" (and bond_option_miimon_set the other way round).
                return Err(Error::scenario(
                    "bond.arp_interval",
                    format!(
                        "Linux runs one link monitor: setting arp_interval disables miimon and setting miimon \
                         disables the ARP monitor (bond_option_arp_interval_set / bond_option_miimon_set); \
                         set bond.miimon = 0 to use the ARP monitor (miimon is {})",
                        num(b.miimon)
                    ),
                ));
            }
            if b.arp_ip_target.is_empty() {
                // bond_check_params: "arp_interval module parameter specified without providing an
                // arp_ip_target parameter, arp_interval was reset to 0".
                return Err(Error::scenario(
                    "bond.arp_ip_target",
                    "the ARP monitor (arp_interval > 0) needs at least one target: Linux turns it off \
                     without one (bond_check_params)",
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bond_fields_listed_are_the_structs() {
        let bond = Bond {
            link_watch: Some(LinkWatch::Ethtool { delay_up: 0.0, delay_down: 0.0 }),
            ..from_defaults_with("mode", "rr".into())
        };
        let printed = serde_json::to_value(bond).unwrap();
        let printed: Vec<&str> = printed.as_object().unwrap().keys().map(String::as_str).collect();
        let mut listed = BOND_FIELDS.to_vec();
        listed.sort_unstable();
        assert_eq!(printed, listed);
    }
}
