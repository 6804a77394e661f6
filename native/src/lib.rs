//! The native core of kafka-rescalable: Avro payloads held in an Arrow binary array are
//! decoded in bulk into one Arrow array, and a column of values is encoded in bulk into one
//! binary array of payloads (the sink), with Apache Arrow's own `arrow-avro`.
//!
//! The core does no I/O and takes no decision: it is handed the reader schema and the writer
//! schemas it needs (Python fetches them from the registry), it reads the registry framing,
//! decodes each writer schema's records together, resolves them to the reader schema and puts
//! the records back in their order. Any failure is an exception; the Python side then decodes
//! the batch on its slow path, which names the failing record and says why. Encoding is the
//! same bargain: Python gives the writer schema, the registry's schema id and a column already
//! of the Arrow types the writer takes, and encodes on its slow path whatever fails here.

/// Every buffer the core builds comes from mimalloc, which keeps freed memory for the next
/// batch. With the system allocator, each batch's Arrow buffers (hundreds of kilobytes) are
/// mapped, faulted in page by page, and unmapped when pyarrow releases them: about a third of
/// the time a batch of order records took to decode (0.46 against 0.31 µs per record,
/// `benchmarks/RESULTS.md`). Buffers handed to pyarrow are freed through their release
/// callback, so by this same allocator; the Python process's own allocator is untouched.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod checks;
mod decode;
mod encode;
mod framing;
mod json_maps;
mod protobuf;
mod protobuf_shared;
mod protobuf_wire;
mod wire_format;
mod wire_leaf;

use arrow_array::{Array, ArrayRef, make_array};
use arrow_data::ArrayData;
use arrow_pyarrow::{FromPyArrow, ToPyArrow};
use arrow_schema::DataType;
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

use crate::decode::Decoders;
use crate::encode::Encoders;

create_exception!(
    _core,
    NativeDecodeError,
    PyException,
    "The native core could not decode a batch: the caller decodes it on its slow path."
);

create_exception!(
    _core,
    NativeEncodeError,
    PyException,
    "The native core could not encode a batch: the caller encodes it record by record."
);

/// Avro payloads (an Arrow binary array) to one Arrow array of the reader schema.
#[pyclass(module = "kafka_rescalable_native._core")]
struct AvroDecoder {
    decoders: Decoders,
}

#[pymethods]
impl AvroDecoder {
    /// Build a decoder for `reader_schema` (Avro JSON text).
    #[new]
    fn new(reader_schema: &str) -> PyResult<Self> {
        let decoders = Decoders::new(reader_schema).map_err(native_error)?;
        Ok(Self { decoders })
    }

    /// Register the writer schema of registry id `schema_id`, resolved to the reader schema.
    fn add_writer(&mut self, schema_id: u32, writer_schema: &str) -> PyResult<()> {
        self.decoders
            .add_writer(schema_id, writer_schema)
            .map_err(native_error)
    }

    /// Whether the writer schema of `schema_id` was registered.
    fn has_writer(&self, schema_id: u32) -> bool {
        self.decoders.has_writer(schema_id)
    }

    /// Decode plain payloads, written with the reader schema itself.
    fn decode_plain<'py>(
        &mut self,
        py: Python<'py>,
        payloads: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.decode_with(py, payloads, Decoders::decode_plain)
    }

    /// Decode payloads framed for a schema registry (magic byte, 4-byte id, body).
    fn decode_framed<'py>(
        &mut self,
        py: Python<'py>,
        payloads: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.decode_with(py, payloads, Decoders::decode_framed)
    }
}

impl AvroDecoder {
    /// The pyarrow array in, `decode` run without the GIL, the pyarrow array out.
    fn decode_with<'py>(
        &mut self,
        py: Python<'py>,
        payloads: &Bound<'py, PyAny>,
        decode: fn(&mut Decoders, &dyn Array) -> Result<ArrayRef, String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let array = make_array(ArrayData::from_pyarrow_bound(payloads)?);
        let decoded = py
            .detach(|| guarded(|| decode(&mut self.decoders, array.as_ref())))
            .map_err(native_error)?;
        decoded.to_data().to_pyarrow(py)
    }
}

/// Protobuf payloads (an Arrow binary array) to one Arrow struct array of the type Spark
/// declared for the message.
#[pyclass(module = "kafka_rescalable_native._core")]
struct ProtobufDecoder {
    decoder: protobuf::Decoder,
}

#[pymethods]
impl ProtobufDecoder {
    /// Plan the decoding of message `message` (its full name) of the serialized
    /// `FileDescriptorSet` `descriptor_set` into `arrow_type` (a pyarrow struct type). With
    /// `message_indexes`, payloads carry the registry framing and those message indexes. Fails
    /// for whatever the native core does not decode as the Python path does.
    #[new]
    #[pyo3(signature = (descriptor_set, message, arrow_type, message_indexes=None))]
    fn new(
        descriptor_set: &[u8],
        message: &str,
        arrow_type: &Bound<'_, PyAny>,
        message_indexes: Option<Vec<i64>>,
    ) -> PyResult<Self> {
        let target = DataType::from_pyarrow_bound(arrow_type)?;
        let decoder = protobuf::Decoder::new(descriptor_set, message, &target, message_indexes)
            .map_err(native_error)?;
        Ok(Self { decoder })
    }

    /// Decode every payload without the GIL; a null payload gives a null row. With
    /// `wire_only` (for tests), only the wire-format reader is tried: an error where it
    /// declines the batch.
    #[pyo3(signature = (payloads, wire_only=false))]
    fn decode<'py>(
        &self,
        py: Python<'py>,
        payloads: &Bound<'py, PyAny>,
        wire_only: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let array = make_array(ArrayData::from_pyarrow_bound(payloads)?);
        let decoded = py
            .detach(|| {
                guarded(|| match wire_only {
                    true => self.decoder.decode_wire(array.as_ref()),
                    false => self.decoder.decode(array.as_ref()),
                })
            })
            .map_err(native_error)?;
        decoded.to_data().to_pyarrow(py)
    }
}

/// A column of values (an Arrow array) to one Avro payload per row (an Arrow binary array).
#[pyclass(module = "kafka_rescalable_native._core")]
struct AvroEncoder {
    encoders: Encoders,
}

#[pymethods]
impl AvroEncoder {
    /// Build an encoder for `writer_schema` (Avro JSON text); with `schema_id`, each payload
    /// is framed for a schema registry (zero magic byte, 4-byte big-endian id, body). The
    /// schema is parsed by the first `encode`, which fails if it does not parse.
    #[new]
    #[pyo3(signature = (writer_schema, schema_id=None))]
    fn new(writer_schema: &str, schema_id: Option<u32>) -> Self {
        Self { encoders: Encoders::new(writer_schema, schema_id) }
    }

    /// Encode every row of `values` without the GIL; a null row gives a null payload.
    fn encode<'py>(
        &mut self,
        py: Python<'py>,
        values: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let array = make_array(ArrayData::from_pyarrow_bound(values)?);
        let encoded = py
            .detach(|| guarded(|| self.encoders.encode(array.as_ref())))
            .map_err(encode_error)?;
        encoded.to_data().to_pyarrow(py)
    }
}

/// The distinct schema ids of framed payloads, in the order they first appear.
#[pyfunction]
fn schema_ids(payloads: &Bound<'_, PyAny>) -> PyResult<Vec<u32>> {
    let array = make_array(ArrayData::from_pyarrow_bound(payloads)?);
    framing::distinct_ids(array.as_ref()).map_err(native_error)
}

/// The `MAP<STRING, STRING>` fields named `fields` of JSON payloads: one pyarrow map array
/// per field, and the rows declined, for the Python path to read (see `json_maps`).
#[pyfunction]
fn json_string_maps<'py>(
    py: Python<'py>,
    payloads: &Bound<'py, PyAny>,
    fields: Vec<String>,
) -> PyResult<(Vec<Bound<'py, PyAny>>, Vec<u32>)> {
    let array = make_array(ArrayData::from_pyarrow_bound(payloads)?);
    let (maps, declined) = py
        .detach(|| guarded(|| json_maps::read(array.as_ref(), &fields)))
        .map_err(native_error)?;
    let maps = maps
        .iter()
        .map(|map| map.to_data().to_pyarrow(py))
        .collect::<PyResult<Vec<_>>>()?;
    Ok((maps, declined))
}

/// Run `work`, turning a panic inside the decoding libraries into an error.
fn guarded<T>(work: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)) {
        Ok(result) => result,
        Err(panic) => {
            let text = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".to_string());
            Err(format!("the native core panicked: {text}"))
        }
    }
}

fn native_error(message: String) -> PyErr {
    NativeDecodeError::new_err(message)
}

fn encode_error(message: String) -> PyErr {
    NativeEncodeError::new_err(message)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<AvroDecoder>()?;
    m.add_class::<AvroEncoder>()?;
    m.add_class::<ProtobufDecoder>()?;
    m.add_function(wrap_pyfunction!(schema_ids, m)?)?;
    m.add_function(wrap_pyfunction!(json_string_maps, m)?)?;
    m.add("NativeDecodeError", m.py().get_type::<NativeDecodeError>())?;
    m.add("NativeEncodeError", m.py().get_type::<NativeEncodeError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
