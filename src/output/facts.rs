//! The facts about the simulated network that results files and figures need (server count, a
//! human-readable name), read generically from a config's TOML text: the one place to adapt when the
//! config's topology section changes.

/// What the writers and `hxsim plot` need to know about a network.
#[derive(Debug, Clone, PartialEq)]
pub struct NetworkFacts {
    /// Servers (endpoints); 0 if the config does not say.
    pub servers: usize,
    /// E.g. `HyperX 8x8x8, 8 servers/switch`; empty if the config does not say.
    pub label: String,
}

/// Facts from a config's TOML text (the `config` attribute of a results file): the config is
/// parsed as hxsim parses it, so every topology family is understood; nothing is built.
pub fn from_toml(text: &str) -> NetworkFacts {
    match crate::config::parse_str(text, "results file", &[]) {
        Ok(cfg) => of(&cfg),
        Err(_) => NetworkFacts { servers: 0, label: String::new() },
    }
}

/// Facts of a parsed config.
pub fn of(cfg: &crate::config::Config) -> NetworkFacts {
    use crate::config::TopologyConfig;
    let (switches, servers) = cfg.topology.size();
    let label = match &cfg.topology {
        TopologyConfig::HyperX(h) => {
            let shape = h.sides.iter().map(|s| s.to_string()).collect::<Vec<_>>().join("x");
            format!("HyperX {shape}, {} servers/switch", h.servers_per_switch)
        }
        TopologyConfig::HyperZ(z) => {
            let list = |v: &[usize]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(",");
            format!("HyperZ ({}; Z({};{})), {servers} servers", list(&z.sides), list(&z.zones), list(&z.roots))
        }
        other => format!("{} of {switches} switches, {servers} servers", other.kind()),
    };
    NetworkFacts { servers: servers as usize, label }
}

#[cfg(test)]
mod tests {
    #[test]
    fn hyperx_facts() {
        let f = super::from_toml("[topology]\nkind = \"hyperx\"\nsides = [8, 8, 8]\nservers_per_switch = 8\n");
        assert_eq!(f.servers, 4096);
        assert_eq!(f.label, "HyperX 8x8x8, 8 servers/switch");
        assert_eq!(super::from_toml("not toml [").servers, 0);
    }
}
