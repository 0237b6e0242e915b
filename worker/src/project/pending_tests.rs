//! What stands in while an answer streams, and what never does.

use super::super::{build, build_streaming};

fn files(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(p, t)| ((*p).to_owned(), (*t).to_owned())).collect()
}

const APP: &str = "import './index.css';\nimport Header, { Stats, TicketTable as Table } from './components/Widgets';\n\
export default function App() {\n  return <main><Header /><Stats /><Table /></main>;\n}\n";

#[test]
fn components_not_begun_stand_in_with_every_name_taken_and_their_styles_wait() {
    let project = files(&[("App.tsx", APP)]);
    let built = build_streaming(&project, &[], 1);
    assert!(built.errors.is_empty(), "{:?}", built.errors);
    assert_eq!(built.pending, ["components/Widgets"]);
    let stand = built.modules.iter().find(|m| m.key == "~1/components/Widgets.pending").expect("a stand-in");
    assert!(stand.js.contains("export default Pending;"), "{}", stand.js);
    assert!(stand.js.contains("Pending as \"Stats\"") && stand.js.contains("Pending as \"TicketTable\""));
    assert!(!stand.js.contains('<'), "it travels inside a <script>");
    assert!(built.styles.is_empty(), "a style not written yet is left out");
    // Once whole, the same files are an error naming what is missing.
    let whole = build(&project, None);
    assert!(whole.pending.is_empty());
    let said: Vec<String> = whole.errors.iter().map(ToString::to_string).collect();
    assert!(said.iter().any(|e| e.contains("'./components/Widgets' is not in this project")), "{said:?}");
}

#[test]
fn a_hook_a_helper_or_a_namespace_never_stands_in() {
    for (import, used) in [
        ("import { useTodos } from './store';", "useTodos"),
        ("import { formatDate } from './lib/dates';", "formatDate"),
        ("import * as api from './api';", "api"),
        ("export * from './everything';", "1"),
    ] {
        // (Each is used: TypeScript drops an import nothing uses.)
        let app =
            format!("{import}\nexport default function App() {{ return <p>{{String({used})}}</p>; }}\n");
        let built = build_streaming(&files(&[("App.tsx", &app)]), &[], 1);
        assert!(built.pending.is_empty(), "{import}");
        assert_eq!(built.errors.len(), 1, "{import}: {:?}", built.errors);
    }
}

#[test]
fn a_file_being_written_stands_in_until_it_builds_and_exports_what_is_taken() {
    let app = "import Card from './Card';\nexport default () => <Card />;\n";
    // Cut mid-statement: it does not parse yet.
    let cut = files(&[("App.tsx", app), ("Card.tsx", "export default function Card() {\n  return (\n")]);
    let open = ["Card.tsx".to_owned()];
    let built = build_streaming(&cut, &open, 1);
    assert!(built.errors.is_empty(), "{:?}", built.errors);
    assert_eq!(built.pending, ["Card.tsx"]);
    // It parses but has not reached the export the app takes.
    let early = files(&[("App.tsx", app), ("Card.tsx", "type P = { title: string };\n")]);
    assert_eq!(build_streaming(&early, &open, 1).pending, ["Card.tsx"]);
    // Written: it is itself.
    let done = files(&[("App.tsx", app), ("Card.tsx", "export default function Card() { return <b />; }\n")]);
    let built = build_streaming(&done, &open, 1);
    assert!(built.pending.is_empty() && built.errors.is_empty(), "{:?}", built.errors);
}

#[test]
fn a_finished_file_with_an_error_and_the_entry_itself_are_errors_while_streaming() {
    let app = "import Card from './Card';\nexport default () => <Card />;\n";
    let broken = files(&[("App.tsx", app), ("Card.tsx", "export default function Card() { return <b> }\n")]);
    // Card.tsx's fence has closed: its error is real.
    let built = build_streaming(&broken, &[], 1);
    assert!(built.pending.is_empty());
    assert!(built.errors.iter().any(|e| e.path == "Card.tsx"), "{:?}", built.errors);
    // The entry never stands in: there would be nothing to show.
    let cut = files(&[("App.tsx", "export default function App() {\n  return (\n")]);
    let built = build_streaming(&cut, &["App.tsx".to_owned()], 1);
    assert!(built.pending.is_empty() && !built.errors.is_empty());
}

#[test]
fn a_lazy_import_not_written_yet_is_an_error_not_a_stand_in() {
    let app = "import { lazy } from 'react';\nconst Page = lazy(() => import('./Page'));\nexport default () => <Page />;\n";
    let built = build_streaming(&files(&[("App.tsx", app)]), &[], 1);
    assert!(built.pending.is_empty());
    assert_eq!(built.errors.len(), 1, "{:?}", built.errors);
}
