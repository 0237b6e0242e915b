//! Stand-ins for the files a streaming answer has not written yet.
//!
//! A model writes `App.tsx` first and the components it imports after it; a build that waits for
//! every import to resolve shows nothing until the last file has streamed (7.5 s into an 8.7 s
//! answer at 1k tok/s). While the answer streams, a component file it has not begun, or not
//! finished, is built as a module whose every export taken from it renders a dashed box saying
//! the file is not written yet (true while it streams, and after a cut). Once the answer is whole
//! nothing stands in: a missing file is an error, as always.

use std::collections::BTreeSet;

use super::TransformError;

/// A file that may stand in, and the errors it is reported as when it may not.
pub(super) struct StandIn {
    /// What the placeholder names: the file's path, or the import's root (`components/Stats`).
    pub label: String,
    /// Why it does not build as it is.
    pub errors: Vec<TransformError>,
}

/// Whether a name taken from a module is a component's: the default export, or a name starting
/// with a capital (React's own rule for what JSX renders as a component). A hook, a helper, a
/// constant or a namespace (`*`) is not: a placeholder for it would break the page in ways that
/// say nothing about the file being unwritten.
fn is_component(name: &str) -> bool {
    name == "default" || name.starts_with(|c: char| c.is_ascii_uppercase())
}

/// The placeholder module for `label`, exporting each of `names` (and a default), or `None` when
/// a name taken from it is not a component's. No `<` in it: it travels in an import map inside a
/// `<script>`.
pub(super) fn stand_in(label: &str, names: &BTreeSet<String>) -> Option<String> {
    if !names.iter().all(|name| is_component(name)) {
        return None;
    }
    let label = serde_json::Value::from(label).to_string();
    let mut js = String::from("import { jsxDEV } from \"react/jsx-dev-runtime\";\n");
    js.push_str(&format!("const label = {label};\n"));
    js.push_str(
        "function Pending() {\n  return jsxDEV(\"div\", { \"data-flint-pending\": label, role: \"status\", style: {\n    \
         margin: \"0.5rem 0\", padding: \"0.75rem 1rem\", border: \"1px dashed #94a3b8\", borderRadius: \"6px\",\n    \
         color: \"#475569\", background: \"#f8fafc\", font: \"13px/1.4 system-ui, sans-serif\" },\n    \
         children: label + \" is not written yet\" }, undefined, false);\n}\nexport default Pending;\n",
    );
    let named: Vec<String> = names
        .iter()
        .filter(|name| name.as_str() != "default")
        .map(|name| format!("Pending as {}", serde_json::Value::from(name.as_str())))
        .collect();
    if !named.is_empty() {
        js.push_str(&format!("export {{ {} }};\n", named.join(", ")));
    }
    Some(js)
}

#[cfg(test)]
#[path = "pending_tests.rs"]
mod tests;
