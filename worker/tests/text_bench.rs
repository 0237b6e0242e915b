//! Speed of the worker's text work against its targets, written as a markdown table.
//!
//! Not a timed test: both entries are `#[ignore]`d and only print. In headless Chromium, inside a
//! dedicated worker as in the product (`--nocapture` shows the table):
//!
//! ```text
//! CHROMEDRIVER=/usr/bin/chromedriver \
//! CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
//! cargo test --release -p flint-worker --target wasm32-unknown-unknown --test text_bench \
//!   -- --include-ignored --nocapture
//! ```
//!
//! Natively: `cargo test --release -p flint-worker --test text_bench -- --ignored --nocapture`.
//! Inputs are generated deterministically (`text_inputs`): no fixture files.

use flint_protocol::worker::{BudgetRequest, Tokenizer, WorkerRequest};
use flint_worker::diff::{apply_hunks, diff};
use flint_worker::edits::{EditedFile, Outcome, parse_blocks};
use flint_worker::session::{Next, Session};
use flint_worker::tokens::{IncrementalCount, TokenCounter};

mod bench_rows;
mod text_inputs;

use bench_rows::{Row, now_ms, print, time};
use text_inputs::{answer, chunks, page, revise};

#[cfg(target_arch = "wasm32")]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_dedicated_worker);

/// Streams `answer` through a worker [`Session`] in 64-byte appends, 1 ms apart, flushing when
/// the session asks, as the glue does; the mean time per append (ms) and the updates sent.
fn stream_through_session(counter: TokenCounter, base: Option<&str>, answer: &str) -> (f64, usize) {
    let mut session = Session::new();
    session.set_counter(counter);
    let mut now = 0.0;
    let mut updates = 0;
    let mut due: Option<f64> = None;
    session
        .handle(WorkerRequest::Reset { stream: 1, preview_only: false, base: base.map(str::to_owned) }, now);
    let pieces = chunks(answer, 64);
    let start = now_ms();
    for piece in &pieces {
        now += 1.0;
        if due.is_some_and(|at| now >= at) {
            due = None;
            updates += session.flush(now).len();
        }
        match session.text(1, piece, now) {
            Next::Send(sent) => updates += sent.len(),
            Next::FlushIn(ms) => due = Some(now + ms),
            Next::Idle | Next::Budget(_) | Next::Page(..) => {}
        }
    }
    if let Next::Send(sent) = session.handle(WorkerRequest::Finish { stream: 1 }, now + 1.0) {
        updates += sent.len();
    }
    ((now_ms() - start) / pieces.len() as f64, updates)
}

fn bench() {
    let start = now_ms();
    let counter = TokenCounter::o200k();
    let build_ms = now_ms() - start;

    let context = page(1, 500_000);
    let tokens = counter.count(&context);
    let count = time(15, 1, || assert_eq!(counter.count(&context), tokens));

    let chunk_len = 4096;
    let mut chunk_samples = Vec::new();
    for _ in 0..3 {
        let mut inc = IncrementalCount::new(counter);
        let chunks = chunks(&context, chunk_len);
        // Batches of 8 pushes (about 32 KB), per push.
        for group in chunks.chunks(8) {
            let start = now_ms();
            for chunk in group {
                inc.push(chunk);
            }
            chunk_samples.push((now_ms() - start) / group.len() as f64);
        }
    }

    let old = page(2, 500_000);
    let new = revise(&old, 3);
    let hunks = diff(&old, &new);
    assert!(hunks.len() > 10 && apply_hunks(&old, &new, &vec![true; hunks.len()]) == new);
    let diff_ms = time(15, 1, || assert_eq!(diff(&old, &new).len(), hunks.len()));

    let file = page(4, 200_000);
    let text = answer(&file, 50);
    let apply = || {
        let blocks = parse_blocks(&text).blocks;
        let mut edited = EditedFile::new(file.as_str());
        let applied = blocks.iter().filter(|b| matches!(edited.apply(b), Outcome::Applied(_))).count();
        assert_eq!(applied, 50);
        edited.text()
    };
    let edits_ms = time(15, 4, || assert!(apply().len() > file.len()));

    // The streaming path: a whole-page answer with and without exact token counting, and an
    // edit answer applied live to a 200 KB page; per 64-byte append, everything included (parse,
    // counts, previews, edits, diff at the end).
    let whole = format!("```html\n{}```\n", page(5, 200_000));
    let mut plain = Vec::new();
    let mut counted = Vec::new();
    let mut edit = Vec::new();
    let mut edit_updates = 0;
    for _ in 0..5 {
        plain.push(stream_through_session(TokenCounter::estimating(), None, &whole).0);
        counted.push(stream_through_session(counter, None, &whole).0);
        let (ms, sent) = stream_through_session(counter, Some(&file), &text);
        edit.push(ms);
        edit_updates = sent;
    }
    let median = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let ratio = median(&counted) / median(&plain);

    // A keystroke in the prompt: only the prompt is recounted, the 500 KB file is not.
    let mut session = Session::new();
    session.set_counter(counter);
    let full = BudgetRequest {
        revision: 1,
        window: 400_000,
        reserved_output: 8_192,
        tokenizer: Tokenizer::O200k,
        system: Some("You are Flint.".into()),
        goal: Some("A page.".into()),
        file: Some(context.clone()),
        history: Some(Vec::new()),
        prompt: Some("make it".into()),
    };
    session.handle(WorkerRequest::Budget(full), 0.0);
    let mut typed = String::from("make it");
    let keystroke = time(30, 20, || {
        typed.push('x');
        let request = BudgetRequest {
            revision: 2,
            window: 400_000,
            reserved_output: 8_192,
            tokenizer: Tokenizer::O200k,
            prompt: Some(typed.clone()),
            ..BudgetRequest::default()
        };
        assert!(matches!(session.handle(WorkerRequest::Budget(request), 0.0), Next::Budget(_)));
    });

    let rows = [
        Row {
            name: "build the o200k tokenizer (once)".into(),
            target: "off the critical path",
            samples: vec![build_ms],
        },
        Row {
            name: format!("count a {} KB context ({tokens} tokens)", context.len() / 1000),
            target: "≤ 15",
            samples: count,
        },
        Row { name: "count an appended 4 KB chunk".into(), target: "≤ 0.2", samples: chunk_samples },
        Row {
            name: format!("diff two {} KB versions ({} hunks)", old.len() / 1000, hunks.len()),
            target: "≤ 3",
            samples: diff_ms,
        },
        Row {
            name: format!("apply 50 edit blocks to a {} KB file", file.len() / 1000),
            target: "≤ 5",
            samples: edits_ms,
        },
        Row {
            name: format!("stream a {} KB page, per 64 B append, estimated counts", whole.len() / 1000),
            target: "baseline",
            samples: plain,
        },
        Row {
            name: format!("the same with exact o200k answer counts ({ratio:.2}× the baseline)"),
            target: "≤ 1.5× baseline",
            samples: counted,
        },
        Row {
            name: format!(
                "stream 50 edit blocks applied live to a {} KB page, per 64 B append ({edit_updates} updates)",
                file.len() / 1000
            ),
            target: "≤ 0.2",
            samples: edit,
        },
        Row {
            name: format!("a keystroke in the prompt with a {} KB file counted", context.len() / 1000),
            target: "≤ 1",
            samples: keystroke,
        },
    ];
    let mut table = String::from(
        "| benchmark | target (ms) | median (ms) | p95 (ms) | samples |\n|---|---|---|---|---|\n",
    );
    for row in &rows {
        table.push_str(&row.cells());
        table.push('\n');
    }
    print(&table);
}

#[cfg(target_arch = "wasm32")]
#[wasm_bindgen_test::wasm_bindgen_test]
#[ignore = "a benchmark: run with --include-ignored"]
fn text_work_speed() {
    bench();
}

#[cfg(not(target_arch = "wasm32"))]
#[test]
#[ignore = "a benchmark: run with --ignored --nocapture"]
fn text_work_speed() {
    bench();
}
