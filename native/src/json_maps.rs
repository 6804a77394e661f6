//! `MAP<STRING, STRING>` fields of JSON records, read in bulk for the partial JSON reader.
//!
//! pyarrow's JSON reader cannot read a map, so the Python side reads a struct's other fields
//! in bulk and its maps record by record (`formats/json_partial.py`), which was two thirds of
//! a JSON order record's decoding. Here the named top-level fields of each record are read as
//! maps of strings, every other field skipped, with the values the Python path gives: entries
//! in the object's order, a JSON `null` value as a null value, a missing field or a `null`
//! field as a null map.
//!
//! A record goes back to the Python path (its row is "declined") at the least doubt, where
//! the two readers could differ: any parse error (serde_json refuses what Python's `json`
//! module reads, such as `NaN`, and the reverse never passes unnoticed), a payload that is not
//! an object, a field named twice, a key repeated in a map, a value that is not a string or
//! `null` (Spark turns numbers and objects into their text; Python does that work), and a
//! `\u` escape of a UTF-16 surrogate anywhere in the text (the Python path checks for those
//! first, by the same rule).

use std::collections::HashSet;
use std::fmt;

use arrow_array::builder::{MapBuilder, MapFieldNames, StringBuilder};
use arrow_array::{Array, ArrayRef};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};

use crate::framing::Payloads;

/// One field's map: its entries in order, or `None` for a null map.
type Entries = Option<Vec<(String, Option<String>)>>;

/// Read the maps named `fields` out of every payload: one map array per field, and the rows
/// declined (null payloads give null maps, not declined).
pub fn read(payloads: &dyn Array, fields: &[String]) -> Result<(Vec<ArrayRef>, Vec<u32>), String> {
    let payloads = Payloads::of(payloads)?;
    let mut builders: Vec<MapBuilder<StringBuilder, StringBuilder>> = fields
        .iter()
        .map(|_| {
            let names = MapFieldNames {
                entry: "entries".to_string(),
                key: "key".to_string(),
                value: "value".to_string(),
            };
            MapBuilder::new(Some(names), StringBuilder::new(), StringBuilder::new())
        })
        .collect();
    let mut declined = Vec::new();
    for row in 0..payloads.len() {
        let maps = match payloads.get(row) {
            None => None,
            Some(text) => {
                let read = record(text, fields);
                if read.is_none() {
                    declined.push(u32::try_from(row).map_err(|e| e.to_string())?);
                }
                read
            }
        };
        for (index, builder) in builders.iter_mut().enumerate() {
            let entries = maps.as_ref().and_then(|m| m[index].as_ref());
            append(builder, entries).map_err(|e| e.to_string())?;
        }
    }
    let arrays = builders
        .iter_mut()
        .map(|b| std::sync::Arc::new(b.finish()) as ArrayRef)
        .collect();
    Ok((arrays, declined))
}

fn append(
    builder: &mut MapBuilder<StringBuilder, StringBuilder>,
    entries: Option<&Vec<(String, Option<String>)>>,
) -> Result<(), arrow_schema::ArrowError> {
    match entries {
        None => builder.append(false),
        Some(entries) => {
            for (key, value) in entries {
                builder.keys().append_value(key);
                builder.values().append_option(value.as_deref());
            }
            builder.append(true)
        }
    }
}

/// The named maps of one record, or `None` to decline it.
fn record(text: &[u8], fields: &[String]) -> Option<Vec<Entries>> {
    // Python decodes the whole payload first; serde_json would skip a field's bad bytes.
    if std::str::from_utf8(text).is_err() || escapes_a_surrogate(text) {
        return None;
    }
    let mut deserializer = serde_json::Deserializer::from_slice(text);
    let maps = deserializer
        .deserialize_map(RecordVisitor { fields })
        .ok()?;
    deserializer.end().ok()?;
    Some(maps)
}

/// Python's rule (`json_values._SURROGATE_ESCAPE`): a backslash, `u`, `d` or `D`, then one of
/// `8`-`9`, `a`-`f`, `A`-`F`. It can match an escaped backslash followed by text; declining
/// such a record costs a Python read, never a wrong value.
fn escapes_a_surrogate(text: &[u8]) -> bool {
    text.windows(4).any(|w| {
        w[0] == b'\\'
            && w[1] == b'u'
            && (w[2] == b'd' || w[2] == b'D')
            && matches!(w[3], b'8' | b'9' | b'a'..=b'f' | b'A'..=b'F')
    })
}

struct RecordVisitor<'f> {
    fields: &'f [String],
}

impl<'de> Visitor<'de> for RecordVisitor<'_> {
    type Value = Vec<Entries>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut object: A) -> Result<Self::Value, A::Error> {
        let mut maps: Vec<Entries> = vec![None; self.fields.len()];
        let mut seen = vec![false; self.fields.len()];
        while let Some(key) = object.next_key::<std::borrow::Cow<'de, str>>()? {
            match self.fields.iter().position(|name| *name == key) {
                Some(index) => {
                    if seen[index] {
                        return Err(de::Error::custom("a field named twice"));
                    }
                    seen[index] = true;
                    maps[index] = object.next_value_seed(MapSeed)?;
                }
                None => {
                    object.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(maps)
    }
}

/// One map field's value: `null`, or an object of strings and nulls with distinct keys.
struct MapSeed;

impl<'de> DeserializeSeed<'de> for MapSeed {
    type Value = Entries;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(MapVisitor)
    }
}

struct MapVisitor;

impl<'de> Visitor<'de> for MapVisitor {
    type Value = Entries;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("null or an object of strings")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut object: A) -> Result<Self::Value, A::Error> {
        let mut entries = Vec::new();
        let mut keys = HashSet::new();
        while let Some(key) = object.next_key::<String>()? {
            if !keys.insert(key.clone()) {
                return Err(de::Error::custom("a key repeated"));
            }
            let value = object.next_value::<Option<String>>()?;
            entries.push((key, value));
        }
        Ok(Some(entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Option<Vec<Entries>> {
        record(text.as_bytes(), &["m".to_string()])
    }

    #[test]
    fn maps_of_strings_are_read_in_order_and_the_rest_skipped() {
        let read = one(r#"{"a": [1, {"b": 2.5e3}], "m": {"z": "1", "a": null}, "c": "x"}"#);
        let entries = read.unwrap().remove(0).unwrap();
        assert_eq!(
            entries,
            vec![("z".into(), Some("1".into())), ("a".into(), None)]
        );
    }

    #[test]
    fn a_missing_or_null_field_is_a_null_map() {
        assert_eq!(one(r#"{"a": 1}"#), Some(vec![None]));
        assert_eq!(one(r#"{"m": null}"#), Some(vec![None]));
    }

    #[test]
    fn doubts_are_declined() {
        for text in [
            r#"{"m": {"k": 1}}"#,
            r#"{"m": {"k": "v", "k": "w"}}"#,
            r#"{"m": {}, "m": {}}"#,
            r#"{"m": "text"}"#,
            r#"[1]"#,
            r#"{"a": NaN}"#,
            r#"{"m": {"k": "\ud83d\ude00"}}"#,
            r#"{"m": {}} x"#,
            "",
        ] {
            assert_eq!(one(text), None, "{text}");
        }
        for text in [
            &b"{\"a\": \"\xff\", \"m\": null}"[..],
            &b"\xef\xbb\xbf{}"[..],
        ] {
            assert_eq!(record(text, &["m".to_string()]), None);
        }
    }
}
