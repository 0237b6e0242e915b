//! Marks each HTML element a project's JSX writes with where it is written: `data-flint-src` is
//! `path:start:end`, the element's byte range in its file. Pick reads it off the element clicked in
//! the preview (the nearest one up the tree), so a click finds its JSX in the right file. React 19
//! no longer keeps `jsxDEV`'s source positions on its fibers, and a component's own name says
//! nothing about which `<div>` of it was clicked; the attribute says exactly that.

use oxc_allocator::Allocator;
use oxc_ast::ast::{
    JSXAttributeItem, JSXAttributeName, JSXAttributeValue, JSXElement, JSXElementName, Program, Str,
};
use oxc_ast::builder::AstBuilder;
use oxc_ast_visit::{VisitMut, walk_mut};
use oxc_span::SPAN;

/// The attribute's name, as the preview's pick script reads it.
pub const SOURCE_ATTRIBUTE: &str = "data-flint-src";

/// Adds the attribute to every HTML element (a lowercase tag) of `program`, the module at `path`.
pub(super) fn stamp<'a>(allocator: &'a Allocator, program: &mut Program<'a>, path: &str) {
    Stamp { builder: AstBuilder::new(allocator), allocator, path }.visit_program(program);
}

struct Stamp<'a, 'p> {
    builder: AstBuilder<'a>,
    allocator: &'a Allocator,
    path: &'p str,
}

impl<'a> VisitMut<'a> for Stamp<'a, '_> {
    fn visit_jsx_element(&mut self, it: &mut JSXElement<'a>) {
        let host = matches!(&it.opening_element.name,
            JSXElementName::Identifier(name) if name.name.starts_with(|c: char| c.is_ascii_lowercase()));
        if host {
            let value = format!("{}:{}:{}", self.path, it.span.start, it.span.end);
            let value = Str::from_str_in(&value, &self.allocator);
            let name = JSXAttributeName::new_identifier(SPAN, SOURCE_ATTRIBUTE, &self.builder);
            let value = JSXAttributeValue::new_string_literal(SPAN, value, None, &self.builder);
            let attribute = JSXAttributeItem::new_attribute(SPAN, name, Some(value), &self.builder);
            it.opening_element.attributes.push(attribute);
        }
        walk_mut::walk_jsx_element(self, it);
    }
}
