//! `[discovery]`: looking for model servers already running on this machine (Ollama, llama.cpp's
//! server, LM Studio, vLLM, SGLang, LiteLLM), so a person who runs one needs no file to use it.

use serde::Deserialize;

/// `[discovery]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DiscoveryConfig {
    /// `true` or `false` forces it; unset: on while the gateway listens on loopback only. A
    /// gateway others reach serves them what runs on its own machine only when its operator says so.
    pub enabled: Option<bool>,
    /// The ports probed on 127.0.0.1, one per kind of server; 0 skips a kind.
    pub ports: DiscoveryPorts,
}

/// Where each kind of server listens unless told otherwise (their own defaults).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DiscoveryPorts {
    /// Ollama (11434).
    pub ollama: u16,
    /// llama.cpp's `llama-server` (8080).
    pub llama_cpp: u16,
    /// LM Studio's server (1234).
    pub lm_studio: u16,
    /// vLLM (8000).
    pub vllm: u16,
    /// SGLang (30000).
    pub sglang: u16,
    /// LiteLLM's proxy (4000).
    pub litellm: u16,
}

impl Default for DiscoveryPorts {
    fn default() -> Self {
        Self { ollama: 11434, llama_cpp: 8080, lm_studio: 1234, vllm: 8000, sglang: 30000, litellm: 4000 }
    }
}

impl DiscoveryPorts {
    /// No kind probed: tests then name only the ports of their own fake servers.
    pub fn none() -> Self {
        Self { ollama: 0, llama_cpp: 0, lm_studio: 0, vllm: 0, sglang: 0, litellm: 0 }
    }
}

impl DiscoveryConfig {
    /// Whether to look, for a gateway listening on `listen`.
    pub fn active(&self, listen: std::net::SocketAddr) -> bool {
        self.enabled.unwrap_or_else(|| listen.ip().is_loopback())
    }
}
