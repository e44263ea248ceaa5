"""A file-backed keyring for tests only (plain text: never for real keys).

Select it in a subprocess with
    PYTHON_KEYRING_BACKEND=tests.support.test_keyring.FileKeyring
    RLM_TEST_KEYRING_FILE=/tmp/.../keys.cfg
(and the repository on PYTHONPATH). In-process, pass
`FileKeyring(path)` to `core.secrets.KeyStore(backend=...)`.
"""

from __future__ import annotations

import os

from keyrings.alt.file import PlaintextKeyring

ENV_VAR = "RLM_TEST_KEYRING_FILE"


class FileKeyring(PlaintextKeyring):
    # Below zero: never picked by keyring's own detection, only when named.
    priority = -1

    def __init__(self, path: str | os.PathLike | None = None) -> None:
        super().__init__()
        path = path or os.environ.get(ENV_VAR)
        if not path:
            # TypeError: keyring skips backends it cannot build without arguments
            raise TypeError(f"FileKeyring needs a path (or {ENV_VAR})")
        self.file_path = os.fspath(path)
