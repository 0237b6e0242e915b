//! The open-files limit: every connection holds a descriptor, so this limit is how many visitors
//! the gateway can hold at once. Many systems still start services with a soft limit of 1,024 and
//! a much higher hard one; the soft one is raised to the hard one at start.

/// Below this many descriptors the gateway warns at start.
pub const LOW: u64 = 4096;

/// Never ask for more than this (Linux's default `fs.nr_open`), even when the hard limit is
/// "unlimited": the kernel refuses a soft limit above `nr_open`.
const MOST: u64 = 1 << 20;

/// The open-files limit before and after [`raise`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenFiles {
    /// The soft limit the process was started with.
    pub before: u64,
    /// The soft limit now.
    pub now: u64,
}

impl OpenFiles {
    /// A sentence for the log when the limit is low, saying how to raise it.
    pub fn warning(&self) -> Option<String> {
        (self.now < LOW).then(|| {
            format!(
                "the open-files limit is {}, so the gateway cannot hold more than about that many connections \
                 at once and refuses the rest; raise it to at least {LOW} (LimitNOFILE= in the systemd unit, \
                 ulimit -n, or docker run --ulimit nofile=65536)",
                self.now
            )
        })
    }
}

/// Raises the soft open-files limit to the hard one.
pub fn raise() -> std::io::Result<OpenFiles> {
    let (before, _) = rlimit::getrlimit(rlimit::Resource::NOFILE)?;
    let now = rlimit::increase_nofile_limit(MOST)?;
    Ok(OpenFiles { before, now: now.max(before) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_low_limit_is_named_with_how_to_raise_it() {
        let low = OpenFiles { before: 1024, now: 1024 }.warning().expect("1024 is low");
        assert!(low.contains("1024") && low.contains("LimitNOFILE"), "{low}");
        assert_eq!(OpenFiles { before: 1024, now: 65536 }.warning(), None);
    }
}
