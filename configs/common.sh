# Sourced by every experiment script of configs/ (not run on its own).
#
# HXSIM_SMOKE=1 runs a script at reduced size: few points of short runs on the same networks, so
# that `make test` can run every script (tests/scripts.rs) and a script that no longer works (a
# changed output, a refused config) fails CI instead of printing errors. Its numbers mean nothing.
#
#   smoke VAR VALUE   with HXSIM_SMOKE=1, VAR defaults to VALUE (a value the caller set is kept)
#   hxsim_binary      HXSIM, else the release build (built if missing)
#   smoke_check TEXT  with HXSIM_SMOKE=1, fail when TEXT holds an error cell ("error", "?")

smoke() {
    if [ -n "${HXSIM_SMOKE:-}" ] && [ -z "${!1:-}" ]; then
        printf -v "$1" '%s' "$2"
        export "${1?}"
    fi
}

hxsim_binary() {
    HXSIM=${HXSIM:-${CARGO_TARGET_DIR:-target}/release/hxsim}
    [ -x "$HXSIM" ] || cargo build --release
}

smoke_check() {
    if [ -n "${HXSIM_SMOKE:-}" ] && grep -qE '(^|[[:space:]])(\?|error)([[:space:]]|$)' <<<"$1"; then
        echo "smoke test: an error cell in the output above" >&2
        exit 1
    fi
}
