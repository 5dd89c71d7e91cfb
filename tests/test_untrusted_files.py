"""No code-executing format is loaded for models or artifacts (issue: untrusted files)."""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FORBIDDEN = {
    r"\bpickle\.loads?\(": "pickle executes code on load; use JSON, NPZ without pickle, safetensors or Parquet",
    r"\bjoblib\.load\(": "joblib loads pickles",
    r"\bdill\.": "dill is pickle",
    r"allow_pickle\s*=\s*True": "np.load(allow_pickle=True) executes code",
    r"\btorch\.load\((?![^)]*weights_only\s*=\s*True)": "torch.load without weights_only=True unpickles",
    r"trust_remote_code\s*=\s*True": "remote code from a model folder is code execution",
    r"\byaml\.load\((?![^)]*SafeLoader)": "use yaml.safe_load",
    r"(?<![\w.])eval\(": "eval of data",
}


def test_no_code_executing_loaders_in_the_packages():
    offenders = []
    for pkg in ("curation", "classifiers", "pipelines"):
        for path in sorted((REPO / pkg).rglob("*.py")):
            text = path.read_text()
            for pattern, why in FORBIDDEN.items():
                for m in re.finditer(pattern, text):
                    line = text.count("\n", 0, m.start()) + 1
                    offenders.append(f"{path.relative_to(REPO)}:{line}: {why}")
    assert not offenders, "\n".join(offenders)


def test_the_check_catches_a_pickle_load(tmp_path):
    sample = "import pickle\nmodel = pickle.load(open('m.pkl', 'rb'))\n"
    assert any(re.search(p, sample) for p in FORBIDDEN)
