//! What a component reports at the end of a run: named summary figures (declared, in a fixed
//! order, each with its kind) and named tables. The components (a transport's ends, the failover
//! measures) fill one [`Report`]; `result.rs` merges it into the result without knowing who
//! reported what. Nothing here runs per packet: a run reports once, when it ends.

use std::fmt;

use arrow_array::RecordBatch;
use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::columnar::Columnar;

use crate::time::SimTime;

/// What kind of value a declared figure holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A count (a JSON integer).
    Count,
    /// A real number.
    Real,
    /// Yes or no.
    Flag,
}

/// A summary figure a component declares: its name and kind. A figure declared and not reported
/// is `null` in the summary (the run had nothing to measure it on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Declared {
    /// The summary field's name.
    pub name: &'static str,
    /// Its kind.
    pub kind: Kind,
}

/// Declares a count.
pub const fn count(name: &'static str) -> Declared {
    Declared { name, kind: Kind::Count }
}

/// Declares a real number.
pub const fn real(name: &'static str) -> Declared {
    Declared { name, kind: Kind::Real }
}

/// Declares a flag.
pub const fn flag(name: &'static str) -> Declared {
    Declared { name, kind: Kind::Flag }
}

/// One figure's value.
#[derive(Debug, Clone, PartialEq)]
pub enum Figure {
    /// Not measured in this run (`null`).
    None,
    /// A count.
    Count(u64),
    /// A signed count (the emulator's counter deltas).
    Signed(i64),
    /// A real number.
    Real(f64),
    /// Yes or no.
    Flag(bool),
    /// A text.
    Text(String),
    /// A list.
    List(Vec<Figure>),
    /// Named values, in order.
    Map(Vec<(String, Figure)>),
}

impl Figure {
    /// The count, if it is one.
    pub fn count(&self) -> Option<u64> {
        match *self {
            Figure::Count(n) => Some(n),
            _ => None,
        }
    }

    /// The real number, if it is one.
    pub fn real(&self) -> Option<f64> {
        match *self {
            Figure::Real(x) => Some(x),
            _ => None,
        }
    }

    /// The flag, if it is one.
    pub fn flag(&self) -> Option<bool> {
        match *self {
            Figure::Flag(b) => Some(b),
            _ => None,
        }
    }
}

impl<T: Into<Figure>> From<Option<T>> for Figure {
    fn from(v: Option<T>) -> Figure {
        v.map_or(Figure::None, Into::into)
    }
}

macro_rules! figure_from {
    ($($t:ty => $variant:ident),*) => {
        $(impl From<$t> for Figure {
            fn from(v: $t) -> Figure {
                Figure::$variant(v.into())
            }
        })*
    };
}
figure_from!(u64 => Count, u32 => Count, i64 => Signed, f64 => Real, bool => Flag, String => Text);

impl From<usize> for Figure {
    fn from(v: usize) -> Figure {
        Figure::Count(v as u64)
    }
}

impl Serialize for Figure {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Figure::None => s.serialize_none(),
            Figure::Count(n) => s.serialize_u64(*n),
            Figure::Signed(n) => s.serialize_i64(*n),
            Figure::Real(x) => s.serialize_f64(*x),
            Figure::Flag(b) => s.serialize_bool(*b),
            Figure::Text(t) => s.serialize_str(t),
            Figure::List(v) => v.serialize(s),
            Figure::Map(v) => {
                let mut m = s.serialize_map(Some(v.len()))?;
                for (k, x) in v {
                    m.serialize_entry(k, x)?;
                }
                m.end()
            }
        }
    }
}

/// Named figures in order; serialised as fields of the summary they are flattened into.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Figures(pub Vec<(&'static str, Figure)>);

impl Figures {
    /// The figure called `name`, if there is one.
    pub fn get(&self, name: &str) -> Option<&Figure> {
        self.0.iter().find(|(n, _)| *n == name).map(|(_, f)| f)
    }

    /// Adds `name` after the others.
    pub fn push(&mut self, name: &'static str, figure: impl Into<Figure>) {
        self.0.push((name, figure.into()));
    }
}

impl Serialize for Figures {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, x) in &self.0 {
            m.serialize_entry(k, x)?;
        }
        m.end()
    }
}

/// A table a component reports, as an Arrow record batch ([`crate::columnar`]), built once, when
/// reported; serialised as JSON columns (`{column: [values]}`).
#[derive(Clone)]
pub struct Table(RecordBatch);

impl Table {
    /// The table `t`.
    pub fn of<T: Columnar>(t: &T) -> Table {
        Table(t.batch())
    }

    /// Its rows.
    pub fn batch(&self) -> &RecordBatch {
        &self.0
    }
}

impl Serialize for Table {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        crate::columnar::serialize_batch(&self.0, s)
    }
}

impl fmt::Debug for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Table({} rows)", self.0.num_rows())
    }
}

/// Named tables in order; serialised as fields of the result they are flattened into.
#[derive(Debug, Clone, Default)]
pub struct Tables(pub Vec<(&'static str, Table)>);

impl Tables {
    /// The table called `name`, if one was reported.
    pub fn get(&self, name: &str) -> Option<&Table> {
        self.0.iter().find(|(n, _)| *n == name).map(|(_, t)| t)
    }
}

impl Serialize for Tables {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, t) in &self.0 {
            m.serialize_entry(k, t)?;
        }
        m.end()
    }
}

/// How a declared figure gathers what the components report (both ends of a connection may).
#[derive(Debug, Clone, Copy)]
enum Slot {
    Unset,
    /// Summed counts; the largest of several.
    Count(u64),
    /// Set once: the first component to report it wins.
    Fixed(Figure0),
    /// A mean: Σ sums / Σ counts.
    Mean(u64, u64),
    /// Per second over the run, then divided by a scale.
    Rate(u64, f64),
}

/// A scalar figure value that is `Copy` (what [`Slot::Fixed`] holds).
#[derive(Debug, Clone, Copy)]
enum Figure0 {
    Count(u64),
    Real(f64),
    Flag(bool),
}

/// What the components of a run report, gathered: declared figures, tables, instants.
#[derive(Debug)]
pub struct Report {
    duration_s: f64,
    datagrams_lost: [u64; 4],
    figures: Vec<(Declared, Slot)>,
    tables: Tables,
    instants: Vec<(&'static str, Vec<SimTime>)>,
    counts_datagrams: bool,
}

/// A finished report: what `result.rs` merges into the result.
#[derive(Debug, Default)]
pub struct Reported {
    /// The declared figures, in order (`null`: not reported).
    pub figures: Figures,
    /// The tables reported.
    pub tables: Tables,
    /// The application's packets are datagrams the bond carried in fragments
    /// ([`Report::application_counts_datagrams`]).
    pub counts_datagrams: bool,
}

impl Report {
    /// A report of the `declared` figures (in this order), for a run whose rates are taken over
    /// `duration_s`; `datagrams_lost`: the delivery point's lost datagrams, by
    /// [`crate::packet::FragLoss`] cause.
    pub fn new(declared: &[&[Declared]], duration_s: f64, datagrams_lost: [u64; 4]) -> Report {
        let figures: Vec<(Declared, Slot)> =
            declared.iter().flat_map(|d| d.iter()).map(|&d| (d, Slot::Unset)).collect();
        debug_assert!(
            figures.iter().enumerate().all(|(i, (d, _))| figures[..i].iter().all(|(e, _)| e.name != d.name)),
            "a figure is declared twice"
        );
        Report {
            duration_s,
            datagrams_lost,
            figures,
            tables: Tables::default(),
            instants: Vec::new(),
            counts_datagrams: false,
        }
    }

    /// The time rates are taken over, seconds.
    pub fn duration_s(&self) -> f64 {
        self.duration_s
    }

    /// Datagrams the application lost, of one [`crate::packet::FragLoss`] cause (the delivery
    /// point counts each datagram once, under its first cause).
    pub fn datagrams_lost(&self, cause: crate::packet::FragLoss) -> u64 {
        self.datagrams_lost[cause as usize]
    }

    /// Says that the bond carried the application's datagrams in fragments: the application's
    /// figures count datagrams, the bond's and the links' frames.
    pub fn application_counts_datagrams(&mut self) {
        self.counts_datagrams = true;
    }

    fn slot(&mut self, name: &str, kind: Kind) -> &mut Slot {
        let (d, slot) = self
            .figures
            .iter_mut()
            .find(|(d, _)| d.name == name)
            .unwrap_or_else(|| panic!("figure {name} is not declared"));
        assert_eq!(d.kind, kind, "figure {name} is declared as another kind");
        slot
    }

    /// Adds `n` to the count `name` (each end adds its own).
    pub fn add(&mut self, name: &str, n: u64) {
        self.fold_count(name, n, |m, n| m + n);
    }

    /// Makes the count `name` at least `n` (the largest any end saw).
    pub fn max(&mut self, name: &str, n: u64) {
        self.fold_count(name, n, u64::max);
    }

    /// Makes the count `name` at most `n` (the least any end saw).
    pub fn min(&mut self, name: &str, n: u64) {
        self.fold_count(name, n, u64::min);
    }

    /// The count `name` folded with `n` by `fold`, or `n` if none was reported yet.
    fn fold_count(&mut self, name: &str, n: u64, fold: fn(u64, u64) -> u64) {
        let slot = self.slot(name, Kind::Count);
        *slot = Slot::Count(match *slot {
            Slot::Count(m) => fold(m, n),
            _ => n,
        });
    }

    /// Sets `name` unless a component reported it first (the server's end reports before the
    /// client's).
    pub fn first(&mut self, name: &str, value: impl Into<Figure>) {
        let value = match value.into() {
            Figure::Count(n) => Figure0::Count(n),
            Figure::Real(x) => Figure0::Real(x),
            Figure::Flag(b) => Figure0::Flag(b),
            Figure::None => return,
            other => panic!("figure {name}: {other:?} is not a scalar"),
        };
        let kind = match value {
            Figure0::Count(_) => Kind::Count,
            Figure0::Real(_) => Kind::Real,
            Figure0::Flag(_) => Kind::Flag,
        };
        let slot = self.slot(name, kind);
        if matches!(slot, Slot::Unset) {
            *slot = Slot::Fixed(value);
        }
    }

    /// Adds `sum` over `n` things to the mean `name` (`Σ sum / Σ n`, 0 over none).
    pub fn mean(&mut self, name: &str, sum: u64, n: u64) {
        let slot = self.slot(name, Kind::Real);
        *slot = match *slot {
            Slot::Mean(s, m) => Slot::Mean(s + sum, m + n),
            _ => Slot::Mean(sum, n),
        };
    }

    /// Adds `amount` to the rate `name`: the total per second of the run, divided by `scale`.
    pub fn rate(&mut self, name: &str, amount: u64, scale: f64) {
        let slot = self.slot(name, Kind::Real);
        *slot = match *slot {
            Slot::Rate(a, _) => Slot::Rate(a + amount, scale),
            _ => Slot::Rate(amount, scale),
        };
    }

    /// Reports the table `name` unless a component reported one first.
    pub fn table<T: Columnar>(&mut self, name: &'static str, table: &T) {
        if self.tables.get(name).is_none() {
            self.tables.0.push((name, Table::of(table)));
        }
    }

    /// Adds instants to the list `name` (when something happened, for other measures to count).
    pub fn instants(&mut self, name: &'static str, at: &[SimTime]) {
        match self.instants.iter_mut().find(|(n, _)| *n == name) {
            Some((_, list)) => list.extend_from_slice(at),
            None => self.instants.push((name, at.to_vec())),
        }
    }

    /// The instants reported as `name` (none if no component reported any).
    pub fn instants_of(&self, name: &str) -> Option<&[SimTime]> {
        self.instants.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_slice())
    }

    /// The figures, in their declared order, and the tables.
    pub fn finish(self) -> Reported {
        let per_s = |x: f64| if self.duration_s > 0.0 { x / self.duration_s } else { 0.0 };
        let figures = self
            .figures
            .into_iter()
            .map(|(d, slot)| {
                let value = match slot {
                    Slot::Unset => Figure::None,
                    Slot::Count(n) => Figure::Count(n),
                    Slot::Fixed(Figure0::Count(n)) => Figure::Count(n),
                    Slot::Fixed(Figure0::Real(x)) => Figure::Real(x),
                    Slot::Fixed(Figure0::Flag(b)) => Figure::Flag(b),
                    Slot::Mean(sum, n) => Figure::Real(sum as f64 / n.max(1) as f64),
                    Slot::Rate(amount, scale) => Figure::Real(per_s(amount as f64) / scale),
                };
                (d.name, value)
            })
            .collect();
        Reported { figures: Figures(figures), tables: self.tables, counts_datagrams: self.counts_datagrams }
    }
}

/// The nearest-rank `q` quantile of the sorted `x`.
pub fn nearest_rank<T>(x: &[T], q: f64) -> Option<&T> {
    (!x.is_empty()).then(|| &x[((q * x.len() as f64).ceil() as usize).clamp(1, x.len()) - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    const DECLARED: &[Declared] = &[count("a"), real("m"), flag("f"), real("r"), count("x")];

    #[test]
    fn figures_keep_their_declared_order_and_merge_as_declared() {
        let mut r = Report::new(&[DECLARED], 2.0, [0; 4]);
        r.first("f", true);
        r.rate("r", 10, 1.0);
        r.add("a", 2);
        r.mean("m", 3, 2);
        r.add("a", 3);
        r.mean("m", 0, 2);
        r.first("f", false);
        r.rate("r", 6, 4.0);
        let json = serde_json::to_string(&r.finish().figures).unwrap();
        assert_eq!(json, r#"{"a":5,"m":0.75,"f":true,"r":2.0,"x":null}"#);
    }

    #[test]
    #[should_panic(expected = "not declared")]
    fn an_undeclared_figure_is_refused() {
        Report::new(&[DECLARED], 1.0, [0; 4]).add("nope", 1);
    }

    #[test]
    fn the_first_table_of_a_name_is_kept_verbatim() {
        let mut r = Report::new(&[], 1.0, [0; 4]);
        let events =
            |t_s: f64| crate::trace::LinkEvents { t_s: vec![t_s], link: vec![1], carrier: vec![true], up: vec![false] };
        r.table("t", &events(1.5));
        r.table("t", &events(3.0));
        assert_eq!(
            serde_json::to_string(&r.finish().tables).unwrap(),
            r#"{"t":{"t_s":[1.5],"link":[1],"carrier":[true],"up":[false]}}"#
        );
    }
}
