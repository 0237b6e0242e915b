//! The benchmark's inputs, made the same on every machine: pages of mixed HTML/CSS/JS, revisions
//! of them, answers of edit blocks, and chunks as a stream delivers them.

/// xorshift64: the same inputs on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// Skewed towards small indices, as word frequencies are.
    fn zipf(&mut self, n: usize) -> usize {
        let a = self.below(n);
        self.below(a + 1)
    }
}

const WORDS: &[&str] = &[
    "the",
    "a",
    "to",
    "of",
    "and",
    "in",
    "is",
    "for",
    "with",
    "on",
    "your",
    "this",
    "page",
    "button",
    "color",
    "card",
    "menu",
    "item",
    "list",
    "title",
    "value",
    "update",
    "render",
    "state",
    "click",
    "header",
    "footer",
    "section",
    "content",
    "image",
    "price",
    "order",
    "search",
    "result",
    "user",
    "Grüße",
    "café",
    "naïve",
    "日本語",
    "données",
    "événement",
    "straße",
    "🌍",
    "✓",
    "größe",
];

/// About `bytes` of a generated web page: markup with prose, a style sheet and a script, with
/// repeated identifiers and some non-ASCII, like a model's output. Lines are unique (they carry
/// their number), so edit anchors can be.
pub fn page(seed: u64, bytes: usize) -> String {
    let mut rng = Rng(seed);
    let mut out = String::from("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<style>\n");
    let mut n = 0usize;
    let sentence = |rng: &mut Rng| {
        (0..4 + rng.below(10)).map(|_| WORDS[rng.zipf(WORDS.len())]).collect::<Vec<_>>().join(" ")
    };
    while out.len() < bytes {
        n += 1;
        let w = WORDS[rng.zipf(WORDS.len())];
        let line = match rng.below(8) {
            0 => format!(
                ".{w}-{n} {{ color: #{:06x}; margin: {}px auto; }}\n",
                rng.below(1 << 24),
                rng.below(40)
            ),
            1 | 2 => format!("  <p class=\"{w}\" id=\"p{n}\">{}.</p>\n", sentence(&mut rng)),
            3 => format!("  <li><a href=\"/{w}/{n}\">{}</a></li>\n", sentence(&mut rng)),
            4 => {
                format!("    const {w}{n} = items.filter((x) => x.{w} > {}).map(render);\n", rng.below(1000))
            }
            5 => {
                format!("function {w}_{n}(el) {{ el.textContent = `{}`; return {n}; }}\n", sentence(&mut rng))
            }
            6 => format!("\t<div data-id=\"{n}\"><span>{w}</span> <em>{}</em></div>\n", sentence(&mut rng)),
            _ => format!("  <!-- {n}: {} -->\n", sentence(&mut rng)),
        };
        out.push_str(&line);
    }
    out
}

/// `text` with about one line in a hundred edited, inserted or deleted.
pub fn revise(text: &str, seed: u64) -> String {
    let mut rng = Rng(seed);
    let mut out = String::with_capacity(text.len() + text.len() / 50);
    for line in text.split_inclusive('\n') {
        match rng.below(300) {
            0 => out.push_str(&line.replacen("class", "className", 1)),
            1 => {
                out.push_str(line);
                out.push_str("  <p>an inserted paragraph, ünïcode ✓</p>\n");
            }
            2 => {}
            _ => out.push_str(line),
        }
    }
    out
}

/// An answer with `n` blocks for `file`: three lines each, spread over the file, a fifth of them
/// with the indentation changed (so the whitespace-tolerant match runs too).
pub fn answer(file: &str, n: usize) -> String {
    let lines: Vec<&str> = file.split_inclusive('\n').collect();
    let mut out = String::from("Here are the changes:\n\n```html\n");
    for i in 0..n {
        let at = 10 + i * (lines.len() - 20) / n;
        let search: String = lines[at..at + 3]
            .iter()
            .map(|l| if i % 5 == 0 { format!("  {}", l.trim_start()) } else { (*l).to_owned() })
            .collect();
        let replace = format!("{search}  <p>block {i} was here</p>\n");
        out.push_str(&format!("<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n\n"));
    }
    out.push_str("```\n");
    out
}

/// `text` in pieces of about `len` bytes, cut at char boundaries.
pub fn chunks(text: &str, len: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let mut end = (at + len).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[at..end]);
        at = end;
    }
    out
}
