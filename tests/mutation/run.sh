#!/bin/bash
# Mutation-test one module (or a few) with only the tests that exercise it (docs/mutation.md).
# Slow and by hand: never part of .ci/run.
#   tests/mutation/run.sh NAME "module.py ..." "tests/file.py ..." [MUTANT-PATTERN ...]
# (patterns as mutmut's own: fnmatch over mutant names, e.g. 'rules_importers._lenient.x_list_flat*',
# to run only part of a module's mutants)
# Copies this checkout (as it is, uncommitted edits included) to $MUTATION_DIR/NAME, writes
# the [mutmut] section into the copy's setup.cfg, lets mutmut reach @hookimpl functions
# (tests/mutation/undecorate.py), runs mutmut 3 with one child (shared machines) and
# leaves results.txt (every mutant and its fate) and run.log there.
set -u
name=$1; modules=$2; tests=$3; shift 3
here=$(cd "$(dirname "$0")/../.." && pwd)
dir=${MUTATION_DIR:-/tmp/pi-rules-mutation}/$name
rm -rf "$dir"; mkdir -p "$dir"
(cd "$here" && tar --exclude=./.git --exclude=./mutants --exclude='*.egg-info' \
    --exclude=__pycache__ --exclude=.hypothesis -cf - .) | (cd "$dir" && tar -xf -)
cd "$dir"
{
    echo "[mutmut]"
    # mutmut stops a mutant's tests on a wall clock of (their time in the stats run +
    # constant) x multiplier; the stats time leaves out collection and fixtures, so with the
    # default constant of 1 s a loaded machine reports survivors as timeouts (= kills).
    echo "timeout_multiplier=2"; echo "timeout_constant=${MUTATION_TIMEOUT_CONSTANT:-30}"
    echo "source_paths="; for m in $modules; do echo "    $m"; done
    echo "pytest_add_cli_args_test_selection="; for t in $tests; do echo "    $t"; done
    echo "pytest_add_cli_args=-p"; echo "    no:cacheprovider"
    echo "also_copy=rules_core"; for p in rules_plugins rules_importers rules_hosts docs; do echo "    $p"; done
} > setup.cfg
python tests/mutation/undecorate.py $modules
date -u +%FT%TZ > started
mutmut run --max-children 1 "$@" > run.log 2>&1
echo "exit $?" >> run.log
mutmut results --all true > results.txt 2>&1
date -u +%FT%TZ > finished
