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

/// Facts from a config's TOML text (the `config` attribute of a results file).
pub fn from_toml(text: &str) -> NetworkFacts {
    let Ok(v) = text.parse::<toml::Table>() else {
        return NetworkFacts { servers: 0, label: String::new() };
    };
    let topo = v.get("topology").and_then(|t| t.as_table());
    let get = |k: &str| topo.and_then(|t| t.get(k));
    let sides: Vec<usize> = get("sides")
        .and_then(|s| s.as_array())
        .map(|a| a.iter().filter_map(|x| x.as_integer()).map(|x| x as usize).collect())
        .unwrap_or_default();
    let per = get("servers_per_switch").and_then(|x| x.as_integer()).unwrap_or(0) as usize;
    let kind = match get("kind").and_then(|k| k.as_str()).unwrap_or("hyperx") {
        "hyperx" => "HyperX".to_string(),
        "hyperz" => "HyperZ".to_string(),
        k => k.to_string(),
    };
    let servers = if sides.is_empty() { 0 } else { sides.iter().product::<usize>() * per };
    let shape = sides.iter().map(|s| s.to_string()).collect::<Vec<_>>().join("x");
    let label = match (shape.is_empty(), per) {
        (true, _) => kind,
        (false, 0) => format!("{kind} {shape}"),
        (false, p) => format!("{kind} {shape}, {p} servers/switch"),
    };
    NetworkFacts { servers, label }
}

/// Facts of a parsed config.
pub fn of(cfg: &crate::config::Config) -> NetworkFacts {
    from_toml(&cfg.to_toml())
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
