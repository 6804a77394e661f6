//! Payloads as they come from the source's Arrow batch, and the schema registry's framing:
//! a zero magic byte, a 4-byte big-endian schema id, then the Avro body.

use arrow_array::cast::AsArray;
use arrow_array::{Array, BinaryArray, BinaryViewArray, LargeBinaryArray};
use arrow_schema::DataType;

const MAGIC: u8 = 0;
const HEADER: usize = 5;

/// A binary column of any of Arrow's three layouts.
pub enum Payloads<'a> {
    Binary(&'a BinaryArray),
    Large(&'a LargeBinaryArray),
    View(&'a BinaryViewArray),
}

impl<'a> Payloads<'a> {
    pub fn of(array: &'a dyn Array) -> Result<Self, String> {
        Ok(match array.data_type() {
            DataType::Binary => Self::Binary(array.as_binary::<i32>()),
            DataType::LargeBinary => Self::Large(array.as_binary::<i64>()),
            DataType::BinaryView => Self::View(array.as_binary_view()),
            other => return Err(format!("payloads must be binary, not {other}")),
        })
    }

    pub fn len(&self) -> usize {
        match self {
            Self::Binary(a) => a.len(),
            Self::Large(a) => a.len(),
            Self::View(a) => a.len(),
        }
    }

    /// The payload of `row`, `None` for a null key or value.
    pub fn get(&self, row: usize) -> Option<&'a [u8]> {
        match self {
            Self::Binary(a) => a.is_valid(row).then(|| a.value(row)),
            Self::Large(a) => a.is_valid(row).then(|| a.value(row)),
            Self::View(a) => a.is_valid(row).then(|| a.value(row)),
        }
    }

    pub fn null_count(&self) -> usize {
        match self {
            Self::Binary(a) => a.null_count(),
            Self::Large(a) => a.null_count(),
            Self::View(a) => a.null_count(),
        }
    }
}

/// Split a framed payload into its schema id and body.
pub fn split(payload: &[u8]) -> Result<(u32, &[u8]), String> {
    if payload.len() < HEADER {
        return Err(format!("{} bytes is shorter than the framing's header", payload.len()));
    }
    if payload[0] != MAGIC {
        return Err(format!("unknown magic byte {:#04x}", payload[0]));
    }
    let id = u32::from_be_bytes([payload[1], payload[2], payload[3], payload[4]]);
    Ok((id, &payload[HEADER..]))
}

/// The distinct schema ids of the framed payloads in `array`, in order of first appearance.
pub fn distinct_ids(array: &dyn Array) -> Result<Vec<u32>, String> {
    let payloads = Payloads::of(array)?;
    let mut ids: Vec<u32> = Vec::new();
    let mut last: Option<u32> = None;
    for row in 0..payloads.len() {
        if let Some(payload) = payloads.get(row) {
            let (id, _) = split(payload).map_err(|e| format!("row {row}: {e}"))?;
            if last != Some(id) {
                last = Some(id);
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
        }
    }
    Ok(ids)
}
