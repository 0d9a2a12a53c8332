#!/usr/bin/env bash
# The Triton backend's check on a lent GPU machine, in one call: the Triton tests
# (tests/triton, the GPU ones included), then bench_triton.py, which writes the
# device record (triton-<device>.json) with the tests' pass/fail counts.
#
#   bash benchmarks/device_check.sh OUTDIR      # run from the repository root
#
# The machine's own python3 is used (it has torch, triton, numpy, pytest, hypothesis);
# copy OUTDIR/triton-*.json to benchmarks/results/ and commit it.
set -uo pipefail
out=${1:?usage: bash benchmarks/device_check.sh OUTDIR}
mkdir -p "$out"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv | tee "$out/device.txt"
python3 -c "import sys, numpy, triton, torch; print('python', sys.version.split()[0], 'numpy', numpy.__version__, 'triton', triton.__version__, 'torch', torch.__version__)" | tee -a "$out/device.txt"
python3 -m pytest -n 8 -q -p no:cacheprovider tests/triton --junitxml "$out/triton-tests.xml" 2>&1 | tee "$out/tests.log"
tests=$?
python3 benchmarks/bench_triton.py --record "$out" --junit "$out/triton-tests.xml" 2>&1 | tee "$out/bench.log"
bench=$?
echo "tests rc=$tests bench rc=$bench"
exit $(( tests != 0 || bench != 0 ))
