use proptest::prelude::*;

use super::*;
use crate::diff::merge;
use crate::project::unbundle;

/// A plain line diff for these tests: one hunk from the first changed line to the last (the
/// worker's real diff is tested with this rule in the app's review).
fn one_hunk(old: &str, new: &str) -> Vec<DiffHunk> {
    let (a, b): (Vec<&str>, Vec<&str>) =
        (old.split_inclusive('\n').collect(), new.split_inclusive('\n').collect());
    if a == b {
        return Vec::new();
    }
    let head = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let tail = a[head..].iter().rev().zip(b[head..].iter().rev()).take_while(|(x, y)| x == y).count();
    let bytes = |lines: &[&str], r: Range<usize>| {
        let start: usize = lines[..r.start].iter().map(|l| l.len()).sum();
        start..start + lines[r].iter().map(|l| l.len()).sum::<usize>()
    };
    let (old_lines, new_lines) = (head..a.len() - tail, head..b.len() - tail);
    vec![DiffHunk {
        old_bytes: bytes(&a, old_lines.clone()),
        new_bytes: bytes(&b, new_lines.clone()),
        old: old_lines,
        new: new_lines,
        ..DiffHunk::default()
    }]
}

/// A project's text as `bundle` writes it.
fn project(files: &[(&str, &str)]) -> String {
    let fenced: Vec<String> =
        files.iter().map(|(path, content)| format!("```tsx {path}\n{content}```\n")).collect();
    fenced.join("\n")
}

fn paths(hunks: &[DiffHunk]) -> Vec<(&str, FileChange)> {
    hunks
        .iter()
        .map(|h| h.file.as_ref().map_or(("?", FileChange::Edited), |f| (f.path.as_str(), f.change)))
        .collect()
}

#[test]
fn a_change_across_two_files_is_one_hunk_per_file_in_its_own_lines() {
    let old = project(&[("App.tsx", "a\nb\nlast of app\n"), ("Header.tsx", "first of header\nh\n")]);
    let new = project(&[("App.tsx", "a\nb\nLAST\n"), ("Header.tsx", "FIRST\nh\n")]);
    // Diffed whole, the change reads across the fences: one hunk, fence lines inside it.
    let whole = one_hunk(&old, &new);
    assert_eq!(whole.len(), 1);
    assert!(old[whole[0].old_bytes.clone()].contains("```"));

    let hunks = project_hunks(&old, &new, one_hunk).expect("both are projects");
    assert_eq!(paths(&hunks), [("App.tsx", FileChange::Edited), ("Header.tsx", FileChange::Edited)]);
    let app = hunks[0].file.as_ref().unwrap();
    assert_eq!((app.old.clone(), app.new.clone()), (2..3, 2..3), "lines of App.tsx, not of the text");
    assert_eq!(hunks[0].old, 3..4, "lines of the text, for the diff view");
    let header = hunks[1].file.as_ref().unwrap();
    assert_eq!(header.old, 0..1);
    for h in &hunks {
        let f = h.file.as_ref().unwrap();
        assert!(!old[h.old_bytes.clone()].contains('`') && !new[h.new_bytes.clone()].contains('`'), "{h:?}");
        assert_eq!((f.old_shown.clone(), f.new_shown.clone()), (h.old_bytes.clone(), h.new_bytes.clone()));
    }
    assert_eq!(merge(&old, &new, &hunks, &[true, true]).as_deref(), Some(new.as_str()));
    let app_only = merge(&old, &new, &hunks, &[true, false]).unwrap();
    assert_eq!(app_only, project(&[("App.tsx", "a\nb\nLAST\n"), ("Header.tsx", "first of header\nh\n")]));
}

#[test]
fn a_file_added_or_removed_is_one_hunk_with_its_fences() {
    let old = project(&[("App.tsx", "app\n"), ("Old.tsx", "old\n"), ("Keep.tsx", "keep\n")]);
    let new = project(&[("App.tsx", "app\n"), ("Keep.tsx", "keep\n"), ("New.tsx", "new 1\nnew 2\n")]);
    let hunks = project_hunks(&old, &new, one_hunk).unwrap();
    assert_eq!(paths(&hunks), [("Old.tsx", FileChange::Removed), ("New.tsx", FileChange::Added)]);
    let (removed, added) = (hunks[0].file.as_ref().unwrap(), hunks[1].file.as_ref().unwrap());
    assert_eq!(&old[removed.old_shown.clone()], "old\n", "the reader sees the file, not its fences");
    assert_eq!(&new[added.new_shown.clone()], "new 1\nnew 2\n");
    assert_eq!(added.new, 0..2);
    for mask in [[false, false], [true, false], [false, true], [true, true]] {
        let merged = merge(&old, &new, &hunks, &mask).unwrap();
        let files = unbundle(&merged).expect("still a project");
        let names: Vec<_> = files.iter().filter_map(|f| f.name.as_deref()).collect();
        let mut want = vec!["App.tsx"];
        want.extend(if mask[0] { None } else { Some("Old.tsx") });
        want.push("Keep.tsx");
        want.extend(if mask[1] { Some("New.tsx") } else { None });
        assert_eq!(names, want, "{mask:?}");
    }
    assert_eq!(merge(&old, &new, &hunks, &[true, true]).as_deref(), Some(new.as_str()));
}

#[test]
fn the_first_files_removed_leave_a_text_that_starts_with_a_fence() {
    let old = project(&[("A.tsx", "a\n"), ("B.tsx", "b\n"), ("C.tsx", "c\n"), ("D.tsx", "d\n")]);
    let new = project(&[("N.tsx", "n\n"), ("C.tsx", "c\n"), ("D.tsx", "d\n")]);
    let hunks = project_hunks(&old, &new, one_hunk).unwrap();
    assert_eq!(
        paths(&hunks)[0],
        ("N.tsx", FileChange::Added),
        "an added file goes where it is in the new text"
    );
    for bits in 0..8u8 {
        let mask: Vec<bool> = (0..3).map(|i| bits & (1 << i) != 0).collect();
        let merged = merge(&old, &new, &hunks, &mask).unwrap();
        assert!(unbundle(&merged).is_some(), "{mask:?}: {merged:?}");
    }
}

#[test]
fn a_fence_that_changes_goes_with_its_whole_file() {
    let old = project(&[("App.tsx", "a\n"), ("B.tsx", "b\n")]);
    let new = "```tsx App.tsx\na\n```\n\n````tsx B.tsx\nb ``` c\n````\n";
    let hunks = project_hunks(&old, new, one_hunk).unwrap();
    assert_eq!(paths(&hunks), [("B.tsx", FileChange::Edited)]);
    assert_eq!(&new[hunks[0].file.as_ref().unwrap().new_shown.clone()], "b ``` c\n");
    assert_eq!(merge(&old, new, &hunks, &[true]).as_deref(), Some(new));
}

#[test]
fn a_page_or_a_broken_project_is_diffed_whole() {
    let project = project(&[("App.tsx", "a\n"), ("B.tsx", "b\n")]);
    assert!(project_hunks("<p>hi</p>\n", "<p>ho</p>\n", one_hunk).is_none());
    assert!(project_hunks(&project, "<p>ho</p>\n", one_hunk).is_none());
    let twice = "```tsx A.tsx\na\n```\n\n```tsx A.tsx\nb\n```\n";
    assert!(project_hunks(twice, &project, one_hunk).is_none(), "a path twice");
}

/// Files named `F0.tsx`… with lines from a small alphabet, so that changes collide.
fn contents() -> impl Strategy<Value = Vec<Option<String>>> {
    let content = prop::collection::vec(prop::sample::select(vec!["x\n", "y\n", "`x`\n", "\n"]), 0..5)
        .prop_map(|lines| lines.concat());
    prop::collection::vec(prop::option::weighted(0.8, content), 6)
}

/// A project text's files, any number of them; `None` unless every fence is closed and nothing
/// but blank lines lies between files.
fn read(text: &str) -> Option<Vec<(String, String)>> {
    let mut files = Vec::new();
    let mut lines = text.split_inclusive('\n');
    while let Some(line) = lines.next() {
        if line == "\n" && !files.is_empty() {
            continue;
        }
        let path = line.strip_prefix("```tsx ")?.strip_suffix('\n')?;
        let mut content = String::new();
        loop {
            match lines.next()? {
                "```\n" => break,
                l => content.push_str(l),
            }
        }
        files.push((path.to_owned(), content));
    }
    Some(files)
}

fn text_of(files: &[Option<String>], order: &[usize]) -> String {
    let named: Vec<(String, &str)> =
        order.iter().filter_map(|&i| files[i].as_deref().map(|c| (format!("F{i}.tsx"), c))).collect();
    project(&named.iter().map(|(p, c)| (p.as_str(), *c)).collect::<Vec<_>>())
}

proptest! {
    /// Whatever is accepted, every file stays fenced; a file whose hunks are all kept is the new
    /// one, all rejected the old one; a file no hunk touches is byte-equal.
    #[test]
    fn any_choice_of_hunks_leaves_every_file_whole(
        old_files in contents(),
        new_files in contents(),
        mask in prop::collection::vec(any::<bool>(), 12),
    ) {
        let order: Vec<usize> = (0..6).collect();
        let (old, new) = (text_of(&old_files, &order), text_of(&new_files, &order));
        let Some(hunks) = project_hunks(&old, &new, one_hunk) else {
            // Fewer than two files on a side: not a project.
            prop_assume!(false);
            return Ok(());
        };
        let merged = merge(&old, &new, &hunks, &mask).expect("hunks of these texts");
        let files = read(&merged);
        prop_assert!(files.is_some(), "a fence is broken: {:?}", merged);
        let files = files.unwrap_or_default();
        for i in 0..6 {
            let path = format!("F{i}.tsx");
            let mine: Vec<bool> = hunks.iter().zip(&mask)
                .filter(|(h, _)| h.file.as_ref().is_some_and(|f| f.path == path))
                .map(|(_, &m)| m).collect();
            let got = files.iter().find(|(p, _)| *p == path).map(|(_, c)| c.as_str());
            let want = if mine.iter().all(|&m| m) && !mine.is_empty() { &new_files[i] } else { &old_files[i] };
            if mine.iter().all(|&m| m) || mine.iter().all(|&m| !m) {
                prop_assert_eq!(got, want.as_deref(), "{} in {:?}", path, merged);
            }
        }
        let all = merge(&old, &new, &hunks, &[true; 12]);
        prop_assert_eq!(all.as_deref(), Some(new.as_str()));
    }
}
