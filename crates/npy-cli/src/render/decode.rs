//! Element bytes (already in native byte order) to the `f64` values a picture is drawn from.

use anyhow::bail;
use clap::ValueEnum;
use npy_core::value::{f16_to_f64, x87_to_f64};
use npy_core::{ByteOrder, DType, ScalarKind};

/// Which value of a complex number is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Part {
    Real,
    Imag,
    /// The magnitude, `hypot(re, im)`.
    Abs,
    /// The phase in radians, `atan2(im, re)`.
    Angle,
}

/// How one element's native-order bytes become a number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Number {
    Bool,
    U8,
    I8,
    U16,
    I16,
    U32,
    I32,
    U64,
    I64,
    F16,
    F32,
    F64,
    /// x87 80-bit extended precision in the first 10 of `itemsize` bytes.
    LongDouble,
}

/// Decodes elements of one dtype into `f64` values (complex: the chosen part).
#[derive(Clone, Debug)]
pub struct Decoder {
    number: Number,
    /// Complex elements are two numbers; `part` says which value to draw.
    complex: Option<Part>,
    itemsize: usize,
    /// Whether the elements are bools (drawn with the range fixed to 0..1).
    pub is_bool: bool,
}

impl Decoder {
    /// The decoder for elements of `dtype`, or a clear refusal for what has no
    /// numeric value (strings, records, datetimes, big-endian long doubles).
    pub fn new(dtype: &DType, part: Part) -> anyhow::Result<Decoder> {
        let DType::Scalar(scalar) = dtype else {
            bail!(
                "cannot draw a structured array ({}): pictures need numbers",
                dtype.header_repr()
            );
        };
        let size = scalar.itemsize;
        let float = |size: usize| -> Option<Number> {
            match size {
                2 => Some(Number::F16),
                4 => Some(Number::F32),
                8 => Some(Number::F64),
                // On x86-64 Linux numpy's long double is x87 extended precision.
                12 | 16 if scalar.byte_order == ByteOrder::Little => Some(Number::LongDouble),
                _ => None,
            }
        };
        let (number, complex) = match (scalar.kind, size) {
            (ScalarKind::Bool, 1) => (Some(Number::Bool), None),
            (ScalarKind::UInt, 1) => (Some(Number::U8), None),
            (ScalarKind::Int, 1) => (Some(Number::I8), None),
            (ScalarKind::UInt, 2) => (Some(Number::U16), None),
            (ScalarKind::Int, 2) => (Some(Number::I16), None),
            (ScalarKind::UInt, 4) => (Some(Number::U32), None),
            (ScalarKind::Int, 4) => (Some(Number::I32), None),
            (ScalarKind::UInt, 8) => (Some(Number::U64), None),
            (ScalarKind::Int, 8) => (Some(Number::I64), None),
            (ScalarKind::Float, size) => (float(size), None),
            (ScalarKind::Complex, size) if size % 2 == 0 => (float(size / 2), Some(part)),
            _ => (None, None),
        };
        let Some(number) = number else {
            bail!(
                "cannot draw {} values: pictures need bool, integer, float or complex numbers",
                dtype.header_repr()
            );
        };
        Ok(Decoder {
            number,
            complex,
            itemsize: size,
            is_bool: number == Number::Bool,
        })
    }

    /// Whether the elements are complex (a `--part` of them is drawn).
    pub fn is_complex(&self) -> bool {
        self.complex.is_some()
    }

    /// Whether the drawn values are floats (images in [0, 1], not bytes).
    pub fn is_float(&self) -> bool {
        matches!(
            self.number,
            Number::F16 | Number::F32 | Number::F64 | Number::LongDouble
        )
    }

    /// Bytes per element.
    pub fn itemsize(&self) -> usize {
        self.itemsize
    }

    /// Appends the value of every whole element in `bytes` (native order) to `out`.
    pub fn decode(&self, bytes: &[u8], out: &mut Vec<f64>) {
        let size = self.itemsize;
        let Some(part) = self.complex else {
            decode_numbers(self.number, size, bytes, out);
            return;
        };
        let half = size / 2;
        let start = out.len();
        // Real and imaginary parts interleaved, then folded to the chosen part.
        decode_numbers(self.number, half, bytes, out);
        let mut read = start;
        let mut write = start;
        while read + 1 < out.len() {
            let (re, im) = (out[read], out[read + 1]);
            out[write] = match part {
                Part::Real => re,
                Part::Imag => im,
                Part::Abs => re.hypot(im),
                Part::Angle => im.atan2(re),
            };
            read += 2;
            write += 1;
        }
        out.truncate(write);
    }
}

/// Appends each `size`-byte number of `bytes` as an `f64`.
fn decode_numbers(number: Number, size: usize, bytes: &[u8], out: &mut Vec<f64>) {
    macro_rules! each {
        ($t:ty) => {
            out.extend(bytes.chunks_exact(std::mem::size_of::<$t>()).map(|b| {
                <$t>::from_ne_bytes(b.try_into().expect("chunk of the type's size")) as f64
            }))
        };
    }
    match number {
        Number::Bool => out.extend(bytes.iter().map(|&b| f64::from(u8::from(b != 0)))),
        Number::U8 => out.extend(bytes.iter().map(|&b| f64::from(b))),
        Number::I8 => each!(i8),
        Number::U16 => each!(u16),
        Number::I16 => each!(i16),
        Number::U32 => each!(u32),
        Number::I32 => each!(i32),
        Number::U64 => each!(u64),
        Number::I64 => each!(i64),
        Number::F16 => out.extend(
            bytes
                .chunks_exact(2)
                .map(|b| f16_to_f64(u16::from_ne_bytes([b[0], b[1]]))),
        ),
        Number::F32 => each!(f32),
        Number::F64 => each!(f64),
        Number::LongDouble => out.extend(bytes.chunks_exact(size).map(|b| {
            let mut x87 = [0u8; 10];
            x87.copy_from_slice(&b[..10]);
            x87_to_f64(&x87)
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(descr: &str, part: Part, bytes: &[u8]) -> Vec<f64> {
        let dtype = DType::parse(descr).unwrap();
        let mut out = vec![-1.0];
        Decoder::new(&dtype, part).unwrap().decode(bytes, &mut out);
        out.remove(0);
        out
    }

    #[test]
    fn numbers_decode_in_native_order() {
        let bytes: Vec<u8> = [1.5f32, -2.0]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        assert_eq!(decode("<f4", Part::Abs, &bytes), [1.5, -2.0]);
        let bytes: Vec<u8> = [-7i16, 300].iter().flat_map(|v| v.to_ne_bytes()).collect();
        assert_eq!(decode("<i2", Part::Abs, &bytes), [-7.0, 300.0]);
        assert_eq!(decode("|b1", Part::Abs, &[0, 1, 2]), [0.0, 1.0, 1.0]);
        // 1.0 as a half float.
        assert_eq!(decode("<f2", Part::Abs, &0x3c00u16.to_ne_bytes()), [1.0]);
    }

    #[test]
    fn complex_numbers_give_the_chosen_part() {
        let bytes: Vec<u8> = [3.0f64, -4.0]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        assert_eq!(decode("<c16", Part::Real, &bytes), [3.0]);
        assert_eq!(decode("<c16", Part::Imag, &bytes), [-4.0]);
        assert_eq!(decode("<c16", Part::Abs, &bytes), [5.0]);
        assert_eq!(decode("<c16", Part::Angle, &bytes), [(-4f64).atan2(3.0)]);
    }

    #[test]
    fn values_without_numbers_are_refused() {
        for descr in ["|S3", "<U2", "<M8[s]", "[('a', '<i4')]", ">f16"] {
            let dtype = DType::parse(descr).unwrap();
            let err = Decoder::new(&dtype, Part::Abs).unwrap_err().to_string();
            assert!(err.contains("cannot draw"), "{descr}: {err}");
        }
    }
}
