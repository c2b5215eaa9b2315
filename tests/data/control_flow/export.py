"""Exports small torch.jit.script modules with data-dependent control flow (an `if` on a tensor
value; a `for` loop over an int input) through torch.onnx.export(dynamo=False) into $OUT:
scripted_if.onnx and scripted_loop.onnx (torch 2.11; tests/ops/test_control_flow.py reads them).
Run where torch is installed (the GPU machine): OUT=. python3 export.py"""
import os

import torch


class Gate(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(8, 4)
        self.b = torch.nn.Linear(8, 4)

    def forward(self, x, sr):
        if bool(sr.sum() > 8000):
            y = torch.relu(self.a(x)) * 2.0
        else:
            y = torch.tanh(self.b(x)) - x[:, :4]
        return y


class Steps(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x, n: int):
        h = x
        for i in range(n):
            h = torch.tanh(self.lin(h)) + h
        return h


out = os.environ["OUT"]
torch.manual_seed(0)
g = torch.jit.script(Gate())
torch.onnx.export(g, (torch.randn(2, 8), torch.tensor([16000])), f"{out}/scripted_if.onnx",
                  input_names=["x", "sr"], output_names=["y"], opset_version=17, dynamo=False)
s = torch.jit.script(Steps())
torch.onnx.export(s, (torch.randn(3, 4), 5), f"{out}/scripted_loop.onnx",
                  input_names=["x", "n"], output_names=["h"], opset_version=17, dynamo=False)
print(torch.__version__, os.listdir(out))
