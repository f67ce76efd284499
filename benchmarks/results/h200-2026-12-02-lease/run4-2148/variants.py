"""Exploration: port variants against the reference with triton.testing.do_bench
(CUDA events over back-to-back calls with an L2 clear between them, median),
one process per side, two rounds interleaved; then installs the variant with the
best geomean of each operator into its recording (the files kport replays).
    python3 .bundle-var/variants.py"""
import json, math, os, pathlib, shutil, subprocess, sys, tempfile
root = pathlib.Path(__file__).resolve().parents[1]
here = pathlib.Path(__file__).resolve().parent
R = root / "examples/gpu"
ops = {  # op: (translate attempt the variant replaces, kernel file)
    "rms_norm": ("translate/3", "rms_norm_port.cu"),
    "layer_norm": ("translate/1", "layer_norm_port.cu"),
}
CHILD = r'''
import importlib.util, json, sys, torch, triton.testing as tt
bench_path, impl = sys.argv[1], sys.argv[2]
spec = importlib.util.spec_from_file_location("b", bench_path); b = importlib.util.module_from_spec(spec)
sys.argv = [bench_path]; spec.loader.exec_module(b)
sel = [m for n, m in vars(b).items() if n.endswith("_select")][0]
mod = sel.load(impl)
fn = getattr(mod, sel.__name__.replace("_select", ""))
import kport_bench
out = {}
for c in kport_bench.select(b.CONFIGS):
    g = torch.Generator(device="cuda"); g.manual_seed(c.seed)
    args = b.make_inputs(c, g)
    out[c.id] = tt.do_bench(lambda: fn(*args), warmup=10, rep=40, return_mode="median") * 1e3
print("JSON" + json.dumps(out))
'''
def run(op, impl, ws):
    env = dict(os.environ, KPORT_IMPL=impl, KPORT_WORKSPACE=str(ws))
    for k in ("KPORT_CHECK", "CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH"): env.pop(k, None)
    bench = R / f"{op}/reference/bench/{op}_bench.py"
    p = subprocess.run([sys.executable, "-c", CHILD, str(bench), impl], env=env,
                       capture_output=True, text=True, timeout=150)
    for l in p.stdout.splitlines():
        if l.startswith("JSON"): return json.loads(l[4:])
    print(op, impl, ws, "failed:", p.stdout[-1500:], p.stderr[-1500:]); return {}
choice = {}
for op, (attempt, kname) in ops.items():
    rec = R / f"{op}/recording"
    variants = sorted(d.name for d in (here / "v" / op).iterdir())
    wss = {}
    for v in variants:
        ws = pathlib.Path(tempfile.mkdtemp(prefix=f"var-{op}-{v}-"))
        for d in ("translate/1/files", "integrate/1/files"):
            for f in (rec / d).iterdir():
                if f.is_file(): shutil.copy(f, ws / f.name)
        shutil.copy(here / "v" / op / v / kname, ws / kname)
        wss[v] = ws
    t = {}
    for rnd in range(2):
        for who in ["reference"] + variants:
            for c, us in run(op, "reference" if who == "reference" else "candidate", wss.get(who, ".")).items():
                t.setdefault(who, {}).setdefault(c, []).append(us)
    ref = {c: min(v) for c, v in t.get("reference", {}).items()}
    print(f"== {op}: reference/variant, do_bench medians (us), best of 2 rounds")
    print("   ref " + " ".join(f"{c}={x:.2f}" for c, x in ref.items()))
    best = None
    for v in variants:
        r = {c: ref[c] / min(x) for c, x in t.get(v, {}).items() if c in ref}
        g = math.exp(sum(map(math.log, r.values())) / len(r)) if len(r) == len(ref) and r else 0.0
        print(f"   {v:6} geomean {g:.3f}  " + " ".join(f"{c}={x:.3f}" for c, x in r.items()))
        if best is None or g > best[1]: best = (v, g)
    choice[op] = best[0]
    src = here / "v" / op / best[0]
    shutil.copy(src / kname, rec / attempt / "files" / kname)
    shutil.copy(src / "result.json", rec / attempt / "result.json")
    if (src / "diagnose.json").exists():
        shutil.copy(src / "diagnose.json", rec / "diagnose_perf/1/result.json")
print("CHOICE " + json.dumps(choice))
