//! The bond's one error: an option that does not fit, named by its path.

use std::fmt;

/// A bond option is unknown, malformed or impossible for this bond: `path`
/// names it as the configuration does (`bond.mode`, `bond.primary`, …).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// Dotted path of the option.
    pub path: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl Error {
    /// An error at `path`.
    pub fn at(path: impl Into<String>, message: impl Into<String>) -> Error {
        Error { path: path.into(), message: message.into() }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

impl std::error::Error for Error {}

/// Result alias of the bond.
pub type Result<T> = std::result::Result<T, Error>;

/// The one of `names` that `given` most likely misspells, for an error's "did you mean": the nearest
/// by edits (a letter added, dropped, changed or two swapped; case ignored) within a third of its
/// length (at least one edit), else the only name that starts with it. None when nothing is that close.
pub fn closest<'a>(given: &str, names: &[&'a str]) -> Option<&'a str> {
    let given = given.to_lowercase();
    let size = given.chars().count();
    if size < 2 {
        return None; // a letter is too little to guess from
    }
    let within = (size / 3).max(1);
    let nearest = names
        .iter()
        .map(|name| (edits(&given, &name.to_lowercase()), *name))
        .filter(|(d, _)| *d <= within)
        .min_by_key(|(d, _)| *d)
        .map(|(_, name)| name);
    let prefixed: Vec<&str> = names.iter().copied().filter(|n| n.to_lowercase().starts_with(&given)).collect();
    nearest.or(if prefixed.len() == 1 { Some(prefixed[0]) } else { None })
}

/// `"; did you mean `NAME`?"` for the [`closest`] of `names` to `given`, or nothing.
pub fn did_you_mean(given: &str, names: &[&str]) -> String {
    closest(given, names).map_or_else(String::new, |name| format!("; did you mean `{name}`?"))
}

/// The message of a name that is none of `names` (a mode, a kind, a choice): ``must be one of `a`,
/// `b`, got "given"; did you mean `a`?``, the one wording of every such error.
pub fn one_of(names: &[&str], given: &str) -> String {
    format!("must be one of {}, got {given:?}{}", quoted(names), did_you_mean(given, names))
}

/// The message of a key that is none of `names` (a field of a table): ``unknown field `given` (did you
/// mean `a`?), expected one of `a`, `b` ``.
pub fn unknown_field(given: &str, names: &[&str]) -> String {
    let hint = closest(given, names).map_or_else(String::new, |name| format!(" (did you mean `{name}`?)"));
    if names.is_empty() {
        return format!("unknown field `{given}`, there are none");
    }
    format!("unknown field `{given}`{hint}, expected one of {}", quoted(names))
}

/// `` `a`, `b`, `c` ``.
pub fn quoted(names: &[&str]) -> String {
    names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
}

/// Something a scenario sets that its run ignores (an option of another bonding mode): not an error,
/// said to the user by the field's path as a warning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// Dotted path of the field.
    pub path: String,
    /// What is ignored, and why.
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// The edits between `a` and `b` (optimal string alignment: insert, delete, substitute, swap two
/// neighbours).
fn edits(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    d[0] = (0..=b.len()).collect();
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_misspelt_name_finds_the_one_meant_and_a_far_one_none() {
        let modes = ["balance-rr", "balance-xor", "active-backup", "802.3ad"];
        assert_eq!(closest("balance-r", &modes), Some("balance-rr"));
        assert_eq!(closest("Balance-XOR", &modes), Some("balance-xor"));
        assert_eq!(closest("activebackup", &modes), Some("active-backup"));
        assert_eq!(closest("fastest", &modes), None);
        assert_eq!(closest("layer34", &["layer2", "layer2+3", "layer3+4"]), Some("layer3+4"));
        assert_eq!(closest("fixd", &["fixed", "uniform"]), Some("fixed"));
        assert_eq!(closest("ufixed", &["fixed", "uniform"]), Some("fixed"));
        assert_eq!(closest("up", &["download", "upload"]), Some("upload"), "the one name it starts");
        assert_eq!(closest("x", &["xor", "xmit"]), None, "a letter is too little to guess from");
        assert_eq!(closest("", &["a"]), None);
        assert_eq!(did_you_mean("cubix", &["cubic", "reno", "bbr"]), "; did you mean `cubic`?");
        assert_eq!(did_you_mean("vegas", &["cubic", "reno", "bbr"]), "");
    }
}
