//! The worker's likeness check, natively, for `tests/bench/vision.mjs`: reads one JSON object a
//! line on stdin (`{"id", "mock": RgbaImage, "page": RgbaImage}`, the images as the worker gets
//! them) and writes one a line (`{"id", "score", "findings", "problem", "ms", "decode_ms", "compare_ms", "views"}`).
//!   cargo run -p flint-worker --example likeness < requests.jsonl

use std::io::{BufRead, Write};
use std::time::Instant;

use flint_protocol::worker::RgbaImage;
use flint_worker::likeness::compare;
use flint_worker::likeness::request::{answer, decode};
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
        // Again in parts, for the bench's table: decoding the base64 against the comparison itself.
        let started = clock();
        let decoded = decode(&mock).and_then(|m| Ok((m, decode(&page)?)));
        let decoded_ms = clock() - started;
        let views = decoded.ok().map(|(m, p)| {
            let likeness = compare(&m, &p);
            json!([likeness.views.structure, likeness.views.blocks, likeness.views.palette])
        });
        let line = json!({
            "id": request["id"], "score": report.score, "findings": report.findings,
            "problem": report.problem, "ms": report.ms, "decode_ms": decoded_ms,
            "compare_ms": clock() - started - decoded_ms, "views": views,
        });
        writeln!(out, "{line}")?;
    }
    Ok(())
}
