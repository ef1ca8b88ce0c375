#!/usr/bin/env bash
# Recreate the OpenVINO venv (/work/ovenv) and the float32 IR of SmolLM2-135M-Instruct
# (/work/ovenv-models/smollm2-fp32), outside the repository. About 2 minutes of CPU.
set -euo pipefail
VENV=${VENV:-/work/ovenv}
OUT=${OUT:-/work/ovenv-models/smollm2-fp32}
MODEL=${MODEL:-/work/main/models/smollm2-135m-instruct}

python3.11 -m venv "$VENV"
PIP="$VENV/bin/pip"
# torch 2.13.0 resolves to the CPU wheel on this machine's disk; transformers 5.5.4 and
# huggingface-hub 1.21.0, not the repo's 5.24.0 / 2.4.0: optimum-intel 2.2.0 requires
# transformers<5.6 and huggingface-hub<1.22 and fails to import with 5.24.0. These matter only
# for the export; the benchmark's OpenVINO side imports no transformers.
"$PIP" install torch==2.13.0 transformers==5.5.4 huggingface-hub==1.21.0
# --no-deps: optimum-intel would pull torchvision (a CUDA torch) and nncf, neither needed for fp32
"$PIP" install --no-deps openvino==2026.4.1 openvino-tokenizers==2026.4.1.0 openvino-genai==2026.4.1.0 \
    optimum==2.3.0 optimum-intel==2.2.0
"$PIP" install openvino-telemetry==2025.2.0 packaging setuptools requests

# float32 weights, no compression (optimum-cli compresses models over 1B parameters to int8 by default)
"$VENV/bin/optimum-cli" export openvino --model "$MODEL" --task text-generation-with-past \
    --weight-format fp32 "$OUT"

# check: every floating-point constant of the IR is f32
"$VENV/bin/python" - "$OUT" <<'EOF'
import sys, collections, openvino as ov
m = ov.Core().read_model(sys.argv[1] + "/openvino_model.xml")
n = collections.Counter()
for op in m.get_ops():
    if op.get_type_name() == "Constant" and op.get_element_type().is_real():
        k = 1
        for d in op.get_output_shape(0):
            k *= d
        n[op.get_element_type().get_type_name()] += k
print("IR weight elements by type:", dict(n))
print("IR runtime_options:", {k: v.astype(str) for k, v in m.get_rt_info("runtime_options").astype(dict).items()})
EOF
