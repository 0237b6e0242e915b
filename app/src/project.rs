//! Code that is a React project rather than a page: its preview is built by the worker (the page
//! asks with `WorkerLink::page`), never shown as text.

use flint_protocol::language::{is_project_file, is_react_module};
use flint_protocol::project::{bundle, unbundle};
use flint_protocol::worker::AnswerFile;

/// The files to build when `code` is a project: its own files when it holds them all (what
/// Flint keeps of a project, [`unbundle`]); else, for a lone module, the last answer's `files`
/// with their main file replaced by `code`, or `code` alone as `App.tsx`. `None` for a page, a
/// stylesheet or plain text.
pub fn project_of(code: &str, files: &[AnswerFile]) -> Option<Vec<AnswerFile>> {
    if let Some(own) = unbundle(code) {
        return Some(own);
    }
    if !is_project(code, files) {
        return None;
    }
    let in_project = in_project(files);
    let mut files: Vec<AnswerFile> = if in_project { files.to_vec() } else { Vec::new() };
    match files.iter_mut().find(|f| f.main) {
        Some(main) => main.content = code.to_owned(),
        None => files.push(AnswerFile {
            name: Some("App.tsx".into()),
            language: "tsx".into(),
            content: code.to_owned(),
            main: true,
        }),
    }
    Some(files)
}

/// The code a finished answer with `files` leaves in the workspace: all its files when they are a
/// project, else its main file.
pub fn answer_code(files: &[AnswerFile]) -> Option<String> {
    bundle(files).or_else(|| files.iter().find(|f| f.main).map(|f| f.content.clone()))
}

/// What the editor shows of `code` with `open` asked for: a project's file of that path (else its
/// main file), with its path; the code itself, with `None`, when it is not a project.
pub fn shown_file(code: &str, open: Option<&str>) -> (Option<String>, &'static str, String) {
    let Some(files) = unbundle(code) else {
        return (None, flint_protocol::language::code_language(code), code.to_owned());
    };
    let at = files.iter().position(|f| f.name.as_deref() == open).unwrap_or(0);
    let file = files.into_iter().nth(at).unwrap_or_else(|| unreachable!("a project has files"));
    (file.name, monaco_language(&file.language), file.content)
}

/// The editor's (Monaco's) language for a project file's fence language.
fn monaco_language(language: &str) -> &'static str {
    match language {
        "tsx" | "typescript" => "typescript",
        "css" => "css",
        "json" => "json",
        "html" => "html",
        "javascript" | "jsx" => "javascript",
        _ => "plaintext",
    }
}

/// Whether `code` belongs to a project: [`project_of`] without the copy.
pub fn is_project(code: &str, files: &[AnswerFile]) -> bool {
    flint_protocol::project::sections(code).is_some() || in_project(files) || is_react_module(code)
}

fn in_project(files: &[AnswerFile]) -> bool {
    files.iter().any(|f| is_project_file(f.name.as_deref(), &f.language, &f.content))
}

/// What the preview shows while a project's code does not build: where, and that the last page
/// that did comes back with a fix.
pub fn problems_page(problems: &[String]) -> String {
    let mut page = String::from(
        "<!DOCTYPE html>\n<meta charset=\"utf-8\">\n<title>Does not build</title>\n\
         <body style=\"font:14px system-ui,sans-serif;padding:1rem;color:#7f1d1d\">\n\
         <p>This code does not build yet:</p>\n<pre>",
    );
    for problem in problems {
        page.push_str(&crate::export::escape_html(problem));
        page.push('\n');
    }
    page.push_str("</pre>\n</body>\n");
    page
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, language: &str, content: &str, main: bool) -> AnswerFile {
        AnswerFile { name: Some(name.into()), language: language.into(), content: content.into(), main }
    }

    #[test]
    fn an_edited_main_file_is_built_with_the_rest_of_its_project() {
        let files = [file("App.tsx", "tsx", "old", true), file("components/B.tsx", "tsx", "b", false)];
        let built = project_of("new", &files).expect("a project");
        assert_eq!(built[0].content, "new");
        assert_eq!(built[1].content, "b");
    }

    #[test]
    fn a_react_module_alone_is_an_app_and_a_page_is_not_a_project() {
        let alone = project_of("import React from 'react';\nexport default () => <p/>;", &[]).unwrap();
        assert_eq!(alone[0].name.as_deref(), Some("App.tsx"));
        assert!(project_of("<!DOCTYPE html><p>hi</p>", &[file("index.html", "html", "x", true)]).is_none());
        assert!(project_of("body { color: red }", &[]).is_none());
    }

    #[test]
    fn a_kept_project_is_built_and_shown_a_file_at_a_time() {
        let files = [file("App.tsx", "tsx", "app\n", true), file("components/B.tsx", "tsx", "b\n", false)];
        let code = answer_code(&files).expect("a project");
        let built = project_of(&code, &[]).expect("its own files");
        assert_eq!(built.len(), 2);
        assert_eq!(
            shown_file(&code, Some("components/B.tsx")),
            (Some("components/B.tsx".into()), "typescript", "b\n".into())
        );
        assert_eq!(
            shown_file(&code, Some("gone.tsx")).0.as_deref(),
            Some("App.tsx"),
            "a file no longer there: the main one"
        );
        assert_eq!(shown_file("<p>", Some("App.tsx")), (None, "html", "<p>".into()));
        assert_eq!(answer_code(&[file("index.html", "html", "<p>", true)]).as_deref(), Some("<p>"));
    }

    #[test]
    fn problems_are_escaped() {
        assert!(problems_page(&["App.tsx:1:1: <script>".into()]).contains("&lt;script&gt;"));
    }
}
