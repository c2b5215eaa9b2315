"""Exports detection (NMS inside), Conv1d speech and 3-D video architectures through torch's
two ONNX exporters (random weights), then strips them. Run on the GPU machine."""
import os, sys, traceback, subprocess
import torch
out = os.environ.get("OUT", "/tmp/exp2"); os.makedirs(out, exist_ok=True)
torch.manual_seed(0)
log = open(os.path.join(out, "log.txt"), "w")
def save(name, model, args, names, dyn, dynamo, outs=None, opset=17):
    path = os.path.join("/tmp", f"{name}_{'dynamo' if dynamo else 'ts'}.onnx")
    try:
        model.eval()
        if dynamo:
            from torch.export import Dim
            shapes = {n: {a: Dim(f"{n}_{a}", min=1 if a == 0 else 2, max=2048) for a in axes}
                      for n, axes in dyn.items()}
            torch.onnx.export(model, args, path, input_names=list(names), output_names=outs,
                              dynamo=True, dynamic_shapes=shapes, external_data=False)
        else:
            torch.onnx.export(model, args, path, input_names=list(names), output_names=outs,
                              dynamo=False, opset_version=opset,
                              dynamic_axes={n: {a: f"{n}_{a}" for a in axes} for n, axes in dyn.items()})
        dst = os.path.join(out, os.path.basename(path))
        subprocess.check_call([sys.executable, "tests/data/exported/strip.py", path, dst])
        log.write(f"ok {dst} {os.path.getsize(path)} -> {os.path.getsize(dst)}\n")
    except Exception:
        log.write(f"FAIL {name} dynamo={dynamo}\n{traceback.format_exc()[-2500:]}\n")
    log.flush()
import transformers
from transformers import LlamaConfig, LlamaModel, T5Config, T5EncoderModel, GPT2Config, GPT2Model
class W(torch.nn.Module):
    def __init__(s, m): super().__init__(); s.m = m
    def forward(s, x): return s.m(x).last_hidden_state
for dynamo in (False, True):
    ll = LlamaModel(LlamaConfig(vocab_size=100, hidden_size=128, intermediate_size=256, num_hidden_layers=2,
         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256, pad_token_id=0, bos_token_id=1, eos_token_id=2))
    save("llama", W(ll), (torch.randint(0, 100, (1, 32)),), ["x"], {"x": [0, 1]}, dynamo)
    t5 = T5EncoderModel(T5Config(vocab_size=100, d_model=128, d_kv=32, d_ff=256, num_layers=2, num_heads=4,
         pad_token_id=0, eos_token_id=1, decoder_start_token_id=0))
    save("t5enc", W(t5), (torch.randint(0, 100, (1, 32)),), ["x"], {"x": [0, 1]}, dynamo)
    g = GPT2Model(GPT2Config(vocab_size=100, n_embd=128, n_layer=2, n_head=4, n_positions=256,
         bos_token_id=1, eos_token_id=2, pad_token_id=0))
    save("gpt2h128", W(g), (torch.randint(0, 100, (1, 32)),), ["x"], {"x": [0, 1]}, dynamo)
log.write(f"torch {torch.__version__} transformers {transformers.__version__}\n")
