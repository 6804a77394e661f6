//! Protobuf payloads decoded in bulk with `prost-reflect` (dynamic messages read from a
//! serialized `FileDescriptorSet`) into one Arrow struct array of the type Spark declared.
//!
//! The values are the Python path's (`protobuf_values.py`): a field that is not set is null
//! where protobuf tracks presence, else its default; unsigned integers wrap into the signed
//! types; an enum's number becomes its name (`UNKNOWN_ENUM_VALUE_<Enum>_<n>` for a number the
//! enum lacks); `Timestamp` and `Duration` become microseconds as spark-protobuf counts them
//! (the nanos cut toward zero); map entries come in key order (the Python path's is a hash
//! order).
//!
//! The plan is built by walking the target Arrow type next to the message's descriptors, and
//! refuses (an error: the caller decodes on its slow path) anything the parity tests do not
//! cover: proto2 `required` fields, explicit defaults, groups, and any type pairing other than
//! the ones Spark declares. Editions files do not load in prost-reflect 0.16 at all.
//!
//! Records are decoded one by one, but with no Python object per record. A record the plan
//! cannot hold as the Python path would (an unknown number of a closed enum, a time past
//! 64-bit microseconds, ...) fails the batch, never a silent difference.
//!
//! Each batch is first given to `protobuf_wire`, which reads the wire format straight into
//! the builders (three times faster on the benchmark's order); the dynamic messages here
//! read what it declines.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use arrow_array::builder::{
    BinaryBuilder, BooleanBuilder, DurationMicrosecondBuilder, Float32Builder, Float64Builder,
    Int32Builder, Int64Builder, StringBuilder, TimestampMicrosecondBuilder,
};
use arrow_array::{Array, ArrayRef, StructArray};
use arrow_buffer::NullBufferBuilder;
use arrow_schema::{DataType, FieldRef, Fields};
use prost_reflect::{
    Cardinality, DescriptorPool, DynamicMessage, FieldDescriptor, Kind, MapKey, MessageDescriptor,
    Value,
};

use crate::framing::{self, Payloads};
use crate::protobuf_shared::{
    EnumNames, FieldLayout, LeafType, MapLayout, field_layout, list_array, map_array, time_micros,
};
use crate::protobuf_wire::WireMessage;

/// One column's plan: the message, the target struct's fields and the framing's index path.
pub struct Decoder {
    message: MessageDescriptor,
    fields: Fields,
    /// With registry framing: the message indexes records must carry.
    indexes: Option<Vec<i64>>,
    /// Whether `protobuf_wire` reads this message (it declines a batch it is unsure of).
    wire: bool,
}

impl Decoder {
    /// Read the descriptor set, find `message` and check that every field of `target` (an
    /// Arrow struct type) can be decoded here.
    pub fn new(
        descriptor_set: &[u8],
        message: &str,
        target: &DataType,
        indexes: Option<Vec<i64>>,
    ) -> Result<Self, String> {
        let pool = DescriptorPool::decode(descriptor_set)
            .map_err(|e| format!("the descriptor set does not load: {e}"))?;
        let descriptor = pool
            .get_message_by_name(message)
            .ok_or_else(|| format!("no message {message} in the descriptor set"))?;
        let DataType::Struct(fields) = target else {
            return Err(format!("a message is a struct, not {target}"));
        };
        if has_required(&descriptor, &mut HashSet::new()) {
            return Err("proto2 required fields are checked on the slow path".into());
        }
        // Build once to check the pairing; every batch builds its own columns.
        MessageColumn::new(&descriptor, fields)?;
        let wire = WireMessage::new(&descriptor, fields).is_ok();
        Ok(Self {
            message: descriptor,
            fields: fields.clone(),
            indexes,
            wire,
        })
    }

    /// Decode every payload of `array` (null payloads give null rows): from the wire format
    /// where `protobuf_wire` reads the batch, else through dynamic messages.
    pub fn decode(&self, array: &dyn Array) -> Result<ArrayRef, String> {
        if self.wire
            && let Ok(decoded) = self.decode_wire(array)
        {
            return Ok(decoded);
        }
        let payloads = Payloads::of(array)?;
        let mut column = MessageColumn::new(&self.message, &self.fields)?;
        for row in 0..payloads.len() {
            let Some(payload) = payloads.get(row) else {
                column.append_null();
                continue;
            };
            let body = match &self.indexes {
                Some(expected) => {
                    unframe(payload, expected).map_err(|e| format!("row {row}: {e}"))?
                }
                None => payload,
            };
            let message = DynamicMessage::decode(self.message.clone(), body)
                .map_err(|e| format!("row {row}: {e}"))?;
            column
                .append(&message)
                .map_err(|e| format!("row {row}: {e}"))?;
        }
        Ok(Arc::new(column.finish()?))
    }

    /// Decode every payload with `protobuf_wire` alone: an error where it declines.
    pub fn decode_wire(&self, array: &dyn Array) -> Result<ArrayRef, String> {
        if !self.wire {
            return Err("the wire-format reader does not read this message".into());
        }
        let payloads = Payloads::of(array)?;
        let mut column = WireMessage::new(&self.message, &self.fields)?;
        for row in 0..payloads.len() {
            match payloads.get(row) {
                None => column.append_null(),
                Some(payload) => match &self.indexes {
                    Some(expected) => column.decode(unframe(payload, expected)?)?,
                    None => column.decode(payload)?,
                },
            }
        }
        Ok(Arc::new(column.finish()?))
    }
}

/// Strip the registry framing and the message indexes, which must be `expected`.
pub(crate) fn unframe<'a>(payload: &'a [u8], expected: &[i64]) -> Result<&'a [u8], String> {
    let (_, body) = framing::split(payload)?;
    let mut position = 0;
    let count = zigzag(body, &mut position)?;
    let indexes = if count == 0 {
        vec![0]
    } else {
        let mut indexes = Vec::new();
        for _ in 0..count.max(0) {
            indexes.push(zigzag(body, &mut position)?);
        }
        indexes
    };
    if indexes != expected {
        return Err(format!("message indexes {indexes:?}, not {expected:?}"));
    }
    Ok(&body[position..])
}

/// One zigzag varint of at most 5 bytes (message indexes are small; longer ones go slow).
fn zigzag(body: &[u8], position: &mut usize) -> Result<i64, String> {
    let mut value: u64 = 0;
    for shift in (0..35).step_by(7) {
        let byte = *body.get(*position).ok_or("truncated message indexes")?;
        *position += 1;
        value |= u64::from(byte & 0x7F) << shift;
        if byte & 0x80 == 0 {
            return Ok((value >> 1) as i64 ^ -((value & 1) as i64));
        }
    }
    Err("a message index longer than 5 bytes".into())
}

pub(crate) fn has_required(message: &MessageDescriptor, seen: &mut HashSet<String>) -> bool {
    seen.insert(message.full_name().to_string());
    message.fields().any(|field| {
        field.cardinality() == Cardinality::Required
            || match field.kind() {
                Kind::Message(inner) => {
                    !seen.contains(inner.full_name()) && has_required(&inner, seen)
                }
                _ => false,
            }
    })
}

/// A struct column: one child per target field, planned from the message's field.
struct MessageColumn {
    children: Vec<Child>,
    nulls: NullBufferBuilder,
    fields: Fields,
}

struct Child {
    field: FieldDescriptor,
    /// Null when not set: the field tracks presence and has no explicit default.
    null_unset: bool,
    /// The value when not set otherwise (made once: prost-reflect makes it on every call).
    default: Value,
    column: Column,
}

impl MessageColumn {
    fn new(message: &MessageDescriptor, fields: &Fields) -> Result<Self, String> {
        if fields.is_empty() {
            return Err(format!(
                "a struct without fields for {}",
                message.full_name()
            ));
        }
        let mut children = Vec::with_capacity(fields.len());
        for target in fields.iter() {
            let (field, layout) = field_layout(message, target)?;
            let column = match layout {
                FieldLayout::Map => {
                    Column::Map(Box::new(MapColumn::new(&field, target.data_type())?))
                }
                FieldLayout::List(element) => Column::List(Box::new(ListColumn {
                    offsets: vec![0],
                    nulls: NullBufferBuilder::new(0),
                    item: Column::of(&field, element.data_type())?,
                    field: element,
                })),
                FieldLayout::Single => Column::of(&field, target.data_type())?,
            };
            let null_unset = field.supports_presence();
            let default = field.default_value();
            children.push(Child {
                field,
                null_unset,
                default,
                column,
            });
        }
        Ok(Self {
            children,
            nulls: NullBufferBuilder::new(0),
            fields: fields.clone(),
        })
    }

    fn append(&mut self, message: &DynamicMessage) -> Result<(), String> {
        for child in &mut self.children {
            if message.has_field(&child.field) {
                child.column.append(&message.get_field(&child.field))?;
            } else if child.null_unset {
                child.column.append_null();
            } else {
                child.column.append(&child.default)?;
            }
        }
        self.nulls.append_non_null();
        Ok(())
    }

    fn append_null(&mut self) {
        for child in &mut self.children {
            child.column.append_null();
        }
        self.nulls.append_null();
    }

    fn finish(&mut self) -> Result<StructArray, String> {
        let children = self
            .children
            .iter_mut()
            .map(|child| child.column.finish())
            .collect::<Result<Vec<_>, _>>()?;
        StructArray::try_new(self.fields.clone(), children, self.nulls.finish())
            .map_err(|e| e.to_string())
    }
}

struct ListColumn {
    offsets: Vec<i32>,
    nulls: NullBufferBuilder,
    item: Column,
    field: FieldRef,
}

/// A map column. Entries come in key order: protobuf's Python maps iterate in hash order,
/// which differs from one process to the next, so no order is the Python path's.
struct MapColumn {
    offsets: Vec<i32>,
    nulls: NullBufferBuilder,
    keys: Column,
    values: Column,
    entries: FieldRef,
    sorted: bool,
}

impl MapColumn {
    fn new(field: &FieldDescriptor, target: &DataType) -> Result<Self, String> {
        let map = MapLayout::of(field, target)?;
        Ok(Self {
            offsets: vec![0],
            nulls: NullBufferBuilder::new(0),
            keys: Column::of(&map.key_field, &map.key_type)?,
            values: Column::of(&map.value_field, &map.value_type)?,
            entries: map.entries,
            sorted: map.sorted,
        })
    }

    fn append(&mut self, map: &HashMap<MapKey, Value>) -> Result<(), String> {
        let mut keys: Vec<&MapKey> = map.keys().collect();
        keys.sort_by(|a, b| spark_order(a, b));
        for key in keys {
            self.keys.append(&key_value(key))?;
            self.values.append(&map[key])?;
        }
        let end = self.offsets.last().copied().unwrap_or(0) + map.len() as i32;
        self.offsets.push(end);
        self.nulls.append_non_null();
        Ok(())
    }

    fn append_null(&mut self) {
        let end = self.offsets.last().copied().unwrap_or(0);
        self.offsets.push(end);
        self.nulls.append_null();
    }

    fn finish(&mut self) -> Result<ArrayRef, String> {
        let (keys, values) = (self.keys.finish()?, self.values.finish()?);
        let (offsets, nulls) = (&mut self.offsets, &mut self.nulls);
        map_array(&self.entries, self.sorted, keys, values, offsets, nulls)
    }
}

/// Order map keys by the values Spark shows: unsigned keys after they wrap into the signed
/// types (as `protobuf_wire` orders them), so both readers give a map's entries alike.
fn spark_order(a: &MapKey, b: &MapKey) -> std::cmp::Ordering {
    match (a, b) {
        (MapKey::U32(a), MapKey::U32(b)) => (*a as i32).cmp(&(*b as i32)),
        (MapKey::U64(a), MapKey::U64(b)) => (*a as i64).cmp(&(*b as i64)),
        _ => a.cmp(b),
    }
}

fn key_value(key: &MapKey) -> Value {
    match key {
        MapKey::Bool(v) => Value::Bool(*v),
        MapKey::I32(v) => Value::I32(*v),
        MapKey::I64(v) => Value::I64(*v),
        MapKey::U32(v) => Value::U32(*v),
        MapKey::U64(v) => Value::U64(*v),
        MapKey::String(v) => Value::String(v.clone()),
    }
}

enum Column {
    Bool(BooleanBuilder),
    Int32(Int32Builder),
    Int64(Int64Builder),
    Float32(Float32Builder),
    Float64(Float64Builder),
    Utf8(StringBuilder),
    Binary(BinaryBuilder),
    Enum(StringBuilder, Box<EnumNames>),
    Timestamp(TimestampMicrosecondBuilder, Box<SecondsNanos>),
    Duration(DurationMicrosecondBuilder, Box<SecondsNanos>),
    Message(Box<MessageColumn>),
    List(Box<ListColumn>),
    Map(Box<MapColumn>),
}

impl Column {
    /// The column of one (non-repeated) value of `field`, as Arrow type `target`.
    fn of(field: &FieldDescriptor, target: &DataType) -> Result<Self, String> {
        Ok(match LeafType::of(field, target)? {
            LeafType::Bool => Self::Bool(BooleanBuilder::new()),
            LeafType::Int32 => Self::Int32(Int32Builder::new()),
            LeafType::Int64 => Self::Int64(Int64Builder::new()),
            LeafType::Float32 => Self::Float32(Float32Builder::new()),
            LeafType::Float64 => Self::Float64(Float64Builder::new()),
            LeafType::Utf8 => Self::Utf8(StringBuilder::new()),
            LeafType::Binary => Self::Binary(BinaryBuilder::new()),
            LeafType::Enum(e) => Self::Enum(StringBuilder::new(), Box::new(EnumNames::of(&e))),
            LeafType::Timestamp(m) => Self::Timestamp(
                TimestampMicrosecondBuilder::new().with_data_type(target.clone()),
                Box::new(SecondsNanos::of(&m)),
            ),
            LeafType::Duration(m) => Self::Duration(
                DurationMicrosecondBuilder::new(),
                Box::new(SecondsNanos::of(&m)),
            ),
            LeafType::Message(m, fields) => {
                Self::Message(Box::new(MessageColumn::new(&m, fields)?))
            }
        })
    }

    fn append(&mut self, value: &Value) -> Result<(), String> {
        match (self, value) {
            (Self::Bool(b), Value::Bool(v)) => b.append_value(*v),
            (Self::Int32(b), Value::I32(v)) => b.append_value(*v),
            (Self::Int32(b), Value::U32(v)) => b.append_value(*v as i32), // wraps, as Spark's
            (Self::Int64(b), Value::I64(v)) => b.append_value(*v),
            (Self::Int64(b), Value::U64(v)) => b.append_value(*v as i64),
            (Self::Float32(b), Value::F32(v)) => b.append_value(*v),
            (Self::Float64(b), Value::F64(v)) => b.append_value(*v),
            (Self::Utf8(b), Value::String(v)) => b.append_value(v),
            (Self::Binary(b), Value::Bytes(v)) => b.append_value(v),
            (Self::Enum(b, names), Value::EnumNumber(n)) => match names.get(*n) {
                Some(name) => b.append_value(name),
                None if names.closed => {
                    return Err(format!("{n} is not a value of a closed enum"));
                }
                None => b.append_value(format!("{}{n}", names.unknown)),
            },
            (Self::Timestamp(b, fields), Value::Message(m)) => {
                let (seconds, nanos) = fields.read(m)?;
                b.append_value(time_micros(seconds, nanos)?);
            }
            (Self::Duration(b, fields), Value::Message(m)) => {
                let (seconds, nanos) = fields.read(m)?;
                b.append_value(time_micros(seconds, nanos)?);
            }
            (Self::Message(c), Value::Message(m)) => c.append(m)?,
            (Self::List(c), Value::List(values)) => {
                for value in values {
                    c.item.append(value)?;
                }
                let end = c.offsets.last().copied().unwrap_or(0) + values.len() as i32;
                c.offsets.push(end);
                c.nulls.append_non_null();
            }
            (Self::Map(c), Value::Map(map)) => c.append(map)?,
            (_, value) => return Err(format!("an unexpected value {value:?}")),
        }
        Ok(())
    }

    fn append_null(&mut self) {
        match self {
            Self::Bool(b) => b.append_null(),
            Self::Int32(b) => b.append_null(),
            Self::Int64(b) => b.append_null(),
            Self::Float32(b) => b.append_null(),
            Self::Float64(b) => b.append_null(),
            Self::Utf8(b) | Self::Enum(b, _) => b.append_null(),
            Self::Binary(b) => b.append_null(),
            Self::Timestamp(b, _) => b.append_null(),
            Self::Duration(b, _) => b.append_null(),
            Self::Message(c) => c.append_null(),
            Self::List(c) => {
                let end = c.offsets.last().copied().unwrap_or(0);
                c.offsets.push(end);
                c.nulls.append_null();
            }
            Self::Map(c) => c.append_null(),
        }
    }

    fn finish(&mut self) -> Result<ArrayRef, String> {
        Ok(match self {
            Self::Bool(b) => Arc::new(b.finish()),
            Self::Int32(b) => Arc::new(b.finish()),
            Self::Int64(b) => Arc::new(b.finish()),
            Self::Float32(b) => Arc::new(b.finish()),
            Self::Float64(b) => Arc::new(b.finish()),
            Self::Utf8(b) | Self::Enum(b, _) => Arc::new(b.finish()),
            Self::Binary(b) => Arc::new(b.finish()),
            Self::Timestamp(b, _) => Arc::new(b.finish()),
            Self::Duration(b, _) => Arc::new(b.finish()),
            Self::Message(c) => Arc::new(c.finish()?),
            Self::Map(c) => c.finish()?,
            Self::List(c) => {
                let values = c.item.finish()?;
                list_array(&c.field, values, &mut c.offsets, &mut c.nulls)?
            }
        })
    }
}

/// The `seconds` and `nanos` fields of a `Timestamp` or `Duration`, found once.
struct SecondsNanos {
    seconds: FieldDescriptor,
    nanos: FieldDescriptor,
}

impl SecondsNanos {
    /// For a message `seconds_and_nanos` accepted.
    fn of(message: &MessageDescriptor) -> Self {
        let mut fields = message.fields();
        let (Some(seconds), Some(nanos)) = (fields.next(), fields.next()) else {
            unreachable!("seconds_and_nanos checked both fields")
        };
        Self { seconds, nanos }
    }

    fn read(&self, message: &DynamicMessage) -> Result<(i64, i32), String> {
        let seconds = match message.get_field(&self.seconds).as_ref() {
            Value::I64(v) => *v,
            other => return Err(format!("seconds {other:?}")),
        };
        let nanos = match message.get_field(&self.nanos).as_ref() {
            Value::I32(v) => *v,
            other => return Err(format!("nanos {other:?}")),
        };
        Ok((seconds, nanos))
    }
}
