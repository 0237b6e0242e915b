//! `/api/share`: storing a share link on the gateway for a short `/s/<id>` path. The app sends
//! [`ShareRequest`] and reads [`ShareCreated`]; the gateway reads and writes the same types, so the
//! two cannot drift apart.

use serde::{Deserialize, Serialize};

/// `POST /api/share` body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShareRequest {
    /// The encoded link, as after `#p=`.
    pub link: String,
}

/// `POST /api/share` answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShareCreated {
    /// The new id.
    pub id: String,
    /// The path to share (`/s/<id>`).
    pub path: String,
    /// When the link expires (Unix seconds); absent: kept until deleted (and from older gateways).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<i64>,
    /// How to delete it: `DELETE /api/share/<id>`, sent by the same person (the same sign-in, or
    /// the same address for anonymous use).
    #[serde(default)]
    pub delete: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_older_gateways_answer_without_expiry_or_delete_still_reads() {
        let created: ShareCreated = serde_json::from_str(r#"{"id":"abc","path":"/s/abc"}"#).unwrap();
        assert_eq!(created.expires_at, None);
        assert_eq!(created.delete, "");
        let kept = serde_json::to_string(&created).unwrap();
        assert!(!kept.contains("expires_at"), "{kept}");
    }
}
