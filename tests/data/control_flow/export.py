"""Exports small torch.jit.script modules with data-dependent control flow (an `if` on a tensor
value; a `for` loop over an int input) and a tiny detector with torchvision.ops.nms through
torch.onnx.export(dynamo=False) into $OUT: scripted_if.onnx, scripted_loop.onnx (read by
tests/ops/test_control_flow.py) and tiny_detector_nms.onnx (tests/ops/test_nms.py); torch
2.11, torchvision 0.26, seeded random weights.
Run where torch is installed (the GPU machine): OUT=. python3 export.py"""
import os

import torch
import torchvision


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


class Det(torch.nn.Module):
    def __init__(s):
        super().__init__()
        s.body = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, 2, 1), torch.nn.ReLU(),
                                     torch.nn.Conv2d(8, 16, 3, 2, 1), torch.nn.ReLU())
        s.box = torch.nn.Conv2d(16, 4, 1)
        s.cls = torch.nn.Conv2d(16, 1, 1)

    def forward(s, x):
        f = s.body(x)
        b = s.box(f).flatten(2).transpose(1, 2)[0]
        xy = b[:, :2].sigmoid() * 32
        wh = b[:, 2:].exp() * 4
        boxes = torch.cat([xy - wh / 2, xy + wh / 2], 1)
        scores = s.cls(f).flatten().sigmoid()
        keep = torchvision.ops.nms(boxes, scores, 0.4)
        return boxes[keep], scores[keep]


out = os.environ["OUT"]
torch.manual_seed(0)
g = torch.jit.script(Gate())
torch.onnx.export(g, (torch.randn(2, 8), torch.tensor([16000])), f"{out}/scripted_if.onnx",
                  input_names=["x", "sr"], output_names=["y"], opset_version=17, dynamo=False)
s = torch.jit.script(Steps())
torch.onnx.export(s, (torch.randn(3, 4), 5), f"{out}/scripted_loop.onnx",
                  input_names=["x", "n"], output_names=["h"], opset_version=17, dynamo=False)
torch.manual_seed(0)
torch.onnx.export(Det().eval(), (torch.randn(1, 3, 32, 32),), f"{out}/tiny_detector_nms.onnx",
                  input_names=["image"], output_names=["boxes", "scores"], opset_version=17,
                  dynamo=False)
print(torch.__version__, os.listdir(out))
