//! React roots a project makes itself. An entry that mounts itself (`main.tsx` calling
//! `createRoot(…).render(<App />)`) holds its root where the preview cannot reach it, so a streaming
//! page swapped for the next one (`public/preview-swap.js`) would leave the old app mounted on a
//! detached node, its timers and effects still running. The project's modules therefore import
//! React DOM's client through [`ROOTS_KEY`], a module that is the vendored client with each root
//! it makes also kept in `globalThis.__flintRoots`, which the swap unmounts. The mount Flint writes
//! for a component entry keeps its root itself (`__flintRoot`, `flint_protocol::project`).

/// The specifier project modules import `react-dom/client` by, in the preview: a scope no
/// vendored package is published under (were one ever named so, this mapping takes its place).
pub const ROOTS_KEY: &str = "@flint/react-dom-client";

/// The module [`ROOTS_KEY`] maps to: `react-dom/client`, its `createRoot` and `hydrateRoot` keeping
/// each root (named and default exports alike: models write both `import { createRoot }` and
/// `import ReactDOM from 'react-dom/client'`).
pub const ROOTS_MODULE: &str = "import client, * as all from \"react-dom/client\";\n\
export * from \"react-dom/client\";\n\
const kept = (root) => ((globalThis.__flintRoots ??= []).push(root), root);\n\
export function createRoot(container, options) { return kept(all.createRoot(container, options)); }\n\
export function hydrateRoot(container, children, options) { return kept(all.hydrateRoot(container, children, options)); }\n\
export default { ...client, createRoot, hydrateRoot };\n";
