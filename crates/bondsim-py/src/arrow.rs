//! Tables to Python as pyarrow tables, through the Arrow PyCapsule interface: each record batch is
//! exported as a C stream (`FFI_ArrowArrayStream`) in a capsule that pyarrow imports; the arrays'
//! buffers are handed over, not copied, and freed when pyarrow lets go of them.

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{RecordBatch, RecordBatchIterator};
use arrow_schema::SchemaRef;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict};

/// One table's rows waiting to be read, once, through `__arrow_c_stream__` (what `pyarrow.table`
/// reads).
#[pyclass(module = "bondsim._core")]
struct ArrowStream {
    schema: SchemaRef,
    batch: Option<RecordBatch>,
}

#[pymethods]
impl ArrowStream {
    /// The Arrow PyCapsule interface: a capsule named `arrow_array_stream` holding the stream.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &mut self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema; // the tables have the one schema the core gives them
        let batches = self.batch.take().map(Ok).into_iter().collect::<Vec<_>>();
        let reader = RecordBatchIterator::new(batches, self.schema.clone());
        let stream = FFI_ArrowArrayStream::new(Box::new(reader));
        PyCapsule::new_with_value(py, stream, c"arrow_array_stream")
    }
}

/// `batch` as a `pyarrow.Table` (no copy of its buffers).
pub fn table<'py>(py: Python<'py>, batch: RecordBatch) -> PyResult<Bound<'py, PyAny>> {
    let stream = ArrowStream { schema: batch.schema(), batch: Some(batch) };
    py.import("pyarrow")?.getattr("table")?.call1((Bound::new(py, stream)?,))
}

/// An empty `pyarrow.Table` of `schema` (its `.schema` is the schema as pyarrow has it).
fn empty<'py>(py: Python<'py>, schema: SchemaRef) -> PyResult<Bound<'py, PyAny>> {
    let stream = ArrowStream { schema, batch: None };
    py.import("pyarrow")?.getattr("table")?.call1((Bound::new(py, stream)?,))
}

/// Every table's schema as the core defines it (`bondsim_core::columnar::schemas`): `{name:
/// pyarrow.Schema}`, `summary` (the summary's scalar figures) first, then `requests`, `links` and
/// the tables only some runs have, in the order a result lists them.
#[pyfunction]
pub fn result_schema(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let out = PyDict::new(py);
    for (name, schema) in bondsim_core::columnar::schemas() {
        out.set_item(name, empty(py, schema)?.getattr("schema")?)?;
    }
    Ok(out)
}

/// A run's tables, `{name: pyarrow.Table}`, in the result's order.
pub fn tables<'py>(py: Python<'py>, batches: Vec<(&'static str, RecordBatch)>) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for (name, batch) in batches {
        out.set_item(name, table(py, batch)?)?;
    }
    Ok(out)
}
