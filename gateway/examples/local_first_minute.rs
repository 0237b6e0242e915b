//! The embedded model's first minute: how long the app's request takes to a finished page (the
//! stream's end, when the page is final and runs) on the 20 quality prompts, with the provider's
//! own length limit, as a person on a fresh machine meets it:
//! `cargo run --release -p flint-gateway --example local_first_minute -- --out PATH`.
//!
//! Written as a section of `bench/local-quality.md`; run once on a build without the early stop and
//! once with it, on the same machine, to compare their medians.

#[cfg(feature = "local")]
#[allow(dead_code)]
#[path = "local_common/mod.rs"]
mod common;

#[cfg(not(feature = "local"))]
fn main() {
    eprintln!("local_first_minute needs the `local` feature");
    std::process::exit(2);
}

#[cfg(feature = "local")]
fn main() -> anyhow::Result<()> {
    use std::fmt::Write as _;
    use std::time::Instant;

    use flint_gateway::config::LocalConfig;
    use flint_gateway::providers::local::LocalProvider;
    use flint_protocol::prompt::SYSTEM_PROMPT;
    use flint_protocol::{ChatMessage, GenParams, Role};

    let out = common::out_path("bench/local-first-minute.md")?;
    let config = LocalConfig { model_path: Some(common::model_path()?), ..LocalConfig::default() };
    let provider = LocalProvider::new(&config);
    if let Some(problem) = provider.problem() {
        anyhow::bail!("the local model did not load: {problem}");
    }
    let runtime = tokio::runtime::Runtime::new()?;
    let prompts: Vec<String> =
        serde_json::from_str(include_str!("../../tests/fixtures/quality-prompts.json"))?;
    // No length in the request: the provider's own limit, as the app sends it.
    let params = GenParams { seed: Some(42), ..GenParams::default() };
    let mut rows = String::new();
    let (mut seconds, mut tokens, mut pages, mut loops) = (Vec::new(), Vec::new(), 0, 0);
    for (i, prompt) in prompts.iter().enumerate() {
        let mut request = common::request(&config, prompt, params.clone());
        request.messages.insert(0, ChatMessage::new(Role::System, SYSTEM_PROMPT));
        let started = Instant::now();
        let (stats, text) = runtime.block_on(common::run_stream_text(&provider, request))?;
        let took = started.elapsed().as_secs_f64();
        let page = whole_page(&text);
        pages += usize::from(page);
        loops += usize::from(stats.interrupted);
        let lines = text.lines().count();
        writeln!(
            rows,
            "| {} | {prompt} | {took:.1} | {} | {lines} | {} | {} |",
            i + 1,
            stats.tokens,
            if page { "yes" } else { "no" },
            if stats.interrupted { "a loop, stopped" } else { "its end" }
        )?;
        eprintln!("[{}/{}] {prompt}: {took:.1} s, {} tokens", i + 1, prompts.len(), stats.tokens);
        seconds.push(took);
        tokens.push(f64::from(stats.tokens));
    }
    let mut md = String::new();
    writeln!(md, "## Time to a finished page (the app's request)\n")?;
    common::machine_header(
        &mut md,
        "cargo run --release -p flint-gateway --example local_first_minute -- --out PATH",
        flint_gateway::local::default_threads(),
    )?;
    writeln!(
        md,
        "Seed 42, the provider's defaults and its limit of {} tokens. **Median {:.1} s** to the end of the \
         stream, median {:.0} tokens; {pages}/{} answers hold a whole `<html>…</html>` document; {loops} were \
         stopped as loops.\n",
        config.max_tokens,
        median(&mut seconds),
        median(&mut tokens),
        prompts.len()
    )?;
    writeln!(md, "| # | prompt | seconds | tokens | lines | whole page | ended at |")?;
    writeln!(md, "|---:|---|---:|---:|---:|---|---|")?;
    md.push_str(&rows);
    common::write_out(&out, &md)?;
    print!("{md}");
    Ok(())
}

/// A whole document: `<html` and, after it, `</html>`.
#[cfg(feature = "local")]
fn whole_page(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower.find("<html").is_some_and(|at| lower[at..].contains("</html>"))
}

#[cfg(feature = "local")]
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => 0.0,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}
