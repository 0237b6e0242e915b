//! Code that is a React project rather than a page: its preview is built by the worker (the page
//! asks with `WorkerLink::page`), never shown as text.

use flint_protocol::language::{is_project_file, is_react_module};
use flint_protocol::worker::AnswerFile;

/// The files to build when `code` (the editor's main file) belongs to a project: the last answer's
/// `files` with their main file replaced by `code`, or `code` alone as `App.tsx`. `None` for a
/// page, a stylesheet or plain text.
pub fn project_of(code: &str, files: &[AnswerFile]) -> Option<Vec<AnswerFile>> {
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

/// Whether `code` (the editor's main file) belongs to a project: [`project_of`] without the copy.
pub fn is_project(code: &str, files: &[AnswerFile]) -> bool {
    in_project(files) || is_react_module(code)
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
    fn problems_are_escaped() {
        assert!(problems_page(&["App.tsx:1:1: <script>".into()]).contains("&lt;script&gt;"));
    }
}
