//! A React project as a Vite project: the files a person unzips and runs with `npm install && npm
//! run dev`, laid out and mounted as the preview ran them.
//!
//! - The project's files keep their layout under `src/`: a project already all under `src/` stays
//!   as it is, any other moves whole under `src/`, so relative imports keep working and `@/` (the
//!   alias the preview resolves) is `src/` in `vite.config.ts`. Paths are made safe and unique by
//!   the zip's rules ([`safe_name`], [`unique_name`]).
//! - What Flint adds (`package.json`, `index.html`, `vite.config.ts`, `tsconfig.json`,
//!   `README.md`, `.gitignore`) sits at the root, where no project file goes. What it adds under
//!   `src/` (`main.tsx`, `tailwind.css`) yields to a project file of the same name (`main-2.tsx`):
//!   nothing of the answer is written over. A project whose entry mounts itself (`main.tsx`) gets
//!   no `main.tsx` of ours; `index.html` loads its entry.
//! - Tailwind is always there, as in the preview: its base styles change how even a page without
//!   classes looks, and an export should look like what was previewed.
//! - Dependencies are react, react-dom and each package the project imports, at the versions the
//!   gateway vendored (its manifest's `packages`, built from `preview-packages/`), so the app runs
//!   against the code the preview ran. No TypeScript: Vite strips types itself and `vite build`
//!   does not type-check, so a model's loose types do not stop a build.

use std::collections::BTreeMap;

use flint_protocol::project::{MountSource, ProjectShape, ROOT_ID, mount_module};
use flint_protocol::worker::AnswerFile;

use super::zip::{default_name, safe_name, unique_name, zip_stored};

/// The build tools, pinned: a project that builds today builds the same way later.
const DEV_DEPENDENCIES: [(&str, &str); 4] = [
    ("@tailwindcss/vite", "4.3.5"),
    ("@vitejs/plugin-react", "6.3.0"),
    ("tailwindcss", "4.3.5"),
    ("vite", "8.3.8"),
];

/// Tailwind, generating the classes it finds in `src/` alone: not in `node_modules`, nor in a
/// repository the project is unzipped into (its own scan would read them too).
const TAILWIND_CSS: &str = "@import \"tailwindcss\" source(\".\");\n";

/// Packages every project depends on: what the mount imports.
const ALWAYS: [&str; 2] = ["react", "react-dom"];

/// Why a project cannot be exported, as a sentence the person can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ViteError(String);

/// The Vite project of `files` (the project's files, as built into `shape` by the worker), named
/// `stem`, with package versions from `versions`: `(path, text)` in a fixed order.
pub fn vite_project(
    files: &[AnswerFile],
    shape: &ProjectShape,
    versions: &BTreeMap<String, String>,
    stem: &str,
) -> Result<Vec<(String, String)>, ViteError> {
    if files.len() != shape.paths.len() {
        return Err(ViteError("The project changed while it was exported: export it again.".into()));
    }
    let nest = !shape.paths.iter().all(|p| p.starts_with("src/"));
    let mut placed: Vec<String> = Vec::with_capacity(files.len());
    for (path, file) in shape.paths.iter().zip(files) {
        let safe = safe_name(path).unwrap_or_else(|| default_name(&file.language));
        let wanted = if nest { format!("src/{safe}") } else { safe };
        placed.push(unique_name(&wanted, &placed));
    }
    let place = |path: &str| shape.paths.iter().position(|p| p == path).map(|i| placed[i].clone());
    let Some(entry) = place(&shape.entry) else {
        return Err(ViteError(format!("{}: the project's entry is not among its files.", shape.entry)));
    };

    let mut ours: Vec<(String, String)> = Vec::new();
    let start = if shape.mounts {
        entry
    } else {
        let main = unique_name("src/main.tsx", &placed);
        let import = format!("./{}", entry.strip_prefix("src/").unwrap_or(&entry));
        ours.push((main.clone(), mount_module(&import, MountSource::Tsx)));
        main
    };
    let tailwind = unique_name("src/tailwind.css", &placed);
    ours.push((tailwind.clone(), TAILWIND_CSS.into()));
    let mut styles = vec![tailwind];
    styles.extend(shape.loose_styles.iter().filter_map(|p| place(p)));

    let name = package_name(stem);
    let mut out = vec![
        ("package.json".to_owned(), package_json(&name, &dependencies(shape, versions)?)),
        ("README.md".to_owned(), readme(&name)),
        ("index.html".to_owned(), index_html(&name, &start, &styles)),
        ("vite.config.ts".to_owned(), VITE_CONFIG.to_owned()),
        ("tsconfig.json".to_owned(), TSCONFIG.to_owned()),
        (".gitignore".to_owned(), "node_modules\ndist\n".to_owned()),
    ];
    out.extend(ours);
    out.extend(placed.into_iter().zip(files).map(|(path, file)| (path, file.content.clone())));
    Ok(out)
}

/// [`vite_project`] as a zip.
pub fn vite_zip(
    files: &[AnswerFile],
    shape: &ProjectShape,
    versions: &BTreeMap<String, String>,
    stem: &str,
) -> Result<Vec<u8>, ViteError> {
    let project = vite_project(files, shape, versions, stem)?;
    let entries: Vec<(String, &[u8])> = project.iter().map(|(p, t)| (p.clone(), t.as_bytes())).collect();
    Ok(zip_stored(&entries))
}

/// react, react-dom and the project's packages, each at its vendored version.
fn dependencies(
    shape: &ProjectShape,
    versions: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, String>, ViteError> {
    let mut out = BTreeMap::new();
    for package in ALWAYS.iter().copied().chain(shape.packages.iter().map(String::as_str)) {
        let Some(version) = versions.get(package) else {
            return Err(ViteError(format!(
                "The project imports {package}, which this gateway's preview packages do not include: add \
                 \"{package}\" to `[preview] packages` in flint.toml, run the set-up, and export again."
            )));
        };
        out.insert(package.to_owned(), version.clone());
    }
    Ok(out)
}

/// `stem` as an npm package name: lower case, letters, digits, `-`, `.`, `_`, not starting with a
/// dot or an underscore.
fn package_name(stem: &str) -> String {
    let name: String = stem
        .chars()
        .flat_map(char::to_lowercase)
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'))
        .collect();
    let name = name.trim_start_matches(['.', '_', '-']).trim_end_matches(['.', '-']);
    if name.is_empty() { "flint-app".to_owned() } else { name.chars().take(100).collect() }
}

fn package_json(name: &str, dependencies: &BTreeMap<String, String>) -> String {
    let object = |pairs: &mut dyn Iterator<Item = (&str, &str)>| {
        let lines: Vec<String> = pairs.map(|(k, v)| format!("    {}: {}", json(k), json(v))).collect();
        format!("{{\n{}\n  }}", lines.join(",\n"))
    };
    let scripts =
        object(&mut [("dev", "vite"), ("build", "vite build"), ("preview", "vite preview")].into_iter());
    let deps = object(&mut dependencies.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let dev = object(&mut DEV_DEPENDENCIES.into_iter());
    format!(
        "{{\n  \"name\": {},\n  \"private\": true,\n  \"version\": \"0.0.0\",\n  \"type\": \"module\",\n  \
         \"scripts\": {scripts},\n  \"dependencies\": {deps},\n  \"devDependencies\": {dev}\n}}\n",
        json(name)
    )
}

fn index_html(title: &str, start: &str, styles: &[String]) -> String {
    let mut html = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\">\n  <head>\n    <meta charset=\"utf-8\">\n    \
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
    );
    html.push_str(&format!("    <title>{}</title>\n", super::escape_html(title)));
    for style in styles {
        html.push_str(&format!("    <link rel=\"stylesheet\" href=\"/{}\">\n", super::escape_html(style)));
    }
    html.push_str(&format!(
        "  </head>\n  <body>\n    <div id=\"{ROOT_ID}\"></div>\n    <script type=\"module\" src=\"/{}\"></script>\n  \
         </body>\n</html>\n",
        super::escape_html(start)
    ));
    html
}

fn readme(name: &str) -> String {
    format!(
        "# {name}\n\nA React app made with Flint, as a Vite project. To run it (Node.js 20.19 or later):\n\n\
         ```sh\nnpm install && npm run dev\n```\n\n`npm run build` writes the app to `dist/` as static files; \
         `npm run preview` serves that build.\n\nThe app's files are in `src/`. `@/` in an import is `src/`, as in \
         Flint's preview. Tailwind CSS is set up (`src/tailwind.css`).\n"
    )
}

const VITE_CONFIG: &str = "import { fileURLToPath, URL } from \"node:url\";\n\
import { defineConfig } from \"vite\";\n\
import react from \"@vitejs/plugin-react\";\n\
import tailwindcss from \"@tailwindcss/vite\";\n\n\
export default defineConfig({\n  plugins: [react(), tailwindcss()],\n  \
resolve: { alias: { \"@\": fileURLToPath(new URL(\"./src\", import.meta.url)) } },\n});\n";

/// For editors; nothing in the build reads types.
const TSCONFIG: &str = "{\n  \"compilerOptions\": {\n    \"target\": \"ES2022\",\n    \"module\": \"ESNext\",\n    \
\"moduleResolution\": \"bundler\",\n    \"jsx\": \"react-jsx\",\n    \"allowImportingTsExtensions\": true,\n    \
\"noEmit\": true,\n    \"skipLibCheck\": true,\n    \"paths\": { \"@/*\": [\"./src/*\"] }\n  },\n  \"include\": [\"src\"]\n}\n";

fn json(text: &str) -> String {
    serde_json::Value::from(text).to_string()
}

#[cfg(test)]
#[path = "vite_tests.rs"]
mod tests;
