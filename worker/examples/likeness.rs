//! The worker's likeness check, natively, for `tests/bench/vision.mjs`: reads one JSON object a
//! line on stdin (`{"id", "mock": RgbaImage, "page": RgbaImage}`, the images as the worker gets
//! them) and writes one a line (`{"id", "score", "findings", "problem", "ms"}`).
//!   cargo run -p flint-worker --example likeness < requests.jsonl

use std::io::{BufRead, Write};
use std::time::Instant;

use flint_protocol::worker::RgbaImage;
use flint_worker::likeness::request::answer;
use serde_json::{Value, json};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let start = Instant::now();
    let clock = || start.elapsed().as_secs_f64() * 1000.0;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for line in std::io::stdin().lock().lines() {
        let mut request: Value = serde_json::from_str(&line?)?;
        let mock: RgbaImage = serde_json::from_value(request["mock"].take())?;
        let page: RgbaImage = serde_json::from_value(request["page"].take())?;
        let report = answer(0, &mock, &page, clock);
        let line = json!({
            "id": request["id"], "score": report.score, "findings": report.findings,
            "problem": report.problem, "ms": report.ms,
        });
        writeln!(out, "{line}")?;
    }
    Ok(())
}
