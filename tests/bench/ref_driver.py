"""Runs the reference implementation (PyPI `rlms` 0.1.3) the way a user's script would, for
tests/bench/bench_reference.py. It is started with the reference's own interpreter (its own
venv, RLMS_REF_PYTHON), never imported by the project:

    /work/rlms-ref/bin/python tests/bench/ref_driver.py URL QUESTION MAX_ITERATIONS [FILE ...]

The files are read and joined into one string, the context; the root model is "root" and
the sub-calls' model "sub", both on the OpenAI-compatible server at URL.
"""

import os
import sys

from rlm import RLM


def main() -> None:
    url, question, iterations, *paths = sys.argv[1:]
    texts = []
    for p in paths:
        with open(p, encoding="utf-8") as f:
            texts.append(f.read())
    context = "\n".join(texts)
    kwargs = {"base_url": url, "api_key": "sk-bench-reference"}
    rlm = RLM(backend="openai", backend_kwargs={**kwargs, "model_name": "root"},
              other_backends=["openai"], other_backend_kwargs=[{**kwargs, "model_name": "sub"}],
              environment="local", max_iterations=int(iterations),
              verbose=bool(os.environ.get("RLMS_REF_VERBOSE")))
    result = rlm.completion(context, root_prompt=question)
    print(result.response)


if __name__ == "__main__":
    main()
