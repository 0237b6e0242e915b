//! What a prompt (or the pinned goal) asks the page to have: the elements it names, as CSS selectors
//! the check frame looks for, and the behaviour a few words imply (a clock keeps time). A small fixed
//! vocabulary, not a model call: "a button that counts clicks" expects a button, "a tip calculator"
//! something to type into or press, "a digital clock" a page that changes by itself.

use super::topic::topic_stems;

/// What the check frame looks for.
#[derive(Debug, PartialEq, Eq)]
pub enum Need {
    /// An element matching this CSS selector, shown on screen.
    Shown(&'static str),
    /// The page changes by itself within about a second (after clicking its Start button, if it
    /// waits for one).
    Ticks,
}

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
    pub need: Need,
}

/// Everything a page is checked for beyond what every page is: the terms its prompt and goal name,
/// and the words of its topic (stems, see [`topic_stems`]) of which the page must show one.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Expect {
    /// Elements and behaviours named, each once.
    pub terms: Vec<&'static Term>,
    /// Stems of the words that say what the page is about; empty: not checked.
    pub topic: Vec<String>,
}

/// Every term, in the order checks are listed.
pub const TERMS: &[Term] = &[
    Term {
        id: "has:heading",
        label: "Has a heading",
        words: &["heading", "headings", "headline", "headlines"],
        need: Need::Shown("h1, h2, h3, h4, h5, h6, [role=heading]"),
    },
    Term {
        id: "has:button",
        label: "Has a button",
        words: &["button", "buttons", "btn"],
        need: Need::Shown("button, input[type=button], input[type=submit], input[type=reset], [role=button]"),
    },
    Term {
        id: "has:input",
        label: "Has a text field",
        words: &[
            "input",
            "inputs",
            "field",
            "fields",
            "textbox",
            "textfield",
            "textarea",
            "email",
            "e-mail",
            "login",
            "log-in",
            "signin",
            "sign-in",
            "signup",
            "sign-up",
        ],
        need: Need::Shown(
            "input:not([type=hidden]):not([type=button]):not([type=submit]):not([type=reset]):not([type=checkbox]):not([type=radio]):not([type=range]), textarea",
        ),
    },
    Term {
        id: "has:password",
        label: "Has a password field",
        words: &["password", "passwords"],
        need: Need::Shown("input[type=password]"),
    },
    // Things a person uses, whatever the model builds them from: a calculator of buttons or of
    // fields, a toggle that is a button or a checkbox.
    Term {
        id: "has:controls",
        label: "Has controls to use",
        words: &[
            "calculator",
            "calculators",
            "converter",
            "converters",
            "picker",
            "pickers",
            "toggle",
            "toggles",
            "switch",
            "counter",
            "counters",
            "roller",
            "quiz",
        ],
        need: Need::Shown(
            "button, input:not([type=hidden]), select, textarea, [role=button], [role=switch], [role=slider], [role=checkbox]",
        ),
    },
    Term { id: "has:form", label: "Has a form", words: &["form", "forms"], need: Need::Shown("form") },
    Term {
        id: "has:checkbox",
        label: "Has a checkbox",
        words: &["checkbox", "checkboxes", "tickbox"],
        need: Need::Shown("input[type=checkbox], [role=checkbox]"),
    },
    Term {
        id: "has:slider",
        label: "Has a slider",
        words: &["slider", "sliders"],
        need: Need::Shown("input[type=range], [role=slider]"),
    },
    Term {
        id: "has:select",
        label: "Has a dropdown",
        words: &["dropdown", "dropdowns", "drop-down"],
        need: Need::Shown("select, [role=listbox], [role=combobox]"),
    },
    Term {
        id: "has:list",
        label: "Has a list",
        words: &["list", "lists", "checklist", "todo", "to-do"],
        need: Need::Shown("ul, ol, [role=list]"),
    },
    Term {
        id: "has:table",
        label: "Has a table",
        words: &["table", "tables"],
        need: Need::Shown("table, [role=table], [role=grid]"),
    },
    Term {
        id: "has:image",
        label: "Has an image",
        words: &["image", "images", "picture", "pictures", "photo", "photos", "gallery", "img"],
        need: Need::Shown("img, picture, svg"),
    },
    Term { id: "has:canvas", label: "Has a canvas", words: &["canvas"], need: Need::Shown("canvas") },
    Term {
        id: "has:chart",
        label: "Has a chart",
        words: &["chart", "charts", "graph", "graphs", "plot"],
        need: Need::Shown("canvas, svg"),
    },
    Term { id: "has:video", label: "Has a video", words: &["video", "videos"], need: Need::Shown("video") },
    Term {
        id: "has:link",
        label: "Has a link",
        words: &["link", "links", "hyperlink", "hyperlinks"],
        need: Need::Shown("a[href]"),
    },
    Term {
        id: "ticks",
        label: "Keeps time",
        words: &["clock", "clocks", "timer", "timers", "stopwatch", "stopwatches", "countdown", "countdowns"],
        need: Need::Ticks,
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

/// What a page made for `prompt` is checked for, with the pinned `goal`. An edit (`editing`) is
/// still checked for the elements its words name ("add a button"), but its topic is the goal's
/// alone: "make it red" says nothing about what the page is.
pub fn expect(prompt: &str, goal: &str, editing: bool) -> Expect {
    let mut topic = topic_stems(goal);
    if !editing {
        for stem in topic_stems(prompt) {
            if !topic.contains(&stem) {
                topic.push(stem);
            }
        }
    }
    Expect { terms: expected(&[prompt, goal]), topic }
}

/// What the check frame is sent: every element term, `{"id": …, "selector": …}`, whatever was
/// asked, then `{"id": "ticks", "ticks": true}` if a clock was. The page shares the frame's realm:
/// it learns no word of the prompt, only whether to be watched for a second or two (a clock). The
/// topic is matched by [`report::read`](super::report::read) in the text the frame reports.
pub fn expect_json(expect: &Expect) -> String {
    let mut list: Vec<serde_json::Value> = TERMS
        .iter()
        .filter_map(|t| match t.need {
            Need::Shown(selector) => Some(serde_json::json!({ "id": t.id, "selector": selector })),
            Need::Ticks => None,
        })
        .collect();
    for t in expect.terms.iter().filter(|t| t.need == Need::Ticks) {
        list.push(serde_json::json!({ "id": t.id, "ticks": true }));
    }
    serde_json::Value::Array(list).to_string()
}
