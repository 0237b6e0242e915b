//! Picking an element in the preview: the frame reports where the clicked element sits in its
//! document (each step from `<body>` down: the index among its parent's elements and its tag), and
//! this finds the same element in the page's source, so the editor can select it and the next edit
//! can be held inside it. The shown page carries no annotations; the path is matched against the
//! source's own element tree instead.
//!
//! The report comes from the page's realm (the pick runs where the page runs), so it is only a
//! guess to check: a path that does not lead to an element of the same tag (and the same `id`,
//! when it has one) in the source picks nothing. Elements a script made have no source to select.

use serde::Deserialize;

mod jsx;
pub use jsx::find_jsx;

/// One step of a picked element's path, as the frame reports it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Step {
    /// Index among the parent's element children.
    pub index: usize,
    /// Lower-case tag name.
    pub tag: String,
}

/// What the frame reports about a click in pick mode.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PickReport {
    /// From `<body>`'s children down to the element.
    pub path: Vec<Step>,
    /// The element's `id`, if it has one.
    #[serde(default)]
    pub id: Option<String>,
    /// In a React project: where its JSX is (`path:start:end`, see [`jsx`]).
    #[serde(default)]
    pub src: Option<String>,
}

/// A picked element in the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Picked {
    /// Byte offset of its start tag's `<`.
    pub start: usize,
    /// Byte offset just past its end tag (or its start tag, for an element without one).
    pub end: usize,
    /// Its tag name.
    pub tag: String,
    /// First and last line (1-based) it spans.
    pub lines: (usize, usize),
    /// In a project's code: the file it is in, and the line of the code that file's first line is.
    pub file: Option<(String, usize)>,
}

impl Picked {
    /// Its source text in `code`.
    pub fn source<'a>(&self, code: &'a str) -> &'a str {
        code.get(self.start..self.end).unwrap_or("")
    }

    /// Whether lines `first..=last` (1-based) of the file lie inside it.
    pub fn contains_lines(&self, first: usize, last: usize) -> bool {
        first >= self.lines.0 && last <= self.lines.1
    }
}

const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track",
    "wbr",
];
const RAW_TEXT: &[&str] = &["script", "style", "textarea", "title"];

#[derive(Debug)]
struct Node {
    tag: String,
    start: usize,
    end: usize,
    start_tag: (usize, usize),
    children: Vec<usize>,
}

/// The element tree of an HTML source, leniently: unclosed elements end where an ancestor does.
fn tree(code: &str) -> Vec<Node> {
    let lower = code.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    let mut nodes: Vec<Node> =
        vec![Node { tag: "#root".into(), start: 0, end: code.len(), start_tag: (0, 0), children: vec![] }];
    let mut stack = vec![0usize];
    let mut i = 0;
    while let Some(lt) = lower[i..].find('<').map(|n| i + n) {
        if lower[lt..].starts_with("<!--") {
            i = lower[lt + 4..].find("-->").map_or(code.len(), |n| lt + 4 + n + 3);
            continue;
        }
        if lower[lt..].starts_with("<!") || lower[lt..].starts_with("<?") {
            i = lower[lt..].find('>').map_or(code.len(), |n| lt + n + 1);
            continue;
        }
        let closing = bytes.get(lt + 1) == Some(&b'/');
        let name_start = lt + 1 + usize::from(closing);
        let name_len =
            bytes[name_start..].iter().take_while(|b| b.is_ascii_alphanumeric() || **b == b'-').count();
        if name_len == 0 {
            i = lt + 1;
            continue;
        }
        let name = &lower[name_start..name_start + name_len];
        let tag_end = tag_end(bytes, name_start + name_len);
        if closing {
            if let Some(at) = stack.iter().rposition(|&n| nodes[n].tag == name) {
                for &open in &stack[at..] {
                    nodes[open].end = if nodes[open].tag == name { tag_end } else { lt };
                }
                stack.truncate(at);
            }
            i = tag_end;
            continue;
        }
        // What the browser closes on its own when this tag opens (`<li>` ends the open `<li>`…).
        while stack.len() > 1 && closed_by(&nodes[*stack.last().unwrap_or(&0)].tag, name) {
            let open = stack.pop().unwrap_or(0);
            nodes[open].end = lt;
        }
        let id = nodes.len();
        let parent = *stack.last().unwrap_or(&0);
        nodes.push(Node {
            tag: name.to_owned(),
            start: lt,
            end: tag_end,
            start_tag: (lt, tag_end),
            children: vec![],
        });
        nodes[parent].children.push(id);
        i = tag_end;
        let self_closing = bytes.get(tag_end.saturating_sub(2)) == Some(&b'/');
        if RAW_TEXT.contains(&name) {
            let close = format!("</{name}");
            let end = lower[i..].find(&close).map_or(code.len(), |n| i + n);
            let after = tag_end_or(bytes, end);
            nodes[id].end = after;
            i = after;
        } else if !VOID.contains(&name) && !self_closing {
            nodes[id].end = code.len();
            stack.push(id);
        }
    }
    nodes
}

/// Elements that start a block: an open `<p>` ends before them.
const BLOCKS: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "div",
    "dl",
    "fieldset",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "main",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "table",
    "ul",
];

/// Whether an open `open` element ends when a `new` one starts (the common cases of HTML's rules).
fn closed_by(open: &str, new: &str) -> bool {
    match open {
        "li" | "option" | "dt" | "dd" => {
            open == new || (open.starts_with('d') && (new == "dt" || new == "dd"))
        }
        "p" => BLOCKS.contains(&new),
        "td" | "th" => matches!(new, "td" | "th" | "tr"),
        "tr" => new == "tr",
        _ => false,
    }
}

/// Past the `>` ending a tag whose name ends at `from` (quoted attribute values may hold `>`).
fn tag_end(bytes: &[u8], from: usize) -> usize {
    let mut quote = None;
    for (n, &b) in bytes[from..].iter().enumerate() {
        match (quote, b) {
            (None, b'"' | b'\'') => quote = Some(b),
            (Some(q), b) if b == q => quote = None,
            (None, b'>') => return from + n + 1,
            _ => {}
        }
    }
    bytes.len()
}

fn tag_end_or(bytes: &[u8], at: usize) -> usize {
    if at >= bytes.len() { bytes.len() } else { tag_end(bytes, at + 2) }
}

pub(crate) fn line_of(code: &str, offset: usize) -> usize {
    code.as_bytes()[..offset.min(code.len())].iter().filter(|&&b| b == b'\n').count() + 1
}

/// The element `report` points at in `code`, or why there is none.
pub fn find(code: &str, report: &PickReport) -> Result<Picked, &'static str> {
    let nodes = tree(code);
    let find_child =
        |parent: usize, tag: &str| nodes[parent].children.iter().copied().find(|&c| nodes[c].tag == tag);
    let html = find_child(0, "html").unwrap_or(0);
    let mut at = find_child(html, "body").ok_or("this page has no <body> in its source to pick from")?;
    if report.path.is_empty() || report.path.len() > 256 {
        return Err("that is the page itself: pick an element on it");
    }
    for step in &report.path {
        let children = &nodes[at].children;
        match children.get(step.index) {
            Some(&child) if nodes[child].tag == step.tag => at = child,
            // The browser puts rows into a <tbody> the source may not have.
            _ if step.tag == "tbody" && nodes[at].tag == "table" => {}
            _ => {
                return Err(
                    "that element is not in the source as written (a script may have made it): pick another",
                );
            }
        }
    }
    let node = &nodes[at];
    if let Some(id) = report.id.as_deref().filter(|id| !id.is_empty()) {
        let tag = &code[node.start_tag.0..node.start_tag.1];
        if !tag.contains(id) {
            return Err(
                "that element is not in the source as written (a script may have made it): pick another",
            );
        }
    }
    let end = node.end.min(code.len()).max(node.start_tag.1);
    Ok(Picked {
        start: node.start,
        end,
        tag: node.tag.clone(),
        lines: (line_of(code, node.start), line_of(code, end.saturating_sub(1))),
        file: None,
    })
}

/// What the next edit request says when an element is picked: the element's source and the rule.
pub fn scope_prompt(code: &str, picked: &Picked, prompt: &str) -> String {
    let (a, b) = picked.lines;
    let (place, fence) = match &picked.file {
        Some((path, first)) => (format!("lines {}–{} of {path}", a + 1 - first, b + 1 - first), "tsx"),
        None => (format!("lines {a}–{b} of the file"), "html"),
    };
    format!(
        "Change only this <{tag}> element ({place}) and leave everything outside it exactly as it is:\n\
         ```{fence}\n{src}\n```\n{prompt}",
        tag = picked.tag,
        src = picked.source(code)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = "<!DOCTYPE html>\n<html>\n<head><title>a <b></title>\n<style>p > b { }</style></head>\n<body>\n\
        <h1 id=\"t\">Three</h1>\n<div class=\"row\">\n  <button id=\"one\">One</button>\n  <button id=\"two\" title=\"a > b\">Two</button>\n  \
        <button>Three</button><br>\n</div>\n<table><tr><td>cell</td></tr></table>\n<!-- <p>not here</p> -->\n\
        <ul><li>open<li>also open</ul>\n<script>document.body.append('<p>')</script>\n</body>\n</html>\n";

    fn step(index: usize, tag: &str) -> Step {
        Step { index, tag: tag.into() }
    }

    fn pick(path: Vec<Step>, id: Option<&str>) -> Result<Picked, &'static str> {
        find(PAGE, &PickReport { path, id: id.map(str::to_owned), src: None })
    }

    #[test]
    fn the_second_of_three_buttons_is_found_with_its_whole_source() {
        let picked = pick(vec![step(1, "div"), step(1, "button")], Some("two")).unwrap();
        assert_eq!(picked.source(PAGE), "<button id=\"two\" title=\"a > b\">Two</button>");
        assert_eq!(picked.lines, (9, 9));
        let div = pick(vec![step(1, "div")], None).unwrap();
        assert!(div.source(PAGE).starts_with("<div class=\"row\">") && div.source(PAGE).ends_with("</div>"));
        assert_eq!(div.lines, (7, 11));
        assert!(div.contains_lines(8, 10) && !div.contains_lines(6, 8));
    }

    #[test]
    fn the_browsers_own_tbody_and_unclosed_items_are_followed() {
        let cell =
            pick(vec![step(2, "table"), step(0, "tbody"), step(0, "tr"), step(0, "td")], None).unwrap();
        assert_eq!(cell.source(PAGE), "<td>cell</td>");
        let item = pick(vec![step(3, "ul"), step(1, "li")], None).unwrap();
        assert_eq!(item.source(PAGE), "<li>also open");
    }

    #[test]
    fn a_path_the_source_does_not_have_picks_nothing() {
        assert!(pick(vec![step(1, "div"), step(1, "p")], None).is_err(), "wrong tag");
        assert!(pick(vec![step(9, "p")], None).is_err(), "made by a script");
        assert!(pick(vec![step(1, "div"), step(1, "button")], Some("forged")).is_err(), "another id");
        assert!(pick(vec![], None).is_err());
        assert!(
            find("<p>no body</p>", &PickReport { path: vec![step(0, "p")], id: None, src: None }).is_err()
        );
    }

    #[test]
    fn a_scoped_request_names_the_element_and_its_lines() {
        let picked = pick(vec![step(1, "div"), step(1, "button")], None).unwrap();
        let text = scope_prompt(PAGE, &picked, "make it red");
        assert!(text.contains("Change only this <button> element (lines 9–9"));
        assert!(text.contains("<button id=\"two\" title=\"a > b\">Two</button>"));
        assert!(text.ends_with("make it red"));
    }
}
