# Sourced by the shell tests: a temporary directory removed at exit ($tmp; KEEP_TMP=1 keeps it), and
# fail(), which reports a failed check and counts it ($failures) so that a test reports every check.
tmp=$(mktemp -d)
trap '[ -n "${KEEP_TMP:-}" ] || rm -rf "$tmp"' EXIT
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
