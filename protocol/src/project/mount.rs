//! What a React project's preview (built by the worker) and its exports (made by the app) share:
//! how the app is mounted, how a module travels as a `data:` URL, and what the worker's build
//! found out about a project ([`ProjectShape`]), so the app never guesses it again.

use serde::{Deserialize, Serialize};

/// The id of the element the app is mounted in, in the preview and in an exported project.
pub const ROOT_ID: &str = "root";

/// What the preview's mount script imports besides the project: React's root and the JSX runtime.
pub const MOUNT_IMPORTS: [&str; 2] = ["react-dom/client", "react/jsx-dev-runtime"];

/// The language a mount script is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MountSource {
    /// Plain JavaScript for the preview, which compiles no JSX of its own: `jsxDEV` called by hand.
    Preview,
    /// TSX for an exported project, which its bundler compiles.
    Tsx,
}

/// In the preview, an error no error boundary caught (a component that throws, or re-renders
/// without end: React stops it after 50 updates) leaves no blank frame: the page says so where the
/// app was, and the console gets the error and the components it passed through (so the checks
/// fail and Fix has something to send). No `<` in it: the worker writes every `<` of the mount
/// script as `\u003c`.
const PREVIEW_STOPPED: &str = "const stopped = (error, info) => {\n\
  const text = String(error && error.message ? error.message : error);\n\
  const where = info && info.componentStack ? info.componentStack.trim().split(\"\\n\").slice(0, 4).join(\"\\n\") : \"\";\n\
  console.error(\"[react] The app stopped: \" + text + (where ? \"\\n\" + where : \"\"));\n\
  const note = document.createElement(\"pre\");\n\
  note.setAttribute(\"data-flint-stopped\", \"\");\n\
  note.style.cssText = \"margin:1rem;padding:1rem;border:1px solid #fca5a5;background:#fef2f2;color:#7f1d1d;font:13px/1.5 ui-monospace,monospace;white-space:pre-wrap\";\n\
  note.textContent = \"The app stopped with an error: \" + text + (where ? \"\\n\" + where : \"\") + \"\\n\\nFix sends it to the model.\";\n\
  document.body.append(note);\n\
};\n";

/// In the preview, an app that renders nothing says so (a blank frame says nothing).
const PREVIEW_EMPTY: &str = "setTimeout(() => {\n\
  const root = document.getElementById(\"root\");\n\
  if (root && root.childNodes.length === 0 && !document.querySelector(\"[data-flint-stopped]\")) {\n\
    console.warn(\"[react] The app rendered nothing.\");\n\
    root.textContent = \"The app rendered nothing.\";\n\
    root.style.cssText = \"margin:1rem;color:#6b7280;font:14px system-ui,sans-serif\";\n\
  }\n\
}, 1500);\n";

/// The module that mounts a project whose entry is a component (`App.tsx`): the entry's default
/// export rendered with no props into the `#root` element by `react-dom/client`'s `createRoot`.
/// `entry` is how the module imports the entry (`"~/App.tsx"`, `"./App.tsx"`).
pub fn mount_module(entry: &str, source: MountSource) -> String {
    let entry = serde_json::Value::from(entry).to_string();
    let root = format!("document.getElementById({})", serde_json::Value::from(ROOT_ID));
    let mut js = String::from("import { createRoot } from \"react-dom/client\";\n");
    match source {
        MountSource::Preview => {
            js.push_str("import { jsxDEV } from \"react/jsx-dev-runtime\";\n");
            js.push_str(&format!("import App from {entry};\n"));
            js.push_str(PREVIEW_STOPPED);
            // The root is kept where the preview runtime finds it: a streaming page swapped for
            // the next one unmounts it first, so the old app's timers and effects stop.
            js.push_str(&format!(
                "const root = createRoot({root}, {{ onUncaughtError: stopped }});\nglobalThis.__flintRoot = root;\n\
                 root.render(jsxDEV(App, {{}}, undefined, false));\n"
            ));
            js.push_str(PREVIEW_EMPTY);
        }
        MountSource::Tsx => {
            js.push_str(&format!("import App from {entry};\n\n"));
            js.push_str(&format!("createRoot({root}!).render(<App />);\n"));
        }
    }
    js
}

/// `js` as a `data:` URL. The URL parser drops tabs and line breaks and reads `%` and `#`, so
/// those (and other control characters) are percent-encoded; everything else goes as it is.
pub fn data_url(js: &str) -> String {
    let mut url = String::with_capacity(js.len() + js.len() / 8 + 32);
    url.push_str("data:text/javascript;charset=utf-8,");
    for c in js.chars() {
        match c {
            '%' | '#' | '\u{0}'..='\u{1f}' | '\u{7f}' => {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    url.push_str(&format!("%{b:02X}"));
                }
            }
            _ => url.push(c),
        }
    }
    url
}

/// What the worker's build of a project found, sent with its page: what an export needs to lay
/// the project out as the preview ran it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProjectShape {
    /// Each file's project path, in the order the files were given (`components/Button.tsx`).
    pub paths: Vec<String>,
    /// The entry's project path.
    pub entry: String,
    /// The entry mounts the app itself (`main.tsx`); otherwise its default export is the app.
    pub mounts: bool,
    /// Every bare specifier the built modules import (`react`, `react-dom/client`, `clsx`).
    pub specifiers: Vec<String>,
    /// Their packages (`react-dom`).
    pub packages: Vec<String>,
    /// Stylesheets no module imports, which the preview applies as the page's own.
    pub loose_styles: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_preview_and_an_export_mount_the_same_way() {
        let preview = mount_module("~/App.tsx", MountSource::Preview);
        assert!(preview.starts_with(
            "import { createRoot } from \"react-dom/client\";\nimport { jsxDEV } from \"react/jsx-dev-runtime\";\n\
             import App from \"~/App.tsx\";\n"
        ));
        assert!(preview.contains(
            "const root = createRoot(document.getElementById(\"root\"), { onUncaughtError: stopped });\n\
             globalThis.__flintRoot = root;\nroot.render(jsxDEV(App, {}, undefined, false));\n"
        ));
        assert!(!preview.contains('<'), "the worker escapes every < of the mount script");
        let tsx = mount_module("./App.tsx", MountSource::Tsx);
        assert!(tsx.contains("import App from \"./App.tsx\";"), "{tsx}");
        assert!(tsx.ends_with("createRoot(document.getElementById(\"root\")!).render(<App />);\n"), "{tsx}");
    }
}
