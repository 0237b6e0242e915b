//! What Flint asks every model for. Here rather than in the app because the gateway's benchmarks
//! measure the embedded model on exactly the request the app sends, and the worker counts it
//! against the context window.
//!
//! A request is built from [`RequestParts`]: the system prompt with the pinned goal, earlier turns
//! only when the person continues the thread ("batch, don't chain": a fresh context by default),
//! the current file when the prompt edits it, and the instruction.

use crate::{ChatMessage, Role};

/// The system prompt the app sends with every generation: one complete page in one fenced block,
/// so the preview can show it while it streams.
pub const SYSTEM_PROMPT: &str = "You are Flint, an expert front-end developer. Answer with one complete, \
self-contained HTML document: a single file with its CSS in <style> and its JavaScript in <script>, \
no external files, libraries or network requests. Put the whole document in one ```html fenced code \
block and write nothing before or after it.";

/// The system prompt for an edit of the current file: search/replace blocks (the format
/// `flint_worker::edits` parses), so a one-line change costs one block, not a whole page.
pub const EDIT_SYSTEM_PROMPT: &str = "You are Flint, an expert front-end developer. You are given the \
current file of a self-contained HTML page and an instruction. Change only what the instruction needs, \
as search/replace blocks:\n\
<<<<<<< SEARCH\n\
lines copied exactly from the current file, with enough context to occur only once\n\
=======\n\
the lines that replace them\n\
>>>>>>> REPLACE\n\
Use one block per separate change; blocks must not overlap. To rewrite most of the page, answer \
instead with the whole new document in one ```html fenced code block. Write at most one short \
sentence besides the blocks.";

/// The system prompt for a new React project: TSX files in fenced blocks named by path (the form
/// the worker's parser reads), `App.tsx` default-exporting the component the preview mounts,
/// Tailwind classes for style, and only the packages the preview has (see `[preview]` in
/// flint.example.toml).
pub const REACT_SYSTEM_PROMPT: &str = "You are Flint, an expert React developer. Answer with a small \
React project in TypeScript: `App.tsx` default-exports the App component, and other components go in \
`components/`, imported with relative paths. Put each file in its own fenced code block whose info \
string is its language and path, for example ```tsx App.tsx or ```tsx components/Button.tsx. Style \
with Tailwind CSS classes. Import only react, react-dom, lucide-react, clsx, zustand, date-fns, \
recharts, framer-motion and d3; make no network requests. Write nothing before or after the blocks.";

/// The system prompt for an edit of a React project (the current code is its files, each in a fence
/// named by its path, see [`crate::project`]): search/replace blocks under the path of the file
/// they change, or files written whole (the form `flint_worker::edits` and the edit stream read).
pub const REACT_EDIT_SYSTEM_PROMPT: &str = "You are Flint, an expert React developer. You are given the current files of a React project, each in a fenced block named by its path, and an instruction. Change only what the instruction needs, as search/replace blocks, each under a line with the path of the file it changes:
components/Button.tsx
<<<<<<< SEARCH
lines copied exactly from that file, with enough context to occur only once in it
=======
the lines that replace them
>>>>>>> REPLACE
Use one block per separate change; blocks must not overlap. To add a file, or to rewrite most of one, write the whole file in a fenced code block named by its path, for example ```tsx components/Card.tsx. Import only react, react-dom, lucide-react, clsx, zustand, date-fns, recharts, framer-motion and d3. Write at most one short sentence besides the blocks.";

/// What a project is made of, which decides the system prompt and how the preview runs it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProjectKind {
    /// One self-contained HTML document (the default: it runs anywhere, with nothing to load).
    #[default]
    Html,
    /// React components in TSX/JSX files, transformed in the worker and run with the vendored
    /// packages.
    React,
}

impl ProjectKind {
    /// Every kind, in the picker's order.
    pub const ALL: [ProjectKind; 2] = [ProjectKind::Html, ProjectKind::React];

    /// Its name in the picker and in saved drafts.
    pub fn label(self) -> &'static str {
        match self {
            ProjectKind::Html => "HTML page",
            ProjectKind::React => "React app",
        }
    }

    /// Its short, stable name (`html`, `react`).
    pub fn key(self) -> &'static str {
        match self {
            ProjectKind::Html => "html",
            ProjectKind::React => "react",
        }
    }

    /// The kind named `key`, if any.
    pub fn from_key(key: &str) -> Option<ProjectKind> {
        Self::ALL.into_iter().find(|k| k.key() == key)
    }

    /// The kind a prompt's words ask for, if they name one: React, JSX/TSX, hooks, components
    /// of a named React library. `None` when they do not say (the person's choice stands).
    pub fn suggested_by(prompt: &str) -> Option<ProjectKind> {
        const REACT_WORDS: [&str; 9] =
            ["react", "jsx", "tsx", "usestate", "useeffect", "shadcn", "next.js", "nextjs", "zustand"];
        let lower = prompt.to_ascii_lowercase();
        let words = lower.split(|c: char| !(c.is_ascii_alphanumeric() || c == '.'));
        let mut words = words.map(|w| w.trim_end_matches('.'));
        words.any(|w| REACT_WORDS.contains(&w)).then_some(ProjectKind::React)
    }

    /// This kind, unless `prompt`'s words alone give it (the kind a link must carry so that it
    /// opens as it was shared).
    pub fn unless_suggested_by(self, prompt: &str) -> Option<ProjectKind> {
        (self != Self::suggested_by(prompt).unwrap_or_default()).then_some(self)
    }

    /// The system prompt of a new answer of this kind.
    pub fn system_prompt(self) -> &'static str {
        match self {
            ProjectKind::Html => SYSTEM_PROMPT,
            ProjectKind::React => REACT_SYSTEM_PROMPT,
        }
    }
}

/// One earlier prompt and the code it led to, carried by "continue thread".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turn {
    /// What the person asked.
    pub prompt: String,
    /// The code that came of it.
    pub code: String,
}

/// What one request holds, before it becomes messages. The worker counts these same texts
/// ([`RequestParts::system`], [`goal_text`], [`file_text`], [`turn_text`], the prompt), so the
/// meter measures what is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestParts<'a> {
    /// The pinned goal; empty for none. Never trimmed.
    pub goal: &'a str,
    /// The current file, when the prompt edits it.
    pub file: Option<&'a str>,
    /// Earlier turns to carry, oldest first (empty: a fresh context).
    pub history: &'a [Turn],
    /// The new instruction.
    pub prompt: &'a str,
    /// What a new answer is made of (an edit keeps the file's own form).
    pub kind: ProjectKind,
}

impl RequestParts<'_> {
    /// The system prompt this request uses: an edit's follows the current code's form (a
    /// project's files, or one page).
    pub fn system(&self) -> &'static str {
        match self.file {
            Some(file) if crate::project::sections(file).is_some() => REACT_EDIT_SYSTEM_PROMPT,
            Some(_) => EDIT_SYSTEM_PROMPT,
            None => self.kind.system_prompt(),
        }
    }

    /// The messages, leaving out the oldest `dropped` turns of history (the budget's plan).
    pub fn messages(&self, dropped: usize) -> Vec<ChatMessage> {
        let mut system = self.system().to_owned();
        system.push_str(&goal_text(self.goal));
        let mut messages = vec![ChatMessage::new(Role::System, system)];
        for turn in self.history.iter().skip(dropped) {
            messages.push(ChatMessage::new(Role::User, turn.prompt.trim()));
            messages.push(ChatMessage::new(Role::Assistant, turn_answer(turn, self.file)));
        }
        let mut user = self.file.map(file_text).unwrap_or_default();
        user.push_str(self.prompt.trim());
        messages.push(ChatMessage::new(Role::User, user));
        messages
    }
}

/// The pinned goal as it is appended to the system prompt; empty for no goal.
pub fn goal_text(goal: &str) -> String {
    let goal = goal.trim();
    if goal.is_empty() {
        return String::new();
    }
    format!(
        "\n\nThe goal, pinned by the person (what we are building and its acceptance criteria; keep to it):\n{goal}"
    )
}

/// The current file (or a project's files) as it opens the user's message.
pub fn file_text(file: &str) -> String {
    if crate::project::sections(file).is_some() {
        return format!("The current files:\n{}\nInstruction: ", fenced(file));
    }
    format!("The current file:\n{}\n\nInstruction: ", fenced(file))
}

/// A turn of history as it is counted: its prompt and its answer (see [`turn_answer`]).
pub fn turn_text(turn: &Turn, file: Option<&str>) -> String {
    format!("{}\n{}", turn.prompt.trim(), turn_answer(turn, file))
}

/// A turn's answer: its code, or a pointer to the file when that code is the file sent with the
/// instruction (the last turn of an edit), so the same code is not sent twice.
pub fn turn_answer(turn: &Turn, file: Option<&str>) -> String {
    if file == Some(turn.code.as_str()) {
        "(The code from this turn is the current file, sent with the instruction below.)".to_owned()
    } else {
        fenced(&turn.code)
    }
}

/// Code in an ```` ```html ```` fence, with a fence long enough that the code cannot close it; a
/// project's files are already fenced, each by its path.
fn fenced(code: &str) -> String {
    if crate::project::sections(code).is_some() {
        return code.to_owned();
    }
    let longest =
        code.lines().map(|l| l.trim_start().chars().take_while(|&c| c == '`').count()).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let newline = if code.ends_with('\n') { "" } else { "\n" };
    format!("{fence}html\n{code}{newline}{fence}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(prompt: &str, code: &str) -> Turn {
        Turn { prompt: prompt.into(), code: code.into() }
    }

    #[test]
    fn a_fresh_prompt_is_system_then_user() {
        let parts = RequestParts {
            goal: "",
            file: None,
            history: &[],
            prompt: "  a red button \n",
            kind: ProjectKind::Html,
        };
        let m = parts.messages(0);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0], ChatMessage::new(Role::System, SYSTEM_PROMPT));
        assert_eq!(m[1], ChatMessage::new(Role::User, "a red button"));
    }

    #[test]
    fn the_goal_heads_every_request_and_an_edit_carries_the_file() {
        let parts = RequestParts {
            goal: " A timer app ",
            file: Some("<p>hi</p>"),
            history: &[],
            prompt: "bigger",
            kind: ProjectKind::Html,
        };
        let m = parts.messages(0);
        assert!(m[0].content.starts_with(EDIT_SYSTEM_PROMPT));
        assert!(m[0].content.ends_with("keep to it):\nA timer app"));
        assert_eq!(m[1].content, "The current file:\n```html\n<p>hi</p>\n```\n\nInstruction: bigger");
    }

    #[test]
    fn history_is_carried_oldest_first_and_dropped_oldest_first() {
        let history = [turn("one", "<p>1</p>\n"), turn("two", "<p>2</p>\n")];
        let parts = RequestParts {
            goal: "g",
            file: None,
            history: &history,
            prompt: "three",
            kind: ProjectKind::Html,
        };
        let roles: Vec<Role> = parts.messages(0).iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            [Role::System, Role::User, Role::Assistant, Role::User, Role::Assistant, Role::User]
        );
        let kept = parts.messages(1);
        assert_eq!(kept.len(), 4);
        assert_eq!(kept[1].content, "two");
        assert_eq!(kept[2].content, "```html\n<p>2</p>\n```");
        assert!(parts.messages(2).iter().all(|m| m.content != "one" && m.content != "two"));
    }

    #[test]
    fn the_current_file_is_not_sent_twice() {
        let history = [turn("one", "<p>1</p>\n"), turn("two", "<p>2</p>\n")];
        let parts = RequestParts {
            goal: "",
            file: Some("<p>2</p>\n"),
            history: &history,
            prompt: "three",
            kind: ProjectKind::Html,
        };
        let m = parts.messages(0);
        assert_eq!(m[2].content, "```html\n<p>1</p>\n```");
        assert!(m[4].content.starts_with("(The code from this turn is the current file"));
        assert!(m[5].content.contains("<p>2</p>"));
    }

    #[test]
    fn a_react_project_gets_its_own_system_prompt_and_an_edit_keeps_the_edit_prompt() {
        let fresh =
            RequestParts { goal: "", file: None, history: &[], prompt: "x", kind: ProjectKind::React };
        assert_eq!(fresh.messages(0)[0].content, REACT_SYSTEM_PROMPT);
        let edit = RequestParts { file: Some("<p>x</p>"), ..fresh };
        assert_eq!(edit.system(), EDIT_SYSTEM_PROMPT);
        let project = "```tsx App.tsx\nexport default () => <p/>;\n```\n\n```css a.css\np {}\n```\n";
        let edit = RequestParts { file: Some(project), ..fresh };
        assert_eq!(edit.system(), REACT_EDIT_SYSTEM_PROMPT);
        let m = edit.messages(0);
        assert_eq!(
            m[1].content,
            format!("The current files:\n{project}\nInstruction: x"),
            "sent as they are kept"
        );
    }

    #[test]
    fn the_prompt_suggests_react_only_when_its_words_say_so() {
        for prompt in ["A React todo app", "todo list in TSX", "use useState for the count", "a Next.js page"]
        {
            assert_eq!(ProjectKind::suggested_by(prompt), Some(ProjectKind::React), "{prompt}");
        }
        for prompt in ["a reactive dashboard", "a pomodoro timer", "a reaction times chart"] {
            assert_eq!(ProjectKind::suggested_by(prompt), None, "{prompt}");
        }
        assert_eq!(ProjectKind::from_key("react"), Some(ProjectKind::React));
        assert_eq!(ProjectKind::from_key(ProjectKind::Html.key()), Some(ProjectKind::Html));
    }

    #[test]
    fn a_kind_is_carried_only_where_the_words_would_give_another() {
        use ProjectKind::{Html, React};
        assert_eq!(React.unless_suggested_by("a todo app"), Some(React));
        assert_eq!(React.unless_suggested_by("a React todo app"), None);
        assert_eq!(Html.unless_suggested_by("a todo app"), None);
        assert_eq!(Html.unless_suggested_by("a page about React hooks"), Some(Html));
    }

    #[test]
    fn a_fence_in_the_code_cannot_close_the_block() {
        let code = "<pre>\n```js\nx\n```\n</pre>";
        assert_eq!(fenced(code), format!("````html\n{code}\n````"));
        assert_eq!(turn_text(&turn(" p ", "x\n"), None), "p\n```html\nx\n```");
    }
}
