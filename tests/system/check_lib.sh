# Sourced by the shell tests: a temporary directory removed at exit ($tmp), and fail(), which
# reports a failed check and counts it ($failures) so that a test reports every check, not the first.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
