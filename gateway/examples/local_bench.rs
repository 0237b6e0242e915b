//! Benchmark of the embedded model, written to a Markdown file:
//! `cargo run --release -p flint-gateway --example local_bench -- --out bench/local.md`.
//!
//! In one run: a bare llama-cpp-2 decode loop (one sequence, greedy, the same model, prompt and
//! threads) against the `local` provider's EventStream, for single-stream decode tokens/s and time
//! to first token; then the provider's aggregate tokens/s with 1, 4 and 8 concurrent streams.

#[cfg(feature = "local")]
#[path = "local_common/mod.rs"]
mod common;

#[cfg(not(feature = "local"))]
fn main() {
    eprintln!("local_bench needs the `local` feature");
    std::process::exit(2);
}

#[cfg(feature = "local")]
fn main() -> anyhow::Result<()> {
    bench::main()
}

#[cfg(feature = "local")]
mod bench {
    use std::fmt::Write as _;
    use std::num::NonZeroU32;
    use std::time::{Duration, Instant};

    use anyhow::{Context, bail};
    use flint_gateway::config::LocalConfig;
    use flint_gateway::local::backend;
    use flint_gateway::providers::local::LocalProvider;
    use flint_protocol::GenParams;
    use llama_cpp_2::context::params::LlamaContextParams;
    use llama_cpp_2::llama_batch::LlamaBatch;
    use llama_cpp_2::model::LlamaModel;
    use llama_cpp_2::model::params::LlamaModelParams;
    use llama_cpp_2::sampling::LlamaSampler;

    use super::common::{self, RunStats};

    const SHORT_PROMPT: &str = "a button that counts clicks";
    const REPEATS: usize = 3;
    const MAX_TOKENS: u32 = 256;

    pub fn main() -> anyhow::Result<()> {
        let out = common::out_path("bench/local.md")?;
        let model_path = common::model_path()?;
        let config = LocalConfig { model_path: Some(model_path.clone()), ..LocalConfig::default() };
        let threads = flint_gateway::local::default_threads();
        let provider = LocalProvider::new(&config);
        if let Some(problem) = provider.problem() {
            bail!("the local model did not load: {problem}");
        }
        let runtime = tokio::runtime::Runtime::new()?;
        let request = common::request(&config, SHORT_PROMPT, greedy());
        let (prompt, _) = provider.render_prompt(&request)?;

        // Cold start of the provider: nothing of the prompt is cached yet.
        let cold = runtime.block_on(common::run_stream(&provider, request.clone()))?;
        let mut bare_runs = Vec::new();
        let mut provider_runs = Vec::new();
        for _ in 0..REPEATS {
            bare_runs.push(bare_decode(&model_path, &prompt, threads)?);
            std::thread::sleep(Duration::from_millis(200));
            provider_runs.push(runtime.block_on(common::run_stream(&provider, request.clone()))?);
            std::thread::sleep(Duration::from_millis(200));
        }
        let bare = RunStats::median(&bare_runs);
        let single = RunStats::median(&provider_runs);

        let mut concurrent = Vec::new();
        for n in [1usize, 4, 8] {
            let (tokens, wall) =
                runtime.block_on(common::run_concurrent(&provider, &config, n, MAX_TOKENS))?;
            concurrent.push((n, tokens, wall));
        }

        let mut md = String::new();
        writeln!(md, "# Embedded model benchmark\n")?;
        common::machine_header(
            &mut md,
            "cargo run --release -p flint-gateway --example local_bench -- --out bench/local.md",
            threads,
        )?;
        writeln!(
            md,
            "Model: `{}`; prompt: \"{SHORT_PROMPT}\" with the tuned system prompt ({} prompt tokens); greedy; up to {MAX_TOKENS} tokens; median of {REPEATS} alternating runs.\n",
            model_path.display(),
            bare.prompt_tokens
        )?;
        writeln!(md, "## Single stream: provider vs bare llama-cpp-2 loop\n")?;
        writeln!(md, "| path | decode tok/s | TTFT ms | tokens |")?;
        writeln!(md, "|---|---:|---:|---:|")?;
        writeln!(
            md,
            "| bare llama-cpp-2 loop | {:.1} | {:.1} | {} |",
            bare.decode_tps, bare.ttft_ms, bare.tokens
        )?;
        writeln!(
            md,
            "| provider (EventStream), prompt cache warm | {:.1} | {:.1} | {} |",
            single.decode_tps, single.ttft_ms, single.tokens
        )?;
        writeln!(
            md,
            "| provider (EventStream), first request (cold) | {:.1} | {:.1} | {} |",
            cold.decode_tps, cold.ttft_ms, cold.tokens
        )?;
        writeln!(
            md,
            "\nProvider / bare decode: **{:.3}×** (target ≥ 0.95×). TTFT warm {:.1} ms, cold {:.1} ms (target ≤ 100 ms).\n",
            single.decode_tps / bare.decode_tps,
            single.ttft_ms,
            cold.ttft_ms
        )?;
        writeln!(md, "## Concurrent streams (one batch per step)\n")?;
        writeln!(
            md,
            "Each stream: same prompt, temperature 0.7, its own seed, up to {MAX_TOKENS} tokens; aggregate = all tokens / wall time.\n"
        )?;
        writeln!(md, "| streams | tokens | wall s | aggregate tok/s | × one stream |")?;
        writeln!(md, "|---:|---:|---:|---:|---:|")?;
        let one = concurrent[0].1 as f64 / concurrent[0].2.as_secs_f64();
        for (n, tokens, wall) in &concurrent {
            let tps = *tokens as f64 / wall.as_secs_f64();
            writeln!(md, "| {n} | {tokens} | {:.2} | {tps:.1} | {:.2}× |", wall.as_secs_f64(), tps / one)?;
        }
        if let Some(engine) = provider.engine() {
            let cached = engine.stats().prompt_tokens_cached.load(std::sync::atomic::Ordering::Relaxed);
            writeln!(md, "\nPrompt tokens served from the prompt cache during the run: {cached}.")?;
        }
        common::write_out(&out, &md)?;
        print!("{md}");
        Ok(())
    }

    fn greedy() -> GenParams {
        GenParams {
            max_tokens: Some(MAX_TOKENS),
            temperature: Some(0.0),
            seed: Some(1),
            ..GenParams::default()
        }
    }

    /// The reference: load, prefill the whole prompt in one batch, decode greedily one token per
    /// call, as llama.cpp's simple example does.
    fn bare_decode(path: &std::path::Path, prompt: &str, threads: usize) -> anyhow::Result<RunStats> {
        let backend = backend().map_err(anyhow::Error::msg)?;
        let model = LlamaModel::load_from_file(backend, path, &LlamaModelParams::default())
            .context("bare loop: loading the model")?;
        let threads = threads as i32;
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(4096))
            .with_n_batch(512)
            .with_n_threads(threads)
            .with_n_threads_batch(threads);
        let mut ctx = model.new_context(backend, params).context("bare loop: context")?;
        let vocab = model.vocab();
        let start = Instant::now();
        let tokens = vocab.tokenize(prompt.as_bytes(), false, true);
        let mut batch = LlamaBatch::new(512, 1);
        batch.add_sequence(&tokens, 0, false)?;
        ctx.decode(&mut batch)?;
        let mut sampler = LlamaSampler::greedy();
        let mut pos = tokens.len() as i32;
        let mut first = None;
        let mut generated = 0u32;
        let mut last_at = start;
        let mut piece = Vec::new();
        while generated < MAX_TOKENS {
            let token = sampler.sample(&ctx, batch.n_tokens() - 1);
            if vocab.is_eog(token) {
                break;
            }
            piece.clear();
            vocab.token_to_piece_into(token, &mut piece, false, None);
            generated += 1;
            last_at = Instant::now();
            first.get_or_insert(last_at);
            batch.clear();
            batch.add(token, pos, &[0], true)?;
            pos += 1;
            ctx.decode(&mut batch)?;
        }
        let first = first.unwrap_or(last_at);
        Ok(RunStats::from_times(start, first, last_at, generated, tokens.len()))
    }
}
