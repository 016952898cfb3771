# Shared by configs/surepath-fig6.sh and configs/surepath-fig8-9.sh (sourced, not run): one SurePath
# point with 3 + 1 VCs (routing.vcs = 4) and the escape root at switch 0, as the paper's section 6.
#
#   surepath_row ROUTING LABEL... -- CONFIG HXSIM-RUN-ARGS...
#
# ROUTING is OmniSP or PolSP. Runs `$HXSIM run CONFIG HXSIM-RUN-ARGS` at offered load $LOAD with $WARMUP +
# $MEASURE cycles on $THREADS threads and prints one TSV line, appended to $RAW and $OUT: the labels,
# then accepted load, latency, Jain's index, hops and the steady-state verdict.
surepath_row() {
    local routing=$1 alg labels=()
    shift
    while [ "$1" != -- ]; do
        labels+=("$1")
        shift
    done
    shift
    [ "$routing" = OmniSP ] && alg=surepath-omni || alg=surepath-polarized
    local json
    # The config first, then these routing keys, so the caller's --set (EXTRA) can override them.
    json=$("$HXSIM" run "$1" --set routing.algorithm=$alg --set routing.vcs=4 --set routing.escape_root=0 \
        "${@:2}" --set traffic.load="$LOAD" \
        --set simulation.warmup_cycles="$WARMUP" --set simulation.measure_cycles="$MEASURE" \
        --threads "$THREADS" --json -q --no-output)
    python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print("\t".join(sys.argv[2:]+["%.4f"%d["accepted_load"],"%.1f"%d["average_latency"],"%.4f"%d["jain_index"],"%.3f"%d["average_hops"],str(d.get("steady_state"))]))' \
        "$json" "${labels[@]}" | tee -a "$RAW" "$OUT"
}
