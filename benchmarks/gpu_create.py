"""GPU engine creation of ResNet-50 by case, each in a fresh process (RESULTS_GPU.md).

    python benchmarks/gpu_create.py prep   # convert for the GPU, write the binary caches
    python benchmarks/gpu_create.py all    # one process per (precision, driver first, checksum)

Each process times four creations of mace.Session(resnet50.pb, device="gpu") with the binary
cache present, each with its first and second run: the first two closed before the next is
made, the last two kept. "driver-first" calls mace.devices() (the driver's initialisation)
before, and prints its time. Needs torchvision (benchmarks/gpu.py builds the model)."""
import os, sys, time, subprocess, json
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
d = os.environ.get("MACE_GPU_CREATE_DIR", "/tmp/mace_gpu_create"); os.makedirs(d, exist_ok=True)
mode = sys.argv[1]
if mode == "prep":
    import numpy as np, gpu, mace
    for name in ["resnet50"]:
        model, x = gpu.build(name); p = f"{d}/{name}.onnx"; gpu.export(model, x, p)
        mace.convert(p, device="gpu").save(f"{d}/{name}.pb", f"{d}/{name}.data")
        np.save(f"{d}/{name}.npy", x.numpy())
    for prec in ("fp32", "fp16_storage"):  # write the binary caches
        s = mace.Session(f"{d}/resnet50.pb", f"{d}/resnet50.data", device="gpu", gpu_precision=prec,
                         opencl_binary_file=f"{d}/r50.{prec}.bin"); s.run(np.load(f"{d}/resnet50.npy")); s.close()
elif mode == "one":   # one fresh process: phases
    prec, warm_driver, ck = sys.argv[2], sys.argv[3] == "1", sys.argv[4] == "1"
    t00 = time.perf_counter()
    import numpy as np, mace
    x = np.load(f"{d}/resnet50.npy")
    out = {"import_ms": (time.perf_counter() - t00) * 1e3}
    if warm_driver:
        t0 = time.perf_counter(); mace.devices(); out["devices_ms"] = (time.perf_counter() - t0) * 1e3
    rows = []
    keep = []
    for i in range(4):
        t0 = time.perf_counter()
        s = mace.Session(f"{d}/resnet50.pb", f"{d}/resnet50.data", device="gpu", gpu_precision=prec,
                         opencl_binary_file=f"{d}/r50.{prec}.bin", verify_checksum=ck)
        t1 = time.perf_counter(); s.run(x); t2 = time.perf_counter(); s.run(x); t3 = time.perf_counter()
        rows.append([round((t1 - t0) * 1e3, 1), round((t2 - t1) * 1e3, 1), round((t3 - t2) * 1e3, 2)])
        if i < 2: s.close()
        else: keep.append(s)
    out["create,first,second ms (closed,closed,kept,kept)"] = rows
    print(json.dumps({k: (round(v, 1) if isinstance(v, float) else v) for k, v in out.items()}))
elif mode == "all":
    for prec in ("fp32", "fp16_storage"):
        for wd in ("0", "1"):
            for ck in ("1", "0"):
                for rep in range(1):
                    r = subprocess.run([sys.executable, __file__, "one", prec, wd, ck], capture_output=True, text=True)
                    print(prec, "driver-first" if wd == "1" else "cold-process", "checksum" if ck == "1" else "nocheck", r.stdout.strip() or r.stderr[-800:], flush=True)
    t0 = time.perf_counter(); open(f"{d}/resnet50.data", "rb").read(); print("read .data ms", round((time.perf_counter() - t0) * 1e3, 1))
