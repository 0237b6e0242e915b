//! A React project's files as one text: the code Flint keeps for a project (the workspace, its
//! versions, the saved session and history, share links, the Fix and edit prompts) is every file
//! in the fenced form models write them (```` ```tsx App.tsx ````), the entry file first. One
//! string means everything that carried a page's code carries a project whole, and a model asked
//! to change it reads the same form it answers in.
//!
//! [`mount`](mount_module) is what the preview and the exports share: how the app is mounted, a
//! module as a `data:` URL, and what the worker's build found out about a project.
//!
//! [`bundle`] writes that form, [`unbundle`] reads it back (only what [`bundle`] writes: any other
//! text is a page or a single file). The worker's stream parser reads it the same way (tested
//! there).

use std::ops::Range;

use serde::{Deserialize, Serialize};

mod mount;
pub use mount::*;

use crate::language::is_project_file;

/// One file of a finished answer (and of a project: see [`bundle`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnswerFile {
    /// The name the answer gave it (```` ```css style.css ````), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its language (`html`, `css`, `javascript`…).
    pub language: String,
    /// Its text.
    pub content: String,
    /// The file the editor shows.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub main: bool,
}

impl AnswerFile {
    /// A file named `path` (a project's file, an answer's `style.css`).
    pub fn named(path: &str, language: &str, content: &str, main: bool) -> Self {
        Self { name: Some(path.to_owned()), language: language.to_owned(), content: content.to_owned(), main }
    }
}

/// A file's path in a project: its name (`./` and `/` dropped), or one made from its language for
/// a block that names none (`App.tsx` for the first component, `styles.css`…; `App2.tsx` when that
/// is taken); `None` for a block no project reads (a shell command, prose). `index` is the block's
/// place in the answer, `taken` the paths given so far.
pub fn project_path(name: Option<&str>, language: &str, index: usize, taken: &[&str]) -> Option<String> {
    if let Some(name) = name {
        return Some(name.trim_start_matches("./").trim_start_matches('/').to_owned());
    }
    let (stem, ext) = match language {
        "tsx" => ("App", "tsx"),
        "typescript" => ("index", "ts"),
        "javascript" => ("App", "jsx"),
        "css" => ("styles", "css"),
        _ => return None,
    };
    let first = format!("{stem}.{ext}");
    Some(if taken.contains(&first.as_str()) { format!("{stem}{index}.{ext}") } else { first })
}

/// The languages a project's file may be in: what the worker builds, styles and data.
fn is_project_language(language: &str) -> bool {
    matches!(language, "tsx" | "typescript" | "javascript" | "jsx" | "css" | "json")
}

/// The project in an answer's `files` as one text, the main file first, each file once (a file
/// written again keeps its last text); `None` unless it has two files or more (one file is kept
/// as itself) or none is a React module (a page's script and stylesheet stay a page). Blocks that are not part of a project (a shell command, prose) are left out.
pub fn bundle(files: &[AnswerFile]) -> Option<String> {
    if !files.iter().any(|f| is_project_file(f.name.as_deref(), &f.language, &f.content)) {
        return None;
    }
    let mut kept: Vec<AnswerFile> = Vec::new();
    let main = files.iter().position(|f| f.main).unwrap_or(0);
    let order = std::iter::once(main).chain((0..files.len()).filter(|&i| i != main));
    for i in order {
        let Some(file) = files.get(i) else { continue };
        let named = file.name.as_deref().map(|n| n.rsplit_once('.').map_or(n, |(_, e)| e));
        let language = match named {
            Some("tsx" | "jsx") => "tsx",
            _ => file.language.as_str(),
        };
        if !is_project_language(&file.language) && !is_project_language(language) {
            continue;
        }
        let taken: Vec<&str> = kept.iter().filter_map(|f| f.name.as_deref()).collect();
        let Some(path) = project_path(file.name.as_deref(), &file.language, i, &taken) else { continue };
        // The main file comes first whatever the answer wrote after it: a later version of the
        // same path replaces the text, not the place.
        match kept.iter_mut().find(|f| f.name.as_deref() == Some(path.as_str())) {
            Some(earlier) if i != main && earlier.main => {}
            Some(earlier) => earlier.content.clone_from(&file.content),
            None => kept.push(AnswerFile {
                name: Some(path),
                language: file.language.clone(),
                content: file.content.clone(),
                main: kept.is_empty(),
            }),
        }
    }
    (kept.len() >= 2).then(|| write(&kept))
}

/// Writes `files` (named) in the fenced form, in order.
fn write(files: &[AnswerFile]) -> String {
    let mut out = String::new();
    for (i, file) in files.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        // A fence longer than any run of backticks in the file, so no line of it can close it.
        let fence = "`".repeat(longest_backtick_run(&file.content).max(2) + 1);
        let name = file.name.as_deref().unwrap_or_default();
        out.push_str(&format!("{fence}{} {name}\n", file.language));
        out.push_str(&file.content);
        if !file.content.is_empty() && !file.content.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&fence);
        out.push('\n');
    }
    out
}

fn longest_backtick_run(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

/// Where one file of a project's text lies: its fence's language and path, and its content as a
/// range of the text's lines (`code.split_inclusive('\n')`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The fence's language word.
    pub language: String,
    /// The file's path.
    pub path: String,
    /// Its content's lines, by index.
    pub lines: Range<usize>,
}

/// The files of a project's text as [`bundle`] wrote it, by line; `None` for any other text.
pub fn sections(code: &str) -> Option<Vec<Section>> {
    if !code.starts_with("```") {
        return None;
    }
    let mut found = Vec::new();
    let mut lines = code.split_inclusive('\n').map(|l| l.trim_end_matches(['\n', '\r'])).enumerate();
    while let Some((at, line)) = lines.next() {
        if line.is_empty() && !found.is_empty() {
            continue;
        }
        let fence_len = line.bytes().take_while(|&b| b == b'`').count();
        if fence_len < 3 {
            return None;
        }
        let (language, path) = line[fence_len..].split_once(' ')?;
        if language.is_empty() || path.is_empty() || path.contains(' ') {
            return None;
        }
        let closing = lines.by_ref().find(|(_, l)| l.len() == fence_len && l.bytes().all(|b| b == b'`'));
        let (end, _) = closing?;
        found.push(Section { language: language.to_owned(), path: path.to_owned(), lines: at + 1..end });
    }
    (found.len() >= 2).then_some(found)
}

/// Where `section`'s content lies in `code` (the text [`sections`] read it from), in bytes.
pub fn section_bytes(code: &str, section: &Section) -> Range<usize> {
    let mut at = 0;
    let mut start = code.len();
    for (i, line) in code.split_inclusive('\n').enumerate() {
        if i == section.lines.start {
            start = at;
        }
        if i == section.lines.end {
            return start.min(at)..at;
        }
        at += line.len();
    }
    start.min(at)..at
}

/// The files of a project's text as [`bundle`] wrote it (the first one main), or `None` for any
/// other text: a page, one file, a bundle a hand or an edit has broken.
pub fn unbundle(code: &str) -> Option<Vec<AnswerFile>> {
    let found = sections(code)?;
    let lines: Vec<&str> = code.split_inclusive('\n').collect();
    let files = found
        .into_iter()
        .enumerate()
        .map(|(i, section)| AnswerFile {
            content: lines[section.lines].concat(),
            name: Some(section.path),
            language: section.language,
            main: i == 0,
        })
        .collect();
    Some(files)
}

/// The fence language of a new file at `path`, from its extension.
pub fn language_of_path(path: &str) -> &'static str {
    match path.rsplit_once('.').map(|(_, ext)| ext.to_ascii_lowercase()).as_deref() {
        Some("tsx" | "jsx") => "tsx",
        Some("ts" | "mts") => "typescript",
        Some("js" | "mjs") => "javascript",
        Some("css") => "css",
        Some("json") => "json",
        _ => "plaintext",
    }
}

/// A new file as it ends a project's text (after the last one): `content` in a fence of its own.
pub fn new_section(path: &str, content: &str) -> String {
    let file = AnswerFile {
        name: Some(path.to_owned()),
        language: language_of_path(path).to_owned(),
        content: content.to_owned(),
        main: false,
    };
    format!("\n{}", write(std::slice::from_ref(&file)))
}

/// The project `code` with the file at `path` holding `content`; `None` when `code` is not a
/// project or has no such file.
pub fn with_file(code: &str, path: &str, content: &str) -> Option<String> {
    let mut files = unbundle(code)?;
    let file = files.iter_mut().find(|f| f.name.as_deref() == Some(path))?;
    content.clone_into(&mut file.content);
    Some(write(&files))
}

#[cfg(test)]
#[path = "project_tests.rs"]
mod tests;
