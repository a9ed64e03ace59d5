//! One colour per target, the same in every chart of a report and of the
//! trend page. The hue says the language family (Okabe–Ito hues, which stay
//! apart for the common colour blindnesses: Rust vermillion, Go blue,
//! Python bluish green, Node orange, Java reddish purple, anything else
//! grey); targets of one family differ in lightness, so they also differ in
//! greyscale. Colour is never the only cue: every bar and line is named in
//! text as well.

/// A target's place in the palette.
#[derive(Debug, Clone, PartialEq)]
pub struct Swatch {
    pub target: String,
    /// Family name as shown in the legend ("rust", "go", …).
    pub family: &'static str,
    pub rgb: (u8, u8, u8),
}

impl Swatch {
    /// `#rrggbb`.
    pub fn hex(&self) -> String {
        let (r, g, b) = self.rgb;
        format!("#{r:02x}{g:02x}{b:02x}")
    }
}

/// The colours of every target of a run (or of several runs), in order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Palette {
    swatches: Vec<Swatch>,
}

/// Language family hues, in the order families are listed.
const FAMILIES: [(&str, (u8, u8, u8)); 6] = [
    ("rust", (213, 94, 0)),
    ("go", (0, 114, 178)),
    ("python", (0, 158, 115)),
    ("node", (230, 159, 0)),
    ("java", (204, 121, 167)),
    ("other", (110, 110, 110)),
];

/// The family of a language as recorded in a target's manifest (or, for
/// a target without a record, the first part of its `lang-framework` name).
pub fn family(language: &str) -> &'static str {
    let l = language.to_ascii_lowercase();
    match l.split(['-', ' ', '/']).next().unwrap_or("") {
        "rust" => "rust",
        "go" | "golang" => "go",
        "python" | "py" => "python",
        "node" | "nodejs" | "javascript" | "js" | "typescript" | "ts" => "node",
        "java" | "kotlin" | "jvm" => "java",
        _ => "other",
    }
}

impl Palette {
    /// Colours for `(target, language)` pairs. Within a family, targets
    /// are shaded from dark to light in the order given, so the mapping is
    /// stable for a given set of targets.
    pub fn new(targets: &[(&str, &str)]) -> Palette {
        let mut swatches = Vec::with_capacity(targets.len());
        for &(name, language) in targets {
            let fam = family(language);
            let members: Vec<&str> = targets
                .iter()
                .filter(|(_, l)| family(l) == fam)
                .map(|(n, _)| *n)
                .collect();
            let k = members.len();
            let i = members.iter().position(|n| *n == name).unwrap_or(0);
            let base = FAMILIES
                .iter()
                .find(|f| f.0 == fam)
                .map_or((110, 110, 110), |f| f.1);
            swatches.push(Swatch {
                target: name.to_string(),
                family: fam,
                rgb: shade(base, i, k),
            });
        }
        Palette { swatches }
    }

    pub fn swatches(&self) -> &[Swatch] {
        &self.swatches
    }

    /// The target's swatch; a grey one for a name the palette does not know.
    pub fn of(&self, target: &str) -> Swatch {
        self.swatches
            .iter()
            .find(|s| s.target == target)
            .cloned()
            .unwrap_or(Swatch {
                target: target.to_string(),
                family: "other",
                rgb: (110, 110, 110),
            })
    }

    /// The target's index: the `tN` class that ties its bars, lines and
    /// table columns to the "hide" switch of the page.
    pub fn index(&self, target: &str) -> usize {
        self.swatches
            .iter()
            .position(|s| s.target == target)
            .unwrap_or(self.swatches.len())
    }
}

/// Member `i` of `k`: darker first, lighter last, spread over a range wide
/// enough to tell apart in greyscale (up to six members per family).
fn shade(base: (u8, u8, u8), i: usize, k: usize) -> (u8, u8, u8) {
    if k <= 1 {
        return base;
    }
    let t = -0.45 + 0.9 * i as f64 / (k - 1) as f64;
    let mix = |c: u8| -> u8 {
        let c = f64::from(c);
        let v = if t < 0.0 {
            c * (1.0 + t)
        } else {
            c + (255.0 - c) * t * 0.8
        };
        v.round().clamp(0.0, 255.0) as u8
    };
    (mix(base.0), mix(base.1), mix(base.2))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn luma((r, g, b): (u8, u8, u8)) -> f64 {
        0.299 * f64::from(r) + 0.587 * f64::from(g) + 0.114 * f64::from(b)
    }

    #[test]
    fn every_target_gets_its_own_colour_and_family_members_differ_in_greyscale() {
        let t = [
            ("rust-actix", "rust"),
            ("rust-axum", "rust"),
            ("rust-rocket", "rust"),
            ("go-gin", "go"),
            ("python-django", "python"),
            ("python-falcon", "python"),
            ("node-express", "javascript"),
            ("java-spring", "java"),
        ];
        let p = Palette::new(&t);
        let hexes: Vec<String> = p.swatches().iter().map(Swatch::hex).collect();
        for (i, a) in hexes.iter().enumerate() {
            assert!(!hexes[i + 1..].contains(a), "{a} is used twice: {hexes:?}");
        }
        let rust: Vec<f64> = p.swatches()[..3].iter().map(|s| luma(s.rgb)).collect();
        assert!(
            rust[1] - rust[0] > 25.0 && rust[2] - rust[1] > 25.0,
            "{rust:?}"
        );
        assert_eq!(p.of("node-express").family, "node");
        assert_eq!(p.of("go-gin").rgb, (0, 114, 178));
    }
}
