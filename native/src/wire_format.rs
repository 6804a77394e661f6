//! Protobuf's wire format, read in place: varints, fixed-width values and the byte ranges
//! of length-delimited ones, with no copy and no allocation.

pub(crate) const VARINT: u8 = 0;
pub(crate) const FIXED64: u8 = 1;
pub(crate) const LEN: u8 = 2;
pub(crate) const FIXED32: u8 = 5;

/// A field's value as it sits in the payload; `Len` is a range of the message's bytes.
#[derive(Clone, Copy)]
pub(crate) enum Raw {
    Varint(u64),
    Fixed64(u64),
    Len(usize, usize),
    Fixed32(u32),
}

impl Raw {
    pub(crate) fn wire(self) -> u8 {
        match self {
            Self::Varint(_) => VARINT,
            Self::Fixed64(_) => FIXED64,
            Self::Len(..) => LEN,
            Self::Fixed32(_) => FIXED32,
        }
    }
}

/// Read one varint; an error past the end or past ten bytes (or a tenth byte above 1).
#[inline(always)]
pub(crate) fn varint(buf: &[u8], pos: &mut usize) -> Result<u64, String> {
    // Tags and most lengths and numbers are one byte.
    if let Some(&byte) = buf.get(*pos)
        && byte < 0x80
    {
        *pos += 1;
        return Ok(u64::from(byte));
    }
    long_varint(buf, pos)
}

#[inline(never)]
fn long_varint(buf: &[u8], pos: &mut usize) -> Result<u64, String> {
    let mut value: u64 = 0;
    for shift in (0..70).step_by(7) {
        let byte = *buf.get(*pos).ok_or("a truncated varint")?;
        *pos += 1;
        if shift == 63 && byte > 1 {
            return Err("an overlong varint".into());
        }
        value |= u64::from(byte & 0x7F) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err("an overlong varint".into())
}

fn fixed<const N: usize>(buf: &[u8], pos: &mut usize) -> Result<[u8; N], String> {
    let bytes = buf
        .get(*pos..*pos + N)
        .ok_or("a truncated fixed-width value")?;
    *pos += N;
    Ok(bytes.try_into().expect("N bytes"))
}

/// Read the value of a field of wire type `wire` at `pos`; groups are declined.
#[inline(always)]
pub(crate) fn read_raw(buf: &[u8], pos: &mut usize, wire: u8) -> Result<Raw, String> {
    Ok(match wire {
        VARINT => Raw::Varint(varint(buf, pos)?),
        FIXED64 => Raw::Fixed64(u64::from_le_bytes(fixed::<8>(buf, pos)?)),
        FIXED32 => Raw::Fixed32(u32::from_le_bytes(fixed::<4>(buf, pos)?)),
        LEN => {
            let length = usize::try_from(varint(buf, pos)?).map_err(|e| e.to_string())?;
            let start = *pos;
            let end = start.checked_add(length).filter(|end| *end <= buf.len());
            let end = end.ok_or("a length past the end of the message")?;
            *pos = end;
            Raw::Len(start, end)
        }
        other => return Err(format!("wire type {other} (groups are read by prost)")),
    })
}

/// The next field of `buf` from `pos`: its number and value.
#[inline(always)]
pub(crate) fn next_field(buf: &[u8], pos: &mut usize) -> Result<(u64, Raw), String> {
    let key = varint(buf, pos)?;
    let number = key >> 3;
    if number == 0 || number > 0x1FFF_FFFF {
        return Err(format!("field number {number}"));
    }
    Ok((number, read_raw(buf, pos, (key & 7) as u8)?))
}

/// The `seconds` (1) and `nanos` (2) of a `Timestamp` or `Duration` body.
pub(crate) fn seconds_nanos(buf: &[u8]) -> Result<(i64, i32), String> {
    let (mut seconds, mut nanos) = (0_i64, 0_i32);
    let mut pos = 0;
    while pos < buf.len() {
        match next_field(buf, &mut pos)? {
            (1, Raw::Varint(v)) => seconds = v as i64,
            (2, Raw::Varint(v)) => nanos = v as i32,
            (1 | 2, raw) => return Err(format!("wire type {} for seconds or nanos", raw.wire())),
            _ => {}
        }
    }
    Ok((seconds, nanos))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(bytes: &[u8]) -> Result<(u64, usize), String> {
        let mut pos = 0;
        varint(bytes, &mut pos).map(|value| (value, pos))
    }

    #[test]
    fn varints_of_one_to_ten_bytes_are_read() {
        assert_eq!(read(&[0x07]), Ok((7, 1)));
        assert_eq!(read(&[0x96, 0x01]), Ok((150, 2)));
        let max = [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01];
        assert_eq!(read(&max), Ok((u64::MAX, 10)));
    }

    #[test]
    fn truncated_and_overlong_varints_are_declined() {
        assert!(read(&[]).is_err());
        assert!(read(&[0x80]).is_err());
        assert!(read(&[0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02]).is_err());
        assert!(read(&[0x80; 11]).is_err());
    }

    #[test]
    fn lengths_past_the_end_and_groups_are_declined() {
        let mut pos = 0;
        assert!(next_field(&[0x0A, 0x05, 0x01], &mut pos).is_err());
        pos = 0;
        assert!(next_field(&[0x0B], &mut pos).is_err()); // start group
        pos = 0;
        assert!(next_field(&[0x00, 0x01], &mut pos).is_err()); // field number 0
    }

    #[test]
    fn seconds_and_nanos_keep_the_last_and_skip_unknown_fields() {
        let body = [0x08, 0x01, 0x10, 0x02, 0x08, 0x03, 0x18, 0x09];
        assert_eq!(seconds_nanos(&body), Ok((3, 2)));
        assert!(seconds_nanos(&[0x09, 0, 0, 0, 0, 0, 0, 0, 0]).is_err()); // fixed64 seconds
    }
}
