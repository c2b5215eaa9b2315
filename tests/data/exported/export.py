"""Exports small architectures (random weights, tiny configs) with dynamic axes through
torch's two ONNX exporters, as tests/data/exported/*.onnx were made (torch 2.11,
torchvision, transformers 5.17, on the GPU machine; then `strip.py` on each). Not run by
the tests."""
import os, traceback
import torch
out = "/tmp/exp"; os.makedirs(out, exist_ok=True)
torch.manual_seed(0)
log = open(os.path.join(out, "log.txt"), "w")

def save(name, model, args, names, dyn, dynamo):
    path = os.path.join(out, f"{name}_{'dynamo' if dynamo else 'ts'}.onnx")
    try:
        model.eval()
        if dynamo:
            from torch.export import Dim
            shapes = {}
            for n, axes in dyn.items():
                shapes[n] = {a: Dim(f"{n}_{a}", min=1 if a == 0 else 2, max=512) for a in axes}
            torch.onnx.export(model, args, path, input_names=list(names), dynamo=True,
                              dynamic_shapes=shapes, external_data=False)
        else:
            torch.onnx.export(model, args, path, input_names=list(names), dynamo=False,
                              dynamic_axes={n: {a: f"{n}_{a}" for a in axes}
                                            for n, axes in dyn.items()},
                              opset_version=17)
        log.write(f"ok {path} {os.path.getsize(path)}\n")
    except Exception:
        log.write(f"FAIL {name} dynamo={dynamo}\n{traceback.format_exc()[-3000:]}\n")
    log.flush()

import torchvision
for dynamo in (False, True):
    m = torchvision.models.squeezenet1_1(num_classes=10)
    save("squeezenet", m, (torch.randn(1, 3, 64, 64),), ["x"], {"x": [0, 2, 3]}, dynamo)
    m = torchvision.models.shufflenet_v2_x0_5(num_classes=10)
    save("shufflenet", m, (torch.randn(2, 3, 64, 64),), ["x"], {"x": [0, 2, 3]}, dynamo)

import transformers
from transformers import BertConfig, BertModel, GPT2Config, GPT2Model, ViTConfig, ViTModel
class Wrap(torch.nn.Module):
    def __init__(self, m): super().__init__(); self.m = m
    def forward(self, x): return self.m(x).last_hidden_state
for dynamo in (False, True):
    bert = BertModel(BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2,
                                num_attention_heads=4, intermediate_size=64,
                                max_position_embeddings=128))
    save("bert", Wrap(bert), (torch.randint(0, 100, (2, 9)),), ["x"], {"x": [0, 1]}, dynamo)
    gpt = GPT2Model(GPT2Config(vocab_size=100, n_embd=32, n_layer=2, n_head=4, n_positions=128))
    save("gpt2", Wrap(gpt), (torch.randint(0, 100, (2, 9)),), ["x"], {"x": [0, 1]}, dynamo)
    vit = ViTModel(ViTConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                             intermediate_size=64, image_size=32, patch_size=8))
    save("vit", Wrap(vit), (torch.randn(2, 3, 32, 32),), ["x"], {"x": [0]}, dynamo)
log.write(f"torch {torch.__version__} transformers {transformers.__version__}\n")
