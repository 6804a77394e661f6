//! Encoding in bulk: a column of values (one Arrow array, already of the Arrow types that
//! `arrow-avro`'s writer takes for the writer schema) to one Avro payload per row.
//!
//! Null rows are not encoded: they stay null in the result, as the sink sends a null value
//! (a tombstone) for them. With a registry schema id, each payload carries the registry's
//! framing (a zero magic byte and the 4-byte big-endian id), which `arrow-avro` writes itself.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, BinaryArray, BooleanArray, RecordBatch, make_array};
use arrow_avro::schema::{FingerprintStrategy, SCHEMA_METADATA_KEY};
use arrow_avro::writer::format::{AvroBinaryFormat, AvroSoeFormat};
use arrow_avro::writer::{EncodedRows, Encoder, WriterBuilder};
use arrow_buffer::{Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Schema};
use arrow_select::filter::filter;

use crate::decode::wrapped;

pub struct Encoders {
    /// The writer schema as the one field of a record (`arrow-avro` writes records only).
    schema: String,
    schema_id: Option<u32>,
    /// The writer built for the last Arrow type seen: its plan depends on the type.
    built: Option<(DataType, Encoder)>,
}

impl Encoders {
    /// The schema is parsed when the first column is encoded, against the column's type.
    pub fn new(writer_schema: &str, schema_id: Option<u32>) -> Self {
        Self { schema: wrapped(writer_schema), schema_id, built: None }
    }

    /// One payload per row of `array`, null where the row is null.
    pub fn encode(&mut self, array: &dyn Array) -> Result<ArrayRef, String> {
        let values: ArrayRef = match array.nulls().filter(|n| n.null_count() > 0) {
            Some(nulls) => {
                let keep = BooleanArray::new(nulls.inner().clone(), None);
                filter(array, &keep).map_err(|e| format!("dropping the null rows: {e}"))?
            }
            None => make_array(array.to_data()),
        };
        let encoder = self.encoder_for(values.data_type())?;
        let batch = RecordBatch::try_new(encoder.schema(), vec![values])
            .map_err(|e| format!("the column does not fit the writer schema: {e}"))?;
        encoder
            .encode(&batch)
            .map_err(|e| format!("a value does not encode: {e}"))?;
        payloads(encoder.flush(), array.nulls().filter(|n| n.null_count() > 0), array.len())
    }

    fn encoder_for(&mut self, data_type: &DataType) -> Result<&mut Encoder, String> {
        let stale = !matches!(&self.built, Some((built, _)) if built == data_type);
        if stale {
            let field = Field::new("value", data_type.clone(), true);
            let metadata = HashMap::from([(SCHEMA_METADATA_KEY.to_string(), self.schema.clone())]);
            let arrow = Schema::new(vec![field]).with_metadata(metadata);
            let builder = WriterBuilder::new(arrow);
            let built = match self.schema_id {
                Some(id) => builder
                    .with_fingerprint_strategy(FingerprintStrategy::Id(id))
                    .build_encoder::<AvroSoeFormat>(),
                None => builder.build_encoder::<AvroBinaryFormat>(),
            }
            .map_err(|e| format!("the column's type does not fit the writer schema: {e}"))?;
            self.built = Some((data_type.clone(), built));
        }
        match &mut self.built {
            Some((_, encoder)) => Ok(encoder),
            None => unreachable!("built above"),
        }
    }
}

/// The encoded rows as a binary array, sharing their buffer; a null row takes no bytes.
fn payloads(rows: EncodedRows, nulls: Option<&NullBuffer>, len: usize) -> Result<ArrayRef, String> {
    let ends = rows.offsets();
    let total = ends.last().copied().unwrap_or(0);
    if i32::try_from(total).is_err() {
        return Err(format!("{total} bytes of payloads do not fit one binary array"));
    }
    let offsets: Vec<i32> = match nulls {
        None => ends.iter().map(|&end| end as i32).collect(),
        Some(nulls) => {
            let mut next = 0;
            let mut offsets = Vec::with_capacity(len + 1);
            offsets.push(0);
            for row in 0..len {
                if nulls.is_valid(row) {
                    next += 1;
                }
                offsets.push(ends[next] as i32);
            }
            offsets
        }
    };
    let data = Buffer::from(rows.bytes().clone());
    let offsets = OffsetBuffer::new(ScalarBuffer::from(offsets));
    let array = BinaryArray::try_new(offsets, data, nulls.cloned())
        .map_err(|e| format!("assembling the payloads: {e}"))?;
    Ok(Arc::new(array))
}
