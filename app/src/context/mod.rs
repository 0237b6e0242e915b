//! The contexts the root component provides and the components read: small `Copy` structs of
//! signals, one per concern, each with its `provide_*`/`expect_*` pair. They sit below the
//! components, the run code and the root component, so that any of those can read them without a
//! circle back to the root.

mod fan_out;
mod gateway_status;
mod model_choice;
mod shared_link;
mod worker_link;

pub use fan_out::{FanOut, expect_fan_out, provide_fan_out};
pub use gateway_status::{GatewayStatus, expect_gateway_status, provide_gateway_status};
pub use model_choice::{ModelChoice, expect_model_choice, provide_model_choice};
pub use shared_link::{SharedLink, expect_shared_link, provide_shared_link};
pub use worker_link::{expect_worker_link, provide_worker_link};
