"""Encrypted models (mace encrypt, YAML encrypt: 1): the engine decrypts in memory with the right key,
and a wrong key, altered bytes or a missing key are clear errors (docs/encryption.md)."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import mace
from mace import encrypt

from tiny_models import rand_x, two_output_model, two_output_ref

pytest.importorskip("cryptography")

KEY = bytes(range(32))


def _crypto_built() -> bool:
    """Whether this build's engine decrypts (libcrypto found by cmake/crypto.cmake)."""
    m = two_output_model()
    g = encrypt.encrypt_bytes(m.graph_bytes(), KEY, encrypt.GRAPH)
    try:
        mace.Session(g, m.weights_bytes(), decrypt_key=KEY)
    except mace.UnsupportedError:
        return False
    return True


needs_crypto = pytest.mark.skipif(not _crypto_built(), reason="built without OpenSSL libcrypto")


@pytest.fixture
def enc_files(tmp_path):
    m = two_output_model()
    pb, data = m.save(str(tmp_path / "m.pb"), str(tmp_path / "m.data"))
    out = encrypt.encrypt_files(pb, data, KEY, str(tmp_path / "e.pb"), str(tmp_path / "e.data"))
    return (pb, data), out


def _check_outputs(sess):
    x = rand_x(1)
    got = sess.run({"x": x})
    ref = two_output_ref(x)
    np.testing.assert_allclose(got["y"], ref[0], rtol=0, atol=1e-6)
    np.testing.assert_array_equal(got["z"], ref[1])


@needs_crypto
def test_right_key_runs_as_the_plain_model(enc_files):
    (pb, data), (epb, edata) = enc_files
    assert open(epb, "rb").read()[:8] == encrypt.MAGIC
    assert open(pb, "rb").read() not in open(epb, "rb").read()
    sess = mace.Session(epb, edata, decrypt_key=KEY)
    _check_outputs(sess)
    plain = mace.Session(pb, data)
    x = rand_x(2)
    for k, v in plain.run({"x": x}).items():
        np.testing.assert_array_equal(sess.run({"x": x})[k], v)


@needs_crypto
def test_wrong_key_is_invalid_model(enc_files):
    _, (epb, edata) = enc_files
    wrong = bytes(31) + b"\x01"
    with pytest.raises(mace.InvalidModelError, match="wrong key"):
        mace.Session(epb, edata, decrypt_key=wrong)


@needs_crypto
@pytest.mark.parametrize("which", ["graph", "weights", "header"])
def test_corrupted_ciphertext_is_invalid_model(enc_files, tmp_path, which):
    _, (epb, edata) = enc_files
    path = edata if which == "weights" else epb
    b = bytearray(open(path, "rb").read())
    pos = 12 if which == "header" else len(b) // 2
    b[pos] ^= 0x10
    open(path, "wb").write(bytes(b))
    with pytest.raises(mace.InvalidModelError, match="altered"):
        mace.Session(epb, edata, decrypt_key=KEY)


@needs_crypto
def test_swapped_parts_and_missing_key(enc_files):
    _, (epb, edata) = enc_files
    with pytest.raises(mace.InvalidModelError, match="not encrypted graph"):
        mace.Session(edata, edata, decrypt_key=KEY)
    with pytest.raises(mace.InvalidArgumentError, match="encrypted.*decrypt_key"):
        mace.Session(epb, edata)
    with pytest.raises(mace.InvalidArgumentError, match="32 bytes"):
        mace.Session(epb, edata, decrypt_key=KEY[:16])


def test_python_round_trip_and_wrong_key():
    data = os.urandom(1000)
    c = encrypt.encrypt_bytes(data, KEY, encrypt.WEIGHTS)
    assert len(c) == len(data) + 44 and data not in c
    assert encrypt.decrypt_bytes(c, KEY, encrypt.WEIGHTS) == data
    with pytest.raises(mace.InvalidModelError):
        encrypt.decrypt_bytes(c, bytes(32), encrypt.WEIGHTS)
    # the container is AES-256-GCM as the cryptography package computes it (independent oracle)
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    assert AESGCM(KEY).decrypt(c[16:28], c[28:], c[:16]) == data


def _mace_cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "mace", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


@needs_crypto
def test_cli_new_key_encrypt_and_yaml_flow(tmp_path):
    import hashlib

    import onnx

    from tiny_models import onnx_add_relu
    r = _mace_cli("encrypt", "--new-key", "k.key", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert len(open(tmp_path / "k.key").read().strip()) == 64
    key = encrypt.read_key(tmp_path / "k.key")

    m = two_output_model()
    m.save(str(tmp_path / "m.pb"), str(tmp_path / "m.data"))
    r = _mace_cli("encrypt", "--model", "m.pb", "--weights", "m.data", "--key-file", "k.key",
                  "--output_dir", "enc", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    _check_outputs(mace.Session(str(tmp_path / "enc/m.pb"), str(tmp_path / "enc/m.data"),
                                decrypt_key=key))

    model = onnx_add_relu()
    onnx.save(model, str(tmp_path / "a.onnx"))
    sha = hashlib.sha256(open(tmp_path / "a.onnx", "rb").read()).hexdigest()
    inp = model.graph.input[0]
    dims = ",".join(str(d.dim_value) for d in inp.type.tensor_type.shape.dim)
    (tmp_path / "d.yml").write_text(f"""
library_name: enc
models:
  a:
    platform: onnx
    model_file_path: a.onnx
    model_sha256_checksum: {sha}
    encrypt: 1
    subgraphs:
      - input_tensors: [{inp.name}]
        input_shapes: ["{dims}"]
        output_tensors: [{model.graph.output[0].name}]
""")
    r = _mace_cli("convert", "--config", "d.yml", cwd=tmp_path)
    assert r.returncode == 1 and "models.a.encrypt: 1 needs a key" in r.stderr, r.stderr
    r = _mace_cli("convert", "--config", "d.yml", "--key-file", "k.key", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    mdir = tmp_path / "build" / "enc" / "model"
    assert not (mdir / "a.pb_txt").exists() and not (mdir / "a_index.html").exists()
    assert open(mdir / "a.pb", "rb").read()[:8] == encrypt.MAGIC
    sess = mace.Session(str(mdir / "a.pb"), str(mdir / "a.data"), decrypt_key=key)
    x = np.random.default_rng(0).standard_normal(
        [d.dim_value for d in inp.type.tensor_type.shape.dim]).astype(np.float32)
    ref = mace.Session(str(tmp_path / "a.onnx")).run(x)
    np.testing.assert_array_equal(sess.run(x), ref)
