//! "Looks like the picture": how close a finished page, drawn at the size of the prompt's first
//! picture, came to it (scored by the worker, `worker/src/likeness.rs`), as the tiles, the ranking
//! and Fix read it.

/// Below this score the differences are worth a Fix: every page made to match its mock in
/// `bench/vision.md` scored at least 0.879 (mean 0.957), while most pages made for another layout
/// or colour scheme scored under 0.85. A page under it is not yet what the picture shows.
pub const GOOD_LIKENESS: f32 = 0.85;

/// Where a page's likeness is.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Likeness {
    /// No finished page yet, or the prompt had no picture.
    #[default]
    None,
    /// Its picture frame draws it, or the worker compares it (queued behind others, perhaps).
    Drawing,
    /// Compared: the score (0–1) and what differs, in words, most important first.
    Done {
        /// 1: looks the same.
        score: f32,
        /// Sentences ("the page is 40 px taller than the picture").
        findings: Vec<String>,
    },
    /// It could not be drawn or compared: why, as a sentence.
    Failed(String),
}

impl Likeness {
    /// The score to rank by: a page that could not be drawn looks like nothing (0); `None` while
    /// there is no picture or the score is not in yet.
    pub fn rank_score(&self) -> Option<f32> {
        match self {
            Self::Done { score, .. } => Some(score.clamp(0.0, 1.0)),
            Self::Failed(_) => Some(0.0),
            Self::None | Self::Drawing => None,
        }
    }

    /// Whether it still stands between a page and a verdict (best of N waits for it).
    pub fn pending(&self) -> bool {
        matches!(self, Self::Drawing)
    }

    /// Whether it is good enough not to ask for a fix: no picture, or a score of at least
    /// [`GOOD_LIKENESS`].
    pub fn good_enough(&self) -> bool {
        match self {
            Self::None => true,
            Self::Done { score, .. } => *score >= GOOD_LIKENESS,
            Self::Drawing | Self::Failed(_) => false,
        }
    }

    /// What differs, when the score is under [`GOOD_LIKENESS`] (what Fix sends).
    pub fn fix_findings(&self) -> Option<&[String]> {
        match self {
            Self::Done { score, findings } if *score < GOOD_LIKENESS && !findings.is_empty() => {
                Some(findings)
            }
            _ => None,
        }
    }

    /// How it reads on a tile: "Looks like the picture: 87 %", or what is going on.
    pub fn label(&self) -> Option<String> {
        match self {
            Self::None => None,
            Self::Drawing => Some("Comparing with the picture…".into()),
            Self::Done { score, .. } => Some(format!("Looks like the picture: {} %", percent(*score))),
            Self::Failed(why) => Some(format!("Could not compare with the picture: {why}")),
        }
    }
}

/// A score as a whole percentage.
fn percent(score: f32) -> u32 {
    // 0–100 after the clamp: the cast cannot truncate or lose a sign.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    {
        (score.clamp(0.0, 1.0) * 100.0).round() as u32
    }
}

/// `finding` with every "N px" measured on the picture as compared (`scale` of its CSS size, at
/// most 320 px wide) said in the picture's own pixels, as the person and the model see it.
pub fn in_picture_px(finding: &str, scale: f32) -> String {
    if scale.is_nan() || scale <= 0.0 || (scale - 1.0).abs() < f32::EPSILON {
        return finding.to_owned();
    }
    let mut out = String::with_capacity(finding.len());
    let mut rest = finding;
    while let Some(at) = rest.find(|c: char| c.is_ascii_digit()) {
        out.push_str(&rest[..at]);
        let digits = rest[at..].find(|c: char| !c.is_ascii_digit()).map_or(rest.len() - at, |n| n);
        let (number, after) = rest[at..].split_at(digits);
        // Only lengths: "0–75 px" has two (the dash joins them), "3 checks" none.
        let is_length = after.starts_with(" px") || after.starts_with('–') || after.starts_with('-');
        match number.parse::<f32>() {
            Ok(n) if is_length => out.push_str(&format!("{}", (n / scale).round())),
            _ => out.push_str(number),
        }
        rest = after;
    }
    out.push_str(rest);
    out
}
