//! What is drawn: the selection of an array's elements (from its header
//! alone), the kind of picture it makes, and its title.

use anyhow::bail;
use npy_core::{DType, ElementLocator, Header, ScalarKind, shape_repr};

use super::args::PictureArgs;
use super::decode::Decoder;
use super::reduce::Plane;
use super::select::Selection;
use super::stream::{DataSource, Reader};
use crate::progress::Progress;

/// What a picture shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Heat,
    Image { channels: usize },
    Line,
    Hist,
}

/// An opened array and what of it is drawn.
pub struct Subject<'a> {
    /// The dtype of one element (a subarray dtype's base).
    pub element: &'a DType,
    pub decoder: Decoder,
    pub selection: Selection,
    pub kind: Kind,
    /// What the picture is of, for titles: file, member, shape, dtype, index.
    pub title: String,
}

impl<'a> Subject<'a> {
    pub fn new(
        header: &'a Header,
        name: &str,
        picture: &PictureArgs,
    ) -> anyhow::Result<Subject<'a>> {
        // The geometry comes from the header alone: the data is read later,
        // from whatever source holds it.
        let locator = ElementLocator::new(header)?;
        let element = locator.element();
        let decoder = Decoder::new(element, picture.part)?;
        let shape = locator.shape();
        // Each axis's stride in elements: where its index 1 lies (axes of one
        // element have no step; an empty array has nothing to draw).
        let strides: Vec<usize> = (0..shape.len())
            .map(|axis| {
                let mut index = vec![0; shape.len()];
                index[axis] = 1;
                locator
                    .byte_offset(&index)
                    .map_or(0, |offset| offset / decoder.itemsize())
            })
            .collect();
        let selection = Selection::new(shape, &strides, picture.index.as_ref())?;
        let is_u8 =
            matches!(element, DType::Scalar(s) if s.kind == ScalarKind::UInt && s.itemsize == 1);
        let shape = &selection.shape;
        let kind = match shape.len() {
            _ if picture.hist => Kind::Hist,
            _ if selection.len() == 0 => {
                bail!(
                    "nothing to draw: the selection has shape {} and no elements",
                    shape_repr(shape)
                )
            }
            1 => Kind::Line,
            2 => Kind::Heat,
            3 if matches!(shape[2], 3 | 4) && (is_u8 || picture.rgb) => {
                Kind::Image { channels: shape[2] }
            }
            0 => bail!("a 0-d array is one value: nothing to draw (try --hist, or `npy show`)"),
            n => bail!(
                "cannot draw a {n}-D selection of shape {}: choose a 2-D slice with --index \
                 (e.g. --index {}), or draw a histogram with --hist{}",
                shape_repr(shape),
                std::iter::repeat_n("0", n - 2)
                    .chain([":", ":"])
                    .collect::<Vec<_>>()
                    .join(","),
                if n == 3 {
                    "; (H, W, 3|4) arrays are images when uint8, or floats with --rgb"
                } else {
                    ""
                }
            ),
        };
        if picture.rgb && !matches!(kind, Kind::Image { .. }) {
            bail!(
                "--rgb draws (H, W, 3) or (H, W, 4) arrays; this selection has shape {}",
                shape_repr(shape)
            );
        }
        if picture.rgb && !is_u8 && !decoder.is_float() {
            bail!(
                "--rgb needs floats in [0, 1] (or uint8), not {} values",
                element.header_repr()
            );
        }
        let mut title = format!("{name}  {} {}", shape_repr(shape), element.descr());
        if let Some(index) = &picture.index {
            title.push_str(&format!("  [{}]", index.text()));
        }
        if decoder.is_complex() {
            title.push_str(&format!("  {:?}", picture.part).to_lowercase());
        }
        Ok(Subject {
            element,
            decoder,
            selection,
            kind,
            title,
        })
    }

    /// A reader of the selection's data; the progress bar expects `passes` reads of it.
    pub fn reader<'s>(
        &self,
        source: &'s mut dyn DataSource,
        picture: &PictureArgs,
        quiet: bool,
    ) -> Reader<'s> {
        // A histogram without a given range reads once for the range, once to count.
        let passes = if picture.hist && (picture.vmin.is_none() || picture.vmax.is_none()) {
            2
        } else {
            1
        };
        let bytes = (self.selection.len() * self.decoder.itemsize() * passes) as u64;
        Reader::new(
            source,
            self.element,
            self.decoder.clone(),
            Progress::bytes(bytes, "render", quiet),
        )
    }

    /// The selection as a plane of pixels (2-D, or 3-D with channels last).
    pub fn plane(&self) -> Plane {
        let s = &self.selection;
        Plane {
            base: s.offset,
            rows: s.shape[0],
            cols: s.shape[1],
            row_stride: s.strides[0],
            col_stride: s.strides[1],
            channels: s.shape.get(2).copied().unwrap_or(1),
            channel_stride: s.strides.get(2).copied().unwrap_or(1),
        }
    }
}
