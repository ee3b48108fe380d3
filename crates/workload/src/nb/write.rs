//! A binding's value written as the CQL type its bind marker has, as the Java driver would encode
//! the Java object nosqlbench binds.

use super::function::Val;
use crate::value::{write_whole, CqlType};

/// Why a binding's value cannot be written as a marker's type.
pub fn mismatch(ty: &CqlType, v: &Val) -> Option<String> {
    let fits = match ty {
        CqlType::Ascii | CqlType::Text => true,
        CqlType::Blob => matches!(v, Val::Text(_)) || v.as_long().is_some(),
        CqlType::Uuid | CqlType::Timeuuid => matches!(v, Val::Uuid(_)),
        CqlType::Float | CqlType::Double | CqlType::Decimal => v.as_double().is_some(),
        CqlType::Boolean
        | CqlType::TinyInt
        | CqlType::SmallInt
        | CqlType::Int
        | CqlType::BigInt
        | CqlType::Counter
        | CqlType::Varint
        | CqlType::Timestamp
        | CqlType::Date
        | CqlType::Time => v.as_long().is_some(),
        _ => false,
    };
    (!fits).then(|| format!("gives a {} value, which cannot be sent as {ty:?}", v.kind()))
}

/// Writes `v` as `ty` (its bytes, without the length); [`mismatch`] was checked when binding.
pub fn write(ty: &CqlType, v: &Val, out: &mut Vec<u8>) {
    let long = || v.as_long().unwrap_or(0);
    match ty {
        CqlType::Ascii | CqlType::Text => match v {
            Val::Text(t) => out.extend_from_slice(t.as_bytes()),
            other => out.extend_from_slice(other.to_text().as_bytes()),
        },
        CqlType::Blob => match v {
            Val::Text(t) => out.extend_from_slice(t.as_bytes()),
            _ => out.extend_from_slice(&long().to_be_bytes()),
        },
        // A java.util.Date or Instant bound to a date is its day.
        CqlType::Date => {
            let days = match v {
                Val::Instant(ms) => ms.div_euclid(86_400_000),
                _ => long(),
            };
            write_whole(ty, days, out);
        }
        CqlType::Float => {
            out.extend_from_slice(&(v.as_double().unwrap_or(0.0) as f32).to_be_bytes())
        }
        CqlType::Double => out.extend_from_slice(&v.as_double().unwrap_or(0.0).to_be_bytes()),
        CqlType::Uuid | CqlType::Timeuuid => {
            if let Val::Uuid(u) = v {
                out.extend_from_slice(&u.to_be_bytes());
            }
        }
        _ => {
            write_whole(ty, long(), out);
        }
    }
}
