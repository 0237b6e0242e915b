//! Picking in a React project: the clicked element (or its nearest HTML ancestor) carries where its
//! JSX is, `path:start:end` (the file and byte range the worker stamped on it, `data-flint-src`).
//! Like a page's path, that is the page's word: it picks only when it leads to a `<` in the named
//! file of the code shown, within that file.

use flint_protocol::project::{section_bytes, sections};

use super::{Picked, line_of};

const MOVED: &str = "that element's JSX is not where the page was built from (the code changed since): run it again, then pick";

/// The element `src` points at in `code` (a project's files, or one module), or why there is none.
pub fn find_jsx(code: &str, src: &str) -> Result<Picked, &'static str> {
    let mut parts = src.rsplitn(3, ':');
    let (Some(end), Some(start), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(MOVED);
    };
    let (Ok(start), Ok(end)) = (start.parse::<usize>(), end.parse::<usize>()) else { return Err(MOVED) };
    let (within, file) = match sections(code) {
        Some(found) => {
            let section = found.iter().find(|s| s.path == path).ok_or(MOVED)?;
            (section_bytes(code, section), Some((path.to_owned(), section.lines.start + 1)))
        }
        None => (0..code.len(), None),
    };
    let (start, end) = (within.start + start, within.start + end);
    let fits = start < end && end <= within.end && code.is_char_boundary(start) && code.is_char_boundary(end);
    if !fits || !code[start..].starts_with('<') {
        return Err(MOVED);
    }
    let tag: String = code[start + 1..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'))
        .collect();
    if tag.is_empty() {
        return Err(MOVED);
    }
    Ok(Picked { start, end, tag, lines: (line_of(code, start), line_of(code, end - 1)), file })
}

#[cfg(test)]
mod tests {
    use flint_protocol::project::bundle;
    use flint_protocol::worker::AnswerFile;

    use super::*;
    use crate::pick::scope_prompt;

    const HEADER: &str = "export function Header() {\n  return <h1 className=\"t\">Hi</h1>;\n}\n";

    fn project() -> String {
        let app = AnswerFile::named("App.tsx", "tsx", "export default () => <main/>;\n", true);
        bundle(&[app, AnswerFile::named("components/Header.tsx", "tsx", HEADER, false)]).unwrap()
    }

    #[test]
    fn a_stamped_range_picks_its_jsx_in_the_right_file() {
        let code = project();
        let (s, e) = (HEADER.find("<h1").unwrap(), HEADER.find("</h1>").unwrap() + 5);
        let picked = find_jsx(&code, &format!("components/Header.tsx:{s}:{e}")).expect("found");
        assert_eq!(picked.source(&code), "<h1 className=\"t\">Hi</h1>");
        assert_eq!(picked.tag, "h1");
        assert_eq!(picked.file, Some(("components/Header.tsx".into(), 6)));
        let prompt = scope_prompt(&code, &picked, "bigger");
        assert!(
            prompt.starts_with("Change only this <h1> element (lines 2–2 of components/Header.tsx)"),
            "{prompt}"
        );
        assert!(prompt.contains("```tsx\n<h1"), "{prompt}");
    }

    #[test]
    fn a_range_that_no_longer_fits_the_code_picks_nothing() {
        let code = project();
        for src in [
            "components/Header.tsx:0:5",
            "components/Header.tsx:30:900",
            "Gone.tsx:0:4",
            "nonsense",
            "App.tsx:a:b",
        ] {
            assert!(find_jsx(&code, src).is_err(), "{src}");
        }
        let alone = "export default () => <p>hi</p>;\n";
        assert_eq!(find_jsx(alone, "App.tsx:21:30").unwrap().source(alone), "<p>hi</p>");
    }
}
