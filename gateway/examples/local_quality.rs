//! How often the embedded model answers with a complete HTML document in one fenced block, on a fixed
//! list of 20 prompts: `cargo run --release -p flint-gateway --example local_quality -- --out
//! bench/local-quality.md`.
//!
//! Each prompt runs three times through the provider: as the app sends it (its system message, which
//! the provider combines with the tuned one, and the HTML primer); with no client system message (the
//! tuned prompt alone); and with neither the app's message nor the primer, to show what the primer
//! buys. Seeded, so the file is reproducible on one machine.

// Shared with local_bench, which uses the helpers this example does not.
#[cfg(feature = "local")]
#[allow(dead_code)]
#[path = "local_common/mod.rs"]
mod common;

#[cfg(not(feature = "local"))]
fn main() {
    eprintln!("local_quality needs the `local` feature");
    std::process::exit(2);
}

#[cfg(feature = "local")]
fn main() -> anyhow::Result<()> {
    quality::main()
}

/// The fixed prompt list: small, self-contained pages a playground user would ask for (shared with
/// the browser's quality benchmark, `tests/bench/judge.mjs`).
#[cfg(feature = "local")]
fn prompts() -> Vec<String> {
    serde_json::from_str(include_str!("../../tests/fixtures/quality-prompts.json"))
        .expect("the prompt list is JSON")
}

#[cfg(feature = "local")]
mod quality {
    use std::fmt::Write as _;

    use anyhow::bail;
    use flint_gateway::config::LocalConfig;
    use flint_gateway::providers::local::{HTML_PRIMER, LocalProvider};
    use flint_protocol::prompt::SYSTEM_PROMPT;
    use flint_protocol::{ChatMessage, GenParams, Role};

    use super::common;
    use super::prompts;

    const MAX_TOKENS: u32 = 1024;

    /// What one answer contains.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Verdict {
        /// One closed fence whose content is a whole `<html>…</html>` document.
        Complete,
        /// A fence that opens but never closes, or a document cut off.
        Truncated,
        /// A fenced block, but not a whole document (a fragment, or CSS/JS only).
        Fragment,
        /// No fenced block.
        NoFence,
    }

    fn judge(answer: &str) -> Verdict {
        let mut rest = answer;
        let mut saw_fence = false;
        while let Some(open) = rest.find("```") {
            saw_fence = true;
            let after = &rest[open + 3..];
            let body_start = after.find('\n').map_or(after.len(), |i| i + 1);
            let body = &after[body_start..];
            let Some(close) = body.find("```") else { return Verdict::Truncated };
            let code = body[..close].trim().to_ascii_lowercase();
            if code.contains("<html") && code.ends_with("</html>") {
                return Verdict::Complete;
            }
            rest = &body[close + 3..];
        }
        if saw_fence { Verdict::Fragment } else { Verdict::NoFence }
    }

    pub fn main() -> anyhow::Result<()> {
        let out = common::out_path("bench/local-quality.md")?;
        let model_path = common::model_path()?;
        let config = LocalConfig { model_path: Some(model_path), ..LocalConfig::default() };
        let unprimed_config = LocalConfig { prime_html: false, ..config.clone() };
        let primed = LocalProvider::new(&config);
        let unprimed = LocalProvider::new(&unprimed_config);
        if let Some(problem) = primed.problem() {
            bail!("the local model did not load: {problem}");
        }
        let runtime = tokio::runtime::Runtime::new()?;
        let params = GenParams { max_tokens: Some(MAX_TOKENS), seed: Some(42), ..GenParams::default() };
        let modes: [(&str, &LocalProvider, bool); 3] = [
            ("the app's request: its system message + tuned prompt, HTML primer", &primed, true),
            ("tuned prompt alone, HTML primer", &primed, false),
            ("tuned prompt alone, no primer", &unprimed, false),
        ];

        let mut rows = String::new();
        let mut totals = [[0usize; 4]; 3];
        let mut tokens = [0u32; 3];
        let list = prompts();
        for (i, prompt) in list.iter().enumerate() {
            let mut cells = Vec::new();
            for (mode, (label, provider, with_client)) in modes.iter().enumerate() {
                let mut request = common::request(&config, prompt, params.clone());
                if *with_client {
                    request.messages.insert(0, ChatMessage::new(Role::System, SYSTEM_PROMPT));
                }
                let (stats, text) = runtime.block_on(common::run_stream_text(*provider, request))?;
                let verdict = judge(&text);
                totals[mode][verdict as usize] += 1;
                tokens[mode] += stats.tokens;
                cells.push(format!("{verdict:?} ({} tok)", stats.tokens));
                eprintln!("[{}/{}] {prompt} / {label}: {verdict:?}", i + 1, list.len());
            }
            writeln!(rows, "| {} | {} | {} |", i + 1, prompt, cells.join(" | "))?;
        }

        let mut md = String::new();
        writeln!(md, "# Embedded model: complete HTML documents\n")?;
        common::machine_header(
            &mut md,
            "cargo run --release -p flint-gateway --example local_quality -- --out bench/local-quality.md",
            flint_gateway::local::default_threads(),
        )?;
        writeln!(
            md,
            "Model: SmolLM2-135M-Instruct Q4_1 (or `FLINT_MODEL_PATH`). Sampling: the provider's defaults \
             (temperature {}, top-p {}), seed 42, up to {MAX_TOKENS} tokens.\n",
            flint_gateway::providers::local::DEFAULT_TEMPERATURE,
            flint_gateway::providers::local::DEFAULT_TOP_P
        )?;
        writeln!(
            md,
            "**Complete** = the answer has a closed fenced block whose content is a whole \
             `<html>…</html>` document. The HTML primer starts the answer with `{}` and ends it at \
             `</html>`, closing the fence (`prime_html`, on by default).\n",
            HTML_PRIMER.escape_debug()
        )?;
        writeln!(md, "| request | complete | truncated | fragment | no fence | avg tokens |")?;
        writeln!(md, "|---|---:|---:|---:|---:|---:|")?;
        for (mode, (label, _, _)) in modes.iter().enumerate() {
            let t = totals[mode];
            let avg = f64::from(tokens[mode]) / list.len() as f64;
            writeln!(md, "| {label} | **{}/20** | {} | {} | {} | {avg:.0} |", t[0], t[1], t[2], t[3])?;
        }
        writeln!(
            md,
            "\nTuned system prompt:\n\n> {}\n",
            flint_gateway::local::template::TUNED_SYSTEM_PROMPT
        )?;
        writeln!(md, "The app's system message (first column): \"{}\"\n", SYSTEM_PROMPT.escape_debug())?;
        writeln!(md, "| # | prompt | {} |", modes.map(|m| m.0).join(" | "))?;
        writeln!(md, "|---:|---|---|---|---|")?;
        md.push_str(&rows);
        common::write_out(&out, &md)?;
        print!("{md}");
        Ok(())
    }
}
