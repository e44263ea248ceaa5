"""The context-window routes of local model servers, as the scripted server answers them
(ScriptedOpenAI.report_window): llama.cpp's /props, LM Studio's /api/v0/models, Ollama's
/api/show; vLLM's /v1/models is answered beside the model list."""

from __future__ import annotations

import json
import time
from typing import Any


def answer_window_route(self: Any) -> bool:
    """The servers' own window routes (ScriptedOpenAI.report_window) answered by the handler
    `self`; False: not one of them."""
    from tests.support.openai_server import _error_body   # lazy: that module imports this one
    owner, path = self.owner, self.path.rstrip("/")
    if path not in ("/props", "/api/v0/models", "/api/show"):
        return False
    owner.window_asks.append(path)
    if owner.window_delay_s:
        time.sleep(owner.window_delay_s)
    if path == "/props":
        windows = owner._window_of("llama.cpp")
        if not windows:
            self._json(404, _error_body(404, "no route /props"))
        else:
            n = next(iter(windows.values()))        # llama.cpp serves one model
            self._json(200, {"default_generation_settings": {"n_ctx": n}, "total_slots": 1})
    elif path == "/api/v0/models":
        windows = owner._window_of("lmstudio")
        if not windows:
            self._json(404, _error_body(404, "no route /api/v0/models"))
        else:
            self._json(200, {"object": "list", "data": [
                {"id": m, "type": "llm", "state": "loaded", "max_context_length": n * 4,
                 "loaded_context_length": n} for m, n in windows.items()]})
    else:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}") if length else {}
        windows = owner._window_of("ollama")
        name = str(body.get("model") or body.get("name") or "")
        if name not in windows:
            self._json(404, {"error": f"model '{name}' not found"})
        else:
            self._json(200, {"parameters": f"num_ctx                        {windows[name]}\nstop \"<|im_end|>\"",
                             "model_info": {"qwen2.context_length": 32768}})
    return True
