//! Values to colours, exactly as matplotlib's colormaps give them.

use super::colormap_tables as tables;

/// An RGB colour.
pub type Rgb = [u8; 3];

/// NaN's colour: magenta, in none of the colormaps.
pub const NAN_COLOUR: Rgb = [255, 0, 255];
/// +inf's colour: lime.
pub const POS_INF_COLOUR: Rgb = [0, 255, 0];
/// -inf's colour: cyan.
pub const NEG_INF_COLOUR: Rgb = [0, 255, 255];

/// A colormap by matplotlib's name (`_r` for the reversed one, as in matplotlib).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Colormap {
    table: &'static [Rgb; 256],
}

/// The names `--cmap` accepts (each also with `_r`).
pub const NAMES: [&str; 6] = ["viridis", "magma", "inferno", "plasma", "gray", "RdBu"];

impl std::str::FromStr for Colormap {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let table = match text {
            "viridis" => &tables::VIRIDIS,
            "magma" => &tables::MAGMA,
            "inferno" => &tables::INFERNO,
            "plasma" => &tables::PLASMA,
            "gray" | "grey" => &tables::GRAY,
            "RdBu" => &tables::RDBU,
            "viridis_r" => &tables::VIRIDIS_R,
            "magma_r" => &tables::MAGMA_R,
            "inferno_r" => &tables::INFERNO_R,
            "plasma_r" => &tables::PLASMA_R,
            "gray_r" | "grey_r" => &tables::GRAY_R,
            "RdBu_r" => &tables::RDBU_R,
            _ => {
                return Err(format!(
                    "unknown colormap '{text}' (choose from {}, each also reversed with _r)",
                    NAMES.join(", ")
                ));
            }
        };
        Ok(Colormap { table })
    }
}

impl Colormap {
    /// The colour of table entry `index` (0..256).
    pub fn entry(&self, index: usize) -> Rgb {
        self.table[index]
    }

    /// The colour of `value` on the scale `vmin..vmax`: the same arithmetic
    /// as matplotlib's `Normalize` then `cmap(t, bytes=True)` (below and
    /// above the range take the end colours, vmin == vmax gives the first),
    /// and the special colours for NaN and ±inf.
    pub fn colour(&self, value: f64, vmin: f64, vmax: f64) -> Rgb {
        if value.is_nan() {
            return NAN_COLOUR;
        }
        if value.is_infinite() {
            return if value > 0.0 {
                POS_INF_COLOUR
            } else {
                NEG_INF_COLOUR
            };
        }
        let t = if vmin == vmax {
            0.0
        } else {
            super::reduce::fraction(value, vmin, vmax)
        };
        let scaled = t * 256.0;
        let index = if scaled.is_nan() || scaled < 0.0 {
            0
        } else if scaled >= 256.0 {
            255
        } else {
            scaled as usize
        };
        self.entry(index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ends_and_specials() {
        let viridis: Colormap = "viridis".parse().unwrap();
        assert_eq!(viridis.colour(0.0, 0.0, 1.0), tables::VIRIDIS[0]);
        assert_eq!(viridis.colour(1.0, 0.0, 1.0), tables::VIRIDIS[255]);
        assert_eq!(viridis.colour(-5.0, 0.0, 1.0), tables::VIRIDIS[0]);
        assert_eq!(viridis.colour(0.5, 0.0, 1.0), tables::VIRIDIS[128]);
        assert_eq!(viridis.colour(f64::NAN, 0.0, 1.0), NAN_COLOUR);
        assert_eq!(viridis.colour(f64::NEG_INFINITY, 0.0, 1.0), NEG_INF_COLOUR);
        let reversed: Colormap = "viridis_r".parse().unwrap();
        assert_eq!(reversed.colour(1.0, 0.0, 1.0), tables::VIRIDIS[0]);
        assert_eq!(reversed.colour(0.0, 0.0, 1.0), tables::VIRIDIS[255]);
        assert!("jet".parse::<Colormap>().unwrap_err().contains("RdBu"));
    }

    #[test]
    fn special_colours_are_in_no_colormap() {
        for name in NAMES
            .iter()
            .flat_map(|name| [name.to_string(), format!("{name}_r")])
        {
            let map: Colormap = name.parse().unwrap();
            for index in 0..256 {
                let colour = map.entry(index);
                assert!(![NAN_COLOUR, POS_INF_COLOUR, NEG_INF_COLOUR].contains(&colour));
            }
        }
    }
}
