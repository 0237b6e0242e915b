//! Variations and compare: one prompt fanned out into several streams ("lanes"), each painted into
//! its own tile. Plain logic — which lanes to run, which key picks which tile, who won the race —
//! tested natively; each tile is a [`crate::generation::Generation`], run by [`crate::run::Runner`].

use flint_protocol::GenParams;
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

/// Temperatures of best-of-N variations: what is wanted is one page that works, not the widest
/// spread, and hotter sampling makes small models ramble (in `bench/judge.md` the 0.8–1.0 tiles of the
/// embedded model ran to their token limit far more often than the cooler ones).
const BEST_OF_TEMPERATURES: (f32, f32) = (0.2, 0.6);

/// `count` variations of one prompt on `model`: seeds `seed`, `seed + 1`…, temperatures spread
/// evenly over [`TEMPERATURES`] (one variation keeps the model's default sampling).
pub fn variation_lanes(model: &str, count: u8, seed: u64) -> Vec<Lane> {
    spread_lanes(model, count, seed, TEMPERATURES)
}

/// Variations for best of N: as [`variation_lanes`], cooler.
pub fn best_of_lanes(model: &str, count: u8, seed: u64) -> Vec<Lane> {
    spread_lanes(model, count, seed, BEST_OF_TEMPERATURES)
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
            let label = match temperature {
                Some(t) => format!("#{} · t {t:.2}", i + 1),
                None => format!("#{}", i + 1),
            };
            Lane { model: model.to_owned(), params, label }
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
    fn best_of_samples_cooler_with_the_same_seeds() {
        let lanes = best_of_lanes("m", 3, 100);
        let temps: Vec<_> = lanes.iter().map(|l| l.params.temperature).collect();
        assert_eq!(temps, [Some(0.2), Some(0.4), Some(0.6)]);
        let seeds: Vec<_> = lanes.iter().map(|l| l.params.seed).collect();
        assert_eq!(seeds, [Some(100), Some(101), Some(102)]);
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
