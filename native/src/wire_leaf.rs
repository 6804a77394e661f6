//! The columns of single Protobuf values read from the wire format (`wire_format.rs`): one
//! Arrow builder each, and the conversions `protobuf.rs` makes from dynamic values.

use std::cmp::Ordering;
use std::sync::Arc;

use arrow_array::ArrayRef;
use arrow_array::builder::{
    BinaryBuilder, BooleanBuilder, DurationMicrosecondBuilder, Float32Builder, Float64Builder,
    Int32Builder, Int64Builder, StringBuilder, TimestampMicrosecondBuilder,
};
use arrow_schema::DataType;
use prost_reflect::{FieldDescriptor, Kind, Value};

use crate::protobuf_shared::{EnumNames, LeafType, time_micros};
use crate::protobuf_wire::WireMessage;
use crate::wire_format::{FIXED32, FIXED64, LEN, Raw, VARINT, read_raw, seconds_nanos};

/// How a 32- or 64-bit integer is written.
#[derive(Clone, Copy)]
pub(crate) enum Coding {
    /// `int`, `uint` (both keep the low bits) and enums.
    Varint,
    /// `sint`.
    Zigzag,
    /// `fixed` and `sfixed` (both keep the bits).
    Fixed,
}

/// A column of single values: one Arrow builder and how to read its values.
pub(crate) enum Leaf {
    Bool(BooleanBuilder),
    Int32(Int32Builder, Coding),
    Int64(Int64Builder, Coding),
    Float32(Float32Builder),
    Float64(Float64Builder),
    Utf8(StringBuilder),
    Binary(BinaryBuilder),
    Enum(StringBuilder, Box<EnumNames>),
    Timestamp(TimestampMicrosecondBuilder),
    Duration(DurationMicrosecondBuilder),
    Message(Box<WireMessage>),
}

impl Leaf {
    /// The column of one (non-repeated) value of `field` as Arrow type `target`
    /// (`LeafType`'s pairings, as `protobuf.rs`'s `Column::of`).
    pub(crate) fn of(field: &FieldDescriptor, target: &DataType) -> Result<Self, String> {
        let coding = match field.kind() {
            Kind::Sint32 | Kind::Sint64 => Coding::Zigzag,
            Kind::Fixed32 | Kind::Sfixed32 | Kind::Fixed64 | Kind::Sfixed64 => Coding::Fixed,
            _ => Coding::Varint,
        };
        Ok(match LeafType::of(field, target)? {
            LeafType::Bool => Self::Bool(BooleanBuilder::new()),
            LeafType::Int32 => Self::Int32(Int32Builder::new(), coding),
            LeafType::Int64 => Self::Int64(Int64Builder::new(), coding),
            LeafType::Float32 => Self::Float32(Float32Builder::new()),
            LeafType::Float64 => Self::Float64(Float64Builder::new()),
            LeafType::Utf8 => Self::Utf8(StringBuilder::new()),
            LeafType::Binary => Self::Binary(BinaryBuilder::new()),
            LeafType::Enum(e) => Self::Enum(StringBuilder::new(), Box::new(EnumNames::of(&e))),
            LeafType::Timestamp(_) => {
                Self::Timestamp(TimestampMicrosecondBuilder::new().with_data_type(target.clone()))
            }
            LeafType::Duration(_) => Self::Duration(DurationMicrosecondBuilder::new()),
            LeafType::Message(m, fields) => Self::Message(Box::new(WireMessage::new(&m, fields)?)),
        })
    }

    /// The wire type a single value of this column has.
    pub(crate) fn wire(&self) -> u8 {
        match self {
            Self::Bool(_) | Self::Enum(..) => VARINT,
            Self::Int32(_, Coding::Fixed) | Self::Float32(_) => FIXED32,
            Self::Int64(_, Coding::Fixed) | Self::Float64(_) => FIXED64,
            Self::Int32(..) | Self::Int64(..) => VARINT,
            Self::Utf8(_) | Self::Binary(_) => LEN,
            Self::Timestamp(_) | Self::Duration(_) | Self::Message(_) => LEN,
        }
    }

    /// Whether protobuf merges two occurrences instead of keeping the last.
    pub(crate) fn merges(&self) -> bool {
        matches!(
            self,
            Self::Timestamp(_) | Self::Duration(_) | Self::Message(_)
        )
    }

    /// The value of a field that is not set, where that is not null: protobuf's default.
    pub(crate) fn default_raw(&self, field: &FieldDescriptor) -> Raw {
        match (self.wire(), field.default_value()) {
            (VARINT, Value::EnumNumber(number)) => Raw::Varint(i64::from(number) as u64),
            (VARINT, _) => Raw::Varint(0),
            (FIXED32, _) => Raw::Fixed32(0),
            (FIXED64, _) => Raw::Fixed64(0),
            _ => Raw::Len(0, 0),
        }
    }

    pub(crate) fn append(&mut self, raw: Raw, buf: &[u8]) -> Result<(), String> {
        match (self, raw) {
            (Self::Bool(b), Raw::Varint(v)) => b.append_value(v != 0),
            (Self::Int32(b, coding), raw) => b.append_value(int32(*coding, raw)?),
            (Self::Int64(b, coding), raw) => b.append_value(int64(*coding, raw)?),
            (Self::Float32(b), Raw::Fixed32(v)) => b.append_value(f32::from_bits(v)),
            (Self::Float64(b), Raw::Fixed64(v)) => b.append_value(f64::from_bits(v)),
            (Self::Utf8(b), Raw::Len(start, end)) => b.append_value(utf8(&buf[start..end])?),
            (Self::Binary(b), Raw::Len(start, end)) => b.append_value(&buf[start..end]),
            (Self::Enum(b, names), Raw::Varint(v)) => {
                let number = v as i32;
                match names.get(number) {
                    Some(name) => b.append_value(name),
                    None if names.closed => {
                        return Err(format!("{number} is not a value of a closed enum"));
                    }
                    None => b.append_value(format!("{}{number}", names.unknown)),
                }
            }
            (Self::Timestamp(b), Raw::Len(start, end)) => {
                let (seconds, nanos) = seconds_nanos(&buf[start..end])?;
                b.append_value(time_micros(seconds, nanos)?);
            }
            (Self::Duration(b), Raw::Len(start, end)) => {
                let (seconds, nanos) = seconds_nanos(&buf[start..end])?;
                b.append_value(time_micros(seconds, nanos)?);
            }
            (Self::Message(m), Raw::Len(start, end)) => m.decode(&buf[start..end])?,
            (leaf, raw) => {
                return Err(format!("wire type {} for a {}", raw.wire(), leaf.wire()));
            }
        }
        Ok(())
    }

    /// Append every value of a packed run (`buf` is the run's bytes).
    pub(crate) fn append_packed(&mut self, buf: &[u8]) -> Result<usize, String> {
        let wire = self.wire();
        if !matches!(wire, VARINT | FIXED32 | FIXED64) {
            return Err("a packed run of a length-delimited type".into());
        }
        let mut pos = 0;
        let mut count = 0;
        while pos < buf.len() {
            let raw = read_raw(buf, &mut pos, wire)?;
            self.append(raw, buf)?;
            count += 1;
        }
        Ok(count)
    }

    pub(crate) fn append_null(&mut self) {
        match self {
            Self::Bool(b) => b.append_null(),
            Self::Int32(b, _) => b.append_null(),
            Self::Int64(b, _) => b.append_null(),
            Self::Float32(b) => b.append_null(),
            Self::Float64(b) => b.append_null(),
            Self::Utf8(b) | Self::Enum(b, _) => b.append_null(),
            Self::Binary(b) => b.append_null(),
            Self::Timestamp(b) => b.append_null(),
            Self::Duration(b) => b.append_null(),
            Self::Message(m) => m.append_null(),
        }
    }

    /// The order of map keys (`Int` for integers after wrapping: Spark's values).
    pub(crate) fn sort_key(&self, raw: Raw) -> Result<SortKey, String> {
        Ok(match (self, raw) {
            (Self::Bool(_), Raw::Varint(v)) => SortKey::Int(i64::from(v != 0)),
            (Self::Int32(_, coding), raw) => SortKey::Int(i64::from(int32(*coding, raw)?)),
            (Self::Int64(_, coding), raw) => SortKey::Int(int64(*coding, raw)?),
            (Self::Utf8(_), Raw::Len(start, end)) => SortKey::Bytes(start, end),
            _ => return Err("a map key of another type".into()),
        })
    }

    pub(crate) fn finish(&mut self) -> Result<ArrayRef, String> {
        Ok(match self {
            Self::Bool(b) => Arc::new(b.finish()),
            Self::Int32(b, _) => Arc::new(b.finish()),
            Self::Int64(b, _) => Arc::new(b.finish()),
            Self::Float32(b) => Arc::new(b.finish()),
            Self::Float64(b) => Arc::new(b.finish()),
            Self::Utf8(b) | Self::Enum(b, _) => Arc::new(b.finish()),
            Self::Binary(b) => Arc::new(b.finish()),
            Self::Timestamp(b) => Arc::new(b.finish()),
            Self::Duration(b) => Arc::new(b.finish()),
            Self::Message(m) => Arc::new(m.finish()?),
        })
    }
}

fn int32(coding: Coding, raw: Raw) -> Result<i32, String> {
    Ok(match (coding, raw) {
        (Coding::Varint, Raw::Varint(v)) => v as i32,
        (Coding::Zigzag, Raw::Varint(v)) => {
            let v = v as u32;
            ((v >> 1) as i32) ^ -((v & 1) as i32)
        }
        (Coding::Fixed, Raw::Fixed32(v)) => v as i32,
        _ => return Err(format!("wire type {} for a 32-bit integer", raw.wire())),
    })
}

fn int64(coding: Coding, raw: Raw) -> Result<i64, String> {
    Ok(match (coding, raw) {
        (Coding::Varint, Raw::Varint(v)) => v as i64,
        (Coding::Zigzag, Raw::Varint(v)) => ((v >> 1) as i64) ^ -((v & 1) as i64),
        (Coding::Fixed, Raw::Fixed64(v)) => v as i64,
        _ => return Err(format!("wire type {} for a 64-bit integer", raw.wire())),
    })
}

fn utf8(bytes: &[u8]) -> Result<&str, String> {
    std::str::from_utf8(bytes).map_err(|_| "a string that is not UTF-8".to_string())
}

pub(crate) enum SortKey {
    Int(i64),
    Bytes(usize, usize),
}

impl SortKey {
    pub(crate) fn cmp(&self, other: &Self, buf: &[u8]) -> Ordering {
        match (self, other) {
            (Self::Int(a), Self::Int(b)) => a.cmp(b),
            (Self::Bytes(a, b), Self::Bytes(c, d)) => buf[*a..*b].cmp(&buf[*c..*d]),
            (Self::Int(_), Self::Bytes(..)) => Ordering::Less,
            (Self::Bytes(..), Self::Int(_)) => Ordering::Greater,
        }
    }
}
