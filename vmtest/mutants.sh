#!/usr/bin/env bash
# vmtest/mutants.sh: prove the in-VM tests catch broken netem encodings.
# Runs vmtest/run.sh once per breakage in vmtest/break.sh (each boots its
# own VM and runs only the tests that cover that breakage) and fails unless
# every breakage made the in-VM tests fail. About 40 s per breakage warm.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
breaks=${VMTEST_BREAKS:-loss delay rate limit noloss swap ge fourstate jitter dist reorder dup corr corrupt qrate qecn seed sched schedadd}
survived=()
for b in $breaks; do
	echo "=== vmtest mutant: $b"
	if VMTEST_BREAK=$b bash "$here/run.sh" >"${TMPDIR:-/tmp}/vmtest-mutant-$b.log" 2>&1; then
		grep -a -E '^\[vmtest' "${TMPDIR:-/tmp}/vmtest-mutant-$b.log" | tail -1
		grep -a -E '^--- FAIL' "${TMPDIR:-/tmp}/vmtest-mutant-$b.log" | sed 's/^/    /' || true
		echo "=== killed: $b"
	else
		tail -20 "${TMPDIR:-/tmp}/vmtest-mutant-$b.log"
		echo "=== SURVIVED: $b (the in-VM tests did not fail, or the run broke; log above)"
		survived+=("$b")
	fi
done
if [ ${#survived[@]} -gt 0 ]; then
	echo "vmtest mutants: ${#survived[@]} survived: ${survived[*]}"
	exit 1
fi
echo "vmtest mutants: all killed ($breaks)"
