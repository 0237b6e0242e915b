//! One file to a browser module with oxc: parse, check scopes, strip TypeScript, compile JSX for
//! development, hand each import's specifier to the caller to rewrite, print.
//!
//! The rewrite works on the AST after the transform, so imports TypeScript drops (those only used
//! as types) are never asked about, and the `react/jsx-dev-runtime` import the JSX transform adds
//! is.

use std::path::Path;

use oxc_allocator::Allocator;
use oxc_ast::ast::{
    Expression, ImportDeclarationSpecifier, ImportExpression, ModuleDeclaration, Program, SourceType, Str,
    StringLiteral,
};
use oxc_ast_visit::{VisitMut, walk_mut};
use oxc_codegen::Codegen;
use oxc_diagnostics::OxcDiagnostic;
use oxc_parser::Parser;
use oxc_semantic::SemanticBuilder;
use oxc_syntax::module_record::{ExportExportName, ModuleRecord};
use oxc_transformer::{JsxOptions, JsxRuntime, TransformOptions, Transformer};

use super::{TransformError, line_column, nesting};

/// How a file imports another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportKind {
    /// `import './index.css'`: only for its effect, so a style import can be dropped.
    SideEffect,
    /// `import x from '…'`, `import { x } from '…'`.
    Bindings,
    /// `export … from '…'`.
    ReExport,
    /// `import('…')` with a string.
    Dynamic,
}

/// One import, as [`compile`] hands it to its caller.
#[derive(Debug, Clone, Copy)]
pub struct Import<'s> {
    /// The specifier as written (`./components/Button`).
    pub specifier: &'s str,
    /// Byte offset of the specifier's string in the source (0 for imports the transform added).
    pub offset: u32,
    /// How it is imported.
    pub kind: ImportKind,
    /// The names it takes: `default`, each named import or re-export, `*` for a namespace or
    /// `export *`; empty for an import for effect or `import()`.
    pub names: &'s [String],
}

/// A file compiled: its JavaScript, and what it exports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compiled {
    /// The module's JavaScript.
    pub js: String,
    /// The names it exports (`default` among them); `None` when it also re-exports all of another
    /// module's (`export * from …`), so what it exports is not known from it alone.
    pub exports: Option<Vec<String>>,
}

/// What to do with an import.
#[derive(Debug, PartialEq, Eq)]
pub enum Rewrite {
    /// Leave the specifier as written.
    Keep,
    /// Replace the specifier.
    To(String),
    /// Remove the import (only [`ImportKind::SideEffect`] ones; others are kept).
    Drop,
}

/// The oxc source type for a project path, `None` when it is not a module.
fn source_type(path: &str) -> Option<SourceType> {
    let ext = path.rsplit_once('.').map(|(_, ext)| ext)?;
    let kind = match ext {
        "tsx" => SourceType::tsx(),
        "ts" => SourceType::ts(),
        // Models put JSX in `.js` files as often as in `.jsx` ones (Create React App allowed it).
        "jsx" | "js" | "mjs" => SourceType::jsx(),
        _ => return None,
    };
    // Every file runs as an ES module in the preview.
    Some(kind.with_module(true))
}

fn options() -> TransformOptions {
    TransformOptions {
        jsx: JsxOptions {
            runtime: JsxRuntime::Automatic,
            // `jsxDEV` with `{ fileName, lineNumber, columnNumber }` on every element: how Pick
            // finds a clicked element's JSX.
            development: true,
            ..JsxOptions::enable()
        },
        ..TransformOptions::default()
    }
}

/// `source` at project path `path` as JavaScript, each import's specifier passed through
/// `on_import`; every error the parser, the scope check or the transform found otherwise.
pub fn compile(
    path: &str,
    source: &str,
    on_import: &mut dyn FnMut(Import<'_>) -> Rewrite,
) -> Result<Compiled, Vec<TransformError>> {
    let Some(source_type) = source_type(path) else {
        return Err(vec![TransformError::whole_file(path, "only .tsx .ts .jsx .js .mjs files are modules")]);
    };
    if let Some(at) = nesting::too_deep(source) {
        let message = "nests too deeply to build here: split the expression or the component";
        return Err(vec![TransformError::at(path, source, u32::try_from(at).unwrap_or(u32::MAX), message)]);
    }
    let errors = |diagnostics: Vec<OxcDiagnostic>| -> Vec<TransformError> {
        diagnostics.iter().map(|d| error_of(path, source, d)).collect()
    };
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, source, source_type).parse();
    let found: Vec<OxcDiagnostic> = parsed.diagnostics.errors().cloned().collect();
    if parsed.panicked || !found.is_empty() {
        let mut found = errors(found);
        if found.is_empty() {
            found.push(TransformError::whole_file(path, "could not be parsed"));
        }
        return Err(found);
    }
    let has_dynamic_imports = !parsed.module_record.dynamic_imports.is_empty();
    let exports = exports(&parsed.module_record);
    let mut program = parsed.program;
    super::stamp::stamp(&allocator, &mut program, path);

    let semantic = SemanticBuilder::new()
        .with_check_syntax_error(true)
        // The TypeScript transform lowers `enum`s from values computed here.
        .with_enum_eval(true)
        // The transform adds scopes and symbols (JSX's import, `_jsxFileName`): room for them.
        .with_excess_capacity(2.0)
        .build(&program);
    let found: Vec<OxcDiagnostic> = semantic.diagnostics.errors().cloned().collect();
    if !found.is_empty() {
        return Err(errors(found));
    }
    let scoping = semantic.semantic.into_scoping();

    let transformed =
        Transformer::new(&allocator, Path::new(path), &options()).build_with_scoping(scoping, &mut program);
    // The transform's few diagnostics are warnings to oxc but errors to Babel, and each breaks
    // the page at run time (a namespaced tag, a `key` without a value): all of them are errors.
    if !transformed.diagnostics.is_empty() {
        return Err(errors(transformed.diagnostics.into_vec()));
    }

    rewrite_imports(&allocator, &mut program, has_dynamic_imports, on_import);
    let printed = Codegen::new().with_scoping(Some(transformed.scoping)).build(&program);
    Ok(Compiled { js: printed.code, exports })
}

/// The names a module exports, `None` when an `export *` makes them unknown. (Types count too: a
/// name only ever asked for as a type is dropped from its importer before anyone asks.)
fn exports(record: &ModuleRecord<'_>) -> Option<Vec<String>> {
    if !record.star_export_entries.is_empty() {
        return None;
    }
    let names = record.local_export_entries.iter().chain(record.indirect_export_entries.iter());
    let names = names.filter_map(|entry| match &entry.export_name {
        ExportExportName::Name(name) => Some(name.name.to_string()),
        ExportExportName::Default(_) => Some("default".to_owned()),
        ExportExportName::Null => None,
    });
    Some(names.collect())
}

/// A diagnostic at its primary label's start, else its first one's (1-based line and UTF-16
/// column, as the editor counts).
fn error_of(path: &str, source: &str, diagnostic: &OxcDiagnostic) -> TransformError {
    let labels = &diagnostic.labels;
    let offset = labels.iter().find(|label| label.primary()).or(labels.first()).map(|label| label.offset());
    let (line, column) = offset.map_or((0, 0), |at| line_column(source, at));
    TransformError { path: path.to_owned(), line, column, message: diagnostic.message.to_string() }
}

/// Passes every import of `program` through `on_import` and applies its answer in place.
fn rewrite_imports<'a>(
    allocator: &'a Allocator,
    program: &mut Program<'a>,
    has_dynamic_imports: bool,
    on_import: &mut dyn FnMut(Import<'_>) -> Rewrite,
) {
    // Static imports and re-exports are top-level statements: no walk of the whole tree for them.
    program.body.retain_mut(|statement| {
        let Some(declaration) = statement.as_module_declaration_mut() else { return true };
        let (source, kind, names) = match declaration {
            ModuleDeclaration::ImportDeclaration(import) => {
                let side_effect = import.specifiers.as_ref().is_none_or(|s| s.is_empty());
                let kind = if side_effect { ImportKind::SideEffect } else { ImportKind::Bindings };
                let names = import.specifiers.iter().flatten().map(|specifier| match specifier {
                    ImportDeclarationSpecifier::ImportSpecifier(it) => it.imported.name().to_string(),
                    ImportDeclarationSpecifier::ImportDefaultSpecifier(_) => "default".to_owned(),
                    ImportDeclarationSpecifier::ImportNamespaceSpecifier(_) => "*".to_owned(),
                });
                let names = names.collect();
                (&mut import.source, kind, names)
            }
            ModuleDeclaration::ExportAllDeclaration(export) => {
                (&mut export.source, ImportKind::ReExport, vec!["*".to_owned()])
            }
            ModuleDeclaration::ExportFromDeclaration(export) => {
                let names: Vec<String> =
                    export.specifiers.iter().map(|s| s.local.name().to_string()).collect();
                (&mut export.source, ImportKind::ReExport, names)
            }
            _ => return true,
        };
        apply(allocator, source, kind, &names, on_import)
    });
    if has_dynamic_imports {
        DynamicImports { allocator, on_import }.visit_program(program);
    }
}

/// Applies `on_import`'s answer to `literal`; false when the import is to be removed.
fn apply<'a>(
    allocator: &'a Allocator,
    literal: &mut StringLiteral<'a>,
    kind: ImportKind,
    names: &[String],
    on_import: &mut dyn FnMut(Import<'_>) -> Rewrite,
) -> bool {
    let import = Import { specifier: literal.value.as_str(), offset: literal.span.start, kind, names };
    match on_import(import) {
        Rewrite::Keep => true,
        Rewrite::To(specifier) => {
            literal.value = Str::from_str_in(&specifier, &allocator);
            // The printer writes `raw` when it is there: it must not keep the old text.
            literal.raw = None;
            true
        }
        Rewrite::Drop => kind != ImportKind::SideEffect,
    }
}

/// Finds `import('…')` anywhere in a program (a lazy route or component).
struct DynamicImports<'x, 'a> {
    allocator: &'a Allocator,
    on_import: &'x mut dyn FnMut(Import<'_>) -> Rewrite,
}

impl<'a> VisitMut<'a> for DynamicImports<'_, 'a> {
    fn visit_import_expression(&mut self, it: &mut ImportExpression<'a>) {
        if let Expression::StringLiteral(literal) = &mut it.source {
            apply(self.allocator, literal, ImportKind::Dynamic, &[], self.on_import);
        }
        walk_mut::walk_import_expression(self, it);
    }
}

#[cfg(test)]
#[path = "transform_tests.rs"]
mod tests;
