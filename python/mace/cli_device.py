"""`mace ops` and `mace encrypt`: the device-build subcommands (op-selected libraries, encrypted models).

    $ mace ops --model mobilenet_v2.pb --model resnet50.pb > ops.txt   # cmake -DMACE_OPS_FILE=ops.txt
    $ mace ops --config deploy.yml                                    # the models of a deployment file
    $ mace encrypt --new-key model.key
    $ mace encrypt --model m.pb --weights m.data --key-file model.key [--output_dir enc]
    $ mace encrypt --config deploy.yml --key-file model.key           # the converted models, in place
"""
from __future__ import annotations

import argparse
import os
import sys


def cmd_ops(args: argparse.Namespace) -> int:
    from .codegen import op_types
    from .errors import InvalidArgumentError
    graphs = list(args.model or [])
    if args.config:
        from . import deploy
        cfg = deploy.load(args.config)
        for name, m in cfg.models.items():
            pb = os.path.join(cfg.model_dir(args.build_dir), f"{name}.pb")
            if os.path.exists(pb):
                graphs.append(pb)
            else:  # not converted yet: convert in memory
                types = {op.type for op in m.convert().graph.ops}
                graphs.append(types)
    if not graphs:
        raise InvalidArgumentError("give --model M.pb (one or more) or --config X.yml")
    ops: set[str] = set()
    for g in graphs:
        if isinstance(g, set):
            ops |= g
            continue
        with open(g, "rb") as f:
            data = f.read()
        from .encrypt import is_encrypted
        if is_encrypted(data):
            raise InvalidArgumentError(f"{g} is encrypted: list the ops of the plain model")
        try:
            ops.update(op_types(data))
        except Exception as e:  # noqa: BLE001 - protobuf's DecodeError and kin
            from .errors import InvalidModelError
            raise InvalidModelError(f"{g}: not a mace graph ({e})") from None
    sys.stdout.write("".join(f"{t}\n" for t in sorted(ops)))
    return 0


def add_ops(sub) -> None:
    p = sub.add_parser("ops", help="list the op types models use (for cmake -DMACE_OPS_FILE=)",
                       description="Prints the op types of the given mace graphs (or of a "
                                   "deployment file's models), one per line: the input of an "
                                   "op-selected build, cmake -DMACE_OPS_FILE=ops.txt.")
    p.add_argument("--model", action="append", help="a mace graph (.pb); repeatable")
    p.add_argument("--config", help="deployment YAML: its converted (or, if none, converted "
                                    "now in memory) models")
    p.add_argument("--build_dir", default="build", help="where `mace convert` wrote (default build)")
    p.set_defaults(func=cmd_ops)


def cmd_encrypt(args: argparse.Namespace) -> int:
    from . import encrypt
    from .errors import InvalidArgumentError
    if args.new_key:
        encrypt.new_key(args.new_key)
        print(f"wrote a new key to {args.new_key} (keep it out of the app's assets)")
        return 0
    if not args.key_file:
        raise InvalidArgumentError("--key-file K is required (mace encrypt --new-key K writes one)")
    key = encrypt.read_key(args.key_file)
    pairs = []
    if args.config:
        from . import deploy
        cfg = deploy.load(args.config)
        mdir = cfg.model_dir(args.build_dir)
        for name in cfg.models:
            pb, data = os.path.join(mdir, f"{name}.pb"), os.path.join(mdir, f"{name}.data")
            if not os.path.exists(pb):
                raise InvalidArgumentError(f"{pb} does not exist: run mace convert --config first")
            pairs.append((pb, data if os.path.exists(data) else None))
    if args.model:
        pairs.append((args.model, args.weights))
    if not pairs:
        raise InvalidArgumentError("give --model M.pb [--weights M.data] or --config X.yml")
    for pb, data in pairs:
        out_pb = out_data = None
        if args.output_dir:
            out_pb = os.path.join(args.output_dir, os.path.basename(pb))
            out_data = os.path.join(args.output_dir, os.path.basename(data)) if data else None
        a, b = encrypt.encrypt_files(pb, data, key, out_pb, out_data)
        print(f"encrypted {a}" + (f", {b}" if b else ""))
        if args.config and not args.output_dir:  # readable copies of the model go too
            for ext in (".pb_txt", "_index.html"):
                side = os.path.splitext(pb)[0] + ext
                if os.path.exists(side):
                    os.remove(side)
    return 0


def add_encrypt(sub) -> None:
    p = sub.add_parser("encrypt", help="encrypt a model's .pb/.data (AES-256-GCM)",
                       description="Encrypts a mace graph and its weights with a 32-byte key "
                                   "(AES-256-GCM); the engine decrypts them in memory given the "
                                   "key (mace_config.decrypt_key, Session(decrypt_key=)). "
                                   "docs/encryption.md: it slows extraction, it is not DRM.")
    p.add_argument("--model", help="the graph (.pb)")
    p.add_argument("--weights", help="its weights (.data)")
    p.add_argument("--config", help="deployment YAML: encrypt its converted models in place")
    p.add_argument("--build_dir", default="build", help="where `mace convert` wrote (default build)")
    p.add_argument("--key-file", "--key_file", dest="key_file",
                   help="the key: 64 hex digits or 32 raw bytes")
    p.add_argument("--new-key", "--new_key", dest="new_key", metavar="K",
                   help="write a new random key to K and exit")
    p.add_argument("--output_dir", help="write the encrypted files here (default: in place)")
    p.set_defaults(func=cmd_encrypt)
