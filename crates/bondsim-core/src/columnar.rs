//! THE schema of the tables a run produces, and those tables as Arrow record batches.
//!
//! Every table is a struct of columns (`Vec<T>`, one per field); [`columnar!`] lists a struct's
//! columns once and gives it [`Columnar`]: its Arrow [`Schema`] (the column types follow from the
//! fields' Rust types through [`Column`]) and its rows as a [`RecordBatch`]. [`schemas`] is every
//! table's schema by name, with the summary's scalar figures ([`summary_schema`]): what the Python
//! side reads tables with and what the results database creates its tables from, without a run.
//!
//! Types: every integer is `Int64` (the database's `BIGINT`, pandas' `int64`, as the tables were
//! before they were Arrow), reals `Float64`, flags `Boolean`, names `Utf8`; an `Option` column is
//! nullable, the others are not.

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use serde::ser::{SerializeMap, SerializeSeq, Serializer};

/// A column of a table: its Arrow type and its values as an Arrow array.
pub trait Column {
    /// Its Arrow type.
    fn data_type() -> DataType;
    /// Whether it may hold nulls.
    fn nullable() -> bool;
    /// Its values.
    fn array(&self) -> ArrayRef;
}

/// An integer a column holds (as `Int64`).
fn int<T: TryInto<i64> + Copy>(v: T) -> i64 {
    v.try_into().unwrap_or(i64::MAX)
}

macro_rules! column {
    ($t:ty, $dt:expr, $array:ty, |$v:ident| $to:expr) => {
        impl Column for Vec<$t> {
            fn data_type() -> DataType {
                $dt
            }
            fn nullable() -> bool {
                false
            }
            fn array(&self) -> ArrayRef {
                Arc::new(<$array>::from_iter(self.iter().map(|$v| Some($to))))
            }
        }
        impl Column for Vec<Option<$t>> {
            fn data_type() -> DataType {
                $dt
            }
            fn nullable() -> bool {
                true
            }
            fn array(&self) -> ArrayRef {
                Arc::new(<$array>::from_iter(self.iter().map(|o| o.as_ref().map(|$v| $to))))
            }
        }
    };
}

column!(u32, DataType::Int64, Int64Array, |v| i64::from(*v));
column!(u64, DataType::Int64, Int64Array, |v| int(*v));
column!(usize, DataType::Int64, Int64Array, |v| int(*v));
column!(f64, DataType::Float64, Float64Array, |v| *v);
column!(bool, DataType::Boolean, BooleanArray, |v| *v);
column!(String, DataType::Utf8, StringArray, |v| v.as_str());
column!(&'static str, DataType::Utf8, StringArray, |v| *v);

/// A table: its schema and its rows as one record batch.
pub trait Columnar {
    /// The table's columns, in order.
    fn schema() -> Schema;
    /// Its rows.
    fn batch(&self) -> RecordBatch;
}

/// The field of column `name`, typed by the column that `_of` reads from a table.
pub fn field<T, C: Column>(name: &str, _of: fn(&T) -> &C) -> Field {
    Field::new(name, C::data_type(), C::nullable())
}

/// Gives a struct of columns [`Columnar`]: `columnar!(Table: first, second, ...)`, every column
/// named once, in order (a test checks the names against the struct's serialised fields).
#[macro_export]
macro_rules! columnar {
    ($table:ty: $($column:ident),+ $(,)?) => {
        impl $crate::columnar::Columnar for $table {
            fn schema() -> ::arrow_schema::Schema {
                ::arrow_schema::Schema::new(vec![
                    $($crate::columnar::field(stringify!($column), |t: &$table| &t.$column)),+
                ])
            }
            fn batch(&self) -> ::arrow_array::RecordBatch {
                use $crate::columnar::Column;
                ::arrow_array::RecordBatch::try_new(
                    ::std::sync::Arc::new(<$table as $crate::columnar::Columnar>::schema()),
                    vec![$(self.$column.array()),+],
                )
                .expect("a table's columns are as long as each other")
            }
        }
    };
}

/// A record batch as JSON columns (`{column: [values]}`), as the tables were serialised before
/// they were Arrow (integers as integers, reals as serde writes an `f64`, nulls as `null`).
pub fn serialize_batch<S: Serializer>(batch: &RecordBatch, s: S) -> Result<S::Ok, S::Error> {
    let schema = batch.schema();
    let mut m = s.serialize_map(Some(batch.num_columns()))?;
    for (f, column) in schema.fields().iter().zip(batch.columns()) {
        m.serialize_entry(f.name(), &ColumnJson(column.as_ref()))?;
    }
    m.end()
}

struct ColumnJson<'a>(&'a dyn Array);

impl serde::Serialize for ColumnJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let a = self.0;
        let mut seq = s.serialize_seq(Some(a.len()))?;
        let any = a.as_any();
        for i in 0..a.len() {
            if a.is_null(i) {
                seq.serialize_element(&None::<()>)?;
            } else if let Some(x) = any.downcast_ref::<Int64Array>() {
                seq.serialize_element(&x.value(i))?;
            } else if let Some(x) = any.downcast_ref::<Float64Array>() {
                seq.serialize_element(&x.value(i))?;
            } else if let Some(x) = any.downcast_ref::<BooleanArray>() {
                seq.serialize_element(&x.value(i))?;
            } else if let Some(x) = any.downcast_ref::<StringArray>() {
                seq.serialize_element(x.value(i))?;
            } else {
                return Err(serde::ser::Error::custom(format!("no JSON for a column of {}", a.data_type())));
            }
        }
        seq.end()
    }
}

/// The summary's scalar figures (every field of [`crate::result::Summary`] that is not a list, and
/// every figure a component declares), each with its type: the columns of the database's runs.
pub fn summary_schema() -> Schema {
    use crate::report::Kind;
    let full = crate::result::Summary::full();
    let json = serde_json::to_string(&full).expect("summaries always serialise");
    let Ordered(entries) = serde_json::from_str(&json).expect("a summary is an object");
    let declared: Vec<_> = crate::result::declared_figures().into_iter().flatten().collect();
    let fields = entries.iter().filter_map(|(name, value)| {
        let kind = declared.iter().find(|d| d.name == name).map(|d| d.kind);
        let dt = match (kind, value) {
            (Some(Kind::Count), _) => DataType::Int64,
            (Some(Kind::Real), _) => DataType::Float64,
            (Some(Kind::Flag), _) => DataType::Boolean,
            (None, serde_json::Value::Bool(_)) => DataType::Boolean,
            (None, serde_json::Value::String(_)) => DataType::Utf8,
            (None, serde_json::Value::Number(n)) if n.is_f64() => DataType::Float64,
            (None, serde_json::Value::Number(_)) => DataType::Int64,
            _ => return None, // lists (per-link counts, the reorder density)
        };
        Some(Field::new(name, dt, true))
    });
    Schema::new(fields.collect::<Vec<_>>())
}

/// A JSON object's entries in their order (serde_json's `Map` sorts them).
struct Ordered(Vec<(String, serde_json::Value)>);

impl<'de> serde::Deserialize<'de> for Ordered {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Ordered, D::Error> {
        struct Entries;
        impl<'de> serde::de::Visitor<'de> for Entries {
            type Value = Ordered;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    entries.push(entry);
                }
                Ok(Ordered(entries))
            }
        }
        d.deserialize_map(Entries)
    }
}

/// The summary's and every table's schema, by name: `summary` (its scalar figures), `requests`,
/// `links`, then the tables only some runs have, in the order a result lists them.
pub fn schemas() -> Vec<(&'static str, SchemaRef)> {
    use crate::result::{LinkTable, RequestTable};
    use crate::trace::{LinkEvents, LinkTrace, PacketTrace};
    use crate::transport::{mptcp::sender::SubflowTable, tcp::TcpTrace};
    vec![
        ("summary", Arc::new(summary_schema())),
        ("requests", Arc::new(RequestTable::schema())),
        ("links", Arc::new(LinkTable::schema())),
        ("tcp_trace", Arc::new(TcpTrace::schema())),
        ("mptcp_subflows", Arc::new(SubflowTable::schema())),
        ("link_trace", Arc::new(LinkTrace::schema())),
        ("link_events", Arc::new(LinkEvents::schema())),
        ("packet_trace", Arc::new(PacketTrace::schema())),
        ("failovers", Arc::new(crate::failover::FailoverTable::schema())),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The schema's names are the struct's serialised fields, in order.
    fn same_names<T: Columnar + Default + serde::Serialize>() {
        let Ordered(entries) = serde_json::from_str(&serde_json::to_string(&T::default()).unwrap()).unwrap();
        let fields: Vec<&String> = entries.iter().map(|(name, _)| name).collect();
        let schema = T::schema();
        let names: Vec<&String> = schema.fields().iter().map(|f| f.name()).collect();
        assert_eq!(names, fields, "{}", std::any::type_name::<T>());
    }

    #[test]
    fn every_table_lists_every_column_of_its_struct() {
        use crate::result::{LinkTable, RequestTable};
        use crate::trace::{LinkEvents, LinkTrace, PacketTrace};
        use crate::transport::{mptcp::sender::SubflowTable, tcp::TcpTrace};
        same_names::<RequestTable>();
        same_names::<LinkTable>();
        same_names::<TcpTrace>();
        same_names::<SubflowTable>();
        same_names::<LinkTrace>();
        same_names::<LinkEvents>();
        same_names::<PacketTrace>();
        same_names::<crate::failover::FailoverTable>();
    }

    #[test]
    fn a_batch_serialises_as_the_columns_did() {
        let t = crate::trace::PacketTrace {
            packet: vec![0, 1],
            flow: vec![3, 3],
            seq: vec![0, 1],
            retransmit: vec![false, true],
            handshake: vec![false, false],
            link: vec![Some(1), None],
            sent_s: vec![0.5, 1.0],
            left_s: vec![None, Some(2.25)],
            arrived_s: vec![Some(3.0), None],
            out_of_order: vec![true, false],
        };
        let mut out = Vec::new();
        serialize_batch(&t.batch(), &mut serde_json::Serializer::new(&mut out)).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), serde_json::to_string(&t).unwrap());
    }

    #[test]
    fn the_summary_schema_types_every_scalar_figure() {
        let schema = summary_schema();
        let ty = |n: &str| schema.field_with_name(n).unwrap().data_type().clone();
        assert_eq!(ty("scenario"), DataType::Utf8);
        assert_eq!(ty("delivered"), DataType::Int64);
        assert_eq!(ty("ooo_fraction"), DataType::Float64);
        assert_eq!(ty("tcp_retransmits"), DataType::Int64);
        assert_eq!(ty("tcp_reordering_mean"), DataType::Float64);
        assert_eq!(ty("failovers_truncated"), DataType::Boolean);
        assert!(schema.field_with_name("links").is_err() && schema.field_with_name("reorder_density").is_err());
    }
}
