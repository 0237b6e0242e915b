//! The elements a prompt (or the pinned goal) names, as CSS selectors the check frame looks for.
//! A small fixed vocabulary, not a model call: "a button that counts clicks" expects a button.

/// One kind of element people ask for by name.
#[derive(Debug, PartialEq, Eq)]
pub struct Term {
    /// Stable name, as reported by the check frame (`has:button`).
    pub id: &'static str,
    /// How the check reads to a person: "Has a button".
    pub label: &'static str,
    /// The words in a prompt that ask for it, lower case.
    pub words: &'static [&'static str],
    /// What counts as one on the page.
    pub selector: &'static str,
}

/// Every term, in the order checks are listed.
pub const TERMS: &[Term] = &[
    Term {
        id: "has:heading",
        label: "Has a heading",
        words: &["heading", "headings", "headline", "headlines"],
        selector: "h1, h2, h3, h4, h5, h6, [role=heading]",
    },
    Term {
        id: "has:button",
        label: "Has a button",
        words: &["button", "buttons", "btn"],
        selector: "button, input[type=button], input[type=submit], input[type=reset], [role=button]",
    },
    Term {
        id: "has:input",
        label: "Has a text field",
        words: &["input", "inputs", "field", "fields", "textbox", "textfield", "textarea"],
        selector: "input:not([type=hidden]):not([type=button]):not([type=submit]):not([type=reset]):not([type=checkbox]):not([type=radio]):not([type=range]), textarea",
    },
    Term { id: "has:form", label: "Has a form", words: &["form", "forms"], selector: "form" },
    Term {
        id: "has:checkbox",
        label: "Has a checkbox",
        words: &["checkbox", "checkboxes", "tickbox"],
        selector: "input[type=checkbox], [role=checkbox]",
    },
    Term {
        id: "has:slider",
        label: "Has a slider",
        words: &["slider", "sliders"],
        selector: "input[type=range], [role=slider]",
    },
    Term {
        id: "has:select",
        label: "Has a dropdown",
        words: &["dropdown", "dropdowns", "drop-down"],
        selector: "select, [role=listbox], [role=combobox]",
    },
    Term {
        id: "has:list",
        label: "Has a list",
        words: &["list", "lists", "checklist", "todo", "to-do"],
        selector: "ul, ol, [role=list]",
    },
    Term {
        id: "has:table",
        label: "Has a table",
        words: &["table", "tables"],
        selector: "table, [role=table], [role=grid]",
    },
    Term {
        id: "has:image",
        label: "Has an image",
        words: &["image", "images", "picture", "pictures", "photo", "photos", "gallery", "img"],
        selector: "img, picture, svg",
    },
    Term { id: "has:canvas", label: "Has a canvas", words: &["canvas"], selector: "canvas" },
    Term {
        id: "has:chart",
        label: "Has a chart",
        words: &["chart", "charts", "graph", "graphs", "plot"],
        selector: "canvas, svg",
    },
    Term { id: "has:video", label: "Has a video", words: &["video", "videos"], selector: "video" },
    Term {
        id: "has:link",
        label: "Has a link",
        words: &["link", "links", "hyperlink", "hyperlinks"],
        selector: "a[href]",
    },
];

/// The terms `texts` name (a prompt and the pinned goal), each once, in [`TERMS`] order.
pub fn expected(texts: &[&str]) -> Vec<&'static Term> {
    let words: Vec<String> = texts
        .iter()
        .flat_map(|text| text.split(|c: char| !(c.is_alphanumeric() || c == '-')))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    TERMS.iter().filter(|term| words.iter().any(|w| term.words.contains(&w.as_str()))).collect()
}

/// The term with this id.
pub fn term(id: &str) -> Option<&'static Term> {
    TERMS.iter().find(|t| t.id == id)
}

/// What the check frame is sent: `[{"id": …, "selector": …}]`.
pub fn expect_json(terms: &[&Term]) -> String {
    let list: Vec<serde_json::Value> =
        terms.iter().map(|t| serde_json::json!({ "id": t.id, "selector": t.selector })).collect();
    serde_json::Value::Array(list).to_string()
}
