//! The project benchmark's inputs, the same on every machine: React components written the way
//! models write them (typed props, hooks, Tailwind classes, lucide icons, maps and conditionals),
//! varied by a number so no two are alike.

/// One component of about 50 lines, `Card{n}`, using `Icon` from lucide-react.
fn component(n: usize, icon: &str) -> String {
    format!(
        r#"
interface Card{n}Props {{
  title: string;
  items: {{ id: number; label: string; value: number }}[];
  onSelect?: (id: number) => void;
  variant?: 'primary' | 'muted';
}}

export function Card{n}({{ title, items, onSelect, variant = 'primary' }}: Card{n}Props) {{
  const [open, setOpen] = useState<boolean>({open});
  const [query, setQuery] = useState('');
  const total = useMemo(() => items.reduce((sum, item) => sum + item.value * {n}, 0), [items]);
  const visible = items.filter((item) => item.label.toLowerCase().includes(query.toLowerCase()));

  useEffect(() => {{
    if (open && visible.length === 0) setQuery('');
  }}, [open, visible.length]);

  return (
    <section className={{`rounded-2xl p-6 shadow-sm ${{variant === 'primary' ? 'bg-white' : 'bg-slate-100'}}`}}>
      <header className="mb-4 flex items-center justify-between">
        <h2 className="text-lg font-semibold text-slate-900">{{title}} #{n}</h2>
        <button
          type="button"
          onClick={{() => setOpen((o) => !o)}}
          className="rounded-full p-2 text-slate-500 hover:bg-slate-100 hover:text-slate-900"
          aria-label="Toggle {n}"
        >
          <{icon} className="h-5 w-5" />
        </button>
      </header>
      {{open && (
        <div className="space-y-3">
          <input
            value={{query}}
            onChange={{(e: React.ChangeEvent<HTMLInputElement>) => setQuery(e.target.value)}}
            placeholder="Filter {n}…"
            className="w-full rounded-lg border border-slate-200 px-3 py-2 text-sm focus:ring-2 focus:ring-indigo-500"
          />
          <ul className="divide-y divide-slate-100">
            {{visible.map((item) => (
              <li key={{item.id}} className="flex justify-between py-2" onClick={{() => onSelect?.(item.id)}}>
                <span className="text-slate-700">{{item.label}}</span>
                <span className="font-mono text-slate-500">{{(item.value * {n}).toFixed(2)}}</span>
              </li>
            ))}}
          </ul>
          <p className="text-right text-sm text-slate-400">Total {{total.toLocaleString()}}</p>
        </div>
      )}}
    </section>
  );
}}
"#,
        open = n.is_multiple_of(2)
    )
}

const ICONS: [&str; 6] = ["Star", "Heart", "Bell", "Search", "Settings", "User"];

fn header(icons: &[&str]) -> String {
    format!(
        "import React, {{ useEffect, useMemo, useState }} from 'react';\nimport {{ {} }} from 'lucide-react';\n",
        icons.join(", ")
    )
}

/// A TSX file of `lines` lines or a little more: components, then a default-exported `App`
/// rendering them all.
pub fn big_file(lines: usize) -> String {
    let mut text = header(&ICONS);
    let mut n = 0;
    while text.lines().count() + 12 < lines {
        text.push_str(&component(n, ICONS[n % ICONS.len()]));
        n += 1;
    }
    text.push_str(
        "\nconst ITEMS = [{ id: 1, label: 'One', value: 1 }, { id: 2, label: 'Two', value: 2 }];\n\n",
    );
    text.push_str("export default function App() {\n  return (\n    <main className=\"grid gap-6 p-8 md:grid-cols-2\">\n");
    for i in 0..n {
        text.push_str(&format!("      <Card{i} title=\"Card\" items={{ITEMS}} />\n"));
    }
    text.push_str("    </main>\n  );\n}\n");
    text
}

/// A project of `modules` module files (main.tsx, App.tsx, `components/*.tsx` of two components
/// each, `lib/format.ts`) and an `index.css`, as `(path, text)`.
pub fn project(modules: usize) -> Vec<(String, String)> {
    let parts = modules.saturating_sub(3).max(1);
    let mut files = vec![
        (
            "main.tsx".to_owned(),
            "import React from 'react';\nimport { createRoot } from 'react-dom/client';\nimport App from './App';\nimport './index.css';\n\ncreateRoot(document.getElementById('root')!).render(\n  <React.StrictMode>\n    <App />\n  </React.StrictMode>,\n);\n".to_owned(),
        ),
        ("index.css".to_owned(), "@import \"tailwindcss\";\nbody { margin: 0; }\n".to_owned()),
        (
            "lib/format.ts".to_owned(),
            "export const formatNumber = (n: number): string => new Intl.NumberFormat('en-US').format(n);\nexport const clamp = (n: number, lo = 0, hi = 1) => Math.min(hi, Math.max(lo, n));\n".to_owned(),
        ),
    ];
    let mut app =
        String::from("import { useState } from 'react';\nimport { formatNumber } from './lib/format';\n");
    let mut uses = String::new();
    for p in 0..parts {
        let icons = [ICONS[p % ICONS.len()], ICONS[(p + 1) % ICONS.len()]];
        let mut text = header(&icons);
        text.push_str("import { clamp } from '../lib/format';\n");
        text.push_str(&component(2 * p, icons[0]));
        text.push_str(&component(2 * p + 1, icons[1]));
        text.push_str(&format!("\nexport const weight{p} = clamp({p} / 10);\n"));
        files.push((format!("components/Part{p}.tsx"), text));
        app.push_str(&format!(
            "import {{ Card{}, Card{} }} from './components/Part{p}';\n",
            2 * p,
            2 * p + 1
        ));
        uses.push_str(&format!(
            "        <Card{} title=\"A\" items={{items}} onSelect={{setPicked}} />\n        <Card{} title=\"B\" items={{items}} variant=\"muted\" />\n",
            2 * p,
            2 * p + 1
        ));
    }
    app.push_str(&format!(
        "\nconst items = [{{ id: 1, label: 'One', value: 1 }}, {{ id: 2, label: 'Two', value: 2 }}];\n\nexport default function App() {{\n  const [picked, setPicked] = useState<number | null>(null);\n  return (\n    <div className=\"min-h-screen bg-slate-50\">\n      <p className=\"p-4\">Picked {{picked === null ? 'nothing' : formatNumber(picked)}}</p>\n      <div className=\"grid gap-6 p-6 md:grid-cols-3\">\n{uses}      </div>\n    </div>\n  );\n}}\n"
    ));
    files.push(("App.tsx".to_owned(), app));
    files
}
