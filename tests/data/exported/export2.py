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
import torchvision
from torchvision.models import detection, video
for dynamo in (False, True):
    m = detection.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=4)
    save("ssdlite", m, ([torch.rand(3, 320, 320)],), ["image"], {}, dynamo,
         outs=["boxes", "scores", "labels"], opset=17)
    m = detection.fasterrcnn_mobilenet_v3_large_320_fpn(weights=None, weights_backbone=None, num_classes=4)
    save("frcnn", m, ([torch.rand(3, 320, 320)],), ["image"], {}, dynamo,
         outs=["boxes", "scores", "labels"], opset=17)
    m = video.r3d_18(num_classes=10)
    save("r3d18", m, (torch.randn(1, 3, 4, 32, 32),), ["x"], {"x": [0, 2, 3, 4]}, dynamo)
    m = video.r2plus1d_18(num_classes=10)
    save("r2plus1d", m, (torch.randn(1, 3, 4, 32, 32),), ["x"], {"x": [0, 2, 3, 4]}, dynamo)
import transformers
from transformers import Wav2Vec2Config, Wav2Vec2Model, WhisperConfig, WhisperModel
class W(torch.nn.Module):
    def __init__(s, m): super().__init__(); s.m = m
    def forward(s, x): return s.m(x).last_hidden_state
class Enc(torch.nn.Module):
    def __init__(s, m): super().__init__(); s.m = m
    def forward(s, x): return s.m.encoder(x).last_hidden_state
for dynamo in (False, True):
    w2v = Wav2Vec2Model(Wav2Vec2Config(hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
          intermediate_size=64, conv_dim=(32, 32, 32), conv_stride=(5, 2, 2), conv_kernel=(10, 3, 3),
          num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4))
    save("wav2vec2", W(w2v), (torch.randn(2, 1600),), ["x"], {"x": [0, 1]}, dynamo)
    wh = WhisperModel(WhisperConfig(d_model=32, encoder_layers=2, decoder_layers=1,
          encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
          decoder_ffn_dim=64, num_mel_bins=16, max_source_positions=64, vocab_size=100))
    save("whisper_enc", Enc(wh), (torch.randn(1, 16, 128),), ["x"], {"x": [0]}, dynamo)
log.write(f"torch {torch.__version__} tv {torchvision.__version__} transformers {transformers.__version__}\n")
