"""Execute notebooks' code cells in-process, in order, one namespace per notebook.

For machines without Jupyter (the GPU machine): ``python3 scripts/run-notebooks.py examples/*.ipynb``.
Cells' rich outputs (``_repr_html_``) are rendered too, so the notebook views are exercised.
Exit status 1 if any notebook fails.
"""

from __future__ import annotations

import json
import sys
import time
import traceback


def run(path: str) -> bool:
    cells = json.load(open(path, encoding="utf-8"))["cells"]
    namespace: dict[str, object] = {"__name__": "__main__"}
    start = time.perf_counter()
    for index, cell in enumerate(cells):
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        source = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
        try:
            exec(compile(source, f"{path}[cell {index}]", "exec"), namespace)
            last = source.strip().splitlines()[-1] if source.strip() else ""
            if last and not last.startswith((" ", "#")) and "=" not in last.split("(")[0]:
                value = eval(compile(last, f"{path}[cell {index}]", "eval"), namespace)
                if hasattr(value, "_repr_html_"):
                    value._repr_html_()
        except SyntaxError:
            pass  # the last line was a statement, not an expression
        except Exception:
            print(f"FAIL {path} cell {index}:\n{traceback.format_exc()}", flush=True)
            return False
    print(f"ok   {path} ({time.perf_counter() - start:.1f} s)", flush=True)
    return True


if __name__ == "__main__":
    results = [run(p) for p in sys.argv[1:]]
    sys.exit(0 if all(results) else 1)
