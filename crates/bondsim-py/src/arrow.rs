//! Tables to Python as Arrow, through the Arrow PyCapsule interface: a run's table is a [`Table`]
//! holding its record batch, which Python reads without a copy, as pyarrow (or any Arrow library)
//! imports a C stream (`__arrow_c_stream__`: an `FFI_ArrowArrayStream` in a capsule; the buffers
//! are handed over, not copied, and freed when the reader lets go of them). Nothing is imported
//! until a table is read: a run whose tables are only written (`to_pydict`) loads no pyarrow.

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{Array, BooleanArray, Float64Array, Int64Array, RecordBatch, RecordBatchIterator, StringArray};
use arrow_schema::SchemaRef;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict, PyList};

/// One table of a run (or, with no rows, a schema), as the core built it.
#[pyclass(module = "bondsim._core", frozen)]
pub struct Table {
    schema: SchemaRef,
    batch: Option<RecordBatch>,
}

#[pymethods]
impl Table {
    /// The Arrow PyCapsule interface: a capsule named `arrow_array_stream` holding a stream of
    /// the table's one batch (each call a new stream over the same buffers).
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema; // the tables have the one schema the core gives them
        let batches: Vec<_> = self.batch.iter().cloned().map(Ok).collect();
        let reader = RecordBatchIterator::new(batches, self.schema.clone());
        PyCapsule::new_with_value(py, FFI_ArrowArrayStream::new(Box::new(reader)), c"arrow_array_stream")
    }

    /// Pickled as the pyarrow table it reads as (`pyarrow.table` gives a table back as it is).
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyAny>,))> {
        let pyarrow = slf.py().import("pyarrow")?;
        let table = pyarrow.getattr("table")?.call1((slf,))?;
        Ok((pyarrow.getattr("table")?, (table,)))
    }

    /// The same table: it cannot change.
    fn __copy__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    /// The same table: it cannot change.
    fn __deepcopy__<'py>(slf: Bound<'py, Self>, _memo: Bound<'py, PyAny>) -> Bound<'py, Self> {
        slf
    }

    /// Rows.
    fn __len__(&self) -> usize {
        self.batch.as_ref().map_or(0, RecordBatch::num_rows)
    }

    /// The columns (all, or those named) as `{name: [values]}` of Python ints, floats, bools, strs
    /// and None: what a CSV is written from without loading pyarrow.
    #[pyo3(signature = (columns=None))]
    fn to_pydict<'py>(&self, py: Python<'py>, columns: Option<Vec<String>>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        for (i, field) in self.schema.fields().iter().enumerate() {
            if columns.as_ref().is_some_and(|c| !c.contains(field.name())) {
                continue;
            }
            let values = PyList::empty(py);
            if let Some(batch) = &self.batch {
                let a = batch.column(i);
                let any = a.as_any();
                for row in 0..a.len() {
                    let v = if a.is_null(row) {
                        py.None().into_bound(py)
                    } else if let Some(x) = any.downcast_ref::<Int64Array>() {
                        x.value(row).into_pyobject(py)?.into_any()
                    } else if let Some(x) = any.downcast_ref::<Float64Array>() {
                        x.value(row).into_pyobject(py)?.into_any()
                    } else if let Some(x) = any.downcast_ref::<BooleanArray>() {
                        x.value(row).into_pyobject(py)?.to_owned().into_any()
                    } else if let Some(x) = any.downcast_ref::<StringArray>() {
                        x.value(row).into_pyobject(py)?.into_any()
                    } else {
                        return Err(PyTypeError::new_err(format!("no Python values for {}", a.data_type())));
                    };
                    values.append(v)?;
                }
            }
            out.set_item(field.name(), values)?;
        }
        Ok(out)
    }
}

/// Every table's schema as the core defines it (`bondsim_core::columnar::schemas`): `{name:
/// Table}` of no rows (`pyarrow.table(t).schema`: the schema), `summary` (the summary's scalar
/// figures) first, then `requests`, `links` and the tables only some runs have, in a result's order.
#[pyfunction]
pub fn schemas(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let out = PyDict::new(py);
    for (name, schema) in bondsim_core::columnar::schemas() {
        out.set_item(name, Table { schema, batch: None })?;
    }
    Ok(out)
}

/// A run's tables, `{name: Table}`, in the result's order.
pub fn tables<'py>(py: Python<'py>, batches: Vec<(&'static str, RecordBatch)>) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for (name, batch) in batches {
        out.set_item(name, Table { schema: batch.schema(), batch: Some(batch) })?;
    }
    Ok(out)
}
