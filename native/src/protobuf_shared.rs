//! What both Protobuf readers (`protobuf.rs`, `protobuf_wire.rs`) share: how enums and the
//! well-known times become Spark's values, so the two cannot drift apart.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{ArrayRef, ListArray, MapArray, StructArray};
use arrow_buffer::{NullBufferBuilder, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, FieldRef, Fields, TimeUnit};
use prost_reflect::{EnumDescriptor, FieldDescriptor, Kind, MessageDescriptor, Syntax};

/// A `Timestamp` or `Duration` in microseconds as spark-protobuf counts them: the seconds'
/// microseconds plus the nanos cut toward zero (Java's integer division), even where protobuf
/// calls the message invalid (negative nanos, years past 9999). An error past the 64-bit
/// microseconds Spark holds: the batch goes to the Python path, whose reason names the field.
pub(crate) fn time_micros(seconds: i64, nanos: i32) -> Result<i64, String> {
    seconds
        .checked_mul(1_000_000)
        .and_then(|micros| micros.checked_add(i64::from(nanos / 1000)))
        .ok_or_else(|| format!("{seconds} s is beyond 64-bit microseconds"))
}

/// The enum's names by number; where numbers repeat (aliases) the last name wins, as in the
/// Python path's dict.
pub(crate) struct EnumNames {
    names: HashMap<i32, String>,
    /// The names of the numbers 0 to 255, looked up without hashing (most enums fit).
    small: Vec<Option<String>>,
    pub(crate) unknown: String,
    /// A proto2 enum: an unknown number is an unknown field to protobuf's parser.
    pub(crate) closed: bool,
}

impl EnumNames {
    pub(crate) fn of(descriptor: &EnumDescriptor) -> Self {
        let names: HashMap<i32, String> = descriptor
            .values()
            .map(|v| (v.number(), v.name().to_string()))
            .collect();
        let small = (0..256).map(|number| names.get(&number).cloned()).collect();
        Self {
            names,
            small,
            unknown: format!("UNKNOWN_ENUM_VALUE_{}_", descriptor.name()),
            closed: descriptor.parent_file().syntax() == Syntax::Proto2,
        }
    }

    /// The name of `number`, if the enum has it.
    pub(crate) fn get(&self, number: i32) -> Option<&str> {
        match usize::try_from(number)
            .ok()
            .and_then(|index| self.small.get(index))
        {
            Some(name) => name.as_deref(),
            None => self.names.get(&number).map(String::as_str),
        }
    }
}

/// Whether `message` is shaped as the well-known `name` (spark-protobuf tells them by name
/// and fields), with the well-known field types.
fn seconds_and_nanos(message: &MessageDescriptor, name: &str) -> bool {
    let fields: Vec<_> = message.fields().collect();
    message.name() == name
        && fields.len() == 2
        && fields[0].name() == "seconds"
        && fields[1].name() == "nanos"
        && fields[0].kind() == Kind::Int64
        && fields[1].kind() == Kind::Int32
        && !fields[0].is_list()
        && !fields[1].is_list()
}

/// How a field of the target struct is laid out; both readers build their columns from it.
pub(crate) enum FieldLayout {
    Map,
    /// Repeated: the list's element field.
    List(FieldRef),
    Single,
}

/// Find the message's field for `target` and refuse what neither reader decodes as the
/// Python path does: groups and explicit defaults.
pub(crate) fn field_layout(
    message: &MessageDescriptor,
    target: &Field,
) -> Result<(FieldDescriptor, FieldLayout), String> {
    let field = message.get_field_by_name(target.name()).ok_or_else(|| {
        format!(
            "message {} has no field {}",
            message.full_name(),
            target.name()
        )
    })?;
    if field.is_group() {
        return Err(format!(
            "{} is a group: the slow path reads it",
            field.full_name()
        ));
    }
    if field.field_descriptor_proto().default_value.is_some() {
        return Err(format!(
            "{} has an explicit default: the slow path reads it",
            field.full_name()
        ));
    }
    let layout = if field.is_map() {
        FieldLayout::Map
    } else if field.is_list() {
        let DataType::List(element) = target.data_type() else {
            return Err(format!(
                "{} is repeated, not {}",
                field.full_name(),
                target.data_type()
            ));
        };
        FieldLayout::List(element.clone())
    } else {
        FieldLayout::Single
    };
    Ok((field, layout))
}

/// A map field next to its target `MAP` type: the entries' key and value fields and types.
pub(crate) struct MapLayout {
    pub(crate) entries: FieldRef,
    pub(crate) sorted: bool,
    pub(crate) key_field: FieldDescriptor,
    pub(crate) key_type: DataType,
    pub(crate) value_field: FieldDescriptor,
    pub(crate) value_type: DataType,
}

impl MapLayout {
    pub(crate) fn of(field: &FieldDescriptor, target: &DataType) -> Result<Self, String> {
        let mismatch = || format!("{} is a map, not {target}", field.full_name());
        let (DataType::Map(entries, sorted), Kind::Message(entry)) = (target, field.kind()) else {
            return Err(mismatch());
        };
        let DataType::Struct(pair) = entries.data_type() else {
            return Err(mismatch());
        };
        if pair.len() != 2 {
            return Err(mismatch());
        }
        Ok(Self {
            entries: entries.clone(),
            sorted: *sorted,
            key_field: entry.map_entry_key_field(),
            key_type: pair[0].data_type().clone(),
            value_field: entry.map_entry_value_field(),
            value_type: pair[1].data_type().clone(),
        })
    }
}

/// The list column of `values`; the offsets and nulls start again for the next batch.
pub(crate) fn list_array(
    field: &FieldRef,
    values: ArrayRef,
    offsets: &mut Vec<i32>,
    nulls: &mut NullBufferBuilder,
) -> Result<ArrayRef, String> {
    let list = ListArray::try_new(field.clone(), take_offsets(offsets), values, nulls.finish());
    Ok(Arc::new(list.map_err(|e| e.to_string())?))
}

/// The map column of `keys` and `values` (the entries in order); as `list_array`.
pub(crate) fn map_array(
    entries: &FieldRef,
    sorted: bool,
    keys: ArrayRef,
    values: ArrayRef,
    offsets: &mut Vec<i32>,
    nulls: &mut NullBufferBuilder,
) -> Result<ArrayRef, String> {
    let DataType::Struct(pair) = entries.data_type() else {
        return Err("map entries are not a struct".into());
    };
    let pairs = StructArray::try_new(pair.clone(), vec![keys, values], None);
    let pairs = pairs.map_err(|e| e.to_string())?;
    let map = MapArray::try_new(
        entries.clone(),
        take_offsets(offsets),
        pairs,
        nulls.finish(),
        sorted,
    );
    Ok(Arc::new(map.map_err(|e| e.to_string())?))
}

fn take_offsets(offsets: &mut Vec<i32>) -> OffsetBuffer<i32> {
    OffsetBuffer::new(ScalarBuffer::from(std::mem::replace(offsets, vec![0])))
}

/// What one (non-repeated) value of a field is read as: the pairings of a protobuf kind with
/// the Arrow type Spark declared, which both readers build their columns from.
pub(crate) enum LeafType<'a> {
    Bool,
    /// Any 32-bit integer kind, unsigned ones wrapping.
    Int32,
    /// Any 64-bit integer kind, unsigned ones wrapping.
    Int64,
    Float32,
    Float64,
    Utf8,
    Binary,
    /// An enum read as its value names.
    Enum(EnumDescriptor),
    /// A `google.protobuf.Timestamp`-shaped message, as microseconds.
    Timestamp(MessageDescriptor),
    /// A `google.protobuf.Duration`-shaped message, as microseconds.
    Duration(MessageDescriptor),
    Message(MessageDescriptor, &'a Fields),
}

impl<'a> LeafType<'a> {
    /// Pair `field`'s kind with `target`; an error for any pairing Spark does not declare.
    pub(crate) fn of(field: &FieldDescriptor, target: &'a DataType) -> Result<Self, String> {
        Ok(match (field.kind(), target) {
            (Kind::Bool, DataType::Boolean) => Self::Bool,
            (
                Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 | Kind::Uint32 | Kind::Fixed32,
                DataType::Int32,
            ) => Self::Int32,
            (
                Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 | Kind::Uint64 | Kind::Fixed64,
                DataType::Int64,
            ) => Self::Int64,
            (Kind::Float, DataType::Float32) => Self::Float32,
            (Kind::Double, DataType::Float64) => Self::Float64,
            (Kind::String, DataType::Utf8) => Self::Utf8,
            (Kind::Bytes, DataType::Binary) => Self::Binary,
            (Kind::Enum(e), DataType::Utf8) => Self::Enum(e),
            (Kind::Message(m), DataType::Timestamp(TimeUnit::Microsecond, Some(_)))
                if seconds_and_nanos(&m, "Timestamp") =>
            {
                Self::Timestamp(m)
            }
            (Kind::Message(m), DataType::Duration(TimeUnit::Microsecond))
                if seconds_and_nanos(&m, "Duration") =>
            {
                Self::Duration(m)
            }
            (Kind::Message(m), DataType::Struct(fields)) => Self::Message(m, fields),
            _ => {
                return Err(format!(
                    "{} does not map to {target} here",
                    field.full_name()
                ));
            }
        })
    }
}
