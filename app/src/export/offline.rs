//! A React project as one page that runs from disk, with no server and no network: the preview's
//! page (built by the worker) given packages whose every module, and Tailwind's script, is a
//! `data:` URL instead of a `/vendor/…` path.
//!
//! Which vendored modules a page needs is found as a browser would load them, without IO here: the
//! project's bare imports and the mount's start the list, and each fetched module adds the
//! vendored modules it imports. The vendored modules import each other by bare specifier (the
//! set-up leaves every other vendored entry as an import for the import map to resolve, never a
//! relative URL), so a `data:` module resolves them through the same import map. The caller
//! fetches what [`OfflinePackages::next_fetch`] names and hands each text to
//! [`OfflinePackages::add`].

use std::collections::{BTreeMap, BTreeSet};

use flint_protocol::project::{MOUNT_IMPORTS, ProjectShape, data_url};
use flint_protocol::worker::PreviewPackages;

/// The vendored files an offline page of one project needs, as they are fetched.
#[derive(Debug, Clone)]
pub struct OfflinePackages {
    gateway: PreviewPackages,
    /// Specifiers the page imports that the gateway vendors.
    wanted: BTreeSet<String>,
    /// Each needed URL path and its text once fetched.
    texts: BTreeMap<String, Option<String>>,
}

impl OfflinePackages {
    /// What a page of the project `shape` needs from the `gateway`'s packages.
    pub fn new(gateway: &PreviewPackages, shape: &ProjectShape) -> Self {
        let mut this = Self { gateway: gateway.clone(), wanted: BTreeSet::new(), texts: BTreeMap::new() };
        if let Some(tailwind) = &gateway.tailwind {
            this.texts.insert(tailwind.clone(), None);
        }
        for specifier in shape.specifiers.iter().map(String::as_str).chain(MOUNT_IMPORTS) {
            this.want(specifier);
        }
        this
    }

    fn want(&mut self, specifier: &str) {
        let Some(url) = self.gateway.imports.get(specifier) else { return };
        if self.wanted.insert(specifier.to_owned()) {
            self.texts.entry(url.clone()).or_insert(None);
        }
    }

    /// The next URL path to fetch (from the app's own origin), or `None` when all are in.
    pub fn next_fetch(&self) -> Option<String> {
        self.texts.iter().find(|(_, text)| text.is_none()).map(|(url, _)| url.clone())
    }

    /// The text fetched from `url`; the vendored modules it imports are needed too.
    pub fn add(&mut self, url: &str, text: String) {
        if self.gateway.tailwind.as_deref() != Some(url) {
            for specifier in imported(&text) {
                self.want(specifier);
            }
        }
        if let Some(slot) = self.texts.get_mut(url) {
            *slot = Some(text);
        }
    }

    /// The bytes fetched so far.
    pub fn fetched_bytes(&self) -> usize {
        self.texts.values().flatten().map(String::len).sum()
    }

    /// The packages an offline page is built with: each needed module, and Tailwind, as a `data:`
    /// URL; nothing the page does not import, and nothing left on the gateway. `None` until every
    /// file is in.
    pub fn packages(&self) -> Option<PreviewPackages> {
        let inline = |url: &String| self.texts.get(url).cloned().flatten().map(|text| data_url(&text));
        let mut imports = BTreeMap::new();
        for specifier in &self.wanted {
            imports.insert(specifier.clone(), inline(&self.gateway.imports[specifier])?);
        }
        let tailwind = match &self.gateway.tailwind {
            Some(url) => Some(inline(url)?),
            None => None,
        };
        Some(PreviewPackages { imports, tailwind, packages: self.gateway.packages.clone() })
    }
}

/// The specifiers `js` imports or re-exports: what follows `from`, `import` or `import(` as a
/// quoted string. A loose reading (a string in a comment would count too), which is safe here: a
/// specifier counts only when the gateway vendors it, so a false one adds a module, never drops one.
fn imported(js: &str) -> Vec<&str> {
    let bytes = js.as_bytes();
    let is_name = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80;
    let mut out = Vec::new();
    for keyword in ["from", "import"] {
        for (at, _) in js.match_indices(keyword) {
            if at > 0 && (is_name(bytes[at - 1]) || bytes[at - 1] == b'.') {
                continue;
            }
            let mut i = at + keyword.len();
            let skip_space = |mut i: usize| {
                while i < bytes.len() && bytes[i].is_ascii_whitespace() {
                    i += 1;
                }
                i
            };
            i = skip_space(i);
            if keyword == "import" && bytes.get(i) == Some(&b'(') {
                i = skip_space(i + 1);
            }
            let Some(&quote) = bytes.get(i).filter(|b| matches!(b, b'"' | b'\'')) else { continue };
            let rest = &js[i + 1..];
            if let Some(end) = rest.find(|c: char| c == char::from(quote) || c == '\n')
                && rest.as_bytes()[end] == quote
            {
                out.push(&rest[..end]);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gateway() -> PreviewPackages {
        let imports = [
            ("react", "/vendor/react@19.3.1/index.js"),
            ("react/jsx-dev-runtime", "/vendor/react@19.3.1/jsx-dev-runtime.js"),
            ("react-dom", "/vendor/react-dom@19.3.1/index.js"),
            ("react-dom/client", "/vendor/react-dom@19.3.1/client.js"),
            ("clsx", "/vendor/clsx@2.1.1/index.js"),
            ("recharts", "/vendor/recharts@3.11.1/index.js"),
        ];
        PreviewPackages {
            imports: imports.into_iter().map(|(a, b)| (a.to_owned(), b.to_owned())).collect(),
            tailwind: Some("/vendor/@tailwindcss/browser@4.3.4/index.global.js".into()),
            packages: BTreeMap::new(),
        }
    }

    #[test]
    fn imports_are_read_as_esbuild_and_people_write_them() {
        let js = "import*as a from\"react\";import{b}from'react-dom';export*from\"x\";import \"side\";\
                  const m=import( 'lazy' );const s=\"import\";obj.import(\"no\");reform\"no2\";";
        let found = imported(js);
        for specifier in ["react", "react-dom", "x", "side", "lazy"] {
            assert!(found.contains(&specifier), "{specifier}: {found:?}");
        }
        assert!(!found.contains(&"no") && !found.contains(&"no2"), "{found:?}");
    }

    #[test]
    fn only_what_the_page_reaches_is_fetched_and_then_inlined() {
        let shape =
            ProjectShape { specifiers: vec!["clsx".into(), "react".into()], ..ProjectShape::default() };
        let mut offline = OfflinePackages::new(&gateway(), &shape);
        let mut fetched = Vec::new();
        while let Some(url) = offline.next_fetch() {
            assert!(offline.packages().is_none(), "not before every file is in");
            let text = match url.as_str() {
                "/vendor/react-dom@19.3.1/client.js" => {
                    "import*as r from\"react\";import d from\"react-dom\";"
                }
                "/vendor/react-dom@19.3.1/index.js" => "import*as r from\"react\";",
                "/vendor/react@19.3.1/jsx-dev-runtime.js" => "import{default as d}from\"react\";",
                _ => "export const x = 1; // 100% #1\n",
            };
            offline.add(&url, text.to_owned());
            fetched.push(url);
        }
        assert_eq!(fetched.len(), 6, "{fetched:?}");
        assert!(!fetched.iter().any(|u| u.contains("recharts")), "recharts is not imported");
        let packages = offline.packages().expect("all in");
        assert_eq!(
            packages.imports.keys().collect::<Vec<_>>(),
            ["clsx", "react", "react-dom", "react-dom/client", "react/jsx-dev-runtime"]
        );
        let urls = packages.imports.values().chain(packages.tailwind.iter());
        for url in urls {
            assert!(url.starts_with("data:text/javascript;charset=utf-8,"), "{url}");
            assert!(!url.contains("/vendor/") && !url.contains('#'), "{url}");
        }
    }
}
