//! What the pure-Python decoders refuse that `arrow-avro` lets through: the native result
//! must never hold a row the slow path would have failed. A failed check sends the batch to
//! the slow path, which names the record and says why.

use std::collections::HashSet;

use arrow_array::cast::AsArray;
use arrow_array::types::{Date32Type, Decimal128Type, Int64Type};
use arrow_array::{Array, MapArray};
use arrow_schema::{DataType, TimeUnit};

/// Python's `datetime` spans years 1 to 9999: microseconds from the epoch.
const MIN_MICROS: i64 = -62_135_596_800_000_000;
const MAX_MICROS: i64 = 253_402_300_799_999_999;
/// Python's `date` spans the same years: days from the epoch.
const MIN_DAYS: i32 = -719_162;
const MAX_DAYS: i32 = 2_932_896;

pub fn check(array: &dyn Array) -> Result<(), String> {
    match array.data_type() {
        DataType::Decimal128(precision, _) => array
            .as_primitive::<Decimal128Type>()
            .validate_decimal_precision(*precision)
            .map_err(|e| format!("a decimal does not fit its precision: {e}")),
        DataType::Timestamp(unit, _) => {
            let per_micro = match unit {
                TimeUnit::Second => return Err("timestamps in seconds are not Avro's".into()),
                TimeUnit::Millisecond => 1_000,
                TimeUnit::Microsecond => 1,
                TimeUnit::Nanosecond => return Err("nanosecond timestamps are not read".into()),
            };
            let values = array.to_data();
            let values = arrow_array::PrimitiveArray::<Int64Type>::from(
                values.into_builder().data_type(DataType::Int64).build().map_err(|e| e.to_string())?,
            );
            let (low, high) = (MIN_MICROS / per_micro, MAX_MICROS / per_micro);
            in_range(values.iter().flatten(), low, high, "a timestamp")
        }
        DataType::Date32 => {
            let values = array.as_primitive::<Date32Type>();
            in_range(values.iter().flatten(), MIN_DAYS, MAX_DAYS, "a date")
        }
        DataType::Struct(_) => array.as_struct().columns().iter().try_for_each(|c| check(c.as_ref())),
        DataType::List(_) => check(array.as_list::<i32>().values().as_ref()),
        DataType::LargeList(_) => check(array.as_list::<i64>().values().as_ref()),
        DataType::Map(_, _) => {
            let map = array.as_map();
            unique_keys(map)?;
            check(map.entries())
        }
        DataType::Union(_, _) => {
            let union = array.as_union();
            match union.data_type() {
                DataType::Union(fields, _) => {
                    fields.iter().try_for_each(|(id, _)| check(union.child(id).as_ref()))
                }
                _ => Ok(()),
            }
        }
        DataType::Dictionary(_, _) => Ok(()),
        _ => Ok(()),
    }
}

fn in_range<T: PartialOrd + Copy>(
    values: impl Iterator<Item = T>,
    low: T,
    high: T,
    what: &str,
) -> Result<(), String> {
    for value in values {
        if value < low || value > high {
            return Err(format!("{what} outside the years 1 to 9999"));
        }
    }
    Ok(())
}

/// The Python decoders read a map into a dict, where a repeated key keeps one entry.
fn unique_keys(map: &MapArray) -> Result<(), String> {
    let keys = map.keys();
    let Some(keys) = keys.as_string_opt::<i32>() else { return Ok(()) };
    let offsets = map.value_offsets();
    let mut seen: HashSet<&str> = HashSet::new();
    for window in offsets.windows(2) {
        let (start, end) = (window[0] as usize, window[1] as usize);
        let repeated = match end - start {
            0 | 1 => false,
            // Few keys: compared pairwise, without hashing.
            2..=8 => (start..end)
                .any(|i| (i + 1..end).any(|j| keys.value(i) == keys.value(j))),
            _ => {
                seen.clear();
                !(start..end).all(|index| seen.insert(keys.value(index)))
            }
        };
        if repeated {
            return Err("a map repeats a key".into());
        }
    }
    Ok(())
}
