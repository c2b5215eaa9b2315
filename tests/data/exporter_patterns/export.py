"""How tests/data/exporter_patterns/*.onnx were made (torch 2.x, on the GPU machine; not run by the
tests): Conv -> activation -> Conv -> activation, exported with torch's TorchScript exporter
(opsets 13, 17) and its dynamo exporter (opset 18); value_info, doc strings and metadata were
stripped afterwards and graphs with identical nodes dropped. `PAT=DIR python export.py`."""
import os, sys, traceback
import torch, torch.nn as nn, torch.nn.functional as F
out = os.environ.get("PAT", "/tmp/pat")
print("torch", torch.__version__)
try:
    import onnx; print("onnx", onnx.__version__)
    import onnxscript; print("onnxscript", onnxscript.__version__)
except Exception as e:
    print("import:", e)

class HandHS(nn.Module):
    def forward(self, x): return x * F.relu6(x + 3) / 6
class HandSiLU(nn.Module):
    def forward(self, x): return x * torch.sigmoid(x)
class HandHSig(nn.Module):
    def forward(self, x): return F.relu6(x + 3) / 6
class HandMish(nn.Module):
    def forward(self, x): return x * torch.tanh(F.softplus(x))
class NewGELU(nn.Module):
    def forward(self, x):
        import math
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))

ACTS = {"hardswish": nn.Hardswish, "hand_hardswish": HandHS, "silu": nn.SiLU,
        "hand_silu": HandSiLU, "hardsigmoid": nn.Hardsigmoid, "hand_hardsigmoid": HandHSig,
        "gelu": nn.GELU, "gelu_tanh": lambda: nn.GELU(approximate="tanh"), "newgelu": NewGELU,
        "mish": nn.Mish, "hand_mish": HandMish}

def net(act):
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(4, 8, 3, padding=1), act(), nn.Conv2d(8, 4, 1), act()).eval()

x = torch.randn(1, 4, 10, 10)
made = 0
for name, act in ACTS.items():
    for exporter, opset in (("ts", 13), ("ts", 17), ("dynamo", 18)):
        path = os.path.join(out, f"{name}_{exporter}{opset}.onnx")
        try:
            torch.onnx.export(net(act), (x,), path, opset_version=opset, dynamo=(exporter == "dynamo"),
                              input_names=["x"], output_names=["y"])
            m = onnx.load(path)
            if exporter == "dynamo":
                onnx.save(m, path)  # one file, weights inside
            ops = [n.op_type for n in m.graph.node]
            print(f"{name}_{exporter}{opset}: {ops}")
            made += 1
        except Exception as e:
            print(f"{name}_{exporter}{opset}: FAILED {type(e).__name__}: {str(e)[:200]}")
print("made", made)
