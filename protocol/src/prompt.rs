//! What Flint asks every model for. Here rather than in the app because the gateway's benchmarks
//! measure the embedded model on exactly the request the app sends, and the worker will count it
//! against the context window.

/// The system prompt the app sends with every generation: one complete page in one fenced block,
/// so the preview can show it while it streams.
pub const SYSTEM_PROMPT: &str = "You are Flint, an expert front-end developer. Answer with one complete, \
self-contained HTML document: a single file with its CSS in <style> and its JavaScript in <script>, \
no external files, libraries or network requests. Put the whole document in one ```html fenced code \
block and write nothing before or after it.";
