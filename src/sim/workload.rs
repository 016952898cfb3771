//! Placing a `[workload]` on the built network: the workload (a kernel, or a GOAL file), which
//! live server runs each task (`workload.mapping`), and the checks that need the network (more
//! tasks than live servers; tasks that faults separate; the memory it takes).

use crate::config::{Config, ConfigError, WorkloadConfig};
use crate::network::{WorkloadPlan, NO_TASK};
use crate::topology::Fabric;
use crate::workload::{kernels, OpKind, Workload};
use std::path::Path;
use std::sync::Arc;

/// The workload of `w`, for `live` live servers (the task count when `workload.tasks = 0`).
pub fn build_workload(w: &WorkloadConfig, live: u64) -> Result<Workload, ConfigError> {
    if w.kernel == "goal" {
        let path = w.file.as_deref().expect("validated: goal has a file");
        return read_goal(path);
    }
    let tasks = if w.tasks == 0 { live } else { w.tasks };
    let kernel = kernels::by_name(&w.kernel).expect("validated: a kernel name");
    let params = w.kernel_params(tasks.min(u32::MAX as u64) as u32);
    // Refused before anything is allocated when even its operations cannot fit (the exact size,
    // with the network's, is checked once it is built: `Config::check_memory_with`).
    let least = kernel.min_bytes(&params);
    if let Some((avail, source)) = crate::memory::memory_limit().filter(|(a, _)| least > *a as u128) {
        return Err(ConfigError::value(
            "workload.tasks",
            tasks,
            format!(
                "a workload that fits in memory: {} with {tasks} tasks and {} iterations has at least {} of \
                 operations, but {source} is {}; fewer tasks or iterations (a collective whose steps grow with \
                 the task count, such as the ring all-reduce, has n^2 operations)",
                w.kernel,
                w.iterations,
                crate::memory::human_bytes(least.min(u64::MAX as u128) as u64),
                crate::memory::human_bytes(avail)
            ),
        ));
    }
    (kernel.build)(&params)
}

/// Read and compile the GOAL schedule at `path`.
fn read_goal(path: &Path) -> Result<Workload, ConfigError> {
    let text = crate::input::read_text(path, crate::input::DATA_MAX_BYTES)
        .map_err(|e| ConfigError::value("workload.file", format!("\"{}\"", path.display()), e))?;
    crate::workload::goal::parse(&text, &path.display().to_string())
        .map_err(|e| ConfigError::value("workload.file", format!("\"{}\"", path.display()), e.to_string()))
}

/// The servers that run tasks `0..tasks`, by `workload.mapping`, among the live servers `live`
/// (global ids, increasing).
fn map_tasks(cfg: &Config, w: &WorkloadConfig, tasks: u32, live: &[u32], ns: usize) -> Result<Vec<u32>, ConfigError> {
    if tasks as usize > live.len() {
        return Err(ConfigError::value(
            if w.kernel == "goal" { "workload.file" } else { "workload.tasks" },
            tasks,
            format!("at most the live servers of the network ({}): one task per server", live.len()),
        ));
    }
    match w.mapping.as_str() {
        "linear" => Ok(live[..tasks as usize].to_vec()),
        "random" => {
            let mut servers = live.to_vec();
            let mut rng = crate::rng::stream(cfg.seed, 0, crate::rng::Purpose::Global);
            crate::rng::shuffle(&mut rng, &mut servers);
            servers.truncate(tasks as usize);
            Ok(servers)
        }
        _ => {
            let path = w.mapping_file.as_deref().expect("validated: mapping = file has a file");
            let key = |v: String, e: String| ConfigError::value("workload.mapping_file", v, e);
            let shown = format!("\"{}\"", path.display());
            let text =
                crate::input::read_text(path, crate::input::DATA_MAX_BYTES).map_err(|e| key(shown.clone(), e))?;
            let mut alive = vec![false; ns];
            for &s in live {
                alive[s as usize] = true;
            }
            let mut used = vec![false; ns];
            let mut out = Vec::with_capacity(tasks as usize);
            for (n, line) in text.lines().enumerate() {
                let l = line.split('#').next().unwrap_or("").trim();
                if l.is_empty() {
                    continue;
                }
                let at = format!("{}:{}", path.display(), n + 1);
                let s: u32 = l.parse().map_err(|_| key(at.clone(), format!("\"{l}\" is not a server id")))?;
                if s as usize >= ns || !alive[s as usize] {
                    return Err(key(
                        at,
                        format!("server {s} is not a live server (0 to {}, not on a failed switch)", ns - 1),
                    ));
                }
                if std::mem::replace(&mut used[s as usize], true) {
                    return Err(key(at, format!("server {s} is given twice: one task per server")));
                }
                out.push(s);
            }
            if out.len() != tasks as usize {
                return Err(key(shown, format!("one server per task: {tasks} lines, found {}", out.len())));
            }
            Ok(out)
        }
    }
}

/// The workload of `cfg` placed on `net`: built, mapped, checked. `component`: the component of
/// every switch when faults split the network (tasks that exchange messages must share one).
/// Also refuses a workload whose memory, with the run's, does not fit (`ranks` processes each hold
/// it whole).
pub fn plan(cfg: &Config, net: &Fabric, component: Option<&[u32]>) -> Result<Option<Arc<WorkloadPlan>>, ConfigError> {
    let Some(w) = &cfg.workload else { return Ok(None) };
    let ns = net.num_servers();
    let live: Vec<u32> = (0..ns as u32).filter(|&v| net.server_alive(v)).collect();
    let workload = build_workload(w, live.len() as u64)?;
    let tasks = workload.tasks();
    let server_of = map_tasks(cfg, w, tasks, &live, ns)?;
    let mut task_of = vec![NO_TASK; ns];
    for (t, &s) in server_of.iter().enumerate() {
        task_of[s as usize] = t as u32;
    }
    if let Some(comp) = component {
        let topo = net.topology();
        let c = |t: u32| comp[topo.server_switch(server_of[t as usize]) as usize];
        for t in 0..tasks {
            if let Some(o) = workload.ops_of(t).iter().find(|o| o.kind == OpKind::Send && c(t) != c(o.peer)) {
                return Err(ConfigError::value(
                    "workload.mapping",
                    format!("\"{}\"", w.mapping),
                    format!(
                        "tasks that faults do not separate: task {t} (server {}) sends to task {} (server {}), \
                         which the faults cut off from it",
                        server_of[t as usize], o.peer, server_of[o.peer as usize]
                    ),
                ));
            }
        }
    }
    Ok(Some(Arc::new(WorkloadPlan {
        workload: Arc::new(workload),
        server_of,
        task_of,
        phit_bytes: w.phit_bytes,
        packet_phits: cfg.packet.size_phits as u64,
    })))
}
