//! Judging pages at the model's speed: what a prompt says the page must have ([`vocabulary`]) and be
//! about ([`topic`]), the checks a complete page passed in its hidden check frame ([`report`]), how
//! much it looks like the prompt's picture ([`likeness`]), variations ranked by both ([`rank`]), how
//! long best of N waits for the rest once one page is in ([`deadline`]), and the request that asks
//! the model to fix what failed ([`fix`]). Plain types, tested natively;
//! `interop::checks` runs the frame and `run/` keeps the results.

pub mod deadline;
pub mod fix;
pub mod guard;
pub mod likeness;
pub mod rank;
pub mod report;
pub mod topic;
pub mod vocabulary;

#[cfg(test)]
mod likeness_tests;
#[cfg(test)]
mod tests;

pub use fix::fix_prompt;
pub use guard::guard_loops;
pub use likeness::Likeness;
pub use rank::{Ranked, rank};
pub use report::{Check, Checked, Report};
pub use vocabulary::{Expect, Term, expect, expect_json, expected};
