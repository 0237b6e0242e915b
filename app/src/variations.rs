//! Variations and compare: one prompt fanned out into several streams ("lanes"), each painted into
//! its own tile. Plain logic — which lanes to run, which key picks which tile, who won the race —
//! tested natively; each tile is a [`crate::generation::Generation`], run by [`crate::run::Runner`].

use flint_protocol::GenParams;

pub mod grid;
pub use flint_protocol::share::MAX_VARIATIONS;

/// Most models one compare may race.
pub const MAX_COMPARED: usize = 4;

/// Lowest and highest temperature handed out across variations: low enough that the first is a
/// careful answer, high enough that the last differs, not so high that code breaks.
const TEMPERATURES: (f32, f32) = (0.4, 1.0);

/// One stream of a fanned-out prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct Lane {
    /// The model it runs on.
    pub model: String,
    /// Its sampling.
    pub params: GenParams,
    /// What its tile is called (`#3 · t 0.70`, or the model when comparing).
    pub label: String,
}

/// Temperatures of best-of-N tiles 2, 3, 4…: what is wanted is one page that works, not the widest
/// spread, and hotter sampling makes small models ramble (in `bench/judge.md` the 0.8–1.0 tiles of
/// the embedded model ran to their token limit far more often than the cooler ones). Fixed per tile,
/// not spread over N, so that best of 8 runs best of 4's tiles and more: with a spread, a prompt
/// that passed as best of 4 could fail as best of 8 (rows 7, 9, 17 and 18 of an earlier run).
const BEST_OF_TEMPERATURES: [f32; MAX_VARIATIONS as usize - 1] =
    [0.3, 0.4, 0.5, 0.6, 0.35, 0.45, 0.55, 0.25, 0.5];

/// `count` variations of one prompt on `model`: seeds `seed`, `seed + 1`…, temperatures spread
/// evenly over [`TEMPERATURES`] (one variation keeps the model's default sampling).
pub fn variation_lanes(model: &str, count: u8, seed: u64) -> Vec<Lane> {
    spread_lanes(model, count, seed, TEMPERATURES)
}

/// Tiles for best of N, the same tile `i` whatever N: tile 1 is the single run (seed `seed`, the
/// model's default sampling), tile `i` seed `seed + i - 1` at the `i - 1`th of
/// [`BEST_OF_TEMPERATURES`]. Best of N therefore never loses a page that fewer tiles would have
/// found (sampling on a given seed is deterministic).
pub fn best_of_lanes(model: &str, count: u8, seed: u64) -> Vec<Lane> {
    let count = count.clamp(1, MAX_VARIATIONS);
    (0..count)
        .map(|i| {
            let temperature = i.checked_sub(1).map(|t| BEST_OF_TEMPERATURES[usize::from(t)]);
            let params = GenParams { seed: Some(seed + u64::from(i)), temperature, ..GenParams::default() };
            Lane { model: model.to_owned(), params, label: lane_label(i, temperature) }
        })
        .collect()
}

fn lane_label(index: u8, temperature: Option<f32>) -> String {
    match temperature {
        Some(t) => format!("#{} · t {t:.2}", index + 1),
        None => format!("#{}", index + 1),
    }
}

fn spread_lanes(model: &str, count: u8, seed: u64, (low, high): (f32, f32)) -> Vec<Lane> {
    let count = count.clamp(1, MAX_VARIATIONS);
    (0..count)
        .map(|i| {
            let temperature = (count > 1).then(|| {
                let t = low + (high - low) * f32::from(i) / f32::from(count - 1);
                (t * 100.0).round() / 100.0
            });
            let params = GenParams { seed: Some(seed + u64::from(i)), temperature, ..GenParams::default() };
            Lane { model: model.to_owned(), params, label: lane_label(i, temperature) }
        })
        .collect()
}

/// One lane per model for a side-by-side race, all with the same seed so that only the model
/// differs; at most [`MAX_COMPARED`].
pub fn compare_lanes(models: &[String], seed: u64) -> Vec<Lane> {
    models
        .iter()
        .take(MAX_COMPARED)
        .map(|model| Lane {
            model: model.clone(),
            params: GenParams { seed: Some(seed), ..GenParams::default() },
            label: model.clone(),
        })
        .collect()
}

/// The tile a key promotes: `1`…`9` are tiles 1–9, `0` is tile 10; `None` for other keys and for
/// tiles that do not exist.
pub fn tile_for_key(key: &str, tiles: usize) -> Option<usize> {
    let index = match key {
        "0" => 9,
        k if k.len() == 1 => usize::from(k.as_bytes()[0].checked_sub(b'1').filter(|d| *d < 9)?),
        _ => return None,
    };
    (index < tiles).then_some(index)
}

/// One tile's race times, in ms since the prompt was sent.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RaceTimes {
    /// When its preview first showed something.
    pub first_preview_ms: Option<f64>,
    /// When its page was complete.
    pub finished_ms: Option<f64>,
}

/// Who won: the tile that first showed a preview, and the one that finished first.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RaceResult {
    /// First usable preview.
    pub first_preview: Option<usize>,
    /// First complete page.
    pub first_finished: Option<usize>,
}

/// The race's leaders so far (ties go to the lower tile).
pub fn race(times: &[RaceTimes]) -> RaceResult {
    let leader = |pick: fn(&RaceTimes) -> Option<f64>| {
        times
            .iter()
            .enumerate()
            .filter_map(|(i, t)| Some((i, pick(t)?)))
            .min_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)))
            .map(|(i, _)| i)
    };
    RaceResult { first_preview: leader(|t| t.first_preview_ms), first_finished: leader(|t| t.finished_ms) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variations_spread_seeds_and_temperatures() {
        let lanes = variation_lanes("groq/llama", 4, 100);
        let seeds: Vec<_> = lanes.iter().map(|l| l.params.seed).collect();
        assert_eq!(seeds, [Some(100), Some(101), Some(102), Some(103)]);
        let temps: Vec<_> = lanes.iter().map(|l| l.params.temperature).collect();
        assert_eq!(temps, [Some(0.4), Some(0.6), Some(0.8), Some(1.0)]);
        assert!(lanes.iter().all(|l| l.model == "groq/llama"));
        assert_eq!(lanes[2].label, "#3 · t 0.80");
    }

    #[test]
    fn best_of_tiles_are_the_same_whatever_n_and_the_first_is_the_single_run() {
        let four = best_of_lanes("m", 4, 100);
        let eight = best_of_lanes("m", 8, 100);
        assert_eq!(eight[..4], four[..], "best of 8 runs best of 4's tiles first");
        assert_eq!(four[0].params, GenParams { seed: Some(100), ..GenParams::default() }, "a single run");
        assert_eq!(four[0].label, "#1");
        let temps: Vec<_> = four.iter().map(|l| l.params.temperature).collect();
        assert_eq!(temps, [None, Some(0.3), Some(0.4), Some(0.5)]);
        let seeds: Vec<_> = four.iter().map(|l| l.params.seed).collect();
        assert_eq!(seeds, [Some(100), Some(101), Some(102), Some(103)]);
        let all = best_of_lanes("m", MAX_VARIATIONS, 0);
        assert_eq!(all.len(), usize::from(MAX_VARIATIONS));
        assert!(all[1..].iter().all(|l| l.params.temperature.is_some_and(|t| (0.2..=0.6).contains(&t))));
        assert_eq!(all[1].label, "#2 · t 0.30");
    }

    #[test]
    fn one_variation_keeps_the_default_sampling_and_counts_are_clamped() {
        let one = variation_lanes("m", 1, 7);
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].params.temperature, None);
        assert_eq!(one[0].label, "#1");
        assert_eq!(variation_lanes("m", 0, 0).len(), 1);
        assert_eq!(variation_lanes("m", 200, 0).len(), usize::from(MAX_VARIATIONS));
    }

    #[test]
    fn compare_races_each_model_once_with_one_seed() {
        let models: Vec<String> = ["a/1", "b/2", "c/3", "d/4", "e/5"].map(String::from).to_vec();
        let lanes = compare_lanes(&models, 42);
        assert_eq!(lanes.len(), MAX_COMPARED);
        assert!(lanes.iter().all(|l| l.params.seed == Some(42) && l.params.temperature.is_none()));
        assert_eq!(lanes[1].label, "b/2");
    }

    #[test]
    fn digit_keys_pick_tiles() {
        assert_eq!(tile_for_key("1", 10), Some(0));
        assert_eq!(tile_for_key("9", 10), Some(8));
        assert_eq!(tile_for_key("0", 10), Some(9));
        assert_eq!(tile_for_key("0", 9), None, "no tenth tile");
        assert_eq!(tile_for_key("5", 4), None);
        assert_eq!(tile_for_key("a", 10), None);
        assert_eq!(tile_for_key("Enter", 10), None);
    }

    #[test]
    fn the_race_goes_to_the_earliest_and_ties_to_the_lower_tile() {
        let t = |p: Option<f64>, f: Option<f64>| RaceTimes { first_preview_ms: p, finished_ms: f };
        let result = race(&[t(Some(80.0), None), t(Some(40.0), Some(900.0)), t(Some(40.0), Some(700.0))]);
        assert_eq!(result, RaceResult { first_preview: Some(1), first_finished: Some(2) });
        assert_eq!(race(&[t(None, None)]), RaceResult::default());
    }
}
