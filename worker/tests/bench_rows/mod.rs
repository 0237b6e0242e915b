//! What the worker's benchmarks share: a clock that works natively and in a browser worker,
//! printing, timing, and a markdown row of a median and a p95.

/// Milliseconds on a monotonic clock.
#[cfg(target_arch = "wasm32")]
pub fn now_ms() -> f64 {
    use wasm_bindgen::JsCast;
    js_sys::global()
        .unchecked_into::<web_sys::WorkerGlobalScope>()
        .performance()
        .map_or_else(js_sys::Date::now, |p| p.now())
}

#[cfg(not(target_arch = "wasm32"))]
pub fn now_ms() -> f64 {
    use std::sync::OnceLock;
    use std::time::Instant;
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_secs_f64() * 1e3
}

#[cfg(target_arch = "wasm32")]
pub fn print(text: &str) {
    wasm_bindgen_test::console_log!("{text}");
}

#[cfg(not(target_arch = "wasm32"))]
pub fn print(text: &str) {
    println!("{text}");
}

/// One line of a benchmark's table.
pub struct Row {
    /// What was measured.
    pub name: String,
    /// The target it is held to.
    pub target: &'static str,
    /// Milliseconds, one per sample.
    pub samples: Vec<f64>,
}

impl Row {
    /// `| name | target | median | p95 | samples |`.
    pub fn cells(&self) -> String {
        let mut s = self.samples.clone();
        s.sort_by(f64::total_cmp);
        let at = |q: f64| s[((s.len() - 1) as f64 * q).round() as usize];
        format!("| {} | {} | {:.3} | {:.3} | {} |", self.name, self.target, at(0.5), at(0.95), s.len())
    }
}

/// Times `run` `reps` times; each sample is the mean over `batch` calls, because browsers round
/// `performance.now()` to 0.1 ms.
pub fn time(reps: usize, batch: usize, mut run: impl FnMut()) -> Vec<f64> {
    run();
    (0..reps)
        .map(|_| {
            let start = now_ms();
            for _ in 0..batch {
                run();
            }
            (now_ms() - start) / batch as f64
        })
        .collect()
}
