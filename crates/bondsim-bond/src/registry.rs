//! The registry: every scheduler by name, with its parameters and constructor.
//!
//! A bond is configured as a mode (`balance-rr`, `flowlet[gap_us=500]`) and
//! options (`{"xmit_hash_policy": "layer3+4"}`), as Linux's bonding driver
//! takes them: [`resolve`] checks both against the scheduler's declared
//! parameters once; [`Resolved::build`] makes the instance for a bond's links.

use std::collections::BTreeMap;

use super::params::{ParamSpec, Params};
use super::{
    active_backup, alb, balance_xor, broadcast, drr_stripe, earliest_finish, flowlet, lacp, least_queue, load_based,
    n_to_one, null, ovs, power_of_two, round_robin, teamd, tlb, Scheduler,
};
use crate::error::{closest, did_you_mean, Error, Result, Warning};
use crate::rng;

/// What a scheduler knows of a link when it is built.
#[derive(Debug, Clone)]
pub struct LinkInfo {
    /// The link's name (`primary` and similar options refer to it).
    pub name: String,
    /// Nominal speed, bits per second.
    pub rate_bps: f64,
}

/// What a scheduler's constructor may use.
#[derive(Debug, Clone)]
pub struct BuildContext {
    /// The bond's links, by id.
    pub links: Vec<LinkInfo>,
    /// The scenario seed (derive streams with [`BuildContext::rng`]).
    pub seed: u64,
    /// The peer runs LACP on the bond's ports (an 802.3ad partner: the switch's `lag = "lacp"`).
    pub lacp_partner: bool,
}

impl BuildContext {
    /// The fastest link (the lowest id among equals).
    pub fn fastest(&self) -> usize {
        (0..self.links.len())
            .fold(0, |best, id| if self.links[id].rate_bps > self.links[best].rate_bps { id } else { best })
    }

    /// The id of the link called `name`; `path` names the option in errors.
    pub fn link_named(&self, path: &str, name: &str) -> Result<usize> {
        self.links.iter().position(|l| l.name == name).ok_or_else(|| {
            let names: Vec<&str> = self.links.iter().map(|l| l.name.as_str()).collect();
            Error::at(path, format!("no link is called `{name}`; links: {}", names.join(", ")))
        })
    }

    /// The scheduler's own random stream.
    pub fn rng(&self) -> rng::Rng {
        rng::stream(self.seed, "bond.scheduler")
    }
}

/// A registered scheduler: its names, one-line summary, parameters, constructor.
#[derive(Clone, Copy)]
pub struct SchedulerInfo {
    /// Canonical name (Linux bonding names where one exists).
    pub name: &'static str,
    /// Other accepted names (e.g. `rr` for `balance-rr`).
    pub aliases: &'static [&'static str],
    /// One line for `bondsim schedulers`, with where it comes from.
    pub summary: &'static str,
    /// Declared parameters with defaults and help.
    pub params: &'static [ParamSpec],
    /// Builds an instance (or says which option does not fit the bond).
    pub build: fn(&Params, &BuildContext) -> Result<Box<dyn Scheduler>>,
}

/// Every registered scheduler, in the order `bondsim schedulers` lists them.
pub const ALL: &[SchedulerInfo] = &[
    // Linux bonding modes 0-6.
    round_robin::INFO,
    active_backup::INFO,
    balance_xor::INFO,
    broadcast::INFO,
    lacp::INFO,
    tlb::INFO,
    alb::INFO,
    // teamd runners and Open vSwitch bonds.
    teamd::RANDOM,
    teamd::ROUNDROBIN,
    teamd::LOADBALANCE,
    ovs::SLB,
    ovs::TCP,
    // The thesis and seed 002.
    load_based::INFO,
    null::INFO,
    n_to_one::INFO,
    n_to_one::PRIMARY_INFO,
    least_queue::INFO,
    least_queue::CUTOFF_INFO,
    // Schedulers that aim to beat them.
    earliest_finish::INFO,
    flowlet::INFO,
    power_of_two::INFO,
    drr_stripe::INFO,
];

/// The scheduler called `name` (canonical name or alias).
pub fn lookup(name: &str) -> Option<&'static SchedulerInfo> {
    ALL.iter().find(|s| s.name == name || s.aliases.contains(&name))
}

/// A bond's scheduler with checked parameters.
#[derive(Clone)]
pub struct Resolved {
    /// The registry entry.
    pub info: &'static SchedulerInfo,
    /// Its parameter values.
    pub params: Params,
    /// The bond options set that this mode ignores (other modes' parameters), one warning each.
    pub ignored: Vec<Warning>,
}

impl std::fmt::Debug for Resolved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.label())
    }
}

impl Resolved {
    /// `name` or `name[key=value,...]` for non-default parameters; parses back to the same.
    pub fn label(&self) -> String {
        let changed = self.params.non_default();
        if changed.is_empty() {
            self.info.name.to_string()
        } else {
            format!("{}[{}]", self.info.name, changed.join(","))
        }
    }

    /// Whether the mode places flows by a hash that reads their L4 ports (Linux's `layer3+4` and
    /// `encap3+4`, teamd's `tx_hash` with `l4`, `tcp`, `udp` or `sctp`, Open vSwitch's balance-tcp),
    /// so that one client's connections may take different links.
    pub fn hashes_ports(&self) -> bool {
        let declares = |name: &str| self.info.params.iter().any(|p| p.name == name);
        if declares("xmit_hash_policy") {
            crate::hash::HashPolicy::from_name(self.params.choice("xmit_hash_policy")).reads_ports()
        } else if declares("tx_hash") {
            crate::hash::teamd_reads_ports(self.params.list("tx_hash"))
        } else {
            self.info.name == "ovs:balance-tcp"
        }
    }

    /// Builds the scheduler.
    pub fn build(&self, ctx: &BuildContext) -> Result<Box<dyn Scheduler>> {
        (self.info.build)(&self.params, ctx)
    }
}

/// Resolves `mode` (`bond.mode`, with bracket parameters) and `options` (the
/// bond table's other keys, `bond.KEY` in errors).
///
/// Bracket parameters must belong to the mode. Options may also be another
/// mode's parameters, which this mode ignores (as Linux accepts most bond
/// options in every mode): each is checked all the same and named in
/// [`Resolved::ignored`]; keys no scheduler declares are errors.
pub fn resolve(mode: &str, options: &BTreeMap<String, serde_json::Value>) -> Result<Resolved> {
    resolve_among(mode, options, &[])
}

/// [`resolve`], where `fields` are the bond table's own fields (`miimon`, …): a key that is neither
/// one of them nor any mode's parameter is an error suggesting the nearest of both.
pub fn resolve_among(mode: &str, options: &BTreeMap<String, serde_json::Value>, fields: &[&str]) -> Result<Resolved> {
    let (name, bracket) = split_mode(mode)?;
    let info = lookup(name).ok_or_else(|| {
        let names: Vec<&str> = ALL.iter().map(|s| s.name).collect();
        let every: Vec<&str> =
            ALL.iter().flat_map(|s| std::iter::once(s.name).chain(s.aliases.iter().copied())).collect();
        let hint = closest(name, &every).map_or_else(String::new, |close| {
            let canonical = lookup(close).map_or(close, |s| s.name);
            format!("; did you mean `{canonical}`?")
        });
        Error::at("bond.mode", format!("unknown scheduler `{name}`; registered: {}{hint}", names.join(", ")))
    })?;
    let mut params = Params::defaults(info.params);
    let mut seen = Vec::new();
    if let Some(list) = bracket {
        for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (key, value) = item
                .split_once('=')
                .ok_or_else(|| Error::at("bond.mode", format!("parameter `{item}` must be written key=value")))?;
            if seen.iter().any(|k| k == key.trim()) {
                return Err(Error::at("bond.mode", format!("`{}` is given twice in `{mode}`", key.trim())));
            }
            params.set_text("bond.mode", key.trim(), value.trim(), info.name)?;
            seen.push(key.trim().to_string());
        }
    }
    let mut ignored = Vec::new();
    for (key, value) in options {
        let path = format!("bond.{key}");
        if seen.contains(key) {
            return Err(Error::at(path, format!("`{key}` is set both here and in bond.mode's brackets")));
        }
        if info.params.iter().any(|p| p.name == key) {
            params.set_json(&path, key, value, info.name)?;
            continue;
        }
        // A key another mode uses (xmit_hash_policy under balance-rr, say) is taken, as Linux takes most
        // bond options in any mode, so that one table serves a sweep over modes; it is checked as the
        // mode that uses it would (`layer9` is no policy under any mode) and said to be ignored. A key no
        // mode knows is an error.
        let users: Vec<&'static str> =
            ALL.iter().filter(|s| s.params.iter().any(|p| p.name == key)).map(|s| s.name).collect();
        let Some(first) = users.first().and_then(|name| lookup(name)) else {
            return Err(unknown_option(info, key, fields));
        };
        Params::defaults(first.params).set_json(&path, key, value, first.name)?;
        ignored.push(Warning {
            path,
            message: format!(
                "{} ignores it: it is a parameter of {} (`bondsim schedulers NAME`)",
                info.name,
                users.join(", ")
            ),
        });
    }
    Ok(Resolved { info, params, ignored })
}

/// The error of a bond table key that no mode declares: its mode's parameters, and the nearest of every
/// mode's parameters and the table's own `fields`.
fn unknown_option(info: &SchedulerInfo, key: &str, fields: &[&str]) -> Error {
    let own: Vec<&str> = info.params.iter().map(|p| p.name).collect();
    let mut every: Vec<&str> = fields.to_vec();
    every.extend(ALL.iter().flat_map(|s| s.params.iter().map(|p| p.name)));
    let own = if own.is_empty() { "none".to_string() } else { own.join(", ") };
    Error::at(
        format!("bond.{key}"),
        format!(
            "`{key}` is not a field of the bond nor a parameter of any mode (those of {}: {own}){}",
            info.name,
            did_you_mean(key, &every)
        ),
    )
}

/// Splits `name[k=v,...]` into the name and the bracket contents.
fn split_mode(mode: &str) -> Result<(&str, Option<&str>)> {
    let mode = mode.trim();
    match mode.find('[') {
        None if mode.contains(']') => Err(Error::at("bond.mode", format!("unbalanced `]` in `{mode}`"))),
        None => Ok((mode, None)),
        Some(open) => {
            let inner = mode[open + 1..].strip_suffix(']').ok_or_else(|| {
                Error::at("bond.mode", format!("`{mode}` must end with `]` (form: name[key=value,...])"))
            })?;
            Ok((mode[..open].trim(), Some(inner)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve_json(mode: &str, options: serde_json::Value) -> Result<Resolved> {
        let options: BTreeMap<String, serde_json::Value> = serde_json::from_value(options).unwrap();
        resolve(mode, &options)
    }

    #[test]
    fn a_key_another_mode_uses_is_ignored_with_a_warning_but_its_value_still_checked() {
        let r = resolve_json("balance-rr", serde_json::json!({"xmit_hash_policy": "layer3+4"})).unwrap();
        assert_eq!(r.ignored.len(), 1);
        assert_eq!(r.ignored[0].path, "bond.xmit_hash_policy");
        assert!(r.ignored[0].message.starts_with("balance-rr ignores it: it is a parameter of balance-xor, 802.3ad"));
        let e = resolve_json("balance-rr", serde_json::json!({"xmit_hash_policy": "layer9"})).unwrap_err();
        assert!(e.to_string().starts_with("bond.xmit_hash_policy: must be one of"), "{e}");
        let own = resolve_json("balance-xor", serde_json::json!({"xmit_hash_policy": "layer3+4"})).unwrap();
        assert!(own.ignored.is_empty(), "a mode's own parameter is not ignored");
    }

    #[test]
    fn every_mode_warns_of_every_other_modes_parameter_it_is_given() {
        // The rule holds across modes: for each mode, each parameter it does not declare (at another
        // mode's default, a valid value) is taken with one warning naming it; its own never.
        for info in ALL {
            for other in ALL {
                for spec in other.params {
                    let options = BTreeMap::from([(spec.name.to_string(), default_json(spec))]);
                    let r = resolve(info.name, &options).unwrap_or_else(|e| panic!("{} {}: {e}", info.name, spec.name));
                    let own = info.params.iter().any(|p| p.name == spec.name);
                    let paths: Vec<&str> = r.ignored.iter().map(|w| w.path.as_str()).collect();
                    let expected = if own { vec![] } else { vec![format!("bond.{}", spec.name)] };
                    assert_eq!(paths, expected, "{} given {}", info.name, spec.name);
                }
            }
        }
    }

    /// A parameter's default as the bond table writes it.
    fn default_json(spec: &ParamSpec) -> serde_json::Value {
        use crate::params::ParamKind;
        match spec.kind {
            ParamKind::Int { .. } => serde_json::json!(spec.default.parse::<i64>().unwrap()),
            ParamKind::Float { .. } => serde_json::json!(spec.default.parse::<f64>().unwrap()),
            ParamKind::Bool => serde_json::json!(spec.default.parse::<bool>().unwrap()),
            _ => serde_json::json!(spec.default),
        }
    }

    #[test]
    fn names_and_aliases_resolve() {
        assert_eq!(resolve_json("rr", serde_json::json!({})).unwrap().label(), "balance-rr");
        assert_eq!(resolve_json("lb", serde_json::json!({})).unwrap().label(), "lb");
    }

    #[test]
    fn bracket_and_table_parameters_round_trip() {
        let r = resolve_json("balance-rr[packets_per_slave=3]", serde_json::json!({})).unwrap();
        assert_eq!(r.label(), "balance-rr[packets_per_slave=3]");
        let again = resolve_json(&r.label(), serde_json::json!({})).unwrap();
        assert_eq!(again.params, r.params);
        let table = resolve_json("balance-rr", serde_json::json!({"packets_per_slave": 3})).unwrap();
        assert_eq!(table.params, r.params);
    }

    #[test]
    fn other_modes_table_keys_are_ignored_like_linux_bond_options() {
        let r = resolve_json("rr", serde_json::json!({"xmit_hash_policy": "layer3+4", "gap_us": 5})).unwrap();
        assert_eq!(r.label(), "balance-rr");
        let x = resolve_json("xor", serde_json::json!({"xmit_hash_policy": "layer3+4"})).unwrap();
        assert_eq!(x.label(), "balance-xor[xmit_hash_policy=layer3+4]");
    }

    #[test]
    fn every_registered_scheduler_has_parseable_defaults_and_unique_names() {
        let mut names = Vec::new();
        for info in ALL {
            let _ = Params::defaults(info.params);
            names.push(info.name);
            names.extend(info.aliases);
        }
        let mut dedup = names.clone();
        dedup.sort();
        dedup.dedup();
        assert_eq!(dedup.len(), names.len(), "duplicate scheduler names: {names:?}");
    }

    #[test]
    fn errors_name_the_field() {
        let e = resolve_json("nope", serde_json::json!({})).unwrap_err();
        assert!(e.to_string().starts_with("bond.mode: unknown scheduler `nope`; registered: balance-rr"), "{e}");
        let e = resolve_json("rr", serde_json::json!({"packets_per_slave": -1})).unwrap_err();
        assert!(e.to_string().starts_with("bond.packets_per_slave: must be an integer from 0 to 65535"), "{e}");
        let e = resolve_json("rr", serde_json::json!({"gap": 1})).unwrap_err();
        assert!(e.to_string().contains("`gap` is not a field of the bond nor a parameter of any mode"), "{e}");
        assert!(e.to_string().contains("(those of balance-rr: packets_per_slave)"), "{e}");
        let e = resolve_json("rr", serde_json::json!({"gapp_us": 1})).unwrap_err();
        assert!(e.to_string().ends_with("; did you mean `gap_us`?"), "{e}");
        let options = BTreeMap::from([("miimom".to_string(), serde_json::json!(100))]);
        let e = resolve_among("rr", &options, &["mode", "miimon"]).unwrap_err();
        assert!(e.to_string().ends_with("; did you mean `miimon`?"), "{e}");
        let e = resolve_json("balance-r", serde_json::json!({})).unwrap_err();
        assert!(e.to_string().ends_with("; did you mean `balance-rr`?"), "{e}");
        let e = resolve_json("activebackup", serde_json::json!({})).unwrap_err();
        assert!(e.to_string().ends_with("; did you mean `active-backup`?"), "{e}");
        let e = resolve_json("rr[xmit_hash_policy=layer2]", serde_json::json!({})).unwrap_err();
        assert!(e.to_string().contains("`xmit_hash_policy` is not a parameter of balance-rr"), "{e}");
        let e = resolve_json("rr[packets_per_slave=2", serde_json::json!({})).unwrap_err();
        assert!(e.to_string().contains("must end with `]`"), "{e}");
        let e = resolve_json("rr[packets_per_slave=2]", serde_json::json!({"packets_per_slave": 2})).unwrap_err();
        assert!(e.to_string().contains("both here and in bond.mode"), "{e}");
        let e = resolve_json("rr[packets_per_slave=1, packets_per_slave=2]", serde_json::json!({})).unwrap_err();
        assert!(e.to_string().contains("`packets_per_slave` is given twice"), "{e}");
    }

    #[test]
    fn a_hash_reads_the_ports_where_its_policy_says_so() {
        let ports = |mode: &str, options: serde_json::Value| resolve_json(mode, options).unwrap().hashes_ports();
        assert!(!ports("balance-xor", serde_json::json!({})), "layer2 by default");
        assert!(ports("balance-xor", serde_json::json!({"xmit_hash_policy": "layer3+4"})));
        assert!(ports("802.3ad", serde_json::json!({"xmit_hash_policy": "encap3+4"})));
        assert!(!ports("802.3ad", serde_json::json!({"xmit_hash_policy": "layer2+3"})));
        assert!(ports("teamd:loadbalance[tx_hash=eth+ipv4+l4]", serde_json::json!({})));
        assert!(!ports("teamd:loadbalance[tx_hash=eth+ipv4]", serde_json::json!({})));
        assert!(ports("ovs:balance-tcp", serde_json::json!({})));
        assert!(!ports("ovs:balance-slb", serde_json::json!({})));
        assert!(!ports("balance-rr", serde_json::json!({})), "no hash at all");
    }
}
