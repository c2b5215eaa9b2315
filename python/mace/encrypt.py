"""Model encryption (`mace encrypt`, YAML `encrypt: 1`): AES-256-GCM over a .pb and a .data.

The engine decrypts in memory with the key the application gives (mace_config.decrypt_key in C,
``mace.Session(..., decrypt_key=key)`` in Python); csrc/api/model_crypto.h describes the container,
which this module writes byte for byte the same. Encryption uses the `cryptography` package
(OpenSSL underneath). docs/encryption.md has the threat model: it slows extraction, it is not DRM.

>>> key = new_key("model.key")                                    # doctest: +SKIP
>>> encrypt_files("m.pb", "m.data", key, "enc/m.pb", "enc/m.data")  # doctest: +SKIP
>>> mace.Session("enc/m.pb", "enc/m.data", decrypt_key=key)        # doctest: +SKIP
"""
from __future__ import annotations

import os

from .errors import InvalidArgumentError, InvalidModelError, UnsupportedError

MAGIC = b"MACEENC\x01"
HEADER_BYTES, NONCE_BYTES, TAG_BYTES, KEY_BYTES = 16, 12, 16, 32
GRAPH, WEIGHTS = b"G", b"W"


def _aesgcm(key: bytes):
    try:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    except ImportError:
        raise UnsupportedError("encrypting models needs the Python package 'cryptography' "
                               "(pip install cryptography)") from None
    return AESGCM(key)


def check_key(key: bytes) -> bytes:
    """The key as bytes; InvalidArgumentError unless it is 32 bytes."""
    key = bytes(key)
    if len(key) != KEY_BYTES:
        raise InvalidArgumentError(f"an AES-256 key is {KEY_BYTES} bytes, got {len(key)}")
    return key


def read_key(path: str | os.PathLike) -> bytes:
    """A key file: 32 raw bytes, or 64 hexadecimal digits (surrounding whitespace ignored)."""
    with open(path, "rb") as f:
        data = f.read()
    text = data.strip()
    if len(text) == 2 * KEY_BYTES:
        try:
            return bytes.fromhex(text.decode("ascii"))
        except (UnicodeDecodeError, ValueError):
            pass
    if len(data) == KEY_BYTES:
        return data
    raise InvalidArgumentError(f"{os.fspath(path)}: a key file holds {KEY_BYTES} raw bytes or "
                               f"{2 * KEY_BYTES} hexadecimal digits ({len(data)} bytes found)")


def new_key(path: str | os.PathLike) -> bytes:
    """Writes a random key (64 hex digits, file mode 0600) to `path` and returns it."""
    key = os.urandom(KEY_BYTES)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(key.hex() + "\n")
    return key


def is_encrypted(data: bytes) -> bool:
    return bytes(data[:len(MAGIC)]) == MAGIC


def encrypt_bytes(plain: bytes, key: bytes, kind: bytes) -> bytes:
    """One container (header, nonce, ciphertext, tag) of `kind` GRAPH or WEIGHTS."""
    header = MAGIC + kind + bytes(HEADER_BYTES - len(MAGIC) - 1)
    nonce = os.urandom(NONCE_BYTES)
    return header + nonce + _aesgcm(check_key(key)).encrypt(nonce, bytes(plain), header)


def decrypt_bytes(data: bytes, key: bytes, kind: bytes) -> bytes:
    """The inverse of encrypt_bytes; InvalidModelError for a wrong key or altered bytes."""
    data = bytes(data)
    if not is_encrypted(data) or len(data) < HEADER_BYTES + NONCE_BYTES + TAG_BYTES:
        raise InvalidModelError("not an encrypted mace model file")
    header, nonce = data[:HEADER_BYTES], data[HEADER_BYTES:HEADER_BYTES + NONCE_BYTES]
    if header[len(MAGIC):len(MAGIC) + 1] != kind:
        raise InvalidModelError("the encrypted file holds the other part of a model")
    from cryptography.exceptions import InvalidTag
    try:
        return _aesgcm(check_key(key)).decrypt(nonce, data[HEADER_BYTES + NONCE_BYTES:], header)
    except InvalidTag:
        raise InvalidModelError("cannot decrypt: wrong key, or the file was altered") from None


def _write(path: str, data: bytes) -> None:
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def encrypt_files(graph: str, weights: str | None, key: bytes, out_graph: str | None = None,
                  out_weights: str | None = None) -> tuple[str, str | None]:
    """Encrypts a .pb (and its .data) into out_graph/out_weights (default: in place).
    Refuses a file that is already encrypted. Returns the paths written."""
    key = check_key(key)
    done = []
    for src, dst, kind in ((graph, out_graph, GRAPH), (weights, out_weights, WEIGHTS)):
        if src is None:
            done.append(None)
            continue
        with open(src, "rb") as f:
            plain = f.read()
        if is_encrypted(plain):
            raise InvalidArgumentError(f"{src} is already encrypted")
        dst = dst or src
        d = os.path.dirname(os.path.abspath(dst))
        os.makedirs(d, exist_ok=True)
        _write(dst, encrypt_bytes(plain, key, kind))
        done.append(dst)
    return done[0], done[1]
