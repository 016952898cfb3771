//! The weighted working graph of the multilevel partitioner.

use crate::Graph;
use std::ops::Range;

/// CSR graph with integer vertex and edge weights (one per level of the hierarchy).
#[derive(Clone, Debug)]
pub(crate) struct WGraph {
    pub(crate) xadj: Vec<usize>,
    pub(crate) adj: Vec<u32>,
    pub(crate) ew: Vec<i64>,
    pub(crate) vw: Vec<i64>,
}

impl WGraph {
    pub(crate) fn from_graph(g: &Graph) -> WGraph {
        WGraph {
            xadj: g.xadj.clone(),
            adj: g.adjncy.clone(),
            ew: g.ewgt.iter().map(|&w| w as i64).collect(),
            vw: g.vwgt.iter().map(|&w| w as i64).collect(),
        }
    }

    pub(crate) fn n(&self) -> usize {
        self.vw.len()
    }

    pub(crate) fn row(&self, v: usize) -> Range<usize> {
        self.xadj[v]..self.xadj[v + 1]
    }

    pub(crate) fn total_vw(&self) -> i64 {
        self.vw.iter().sum()
    }

    pub(crate) fn max_vw(&self) -> i64 {
        self.vw.iter().copied().max().unwrap_or(0)
    }

    /// Total weight of edges whose endpoints lie in different parts.
    pub(crate) fn cut(&self, part: &[u32]) -> i64 {
        let mut twice = 0;
        for v in 0..self.n() {
            for e in self.row(v) {
                if part[self.adj[e] as usize] != part[v] {
                    twice += self.ew[e];
                }
            }
        }
        twice / 2
    }

    /// The subgraph induced by the vertices with `keep[v]`, and the map from its vertices to the
    /// vertices of `self`.
    pub(crate) fn induced(&self, keep: impl Fn(usize) -> bool) -> (WGraph, Vec<u32>) {
        let n = self.n();
        let mut local = vec![u32::MAX; n];
        let mut map = Vec::new();
        for (v, l) in local.iter_mut().enumerate() {
            if keep(v) {
                *l = map.len() as u32;
                map.push(v as u32);
            }
        }
        let mut sub = WGraph {
            xadj: Vec::with_capacity(map.len() + 1),
            adj: Vec::new(),
            ew: Vec::new(),
            vw: Vec::with_capacity(map.len()),
        };
        sub.xadj.push(0);
        for &v in &map {
            for e in self.row(v as usize) {
                let l = local[self.adj[e] as usize];
                if l != u32::MAX {
                    sub.adj.push(l);
                    sub.ew.push(self.ew[e]);
                }
            }
            sub.xadj.push(sub.adj.len());
            sub.vw.push(self.vw[v as usize]);
        }
        (sub, map)
    }
}
