//! Protobuf's wire format read straight into Arrow builders: the fast path of `protobuf.rs`.
//!
//! Why: a `DynamicMessage` per record costs a field map, a `String` per string field and a
//! `HashMap` per map field, and its values are copied once more into the builders; that was
//! most of the 2.5 µs the benchmark's order message took. Here each field of a record is kept
//! as its place in the payload (a slot; the last occurrence wins, as in protobuf) and
//! appended to its builder when the record ends; repeated values go to their builders as
//! they come.
//!
//! The values are `protobuf.rs`'s, built from the same plan rules. What this reader is not
//! sure to read as protobuf would, it declines (an `Err`, and `protobuf.rs` decodes the
//! batch, declining in turn to the Python path): a singular message given twice (protobuf
//! merges the two), two members of one oneof in one record, a known field with another wire
//! type (protobuf skips it), groups, invalid UTF-8, overlong varints, a closed enum's unknown
//! number, a time out of range.

use std::cmp::Ordering;
use std::collections::HashMap;

use arrow_array::{ArrayRef, StructArray};
use arrow_buffer::NullBufferBuilder;
use arrow_schema::{DataType, FieldRef, Fields};
use prost_reflect::{FieldDescriptor, MessageDescriptor};

use crate::protobuf_shared::{FieldLayout, MapLayout, field_layout, list_array, map_array};
use crate::wire_format::{Raw, next_field};
use crate::wire_leaf::{Leaf, SortKey};

/// A repeated field: items go to the item column as they come; the row's count makes the
/// offset when the record ends.
struct WireList {
    offsets: Vec<i32>,
    nulls: NullBufferBuilder,
    item: Leaf,
    field: FieldRef,
    count: usize,
}

/// A map field: the record's entries are kept until it ends, then appended in key order,
/// the last entry of a key winning (as in `protobuf.rs`, where entries come in key order).
struct WireMap {
    offsets: Vec<i32>,
    nulls: NullBufferBuilder,
    keys: Leaf,
    values: Leaf,
    key_default: Raw,
    value_default: Raw,
    entries: FieldRef,
    sorted: bool,
    pending: Vec<(Raw, Raw)>,
    /// The pending entries' keys and indexes, sorted at the record's end (kept for reuse).
    keyed: Vec<(SortKey, usize)>,
}

impl WireMap {
    fn new(field: &FieldDescriptor, target: &DataType) -> Result<Self, String> {
        let map = MapLayout::of(field, target)?;
        let keys = Leaf::of(&map.key_field, &map.key_type)?;
        let values = Leaf::of(&map.value_field, &map.value_type)?;
        Ok(Self {
            key_default: keys.default_raw(&map.key_field),
            value_default: values.default_raw(&map.value_field),
            keys,
            values,
            offsets: vec![0],
            nulls: NullBufferBuilder::new(0),
            entries: map.entries,
            sorted: map.sorted,
            pending: Vec::new(),
            keyed: Vec::new(),
        })
    }

    /// Keep one entry (`start..end` of `buf`): fields 1 and 2, the last of each winning.
    fn take(&mut self, buf: &[u8], start: usize, end: usize) -> Result<(), String> {
        let (mut key, mut value) = (self.key_default, self.value_default);
        let mut value_seen = false;
        let mut pos = start;
        while pos < end {
            let (number, raw) = next_field(&buf[..end], &mut pos)?;
            let leaf = match number {
                1 => &self.keys,
                2 => &self.values,
                _ => continue,
            };
            if raw.wire() != leaf.wire() {
                return Err(format!("wire type {} in a map entry", raw.wire()));
            }
            if number == 1 {
                key = raw;
            } else if leaf.merges() && value_seen {
                return Err("a map entry's message value given twice".into());
            } else {
                value = raw;
                value_seen = true;
            }
        }
        self.pending.push((key, value));
        Ok(())
    }

    fn end_row(&mut self, buf: &[u8]) -> Result<(), String> {
        let mut keyed = std::mem::take(&mut self.keyed);
        keyed.clear();
        for (index, (key, _)) in self.pending.iter().enumerate() {
            keyed.push((self.keys.sort_key(*key)?, index));
        }
        // Stable: entries of one key stay in the order they came, and the last one is kept.
        keyed.sort_by(|a, b| a.0.cmp(&b.0, buf));
        let mut count = 0;
        for (position, (key, index)) in keyed.iter().enumerate() {
            let next = keyed.get(position + 1);
            if next.is_some_and(|(other, _)| key.cmp(other, buf) == Ordering::Equal) {
                continue;
            }
            let (key_raw, value_raw) = self.pending[*index];
            self.keys.append(key_raw, buf)?;
            self.values.append(value_raw, buf)?;
            count += 1;
        }
        self.pending.clear();
        self.keyed = keyed;
        push_offset(&mut self.offsets, count)?;
        self.nulls.append_non_null();
        Ok(())
    }

    fn finish(&mut self) -> Result<ArrayRef, String> {
        let (keys, values) = (self.keys.finish()?, self.values.finish()?);
        let (offsets, nulls) = (&mut self.offsets, &mut self.nulls);
        map_array(&self.entries, self.sorted, keys, values, offsets, nulls)
    }
}

fn push_offset(offsets: &mut Vec<i32>, count: usize) -> Result<(), String> {
    let last = offsets.last().copied().unwrap_or(0);
    let end = i32::try_from(count)
        .ok()
        .and_then(|count| last.checked_add(count))
        .ok_or("more than 2^31 items in one batch")?;
    offsets.push(end);
    Ok(())
}

enum Shape {
    Single(Leaf),
    List(Box<WireList>),
    Map(Box<WireMap>),
}

struct WireChild {
    shape: Shape,
    /// Null when not set (the field tracks presence), else `default`.
    null_unset: bool,
    default: Raw,
    /// The index of its oneof in `WireMessage::oneof_set`, if it is a member of one.
    oneof: Option<usize>,
    /// The record's last value of a single field.
    slot: Option<Raw>,
}

/// In `WireMessage::by_number`: a field of the message that Spark did not ask for.
const UNREAD: u16 = u16::MAX;

/// Accept a field Spark did not ask for only as protobuf's parser would read it, a well-formed
/// message body: arriving otherwise, protobuf sets it aside as an unknown field, which the
/// Python path refuses at a message's top level, as spark-protobuf does (and the body of a
/// message that does not parse fails the record there).
fn check_unread(raw: Raw, buf: &[u8]) -> Result<(), String> {
    let Raw::Len(start, end) = raw else {
        return Err(format!("wire type {} for a field not read", raw.wire()));
    };
    let body = &buf[start..end];
    let mut pos = 0;
    while pos < body.len() {
        next_field(body, &mut pos)?;
    }
    Ok(())
}

/// A struct column read from a message's wire format.
pub struct WireMessage {
    /// Child index + 1 by field number (0: unknown; `UNREAD`: a field Spark did not ask for),
    /// for numbers below `by_number.len()`.
    by_number: Vec<u16>,
    children: Vec<WireChild>,
    /// Which child set each oneof in the current record.
    oneof_set: Vec<Option<usize>>,
    nulls: NullBufferBuilder,
    fields: Fields,
}

impl WireMessage {
    /// Plan the columns of `fields` (the target struct) from `message`'s fields; the rules
    /// that refuse a schema (required fields, explicit defaults, groups) were checked by
    /// `protobuf.rs`'s plan, which is built first.
    pub fn new(message: &MessageDescriptor, fields: &Fields) -> Result<Self, String> {
        if fields.is_empty() {
            return Err(format!(
                "a struct without fields for {}",
                message.full_name()
            ));
        }
        let mut children = Vec::with_capacity(fields.len());
        let mut numbers = Vec::with_capacity(fields.len());
        let mut oneofs: HashMap<String, usize> = HashMap::new();
        for target in fields.iter() {
            let (field, layout) = field_layout(message, target)?;
            let shape = match layout {
                FieldLayout::Map => Shape::Map(Box::new(WireMap::new(&field, target.data_type())?)),
                FieldLayout::List(element) => Shape::List(Box::new(WireList {
                    offsets: vec![0],
                    nulls: NullBufferBuilder::new(0),
                    item: Leaf::of(&field, element.data_type())?,
                    field: element,
                    count: 0,
                })),
                FieldLayout::Single => Shape::Single(Leaf::of(&field, target.data_type())?),
            };
            let default = match &shape {
                Shape::Single(leaf) => leaf.default_raw(&field),
                _ => Raw::Len(0, 0),
            };
            let oneof = match field.containing_oneof() {
                // A member Spark left out could be the one that wins: prost reads that.
                Some(oneof) if oneof.fields().any(|f| fields.find(f.name()).is_none()) => {
                    return Err(format!("{} has members not read", oneof.full_name()));
                }
                Some(oneof) => {
                    let count = oneofs.len();
                    Some(*oneofs.entry(oneof.full_name().to_string()).or_insert(count))
                }
                None => None,
            };
            numbers.push(field.number());
            children.push(WireChild {
                shape,
                null_unset: field.supports_presence(),
                default,
                oneof,
                slot: None,
            });
        }
        // The message's fields Spark did not ask for (a message with no fields is left out).
        let unread: Vec<u32> = message
            .fields()
            .map(|f| f.number())
            .filter(|n| !numbers.contains(n))
            .collect();
        let highest = numbers.iter().chain(&unread).copied().max().unwrap_or(0);
        if highest > 4096 {
            return Err("field numbers above 4096 are read by prost".into());
        }
        let mut by_number = vec![0_u16; highest as usize + 1];
        for (index, number) in numbers.iter().enumerate() {
            by_number[*number as usize] = u16::try_from(index + 1).map_err(|e| e.to_string())?;
        }
        for number in unread {
            by_number[number as usize] = UNREAD;
        }
        Ok(Self {
            by_number,
            children,
            oneof_set: vec![None; oneofs.len()],
            nulls: NullBufferBuilder::new(0),
            fields: fields.clone(),
        })
    }

    /// Read one record (a message body) into the columns.
    pub fn decode(&mut self, buf: &[u8]) -> Result<(), String> {
        self.oneof_set.iter_mut().for_each(|set| *set = None);
        let mut pos = 0;
        while pos < buf.len() {
            let (number, raw) = next_field(buf, &mut pos)?;
            let index = match self.by_number.get(number as usize) {
                Some(&UNREAD) => {
                    check_unread(raw, buf)?;
                    continue;
                }
                Some(&slot) if slot > 0 => usize::from(slot - 1),
                _ => continue, // an unknown field
            };
            self.take(index, raw, buf)?;
        }
        self.end_row(buf)
    }

    fn take(&mut self, index: usize, raw: Raw, buf: &[u8]) -> Result<(), String> {
        let child = &mut self.children[index];
        if let Some(oneof) = child.oneof {
            match self.oneof_set[oneof] {
                Some(other) if other != index => {
                    return Err("two members of one oneof in a record".into());
                }
                _ => self.oneof_set[oneof] = Some(index),
            }
        }
        match &mut child.shape {
            Shape::Single(leaf) => {
                if raw.wire() != leaf.wire() {
                    return Err(format!("wire type {} for a {}", raw.wire(), leaf.wire()));
                }
                if leaf.merges() && child.slot.is_some() {
                    return Err("a message field given twice (protobuf merges them)".into());
                }
                child.slot = Some(raw);
            }
            Shape::List(list) => {
                if raw.wire() == list.item.wire() {
                    list.item.append(raw, buf)?;
                    list.count += 1;
                } else if let Raw::Len(start, end) = raw {
                    list.count += list.item.append_packed(&buf[start..end])?;
                } else {
                    return Err(format!("wire type {} for a repeated field", raw.wire()));
                }
            }
            Shape::Map(map) => match raw {
                Raw::Len(start, end) => map.take(buf, start, end)?,
                _ => return Err(format!("wire type {} for a map entry", raw.wire())),
            },
        }
        Ok(())
    }

    fn end_row(&mut self, buf: &[u8]) -> Result<(), String> {
        for child in &mut self.children {
            match &mut child.shape {
                Shape::Single(leaf) => match child.slot.take() {
                    Some(raw) => leaf.append(raw, buf)?,
                    None if child.null_unset => leaf.append_null(),
                    None => leaf.append(child.default, buf)?,
                },
                Shape::List(list) => {
                    push_offset(&mut list.offsets, list.count)?;
                    list.count = 0;
                    list.nulls.append_non_null();
                }
                Shape::Map(map) => map.end_row(buf)?,
            }
        }
        self.nulls.append_non_null();
        Ok(())
    }

    pub fn append_null(&mut self) {
        for child in &mut self.children {
            match &mut child.shape {
                Shape::Single(leaf) => leaf.append_null(),
                Shape::List(list) => {
                    let last = list.offsets.last().copied().unwrap_or(0);
                    list.offsets.push(last);
                    list.nulls.append_null();
                }
                Shape::Map(map) => {
                    let last = map.offsets.last().copied().unwrap_or(0);
                    map.offsets.push(last);
                    map.nulls.append_null();
                }
            }
        }
        self.nulls.append_null();
    }

    pub fn finish(&mut self) -> Result<StructArray, String> {
        let mut columns = Vec::with_capacity(self.children.len());
        for child in &mut self.children {
            columns.push(match &mut child.shape {
                Shape::Single(leaf) => leaf.finish()?,
                Shape::Map(map) => map.finish()?,
                Shape::List(list) => {
                    let values = list.item.finish()?;
                    list_array(&list.field, values, &mut list.offsets, &mut list.nulls)?
                }
            });
        }
        StructArray::try_new(self.fields.clone(), columns, self.nulls.finish())
            .map_err(|e| e.to_string())
    }
}
