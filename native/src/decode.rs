//! Decoding in bulk: one `arrow-avro` decoder per writer schema, records grouped by writer
//! schema id, the groups put back in the records' order.

use std::collections::HashMap;

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, make_array, new_null_array};
use arrow_data::ArrayData;
use arrow_schema::{DataType, Field, FieldRef, UnionFields};
use arrow_avro::reader::{Decoder, DecoderMode, ReaderBuilder};
use arrow_avro::schema::{AvroSchema, Fingerprint, FingerprintAlgorithm, SchemaStore};
use arrow_select::concat::concat;
use arrow_select::interleave::interleave;

use crate::checks;
use crate::framing::{Payloads, split};

/// Rows a decoder holds before it is flushed into a piece of the result.
const PIECE_ROWS: usize = 1 << 16;

/// `arrow-avro` reads and writes records only: any schema is read (written) as the one field
/// of a record, whose encoding is the field's own.
pub(crate) fn wrapped(schema: &str) -> String {
    format!(
        r#"{{"type":"record","name":"KafkaRescalableNativeRow","fields":[{{"name":"value","type":{schema}}}]}}"#
    )
}

/// A writer schema's decoder, built when first needed and dropped after a failure, since a
/// record that failed half-way leaves its values in the decoder.
struct Writer {
    schema: String,
    decoder: Option<Decoder>,
}

pub struct Decoders {
    reader: String,
    /// The type of a value of the reader schema, without the metadata `arrow-avro` adds
    /// where a writer resolves to it: every piece is given it, so pieces can be joined.
    data_type: DataType,
    plain: Writer,
    framed: HashMap<u32, Writer>,
}

impl Decoders {
    pub fn new(reader_schema: &str) -> Result<Self, String> {
        let reader = wrapped(reader_schema);
        let mut plain = Writer { schema: reader.clone(), decoder: None };
        let decoder = build(&plain.schema, &reader)?;
        let data_type = without_metadata(decoder.schema().field(0).data_type());
        plain.decoder = Some(decoder);
        Ok(Self { reader, data_type, plain, framed: HashMap::new() })
    }

    pub fn add_writer(&mut self, schema_id: u32, writer_schema: &str) -> Result<(), String> {
        let schema = wrapped(writer_schema);
        let decoder = build(&schema, &self.reader)?;
        self.framed.insert(schema_id, Writer { schema, decoder: Some(decoder) });
        Ok(())
    }

    pub fn has_writer(&self, schema_id: u32) -> bool {
        self.framed.contains_key(&schema_id)
    }

    pub fn decode_plain(&mut self, array: &dyn Array) -> Result<ArrayRef, String> {
        let payloads = Payloads::of(array)?;
        let rows: Vec<usize> = (0..payloads.len()).filter(|&r| payloads.get(r).is_some()).collect();
        let bodies = rows.iter().map(|&row| payloads.get(row).unwrap_or_default());
        let pieces = decode_group(&mut self.plain, &self.reader, bodies)?;
        let slots = (payloads.null_count() > 0).then(|| scatter(payloads.len(), &[rows]));
        assemble(pieces, slots, &self.data_type)
    }

    pub fn decode_framed(&mut self, array: &dyn Array) -> Result<ArrayRef, String> {
        let payloads = Payloads::of(array)?;
        let mut order: Vec<u32> = Vec::new();
        let mut groups: HashMap<u32, Vec<usize>> = HashMap::new();
        for row in 0..payloads.len() {
            if let Some(payload) = payloads.get(row) {
                let (id, _) = split(payload).map_err(|e| format!("row {row}: {e}"))?;
                groups.entry(id).or_insert_with(|| {
                    order.push(id);
                    Vec::new()
                });
                groups.get_mut(&id).map(|rows| rows.push(row));
            }
        }
        let mut pieces: Vec<ArrayRef> = Vec::new();
        let mut group_rows: Vec<Vec<usize>> = Vec::with_capacity(order.len());
        for id in &order {
            let rows = groups.remove(id).unwrap_or_default();
            let writer = self
                .framed
                .get_mut(id)
                .ok_or_else(|| format!("no writer schema was given for id {id}"))?;
            let bodies = rows
                .iter()
                .map(|&row| payloads.get(row).map(|p| &p[5..]).unwrap_or_default());
            pieces.extend(decode_group(writer, &self.reader, bodies)?);
            group_rows.push(rows);
        }
        let in_order = order.len() <= 1 && payloads.null_count() == 0;
        let slots = (!in_order).then(|| scatter(payloads.len(), &group_rows));
        if pieces.is_empty() {
            // Nothing but nulls, or no rows: the plain decoder knows the type.
            let empty = decode_group(&mut self.plain, &self.reader, std::iter::empty())?;
            return assemble(empty, slots, &self.data_type);
        }
        assemble(pieces, slots, &self.data_type)
    }
}

fn build(writer: &str, reader: &str) -> Result<Decoder, String> {
    let mut store = SchemaStore::new_with_type(FingerprintAlgorithm::Id);
    store
        .set(Fingerprint::Id(0), AvroSchema::new(writer.to_string()))
        .map_err(|e| format!("the writer schema: {e}"))?;
    let builder = ReaderBuilder::new()
        .with_writer_schema_store(store)
        .with_active_fingerprint(Fingerprint::Id(0));
    // Same text: nothing to resolve, and the decoder skips its resolution steps.
    let builder = if writer == reader {
        builder
    } else {
        builder.with_reader_schema(AvroSchema::new(reader.to_string()))
    };
    builder
        .with_decoder_mode(DecoderMode::UnframedDatum)
        .with_batch_size(PIECE_ROWS)
        .build_decoder()
        .map_err(|e| format!("the writer schema cannot be read with the reader schema: {e}"))
}

/// Decode one writer schema's records, in order, into one or more pieces of the result.
fn decode_group<'a>(
    writer: &mut Writer,
    reader: &str,
    bodies: impl Iterator<Item = &'a [u8]>,
) -> Result<Vec<ArrayRef>, String> {
    let mut decoder = match writer.decoder.take() {
        Some(decoder) => decoder,
        None => build(&writer.schema, reader)?,
    };
    let mut pieces = Vec::new();
    for body in bodies {
        if decoder.batch_is_full() {
            pieces.push(flush(&mut decoder)?);
        }
        // One datum per call; bytes after it are ignored, as fastavro ignores them.
        decoder.decode(body).map_err(|e| format!("malformed Avro payload: {e}"))?;
    }
    pieces.push(flush(&mut decoder)?);
    writer.decoder = Some(decoder);
    Ok(pieces)
}

fn flush(decoder: &mut Decoder) -> Result<ArrayRef, String> {
    match decoder.flush().map_err(|e| format!("malformed Avro payload: {e}"))? {
        Some(batch) => Ok(batch.column(0).clone()),
        None => Ok(new_null_array(decoder.schema().field(0).data_type(), 0)),
    }
}

/// For each row, where its value is: (piece, index) with the null value last.
fn scatter(rows: usize, groups: &[Vec<usize>]) -> Vec<Option<usize>> {
    let mut slots = vec![None; rows];
    let mut next = 0;
    for group in groups {
        for &row in group {
            slots[row] = Some(next);
            next += 1;
        }
    }
    slots
}

/// Join the pieces and put each row where it belongs (`slots`: position in the pieces laid
/// end to end, `None` for a null payload); `slots` is `None` when the pieces are in order.
fn assemble(
    pieces: Vec<ArrayRef>,
    slots: Option<Vec<Option<usize>>>,
    data_type: &DataType,
) -> Result<ArrayRef, String> {
    let pieces = pieces
        .into_iter()
        .map(|piece| retyped(piece, data_type))
        .collect::<Result<Vec<_>, _>>()?;
    for piece in &pieces {
        checks::check(piece.as_ref())?;
    }
    let Some(slots) = slots else {
        if pieces.len() == 1 {
            return Ok(pieces.into_iter().next().unwrap_or_else(|| unreachable!()));
        }
        let refs: Vec<&dyn Array> = pieces.iter().map(|p| p.as_ref()).collect();
        return concat(&refs).map_err(|e| format!("joining decoded pieces: {e}"));
    };
    let mut starts = Vec::with_capacity(pieces.len());
    let mut total = 0;
    for piece in &pieces {
        starts.push(total);
        total += piece.len();
    }
    let null = new_null_array(pieces[0].data_type(), 1);
    let indices: Vec<(usize, usize)> = slots
        .iter()
        .map(|slot| match *slot {
            Some(at) => {
                let piece = starts.partition_point(|&start| start <= at) - 1;
                (piece, at - starts[piece])
            }
            None => (pieces.len(), 0),
        })
        .collect();
    let mut refs: Vec<&dyn Array> = pieces.iter().map(|p| p.as_ref()).collect();
    refs.push(null.as_ref());
    interleave(&refs, &indices).map_err(|e| format!("restoring the records' order: {e}"))
}

/// `data_type` without any field's metadata, at every depth.
fn without_metadata(data_type: &DataType) -> DataType {
    let field = |f: &FieldRef| -> FieldRef {
        Arc::new(
            Field::new(f.name(), without_metadata(f.data_type()), f.is_nullable())
                .with_metadata(HashMap::new()),
        )
    };
    match data_type {
        DataType::Struct(fields) => DataType::Struct(fields.iter().map(field).collect()),
        DataType::List(item) => DataType::List(field(item)),
        DataType::LargeList(item) => DataType::LargeList(field(item)),
        DataType::Map(entries, sorted) => DataType::Map(field(entries), *sorted),
        DataType::Union(fields, mode) => DataType::Union(
            UnionFields::try_new(
                fields.iter().map(|(id, _)| id),
                fields.iter().map(|(_, f)| field(f).as_ref().clone()),
            )
            .unwrap_or_else(|_| fields.clone()),
            *mode,
        ),
        other => other.clone(),
    }
}

/// `piece` with the type `data_type`, which differs from its own in metadata only.
fn retyped(piece: ArrayRef, data_type: &DataType) -> Result<ArrayRef, String> {
    if piece.data_type() == data_type {
        return Ok(piece);
    }
    let data = with_type(piece.to_data(), data_type)?;
    Ok(make_array(data))
}

fn with_type(data: ArrayData, data_type: &DataType) -> Result<ArrayData, String> {
    let children: Vec<DataType> = match data_type {
        DataType::Struct(fields) => fields.iter().map(|f| f.data_type().clone()).collect(),
        DataType::List(item) | DataType::LargeList(item) | DataType::Map(item, _) => {
            vec![item.data_type().clone()]
        }
        DataType::Union(fields, _) => fields.iter().map(|(_, f)| f.data_type().clone()).collect(),
        _ => Vec::new(),
    };
    let child_data = data
        .child_data()
        .iter()
        .zip(children.iter().chain(std::iter::repeat(&DataType::Null)))
        .map(|(child, child_type)| {
            if children.is_empty() {
                Ok(child.clone())
            } else {
                with_type(child.clone(), child_type)
            }
        })
        .collect::<Result<Vec<_>, String>>()?;
    data.into_builder()
        .data_type(data_type.clone())
        .child_data(child_data)
        .build()
        .map_err(|e| format!("joining the writer schemas' pieces: {e}"))
}
